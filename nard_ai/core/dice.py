"""The dice, as facts: the 21 distinct rolls and their chances, the 36 ordered rolls, and SplitMix64.

One home for what the search (the 21 rolls of every ply), the bear-off database, rollouts (the
36 ordered rolls of the first two plies, counter-based dice) and the move generator's hash keys
use. Rolling dice for play is :func:`nard_ai.core.game.roll_dice` and
:func:`nard_ai.core.game.opening_roll` (a numpy ``Generator``); SplitMix64 here is the
counter-based generator of rollouts and of the Zobrist keys (the compiled random games step the
same generator inside their kernel, ``core.movegen._next_random``, with these constants).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ROLLS_21", "ROLL_WEIGHTS", "ROLL_INDEX", "ROLLS_36", "splitmix64"]

ROLLS_21 = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int8)
"""``(21, 2)`` int8: the 21 distinct rolls, larger die first: ``(1, 1), (2, 1), (2, 2), ..., (6, 6)``."""

ROLL_WEIGHTS = np.where(ROLLS_21[:, 0] == ROLLS_21[:, 1], 1.0, 2.0) / 36.0
"""``(21,)`` float64: each roll's chance (non-doubles 2/36, doubles 1/36); sums to 1."""

ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
"""``(7, 7)`` int64: ``ROLL_INDEX[d1, d2]`` is the row of :data:`ROLLS_21` of the roll ``d1-d2`` (either order)."""
for _k, (_a, _b) in enumerate(ROLLS_21):
    ROLL_INDEX[_a, _b] = ROLL_INDEX[_b, _a] = _k
ROLL_INDEX.setflags(write=False)

ROLLS_36 = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)
"""``(36, 2)`` int8: the 36 ordered rolls, ``(1, 1), (1, 2), ..., (6, 6)``."""

for _table in (ROLLS_21, ROLL_WEIGHTS, ROLLS_36):
    _table.setflags(write=False)

# SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number generators"; Vigna's splitmix64.c).
SPLITMIX_GAMMA = np.uint64(0x9E3779B97F4A7C15)
SPLITMIX_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
SPLITMIX_MIX2 = np.uint64(0x94D049BB133111EB)


def splitmix64(seed: int, counter: np.ndarray) -> np.ndarray:
    """Output number ``counter`` of SplitMix64 started at state ``seed``: ``mix(seed + counter * gamma)``.

    Args:
        seed: the generator's starting state, ``0 <= seed < 2**64``.
        counter: ``(N,)`` uint64 output numbers (1-based: output 1 is the first step's).

    Returns:
        ``(N,)`` uint64, the outputs (all arithmetic mod 2**64, as the C original).
    """
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.asarray(counter, dtype=np.uint64) * SPLITMIX_GAMMA
        z = (z ^ (z >> np.uint64(30))) * SPLITMIX_MIX1
        z = (z ^ (z >> np.uint64(27))) * SPLITMIX_MIX2
        return z ^ (z >> np.uint64(31))
