"""``nard show ID``: the board (side on roll at the bottom, pip counts), its IDs, and the cube, score and dice of the ID."""

from __future__ import annotations

import argparse

from nard_ai.interfaces.commands.common import (
    MATCH_GNUBG_ID,
    START_XGID_52,
    add_position,
    game_state_text,
    position_arg,
)
from nard_ai.interfaces.output import describe_state

NAME = "show"
SUMMARY = "draw a position with pip counts, its IDs, cube and score"
DESCRIPTION = (
    "Draw the board of an ID, the side on roll (X) at the bottom, with pip counts, the position's "
    "gnubg ID and XGID, and the cube, score and dice that a Match ID or XGID holds, and whose turn it "
    "is: a game that is over, resigned or dropped is shown as such, with no one on roll."
)
EXAMPLES = (f"nard show {MATCH_GNUBG_ID}", f"nard show {START_XGID_52}")


def configure(parser: argparse.ArgumentParser) -> None:
    """``ID``."""
    add_position(parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the board, its gnubg ID and XGID (when the state has one) and the match state; returns 0."""
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.match_id import gnubg_id
    from nard_ai.formats.xgid import to_xgid

    board, state = position_arg(parser, args.position, live=False)
    dice = state.dice if state is not None and state.dice != (0, 0) else None
    print(render_board(board, dice))
    if state is not None:
        print(f" GNU Backgammon ID: {gnubg_id(board, state)}")
    try:
        print(f" {to_xgid(board, state)}")
    except ValueError as exc:
        # a state an XGID cannot express (a resignation, a finished game): say why there is none
        print(f" XGID: none ({exc})")
    for line in _state_lines(state):
        print(f" {line}")
    return 0


_TURN_LINES = ("X is on roll, before rolling", "X has rolled ")


def _state_lines(state) -> list[str]:
    """:func:`describe_state`'s lines, with the turn told as the ID's game state has it.

    A game that is not being played (over, resigned, dropped, not started: gnubg's game state) has no
    one on roll and no offer pending: its state is printed instead of the turn and the offer. While a
    resignation awaits its answer, that offer is the turn (as a double awaiting its answer is).
    """
    lines = describe_state(state)
    if state is None:
        return lines
    ended = game_state_text(state)
    if ended is not None:
        kept = [
            line
            for line in lines
            if not line.startswith((*_TURN_LINES, "X offers to resign", "X has doubled"))
        ]
        return [*kept, f"Game state {state.game_state.name}: {ended}; no one is on roll"]
    if state.resignation:
        return [line for line in lines if not line.startswith(_TURN_LINES)]
    return lines
