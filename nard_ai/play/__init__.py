"""Rank 6, playing games: matches between agents (arena), money sessions and matches with the cube, rollouts, self-play.

Imports only lower ranks (core .. cube; README, "Architecture").
"""
