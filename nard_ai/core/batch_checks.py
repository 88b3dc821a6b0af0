"""The checks of the move generator's batch entry points, with a compiled fast path for valid input.

:func:`checked_batch` accepts what :func:`nard_ai.core.board.validate_board` and
:func:`~nard_ai.core.board.validate_dice` accept and raises their errors (``ValueError``, one line);
well-formed int8 batches are checked in one compiled pass first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS, validate_board, validate_dice
from nard_ai.core.rules import Rules

__all__ = ["checked_batch"]


def checked_batch(boards, dice, rules) -> tuple[np.ndarray, np.ndarray, Rules]:
    """Validate the inputs of the batch entry points; returns ``(boards (N, 26), dice (N, 2), rules)``."""
    rules = Rules.check(rules)
    # the common case is checked in one compiled pass; anything it rejects goes through the full
    # checks, in the original order (boards, dice, lengths, finished games), for their messages
    fast = (
        isinstance(boards, np.ndarray)
        and boards.dtype == np.int8
        and boards.ndim == 2
        and boards.shape[1] == BOARD_SIZE
        and boards.flags.c_contiguous
        and _boards_in_play(boards)
    )
    if not fast:
        boards = validate_board(boards)
        if boards.ndim == 1:
            boards = boards[None]
    fast_dice = (
        isinstance(dice, np.ndarray)
        and dice.dtype == np.int8
        and dice.ndim == 2
        and dice.shape[1] == 2
        and dice.flags.c_contiguous
        and _dice_in_range(dice)
    )
    if not fast_dice:
        dice = validate_dice(dice)
    if len(dice) != len(boards):
        raise ValueError(f"got {len(boards)} boards but {len(dice)} rolls")
    if not fast:
        _check_not_over(boards)
    return boards, dice, rules


@njit(cache=True)
def _dice_in_range(dice):
    """True if every die of the ``(N, 2)`` int8 array is 1..6 (what :func:`~nard_ai.core.board.validate_dice` checks)."""
    for r in range(dice.shape[0]):
        if dice[r, 0] < 1 or dice[r, 0] > 6 or dice[r, 1] < 1 or dice[r, 1] > 6:
            return False
    return True


@njit(cache=True)
def _boards_in_play(boards):
    """True if every board passes :func:`~nard_ai.core.board.validate_board` and no game is over.

    That is: counts within -15..15, the mover's bar (index 25) >= 0, the
    opponent's bar (index 0) <= 0, 1..15 checkers left for each side, and
    not both sides on the bar against closed home boards
    (:func:`~nard_ai.core.board.both_shut_out`).
    """
    for r in range(boards.shape[0]):
        if boards[r, BAR] < 0 or boards[r, 0] > 0:
            return False
        if boards[r, BAR] > 0 and boards[r, 0] < 0:
            dead = True
            for p in range(1, 7):
                if boards[r, p] < 2 or boards[r, 25 - p] > -2:
                    dead = False
            if dead:
                return False
        mine = 0
        theirs = 0
        for i in range(BOARD_SIZE):
            v = np.int64(boards[r, i])
            if v > NUM_CHECKERS or v < -NUM_CHECKERS:
                return False
            if v > 0:
                mine += v
            else:
                theirs -= v
        if mine < 1 or mine > NUM_CHECKERS or theirs < 1 or theirs > NUM_CHECKERS:
            return False
    return True


def _check_not_over(boards: np.ndarray) -> None:
    mine = np.clip(boards, 0, None).sum(axis=1)
    theirs = np.clip(-boards.astype(np.int16), 0, None).sum(axis=1)
    over = (mine == 0) | (theirs == 0)
    if over.any():
        raise ValueError(
            f"position {int(np.argmax(over))} is a finished game (a side has borne off all 15 checkers)"
        )
