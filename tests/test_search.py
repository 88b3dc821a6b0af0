"""0-, 1- and 2-ply search (nard_ai.search.lookahead): position values, move filters, move choice, batching.

Positions use ``pos(me=..., opp=...)``, each side in its own numbering
(RULES.md §1); the side ``me`` is on roll. The lookahead is checked against
an independent, slow reference written here from the definition (gnubg's
``EvaluatePositionFull``): a position's k-ply value is the average over the
21 rolls (non-doubles 2/36, doubles 1/36) of the value of the roller's best
0-ply play, valued at k - 1 ply; finished games count their exact result
(RULES.md §6). The reference calls :func:`nard_ai.legal_plays` one roll at a
time and loops in Python; the evaluator is a fake with hand-set values.
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na
import nard_ai.search.lookahead as search
from nard_ai.core.board import game_result, pip_count, pos, swap_sides
from nard_ai.eval.evaluator import PubevalEvaluator, RandomEvaluator
from nard_ai.search.lookahead import (
    DEFAULT_FILTERS,
    HUGE,
    LARGE,
    MOVE_FILTERS,
    NARROW,
    NORMAL,
    ROLL_WEIGHTS,
    ROLLS_21,
    TINY,
    Agent,
    MoveFilter,
    MoveFilters,
    Valuation,
    afterstate_probs,
    agent_value,
    filter_plays,
    position_probs,
    rank_plays,
    select_plays,
)

_W = 1.0 + np.sqrt(np.arange(26.0)) / 1000.0  # tie-breaking weights of the fake evaluator


class HandSetEvaluator:
    """Hand-set probabilities for the side on roll, from the pip counts.

    ``x = (their pips - my pips + 8) / 15 + sum_i board[i] * sqrt(i) / 1000``
    (the second term only breaks ties between different boards),
    ``win = 1/2 + x / (2 (1 + |x|))`` (a sigmoid made of exact IEEE
    operations, so a row's value never depends on the batch around it),
    ``win_gammon = 0.3 win^2``, ``win_backgammon = 0.1 win_gammon``,
    ``lose_gammon = 0.3 (1 - win)^2``, ``lose_backgammon = 0.1 lose_gammon``.
    Records the size of every batch it is given.
    """

    def __init__(self) -> None:
        self.batches: list[int] = []

    def evaluate(self, boards):
        boards = np.asarray(boards)
        self.batches.append(len(boards))
        pips = pip_count(boards).astype(np.float64)
        x = (pips[:, 1] - pips[:, 0] + 8.0) / 15.0 + (boards * (_W - 1.0)).sum(axis=1)
        win = 0.5 + x / (2.0 * (1.0 + np.abs(x)))
        out = np.empty((len(boards), 5), dtype=np.float64)
        out[:, 0] = win
        out[:, 1] = 0.3 * win * win
        out[:, 2] = 0.1 * out[:, 1]
        out[:, 3] = 0.3 * (1.0 - win) ** 2
        out[:, 4] = 0.1 * out[:, 3]
        return out.astype(np.float32)


# ------------------------------------------------------------------ the slow reference


def _invert(p):
    """gnubg's InvertEvaluation: the same game from the other side."""
    return np.array([1.0 - p[0], p[3], p[4], p[1], p[2]])


def _exact(points):
    """Exact probabilities of a finished game worth ``points`` (+-1/2/3) to the side asked about."""
    return np.array([points > 0, points >= 2, points >= 3, points <= -2, points <= -3], dtype=np.float64)


def _equity(p):
    return 2.0 * p[0] - 1.0 + p[1] + p[2] - p[3] - p[4]


def ref_position(ev, board, ply):
    """k-ply probabilities of ``board`` for its side on roll, before it rolls."""
    result = game_result(board)
    if result != 0:
        return _exact(result)
    if ply == 0:
        return ev.evaluate(board[None])[0].astype(np.float64)
    total = np.zeros(5)
    for a in range(1, 7):
        for b in range(1, a + 1):
            weight = (1.0 if a == b else 2.0) / 36.0
            plays = na.legal_plays(board, (a, b))
            values = ref_afterstates_0ply(ev, plays)
            best = int(np.argmax([_equity(v) for v in values]))
            total += weight * (values[best] if ply == 1 else ref_afterstate(ev, plays[best], ply - 1))
    return total


def ref_afterstates_0ply(ev, plays):
    """0-ply probabilities of a roll's plays for the mover (one evaluator call for the roll)."""
    values = [_invert(v) for v in ev.evaluate(swap_sides(plays)).astype(np.float64)]
    return [_exact(game_result(p)) if not (p > 0).any() else v for p, v in zip(plays, values, strict=True)]


def ref_afterstate(ev, afterstate, ply):
    """k-ply probabilities of an afterstate for the side that just moved."""
    if not (afterstate > 0).any():  # the mover bore off its last checker
        return _exact(game_result(afterstate))
    if ply == 0:
        return _invert(ev.evaluate(swap_sides(afterstate)[None])[0].astype(np.float64))
    return _invert(ref_position(ev, swap_sides(afterstate), ply))


def ref_filter(equities, accept, extra, threshold):
    """gnubg's filter on one position's plays: indices kept, best first."""
    order = sorted(range(len(equities)), key=lambda i: -equities[i])
    kept = []
    for rank, i in enumerate(order[: accept + extra]):
        if rank >= accept and equities[i] < equities[order[0]] - threshold:
            break
        kept.append(i)
    return kept


# ------------------------------------------------------------------ positions

#: A middle game: both sides have blots and builders, several plays compete.
#:
#:   X (on roll): 24: 2, 13: 4, 8: 3, 7: 1, 6: 4, 4: 1          (15)
#:   O:           24: 2, 13: 4, 9: 1, 8: 3, 6: 4, 5: 1          (15)
MIDDLE_GAME = pos(me={24: 2, 13: 4, 8: 3, 7: 1, 6: 4, 4: 1}, opp={24: 2, 13: 4, 9: 1, 8: 3, 6: 4, 5: 1})

#: A bear-off with contact: X bears off against an O checker still on X's 2-point.
#:
#:   X (on roll): 6: 2, 5: 2, 3: 1, 1: 2     (8 off)
#:   O:           23: 1 (X's 2-point), 6: 3, 4: 2, 2: 2, 1: 1     (6 off)
BEAROFF_CONTACT = pos(me={6: 2, 5: 2, 3: 1, 1: 2}, opp={23: 1, 6: 3, 4: 2, 2: 2, 1: 1})

#: A small bear-off race: X 3 checkers, O 3 checkers, all in the home boards.
SMALL_BEAROFF = pos(me={4: 1, 3: 1, 1: 1}, opp={5: 1, 2: 2})

#: The side on roll has one checker on its 6-point, the opponent one on its 1-point.
LAST_ROLL = pos(me={6: 1}, opp={1: 1})


# ------------------------------------------------------------------ position values


def test_one_ply_value_of_the_last_roll_counts_27_winning_rolls():
    """X bears its last checker off from the 6-point with every roll but 1-1 (4 pips), 2-1, 3-1,
    4-1 and 3-2 (2 ways each): 27 of 36, each a single win (O has 14 off). After the 9 others the
    checker stands on a low point and O is on roll; 1-ply values that with the evaluator."""
    ev = HandSetEvaluator()
    value = position_probs(ev, LAST_ROLL, ply=1)[0]
    failing = [(1, 1), (2, 1), (3, 1), (4, 1), (3, 2)]
    expected = 27.0 / 36.0 * _exact(1)
    for a, b in failing:
        plays = na.legal_plays(LAST_ROLL, (a, b))
        assert len(plays) == 1 and (plays[0] > 0).any()  # the checker moves a + b (or 4a) pips, not off
        expected = expected + (1.0 if a == b else 2.0) / 36.0 * _invert(
            ev.evaluate(swap_sides(plays[0])[None])[0]
        )
    np.testing.assert_allclose(value, expected, atol=1e-6)
    assert value[0] >= 0.75  # at least the 27 bearing-off rolls win


def test_two_ply_value_of_the_last_roll_is_exactly_27_of_36():
    """At 2-ply the failing rolls are followed by O's roll, and O's last checker on its 1-point
    is off with every roll: X wins exactly 27/36 single games and O wins the rest (X has a checker
    left, 14 off: a single game)."""
    value = position_probs(HandSetEvaluator(), LAST_ROLL, ply=2)[0]
    np.testing.assert_allclose(value, [27.0 / 36.0, 0.0, 0.0, 0.0, 0.0], atol=1e-7)


@pytest.mark.parametrize(
    "board", [MIDDLE_GAME, BEAROFF_CONTACT, na.starting_board()], ids=["middle", "bearoff", "start"]
)
def test_one_ply_value_is_the_weighted_average_over_the_21_rolls(board):
    ev = HandSetEvaluator()
    np.testing.assert_allclose(position_probs(ev, board, ply=1)[0], ref_position(ev, board, 1), atol=2e-6)


@pytest.mark.parametrize(
    "board", [SMALL_BEAROFF, BEAROFF_CONTACT, MIDDLE_GAME], ids=["small", "bearoff", "middle"]
)
def test_two_ply_value_matches_the_slow_reference(board):
    ev = HandSetEvaluator()
    np.testing.assert_allclose(position_probs(ev, board, ply=2)[0], ref_position(ev, board, 2), atol=2e-6)


def test_zero_ply_position_value_is_the_evaluators_own():
    ev = HandSetEvaluator()
    boards = np.stack([MIDDLE_GAME, BEAROFF_CONTACT, SMALL_BEAROFF])
    probs, equity = Agent(ev).value(boards)
    np.testing.assert_array_equal(probs, ev.evaluate(boards))
    np.testing.assert_allclose(equity, [_equity(p) for p in probs.astype(np.float64)], atol=1e-6)


def test_finished_games_get_exact_results_at_every_ply():
    """O has borne off all 15 while X has none off and a checker in O's home board: X lost a
    backgammon (RULES.md §6)."""
    lost = pos(me={1: 14, 20: 1})
    for ply in (0, 1, 2):
        np.testing.assert_array_equal(position_probs(HandSetEvaluator(), lost, ply=ply)[0], _exact(-3))
        probs, equity = Agent(HandSetEvaluator(), ply=ply).value(lost[None])
        np.testing.assert_array_equal(probs[0], _exact(-3))
        assert equity[0] == -3.0


def test_agent_value_returns_the_k_ply_value():
    ev = HandSetEvaluator()
    for ply in (1, 2):
        probs, equity = Agent(ev, ply=ply).value(SMALL_BEAROFF[None])
        np.testing.assert_allclose(probs[0], ref_position(ev, SMALL_BEAROFF, ply), atol=2e-6)
        assert equity[0] == pytest.approx(_equity(probs[0].astype(np.float64)), abs=1e-6)


def test_afterstate_values_are_the_opponents_position_values_inverted():
    ev = HandSetEvaluator()
    plays = na.legal_plays(MIDDLE_GAME, (5, 2))
    got = afterstate_probs(ev, plays, ply=1)
    for p, g in zip(plays, got, strict=True):
        np.testing.assert_allclose(g, ref_afterstate(ev, p, 1), atol=2e-6)


# ------------------------------------------------------------------ move filters


def test_presets_are_gnubgs_movefilters_inc():
    """gnubg movefilters.inc (MOVEFILTER_TINY .. MOVEFILTER_HUGE), rows for 1- and 2-ply;
    gnubg's default for evaluation and hints is MOVEFILTER_NORMAL."""
    skip = MoveFilter(-1, 0, 0.0)
    table = {TINY: (5, 0.08), NARROW: (8, 0.12), NORMAL: (8, 0.16), LARGE: (16, 0.32), HUGE: (20, 0.44)}
    for preset, (extra, threshold) in table.items():
        assert preset.ply1 == (MoveFilter(0, extra, threshold),)
        assert preset.ply2 == (MoveFilter(0, extra, threshold), skip)
        assert MOVE_FILTERS[preset.name] is preset
    assert DEFAULT_FILTERS is NORMAL
    assert set(MOVE_FILTERS) == {"tiny", "narrow", "normal", "large", "huge"}


def test_filter_keeps_the_best_within_the_threshold_up_to_accept_plus_extra():
    #              0     1      2     3      4      5
    equity = [0.25, 0.5, 0.375, 0.0, 0.125, 0.4375]
    owner = [0] * 6
    # window [0.25, 0.5]: plays 1, 5, 2, 0 (0.25 is on the edge: gnubg drops only plays *below* it)
    assert np.flatnonzero(filter_plays(equity, owner, MoveFilter(0, 8, 0.25))).tolist() == [0, 1, 2, 5]
    # at most accept + extra = 2 plays: the two best
    assert np.flatnonzero(filter_plays(equity, owner, MoveFilter(0, 2, 0.25))).tolist() == [1, 5]
    # accept keeps the 3 best whatever their equity, then nothing more is within 0.0625 of the best
    assert np.flatnonzero(filter_plays(equity, owner, MoveFilter(3, 5, 0.0625))).tolist() == [1, 2, 5]
    # a skipped level keeps every play
    assert filter_plays(equity, owner, MoveFilter(-1)).all()


def test_filter_works_position_by_position_and_breaks_ties_by_generator_order():
    equity = [0.0, -0.5, 0.0, 1.0, 0.75, 0.9, 0.1]
    owner = [0, 0, 0, 1, 1, 1, 2]
    kept = filter_plays(equity, owner, MoveFilter(0, 1, 0.2))
    # position 0: two plays tie at 0.0 and one may pass: the earlier one; position 1: only
    # the best (one play); position 2: its only play
    assert np.flatnonzero(kept).tolist() == [0, 3, 6]
    # with room for 3: both tied plays of position 0; 1.0 and 0.9 of position 1 (0.75 is below 1.0 - 0.2)
    assert np.flatnonzero(filter_plays(equity, owner, MoveFilter(0, 3, 0.2))).tolist() == [0, 2, 3, 5, 6]


@pytest.mark.parametrize(
    "args",
    [
        (-2, 0, 0.0),
        (0, 0, 0.1),
        (0, -1, 0.1),
        (0, 8, -0.1),
        (0, 8, float("nan")),
        (0.5, 8, 0.1),
        (True, 8, 0.1),
    ],
)
def test_bad_move_filters_raise(args):
    with pytest.raises(ValueError):
        MoveFilter(*args)


def test_bad_filter_tables_and_presets_raise():
    with pytest.raises(ValueError, match="ply2"):
        MoveFilters("x", ply1=(MoveFilter(0, 8, 0.16),), ply2=(MoveFilter(0, 8, 0.16),))
    with pytest.raises(ValueError, match="unknown move filter preset"):
        Agent(HandSetEvaluator(), ply=1, filters="enormous")
    with pytest.raises(ValueError, match="filters must be"):
        Agent(HandSetEvaluator(), ply=1, filters=0.16)
    assert Agent(HandSetEvaluator(), ply=2, filters="tiny").filters is TINY


# ------------------------------------------------------------------ move choice


def _expected_ranking(ev, board, dice, ply, move_filter):
    """Reference ranking of a 1- or 2-ply search with one filter level (level 1 of 2-ply skipped)."""
    plays = na.legal_plays(board, dice)
    zero = [ref_afterstate(ev, p, 0) for p in plays]
    kept = ref_filter(
        [_equity(v) for v in zero], move_filter.accept, move_filter.extra, move_filter.threshold
    )
    if len(kept) == 1 and move_filter.accept != 1:
        kept = []  # decided at 0-ply: gnubg values a lone survivor no deeper
    deep = {i: ref_afterstate(ev, plays[i], ply) for i in kept}
    rows = [(1 if i in deep else 0, _equity(deep.get(i, zero[i])), i) for i in range(len(plays))]
    rows.sort(key=lambda r: (-r[0], -r[1]))
    return plays, [r[2] for r in rows], [deep.get(r[2], zero[r[2]]) for r in rows], [r[0] for r in rows]


@pytest.mark.parametrize(
    ("board", "dice", "ply"),
    [
        (MIDDLE_GAME, (5, 2), 1),
        (MIDDLE_GAME, (6, 4), 2),
        (BEAROFF_CONTACT, (4, 2), 1),
        (BEAROFF_CONTACT, (5, 3), 2),
    ],
)
def test_rank_plays_promotes_the_filtered_plays_and_ranks_the_rest_below(board, dice, ply):
    ev = HandSetEvaluator()
    wide = MoveFilters("wide", ply1=(MoveFilter(0, 4, 0.3),), ply2=(MoveFilter(0, 4, 0.3), MoveFilter(-1)))
    plays, order, values, tiers = _expected_ranking(ev, board, dice, ply, wide.levels(ply)[0])
    assert sum(tiers) >= 2  # several plays were valued deeper: the test exercises the lookahead
    ranked = rank_plays(ev, board, dice, ply=ply, filters=wide)
    np.testing.assert_array_equal(ranked.afterstates, plays[order])
    np.testing.assert_allclose(ranked.probs, np.array(values), atol=2e-6)
    assert ranked.plies.tolist() == [ply * t for t in tiers]


def test_a_non_skipped_second_level_filters_again_at_one_ply():
    """2-ply with levels (0, 6, 0.3) then (0, 2, 0.05): the level-0 survivors are valued at 1-ply,
    at most two of them within 0.05 go on to 2-ply; the other survivors keep their 1-ply value."""
    ev = HandSetEvaluator()
    board, dice = MIDDLE_GAME, (5, 2)
    filters = MoveFilters(
        "two-level", ply1=(MoveFilter(0, 6, 0.3),), ply2=(MoveFilter(0, 6, 0.3), MoveFilter(0, 2, 0.05))
    )
    plays = na.legal_plays(board, dice)
    zero = [_equity(ref_afterstate(ev, p, 0)) for p in plays]
    level0 = ref_filter(zero, 0, 6, 0.3)
    one = {i: ref_afterstate(ev, plays[i], 1) for i in level0}
    level1 = [level0[k] for k in ref_filter([_equity(one[i]) for i in level0], 0, 2, 0.05)]
    assert len(level0) > len(level1) >= 2
    ranked = rank_plays(ev, board, dice, ply=2, filters=filters)
    n2, n1 = len(level1), len(level0) - len(level1)
    assert ranked.plies.tolist() == [2] * n2 + [1] * n1 + [0] * (len(plays) - n2 - n1)
    by_board = {tuple(p): i for i, p in enumerate(plays)}
    for row, depth, probs in zip(ranked.afterstates, ranked.plies, ranked.probs, strict=True):
        i = by_board[tuple(row)]
        assert (depth == 2) == (i in level1) and (depth >= 1) == (i in level0)
        expected = one[i] if depth == 1 else ref_afterstate(ev, plays[i], int(depth))
        np.testing.assert_allclose(probs, expected, atol=2e-6)


def test_a_lone_survivor_is_chosen_without_lookahead_unless_accept_is_1():
    """gnubg: a filter that leaves one play decides the move (no deeper evaluation), except
    when accept == 1 asks for exactly one play to be valued deeper."""
    lone = MoveFilters("lone", ply1=(MoveFilter(0, 8, 0.0),), ply2=(MoveFilter(0, 8, 0.0), MoveFilter(-1)))
    ev = HandSetEvaluator()
    sel = select_plays(ev, MIDDLE_GAME[None], np.array([[5, 2]]), ply=2, filters=lone)
    assert ev.batches == [len(na.legal_plays(MIDDLE_GAME, (5, 2)))] and sel.plies.tolist() == [0]
    one = MoveFilters("one", ply1=(MoveFilter(1, 0, 0.0),), ply2=(MoveFilter(1, 0, 0.0), MoveFilter(-1)))
    sel = select_plays(HandSetEvaluator(), MIDDLE_GAME[None], np.array([[5, 2]]), ply=1, filters=one)
    best = ref_afterstate(HandSetEvaluator(), sel.afterstates[0], 1)
    assert sel.plies.tolist() == [1]
    np.testing.assert_allclose(sel.probs[0], best, atol=2e-6)


def test_each_search_level_is_one_evaluator_call():
    """Move choice: one call for the 0-ply values of every play, then one per lookahead level
    (candidates x 21 rolls, then x 21 again at 2-ply), never one per candidate or roll."""
    for ply in (1, 2):
        ev = HandSetEvaluator()
        sel = select_plays(ev, MIDDLE_GAME[None], np.array([[6, 4]]), ply=ply, filters="large")
        assert sel.plies.tolist() == [ply]
        assert len(ev.batches) == 1 + ply
    ev = HandSetEvaluator()
    position_probs(ev, MIDDLE_GAME, ply=2)
    assert len(ev.batches) == 2


def test_batch_results_equal_one_at_a_time_results():
    boards = np.stack([MIDDLE_GAME, BEAROFF_CONTACT, SMALL_BEAROFF, na.starting_board(), MIDDLE_GAME])
    dice = np.array([[6, 4], [4, 2], [2, 1], [4, 3], [3, 3]])
    for ply in (1, 2):
        batch = select_plays(HandSetEvaluator(), boards, dice, ply=ply)
        for i in range(len(boards)):
            alone = select_plays(HandSetEvaluator(), boards[i : i + 1], dice[i : i + 1], ply=ply)
            np.testing.assert_array_equal(batch.afterstates[i], alone.afterstates[0])
            np.testing.assert_allclose(batch.probs[i], alone.probs[0], atol=1e-6)
            assert batch.plies[i] == alone.plies[0] and batch.num_plays[i] == alone.num_plays[0]
        values = position_probs(HandSetEvaluator(), boards, ply=ply)
        for i in range(len(boards)):
            np.testing.assert_allclose(
                values[i], position_probs(HandSetEvaluator(), boards[i], ply=ply)[0], atol=1e-6
            )


def test_levels_split_into_chunks_give_the_same_values(monkeypatch):
    ev = HandSetEvaluator()
    whole = position_probs(ev, np.stack([MIDDLE_GAME, BEAROFF_CONTACT]), ply=2)
    monkeypatch.setattr(search, "MAX_LEVEL_POSITIONS", 5)
    chunked = position_probs(ev, np.stack([MIDDLE_GAME, BEAROFF_CONTACT]), ply=2)
    np.testing.assert_allclose(chunked, whole, atol=1e-7)


def test_zero_ply_move_choice_is_the_best_static_afterstate():
    ev = HandSetEvaluator()
    boards = np.stack([MIDDLE_GAME, BEAROFF_CONTACT, SMALL_BEAROFF])
    dice = np.array([[6, 4], [4, 2], [2, 1]])
    sel = select_plays(ev, boards, dice)
    assert len(ev.batches) == 1 and sel.plies.tolist() == [0, 0, 0]
    for i in range(len(boards)):
        plays = na.legal_plays(boards[i], tuple(dice[i]))
        values = [ref_afterstate(ev, p, 0) for p in plays]
        best = int(np.argmax([_equity(v) for v in values]))
        np.testing.assert_array_equal(sel.afterstates[i], plays[best])
        np.testing.assert_allclose(sel.probs[i], values[best], atol=1e-7)
        assert sel.num_plays[i] == len(plays)
        ranked = rank_plays(ev, boards[i], tuple(dice[i]))
        np.testing.assert_array_equal(ranked.afterstates[0], plays[best])
        assert (np.diff(ranked.equity) <= 0).all() and (ranked.plies == 0).all()


def test_a_play_that_bears_off_the_last_checker_wins_exactly_at_every_ply():
    """X: 6: 1, 1: 1 rolls 6-1; 6/off 1/off ends the game. O has none off and a checker on its
    20-point, in X's home board (X's 5-point): a backgammon, 3 points (RULES.md §6)."""
    board = pos(me={6: 1, 1: 1}, opp={20: 1, 13: 14})
    for ply in (0, 1, 2):
        sel = select_plays(HandSetEvaluator(), board[None], np.array([[6, 1]]), ply=ply)
        assert sel.finished[0]
        np.testing.assert_array_equal(sel.probs[0], _exact(3))


# ------------------------------------------------------------------ errors and agents


@pytest.mark.parametrize("evaluator", [PubevalEvaluator(), RandomEvaluator(0)], ids=["pubeval", "random"])
def test_lookahead_needs_an_evaluator_with_real_probabilities(evaluator):
    for ply in (1, 2):
        with pytest.raises(ValueError, match="no real probabilities"):
            Agent(evaluator, ply=ply)
        with pytest.raises(ValueError, match="no real probabilities"):
            position_probs(evaluator, MIDDLE_GAME, ply=ply)
    assert Agent(evaluator).choose_plays(MIDDLE_GAME[None], np.array([[6, 4]])).shape == (1, 26)


@pytest.mark.parametrize("ply", [-1, 3, 1.5, True, "1"])
def test_bad_plies_raise(ply):
    with pytest.raises(ValueError, match="ply must be"):
        Agent(HandSetEvaluator(), ply=ply)


def test_agent_choose_rank_and_select_agree():
    agent = Agent(HandSetEvaluator(), ply=1)
    chosen = agent.choose_plays(MIDDLE_GAME[None], np.array([[6, 4]]))
    ranked = agent.rank_plays(MIDDLE_GAME, (6, 4))
    np.testing.assert_array_equal(chosen[0], ranked.afterstates[0])
    np.testing.assert_array_equal(
        agent.select_plays(MIDDLE_GAME[None], np.array([[6, 4]])).afterstates, chosen
    )


def test_the_21_rolls_and_their_weights():
    """Non-doubles 2/36 (15 of them), doubles 1/36 (6): 30/36 + 6/36 = 1."""
    assert len(ROLLS_21) == 21 and len({tuple(r) for r in ROLLS_21}) == 21
    assert (ROLLS_21[:, 0] >= ROLLS_21[:, 1]).all()
    assert ROLL_WEIGHTS.sum() == pytest.approx(1.0, abs=1e-15)
    assert sorted(set(np.round(ROLL_WEIGHTS * 36).astype(int).tolist())) == [1, 2]


def test_the_shipped_network_searches_at_every_ply():
    """The opening 6-1: 13/7 8/7 (making the 7-point) is the standard play at every depth."""
    pytest.importorskip("torch")
    from nard_ai.agents import load_agent
    from nard_ai.model.network import default_checkpoint_path

    if not default_checkpoint_path().is_file():
        pytest.skip("no shipped checkpoint")
    start = na.starting_board()
    best = na.parse_play(start, "13/7 8/7", (6, 1))
    base = load_agent()
    for ply in (0, 1, 2):
        agent = Agent(base.evaluator, ply=ply)
        np.testing.assert_array_equal(agent.choose_plays(start[None], np.array([[6, 1]]))[0], best)
        probs, equity = agent.value(start[None])
        assert 0.4 < probs[0, 0] < 0.6 and abs(equity[0]) < 0.2  # the opening position is about even
    assert load_agent(ply=2, filters="tiny").filters is TINY


def test_the_search_benchmark_uses_distinct_contact_positions_in_gnubgs_board_form():
    """``python -m nard_ai.bench --part search`` hands gnubg the same positions: row 1 of gnubg's
    two-row board is the side on roll (conftest.to_gnubg is the reference conversion)."""
    from conftest import to_gnubg

    from nard_ai.bench import _gnubg_rows, search_positions
    from nard_ai.eval.evaluator import has_contact

    boards, dice = search_positions(20, np.random.default_rng(7))
    assert boards.shape == (20, 26) and dice.shape == (20, 2)
    assert len({tuple(b) for b in boards.tolist()}) == 20 and has_contact(boards).all()
    assert ((dice >= 1) & (dice <= 6)).all()
    for b in boards:
        theirs, mine = _gnubg_rows(b)
        assert (tuple(theirs), tuple(mine)) == to_gnubg(b)


def test_choose_plays_checks_its_input_before_any_cast_at_every_ply():
    """A single ``(26,)`` board is one position (not 26); boards that are not valid integer counts are
    rejected before a cast to int8 could truncate or wrap them (RULES.md §1: at most 15 checkers)."""
    agent = na.load_agent()
    start = na.starting_board()
    chosen = agent.choose_plays(start, (3, 1))
    assert chosen.shape == (1, 26)
    np.testing.assert_array_equal(chosen[0], agent.rank_plays(start, (3, 1)).afterstates[0])
    wide = start.astype(np.int64)
    wide[24] = 258  # 2 as int8
    for ply in (0, 1):
        for bad, message in ((start + 0.5, "integer checker counts"), (wide, "258 checkers")):
            with pytest.raises(ValueError, match=message):
                na.load_agent(ply=ply).choose_plays(bad[None], np.array([[3, 1]]))


def test_an_empty_batch_gives_no_plays_at_every_ply():
    for ply in (0, 1, 2):
        out = na.load_agent(ply=ply).choose_plays(np.zeros((0, 26), np.int8), np.zeros((0, 2), np.int8))
        assert out.shape == (0, 26)


def test_agent_value_rejects_bad_shapes_and_unsafe_dtypes_at_0_ply():
    agent = na.load_agent()
    with pytest.raises(ValueError, match=r"shape \(N, 26\)"):
        agent.value(np.zeros((3, 25), np.int8))
    wide = na.starting_board().astype(np.int64)
    wide[24] = 258
    with pytest.raises(ValueError, match="258 checkers"):
        agent.value(wide[None])


def test_agent_constructors_take_the_issues_arguments():
    # load_agent(checkpoint=None, ply=0, filters=None): the filters are the third positional argument
    assert na.load_agent(None, 1, "tiny").filters is MOVE_FILTERS["tiny"]
    with pytest.raises(ValueError, match="seed"):
        na.random_agent("x")
    for name in ("load_agent", "pubeval_agent", "random_agent", "Agent", "MoveFilters"):
        assert name in na.__all__


def test_an_agents_old_evaluate_is_a_deprecated_alias_of_value():
    """0.2's ``Agent.evaluate`` gave ``(probs, equity)`` while an evaluator's ``evaluate`` gives
    probabilities: the agent's is now ``value``, and ``evaluate`` warns until 0.3 removes it."""
    agent = Agent(HandSetEvaluator(), ply=1)
    with pytest.warns(DeprecationWarning, match=r"removed in nard_ai 0\.3: use agent\.value"):
        old = agent.evaluate(SMALL_BEAROFF[None])
    new = agent.value(SMALL_BEAROFF[None])
    assert isinstance(new, Valuation) and isinstance(old, Valuation)
    np.testing.assert_array_equal(old.probs, new.probs)
    np.testing.assert_array_equal(old.equity, new.equity)


def test_agent_value_serves_old_style_agents_and_refuses_evaluators():
    """A user's agent written for 0.2 (only ``evaluate -> (probs, equity)``) still works, with the
    warning; an evaluator handed over as an agent is refused even for two boards, where unpacking
    its ``(2, 5)`` answer as ``probs, equity`` would silently give two rows."""
    inner = Agent(HandSetEvaluator())
    boards = np.stack([SMALL_BEAROFF, SMALL_BEAROFF])

    class Old:
        def evaluate(self, b):
            probs, equity = inner.value(b)
            return probs, equity

    with pytest.warns(DeprecationWarning, match="deprecated"):
        got = agent_value(Old(), boards)
    want = inner.value(boards)
    assert isinstance(got, Valuation)
    np.testing.assert_array_equal(got.probs, want.probs)
    np.testing.assert_array_equal(got.equity, want.equity)
    with pytest.raises(TypeError, match=r"wrap it in Agent\(evaluator\)"):
        agent_value(HandSetEvaluator(), boards)  # refused without the deprecation warning (it is no agent)

    class OldList:
        def evaluate(self, b):
            return list(inner.value(b))

    with pytest.warns(DeprecationWarning, match="deprecated"):
        np.testing.assert_array_equal(agent_value(OldList(), boards).equity, want.equity)
    with pytest.raises(TypeError, match="not an agent"):
        agent_value(object(), boards)
