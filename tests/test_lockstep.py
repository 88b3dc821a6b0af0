"""The one lockstep engine of the game-playing drivers (``nard_ai.play.lockstep``).

Its drivers' results are pinned by tests/test_golden.py (recorded before the engine existed);
these tests state the engine's own contract: one ply of a batch of slots, the game end and its
points, the ply limit, the duplicate dice across chunk boundaries, one call per agent.
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na
from nard_ai.core.board import pos, starting_board, swap_sides
from nard_ai.play.lockstep import CHUNK, MAX_PLIES, KeyedDice, Lockstep, choose_by_side, dice_chunk


def test_a_ply_turns_the_going_boards_round_and_scores_the_ended_games_for_their_mover():
    lock = Lockstep(3)
    lock.start(np.arange(3), starting_board())
    going = na.legal_plays(starting_board(), (3, 1))[0]
    # the mover has borne off all 15 (each side's points in its own numbering, core.board.pos)
    single = pos({}, {1: 2})  # the opponent has borne off 13: a single game
    gammon = pos({}, {6: 15})  # none of the opponent's off, all in its own home board: a gammon
    backgammon = pos({}, {6: 14, 24: 1})  # ... and one in the winner's home board: a backgammon
    finished, points = lock.play(np.array([0, 1, 2]), np.stack([going, gammon, backgammon]))
    assert finished.tolist() == [False, True, True]
    assert points.tolist() == [2, 3]  # RULES.md: gammon 2, backgammon 3, for the side that played
    assert (lock.boards[0] == swap_sides(going)).all()  # the next side's view
    assert lock.turn.tolist() == [1, 1, 1] and lock.ply.tolist() == [1, 1, 1] and lock.plies == 3
    assert lock.running.tolist() == [True, False, False]
    assert lock.play(np.array([0]), single[None])[1].tolist() == [1]


def test_a_game_past_the_ply_limit_stops_the_driver():
    lock = Lockstep(2, what="rollout game")
    lock.start(np.arange(2), starting_board())
    lock.ply[1] = MAX_PLIES  # this game has played 5,000 plies; its next one is over the limit
    going = na.legal_plays(starting_board(), (3, 1))[0]
    lock.play(np.array([0]), going[None])  # the other game goes on
    with pytest.raises(RuntimeError, match="a rollout game passed 5000 plies"):
        lock.play(np.array([1]), going[None])


def test_keyed_dice_read_each_games_sequence_across_chunks_whatever_the_slot():
    """A game's roll at ply p is roll p % CHUNK of chunk p // CHUNK of its key (dice_chunk), in any
    slot and beside any other game: so both games of a duplicate pair get the same rolls."""
    dice = KeyedDice(3)
    starter = dice.start(2, (7, 4))
    assert starter == dice_chunk((7, 4), 0)[0]
    dice.start(0, (7, 5))
    want = np.concatenate([dice_chunk((7, 4), c)[1] for c in range(3)])
    got = [dice.roll(np.array([0, 2]), np.array([p, p]))[1] for p in range(3 * CHUNK)]
    assert (np.stack(got) == want).all()
    assert (
        dice_chunk((7, 4), 0)[1][0, 0] != dice_chunk((7, 4), 0)[1][0, 1]
    )  # chunk 0 opens with the opening roll


class _Counting:
    def __init__(self, name):
        self.name, self.calls = name, []

    def choose_plays(self, boards, dice):
        self.calls.append(len(boards))
        return np.stack([na.legal_plays(b, tuple(d))[0] for b, d in zip(boards, dice, strict=True)])


def test_each_agent_chooses_its_rows_in_one_call_and_an_idle_agent_is_not_called():
    a, b, idle = _Counting("a"), _Counting("b"), _Counting("idle")
    boards = np.stack([starting_board()] * 5)
    dice = np.array([[3, 1], [6, 5], [2, 2], [4, 3], [5, 1]], dtype=np.int8)
    mask = np.array([True, False, True, True, False])
    after = choose_by_side(((a, mask), (b, ~mask), (idle, np.zeros(5, bool))), boards, dice)
    assert a.calls == [3] and b.calls == [2] and idle.calls == []
    for k in range(5):
        assert (after[k] == na.legal_plays(boards[k], tuple(dice[k]))[0]).all()


def test_one_cube_owner_convention_the_seat_and_its_name_from_the_side_on_roll():
    """The drivers keep the owner as core.game does (CENTERED = -1, else the owning seat); a CubeState
    names it from the side on roll: centred, on_roll (the mover owns it) or opponent."""
    from nard_ai.core.game import CENTERED
    from nard_ai.cube import CubeState
    from nard_ai.play.cube_policy import OWNER_BY_CODE, owner_codes, owner_seat

    owners, movers = np.array([CENTERED, CENTERED, 0, 0, 1, 1]), np.array([0, 1, 0, 1, 0, 1])
    names = [OWNER_BY_CODE[c] for c in owner_codes(owners, movers)]
    assert names == ["centred", "centred", "on_roll", "opponent", "opponent", "on_roll"]
    for owner, mover, name in zip(owners, movers, names, strict=True):
        cube = CubeState(1 if name == "centred" else 2, name)
        assert owner_seat(cube, int(mover)) == owner  # and back


def test_the_core_step_and_the_lockstep_end_turns_by_one_rule():
    from nard_ai.core.game import end_turns, new_games, step

    going = na.legal_plays(starting_board(), (3, 1))[0]
    gammon = pos({}, {6: 15})  # RULES.md §6: the loser has none off, none in the winner's home: 2
    backgammon = pos({}, {6: 14, 24: 1})  # one in the winner's home board: 3
    after = np.stack([going, gammon, backgammon])
    finished, result, boards = end_turns(after)
    assert finished.tolist() == [False, True, True] and result.tolist() == [0, 2, 3]
    assert (boards[0] == swap_sides(going)).all() and (boards[1:] == after[1:]).all()
    # the core's step (the env's) gives the same ends, results (x cube 1, player 0's view) and boards
    state = new_games(3, np.random.default_rng(5))
    state.turn[:] = 0
    state.boards[:] = np.stack([starting_board(), pos({2: 1}, {6: 15}), pos({2: 1}, {6: 14, 24: 1})])
    nxt = step(state, after, next_dice=np.tile(np.array([1, 2], np.int8), (3, 1)))
    assert nxt.done.tolist() == finished.tolist() and nxt.points.tolist() == [0, 2, 3]
    assert (nxt.boards == boards).all()
    lock = Lockstep(3)
    lock.start(np.arange(3), starting_board())
    lock_finished, lock_points = lock.play(np.arange(3), after)
    assert lock_finished.tolist() == finished.tolist() and lock_points.tolist() == [2, 3]
    assert (lock.boards[0] == boards[0]).all()
