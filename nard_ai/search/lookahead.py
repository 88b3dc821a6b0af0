"""Move choice and position evaluation at 0, 1 and 2 ply over any :class:`~nard_ai.eval.evaluator.Evaluator`.

Ply numbering is gnubg's (TD-Gammon counted one more):

=====  ========================================================================
ply    what is computed
=====  ========================================================================
0      the static evaluation of each afterstate (TD-Gammon's "1-ply")
1      each afterstate valued by the average, over the opponent's 21 rolls, of
       the position after its best 0-ply reply (TD-Gammon's "2-ply")
2      the same one level deeper: after each opponent reply, the mover's 21
       rolls and best 0-ply plays, valued at 0-ply
=====  ========================================================================

Values (gnubg ``EvaluatePositionFull``)
---------------------------------------
A *position* is a board before its side on roll rolls. Its value at ply ``k``
for that side, ``V_k``, is:

* ``V_0(P)``: the evaluator's probabilities ``evaluate(P)``;
* ``V_k(P)``, ``k >= 1``: the weighted average over the 21 rolls (each
  non-double 2/36, each double 1/36) of the value, for the roller, of the
  afterstate its **best 0-ply play** of that roll reaches, that afterstate
  valued at ``k - 1`` ply. The best play is picked at 0-ply whatever ``k``
  is, as gnubg does.

An *afterstate* ``A`` (the mover's board just after its play) is worth
``invert(V_k(swap_sides(A)))`` to the mover at ply ``k``. Finished games are
never evaluated: a play that bears off the mover's last checker, or a board
where a side has borne off everything, gets the exact result (RULES.md §6,
:func:`nard_ai.model.network.result_probs`). gnubg also stops its lookahead in
bear-offs its databases solve exactly; nard_ai's network evaluator takes
bear-off positions from its bear-off database (:mod:`nard_ai.eval.bearoff`) at
every leaf, and the lookahead itself always goes to the full depth.

Move filters (gnubg ``FindnSaveBestMoves``)
-------------------------------------------
A ``k``-ply move choice values every legal play at 0-ply, then filters level
by level before the expensive evaluation. The :class:`MoveFilter` of level
``i`` (``0 <= i < k``) runs on the plays' ``i``-ply values: it keeps the
``accept`` best plays, then up to ``extra`` more while each is within
``threshold`` (points per game) of the best; ``accept = -1`` skips the level
(no ``i``-ply evaluation, no filtering). The survivors are valued at ``k``
ply. When a level leaves a position with a single play (and ``accept != 1``),
that play is chosen without deeper evaluation, as gnubg does. Plays that were
not promoted keep the value of the last level that reached them and rank below
every play valued deeper (gnubg's hint list shows them the same way).

:class:`MoveFilters` holds one tuple of levels per search depth; the presets
are gnubg's ``movefilters.inc`` (``MOVEFILTER_TINY`` .. ``MOVEFILTER_HUGE``;
gnubg's defaults for evaluation and hints are ``MOVEFILTER_NORMAL``, its
analysis default ``MOVEFILTER_LARGE``):

==========  =====================  ====================================
preset      1-ply: level 0         2-ply: level 0, level 1
==========  =====================  ====================================
``tiny``    ``(0, 5, 0.08)``       ``(0, 5, 0.08)``, ``(-1, 0, 0)``
``narrow``  ``(0, 8, 0.12)``       ``(0, 8, 0.12)``, ``(-1, 0, 0)``
``normal``  ``(0, 8, 0.16)``       ``(0, 8, 0.16)``, ``(-1, 0, 0)``
``large``   ``(0, 16, 0.32)``      ``(0, 16, 0.32)``, ``(-1, 0, 0)``
``huge``    ``(0, 20, 0.44)``      ``(0, 20, 0.44)``, ``(-1, 0, 0)``
==========  =====================  ====================================

(each entry is ``(accept, extra, threshold)``; gnubg's tables also have rows
for 3- and 4-ply, which nard_ai does not search).

Batching
--------
Every legal play of every position of a batch is generated in one
:func:`nard_ai.core.movegen.legal_plays_batch` call and valued in one evaluator
call. Each lookahead level is vectorized the same way: all the positions of
a level (candidates x 21 rolls, then x 21 rolls again at 2-ply) are expanded
in one generator call and all their plays valued in **one** evaluator call,
with no Python loop per candidate or roll. Positions repeated within a level
(for example an opponent who dances with several rolls) and afterstates
reached from several positions of a level (transpositions: about a fifth of
the plays at the deepest level of a 2-ply search) are valued once. A level
holding more than :data:`MAX_LEVEL_POSITIONS` positions is split into chunks
of that size to bound memory (only large batches of moves, such as rollouts
with lookahead, reach it).

Evaluators that choose plays by their own score (``score_plays``: pubeval,
the random evaluator) have no real probabilities to look ahead with: asking
them for 1- or 2-ply raises ``ValueError``.

Perspective: ``boards`` are in the side on roll's view; afterstates stay in
the mover's view; all probabilities and equities returned here are for the
**mover** (the side choosing the play, or the side on roll of a position).
Equities are cubeless, in points per game at cube value 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from nard_ai.core.board import (
    BOARD_SIZE,
    game_result,
    game_result_unchecked,
    swap_sides_unchecked,
    validate_board,
    validate_dice,
)
from nard_ai.core.dice import ROLL_WEIGHTS, ROLLS_21  # re-exported here
from nard_ai.core.movegen import checked_batch, legal_plays_batch, run_batch
from nard_ai.core.outcomes import cubeless_equity, invert_probs, result_probs
from nard_ai.core.ply import check_ply
from nard_ai.core.rules import Rules
from nard_ai.eval.evaluator import Evaluator
from nard_ai.search.filters import (
    DEFAULT_FILTERS,
    HUGE,
    LARGE,
    MAX_PLY,
    MOVE_FILTERS,
    NARROW,
    NORMAL,
    TINY,
    MoveFilter,
    MoveFilters,
    _check_filters,
    filter_plays,
)
from nard_ai.search.valuation import (  # re-exported here
    Valuation,
    ValuingAgent,
    agent_value,
    values_positions,
)

STANDARD_RULES = Rules()  # the default rule settings (a frozen dataclass, shared)

__all__ = [
    "MAX_PLY",
    "MAX_LEVEL_POSITIONS",
    "ROLLS_21",
    "ROLL_WEIGHTS",
    "MoveFilter",
    "MoveFilters",
    "rank_plays_batch",
    "MOVE_FILTERS",
    "TINY",
    "NARROW",
    "NORMAL",
    "LARGE",
    "HUGE",
    "DEFAULT_FILTERS",
    "Selection",
    "RankedPlays",
    "Valuation",
    "Agent",
    "ValuingAgent",
    "agent_value",
    "values_positions",
    "afterstate_probs",
    "position_probs",
    "filter_plays",
    "select_plays",
    "choose_plays",
    "rank_plays",
]

MAX_LEVEL_POSITIONS = 512
"""Most positions expanded (x 21 rolls) in one generator and evaluator call; about 200,000 plays."""

# Tiers of search depth in one score: equities lie in [-3, 3], so depth * 10
# + equity ranks every play valued deeper above every play valued shallower.
_DEPTH_STEP = 10.0


# --------------------------------------------------------------------------- values


@njit(cache=True, nogil=True)
def _segment_argmax(scores, owner, n):
    best = np.full(n, -1, dtype=np.int64)
    for i in range(scores.shape[0]):
        o = owner[i]
        if best[o] < 0 or scores[i] > scores[best[o]]:
            best[o] = i
    return best


@njit(cache=True, nogil=True)
def _finished_kernel(afterstates, out):
    for i in range(afterstates.shape[0]):
        done = True
        for j in range(afterstates.shape[1]):
            if afterstates[i, j] > 0:
                done = False
                break
        out[i] = done


def _mover_finished(afterstates: np.ndarray) -> np.ndarray:
    # the mover has borne off all 15 checkers (only the mover can finish on its own play)
    afterstates = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 26)
    out = np.empty(len(afterstates), dtype=np.bool_)
    _finished_kernel(afterstates, out)
    return out


def _check_ply(evaluator, ply) -> int:
    ply = check_ply(ply)
    if ply > 0 and getattr(evaluator, "score_plays", None) is not None:
        raise ValueError(
            f"{type(evaluator).__name__} chooses plays by its own score (score_plays) and has no real "
            f"probabilities to look ahead with; only 0-ply is supported for it, got ply={ply}"
        )
    return int(ply)


def afterstate_probs(
    evaluator: Evaluator, afterstates: np.ndarray, ply: int = 0, rules: Rules = STANDARD_RULES
) -> np.ndarray:
    """Probabilities of afterstates for the side that just moved, at ``ply`` ply.

    At 0-ply: swaps each afterstate so the opponent is on roll, evaluates in
    one call, and inverts (gnubg's ``InvertEvaluation``). At ``ply >= 1``:
    ``invert(V_ply(swap_sides(afterstate)))`` (module docstring), one
    evaluator call per lookahead level. Afterstates where the mover has borne
    off everything get the exact result instead (RULES.md §6).

    Args:
        evaluator: any evaluator (at ``ply >= 1``, one without ``score_plays``).
        afterstates: ``(M, 26)`` int8, the mover's view.
        ply: 0, 1 or 2 (gnubg numbering).
        rules: rule settings of the lookahead's move generation.

    Returns:
        ``(M, 5)`` float32 gnubg-order probabilities for the mover.

    Raises:
        ValueError: on a bad ply, an evaluator without real probabilities at
            ``ply >= 1``, or (at ``ply >= 1``) invalid afterstates.
    """
    if ply == 0:
        probs = invert_probs(
            np.asarray(evaluator.evaluate(swap_sides_unchecked(afterstates)), dtype=np.float32)
        )
        done = _mover_finished(afterstates)
        if done.any():
            probs[done] = result_probs(game_result_unchecked(afterstates[done]))
        return probs
    ply = _check_ply(evaluator, ply)
    afterstates = validate_board(afterstates).reshape(-1, 26)
    return _afterstate_values(evaluator, afterstates, ply, Rules.check(rules)).astype(np.float32)


def position_probs(
    evaluator: Evaluator, boards: np.ndarray, ply: int = 0, rules: Rules = STANDARD_RULES
) -> np.ndarray:
    """``V_ply``: probabilities of positions for their side on roll, before it rolls.

    Args:
        evaluator: any evaluator (at ``ply >= 1``, one without ``score_plays``).
        boards: ``(N, 26)`` (or ``(26,)``) int8, side on roll's view. A board
            where a side has borne off all its checkers gets the exact result.
        ply: 0 (the evaluator's own probabilities), 1 or 2 (the weighted
            average over the 21 rolls of the roller's best 0-ply play, valued
            at ``ply - 1``; module docstring).
        rules: rule settings of the lookahead's move generation.

    Returns:
        ``(N, 5)`` float32 gnubg-order probabilities for the side on roll.

    Raises:
        ValueError: on invalid boards, a bad ply, or an evaluator without
            real probabilities at ``ply >= 1``.
    """
    ply = _check_ply(evaluator, ply)
    rules = Rules.check(rules)
    boards = validate_board(boards).reshape(-1, 26)
    out = np.empty((len(boards), 5), dtype=np.float32)
    mover_off = ~(boards > 0).any(axis=1)
    opp_off = ~(boards < 0).any(axis=1)
    over = mover_off | opp_off
    if over.any():
        out[over] = result_probs(game_result_unchecked(boards[over]))
    live = ~over
    if live.any():
        if ply == 0:
            out[live] = np.asarray(evaluator.evaluate(boards[live]), dtype=np.float32)
        else:
            out[live] = _roll_values(evaluator, boards[live], ply, rules)
    return out


@njit(cache=True, nogil=True)
def _unique_rows_kernel(rows):
    m, width = rows.shape
    size = 16
    while size < 2 * m:
        size <<= 1
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int64)
    first = np.empty(m, dtype=np.int64)
    inverse = np.empty(m, dtype=np.int64)
    k = 0
    for i in range(m):
        h = np.uint64(14695981039346656037)  # FNV-1a over the row's bytes
        for j in range(width):
            h = (h ^ np.uint64(rows[i, j] & 0xFF)) * np.uint64(1099511628211)
        slot = h & mask
        while True:
            t = table[slot]
            if t < 0:
                table[slot] = k
                first[k] = i
                inverse[i] = k
                k += 1
                break
            r = first[t]
            same = True
            for j in range(width):
                if rows[r, j] != rows[i, j]:
                    same = False
                    break
            if same:
                inverse[i] = t
                break
            slot = (slot + np.uint64(1)) & mask
    return first[:k], inverse


def _unique_rows(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``(N, 26)`` int8 boards: ``(first (U,), inverse (N,))``, ``boards == boards[first][inverse]``.

    ``first`` lists each distinct row's first occurrence, in order of appearance.
    """
    return _unique_rows_kernel(np.ascontiguousarray(boards, dtype=np.int8))


@njit(cache=True, nogil=True)
def _best_replies_kernel(opp, unique, inverse, owner, probs, best):
    """The roller's best 0-ply play of each rolled position, in one pass (``_roll_values``).

    ``opp[u]``: the evaluator's gnubg-order probabilities of ``swap_sides(unique[u])`` (the opponent
    on roll). Fills ``probs[u]`` with the mover's probabilities of afterstate ``unique[u]`` (inverted,
    gnubg ``InvertEvaluation``; the exact result when the mover has borne off everything, RULES.md
    §6) and ``best[k]`` with the index (into ``inverse``/``owner``) of the highest cubeless equity
    among rolled position ``k``'s plays, first one on ties. The arithmetic is
    :func:`afterstate_probs`, :func:`cubeless_equity` (float32) and :func:`_segment_argmax`'s,
    step for step, so the choice is the same.
    """
    equity = np.empty(unique.shape[0], dtype=np.float64)
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for u in range(unique.shape[0]):
        b = unique[u]
        mine = 0
        theirs = 0
        for j in range(26):
            v = b[j]
            if v > 0:
                mine += v
            elif v < 0:
                theirs -= v
        if mine == 0:
            back = b[0] < 0
            for j in range(1, 7):
                if b[j] < 0:
                    back = True
            points = 1 if theirs < 15 else (3 if back else 2)
            probs[u, 0] = one
            probs[u, 1] = one if points >= 2 else zero
            probs[u, 2] = one if points >= 3 else zero
            probs[u, 3] = zero
            probs[u, 4] = zero
        else:
            probs[u, 0] = one - opp[u, 0]
            probs[u, 1] = opp[u, 3]
            probs[u, 2] = opp[u, 4]
            probs[u, 3] = opp[u, 1]
            probs[u, 4] = opp[u, 2]
        e = np.float32(2.0) * probs[u, 0] - one
        e = e + probs[u, 1]
        e = e + probs[u, 2]
        e = e - probs[u, 3]
        e = e - probs[u, 4]
        equity[u] = e
    best[:] = -1
    for i in range(owner.shape[0]):
        o = owner[i]
        if best[o] < 0 or equity[inverse[i]] > equity[inverse[best[o]]]:
            best[o] = i


def _roll_values(evaluator, boards: np.ndarray, ply: int, rules: Rules) -> np.ndarray:
    """``V_ply`` (``ply >= 1``) of live positions ``(N, 26)`` -> ``(N, 5)`` float64 for the side on roll."""
    first, inverse = _unique_rows(boards)
    if len(first) < len(boards):
        return _roll_values(evaluator, boards[first], ply, rules)[inverse]
    step = max(1, MAX_LEVEL_POSITIONS // len(ROLLS_21) ** (ply - 1))
    if len(boards) > step:
        return np.concatenate(
            [_roll_values(evaluator, boards[i : i + step], ply, rules) for i in range(0, len(boards), step)]
        )
    n = len(boards)
    rolled = np.repeat(boards, len(ROLLS_21), axis=0)
    dice = np.tile(ROLLS_21, (n, 1))
    # The boards here were validated on the way in (or made by the generator), and games already
    # over never get this far: skip the public entry point's checks (about 0.5 ms a call).
    afterstates, owner = run_batch(rolled, dice, rules.code, False)
    # transpositions: the same afterstate reached from different positions is valued once
    first, inverse = _unique_rows(afterstates)
    unique = afterstates[first]
    opp = np.ascontiguousarray(evaluator.evaluate(swap_sides_unchecked(unique)), dtype=np.float32)
    probs0 = np.empty((len(unique), 5), dtype=np.float32)
    best = np.empty(len(rolled), dtype=np.int64)
    _best_replies_kernel(opp, unique, inverse, owner, probs0, best)
    if ply == 1:
        values = probs0[inverse[best]].astype(np.float64)
    else:
        values = _afterstate_values(evaluator, afterstates[best], ply - 1, rules)
    return np.einsum("r,nrf->nf", ROLL_WEIGHTS, values.reshape(n, len(ROLLS_21), 5))


def _afterstate_values(evaluator, afterstates: np.ndarray, ply: int, rules: Rules) -> np.ndarray:
    """Afterstates ``(M, 26)`` valued at ``ply`` -> ``(M, 5)`` float64 for the mover (exact when finished)."""
    if ply == 0:
        return afterstate_probs(evaluator, afterstates).astype(np.float64)
    out = np.empty((len(afterstates), 5), dtype=np.float64)
    done = _mover_finished(afterstates)
    if done.any():
        out[done] = result_probs(game_result_unchecked(afterstates[done]))
    live = ~done
    if live.any():
        out[live] = invert_probs(_roll_values(evaluator, swap_sides_unchecked(afterstates[live]), ply, rules))
    return out


# --------------------------------------------------------------------------- move choice


@dataclass(frozen=True)
class Selection:
    """The play chosen for each position of a batch (mover's view).

    Attributes:
        afterstates: ``(N, 26)`` int8 chosen afterstates (not swapped).
        probs: ``(N, 5)`` float32 their gnubg-order probabilities for the mover.
        equity: ``(N,)`` float32 their cubeless equity for the mover.
        finished: ``(N,)`` bool, the play bears off the mover's last checker.
        num_plays: ``(N,)`` int64 legal plays each position had.
        plies: ``(N,)`` int64 the depth at which ``probs`` were computed: the
            search's ply, or less where a filter level left a single play
            (module docstring); ``None`` is never returned by this module.
    """

    afterstates: np.ndarray
    probs: np.ndarray
    equity: np.ndarray
    finished: np.ndarray
    num_plays: np.ndarray
    plies: np.ndarray | None = None


def _scores(evaluator, boards, afterstates, owner):
    probs = afterstate_probs(evaluator, afterstates)
    equity = cubeless_equity(probs).astype(np.float32)
    score_plays = getattr(evaluator, "score_plays", None)
    scores = equity if score_plays is None else score_plays(boards, afterstates, owner)
    return probs, equity, scores


def _search(evaluator, boards, dice, rules, ply, filters, sort):
    """Every legal play of every position, valued by the filtered ``ply``-ply search.

    Returns ``(afterstates (M, 26), owner (M,), probs (M, 5) float64, equity
    (M,) float64, plies (M,) int64)``: each play's value at the depth
    ``plies`` it reached.
    """
    boards, dice, rules = checked_batch(boards, dice, rules)  # ValueError on bad input
    afterstates, owner = run_batch(boards, dice, rules.code, sort)
    n = len(boards)
    probs32 = afterstate_probs(evaluator, afterstates)
    probs = probs32.astype(np.float64)
    # the 0-ply level ranks by the float32 equity, exactly as the 0-ply search does
    equity = cubeless_equity(probs32).astype(np.float64)
    plies = np.zeros(len(afterstates), dtype=np.int64)
    candidates = np.arange(len(afterstates))
    for level, move_filter in enumerate(filters.levels(ply)):
        if move_filter.skipped or len(candidates) == 0:
            continue
        if level > 0:
            probs[candidates] = _afterstate_values(evaluator, afterstates[candidates], level, rules)
            equity[candidates] = cubeless_equity(probs[candidates])
            plies[candidates] = level
        candidates = candidates[filter_plays(equity[candidates], owner[candidates], move_filter)]
        if move_filter.accept != 1:
            # gnubg: a position left with one play is decided; it is not valued deeper
            left = np.bincount(owner[candidates], minlength=n)
            candidates = candidates[left[owner[candidates]] > 1]
    if len(candidates):
        probs[candidates] = _afterstate_values(evaluator, afterstates[candidates], ply, rules)
        equity[candidates] = cubeless_equity(probs[candidates])
        plies[candidates] = ply
    return afterstates, owner, probs, equity, plies


def select_plays(
    evaluator: Evaluator,
    boards: np.ndarray,
    dice: np.ndarray,
    rules: Rules = STANDARD_RULES,
    *,
    ply: int = 0,
    filters: MoveFilters | str | None = None,
) -> Selection:
    """Move choice for a batch, with the chosen plays' probabilities.

    Args:
        evaluator: any evaluator; at 0-ply one ``evaluate`` call for all
            afterstates, at ``ply >= 1`` one more call per lookahead level.
        boards: ``(N, 26)`` int8, side on roll's view, games not over.
        dice: ``(N, 2)`` the rolls.
        rules: rule settings.
        ply: search depth, 0..2 (gnubg numbering).
        filters: move filters for ``ply >= 1`` (:data:`DEFAULT_FILTERS`,
            gnubg's ``normal``, when ``None``; a preset name is accepted).

    Returns:
        A :class:`Selection`: the play with the highest equity among those
        valued deepest (module docstring). Ties go to the first play in
        generator order.

    Raises:
        ValueError: on invalid boards or dice (from the move generator), a
            bad ply or filters, or lookahead with an evaluator that has no
            real probabilities (pubeval, random).
    """
    if ply != 0:
        return _select_deep(evaluator, boards, dice, rules, ply, filters)
    boards, dice, rules = checked_batch(boards, dice, rules)  # ValueError on bad input; (26,) -> (1, 26)
    afterstates, owner = run_batch(boards, dice, rules.code, False)
    return _select_0ply(evaluator, boards, afterstates, owner)


def select_plays_unchecked(
    evaluator: Evaluator, boards: np.ndarray, dice: np.ndarray, rules: Rules = STANDARD_RULES, *, ply: int = 0
) -> Selection:
    """:func:`select_plays` for boards and dice the caller made itself (self-play's loop).

    At 0-ply the inputs skip the public entry point's validation (about 5% of
    a self-play ply); deeper searches validate as usual.

    Args:
        boards: ``(N, 26)`` C-contiguous int8 valid boards of games not over, side on roll's view.
        dice: ``(N, 2)`` int8 rolls, 1..6.
    """
    if ply != 0:
        return select_plays(evaluator, boards, dice, rules, ply=ply)
    afterstates, owner = run_batch(boards, dice, Rules.check(rules).code, False)
    return _select_0ply(evaluator, boards, afterstates, owner)


def _select_0ply(evaluator, boards: np.ndarray, afterstates: np.ndarray, owner: np.ndarray) -> Selection:
    score_plays = getattr(evaluator, "score_plays", None)
    if score_plays is None:
        probs = afterstate_probs(evaluator, afterstates)
        equity = cubeless_equity(probs).astype(np.float32)
        best = _segment_argmax(equity.astype(np.float64), owner, len(boards))
        probs, equity = probs[best], equity[best]
    else:
        # the evaluator ranks plays itself: evaluate only the chosen afterstates
        best = _segment_argmax(
            np.asarray(score_plays(boards, afterstates, owner), dtype=np.float64), owner, len(boards)
        )
        probs = afterstate_probs(evaluator, afterstates[best])
        equity = cubeless_equity(probs).astype(np.float32)
    chosen = afterstates[best]
    return Selection(
        afterstates=chosen,
        probs=probs,
        equity=equity,
        finished=_mover_finished(chosen),
        num_plays=np.bincount(owner, minlength=len(boards)),
        plies=np.zeros(len(boards), dtype=np.int64),
    )


def _select_deep(evaluator, boards, dice, rules, ply, filters) -> Selection:
    ply = _check_ply(evaluator, ply)
    filters = _check_filters(filters)
    afterstates, owner, probs, equity, plies = _search(evaluator, boards, dice, rules, ply, filters, False)
    n = int(owner[-1]) + 1 if len(owner) else 0  # every position has at least one play
    best = _segment_argmax(plies * _DEPTH_STEP + equity, owner, n)
    chosen = afterstates[best]
    return Selection(
        afterstates=chosen,
        probs=probs[best].astype(np.float32),
        equity=equity[best].astype(np.float32),
        finished=_mover_finished(chosen),
        num_plays=np.bincount(owner, minlength=n),
        plies=plies[best],
    )


def choose_plays(
    evaluator: Evaluator,
    boards: np.ndarray,
    dice: np.ndarray,
    rules: Rules = STANDARD_RULES,
    *,
    ply: int = 0,
    filters: MoveFilters | str | None = None,
) -> np.ndarray:
    """Move choice: ``(N, 26)`` boards and ``(N, 2)`` dice -> ``(N, 26)`` chosen afterstates (mover's view).

    Same arguments and errors as :func:`select_plays`.
    """
    return select_plays(evaluator, boards, dice, rules, ply=ply, filters=filters).afterstates


@dataclass(frozen=True)
class RankedPlays:
    """Every legal play of one position, best first (mover's view).

    Attributes:
        afterstates: ``(M, 26)`` int8.
        probs: ``(M, 5)`` float32 gnubg-order probabilities for the mover.
        equity: ``(M,)`` float32 cubeless equity for the mover.
        plies: ``(M,)`` int64 the depth each play was valued at; plays valued
            deeper rank first, then by equity (gnubg's hint order).
    """

    afterstates: np.ndarray
    probs: np.ndarray
    equity: np.ndarray
    plies: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.afterstates)


def rank_plays(
    evaluator: Evaluator,
    board: np.ndarray,
    dice,
    rules: Rules = STANDARD_RULES,
    *,
    ply: int = 0,
    filters: MoveFilters | str | None = None,
) -> RankedPlays:
    """All legal plays of one position ranked by the search, best first.

    At 0-ply every play is ranked by its 0-ply value (or by the evaluator's
    ``score_plays`` when it has one). At ``ply >= 1`` the filters decide which
    plays are valued deeper; those rank first by their deepest value, the
    others follow by the value of the last level that reached them.

    Args:
        evaluator: any evaluator.
        board: ``(26,)`` int8, side on roll's view.
        dice: two integers 1..6.
        rules: rule settings.
        ply: search depth, 0..2 (gnubg numbering).
        filters: move filters for ``ply >= 1`` (``None``: gnubg's ``normal``).

    Raises:
        ValueError: on an invalid board or dice, a bad ply or filters, or
            lookahead with an evaluator that has no real probabilities.
    """
    board = validate_board(board).reshape(1, -1)
    dice = validate_dice(dice)
    if ply != 0:
        ply = _check_ply(evaluator, ply)
        filters = _check_filters(filters)
        afterstates, _, probs, equity, plies = _search(evaluator, board, dice, rules, ply, filters, sort=True)
        order = np.lexsort((-equity, -plies))
        return RankedPlays(
            afterstates=afterstates[order],
            probs=probs[order].astype(np.float32),
            equity=equity[order].astype(np.float32),
            plies=plies[order],
        )
    afterstates, owner = legal_plays_batch(board, dice, rules, sort=True)
    probs, equity, scores = _scores(evaluator, board, afterstates, owner)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return RankedPlays(
        afterstates=afterstates[order],
        probs=probs[order],
        equity=equity[order],
        plies=np.zeros(len(order), dtype=np.int64),
    )


def rank_plays_batch(
    evaluator: Evaluator,
    boards: np.ndarray,
    dice: np.ndarray,
    rules: Rules = STANDARD_RULES,
    *,
    ply: int = 0,
    filters: MoveFilters | str | None = None,
) -> list[RankedPlays]:
    """:func:`rank_plays` of many positions, in one move generation and one evaluator call per ply.

    The plays of every position are generated together, and each lookahead
    level values the candidates of all positions in one batch (transpositions
    across positions are valued once). Position ``i``'s result holds the
    same plays in the same order as ``rank_plays(evaluator, boards[i],
    dice[i], ...)``, with the same numbers whenever the evaluator's answer for
    a board does not depend on the rest of its batch
    (:class:`nard_ai.eval.aligned.BatchInvariantEvaluator`; a plain network's
    float32 sums may differ in the last bit).

    Args:
        evaluator: any evaluator.
        boards: ``(N, 26)`` int8, side on roll's view, games not over.
        dice: ``(N, 2)`` the rolls, 1..6.
        rules: rule settings.
        ply: search depth, 0..2 (gnubg numbering).
        filters: move filters for ``ply >= 1`` (``None``: gnubg's ``normal``).

    Returns:
        ``N`` :class:`RankedPlays`, best first each (mover's view).

    Raises:
        ValueError: as :func:`rank_plays`, naming the position of the batch.
    """
    boards, dice, rules = checked_batch(boards, dice, rules)  # ValueError on bad input
    n = len(boards)
    if ply != 0:
        ply = _check_ply(evaluator, ply)
        filters = _check_filters(filters)
        afterstates, owner, probs, equity, plies = _search(evaluator, boards, dice, rules, ply, filters, True)
        # per position (owner), deeper plies first, then equity: rank_plays' order (lexsort is stable)
        order = np.lexsort((-equity, -plies, owner))
        probs, equity = probs.astype(np.float32), equity.astype(np.float32)
    else:
        afterstates, owner = run_batch(boards, dice, rules.code, True)
        probs, equity, scores = _scores(evaluator, boards, afterstates, owner)
        order = np.lexsort((-np.asarray(scores, dtype=np.float64), owner))
        plies = np.zeros(len(afterstates), dtype=np.int64)
    ends = np.cumsum(np.bincount(owner, minlength=n))
    out = []
    for i in range(n):
        mine = order[(ends[i - 1] if i else 0) : ends[i]]
        out.append(
            RankedPlays(
                afterstates=afterstates[mine], probs=probs[mine], equity=equity[mine], plies=plies[mine]
            )
        )
    return out


class Agent(ValuingAgent):
    """An evaluator plus a search depth and move filters: the thing that plays.

    Args:
        evaluator: any evaluator.
        ply: search depth, 0..2 in gnubg's numbering (0 = static evaluation
            of each afterstate).
        rules: rule settings for move generation.
        name: label for reports.
        filters: move filters of the 1- and 2-ply searches (``None``:
            gnubg's ``normal``; a preset name is accepted).

    Raises:
        ValueError: on a ply outside 0..2, bad filters, or ``ply >= 1`` with
            an evaluator that chooses plays by ``score_plays`` (pubeval,
            random), which has no real probabilities to look ahead with.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        ply: int = 0,
        rules: Rules = STANDARD_RULES,
        name: str = "",
        filters: MoveFilters | str | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.ply = _check_ply(evaluator, ply)
        self.rules = Rules.check(rules)
        self.filters = _check_filters(filters)
        self.name = name or type(evaluator).__name__

    def choose_plays(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """``(N, 26)`` boards and ``(N, 2)`` dice -> ``(N, 26)`` chosen afterstates (mover's view)."""
        return choose_plays(self.evaluator, boards, dice, self.rules, ply=self.ply, filters=self.filters)

    def select_plays(self, boards: np.ndarray, dice: np.ndarray) -> Selection:
        """Like :meth:`choose_plays`, with the chosen plays' probabilities (:class:`Selection`)."""
        return select_plays(self.evaluator, boards, dice, self.rules, ply=self.ply, filters=self.filters)

    def rank_plays(self, board: np.ndarray, dice) -> RankedPlays:
        """Every legal play of one position with probabilities and equity, best first."""
        return rank_plays(self.evaluator, board, dice, self.rules, ply=self.ply, filters=self.filters)

    def value(self, boards: np.ndarray) -> Valuation:
        """Positions at the agent's ply, for their side on roll before it rolls.

        Args:
            boards: ``(N, 26)`` int8 (one ``(26,)`` board is a batch of one),
                side on roll's view (finished games get
                the exact result).

        Returns:
            A :class:`Valuation`: ``(N, 5)`` float32 gnubg-order probabilities
            (:func:`position_probs`) and ``(N,)`` float32 cubeless equity,
            points per game; it unpacks as ``probs, equity``.

        Raises:
            ValueError: on a shape other than ``(N, 26)`` or ``(26,)``; at
            ``ply >= 1``, on invalid boards; at 0-ply, on invalid boards of
            a dtype other than int8. int8 boards go to the 0-ply evaluator
            unchecked: rollouts call this on every turn of every game, and
            checking costs about as much as evaluating.
        """
        if self.ply:
            probs = position_probs(self.evaluator, boards, self.ply, self.rules)
            return Valuation(probs, cubeless_equity(probs))
        boards = np.asarray(boards)
        if boards.ndim not in (1, 2) or boards.shape[-1] != BOARD_SIZE:
            raise ValueError(f"boards must have shape (N, 26) or (26,), got {boards.shape}")
        if boards.dtype != np.int8:
            boards = validate_board(boards)  # other dtypes: no silent truncation or wrap-around to int8
        boards = boards.reshape(-1, BOARD_SIZE)  # one (26,) board is a batch of one, for every evaluator
        probs = np.asarray(self.evaluator.evaluate(boards), dtype=np.float32)
        over = ~(boards > 0).any(axis=-1) | ~(boards < 0).any(axis=-1)
        if over.any():
            probs = probs.copy()
            probs[over] = result_probs(game_result(boards[over]))
        return Valuation(probs, cubeless_equity(probs))
