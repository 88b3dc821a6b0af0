"""Batched game stepping (nard_ai.core.game) and the compiled random-games kernel.

Rules from docs/RULES.md: §2 (opening roll), §6 (scoring), §8
(points = result × cube value).
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na
from nard_ai.core.board import pos
from nard_ai.core.game import CENTERED, new_games, opening_roll, step


def _play_random(state, rng):
    """Step every running game once with a uniformly random legal play."""
    run = np.flatnonzero(~state.done)
    plays, owner = na.legal_plays_batch(state.boards[run], state.dice[run])
    counts = np.bincount(owner, minlength=len(run))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    after = state.boards.copy()
    after[run] = plays[starts + (rng.random(len(run)) * counts).astype(int)]
    return step(state, after, rng)


def test_new_games_start_from_the_starting_position_with_a_non_double_opening_roll():
    """RULES.md §2: the higher die starts and plays both numbers; never a double."""
    state = new_games(500, np.random.default_rng(1))
    assert (state.boards == na.starting_board()).all()
    assert (state.dice[:, 0] != state.dice[:, 1]).all()
    # Player 0 rolled dice[:, 0], player 1 dice[:, 1]: the higher one is on roll.
    assert (state.turn == (state.dice[:, 1] > state.dice[:, 0])).all()
    assert (state.cube_value == 1).all() and (state.cube_owner == CENTERED).all()
    assert (state.pip_counts() == 167).all()


def test_opening_roll_rerolls_ties():
    starter, dice = opening_roll(10_000, np.random.default_rng(2))
    assert (dice[:, 0] != dice[:, 1]).all()
    # Each of the 30 ordered non-double rolls is equally likely (1/30 each).
    freq = np.bincount((dice[:, 0] - 1) * 6 + dice[:, 1] - 1, minlength=36) / len(dice)
    assert np.all(np.abs(freq[freq > 0] - 1 / 30) < 0.01)


def test_step_passes_the_turn_and_swaps_the_view():
    rng = np.random.default_rng(3)
    state = new_games(1, rng)
    after = na.legal_plays(state.boards[0], state.dice[0])[0]
    nxt = step(state, after[None], rng)
    assert nxt.turn[0] == 1 - state.turn[0]
    assert (nxt.boards[0] == na.swap_sides(after)).all()
    assert nxt.plies[0] == 1 and not nxt.done[0]
    assert (state.plies == 0).all()  # the input state is not modified


@pytest.mark.parametrize(
    ("opp", "cube", "expected"),
    [
        ({6: 14}, 4, 4),  # single: the loser has borne off one checker (RULES.md §6)
        ({6: 15}, 4, 8),  # gammon × cube 4 = 8 points (seed 004)
        ({25: 1, 6: 14}, 16, 48),  # backgammon (a checker on the bar) × cube 16 = 48 (seed 000)
    ],
)
def test_finished_game_scores_result_times_cube_from_player_zeros_view(opp, cube, expected):
    """RULES.md §6 and §8: the final score is result points × cube value."""
    rng = np.random.default_rng(4)
    board = pos(me={1: 1}, opp=opp)  # the mover bears off its last checker with any roll
    for turn, sign in ((0, 1), (1, -1)):
        state = new_games(1, rng)
        state.boards[0] = board
        state.dice[0] = (6, 5)
        state.turn[0] = turn
        state.cube_value[0] = cube
        after = na.legal_plays(board, (6, 5))
        assert len(after) == 1
        end = step(state, after, rng)
        assert end.done[0]
        assert end.points[0] == sign * expected
        assert end.winner()[0] == turn


@pytest.mark.parametrize(
    ("owner", "match_length", "expected"),
    [
        (-1, 0, 4),  # money, cube centred at 4: the gammon counts one game, x 4 (RULES.md, "Jacoby rule")
        (0, 0, 8),  # money, the cube turned: the rule no longer applies, 2 x 4
        (-1, 9, 8),  # match play: no Jacoby rule, 2 x 4
    ],
)
def test_step_with_the_jacoby_rule_scores_a_centred_money_gammon_as_one_game(owner, match_length, expected):
    """``step(..., jacoby=True)`` scores by core.game.finished_points, the one rule of the drivers."""
    rng = np.random.default_rng(6)
    board = pos(me={1: 1}, opp={6: 15})  # the mover bears off its last checker: a gammon
    state = new_games(1, rng, match_length=match_length)
    state.boards[0], state.dice[0], state.turn[0] = board, (6, 5), 0
    state.cube_value[0], state.cube_owner[0] = 4, owner
    end = step(state, na.legal_plays(board, (6, 5)), rng, jacoby=True)
    assert end.done[0] and end.points[0] == expected
    assert step(state, na.legal_plays(board, (6, 5)), rng).points[0] == 8  # without the rule: 2 x 4


def test_finished_games_are_left_unchanged():
    rng = np.random.default_rng(5)
    state = new_games(16, rng)
    while not state.done.all():
        before = state
        state = _play_random(state, rng)
        # A game that had ended keeps its board, points and ply count.
        ended = before.done
        assert (state.boards[ended] == before.boards[ended]).all()
        assert (state.points[ended] == before.points[ended]).all()
        assert (state.plies[ended] == before.plies[ended]).all()
    assert set(np.abs(state.points)) <= {1, 2, 3}


def test_step_rejects_bad_shapes_and_dice():
    rng = np.random.default_rng(6)
    state = new_games(2, rng)
    with pytest.raises(ValueError, match="shape"):
        step(state, state.boards[:1], rng)
    with pytest.raises(ValueError, match="exactly one"):
        step(state, state.boards, rng, next_dice=np.ones((2, 2), dtype=np.int8))
    with pytest.raises(ValueError, match="1..6"):
        step(state, state.boards, next_dice=np.full((2, 2), 7))
    with pytest.raises(ValueError, match="match length"):
        new_games(1, rng, match_length=5, score=(5, 0))


def test_random_games_are_reproducible_and_finish_with_legal_results():
    """The compiled kernel: seeded, ±1/2/3 points, and a game's plies are positive."""
    points, plies = na.random_games(400, np.random.default_rng(7))
    again, plies2 = na.random_games(400, np.random.default_rng(7))
    assert (points == again).all() and (plies == plies2).all()
    assert set(np.abs(points)) <= {1, 2, 3}
    assert (plies >= 2).all()  # nobody bears off 15 checkers in one turn
    # Random play is symmetric: the starter's mean result is near 0 (sd of the mean ~0.07).
    assert abs(points.mean()) < 0.35
    with pytest.raises(ValueError):
        na.random_games(-1, np.random.default_rng(0))
    with pytest.raises(ValueError):
        na.random_games(3, 0)


def test_random_games_results_do_not_depend_on_the_thread_count():
    import numba

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = na.random_games(64, np.random.default_rng(8))
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = na.random_games(64, np.random.default_rng(8))
    finally:
        numba.set_num_threads(before)
    assert (one[0] == many[0]).all() and (one[1] == many[1]).all()
