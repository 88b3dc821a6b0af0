"""The one position layout of nard_ai, and small pure functions over it.

Layout (``LAYOUT_VERSION = 1``), in the style of wildbg's ``[i8; 26]``:

A board is a signed ``int8`` array of shape ``(26,)`` (or ``(N, 26)`` for a
batch), always seen **from the side on roll** (the "mover"), numbered as
RULES.md section 1 numbers the mover's points:

===============  ==========================================================
index            meaning
===============  ==========================================================
``1 .. 24``      point ``p`` in the mover's numbering; ``> 0`` = that many
                 mover checkers, ``< 0`` = that many opponent checkers
``BAR`` (25)     mover's checkers on the bar (``>= 0``)
``OPP_BAR`` (0)  opponent's checkers on the bar, stored negative (``<= 0``)
===============  ==========================================================

Checkers borne off are implied: ``15 - (checkers on the board and bar)``.
The mover moves from 24 towards 1 and bears off below point 1; the
opponent's point ``q`` in its own numbering is index ``25 - q`` here.

An *afterstate* (the board just after the mover's play) keeps the mover's
view; :func:`swap_sides` turns it to the opponent, who is then on roll.
"""

from __future__ import annotations

import numpy as np

LAYOUT_VERSION = 1
BOARD_SIZE = 26
NUM_POINTS = 24
NUM_CHECKERS = 15
BAR = 25
OPP_BAR = 0
HOME_BOARD = range(1, 7)  # the mover's home board, RULES.md section 1
BOARD_DTYPE = np.int8


def starting_board() -> np.ndarray:
    """The starting position (RULES.md section 1), from the view of the side on roll.

    Each side: 2 checkers on its 24-point, 5 on 13, 3 on 8, 5 on 6 (pip count 167).

    Returns:
        ``(26,)`` int8 board in the layout of this module.
    """
    board = np.zeros(BOARD_SIZE, dtype=BOARD_DTYPE)
    for point, count in ((24, 2), (13, 5), (8, 3), (6, 5)):
        board[point] = count
        board[25 - point] = -count
    return board


def swap_sides(board: np.ndarray) -> np.ndarray:
    """Turn a board (or a batch of boards) to the other side's view.

    My point ``p`` is the opponent's point ``25 - p`` (RULES.md section 1), so
    ``new[i] = -old[25 - i]``; this also maps my bar (25) to the opponent's
    bar (0). Applying it twice is the identity.

    Args:
        board: ``(26,)`` or ``(N, 26)`` int8 boards.

    Returns:
        A new array of the same shape, int8.

    Raises:
        ValueError: on an invalid board (see :func:`validate_board`).
    """
    board = validate_board(board)
    return np.negative(board[..., ::-1])


def swap_sides_unchecked(board: np.ndarray) -> np.ndarray:
    """:func:`swap_sides` without validation, for hot paths on boards already validated.

    Args:
        board: ``(..., 26)`` int8 boards known to be valid.
    """
    return np.negative(board[..., ::-1])


def checkers_off(board: np.ndarray) -> np.ndarray:
    """Checkers borne off by each side.

    Args:
        board: ``(..., 26)`` int8 boards (mover's view).

    Returns:
        ``(..., 2)`` int64: ``[..., 0]`` the mover's, ``[..., 1]`` the opponent's.
    """
    board = np.asarray(board, dtype=np.int64)
    mine = NUM_CHECKERS - np.clip(board, 0, None).sum(axis=-1)
    theirs = NUM_CHECKERS - np.clip(-board, 0, None).sum(axis=-1)
    return np.stack([mine, theirs], axis=-1)


_PIP_WEIGHTS = np.arange(BOARD_SIZE, dtype=np.int64)  # index p is p pips from off; the bar is 25


def pip_count(board: np.ndarray) -> np.ndarray:
    """Pip counts of both sides (pips each still has to move to bear off everything).

    A mover checker on point ``p`` needs ``p`` pips, on the bar 25; an
    opponent checker on index ``i`` needs ``25 - i`` pips, on its bar 25.

    Args:
        board: ``(26,)`` or ``(N, 26)`` int8 boards (mover's view).

    Returns:
        ``(2,)`` or ``(N, 2)`` int64 in pips: ``[mover, opponent]``. The
        starting position gives ``[167, 167]``.

    Raises:
        ValueError: on an invalid board (see :func:`validate_board`).
    """
    board = validate_board(board).astype(np.int64)
    mine = (np.clip(board, 0, None) * _PIP_WEIGHTS).sum(axis=-1)
    theirs = (np.clip(-board, 0, None) * (BAR - _PIP_WEIGHTS)).sum(axis=-1)
    return np.stack([mine, theirs], axis=-1)


def game_result(board: np.ndarray) -> np.ndarray | int:
    """Result of a finished game, in points at cube 1, from the board's mover's view.

    RULES.md section 6: the side that has borne off all 15 checkers wins 1
    (single: the loser has borne off at least one), 2 (gammon: the loser has
    borne off none and has no checker on the bar or in the winner's home
    board) or 3 (backgammon: the loser has borne off none and has a checker
    on the bar or in the winner's home board).

    Args:
        board: ``(26,)`` or ``(N, 26)`` int8 boards (mover's view).

    Returns:
        An ``int`` (for one board) or ``(N,)`` int64 array: ``+1/+2/+3`` if the
        mover has won, ``-1/-2/-3`` if the opponent has won, ``0`` while the
        game is not over.

    Raises:
        ValueError: if the board is invalid (see :func:`validate_board`), a
            shape other than ``(26,)`` or ``(N, 26)`` included.
    """
    boards = validate_board(board)  # the shape first: (26,) or (N, 26), else a ValueError saying so
    result = game_result_unchecked(boards.reshape(-1, BOARD_SIZE))
    return int(result[0]) if boards.ndim == 1 else result


def game_result_unchecked(boards: np.ndarray) -> np.ndarray:
    """:func:`game_result` of ``(N, 26)`` boards known to be valid (hot paths: search, self-play, rollouts).

    Returns:
        ``(N,)`` int64, as :func:`game_result`.
    """
    boards = np.asarray(boards).astype(np.int64)
    off = checkers_off(boards)
    result = np.zeros(len(boards), dtype=np.int64)
    # Mover won: the opponent's checkers are the negative entries; the
    # mover's home board is points 1..6 and the opponent's bar is index 0.
    mover_won = off[:, 0] == NUM_CHECKERS
    opp_back = (boards[:, 0] < 0) | (boards[:, 1:7] < 0).any(axis=1)
    result[mover_won] = np.where(off[mover_won, 1] > 0, 1, np.where(opp_back[mover_won], 3, 2))
    # Opponent won: its home board is the mover's points 19..24; the mover's bar is 25.
    opp_won = off[:, 1] == NUM_CHECKERS
    my_back = (boards[:, 25] > 0) | (boards[:, 19:25] > 0).any(axis=1)
    result[opp_won] = -np.where(off[opp_won, 0] > 0, 1, np.where(my_back[opp_won], 3, 2))
    return result


def validate_board(board: np.ndarray) -> np.ndarray:
    """Check boards against the layout and return them as int8.

    Args:
        board: ``(26,)`` or ``(N, 26)`` integer array (a list of ints is
            accepted; floats are not).

    Returns:
        The same boards as a C-contiguous int8 array.

    Raises:
        ValueError: on a wrong shape or a non-integer dtype, a count outside -15..15, a mover count on the mover's
            bar that is negative, an opponent count on its bar that is
            positive, more than 15 checkers for a side, both sides having
            borne off all checkers, or both sides on the bar against closed
            home boards (a dead position: neither side can ever move; see
            :func:`both_shut_out`).
    """
    arr = np.asarray(board)
    if arr.shape[-1:] != (BOARD_SIZE,) or arr.ndim not in (1, 2):
        raise ValueError(f"a board must have shape (26,) or (N, 26), got {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"a board must hold integer checker counts, got dtype {arr.dtype}")
    # Range check in the input's own dtype, before any cast can wrap a value around.
    out_of_range = (
        (arr > NUM_CHECKERS) | (arr < -NUM_CHECKERS) if arr.dtype.kind == "i" else arr > NUM_CHECKERS
    )
    if out_of_range.any():
        idx = tuple(np.argwhere(out_of_range)[0])
        raise ValueError(f"index {idx[-1]} holds {arr[idx]} checkers; a side has only 15")
    wide = arr.astype(np.int64)
    rows = wide.reshape(-1, BOARD_SIZE)
    bad_bar = rows[:, BAR] < 0
    if bad_bar.any():
        raise ValueError(f"the mover's bar (index 25) must be >= 0, got {rows[bad_bar, BAR][0]}")
    bad_opp_bar = rows[:, OPP_BAR] > 0
    if bad_opp_bar.any():
        raise ValueError(
            f"the opponent's bar (index 0) must be <= 0 (stored negative), got {rows[bad_opp_bar, OPP_BAR][0]}"
        )
    mine = np.clip(rows, 0, None).sum(axis=1)
    theirs = np.clip(-rows, 0, None).sum(axis=1)
    if (mine > NUM_CHECKERS).any():
        raise ValueError(f"the side on roll has {mine.max()} checkers on the board and bar; at most 15")
    if (theirs > NUM_CHECKERS).any():
        raise ValueError(f"the opponent has {theirs.max()} checkers on the board and bar; at most 15")
    if ((mine == 0) & (theirs == 0)).any():
        raise ValueError("both sides have borne off all 15 checkers; at most one side can")
    both_on_bar = (rows[:, BAR] > 0) & (rows[:, OPP_BAR] < 0)  # rare: the dead-position check only then
    stuck = both_shut_out(rows) if both_on_bar.any() else both_on_bar
    if stuck.any():
        raise ValueError(
            f"neither side can ever move: both have checkers on the bar (mover {rows[stuck, BAR][0]}, "
            f"opponent {-rows[stuck, OPP_BAR][0]}) against a closed home board (each of the six entry "
            "points held by 2 or more opposing checkers); no game reaches this position"
        )
    return np.ascontiguousarray(wide.astype(BOARD_DTYPE))


def both_shut_out(boards: np.ndarray) -> np.ndarray:
    """Which boards are *dead*: both sides on the bar against the other's closed home board.

    Then neither side can ever move (RULES.md 4: checkers on the bar enter
    before any other checker moves, and all six entry points are closed),
    so the game never ends. It is the only position where neither side can
    move with any roll: a side off the bar that cannot move has no two of its
    points within 6 pips of each other (it could move onto its own checkers)
    and a checker outside its home board (else a 6 bears one off) in front
    of a six-point prime of the other side; the prime can step along itself
    with a 1 unless that side is on the bar, and then that side is stuck only
    if the first side holds all six of its entry points, six points in a row.

    No game reaches a dead position. In one, the side that has just moved is
    on the bar against the other side's closed board. Its own move could not
    have put it there (only a hit does) nor changed a point held by two or
    more opposing checkers, so before that move it was already on the bar
    against the same closed board, could not move, and the position was the
    same. By the same argument it was the same before every earlier turn,
    back to the starting position, where nobody is on the bar.

    Args:
        boards: ``(N, 26)`` integer boards (mover's view), already checked
            for shape and counts.

    Returns:
        ``(N,)`` bool.
    """
    boards = np.asarray(boards)
    mover_out = (boards[:, BAR] > 0) & (boards[:, 19:25] <= -2).all(axis=1)  # it enters on 24..19
    opponent_out = (boards[:, OPP_BAR] < 0) & (boards[:, 1:7] >= 2).all(axis=1)  # it enters on 1..6
    return mover_out & opponent_out


def validate_dice(dice: np.ndarray) -> np.ndarray:
    """Check dice and return them as an ``(N, 2)`` int8 array.

    Args:
        dice: ``(2,)`` or ``(N, 2)`` integers, each 1..6 (order does not matter).

    Raises:
        ValueError: on a wrong shape or a die outside 1..6.
    """
    try:
        arr = np.asarray(dice)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"dice must be two integers 1..6, got {dice!r}") from exc
    if not isinstance(dice, np.ndarray) and arr.dtype.kind in "iu":
        # a bool among Python integers becomes 0/1 silently (True would play as a 1)
        if any(isinstance(x, (bool, np.bool_)) for x in np.asarray(dice, dtype=object).ravel()):
            raise ValueError(f"dice must be integers, got a bool in {dice!r}")
    if arr.shape[-1:] != (2,) or arr.ndim not in (1, 2):
        raise ValueError(f"dice must have shape (2,) or (N, 2), got {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"dice must be integers, got dtype {arr.dtype}")
    if ((arr < 1) | (arr > 6)).any():
        raise ValueError(f"each die must be 1..6, got {arr[((arr < 1) | (arr > 6))][0]}")
    return np.ascontiguousarray(arr.reshape(-1, 2).astype(np.int8))


def pos(me: dict[int, int] | None = None, opp: dict[int, int] | None = None) -> np.ndarray:
    """Build a board from point -> count maps, each side in its **own** numbering.

    ``pos(me={24: 2, 13: 5}, opp={24: 2})`` puts two mover checkers on the
    mover's 24-point and two opponent checkers on the opponent's 24-point
    (the mover's 1-point). Key 25 is that side's bar. Checkers not placed are
    borne off.

    Returns:
        ``(26,)`` int8 board (mover's view).

    Raises:
        ValueError: on points outside 1..25, negative counts, both sides on one
            point, or more than 15 checkers for a side.
    """
    board = np.zeros(BOARD_SIZE, dtype=np.int64)
    for side, mapping in ((1, me or {}), (-1, opp or {})):
        for point, count in mapping.items():
            if not 1 <= point <= 25:
                raise ValueError(f"point {point} is outside 1..24 (25 = bar)")
            if count < 0:
                raise ValueError(f"negative checker count {count} on point {point}")
            idx = point if side == 1 else 25 - point
            if board[idx] != 0 and count:
                raise ValueError(f"both sides have checkers on index {idx}")
            board[idx] = side * count
    return validate_board(board)
