"""nard_ai: a vectorized backgammon (takhte nard) rules engine and learner.

The rules core is pure functions over ``int8`` board arrays (layout in
:mod:`nard_ai.core.board`), compiled with numba and batched on a leading axis.
"""

from nard_ai import _moved
from nard_ai.core.board import (
    BAR,
    BOARD_SIZE,
    LAYOUT_VERSION,
    NUM_CHECKERS,
    OPP_BAR,
    checkers_off,
    game_result,
    pip_count,
    pos,
    starting_board,
    swap_sides,
    validate_board,
)
from nard_ai.core.movegen import count_plays_batch, legal_plays, legal_plays_batch, random_games
from nard_ai.core.rules import Rules

_moved.install()  # the old flat module paths, as deprecated aliases

__all__ = [
    "BAR",
    "BOARD_SIZE",
    "LAYOUT_VERSION",
    "NUM_CHECKERS",
    "OPP_BAR",
    "GameState",
    "CubeState",
    "cube_decision",
    "match_equity",
    "board_from_position_id",
    "from_tanboard",
    "play_notation",
    "position_id",
    "render_board",
    "to_tanboard",
    "MatchState",
    "from_match_id",
    "from_xgid",
    "match_id",
    "parse_play",
    "to_xgid",
    "Rules",
    "rollout",
    "rollout_plays",
    "checkers_off",
    "count_plays_batch",
    "game_result",
    "legal_plays",
    "legal_plays_batch",
    "new_games",
    "opening_roll",
    "pip_count",
    "pos",
    "random_games",
    "roll_dice",
    "starting_board",
    "step",
    "swap_sides",
    "validate_board",
    "load_agent",
    "pubeval_agent",
    "random_agent",
    "Agent",
    "MoveFilter",
    "MoveFilters",
    "MOVE_FILTERS",
    "position_probs",
]

# Everything beyond the rules core is imported on first use, so that `import nard_ai`
# stays light: agents need torch, and the other modules cost about 50 ms of import
# time that a process asking only for legal plays does not need (issue 2's cold start).
_LAZY = {
    "CubeState": "cube.decision",
    "cube_decision": "cube.position",
    "MatchState": "formats",
    "board_from_position_id": "formats",
    "from_match_id": "formats",
    "from_tanboard": "formats",
    "from_xgid": "formats",
    "match_id": "formats",
    "parse_play": "formats",
    "play_notation": "formats",
    "position_id": "formats",
    "render_board": "formats",
    "to_tanboard": "formats",
    "to_xgid": "formats",
    "GameState": "core.game",
    "new_games": "core.game",
    "opening_roll": "core.game",
    "roll_dice": "core.game",
    "step": "core.game",
    "match_equity": "cube.met",
    "load_agent": "agents",
    "pubeval_agent": "agents",
    "random_agent": "agents",
    # search: 0/1/2-ply move choice and position values, gnubg-style move filters
    "rollout": "play.rollout",  # a function: the module is nard_ai.play.rollout
    "rollout_plays": "play.rollout",
    "Agent": "search",
    "MoveFilter": "search",
    "MoveFilters": "search",
    "MOVE_FILTERS": "search",
    "position_probs": "search",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"nard_ai.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'nard_ai' has no attribute {name!r}")
