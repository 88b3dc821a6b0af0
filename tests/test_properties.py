"""Property tests (hypothesis) of the rules core: invariants every legal play must keep.

Generation properties run on both implementations through the ``generate``
fixture (the reference, and ``nard_ai.core.movegen`` when it exists). Boards come
from :func:`conftest.boards` (any valid board, random play, bear-off-heavy).
"""

from __future__ import annotations

import numpy as np
import pytest
import reference
from conftest import ALL_ROLLS, boards, dice, finished_boards, import_movegen, play_set
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nard_ai.core.board import (
    game_result,
    pip_count,
    starting_board,
    swap_sides,
    validate_board,
    validate_dice,
)
from nard_ai.core.rules import Rules

# The ``generate`` fixture only hands back a pure function, so reusing it across examples is safe.
PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
RULES = st.sampled_from([Rules(), Rules.iranian("000"), Rules.iranian("002")])


def _mover_in_play(board) -> int:
    return int(np.clip(np.asarray(board)[1:26], 0, None).sum())


def _opp_in_play(board) -> int:
    return int(np.clip(-np.asarray(board)[0:25], 0, None).sum())


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice(), rules=RULES)
def test_afterstates_are_valid_and_conserve_fifteen_checkers_a_side(generate, board, roll, rules):
    """Every afterstate is a valid board (RULES.md 1); the mover's checkers on the board, the
    bar and off still total 15, with only bearing off moving checkers out of play; the
    opponent's checkers in play (board + bar) are exactly as many as before."""
    afterstates = generate(board, roll, rules)
    assert afterstates.dtype == np.int8 and afterstates.ndim == 2 and afterstates.shape[1] == 26
    assert len(afterstates) >= 1
    validate_board(afterstates)
    for after in afterstates:
        off_before, off_after = 15 - _mover_in_play(board), 15 - _mover_in_play(after)
        assert 0 <= off_before <= off_after <= 15
        assert _mover_in_play(after) + off_after == 15
        assert _opp_in_play(after) == _opp_in_play(board)
        assert after[25] >= 0 and after[0] <= 0


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice(), rules=RULES)
def test_afterstates_are_distinct(generate, board, roll, rules):
    """RULES.md 3.5: a play is identified by the position it produces -- each appears once."""
    afterstates = generate(board, roll, rules)
    assert len(play_set(afterstates)) == len(afterstates)


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice())
def test_pips_moved_equal_the_dice_used_except_when_bearing_off(generate, board, roll):
    """Pips: let ``S`` be the sum of the dice every legal play uses (RULES.md 3.4: both dice,
    four of a double, or fewer when fewer fit; a play bearing off the last checker counts as
    using all of them, 3.6). For each afterstate the mover's pip count (bar = 25) drops by
    ``delta``:

    * no checker borne off in the play: ``delta == S`` exactly (hits do not change the
      mover's pips);
    * ``j >= 1`` checkers borne off: ``0 < delta <= S``; it is less than ``S`` only by the
      overshoot of dice larger than the point they bear off from, or by dice not needed once
      the last checker is off.
    * nothing legal (``S == 0``): the one afterstate is the unchanged board.
    """
    used = reference.dice_used(reference.as_tuple(board), *roll)
    total = sum(used)
    before = int(pip_count(board)[0])
    afterstates = generate(board, roll)
    for after in afterstates:
        delta = before - int(pip_count(after)[0])
        borne_off = _mover_in_play(board) - _mover_in_play(after)
        if borne_off == 0:
            assert delta == total, (used, delta)
        else:
            assert 0 < delta <= total, (used, delta)
    if total == 0:
        assert np.array_equal(afterstates, np.asarray(board, dtype=np.int8)[None])


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice(), rules=RULES)
def test_opponent_checkers_only_move_to_its_bar(generate, board, roll, rules):
    """RULES.md 4: the mover only hits blots; a hit checker goes to the opponent's bar.
    So on every point the opponent loses nothing or exactly its single blot, never gains,
    and its bar grows by the number of blots hit."""
    before = np.asarray(board, dtype=np.int64)
    for after in np.asarray(generate(board, roll, rules), dtype=np.int64):
        opp_before = np.clip(-before[1:25], 0, None)
        opp_after = np.clip(-after[1:25], 0, None)
        lost = opp_before - opp_after
        assert np.all((lost == 0) | ((lost == 1) & (opp_before == 1)))
        assert -after[0] == -before[0] + lost.sum()


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice(), rules=RULES)
def test_no_legal_move_is_the_only_play_that_leaves_the_board_unchanged(generate, board, roll, rules):
    """RULES.md 3.4: the unchanged board is a play only when nothing is legal, and then the only one."""
    plays = play_set(generate(board, roll, rules))
    if reference.as_tuple(board) in plays:
        assert plays == {reference.as_tuple(board)}


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice(), rules=RULES)
def test_checkers_on_the_bar_enter_before_anything_else_moves(generate, board, roll, rules):
    """RULES.md 4: while the mover still has a checker on the bar after its play, no other
    checker moved: the mover's count on every point is at least what it was."""
    for after in generate(board, roll, rules):
        if after[25] > 0:
            mover_before = np.clip(np.asarray(board[1:25], dtype=np.int64), 0, None)
            mover_after = np.clip(np.asarray(after[1:25], dtype=np.int64), 0, None)
            assert np.all(mover_after >= mover_before)


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice(), rules=RULES)
def test_bearing_off_leaves_every_mover_checker_in_the_home_board(generate, board, roll, rules):
    """RULES.md 5: bearing off needs all checkers home, and checkers only move towards home,
    so an afterstate with more checkers off has none on points 7..24 or the bar."""
    for after in generate(board, roll, rules):
        if _mover_in_play(after) < _mover_in_play(board):
            assert max(after[7:26]) <= 0


@PROPERTY_SETTINGS
@given(board=boards(), roll=dice())
def test_iranian_plays_are_a_non_empty_subset_of_the_standard_plays(generate, board, roll):
    """RULES.md 7.3: the variant only removes plays, and never all of them."""
    standard = play_set(generate(board, roll))
    for form in ("000", "002"):
        iranian = play_set(generate(board, roll, Rules.iranian(form)))
        assert iranian and iranian <= standard


@settings(max_examples=60, deadline=None)
@given(data=st.lists(st.tuples(boards(), dice()), min_size=1, max_size=12), rules=RULES)
def test_batch_is_the_concatenation_of_single_positions(data, rules):
    """``legal_plays_batch`` = ``legal_plays`` of each position, in input order, owner ascending."""
    movegen = import_movegen()
    batch_boards = np.array([b for b, _ in data], dtype=np.int8)
    batch_dice = np.array([r for _, r in data], dtype=np.int8)
    afterstates, owner = movegen.legal_plays_batch(batch_boards, batch_dice, rules)
    assert owner.dtype == np.int64 and afterstates.dtype == np.int8
    assert np.all(np.diff(owner) >= 0)
    for i, (board, roll) in enumerate(data):
        assert np.array_equal(afterstates[owner == i], movegen.legal_plays(board, roll, rules))


# ---------------------------------------------------------------------------
# Board helpers: swap_sides and game_result
# ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(board=st.one_of(boards(), finished_boards()))
def test_swap_sides_twice_is_the_identity(board):
    """RULES.md 1: "My point p is the opponent's point 25 - p" -- turning the board twice is a no-op,
    also for a batch, and it exchanges the two sides' pip counts."""
    once = swap_sides(board)
    assert once.dtype == np.int8
    assert np.array_equal(swap_sides(once), board)
    assert pip_count(once).tolist() == pip_count(board).tolist()[::-1]
    batch = np.stack([board, once])
    assert np.array_equal(swap_sides(swap_sides(batch)), batch)


@settings(max_examples=200, deadline=None)
@given(board=st.one_of(boards(), finished_boards()))
def test_game_result_changes_sign_with_the_point_of_view(board):
    """RULES.md 6: the result is the same game seen from the other side, so it changes sign
    under ``swap_sides``; it is 0 while both sides have checkers, else 1, 2 or 3 points."""
    result = game_result(board)
    assert game_result(swap_sides(board)) == -result
    if _mover_in_play(board) > 0 and _opp_in_play(board) > 0:
        assert result == 0
    else:
        assert abs(result) in (1, 2, 3)
    batch = np.stack([board, swap_sides(board)])
    assert game_result(batch).tolist() == [result, -result]


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


def _corruptions(board: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Invalid variants of a valid board."""
    b = np.asarray(board, dtype=np.int64)
    out = []
    extra = b.copy()
    extra[int(np.argmax(np.clip(extra[1:25], 0, None))) + 1 if extra[1:25].max() > 0 else 25] += 15
    out.append(("too many mover checkers", extra))
    more_opp = b.copy()
    more_opp[0] -= 16 - _opp_in_play(b)
    out.append(("16 opponent checkers", more_opp))
    bad_bar = b.copy()
    bad_bar[25] = -1
    out.append(("negative mover bar", bad_bar))
    bad_opp_bar = b.copy()
    bad_opp_bar[0] = 1
    out.append(("positive opponent bar", bad_opp_bar))
    out.append(("wrong length", b[:25]))
    out.append(("non-integer counts", b.astype(np.float64) + 0.5))
    return out


@settings(max_examples=60, deadline=None)
@given(board=boards())
def test_invalid_boards_raise_value_error(board):
    """``validate_board`` and both generator entry points reject malformed boards with ValueError."""
    movegen = None
    try:
        movegen = import_movegen()
    except pytest.skip.Exception:
        pass
    for _name, bad in _corruptions(board):
        with pytest.raises(ValueError):
            validate_board(bad)
        if movegen is not None:
            with pytest.raises(ValueError):
                movegen.legal_plays(bad, (3, 1))
            if bad.shape == (26,):
                with pytest.raises(ValueError):
                    movegen.legal_plays_batch(bad[None], np.array([[3, 1]]))


@pytest.mark.parametrize(
    "bad_dice",
    [(0, 3), (7, 1), (-1, 2), (3, 1, 2), (3,), (2.5, 1.0)],
    ids=["zero", "seven", "negative", "three-dice", "one-die", "floats"],
)
def test_invalid_dice_raise_value_error(bad_dice):
    """Dice are two integers 1..6 (RULES.md 3); anything else is a ValueError."""
    with pytest.raises(ValueError):
        validate_dice(np.asarray(bad_dice))
    movegen = import_movegen()
    with pytest.raises(ValueError):
        movegen.legal_plays(starting_board(), bad_dice)
    with pytest.raises(ValueError):
        movegen.legal_plays_batch(starting_board()[None], np.asarray([bad_dice]))


def test_batch_rejects_mismatched_lengths():
    """One roll per board."""
    movegen = import_movegen()
    boards_ = np.stack([starting_board()] * 3)
    with pytest.raises(ValueError):
        movegen.legal_plays_batch(boards_, np.array([[3, 1], [4, 2]]))


def test_every_roll_is_covered():
    """The 21 distinct rolls: 15 non-doubles and 6 doubles."""
    assert len(ALL_ROLLS) == 21 and len(set(ALL_ROLLS)) == 21
    assert sum(a == b for a, b in ALL_ROLLS) == 6


@pytest.mark.parametrize(
    "bad_dice", [(True, 1), [3, np.bool_(False)], [[3, 1], [True, 2]]], ids=["tuple", "list", "rows"]
)
def test_bools_among_integer_dice_raise_value_error(bad_dice):
    """A bool is not a die (RULES.md 3: two integers 1..6): Python would turn True into a 1 and play it."""
    with pytest.raises(ValueError, match="dice must be integers, got a bool"):
        validate_dice(bad_dice)
    movegen = import_movegen()
    boards = np.stack([starting_board()] * np.asarray(bad_dice).reshape(-1, 2).shape[0])
    with pytest.raises(ValueError, match="got a bool"):
        movegen.legal_plays_batch(boards, bad_dice)
