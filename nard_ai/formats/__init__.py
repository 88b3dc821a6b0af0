"""Interchange and display formats: gnubg's two-row boards, Position IDs, ASCII boards, move notation.

Every function takes and returns boards in the layout of :mod:`nard_ai.board`
(``(26,)`` int8, the mover's view); the mover is gnubg's player on roll.
"""

from nard_ai.formats.ascii import render_board
from nard_ai.formats.notation import play_notation
from nard_ai.formats.position_id import board_from_position_id, position_id, tanboard_from_position_id
from nard_ai.formats.tanboard import from_tanboard, to_tanboard, validate_tanboard

__all__ = [
    "board_from_position_id",
    "from_tanboard",
    "play_notation",
    "position_id",
    "render_board",
    "tanboard_from_position_id",
    "to_tanboard",
    "validate_tanboard",
]
