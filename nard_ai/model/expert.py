"""gnubg's "expert" inputs of its contact and crashed nets, compiled; and gnubg's escape tables.

GNU Backgammon's contact and crashed networks read, besides the raw point
units, 25 hand-made inputs per side, computed by one function for each side
in turn (gnubg ``eval.c``, ``CalculateHalfInputs``; the enum of contact
inputs at the top of that file names them, "see Berliner for most of
these"). This module computes them for nard_ai boards. The ``expert``
encoder (:mod:`nard_ai.model.encoding`) appends them to ``rich``.

Perspective and layout
----------------------
gnubg keeps a position as two rows of 25 counts, each in its own player's
numbering (index ``i`` = that player's point ``i + 1``, index 24 = its bar;
:mod:`nard_ai.formats.tanboard`), **row 1 being the player on roll** and row
0 its opponent. Its contact and crashed inputs are
``CalculateHalfInputs(row 1, row 0)`` followed by
``CalculateHalfInputs(row 0, row 1)`` (``CalculateContactInputs``,
``CalculateCrashedInputs``): first the half of the side on roll, then the
opponent's. A nard_ai board (:mod:`nard_ai.core.board`, ``(26,)`` int8 from
the side on roll's view) gives the two rows directly, ``row1[i] =
max(board[i + 1], 0)``, ``row1[24] = board[25]``, ``row0[i] = max(-board[24 -
i], 0)``, ``row0[24] = -board[0]``, so :func:`expert_inputs_into` writes, for
each board, 50 float32 units from a given column: the 25 of the side on roll
(computed with the opponent's checkers as the "other side"), then the same 25
of the opponent (the side on roll being the "other side"), which is the half
of ``swap_sides(board)``'s side on roll. Encoding the swapped board exchanges
the two blocks.

The 25 units of one half
------------------------
For the half's side S and the other side O, each in its own numbering
(point ``p`` = gnubg index ``p - 1``, the bar = index 24 = "point 25"). ``r``
is O's rearmost checker in S's numbering: ``25 - q`` for O's rearmost point
``q`` (0 when O is on the bar, 25 when O has no checker left). "Escapes(X,
q)" is gnubg's ``Escapes``: the rolls (of 36) with which a checker of the
*other* side standing on its point ``q`` can pass through X's made points
(``>= 2`` checkers) among the 12 points in front of it (fewer when fewer
remain), counted with :data:`ESCAPES` (``ComputeTable0``); "Escapes1" is the
same window counted with :data:`ESCAPES_PAST_FIRST` (``ComputeTable1``).
Everything is from gnubg ``eval.c`` (``CalculateHalfInputs`` unless said), the
divisors those of the code. The source followed is the one the ``gnubg``
Python package 1.1.0a16 is built from (github.com/reayd-falmouth/gnubg,
``eval.c`` at commit 40272145); an older copy (gnubg-web, ``eval.c`` v1.461 of
2015) differs in one rule, noted below.

Unit ``k`` of a half is unit ``221 + k`` (side on roll) and ``246 + k``
(opponent) of the ``expert`` encoder. Sources, all gnubg ``eval.c``: H =
``CalculateHalfInputs``, M = ``menOffAll`` (the crashed net's), with the
escape tables of ``ComputeTable0`` / ``ComputeTable1``.

====  ====================  ==========================================================  ================  ===
unit  gnubg name            definition (for S)                                          scaling           src
====  ====================  ==========================================================  ================  ===
0     ``I_OFF1``            ``n`` = S's checkers borne off: ``min(n, 5)``               / 5               M
1     ``I_OFF2``            ``min(max(n - 5, 0), 5)``                                   / 5               M
2     ``I_OFF3``            ``max(n - 10, 0)``                                          / 5               M
3     ``I_BREAK_CONTACT``   sum over S's checkers on points ``p > r`` (the bar: 25) of  / 167             H
                            ``p - r + 1`` (167 = 15 + 152, 152 the start's sum of
                            ``p - r``)
4     ``I_BACK_CHEQUER``    point of S's rearmost checker ``- 1`` (the bar: 24; -1      / 24              H
                            when S has no checker left)
5     ``I_BACK_ANCHOR``     S's rearmost made point (1..24) ``- 1``; -1 if none         / 24              H
6     ``I_FORWARD_ANCHOR``  ``k = 25 - p`` (O's number of the point) for S's most       ``k / 6``; 2.0    H
                            forward made point ``p`` in 19..24, else for S's rearmost   if no such
                            made point in 13..18                                        point
7     ``I_PIPLOSS``         pips O loses to S's hits, summed over the 36 outcomes       / (12 x 36)       H
                            (hits below)
8     ``I_P1``              outcomes (of 36) with which S hits at least one O checker   / 36              H
9     ``I_P2``              outcomes with which S hits at least two                     / 36              H
10    ``I_BACKESCAPES``     Escapes(S, O's rearmost point): O's rearmost checker        / 36              H
                            getting past S's points
11    ``I_ACONTAIN``        ``m`` = the fewest Escapes(S, q) over O's points ``q``      ``1 - m / 36``    H
                            from 16 (S's 9) back to O's rearmost checker, the bar
                            included; 36 when that range is empty
12    ``I_ACONTAIN2``       unit 11 squared                                                               H
13    ``I_CONTAIN``         ``m`` = the fewest Escapes(S, q) for ``q`` in 16..24        ``1 - m / 36``    H
14    ``I_CONTAIN2``        unit 13 squared                                                               H
15    ``I_MOBILITY``        sum over S's checkers on points 7..24 and the bar (``p =    / 3600            H
                            25``) of ``(p - 6) x Escapes(O, p)``
16    ``I_MOMENT2``         with ``i = p - 1`` per checker (bar 24): ``a = ceil(mean    / 400             H
                            i)`` over S's checkers, then ``ceil(mean (i - a)^2)`` over
                            those with ``i > a`` (integer ceilings; 0 without such
                            checkers)
17    ``I_ENTER``           S on the bar: pips lost by not entering, over the 36        / (36 x 49/6)     H
                            outcomes against O's made home points: a blocked double
                            ``d-d`` loses ``4d``, a non-double with both dice blocked
                            ``d1 + d2`` per outcome, and with two or more on the bar
                            one with a single blocked die that die; 0 when S is not on
                            the bar
18    ``I_ENTER2``          ``1 - (1 - n / 6)^2``, ``n`` = O's made home points: the    none              H
                            chance that at least one die is blocked (gnubg's comment
                            says of not entering one checker); whether or not S is on
                            the bar
19    ``I_TIMING``          S's spare pips: ``i = p - 1``, ``m = max(r - 1, 11)``,      / 100             H
                            ``t = 24 b``, ``c = b`` (``b`` on the bar); on points with
                            ``i > m`` a count ``n != 2`` adds ``s = n - 2`` (a blot 1)
                            checkers: ``c += s``, ``t += i s``; on ``i = min(m, 23) ..
                            6`` every checker: ``c += n``, ``t += i n``; on home
                            points ``i = 5 .. 0``, ``n > 2`` adds ``n - 2`` likewise
                            and ``n < 2`` takes ``2 - n`` back (``t -= i (2 - n)``)
                            while ``c`` has them (``t`` never goes below 0)
20    ``I_BACKBONE``        S's rearmost made point ``P`` in 2..24 against every other  ``1 - mean(c)     H
                            made point ``Q`` in 2..P-1: ``c = 11`` for ``P - Q <= 6``,  / 11``; 0 with
                            ``13 - (P - Q)`` up to 11 apart, else 0                     no ``Q``
21    ``I_BACKG``           with two or more S anchors on 19..24: S's checkers on       ``(x - 3) / 4``   H
                            19..24 and the bar, ``x``; else 0
22    ``I_BACKG1``          with exactly one such anchor: those checkers ``x``; else 0  ``x / 8``         H
23    ``I_FREEPIP``         pips of S's checkers in front of O's rearmost (points ``p   / 100             H
                            < r``): S's pip count in a race
24    ``I_BACKRESCAPES``    Escapes1(S, O's rearmost point): like unit 10, counting     / 36              H
                            only rolls that go beyond S's first made point ahead, and
                            0 when none is made ahead
====  ====================  ==========================================================  ================  ===

Hits (units 7..9). Targets: O's blots on O's points 1..24, but not its 23
and 24 (S's 2 and 1) unless S has made three or more of its home points.
Hitters: S's points behind a target and the bar, but not a home point holding
exactly two. A "way" is a use of one roll: one die, both dice of a
non-double (one of the two intermediate landings, after either die, must not
be an O made point), or 2, 3 or 4 steps of a double (every intermediate
landing open); gnubg lists the 39 ways (``aIntermediate``), the ways hitting
at each distance (``aanCombination``) and each roll's ways in the order low
die, high die, both (doubles: 1, 2, 3, 4 steps; ``aaRoll``). Here the tables
are built from the dice (:data:`WAY_PIPS` and the others below). For each way
the set of hitters that hit some target with it is found (with bit masks:
targets shifted by the way's pips, and by its steps for the landings); then
per roll:

* S not on the bar: each direct way counts one checker hit, from its rearmost
  hitter, unless that is the previous direct way's hitter holding a single
  checker; with doubles one more when another hitter also hits directly. A
  way of several steps counts at least one, and one more when a landing on
  the way, from its rearmost hitter, holds an O blot.
* one S checker on the bar: direct ways, hitters from the rearmost (the bar)
  down: a hit from the bar counts; a hit from a point needs the other die's
  entry point open, and after it no other hit from a point counts. A way of
  several steps counts only from the bar, at least one, and one more for an
  O blot on a landing.
* two or more on the bar: only direct hits from the bar (first two ways).

The pips a hit O checker loses are its distance from O's bar, ``25 - q`` for
O's point ``q``, that is the target's point in S's numbering; a roll's value
is the largest over its hitting ways.

Where we follow gnubg's code over its comments or arithmetic
-------------------------------------------------------------
These are gnubg's definitions as its code computes them (checked against the
compiled gnubg's ``CalculateHalfInputs`` in ``tests/test_expert_inputs.py``
where that library is installed), including what looks unintended:

* ``I_BREAK_CONTACT`` is divided by 167 (the enum comment says 152).
* One checker on the bar, a double ``d-d`` hitting directly from a point: gnubg
  checks the entry point of its second way, ``2d`` pips (O's point ``2d``),
  not ``d``.
* One checker on the bar, a way of several steps from the bar: gnubg looks
  for an O blot on O's point ``s + 2`` for a landing ``s`` pips in (O's point
  ``s``).
* ``I_BACKBONE`` compares every made point with the rearmost one only.
* The "weak board" rule of the hits counts S's *made* home points (the enum
  comment: "less than 3 anchors"); eval.c v1.461 (2015) counted occupied ones.
* ``I_MOMENT2`` of a side with no checker left: gnubg divides by zero; we give 0.

And where the encoder deliberately differs from gnubg's nets:

* ``I_OFF1..3`` are those of gnubg's crashed net (``menOffAll``, of the half's
  own side). Its contact net uses ``menOffNonCrashed`` (steps of 3, at most 8
  off) and, by an accident its source records, the other side's count.
* The units are computed for every board, races and finished games included,
  by the same definitions; gnubg computes them for contact and crashed
  positions only (eval.c v1.461 asserted ``I_BREAK_CONTACT`` is not 0). In a
  race O's checkers are all behind S's: units 3, 7, 8, 9, 11, 12, 17 and 24
  are 0, unit 10 is 1, unit 23 is S's pip count / 100 and unit 15 counts 36
  escapes per checker; units 13, 14, 18, 19 and 20 keep their meaning.

Shapes and types: boards ``(N, 26)`` C-contiguous int8 (side on roll's view),
output into a C-contiguous ``(N, W)`` float32 array at columns ``col ..
col + 49``; features are computed in float64 and stored as float32.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS

__all__ = [
    "ESCAPES",
    "ESCAPES_BY_POINT",
    "ESCAPES_PAST_FIRST",
    "EXPERT_NAMES",
    "HALF_INPUTS",
    "ROLL_WAYS",
    "WAY_PIPS",
    "WAY_FACES",
    "WAY_STEPS",
    "WAY_EITHER",
    "ROLL_WEIGHT",
    "expert_inputs_into",
]

EXPERT_NAMES = (
    "I_OFF1",
    "I_OFF2",
    "I_OFF3",
    "I_BREAK_CONTACT",
    "I_BACK_CHEQUER",
    "I_BACK_ANCHOR",
    "I_FORWARD_ANCHOR",
    "I_PIPLOSS",
    "I_P1",
    "I_P2",
    "I_BACKESCAPES",
    "I_ACONTAIN",
    "I_ACONTAIN2",
    "I_CONTAIN",
    "I_CONTAIN2",
    "I_MOBILITY",
    "I_MOMENT2",
    "I_ENTER",
    "I_ENTER2",
    "I_TIMING",
    "I_BACKBONE",
    "I_BACKG",
    "I_BACKG1",
    "I_FREEPIP",
    "I_BACKRESCAPES",
)
"""gnubg's names of the 25 units of one half, in its order (the module docstring's table)."""

HALF_INPUTS = len(EXPERT_NAMES)


# --------------------------------------------------------------------------
# Escape tables (gnubg eval.c ComputeTable0 and ComputeTable1)
# --------------------------------------------------------------------------


def _escape_counts(past_first: bool) -> np.ndarray:
    # counts[mask] for mask bit j = the point j + 1 pips ahead is blocked; a roll (a, b) is counted
    # (2 ways, 1 for a double) when the point a + b ahead is open and one of the points a, b ahead is;
    # with past_first, also only when a + b goes beyond the nearest blocked point, and never for mask 0
    counts = np.zeros(1 << 12, dtype=np.int64)
    for mask in range(1 << 12):
        if past_first and mask == 0:
            continue
        first = (mask & -mask).bit_length() if mask else 0  # pips to the nearest blocked point
        for a in range(1, 7):
            for b in range(1, a + 1):
                if mask >> (a + b - 1) & 1:
                    continue
                if mask >> (a - 1) & 1 and mask >> (b - 1) & 1:
                    continue
                if past_first and a + b <= first:
                    continue
                counts[mask] += 1 if a == b else 2
    return counts


ESCAPES = _escape_counts(False)
"""gnubg's escape counts (``ComputeTable0``): ``ESCAPES[mask]`` for ``mask`` bit ``i`` = the point
``i + 1`` pips ahead is blocked."""

ESCAPES_PAST_FIRST = _escape_counts(True)
"""gnubg's ``ComputeTable1``: as :data:`ESCAPES`, counting only rolls whose sum goes beyond the
nearest blocked point, and 0 when nothing is blocked."""


def _reverse12(w: int) -> int:
    return int(f"{w:012b}"[::-1], 2)


ESCAPES_BY_POINT = ESCAPES[[_reverse12(w) for w in range(1 << 12)]]
""":data:`ESCAPES` indexed the other way round: bit ``j`` of the index = the point ``12 - j`` pips
ahead is blocked, so a board's mask of blocked points shifted right gives the index directly."""


# --------------------------------------------------------------------------
# Ways to hit (gnubg eval.c CalculateHalfInputs: aIntermediate, aanCombination, aaRoll)
# --------------------------------------------------------------------------


def _ways() -> tuple[list[tuple[int, int, tuple[int, ...], bool]], list[list[int]], list[int]]:
    # (faces, pips, intermediate landings in pips from the hitter, either-suffices) per way; each
    # roll's ways in gnubg's order (low die, high die, both; a double's 1..4 steps); roll weights
    ways: list[tuple[int, int, tuple[int, ...], bool]] = []
    index: dict[tuple[int, int, tuple[int, ...], bool], int] = {}

    def way(faces: int, pips: int, steps: tuple[int, ...], either: bool) -> int:
        key = (faces, pips, steps, either)
        if key not in index:
            index[key] = len(ways)
            ways.append(key)
        return index[key]

    rolls: list[list[int]] = []
    weights: list[int] = []
    for d in range(1, 7):  # doubles first, as gnubg's aaRoll
        rolls.append([way(k, k * d, tuple(d * s for s in range(1, k)), False) for k in range(1, 5)])
        weights.append(1)
    for hi in range(2, 7):
        for lo in range(1, hi):
            rolls.append([way(1, lo, (), False), way(1, hi, (), False), way(2, lo + hi, (lo, hi), True)])
            weights.append(2)
    return ways, rolls, weights


_WAY_LIST, _ROLL_LIST, _WEIGHT_LIST = _ways()

WAY_PIPS = np.array([w[1] for w in _WAY_LIST], dtype=np.int64)
"""Pips each of the 39 ways moves (gnubg's ``aIntermediate[].nPips``)."""
WAY_FACES = np.array([w[0] for w in _WAY_LIST], dtype=np.int64)
"""Dice faces each way uses, 1..4 (``nFaces``); 1 is a direct shot."""
WAY_STEPS = np.array([list(w[2]) + [0] * (3 - len(w[2])) for w in _WAY_LIST], dtype=np.int64)
"""The intermediate landings of each way, in pips from the hitter, 0-padded to 3 (``anIntermediate``;
the sets are symmetric, so gnubg's counting from the target gives the same points)."""
WAY_EITHER = np.array([w[3] for w in _WAY_LIST], dtype=np.bool_)
"""True for a non-double's two dice: one open intermediate landing suffices (gnubg's ``fAll`` false)."""
ROLL_WAYS = np.array([r + [-1] * (4 - len(r)) for r in _ROLL_LIST], dtype=np.int64)
"""``(21, 4)``: each roll's ways in gnubg's order, -1 padded; rows 0..5 the doubles 1-1..6-6, then
2-1, 3-1, 3-2, 4-1, ..., 6-5 (``aaRoll``)."""
ROLL_WEIGHT = np.array(_WEIGHT_LIST, dtype=np.int64)
"""Of the 36 dice outcomes, each roll's: 1 for a double, 2 otherwise."""
N_WAYS = len(_WAY_LIST)


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _window(made, n):
    # gnubg's Escapes window for a checker of the other side on its index n: bit i = the point
    # i + 1 pips in front of it is made by the owner of `made` (bit k = its index k is made)
    if n <= 0:
        return 0
    width = n if n < 12 else 12
    return (made >> (24 - n)) & ((1 << width) - 1)


@njit(cache=True, nogil=True)
def _hitters(s, o, hit):
    # hit[w] = bit mask over S's indices of the hitters that hit some O blot with way w; returns the
    # union. Masks over S's indices k (0..23, the bar 24): O's index q is S's 23 - q.
    home = 0  # S's made home points: with fewer than 3, no hitting on S's points 1 and 2
    hitters = np.int64(0)
    targets = np.int64(0)
    open_ = np.int64(0)  # not an O made point
    for k in range(25):
        n = s[k]
        hitters |= np.int64(n > 0 and not (k < 6 and n == 2)) << k
        if k < 6:
            home += n > 1
        if k < 24:
            targets |= np.int64(o[23 - k] == 1) << k
            open_ |= np.int64(o[23 - k] < 2) << k
    if home <= 2:
        targets &= ~np.int64(0b11)
    union = np.int64(0)
    for w in range(N_WAYS):
        # hitter j hits with w when a target is WAY_PIPS[w] in front and the landings j - step are open
        mask = (targets << WAY_PIPS[w]) & hitters
        if WAY_EITHER[w]:
            mask &= (open_ << WAY_STEPS[w, 0]) | (open_ << WAY_STEPS[w, 1])
        else:
            for m in range(3):
                if WAY_STEPS[w, m] > 0:
                    mask &= open_ << WAY_STEPS[w, m]
        hit[w] = mask
        union |= mask
    return union


@njit(cache=True, nogil=True)
def _shots(s, o, hit):
    # (pips lost summed over the 36 outcomes, outcomes hitting >= 1, outcomes hitting >= 2)
    pip_sum = 0
    one = 0
    two = 0
    if _hitters(s, o, hit) == 0:
        return pip_sum, one, two
    bar = s[24]
    for r in range(21):
        count = 0
        pips = 0
        double = ROLL_WAYS[r, 3] >= 0
        if bar == 0:
            last = -1  # the previous direct shot's hitter
            for j in range(4):
                w = ROLL_WAYS[r, j]
                if w < 0:
                    break
                mask = hit[w]
                if mask == 0:
                    continue
                k = 63 - leading_zeros(mask)
                pips = max(pips, k - WAY_PIPS[w] + 1)
                if WAY_FACES[w] == 1:
                    if last != k or s[k] > 1:
                        count += 1
                    last = k
                    if double and mask != (np.int64(1) << k):
                        count += 1
                else:
                    count = max(count, 1)
                    for m in range(3):
                        step = WAY_STEPS[w, m]
                        if step > 0 and o[23 - k + step] == 1:
                            count += 1
                            break
        elif bar == 1:
            entered = False  # a die was spent entering, for a hit from a point
            for j in range(4):
                w = ROLL_WAYS[r, j]
                if w < 0:
                    break
                mask = hit[w]
                if mask == 0:
                    continue
                if WAY_FACES[w] == 1:
                    for k in range(63 - leading_zeros(mask), 0, -1):
                        if not (mask >> k) & 1:
                            continue
                        if entered and k != 24:
                            break
                        if k != 24:
                            # gnubg takes the other way of the roll (for a double its 2-step way)
                            if o[WAY_PIPS[ROLL_WAYS[r, 1 - j]] - 1] > 1:
                                break
                            entered = True
                        count += 1
                        pips = max(pips, k - WAY_PIPS[w] + 1)
                elif (mask >> 24) & 1:
                    count = max(count, 1)
                    pips = max(pips, 25 - WAY_PIPS[w])
                    for m in range(3):
                        step = WAY_STEPS[w, m]
                        if step > 0 and o[step + 1] == 1:  # gnubg's index, module docstring
                            count += 1
                            break
        else:
            for j in range(2):
                w = ROLL_WAYS[r, j]
                if WAY_FACES[w] == 1 and (hit[w] >> 24) & 1:
                    count += 1
                    pips = max(pips, 25 - WAY_PIPS[w])
        weight = ROLL_WEIGHT[r]
        pip_sum += pips * weight
        if count > 0:
            one += weight
        if count > 1:
            two += weight
    return pip_sum, one, two


@njit(cache=True, nogil=True)
def _half(s, o, hit, out, row, col):
    # the 25 units of S = s against O = o (gnubg rows: index i = point i + 1, 24 = bar)
    on_board = 0
    s_made = np.int64(0)
    o_made = np.int64(0)
    back = -1  # S's rearmost index
    o_back = -1  # O's rearmost index in its own numbering
    for i in range(25):
        on_board += s[i]
        if s[i] > 0:
            back = i
        if o[i] > 0:
            o_back = i
        if i < 24:
            s_made |= np.int64(s[i] >= 2) << i
            o_made |= np.int64(o[i] >= 2) << i
    opp_rear = 23 - o_back  # O's rearmost checker in S's indices: -1 on the bar, 24 with none

    off = NUM_CHECKERS - on_board
    out[row, col + 0] = min(off, 5) / 5.0
    out[row, col + 1] = min(max(off - 5, 0), 5) / 5.0
    out[row, col + 2] = max(off - 10, 0) / 5.0

    contact_pips = 0
    free_pips = 0
    for i in range(25):
        if i > opp_rear:
            contact_pips += (i + 1 - opp_rear) * s[i]
        elif i < opp_rear:
            free_pips += (i + 1) * s[i]
    out[row, col + 3] = contact_pips / 167.0
    out[row, col + 23] = free_pips / 100.0

    out[row, col + 4] = back / 24.0
    anchor = -1
    for i in range(min(back, 23), -1, -1):
        if s[i] >= 2:
            anchor = i
            break
    out[row, col + 5] = anchor / 24.0
    forward = 0
    for j in range(18, anchor + 1):
        if s[j] >= 2:
            forward = 24 - j
            break
    if forward == 0:
        for j in range(17, 11, -1):
            if s[j] >= 2:
                forward = 24 - j
                break
    out[row, col + 6] = forward / 6.0 if forward else 2.0

    pip_sum, one, two = _shots(s, o, hit)
    out[row, col + 7] = pip_sum / (12.0 * 36.0)
    out[row, col + 8] = one / 36.0
    out[row, col + 9] = two / 36.0

    rear_window = _window(s_made, 23 - opp_rear)
    out[row, col + 10] = ESCAPES[rear_window] / 36.0
    out[row, col + 24] = ESCAPES_PAST_FIRST[rear_window] / 36.0

    fewest_ahead = 36
    for q in range(15, min(23 - opp_rear, 24) + 1):
        fewest_ahead = min(fewest_ahead, ESCAPES[_window(s_made, q)])
    fewest = 36
    for q in range(15, 24):
        fewest = min(fewest, ESCAPES[_window(s_made, q)])
    acontain = (36 - fewest_ahead) / 36.0
    contain = (36 - fewest) / 36.0
    out[row, col + 11] = acontain
    out[row, col + 12] = acontain * acontain
    out[row, col + 13] = contain
    out[row, col + 14] = contain * contain

    mobility = 0
    for i in range(6, 25):
        if s[i]:
            mobility += (i - 5) * s[i] * ESCAPES[_window(o_made, i)]
    out[row, col + 15] = mobility / 3600.0

    # one-sided second moment, in gnubg's integer arithmetic (rounding the means up)
    total = 0
    moment = 0
    for i in range(25):
        total += s[i]
        moment += i * s[i]
    mean = (moment + total - 1) // total if total else 0
    far = 0
    spread = 0
    for i in range(mean + 1, 25):
        far += s[i]
        spread += s[i] * (i - mean) * (i - mean)
    out[row, col + 16] = ((spread + far - 1) // far if far else 0) / 400.0

    blocked = 0
    for i in range(6):
        blocked += o[i] > 1
    loss = 0
    if s[24] > 0:
        several = s[24] > 1
        for i in range(6):
            if o[i] > 1:
                loss += 4 * (i + 1)  # the double i+1 - i+1
                for j in range(i + 1, 6):
                    if o[j] > 1:
                        loss += 2 * (i + j + 2)
                    elif several:
                        loss += 2 * (i + 1)
            elif several:
                for j in range(i + 1, 6):
                    if o[j] > 1:
                        loss += 2 * (j + 1)
    out[row, col + 17] = loss / (36.0 * 49.0 / 6.0)
    out[row, col + 18] = (36 - (blocked - 6) * (blocked - 6)) / 36.0

    # timing: spare pips, behind O's rearmost checker keeping points of exactly two
    t = 24 * s[24]
    spare = s[24]
    cut = max(opp_rear, 11)
    for i in range(23, cut, -1):
        n = s[i]
        if n and n != 2:
            extra = n - 2 if n > 2 else 1
            spare += extra
            t += i * extra
    for i in range(min(cut, 23), 5, -1):
        spare += s[i]
        t += i * s[i]
    for i in range(5, -1, -1):
        n = s[i]
        if n > 2:
            t += i * (n - 2)
            spare += n - 2
        elif n < 2 and spare >= 2 - n:
            t -= i * (2 - n)
            spare -= 2 - n
    out[row, col + 19] = t / 100.0  # never negative: a spare taken back was counted at a higher index

    # backbone: every made point against the rearmost one (S's count there cancels out)
    rear_made = -1
    weight = 0
    others = 0
    for i in range(23, 0, -1):
        if s[i] >= 2:
            if rear_made < 0:
                rear_made = i
                continue
            d = rear_made - i
            weight += 11 if d <= 6 else (13 - d if d <= 11 else 0)
            others += 1
    out[row, col + 20] = 1.0 - weight / (others * 11.0) if others else 0.0

    anchors = 0
    back_checkers = s[24]
    for i in range(18, 24):
        anchors += s[i] > 1
        back_checkers += s[i]
    out[row, col + 21] = (back_checkers - 3) / 4.0 if anchors > 1 else 0.0
    out[row, col + 22] = back_checkers / 8.0 if anchors == 1 else 0.0


@njit(cache=True, nogil=True)
def _rows(boards, out, col, start, stop):
    # scratch allocated here, per call: one thread's rows never share a cache line with another's
    mover = np.empty(25, dtype=np.int64)
    other = np.empty(25, dtype=np.int64)
    hit = np.empty(N_WAYS, dtype=np.int64)
    for r in range(start, stop):
        b = boards[r]
        for i in range(24):
            mover[i] = max(np.int64(b[i + 1]), 0)
            other[i] = max(-np.int64(b[BAR - 1 - i]), 0)
        mover[24] = b[BAR]
        other[24] = -np.int64(b[0])
        _half(mover, other, hit, out, r, col)
        _half(other, mover, hit, out, r, col + HALF_INPUTS)


@njit(cache=True, nogil=True)
def _serial(boards, out, col):
    _rows(boards, out, col, 0, boards.shape[0])


@njit(cache=True, parallel=True)
def _parallel(boards, out, col, chunks):
    n = boards.shape[0]
    per = (n + chunks - 1) // chunks
    for c in numba.prange(chunks):
        _rows(boards, out, col, c * per, min(n, (c + 1) * per))


def expert_inputs_into(boards: np.ndarray, out: np.ndarray, col: int, threads: int = 1) -> None:
    """Write gnubg's expert inputs of each board into ``out[:, col : col + 50]``.

    Args:
        boards: ``(N, 26)`` C-contiguous int8 valid boards, each from its side on roll's view.
        out: ``(N, W)`` C-contiguous float32, ``W >= col + 50``; other columns are left alone.
        col: first column written: the side on roll's 25 units (module docstring), then the
            opponent's 25.
        threads: parallel chunks (1 = serial).
    """
    if boards.dtype != np.int8 or boards.ndim != 2 or boards.shape[1] != BOARD_SIZE:
        raise ValueError(f"boards must be (N, 26) int8, got {boards.dtype} {boards.shape}")
    if out.dtype != np.float32 or out.shape[0] != boards.shape[0] or out.shape[1] < col + 2 * HALF_INPUTS:
        raise ValueError(f"out must be (N, >= {col + 2 * HALF_INPUTS}) float32, got {out.dtype} {out.shape}")
    chunks = max(1, min(threads, boards.shape[0]))
    if chunks > 1:
        _parallel(boards, out, col, chunks)
    else:
        _serial(boards, out, col)
