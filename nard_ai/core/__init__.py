"""Rank 0, the rules core: board layout, rule settings, move generation, game stepping.

Pure functions over ``int8`` board arrays, batched on a leading axis and
compiled with numba; no torch, no gymnasium. Imports nothing from the rest of
nard_ai (README, "Architecture").
"""
