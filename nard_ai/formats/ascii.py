"""A text picture of a board, in the style of GNU Backgammon's ``show board``.

The mover (``X``) sits at the bottom and moves from its 24-point (top right)
down to its 1-point (bottom right); the opponent (``O``) moves the other way.
Points are numbered in the mover's numbering, 13..24 along the top and
12..1 along the bottom. The starting position looks like this::

     Position ID: 4HPwATDgc/ABMA
     +13-14-15-16-17-18------19-20-21-22-23-24-+     O: opponent, 0 off
     | X           O    |   | O              X |
     | X           O    |   | O              X |
     | X           O    |   | O                |
     | X                |   | O                |
     | X                |   | O                |
     |                  |BAR|                  |
     | O                |   | X                |
     | O                |   | X                |
     | O           X    |   | X                |
     | O           X    |   | X              O |
     | O           X    |   | X              O |
     +12-11-10--9--8--7-------6--5--4--3--2--1-+     X: on roll, 0 off
     Pip count  X: 167  O: 167

A point shows up to five checkers; the fifth row (next to the middle) shows
the count instead when there are more than five (``7``, ``12``). The ``BAR``
column holds the opponent's checkers on the bar in the top half and the
mover's in the bottom half; the three columns right of the board show the
checkers borne off (``O`` on top, ``X`` at the bottom), five to a column.
"""

from __future__ import annotations

import numpy as np

from nard_ai.core.board import (
    BAR,
    NUM_CHECKERS,
    OPP_BAR,
    checkers_off,
    pip_count,
    validate_board,
    validate_dice,
)
from nard_ai.formats.position_id import position_id

MOVER_SYMBOL = "X"
OPPONENT_SYMBOL = "O"
_STACK = 5  # checkers drawn per point before the count is shown
_TOP_POINTS = (range(13, 19), range(19, 25))  # left and right of the bar
_BOTTOM_POINTS = (range(12, 6, -1), range(6, 0, -1))
_TOP_BORDER = " +13-14-15-16-17-18------19-20-21-22-23-24-+"
_BOTTOM_BORDER = " +12-11-10--9--8--7-------6--5--4--3--2--1-+"
_MIDDLE = " |                  |BAR|                  |"
_OFF_COLUMNS = NUM_CHECKERS // _STACK


def _cell(count: int, symbol: str, row: int) -> str:
    """One 3-character cell of a stack; ``row`` 0 is the board's edge, 4 the middle."""
    if row < _STACK - 1:
        text = symbol if count > row else ""
    elif count > _STACK:
        text = str(count)
    else:
        text = symbol if count == _STACK else ""
    return f"{text:^3}"


def _point_cell(board: np.ndarray, point: int, row: int) -> str:
    count = int(board[point])
    symbol = MOVER_SYMBOL if count > 0 else OPPONENT_SYMBOL
    return _cell(abs(count), symbol, row)


def _off_cell(off: int, symbol: str, row: int) -> str:
    return "".join(symbol if off > _STACK * col + row else " " for col in range(_OFF_COLUMNS))


def _half_row(board: np.ndarray, points: tuple[range, range], bar: tuple[int, str], row: int) -> str:
    left, right = points
    bar_count, bar_symbol = bar
    return (
        " |"
        + "".join(_point_cell(board, p, row) for p in left)
        + "|"
        + _cell(bar_count, bar_symbol, row)
        + "|"
        + "".join(_point_cell(board, p, row) for p in right)
        + "|"
    )


def render_board(board: np.ndarray, dice: tuple[int, int] | None = None, pid: bool = True) -> str:
    """Draw a board as text, gnubg style, from the mover's side.

    Args:
        board: ``(26,)`` integer board, mover's view. The mover is drawn as
            ``X`` at the bottom, moving from 24 (top right) to 1 (bottom
            right); the opponent as ``O``.
        dice: the mover's roll, shown as ``Rolled 31``; ``None`` for none.
        pid: whether to start with the ``Position ID:`` line.

    Returns:
        The picture as lines joined by ``"\\n"`` (no trailing newline): the
        Position ID line (if ``pid``), 13 board lines, and the pip counts.

    Raises:
        ValueError: if the board is not one valid ``(26,)`` board, or the dice
            are invalid.
    """
    arr = np.asarray(board)
    if arr.ndim != 1:
        raise ValueError(f"render_board takes one board of shape (26,), got shape {arr.shape}")
    arr = validate_board(arr)
    mover_off, opp_off = (int(n) for n in checkers_off(arr))
    mover_pips, opp_pips = (int(n) for n in pip_count(arr))
    lines = []
    if pid:
        lines.append(f" Position ID: {position_id(arr)}")
    lines.append(f"{_TOP_BORDER}     {OPPONENT_SYMBOL}: opponent, {opp_off} off")
    opp_bar = (-int(arr[OPP_BAR]), OPPONENT_SYMBOL)
    for row in range(_STACK):
        lines.append(
            _half_row(arr, _TOP_POINTS, opp_bar, row) + " " + _off_cell(opp_off, OPPONENT_SYMBOL, row)
        )
    middle = _MIDDLE
    if dice is not None:
        d1, d2 = (int(d) for d in validate_dice(np.asarray(dice))[0])
        middle += f"     Rolled {d1}{d2}"
    lines.append(middle)
    mover_bar = (int(arr[BAR]), MOVER_SYMBOL)
    for row in reversed(range(_STACK)):
        lines.append(
            _half_row(arr, _BOTTOM_POINTS, mover_bar, row) + " " + _off_cell(mover_off, MOVER_SYMBOL, row)
        )
    lines.append(f"{_BOTTOM_BORDER}     {MOVER_SYMBOL}: on roll, {mover_off} off")
    lines.append(f" Pip count  {MOVER_SYMBOL}: {mover_pips}  {OPPONENT_SYMBOL}: {opp_pips}")
    return "\n".join(line.rstrip() for line in lines)
