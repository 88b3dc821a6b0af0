"""Tests of the interchange and display formats: two-row boards, Position IDs, ASCII boards, notation.

Every board is the layout of :mod:`nard_ai.core.board` (``(26,)`` int8, the
mover's view). Hand-built positions use ``pos(me=..., opp=...)`` with each
side in its own numbering. The gnubg cross-checks use the ``gnubg_nn``
package (gnubg's own code) and are skipped where it is not installed.
"""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest
from conftest import random_board

from nard_ai.core.board import pos, starting_board, swap_sides
from nard_ai.formats import (
    board_from_position_id,
    boards_from_position_ids,
    from_tanboard,
    play_notation,
    position_id,
    render_board,
    to_tanboard,
)

START_ID = "4HPwATDgc/ABMA"


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def apply_moves(board: np.ndarray, moves: list[tuple[int, int]]) -> np.ndarray:
    """Move mover checkers one at a time (25 = bar, 0 = off), hitting blots; no legality checks."""
    after = board.astype(np.int64).copy()
    for src, dst in moves:
        assert after[src] > 0, f"no mover checker on {src}"
        after[src] -= 1
        if dst > 0:
            if after[dst] == -1:
                after[dst] = 0
                after[0] -= 1
            assert after[dst] >= 0, f"point {dst} is closed"
            after[dst] += 1
    return after.astype(np.int8)


def apply_notation(board: np.ndarray, text: str) -> np.ndarray:
    """Replay a written play (``13/7*/5 8/2(2)``) on ``board``: a slow, independent reader for the tests."""
    if text == "-":
        return board.copy()
    moves = []
    for group in text.split():
        match = re.fullmatch(r"([^()]+)(?:\((\d)\))?", group)
        assert match, group
        names = [name.rstrip("*") for name in match.group(1).split("/")]
        points = [25 if n == "bar" else 0 if n == "off" else int(n) for n in names]
        for _ in range(int(match.group(2) or 1)):
            moves.extend(zip(points, points[1:], strict=False))
    return apply_moves(board, moves)


def gnubg_style_notation(board: np.ndarray, moves: list[tuple[int, int]]) -> str:
    """gnubg's ``FormatMove`` rules, restated: sort, join a checker's moves greedily, count duplicates.

    ``moves`` are gnubg's single-die moves (25 = bar, 0 = off), mover's
    numbering; a landing on a point where the opponent stood hits.
    """
    paths = [[src, dst] for src, dst in sorted(moves, key=lambda m: (-m[0], -m[1]))]
    alive = [True] * len(paths)
    for i in range(len(paths)):
        for j in range(i + 1, len(paths)):
            if alive[i] and alive[j] and paths[i][-1] == paths[j][0]:
                if board[paths[i][-1]] < 0:
                    paths[i].append(paths[j][-1])  # keep the hit point
                else:
                    paths[i][-1] = paths[j][-1]
                alive[j] = False
    groups: list[tuple[int, ...]] = []
    counts: list[int] = []
    for path, keep in zip(paths, alive, strict=True):
        if keep:
            if tuple(path) in groups:
                counts[groups.index(tuple(path))] += 1
            else:
                groups.append(tuple(path))
                counts.append(1)

    def name(point: int) -> str:
        return "bar" if point == 25 else "off" if point == 0 else str(point)

    starred: set[int] = set()
    parts = []
    for path, count in zip(groups, counts, strict=True):
        text = name(path[0]) + "".join(f"/{name(p)}*" for p in path[1:-1])
        starred.update(path[1:-1])
        text += f"/{name(path[-1])}"
        if path[-1] and board[path[-1]] < 0 and path[-1] not in starred:
            text += "*"
            starred.add(path[-1])
        parts.append(text + (f"({count})" if count > 1 else ""))
    return " ".join(parts)


def _id_from_key(key: int) -> str:
    """The 14-character base64 of an 80-bit key (bit k = bit k % 8 of byte k // 8), written independently."""
    return base64.b64encode(key.to_bytes(10, "little")).decode().rstrip("=")


# --------------------------------------------------------------------------
# gnubg's two-row form (RULES.md section 1)
# --------------------------------------------------------------------------


def test_tanboard_puts_the_mover_in_row_one_each_side_in_its_own_numbering():
    """RULES.md 1: in gnubg's two-row form row 1 is the player on roll, column i = its point i + 1, 24 = bar."""
    board = pos(me={8: 3, 25: 1}, opp={6: 2, 25: 2})
    tan = to_tanboard(board)
    assert tan.shape == (2, 25)
    assert tan[1, 7] == 3 and tan[1, 24] == 1  # mover: 3 on its 8-point, 1 on the bar
    assert tan[0, 5] == 2 and tan[0, 24] == 2  # opponent: 2 on its 6-point, 2 on the bar
    assert tan.sum() == 8


def test_tanboard_of_the_starting_position_has_equal_rows():
    """RULES.md 1: each side starts with 2 on 24, 5 on 13, 3 on 8, 5 on 6, in its own numbering."""
    tan = to_tanboard(starting_board())
    expected = np.zeros(25, dtype=np.int64)
    expected[[23, 12, 7, 5]] = [2, 5, 3, 5]
    assert (tan[0] == expected).all() and (tan[1] == expected).all()


def test_tanboard_round_trips_random_boards_and_swapping_sides_swaps_rows():
    """RULES.md 1: turning the board to the other player's view is swapping the rows."""
    rng = np.random.default_rng(11)
    boards = np.stack([random_board(rng) for _ in range(500)])
    tans = to_tanboard(boards)
    assert tans.shape == (500, 2, 25)
    assert (from_tanboard(tans) == boards).all()
    assert (to_tanboard(swap_sides(boards)) == tans[:, ::-1, :]).all()
    for board, tan in zip(boards[:50], tans[:50], strict=True):
        assert (from_tanboard(tan) == board).all()
        assert from_tanboard(tan).dtype == np.int8


@pytest.mark.parametrize(
    ("tan", "message"),
    [
        (np.zeros((2, 24), dtype=int), "shape"),
        (np.full((2, 25), 0.5), "integer"),
        (np.array([[-1] + [0] * 24, [1] + [0] * 24]), "negative"),
        (np.array([[16] + [0] * 24, [1] + [0] * 24]), "16 checkers"),
        (np.array([[1] + [0] * 24, [0] * 23 + [1, 0]]), "both players"),
    ],
)
def test_malformed_tanboard_raises_value_error(tan, message):
    """RULES.md 1: counts are non-negative, at most 15 a row, and point p of one row is 25 - p of the other."""
    with pytest.raises(ValueError, match=message):
        from_tanboard(tan)


def test_gnubg_moves_the_checkers_of_row_one():
    """gnubg's convention (RULES.md 1): the player on roll is row 1, so its move generator moves row 1."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    board = pos(me={8: 1}, opp={6: 2})
    plays = gnubg_nn.moves(to_tanboard(board).tolist(), 6, 2, 1)
    assert [tuple(map(tuple, moves)) for _, moves in plays] == [((8, 2), (2, 0))]


# --------------------------------------------------------------------------
# Position IDs
# --------------------------------------------------------------------------


def test_starting_position_id_is_the_gnubg_one():
    """gnubg manual, Position ID: the starting position is 4HPwATDgc/ABMA."""
    assert position_id(starting_board()) == START_ID
    assert (board_from_position_id(START_ID) == starting_board()).all()


@pytest.mark.parametrize(
    ("me", "opp", "pid"),
    [
        # After the opening 3-1 (8/5 6/5), the mover still on roll.
        ({24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, {24: 2, 13: 5, 8: 3, 6: 5}, "4HPwATCwZ/ABMA"),
        # The mover has a checker on the bar.
        ({25: 1, 24: 1, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 4, 5: 1}, "0HPwATDgc/ABUA"),
        # A bear-off with the opponent on the bar and checkers off on both sides.
        ({6: 3, 5: 2, 4: 3, 1: 2}, {6: 4, 3: 3, 2: 5, 25: 1}, "vuMBANC4HQAAAA"),
        # 15 on one point; the opponent has one checker left.
        ({24: 15}, {2: 1}, "AgAAAAAA/v8AAA"),
    ],
)
def test_known_position_ids_from_gnubg(me, opp, pid):
    """Known vectors written by gnubg (gnubg_nn.position_id) for hand-built positions."""
    board = pos(me=me, opp=opp)
    assert position_id(board) == pid
    assert (board_from_position_id(pid) == board).all()


def test_position_id_round_trips_random_boards():
    """A Position ID names exactly one position: decode(encode(board)) == board."""
    rng = np.random.default_rng(7)
    seen = {}
    for _ in range(1000):
        board = random_board(rng)
        pid = position_id(board)
        assert len(pid) == 14
        decoded = board_from_position_id(pid)
        assert decoded.dtype == np.int8 and (decoded == board).all()
        seen.setdefault(pid, board.tobytes())
        assert seen[pid] == board.tobytes()


def test_position_id_matches_gnubg_on_thousands_of_random_boards():
    """Cross-check against gnubg's own PositionID / PositionFromID (row 1 = on roll = our mover)."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(2024)
    for _ in range(3000):
        board = random_board(rng)
        tan = to_tanboard(board)
        pid = gnubg_nn.position_id(tan.tolist())
        assert position_id(board) == pid
        assert (np.array(gnubg_nn.board_from_position_id(pid)) == tan).all()
        assert (board_from_position_id(pid) == board).all()


def test_position_id_ignores_surrounding_whitespace():
    """Pasted IDs often carry spaces or a newline."""
    assert (board_from_position_id(f"  {START_ID}\n") == starting_board()).all()


@pytest.mark.parametrize(
    ("pid", "message"),
    [
        ("4HPwATDgc/ABM", "14 characters"),
        ("4HPwATDgc/ABMAA", "14 characters"),
        ("", "14 characters"),
        ("4HPwATDgc/AB=A", "base64"),
        ("4HPw ATDgc/ABM", "base64"),
        ("4HPwATDgc/ABMB", "unused bits"),
        ("////////////AA", "more than 15"),
        (_id_from_key(1 << 79), "1 bits after"),  # a 1 bit after the 50 location separators
        (_id_from_key((1 << 16) - 1), "more than 15"),  # 16 checkers on the first location
        ("AAAAAAAAAAAAAA", "both sides"),
        ("AQAAAAAAAgAAAA", "both players"),
        (None, "must be a str"),
        (b"4HPwATDgc/ABMA", "must be a str"),
    ],
)
def test_malformed_position_ids_raise_value_error(pid, message):
    """Malformed IDs are ValueErrors naming the fault, never another exception."""
    with pytest.raises(ValueError, match=message):
        board_from_position_id(pid)


def test_random_and_mistyped_ids_never_raise_anything_but_value_error():
    """Whatever the string, decoding either gives a valid board (whose ID it is) or raises ValueError."""
    rng = np.random.default_rng(3)
    alphabet = list("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=! ")
    candidates = ["".join(rng.choice(alphabet, size=int(rng.integers(12, 16)))) for _ in range(1000)]
    for _ in range(2000):  # one character of a valid ID mistyped
        pid = list(position_id(random_board(rng)))
        pid[int(rng.integers(0, 14))] = str(rng.choice(alphabet[:64]))
        candidates.append("".join(pid))
    decoded = 0
    for pid in candidates:
        try:
            board = board_from_position_id(pid)
        except ValueError:
            continue
        decoded += 1
        assert position_id(board) == pid.strip()
    assert decoded > 100


_MALFORMED = [
    "4HPwATDgc/ABM",
    "4HPwATDgc/AB=A",
    "4HPw ATDgc/ABM",
    "4HPwATDgc/ABMB",
    "////////////AA",
    _id_from_key(1 << 79),
    _id_from_key((1 << 16) - 1),
    "AAAAAAAAAAAAAA",
    "AQAAAAAAAgAAAA",
    "4HPwATDgc/ABMé",  # not ASCII
    None,
]


def test_the_batch_decoder_gives_the_one_at_a_time_boards_and_errors():
    """boards_from_position_ids (the compiled pass that reading position sets and labels uses) equals
    board_from_position_id on every valid ID (random boards, mistyped IDs that still decode, padded ones) and
    raises that function's error, prefixed by where, for the first malformed ID."""
    rng = np.random.default_rng(5)
    ids = [position_id(random_board(rng)) for _ in range(3000)]
    alphabet = list("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for _ in range(3000):  # mistyped characters: those that still decode must decode alike
        pid = list(position_id(random_board(rng)))
        pid[int(rng.integers(0, 14))] = str(rng.choice(alphabet))
        try:
            board_from_position_id("".join(pid))
        except ValueError:
            continue
        ids.append("".join(pid))
    ids += [f"  {START_ID}\n", START_ID]
    assert len(ids) > 3200  # 3,000 valid boards and the mistypings that decode (281 with this seed)
    want = np.stack([board_from_position_id(pid) for pid in ids])
    got = boards_from_position_ids(ids)
    assert got.dtype == np.int8 and got.shape == (len(ids), 26)
    np.testing.assert_array_equal(got, want)
    assert boards_from_position_ids([]).shape == (0, 26)
    for bad in _MALFORMED:
        with pytest.raises(ValueError) as one:
            board_from_position_id(bad)
        with pytest.raises(ValueError) as batch:
            boards_from_position_ids([START_ID, bad, START_ID], where=lambda i: f"line {i + 2}")
        assert str(batch.value) == f"line 3: {one.value}"
    with pytest.raises(ValueError, match="^Position ID number 0: .*14 characters"):
        boards_from_position_ids(["4HPwATDgc/ABM"])


def test_position_id_rejects_batches():
    """position_id names one position: a (N, 26) batch is a ValueError."""
    with pytest.raises(ValueError, match="one board"):
        position_id(np.stack([starting_board()] * 2))


# --------------------------------------------------------------------------
# ASCII board
# --------------------------------------------------------------------------


def test_ascii_board_of_the_starting_position():
    """The mover (X) at the bottom: its 24-point top right, 13 top left, 8 and 6 bottom (RULES.md 1)."""
    text = render_board(starting_board(), dice=(3, 1))
    lines = text.splitlines()
    assert lines[0] == f" Position ID: {START_ID}"
    assert lines[1].startswith(" +13-14-15-16-17-18------19-20-21-22-23-24-+")
    assert lines[13].startswith(" +12-11-10--9--8--7-------6--5--4--3--2--1-+")
    assert lines[2].startswith(" | X           O    |   | O              X |")
    assert lines[12].startswith(" | O           X    |   | X              O |")
    assert "Rolled 31" in lines[7]
    assert lines[-1] == " Pip count  X: 167  O: 167"
    assert sum(line.count("X") for line in lines[2:13]) == 15
    assert sum(line.count("O") for line in lines[2:13]) == 15


def test_ascii_board_shows_counts_bar_and_off():
    """More than five checkers show their count; the bar and the checkers off are drawn."""
    board = pos(me={25: 2, 6: 7, 2: 3}, opp={25: 1, 24: 12})  # mover 3 off, opponent 2 off
    lines = render_board(board, pid=False).splitlines()
    assert lines[0].startswith(" +13")
    assert lines[7].startswith(" |                  |   | 7             12 |")  # counts beyond five
    assert lines[1][21:24] == " O "  # the opponent's checker on the bar, top half
    assert lines[11][21:24] == " X " and lines[10][21:24] == " X "  # the mover's two on the bar
    assert lines[9][21:24] == "   "
    assert lines[1].endswith("| O") and lines[2].endswith("| O")  # 2 opponent checkers off
    assert "3 off" in lines[12] and "2 off" in lines[0]


def test_ascii_board_rejects_invalid_boards():
    """An invalid board is a ValueError, as everywhere in nard_ai."""
    with pytest.raises(ValueError):
        render_board(np.full(26, 3))


# --------------------------------------------------------------------------
# Move notation (RULES.md sections 3-5)
# --------------------------------------------------------------------------


def test_opening_three_one_makes_the_five_point():
    """RULES.md 3.1: each die moves one checker; 3-1 from the start: 8/5 6/5."""
    board = starting_board()
    assert play_notation(board, apply_moves(board, [(8, 5), (6, 5)]), (3, 1)) == "8/5 6/5"


def test_six_four_hits_a_blot_marked_with_a_star():
    """RULES.md 4: landing on a blot hits it (marked *).

    The opponent has a blot on its 16-point, the mover's 9-point::

        mover: 24:2 13:5 8:3 6:5     opponent (own numbering): 24:2 16:1 13:4 8:3 6:5
    """
    board = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 16: 1, 13: 4, 8: 3, 6: 5})
    after = apply_moves(board, [(24, 18), (13, 9)])
    assert play_notation(board, after, (6, 4)) == "24/18 13/9*"
    assert play_notation(board, apply_moves(board, [(24, 18), (18, 14)]), (6, 4)) == "24/14"


def test_a_checker_on_the_bar_enters_first():
    """RULES.md 4: a die d enters on the mover's point 25 - d; bar/21 with the 4, then 13/10 with the 3."""
    board = pos(me={25: 1, 24: 1, 13: 5, 8: 3, 6: 5}, opp={24: 2, 13: 5, 8: 3, 6: 4, 3: 1})
    assert play_notation(board, apply_moves(board, [(25, 21), (13, 10)]), (4, 3)) == "bar/21 13/10"
    # Entering with the 3 on 22 hits the opponent's blot on its 3-point.
    assert play_notation(board, apply_moves(board, [(25, 22), (13, 9)]), (4, 3)) == "bar/22* 13/9"
    assert play_notation(board, apply_moves(board, [(25, 22), (22, 18)]), (4, 3)) == "bar/22*/18"


def test_bearing_off_is_written_off():
    """RULES.md 5: a die d bears off from point d, or from the highest point when none is higher."""
    board = pos(me={6: 2, 5: 3, 3: 2}, opp={24: 2, 13: 13})
    assert play_notation(board, apply_moves(board, [(6, 0), (5, 0)]), (6, 5)) == "6/off 5/off"
    assert play_notation(board, apply_moves(board, [(6, 0), (6, 5)]), (6, 1)) == "6/5 6/off"  # gnubg order
    last = pos(me={4: 1, 3: 1}, opp={24: 2, 13: 13})
    assert play_notation(last, apply_moves(last, [(4, 0), (3, 0)]), (6, 5)) == "4/off 3/off"


def test_doubles_repeat_identical_moves_with_a_count():
    """RULES.md 3.3: doubles give four moves; identical moves are written once with (n)."""
    board = starting_board()
    moves = [(8, 5), (5, 2), (8, 5), (5, 2)]
    assert play_notation(board, apply_moves(board, moves), (3, 3)) == "8/2(2)"
    moves = [(24, 18), (24, 18), (13, 7), (13, 7)]
    assert play_notation(board, apply_moves(board, moves), (6, 6)) == "24/18(2) 13/7(2)"
    assert play_notation(board, apply_moves(board, [(6, 5)] * 4), (1, 1)) == "6/5(4)"


def test_hit_and_continue_shows_the_hit_point():
    """RULES.md 3.2 and 4: one checker hits on 7 and moves on to 5: 13/7*/5.

    The opponent's blot is on its 18-point, the mover's 7-point.
    """
    board = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 18: 1, 13: 5, 8: 2, 6: 5})
    assert play_notation(board, apply_moves(board, [(13, 7), (7, 5)]), (6, 2)) == "13/7*/5"
    # Hitting and covering with a second checker is a different play.
    assert play_notation(board, apply_moves(board, [(13, 7), (8, 7)]), (6, 1)) == "13/7* 8/7"


def test_hit_and_cover_marks_the_star_once():
    """RULES.md 4: a point is hit once; the second checker landing there does not hit again."""
    board = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 20: 1, 13: 5, 8: 3, 6: 4})
    assert play_notation(board, apply_moves(board, [(8, 5), (6, 5)]), (3, 1)) == "8/5* 6/5"


def test_an_empty_play_is_a_dash():
    """RULES.md 3.4: if nothing is legal the turn is lost; the play moves nothing."""
    board = pos(me={25: 1, 6: 14}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})
    assert play_notation(board, board, (6, 5)) == "-"


def test_an_afterstate_out_of_reach_of_the_dice_is_a_value_error():
    """Only sequences of single-die moves with these dice may reach the afterstate."""
    board = starting_board()
    with pytest.raises(ValueError, match="no sequence"):
        play_notation(board, apply_moves(board, [(8, 3)]), (3, 1))
    with pytest.raises(ValueError, match="no sequence"):  # the 24-point checker moved up
        play_notation(board, apply_moves(board, [(13, 7), (8, 7)]), (3, 1))
    with pytest.raises(ValueError):
        play_notation(board, board, (7, 1))


def test_notation_of_every_gnubg_play_replays_to_its_afterstate_and_matches_gnubg():
    """Cross-check on random positions: for each legal play gnubg lists, the notation is unique,
    replays to the play's afterstate, and equals gnubg's FormatMove of gnubg's own moves."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(99)
    checked = 0
    for _ in range(70):
        board = random_board(rng)
        dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        seen: set[str] = set()
        for key, moves in gnubg_nn.moves(to_tanboard(board).tolist(), *dice, 1):
            after = from_tanboard(np.array(gnubg_nn.board_from_position_key(key)))
            text = play_notation(board, after, dice)
            assert (apply_notation(board, text) == after).all(), (board.tolist(), dice, text)
            assert text == gnubg_style_notation(board, [tuple(m) for m in moves])
            assert text not in seen
            seen.add(text)
            checked += 1
    assert checked > 500
