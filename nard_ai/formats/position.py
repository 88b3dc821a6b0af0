"""One entry point for a position given as text: Position ID, ``PositionID:MatchID`` or XGID.

Shared by the command line, ``evaluate.py``, the error-rate report and the
HTTP server, so all of them accept the same spellings and fail the same way.
"""

from __future__ import annotations

import numpy as np

from nard_ai.formats.match_id import MatchState, parse_gnubg_id
from nard_ai.formats.position_id import board_from_position_id
from nard_ai.formats.xgid import from_xgid

__all__ = ["is_xgid", "parse_position"]


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
    if is_xgid(body):
        return from_xgid(body)
    if ":" in body:
        return parse_gnubg_id(body)
    return board_from_position_id(body), None


def is_xgid(text: str) -> bool:
    """Whether ``text`` (stripped) is read as an XGID: the ``XGID=`` prefix (any case), or ten or more
    ``:``-separated fields (an XGID without its prefix; a ``PositionID:MatchID`` has one ``:``)."""
    return text[:5].upper() == "XGID=" or text.count(":") >= 9


def __getattr__(name: str):
    """``cube_state_from_match`` moved to :mod:`nard_ai.cube.state` (formats may not import the cube layer):
    say so instead of a bare ImportError."""
    if name == "cube_state_from_match":
        raise ImportError(
            "cube_state_from_match moved from nard_ai.formats.position to nard_ai.cube.state: "
            "use 'from nard_ai.cube.state import cube_state_from_match'"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
