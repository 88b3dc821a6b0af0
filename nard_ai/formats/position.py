"""One entry point for a position given as text: Position ID, ``PositionID:MatchID`` or XGID.

Shared by the command line, ``evaluate.py``, the error-rate report and the
HTTP server, so all of them accept the same spellings and fail the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nard_ai.cube import CENTRED, ON_ROLL, OPPONENT, CubeState
from nard_ai.formats.match_id import CENTERED, MatchState, parse_gnubg_id
from nard_ai.formats.position_id import board_from_position_id
from nard_ai.formats.xgid import from_xgid

__all__ = ["parse_position", "cube_state_from_match"]


def parse_position(text: str) -> tuple[np.ndarray, MatchState | None]:
    """A board and, when the text holds one, its match state.

    Args:
        text: a gnubg Position ID (``4HPwATDgc/ABMA``), a combined
            ``PositionID:MatchID`` (``4HPwATDgc/ABMA:cAkAAAAAAAAA``), or an
            XGID (``XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10``, the
            prefix optional when all ten fields are there).

    Returns:
        ``(board, state)``: the ``(26,)`` int8 board seen from the side on
        roll (with a match state: from ``state.player_on_roll``), and the
        :class:`~nard_ai.formats.match_id.MatchState`, ``None`` for a bare
        Position ID.

    Raises:
        ValueError: naming the format and what is wrong.
    """
    if not isinstance(text, str):
        raise ValueError(f"a position must be a str, got {type(text).__name__}")
    body = text.strip()
    if not body:
        raise ValueError("the position is empty; give a Position ID, PositionID:MatchID or XGID")
    if body[:5].upper() == "XGID=" or body.count(":") >= 9:
        return from_xgid(body)
    if ":" in body:
        return parse_gnubg_id(body)
    return board_from_position_id(body), None


def cube_state_from_match(state: MatchState | None, **overrides: Any) -> CubeState:
    """The cube and match of a :class:`~nard_ai.formats.match_id.MatchState`, seen from its player on roll.

    Args:
        state: a match state (its board's mover is ``state.player_on_roll``);
            ``None`` (a bare Position ID) gives money play with the cube
            centred at 1.
        overrides: ``value``, ``owner``, ``match_length``, ``score``,
            ``crawford``, ``jacoby`` or ``beavers`` to replace; ``None``
            values are ignored.

    Returns:
        A :class:`~nard_ai.cube.CubeState`: owner ``"on_roll"`` when the
        player on roll owns the cube, ``"opponent"`` when the other seat
        does; score ``(player on roll, other)``; the Crawford flag; the
        Jacoby rule and beavers in money play (an XGID's Jacoby field:
        ``1`` Jacoby, ``2`` beavers, ``3`` both). While a double awaits an answer the cube
        value is the one before the double (the Match ID's convention).

    Raises:
        ValueError: when the cube or match cannot be expressed (a match
            longer than 25 points, a score at or above the match length,
            a centred cube above 1).
    """
    fields: dict[str, Any] = {}
    if state is not None:
        me = state.player_on_roll
        if state.cube_owner == CENTERED:
            owner = CENTRED
        else:
            owner = ON_ROLL if state.cube_owner == me else OPPONENT
        money = state.match_length == 0
        fields = {
            "value": state.cube_value,
            "owner": owner,
            "match_length": state.match_length,
            "score": (0, 0) if money else (state.score[me], state.score[1 - me]),
            "crawford": state.crawford,
            "jacoby": state.jacoby and money,
            "beavers": state.beavers and money,
        }
    fields.update({k: v for k, v in overrides.items() if v is not None})
    return CubeState(**fields)
