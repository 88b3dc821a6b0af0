"""Interchange and display formats: gnubg's two-row boards, Position IDs, Match IDs, XGIDs,
ASCII boards, move notation (both ways) and Jellyfish ``.mat`` match records.

Every function takes and returns boards in the layout of :mod:`nard_ai.core.board`
(``(26,)`` int8, the mover's view); the mover is gnubg's player on roll
(``MatchState.player_on_roll`` when a match state goes with the board).
"""

from nard_ai.formats.ascii import render_board
from nard_ai.formats.mat import ActionKind, MatAction, Match, MatGame, read_mat, write_mat
from nard_ai.formats.match_id import GameState as GameState  # the old name of GameStatus, for a release
from nard_ai.formats.match_id import (
    GameStatus,
    MatchState,
    Resignation,
    from_match_id,
    gnubg_id,
    match_id,
    parse_gnubg_id,
)
from nard_ai.formats.notation import parse_play, play_notation
from nard_ai.formats.position_id import (
    board_from_position_id,
    boards_from_position_ids,
    position_id,
    tanboard_from_position_id,
)
from nard_ai.formats.tanboard import from_tanboard, to_tanboard, validate_tanboard
from nard_ai.formats.xgid import from_xgid, to_xgid

__all__ = [
    "ActionKind",
    "GameStatus",
    "MatAction",
    "MatGame",
    "Match",
    "MatchState",
    "Resignation",
    "board_from_position_id",
    "boards_from_position_ids",
    "from_match_id",
    "from_tanboard",
    "from_xgid",
    "gnubg_id",
    "match_id",
    "parse_gnubg_id",
    "parse_play",
    "play_notation",
    "position_id",
    "read_mat",
    "render_board",
    "tanboard_from_position_id",
    "to_tanboard",
    "to_xgid",
    "validate_tanboard",
    "write_mat",
]
