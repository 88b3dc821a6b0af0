"""Rank 4, search: 0/1/2-ply move choice and position values over any evaluator, gnubg's move filters, agents.

Imports only lower ranks (core, formats, model, eval; README, "Architecture").
The public names of :mod:`nard_ai.search.filters`,
:mod:`nard_ai.search.lookahead` and :mod:`nard_ai.search.loading` are
re-exported here, and, as the old flat ``nard_ai.search`` module had them, ``MAX_LEVEL_POSITIONS``
and the 21 rolls with their weights (``ROLLS_21``, ``ROLL_WEIGHTS``, from :mod:`nard_ai.core.dice`).
"""

from nard_ai.core.dice import ROLL_WEIGHTS, ROLLS_21
from nard_ai.search.filters import (
    DEFAULT_FILTERS,
    HUGE,
    LARGE,
    MAX_PLY,
    MOVE_FILTERS,
    NARROW,
    NORMAL,
    SKIP,
    TINY,
    MoveFilter,
    MoveFilters,
    filter_plays,
)
from nard_ai.search.loading import default_agent, load_agent, pubeval_agent, random_agent
from nard_ai.search.lookahead import (
    MAX_LEVEL_POSITIONS,
    STANDARD_RULES,
    Agent,
    RankedPlays,
    Selection,
    Valuation,
    afterstate_probs,
    agent_value,
    choose_plays,
    position_probs,
    rank_plays,
    rank_plays_batch,
    select_plays,
    select_plays_unchecked,
    values_positions,
)

__all__ = [
    "MAX_LEVEL_POSITIONS",
    "ROLLS_21",
    "ROLL_WEIGHTS",
    "DEFAULT_FILTERS",
    "HUGE",
    "LARGE",
    "MAX_PLY",
    "MOVE_FILTERS",
    "NARROW",
    "NORMAL",
    "SKIP",
    "STANDARD_RULES",
    "TINY",
    "Agent",
    "MoveFilter",
    "MoveFilters",
    "RankedPlays",
    "Selection",
    "Valuation",
    "afterstate_probs",
    "agent_value",
    "values_positions",
    "choose_plays",
    "default_agent",
    "filter_plays",
    "load_agent",
    "position_probs",
    "pubeval_agent",
    "random_agent",
    "rank_plays",
    "rank_plays_batch",
    "select_plays",
    "select_plays_unchecked",
]
