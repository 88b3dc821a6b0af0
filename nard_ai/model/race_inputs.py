"""Race inputs (compiled): what a race network needs beyond TD-Gammon's point units.

The ``expert_race`` encoder (:mod:`nard_ai.model.encoding`) appends these
:data:`RACE_INPUTS` units to ``expert``'s 271. Every network of a checkpoint
reads them (one encoder per checkpoint), but they are made for the race net:
trained alike on the same 2-ply race labels, a fresh race net fitted them to
0.0109 in equity (mean absolute, held-out rows) over ``expert`` and to 0.0071
over ``expert_race``; the shipped race net went from 0.0097 to below 0.006 on
the race benchmark (docs/GENERATIONS.md, "Generation 9: race inputs").

Per side (the side on roll's half first, then the opponent's, each in that
side's own numbering: point ``p`` = 1..24, the bar counted as point 25):

====  ===========================================================================
unit  input (for side S)
====  ===========================================================================
0-13  checkers borne off: unit ``k`` is 1 when S has borne off more than ``k``
      checkers, else 0 (a thermometer; gnubg's race net has 14 such units,
      ``RI_OFF`` in ``eval.c`` ``CalculateRaceInputs``, coded one-hot there:
      unit ``k`` is 1 when exactly ``k + 1`` are off)
14    crossovers / 10: each checker counts the home-board boundaries it still has
      to cross, 1 on points 7..12, 2 on 13..18, 3 on 19..24, 4 on the bar
      (gnubg's ``RI_NCROSS``, same scaling; gnubg has no bar in a race)
15    checkers outside the home board (points 7..24 and the bar) / 15
16    pips to bring every checker home: the sum of ``p - 6`` over checkers on
      points ``p >= 7`` (the bar: 19) / 50; 0 when all are home (the gammon
      race: S saves the gammon only by bearing off, which starts when this is 0)
17    checkers on points 1..3 / 15 (the low points, where bear-off rolls are wasted)
18    home-board points without an S checker / 6 (gaps that waste bear-off rolls)
====  ===========================================================================

Then three units of the race as a whole, from the pip counts ``P`` (side on
roll) and ``Q`` (opponent), both with a checker on the bar counted at 25 pips:

====  ===========================================================================
unit  input
====  ===========================================================================
38    ``(Q - P) / 20``: the pip lead of the side on roll
39    ``(Q - P + 4) / sqrt(P + Q)``: the lead plus the roll's worth (about 4 pips
      on average over a race) over the square root of the pips to go, the shape
      of the common race formulas (chances depend on the lead against the
      spread of what is left); 0 when ``P + Q = 0``
40    ``10 (Q - P) / (P + Q)``: the lead as a share of the pips to go (0 when ``P + Q = 0``)
====  ===========================================================================

``encode(swap_sides(b))`` exchanges units ``0..18`` and ``19..37`` and negates
unit 38 and 40 (unit 39 changes by more than its sign: the +4 is the side on
roll's).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS

__all__ = ["RACE_HALF_INPUTS", "RACE_INPUTS", "RACE_INPUT_NAMES", "race_inputs_into"]

RACE_HALF_INPUTS = 19
"""Units per side (module docstring's first table)."""

RACE_INPUTS = 2 * RACE_HALF_INPUTS + 3
"""All race inputs: both sides' halves and the three of the race as a whole (41)."""

RACE_INPUT_NAMES = (
    tuple(f"borne off > {k}" for k in range(14))
    + ("crossovers / 10", "checkers outside home / 15", "pips to bring all home / 50", "checkers on points 1-3 / 15", "empty home points / 6")
)  # fmt: skip
"""Names of one side's :data:`RACE_HALF_INPUTS` units, in order."""

assert len(RACE_INPUT_NAMES) == RACE_HALF_INPUTS


@njit(cache=True, nogil=True)
def _half(counts, out, r, col):
    # counts[p] for p = 1..25 (25 = bar), this side's own numbering, >= 0; returns its pips
    on = 0
    cross = 0
    outside = 0
    to_home = 0
    low = 0
    gaps = 0
    pips = 0
    for p in range(1, 26):
        n = counts[p]
        on += n
        pips += n * p
        if p <= 6:
            if p <= 3:
                low += n
            if n == 0:
                gaps += 1
        else:
            outside += n
            to_home += n * (p - 6)
            cross += n * (4 if p == 25 else (p - 1) // 6)
    off = NUM_CHECKERS - on
    for k in range(14):
        out[r, col + k] = 1.0 if off > k else 0.0
    out[r, col + 14] = cross / 10.0
    out[r, col + 15] = outside / 15.0
    out[r, col + 16] = to_home / 50.0
    out[r, col + 17] = low / 15.0
    out[r, col + 18] = gaps / 6.0
    return pips


@njit(cache=True, nogil=True)
def _rows(boards, out, col, start, stop):
    mover = np.zeros(26, dtype=np.int64)
    other = np.zeros(26, dtype=np.int64)
    for r in range(start, stop):
        b = boards[r]
        for p in range(1, 25):
            mover[p] = max(np.int64(b[p]), 0)
            other[p] = max(-np.int64(b[BAR - p]), 0)
        mover[25] = b[BAR]
        other[25] = -np.int64(b[0])
        pm = _half(mover, out, r, col)
        po = _half(other, out, r, col + 19)
        lead = po - pm
        total = pm + po
        g = col + 38
        out[r, g] = lead / 20.0
        out[r, g + 1] = (lead + 4) / math.sqrt(total) if total > 0 else 0.0
        out[r, g + 2] = 10.0 * lead / total if total > 0 else 0.0


@njit(cache=True, nogil=True)
def _serial(boards, out, col):
    _rows(boards, out, col, 0, boards.shape[0])


@njit(cache=True, parallel=True)
def _parallel(boards, out, col, chunks):
    n = boards.shape[0]
    per = (n + chunks - 1) // chunks
    for c in numba.prange(chunks):
        _rows(boards, out, col, c * per, min(n, (c + 1) * per))


def race_inputs_into(boards: np.ndarray, out: np.ndarray, col: int, threads: int = 1) -> None:
    """Write the race inputs of each board into ``out[:, col : col + 41]``.

    Args:
        boards: ``(N, 26)`` C-contiguous int8 valid boards, each from its side on roll's view.
        out: ``(N, W)`` C-contiguous float32, ``W >= col + 41``; other columns are left alone.
        col: first column written (the module docstring's unit 0).
        threads: parallel chunks (1 = serial).

    Raises:
        ValueError: ``boards`` or ``out`` of the wrong dtype or shape.
    """
    if boards.dtype != np.int8 or boards.ndim != 2 or boards.shape[1] != BOARD_SIZE:
        raise ValueError(f"boards must be (N, 26) int8, got {boards.dtype} {boards.shape}")
    if (
        out.dtype != np.float32
        or out.ndim != 2
        or out.shape[0] != boards.shape[0]
        or out.shape[1] < col + RACE_INPUTS
    ):
        raise ValueError(f"out must be (N, >= {col + RACE_INPUTS}) float32, got {out.dtype} {out.shape}")
    chunks = max(1, min(threads, boards.shape[0]))
    if chunks > 1:
        _parallel(boards, out, col, chunks)
    else:
        _serial(boards, out, col)
