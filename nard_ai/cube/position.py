"""The cube decision of a position: an agent's probabilities at 0 ply, the cubeful lookahead at 1 and 2.

The one entry point for a board (:func:`cube_decision`); the model is in
:mod:`nard_ai.cube.equity`, the decision rule in :mod:`nard_ai.cube.decision`
and the cubeful n-ply search in :mod:`nard_ai.cube.lookahead`.
"""

from __future__ import annotations

import numpy as np

from nard_ai.core.board import game_result, validate_board
from nard_ai.core.ply import check_ply
from nard_ai.cube.decision import (
    CubeDecision,
    _check_agent,
    check_efficiency,
    cube_decision_from_probs,
)
from nard_ai.cube.equity import DEFAULT_EFFICIENCY, CubeEfficiency, cube_efficiency
from nard_ai.cube.state import CubeState, check_cube
from nard_ai.search.lookahead import agent_value

__all__ = ["cube_decision"]


def cube_decision(
    board: np.ndarray,
    cube: CubeState = CubeState(),
    ply: int = 0,
    agent=None,
    *,
    efficiency: CubeEfficiency | float | None = None,
) -> CubeDecision:
    """The cube decision for the side on roll in ``board``, before it rolls.

    Args:
        board: ``(26,)`` int8, the side on roll's view (game not over).
        cube: the cube and match state (default: money, cube 1 centred).
        ply: search depth (gnubg numbering), an integer 0..2 (Python or
            numpy; not a bool, float or string): the ply of the default
            network when ``agent`` is ``None``; with an agent, 0 or the
            agent's own ply.
        agent: anything with ``evaluate(boards) -> (probs (N, 5), equity (N,))``
            for the side on roll, searching at its own ply (a
            :class:`nard_ai.search.lookahead.Agent`), with real probabilities (not
            pubeval or the random agent); ``None`` loads the default network
            with :func:`nard_ai.search.loading.default_agent` at ``ply`` (cached).
        efficiency: cube efficiency parameters (default
            :data:`DEFAULT_EFFICIENCY`), or a fixed ``x``, a number in ``[0, 1]``.

    Returns:
        A :class:`CubeDecision` from the agent's cubeless probabilities and the
        Janowski/MET model of the module docstring.

    Raises:
        ValueError: on an invalid board, a finished game, a ``cube`` that is
            not a :class:`CubeState`, a ``ply`` that is not an integer 0..2,
            an agent without ``evaluate`` or without real probabilities (one
            whose evaluator ranks plays by ``score_plays``: pubeval, random),
            an agent whose ``ply`` differs from a non-zero ``ply``, an
            ``evaluate`` that does not return ``(probs, equity)``, or an
            efficiency that is neither a :class:`CubeEfficiency` nor a
            number in ``[0, 1]``.
    """
    board = validate_board(np.asarray(board).reshape(-1))
    if game_result(board) != 0:
        raise ValueError("the game is over: there is no cube decision")
    check_cube(cube)
    ply = check_ply(ply)
    if efficiency is None or isinstance(efficiency, CubeEfficiency):
        x = cube_efficiency(board, efficiency or DEFAULT_EFFICIENCY)
    else:
        x = check_efficiency(efficiency)
    if agent is None:
        from nard_ai.search.loading import default_agent  # torch: loaded only when needed

        agent = default_agent(ply)
    else:
        _check_agent(agent)
        agent_ply = getattr(agent, "ply", None)
        if ply and agent_ply is not None and agent_ply != ply:
            raise ValueError(f"ply={ply} but the agent searches at ply {agent_ply}")
        ply = agent_ply if agent_ply is not None else ply
    if ply and all(hasattr(agent, a) for a in ("evaluator", "rules")):
        # gnubg's n-ply cube decisions carry cubeful values through the search (its tree also
        # gives the n-ply cubeless probabilities, so the agent's own evaluation is not needed)
        from nard_ai.cube.lookahead import lookahead_cube_decision

        return lookahead_cube_decision(board, cube, agent, ply, efficiency)
    try:
        result = agent_value(agent, board[None])
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    probs = np.asarray(result.probs, dtype=np.float64)
    if probs.size != 5:
        raise ValueError(
            f"the agent's value(boards) gave probabilities of shape {probs.shape} for one board, expected (1, 5)"
        )
    return cube_decision_from_probs(probs.reshape(5), cube, x, ply=ply)
