"""Rank 2, the model: input encodings, the torch network and its checkpoints, the TD(lambda) learner.

Imports only :mod:`nard_ai.core` and :mod:`nard_ai.formats` (README, "Architecture").
"""
