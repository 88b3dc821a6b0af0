"""Bad input to the public rules-core API raises ValueError with a message saying what is wrong.

The brief: "Bad input gets a clear error, never a crash or a silent wrong
answer". Each case below was once a silent wrong answer or another exception.
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na

BOARD = na.starting_board()
RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: na.pip_count(np.full(26, 15)), "bar"),
        (lambda: na.swap_sides(np.full(26, 100)), "only 15"),
        (lambda: na.swap_sides(np.arange(5)), "shape"),
        (lambda: na.swap_sides(BOARD + 0.5), "integer"),
        (lambda: na.swap_sides("abc"), "shape"),
        (lambda: na.pip_count([1, 2, 3]), "shape"),
        # A float board is refused even when whole: 1e20 once became 0 in a cast.
        (lambda: na.legal_plays(np.where(np.arange(26) == 10, 1e20, BOARD.astype(float)), (3, 1)), "integer"),
        (lambda: na.legal_plays(np.array([-(2**63)] + [0] * 25), (3, 1)), "only 15"),
        (lambda: na.legal_plays(np.array([2**64 - 1] + [0] * 25, dtype=np.uint64), (3, 1)), "only 15"),
        (lambda: na.legal_plays(BOARD, (3, 1), rules="000"), "Rules"),
        (lambda: na.legal_plays(BOARD, (3, 1), rules=None), "Rules"),
        (lambda: na.random_games(4, RNG, rules="000"), "Rules"),
        (lambda: na.Rules(no_hit_and_continue=[]), "no_hit_and_continue"),
        (lambda: na.new_games(2, None), "Generator"),
        (lambda: na.new_games(2.5, RNG), "integer"),
        (lambda: na.random_games(2.5, RNG), "integer"),
        (lambda: na.legal_plays(BOARD, (3, 1, 2)), "dice"),
        (lambda: na.legal_plays(BOARD, 3), "dice"),
        (lambda: na.legal_plays(BOARD, None), "dice"),
        (lambda: na.legal_plays(BOARD, np.array([[3, 1], [2, 2]])), "one roll"),
        (lambda: na.legal_plays(BOARD, (3.0, 1.0)), "integers"),
        (lambda: na.legal_plays(BOARD, (0, 1)), "1..6"),
    ],
)
def test_bad_input_raises_value_error_naming_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_step_rejects_an_afterstate_that_moves_opponent_checkers():
    """RULES.md §4: the opponent's checkers only leave their points when hit (to the bar)."""
    state = na.new_games(1, np.random.default_rng(1))
    after = state.boards.copy()
    after[0, 1] = 0  # the opponent's two back checkers vanish
    with pytest.raises(ValueError, match="not a play"):
        na.step(state, after, np.random.default_rng(1))
    with pytest.raises(ValueError, match="Generator"):
        na.step(state, state.boards, "x")


def test_agents_are_exported_lazily_without_importing_torch_for_the_rules_core():
    import subprocess
    import sys

    code = "import sys, nard_ai; assert 'torch' not in sys.modules; nard_ai.load_agent; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
    probs, equity = na.load_agent().value(na.starting_board()[None])
    assert probs.shape == (1, 5) and equity.shape == (1,)


#: Issue 15: both sides have 3 checkers on the bar against the other's closed home board (2 on each of
#: points 1-6). Neither side can enter, so neither can ever move: `nard play` looped forever, the env's
#: reset never returned, `nard rollout` crashed.
DEAD_ID = "27YBAHDbtgEAcA"
DEAD = np.array([-3] + [2] * 6 + [0] * 12 + [-2] * 6 + [3], dtype=np.int8)


def test_a_dead_position_where_neither_side_can_ever_move_is_an_invalid_board():
    """RULES.md 4: a checker on the bar must enter before any other moves, on a point not held by two or more
    opposing checkers; with all six closed, for both sides, no roll ever changes the board. No game reaches
    it (both_shut_out's docstring says why), so it is refused as invalid input wherever a board comes in.
    gnubg agrees: its position_from_id answers "Invalid position ID" for 27YBAHDbtgEAcA."""
    message = r"neither side can ever move: both have checkers on the bar \(mover 3, opponent 3\)"
    for call in (
        lambda: na.validate_board(DEAD),
        lambda: na.validate_board(np.stack([BOARD, DEAD])),  # a batch with one dead board
        lambda: na.board_from_position_id(DEAD_ID),
        lambda: na.position_id(DEAD),
        lambda: na.legal_plays(DEAD, (3, 1)),
        # the compiled fast path of int8 (N, 26) batches refuses it too, with the same message
        lambda: na.legal_plays_batch(DEAD[None].copy(), np.array([[3, 1]], dtype=np.int8)),
        lambda: na.game_result(DEAD),
        lambda: na.pip_count(DEAD),
    ):
        with pytest.raises(ValueError, match=message):
            call()


def test_gnubg_finds_no_move_for_either_side_of_the_dead_position_with_any_roll():
    """The claim behind the refusal, checked by gnubg's move generator: 21 rolls, both sides, no move."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    from conftest import ALL_ROLLS

    tan = gnubg_nn.board_from_position_id(DEAD_ID)  # gnubg's (2, 25): row 1 the side on roll
    assert [row[:6] for row in tan] == [[2] * 6, [2] * 6] and [row[24] for row in tan] == [3, 3]
    for d1, d2 in ALL_ROLLS:
        assert gnubg_nn.moves(tan, d1, d2, 1) == ()
        assert gnubg_nn.moves([tan[1], tan[0]], d1, d2, 1) == ()


def test_positions_one_step_from_dead_are_valid():
    """One open entry point (a blot there, or an empty point), or only one side shut out: the game goes on."""

    def moves(board, dice):  # some legal play changes the board
        return not (na.legal_plays(board, dice) == board).all(axis=1).any()

    blot_in_board = DEAD.copy()
    blot_in_board[1] = 1  # the opponent enters with a 1 on the mover's 1-point (its 24), hitting
    assert moves(na.swap_sides(blot_in_board), (1, 1))
    open_point = DEAD.copy()
    open_point[24], open_point[0] = 0, -5  # the opponent's 1-point (the mover's 24) empty, its 2 on the bar
    assert moves(open_point, (1, 1))
    one_side = DEAD.copy()
    one_side[0] = 0  # the opponent's 3 are borne off, not on the bar
    assert not moves(one_side, (6, 5))  # the mover cannot enter
    assert moves(na.swap_sides(one_side), (6, 5))  # the opponent can move


def test_the_dead_check_is_the_same_from_either_side_on_random_boards():
    """Seeded: 2,000 variations of the dead board (checkers moved off its points, bars of 0-3); validate_board
    accepts a board exactly when it accepts the other side's view of it, and refuses exactly the ones with
    both sides on the bar and both home boards closed."""
    rng = np.random.default_rng(15)
    refused = 0
    for _ in range(2000):
        board = DEAD.copy()
        for idx in rng.choice([1, 2, 3, 4, 5, 6, 19, 20, 21, 22, 23, 24], size=int(rng.integers(0, 3))):
            board[idx] -= np.sign(board[idx])  # one checker fewer on that point (borne off)
        board[25], board[0] = int(rng.integers(0, 4)), -int(rng.integers(0, 4))
        dead = board[25] > 0 and board[0] < 0 and (board[1:7] >= 2).all() and (board[19:25] <= -2).all()
        for view in (board, np.negative(board[::-1])):
            try:
                na.validate_board(view)
                assert not dead, board.tolist()
            except ValueError as exc:
                assert dead and "neither side can ever move" in str(exc), board.tolist()
        refused += dead
    assert 100 < refused < 1900


@pytest.mark.parametrize("shape", [(25,), (27,), (2, 3, 26), (), (26, 2)])
def test_game_result_of_a_wrong_shape_names_the_shapes_it_takes(shape):
    """Issue 15: a (25,) board gave numpy's "cannot reshape array of size 25 into shape (26)"."""
    with pytest.raises(ValueError, match=r"a board must have shape \(26,\) or \(N, 26\), got "):
        na.game_result(np.zeros(shape, dtype=np.int8))
