"""Rank 9, reports: match analysis, position reports, error rates.

Imports only lower ranks (core .. agents; README, "Architecture").
"""
