"""gnubg's two-row board form (``TanBoard``), for interchange with GNU Backgammon.

RULES.md section 1, "gnubg's two-row form": a position is two rows of 25
checker counts, each row in **its own player's numbering**:

==========  ================================================================
column      meaning
==========  ================================================================
``0..23``   checkers of that row's player on its point ``column + 1``
``24``      that row's player's checkers on the bar
==========  ================================================================

Checkers off are implied (``15 - row.sum()``). In gnubg's order **row 1 is
the player on roll** (the mover of a nard_ai board) and row 0 is the
opponent. Point ``p`` of one row is the same physical point as ``25 - p`` of
the other, so at most one of ``tan[0, p - 1]`` and ``tan[1, 24 - p]`` may be
non-zero.

The nard_ai board (see :mod:`nard_ai.core.board`) is the mover's view, so the
conversion is a relabelling, never a change of perspective:

* ``tan[1, i] = max(board[i + 1], 0)`` for ``i`` in ``0..23``; ``tan[1, 24] = board[25]``;
* ``tan[0, i] = max(-board[24 - i], 0)`` for ``i`` in ``0..23``; ``tan[0, 24] = -board[0]``.
"""

from __future__ import annotations

import numpy as np

from nard_ai.core.board import BAR, BOARD_DTYPE, BOARD_SIZE, NUM_CHECKERS, OPP_BAR, validate_board

MOVER_ROW = 1  # gnubg: row 1 is the player on roll
OPPONENT_ROW = 0
TAN_SHAPE = (2, 25)
TAN_BAR = 24  # the bar column of each row


def to_tanboard(board: np.ndarray) -> np.ndarray:
    """Convert a board (or a batch) to gnubg's two-row form.

    Args:
        board: ``(26,)`` or ``(N, 26)`` integer board(s), mover's view (the
            layout of :mod:`nard_ai.core.board`).

    Returns:
        ``(2, 25)`` or ``(N, 2, 25)`` int64 array of non-negative counts.
        Row 1 (:data:`MOVER_ROW`) is the mover (gnubg's player on roll), row
        0 the opponent, each in its own numbering: column ``i`` = checkers on
        that player's point ``i + 1``, column 24 = that player's bar.

    Raises:
        ValueError: if the board is invalid (see :func:`nard_ai.core.board.validate_board`).
    """
    arr = validate_board(board).astype(np.int64)
    points = arr[..., 1:BAR]  # mover's points 1..24
    tan = np.zeros(arr.shape[:-1] + TAN_SHAPE, dtype=np.int64)
    tan[..., MOVER_ROW, :TAN_BAR] = np.clip(points, 0, None)
    tan[..., MOVER_ROW, TAN_BAR] = arr[..., BAR]
    # The opponent's point q (its own numbering) is the mover's index 25 - q,
    # so its column q - 1 reads the mover's points in reverse order.
    tan[..., OPPONENT_ROW, :TAN_BAR] = np.clip(-points[..., ::-1], 0, None)
    tan[..., OPPONENT_ROW, TAN_BAR] = -arr[..., OPP_BAR]
    return tan


def validate_tanboard(tan: np.ndarray) -> np.ndarray:
    """Check a two-row board (or a batch) and return it as int64.

    Args:
        tan: ``(2, 25)`` or ``(N, 2, 25)`` integer counts, gnubg's order (row
            1 on roll).

    Returns:
        The same counts as an int64 array.

    Raises:
        ValueError: on a wrong shape or dtype, a negative count, more than 15
            checkers in a row, or both players on the same physical point
            (point ``p`` of one row is point ``25 - p`` of the other).
    """
    arr = np.asarray(tan)
    if arr.shape[-2:] != TAN_SHAPE or arr.ndim not in (2, 3):
        raise ValueError(f"a two-row board must have shape (2, 25) or (N, 2, 25), got {arr.shape}")
    if arr.dtype.kind not in "iu":
        integral = arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
        if not integral:
            raise ValueError(f"a two-row board must hold integer checker counts, got dtype {arr.dtype}")
    given = arr.reshape(-1, *TAN_SHAPE)  # checked in the given dtype: a cast would wrap 2**63 or 1e30
    if (given < 0).any():
        n, row, col = np.argwhere(given < 0)[0]
        raise ValueError(f"row {row}, column {col} holds a negative count {given[n, row, col]}")
    if (given > NUM_CHECKERS).any():
        n, row, col = np.argwhere(given > NUM_CHECKERS)[0]
        raise ValueError(
            f"row {row}, column {col} holds {given[n, row, col]} checkers; a player has only {NUM_CHECKERS}"
        )
    rows = given.astype(np.int64)
    totals = rows.sum(axis=-1)
    if (totals > NUM_CHECKERS).any():
        n, row = np.argwhere(totals > NUM_CHECKERS)[0]
        raise ValueError(f"row {row} holds {totals[n, row]} checkers; a player has only {NUM_CHECKERS}")
    # Row 1's point p (column p - 1) is row 0's point 25 - p (column 24 - p).
    clash = (rows[:, MOVER_ROW, :TAN_BAR] > 0) & (rows[:, OPPONENT_ROW, TAN_BAR - 1 :: -1] > 0)
    if clash.any():
        point = int(np.argwhere(clash)[0, 1]) + 1
        raise ValueError(
            f"both players have checkers on one point: row 1's point {point} is row 0's point {25 - point}"
        )
    return rows.reshape(arr.shape)


def from_tanboard(tan: np.ndarray) -> np.ndarray:
    """Convert gnubg's two-row form (or a batch) to a board.

    Args:
        tan: ``(2, 25)`` or ``(N, 2, 25)`` non-negative integer counts, gnubg's
            order: row 1 is the player on roll, row 0 the opponent, each in its
            own numbering (column 24 = bar).

    Returns:
        ``(26,)`` or ``(N, 26)`` int8 board(s), from the view of row 1's player
        (the mover).

    Raises:
        ValueError: on a malformed two-row board (see :func:`validate_tanboard`)
            or one that is not a valid board (both players with all checkers off).
    """
    rows = validate_tanboard(tan)
    board = np.zeros(rows.shape[:-2] + (BOARD_SIZE,), dtype=np.int64)
    board[..., 1:BAR] = rows[..., MOVER_ROW, :TAN_BAR] - rows[..., OPPONENT_ROW, TAN_BAR - 1 :: -1]
    board[..., BAR] = rows[..., MOVER_ROW, TAN_BAR]
    board[..., OPP_BAR] = -rows[..., OPPONENT_ROW, TAN_BAR]
    return validate_board(board).astype(BOARD_DTYPE)
