"""nard_ai: a vectorized backgammon (takhte nard) rules engine and learner.

The rules core is pure functions over ``int8`` board arrays (layout in
:mod:`nard_ai.board`), compiled with numba and batched on a leading axis.
"""

from .board import (
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
from .cube import CubeState, cube_decision
from .formats import (
    MatchState,
    board_from_position_id,
    from_match_id,
    from_tanboard,
    from_xgid,
    match_id,
    parse_play,
    play_notation,
    position_id,
    render_board,
    to_tanboard,
    to_xgid,
)
from .game import GameState, new_games, opening_roll, roll_dice, step
from .met import match_equity
from .movegen import count_plays_batch, legal_plays, legal_plays_batch, random_games
from .rollout import rollout, rollout_plays
from .rules import Rules

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
]

# Agents need torch; they are imported on first use so that `import nard_ai`
# (the rules core) stays light.
_LAZY = {
    "load_agent": "arena",
    "pubeval_agent": "arena",
    "random_agent": "arena",
    # search: 0/1/2-ply move choice and position values, gnubg-style move filters
    "Agent": "search",
    "MoveFilter": "search",
    "MoveFilters": "search",
    "MOVE_FILTERS": "search",
    "position_probs": "search",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'nard_ai' has no attribute {name!r}")
