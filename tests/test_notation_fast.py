"""The compiled play description (:mod:`nard_ai.formats.notation_fast`) gives describe_plays' answers.

The reference is :func:`nard_ai.formats.notation.describe_plays`, whose notation
matches gnubg's ``FormatMove`` (its own tests); the compiled twin must give the
same ``(moves, notation)`` pairs, play for play, and refuse the same inputs.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import nard_ai as na
from nard_ai.core.board import pos, starting_board, swap_sides
from nard_ai.formats.notation import describe_plays
from nard_ai.formats.notation_fast import describe_plays_batch, describe_plays_json, moves_json


def _random_positions(n: int, seed: int) -> list[tuple[np.ndarray, tuple[int, int]]]:
    """``n`` (board, dice) from seeded games of uniformly random legal plays, to the end of each game.

    Random play reaches what engines' games rarely do: many checkers on the bar,
    closed boards, hits during the bear-off, plays that cannot use every die.
    """
    rng = np.random.default_rng(seed)
    out: list[tuple[np.ndarray, tuple[int, int]]] = []
    board = starting_board()
    while len(out) < n:
        d = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        out.append((board, d))
        plays = na.legal_plays(board, d)
        after = plays[rng.integers(len(plays))]
        board = starting_board() if after[1:26].clip(0).sum() == 0 else swap_sides(after)
    return out


def _batch(positions):
    boards = np.stack([b for b, _ in positions])
    dice = np.array([d for _, d in positions])
    plays = [na.legal_plays(b, d) for b, d in positions]
    owner = np.repeat(np.arange(len(positions)), [len(p) for p in plays])
    return boards, dice, np.concatenate(plays), owner, plays


@pytest.mark.parametrize("seed", [1, 2])
def test_every_play_of_random_positions_is_described_as_describe_plays_does(seed):
    positions = _random_positions(2000, seed)
    boards, dice, after, owner, plays = _batch(positions)
    want = [pair for (b, d), p in zip(positions, plays, strict=True) for pair in describe_plays(b, p, d)]
    assert describe_plays_batch(boards, dice, after, owner) == want
    doubles = sum(d[0] == d[1] for _, d in positions)
    assert doubles > 200  # about one roll in six: the four-move searches are covered


def test_every_roll_from_the_opening_and_from_a_bear_off_with_a_blot_to_hit():
    bear_off = pos({6: 2, 5: 3, 4: 2, 2: 3, 1: 2}, {22: 1, 13: 14})  # the opponent's blot on my 3-point
    positions = [
        (b, (d1, d2)) for b in (starting_board(), bear_off) for d1 in range(1, 7) for d2 in range(d1, 7)
    ]
    boards, dice, after, owner, plays = _batch(positions)
    want = [pair for (b, d), p in zip(positions, plays, strict=True) for pair in describe_plays(b, p, d)]
    got = describe_plays_batch(boards, dice, after, owner)
    assert got == want
    # the opening's plays as gnubg writes them (gnubg 1.07 `hint` on the opening position)
    opening = {text for (moves, text), j in zip(got, owner, strict=True) if j == 2}  # roll 1-3
    assert "8/5 6/5" in opening
    sixes = {text for (moves, text), j in zip(got, owner, strict=True) if j == 20}  # roll 6-6
    assert "24/18(2) 13/7(2)" in sixes


def test_the_json_twin_gives_the_same_plays_as_json_arrays_and_the_same_notation():
    """``describe_plays_json`` is ``describe_plays_batch`` with each play's moves as JSON: the arrays
    read back (``json.loads``) to the same ``(from, to)`` pairs and are written as ``json.dumps``
    writes them compactly; the rows the kernel leaves to ``describe_plays`` (``-``) included."""
    closed = pos({25: 1, 8: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})  # 6-5 cannot be played: "-"
    positions = [*_random_positions(1500, 5), (closed, (6, 5))]
    boards, dice, after, owner, _ = _batch(positions)
    want = describe_plays_batch(boards, dice, after, owner)
    moves, notations = describe_plays_json(boards, dice, after, owner)
    assert notations == [text for _, text in want]
    assert [[(m["from"], m["to"]) for m in json.loads(text)] for text in moves] == [
        steps for steps, _ in want
    ]
    assert moves == [
        json.dumps([{"from": a, "to": b} for a, b in steps], separators=(",", ":")) for steps, _ in want
    ]
    assert moves[-1] == moves_json([]) == "[]" and notations[-1] == "-"
    assert describe_plays_json(boards, dice, after[:0], owner[:0]) == ([], [])
    with pytest.raises(ValueError, match="can be played here"):  # the errors of describe_plays_batch
        describe_plays_json(boards[:1], dice[:1], boards[:1], np.array([0]))


def test_a_roll_that_cannot_be_played_is_written_as_a_dash():
    closed = pos({25: 1, 8: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})  # on the bar against a closed board
    assert describe_plays_batch(closed[None], np.array([[6, 5]]), closed[None], np.array([0])) == [([], "-")]


def test_the_batch_splits_by_owner_and_positions_without_plays_are_skipped():
    positions = _random_positions(30, 7)
    boards, dice, after, owner, plays = _batch(positions)
    keep = owner % 3 != 1  # every third position passes no afterstate at all
    want = [pair for (b, d), p in zip(positions, plays, strict=True) for pair in describe_plays(b, p, d)]
    got = describe_plays_batch(boards, dice, after[keep], owner[keep])
    assert got == [w for w, k in zip(want, keep, strict=True) if k]
    assert describe_plays_batch(boards, dice, after[:0], owner[:0]) == []


def test_inputs_describe_plays_refuses_are_refused_with_the_same_reason():
    board = starting_board()
    unreachable = board.copy()
    unreachable[24] -= 1
    unreachable[18] += 1  # 24/18: six pips, but 3-1 moves a checker four
    with pytest.raises(ValueError, match="no sequence of moves with dice 3-1"):
        describe_plays(board, unreachable[None], (3, 1))
    with pytest.raises(ValueError, match="no sequence of moves with dice 3-1"):
        describe_plays_batch(board[None], np.array([[3, 1]]), unreachable[None], np.array([0]))
    with pytest.raises(ValueError, match="can be played here"):  # no move is not a play of a playable roll
        describe_plays_batch(board[None], np.array([[3, 1]]), board[None], np.array([0]))


@pytest.mark.parametrize(
    ("owner", "reason"),
    [
        ([0, 1], "one per afterstate"),
        ([1, 0, 0], "non-decreasing"),
        ([0, 0, 2], "non-decreasing"),
        ([-1, 0, 0], "non-decreasing"),
        ([0.0, 0.0, 0.0], "one per afterstate"),
    ],
)
def test_a_bad_owner_is_a_value_error(owner, reason):
    boards = np.stack([starting_board(), starting_board()])
    after = na.legal_plays(starting_board(), (3, 1))[:3]
    with pytest.raises(ValueError, match=reason):
        describe_plays_batch(boards, np.array([[3, 1], [3, 1]]), after, np.array(owner))


def test_bad_boards_and_dice_are_value_errors():
    board = starting_board()
    after = na.legal_plays(board, (3, 1))
    with pytest.raises(ValueError, match="rolls"):
        describe_plays_batch(board[None], np.array([[3, 1], [2, 1]]), after, np.zeros(len(after), int))
    with pytest.raises(ValueError, match="die"):
        describe_plays_batch(board[None], np.array([[7, 1]]), after, np.zeros(len(after), int))
    with pytest.raises(ValueError, match="15"):
        describe_plays_batch(np.full((1, 26), 16), np.array([[3, 1]]), after, np.zeros(len(after), int))
