"""Rank 5, the doubling cube: cube state, cubeful equity, cube decisions, cubeful lookahead, match equities.

Imports only lower ranks (core .. search; README, "Architecture"). The public
names of its modules are re-exported here; all are torch-free at import
but the cubeful lookahead, :mod:`nard_ai.cube.lookahead`, which
:func:`cube_decision` imports on use at 1 and 2 ply.

========================  ===================================================
module                    what
========================  ===================================================
``state``                 :class:`CubeState` (one record, owner named relative
                          to the side on roll), :func:`cube_state_from_match`
``equity``                cube efficiency, Janowski's cubeful equity, money and
                          match (the model)
``decision``              the decision rule (gnubg's ``FindBestCubeDecision``)
``position``              :func:`cube_decision` of a board with an agent
``lookahead``             the cubeful 1- and 2-ply search
``met``                   the Kazaross-XG2 match equity table
========================  ===================================================
"""

from nard_ai.cube.decision import (
    CubeDecision,
    check_efficiency,
    check_ply,
    cube_action,
    cube_decision_from_probs,
)
from nard_ai.cube.equity import (
    DEFAULT_EFFICIENCY,
    GNUBG_SHALLOW_EFFICIENCY,
    CubeEfficiency,
    as_probs,
    cube_efficiency,
    cubeful_equity,
    efficiencies,
    gammon_values,
    match_cubeful,
    money_cubeful,
    mwc_at_score,
    mwc_to_equity,
)
from nard_ai.cube.met import MAX_AWAY, MET_NAME, match_equity, match_equity_after, met_tables
from nard_ai.cube.position import cube_decision
from nard_ai.cube.state import (
    ACTIONS,
    CENTRED,
    CUBE_OWNERS,
    MAX_CUBE,
    ON_ROLL,
    OPPONENT,
    CubeState,
    check_cube,
    cube_state_from_match,
    finished_points,
    highest_cube_value,
)

__all__ = [
    "as_probs",
    "check_cube",
    "finished_points",
    "check_ply",
    "check_efficiency",
    "cube_action",
    "match_cubeful",
    "money_cubeful",
    "mwc_at_score",
    "mwc_to_equity",
    "ACTIONS",
    "CENTRED",
    "CUBE_OWNERS",
    "DEFAULT_EFFICIENCY",
    "GNUBG_SHALLOW_EFFICIENCY",
    "MAX_AWAY",
    "MAX_CUBE",
    "MET_NAME",
    "ON_ROLL",
    "OPPONENT",
    "CubeDecision",
    "CubeEfficiency",
    "CubeState",
    "cube_decision",
    "cube_decision_from_probs",
    "cube_efficiency",
    "cube_state_from_match",
    "cubeful_equity",
    "efficiencies",
    "gammon_values",
    "highest_cube_value",
    "match_equity",
    "match_equity_after",
    "met_tables",
]
