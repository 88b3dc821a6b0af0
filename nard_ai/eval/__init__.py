"""Rank 3, evaluators: the Evaluator protocol (boards -> probabilities) and its implementations, bear-off.

Imports only lower ranks (core, formats, model; README, "Architecture").
"""
