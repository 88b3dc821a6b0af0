"""``nard show ID``: the board (side on roll at the bottom, pip counts), its IDs, and the cube, score and dice of the ID."""

from __future__ import annotations

import argparse

from nard_ai.interfaces.commands.common import MATCH_GNUBG_ID, START_XGID_52, add_position, position_arg
from nard_ai.interfaces.output import describe_state

NAME = "show"
SUMMARY = "draw a position with pip counts, its IDs, cube and score"
DESCRIPTION = (
    "Draw the board of an ID, the side on roll (X) at the bottom, with pip counts, the position's "
    "gnubg ID and XGID, and the cube, score and dice that a Match ID or XGID holds, and whose turn it "
    "is: a game that is over, resigned or dropped (a Match ID's game state), or whose board is finished "
    "(a side has borne off all 15 checkers: who won a single game, gammon or backgammon is said), is shown "
    "as such, with no one on roll."
)
EXAMPLES = (f"nard show {MATCH_GNUBG_ID}", f"nard show {START_XGID_52}")


def configure(parser: argparse.ArgumentParser) -> None:
    """``ID``."""
    add_position(parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the board, its gnubg ID and XGID (when the state has one) and the match state; returns 0."""
    from nard_ai.core.board import game_result
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
    for line in describe_state(state, int(game_result(board))):
        print(f" {line}")
    return 0
