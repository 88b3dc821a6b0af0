"""Cube policies of the game-playing drivers and their batched model decisions.

A :class:`CubePolicy` says how an agent handles the cube in
:mod:`nard_ai.play.sessions` (money sessions with the cube and matches to N
points): ``"model"``, doubles and takes from the cube model of
:mod:`nard_ai.cube` on the agent's probabilities, decided for a whole batch
of positions at once (:func:`model_doubles`, :func:`model_takes`, by
:func:`cube_equities`); or ``"threshold"``, fixed winning-chance thresholds
(for agents without real probabilities). Moved out of ``sessions`` (which
re-exports every name) on the way to issue 13's one cube policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nard_ai.cube import DEFAULT_EFFICIENCY, MAX_CUBE, CubeEfficiency, CubeState, cubeful_equity
from nard_ai.cube.met import match_equity_after
from nard_ai.eval.evaluator import PubevalEvaluator, RandomEvaluator

__all__ = [
    "CubePolicy",
    "MODEL_POLICY",
    "PASSIVE_POLICY",
    "default_cube_policy",
    "cube_equities",
    "model_doubles",
    "model_takes",
]

_POLICY_KINDS = ("model", "threshold")


# --------------------------------------------------------------------------- policies


@dataclass(frozen=True)
class CubePolicy:
    """How one agent takes its cube decisions (module docstring).

    Attributes:
        kind: ``"model"`` (:mod:`nard_ai.cube.decision`'s decisions on the agent's
            probabilities) or ``"threshold"`` (fixed thresholds).
        double_at: threshold policy: double when the agent's winning chance
            (``probs[:, 0]`` for the side on roll) is at least this;
            ``None`` = never double.
        take_at: threshold policy: take when the doubled side's own winning
            chance (``1 - probs[:, 0]``) is at least this; ``0.0`` = always take.
        efficiency: model policy: cube efficiency parameters
            (:func:`nard_ai.cube.cube_efficiency`).

    Raises:
        ValueError: on an unknown kind or a threshold outside ``[0, 1]``.
    """

    kind: str = "model"
    double_at: float | None = None
    take_at: float = 0.0
    efficiency: CubeEfficiency = DEFAULT_EFFICIENCY

    def __post_init__(self) -> None:
        if self.kind not in _POLICY_KINDS:
            raise ValueError(f"cube policy kind must be one of {_POLICY_KINDS}, got {self.kind!r}")
        if self.double_at is not None and not 0.0 <= float(self.double_at) <= 1.0:
            raise ValueError(f"double_at must be within [0, 1] or None (never), got {self.double_at}")
        if not 0.0 <= float(self.take_at) <= 1.0:
            raise ValueError(f"take_at must be within [0, 1], got {self.take_at}")
        if not isinstance(self.efficiency, CubeEfficiency):
            raise ValueError(f"efficiency must be a CubeEfficiency, got {type(self.efficiency).__name__}")


MODEL_POLICY = CubePolicy("model")
"""Cube decisions from :mod:`nard_ai.cube.decision`'s model on the agent's probabilities."""

PASSIVE_POLICY = CubePolicy("threshold", double_at=None, take_at=0.0)
"""Never doubles, always takes (the policy of agents without real probabilities)."""


def default_cube_policy(agent) -> CubePolicy:
    """:data:`PASSIVE_POLICY` for pubeval and the random agent (no real probabilities), else :data:`MODEL_POLICY`."""
    evaluator = getattr(agent, "evaluator", None)
    if isinstance(evaluator, (PubevalEvaluator, RandomEvaluator)):
        return PASSIVE_POLICY
    return MODEL_POLICY


# --------------------------------------------------------------------------- batched model decisions


def cube_equities(probs, cube: CubeState, efficiency) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """No double, double/take and double/pass of many positions at one cube state, for the side on roll.

    The batched form of the three columns of
    :func:`nard_ai.cube.cube_decision_from_probs` (same model, same numbers).

    Args:
        probs: ``(N, 5)`` gnubg-order cubeless probabilities for the side on roll, before it rolls.
        cube: the cube state from the side on roll's view; it must be able to
            double (:attr:`~nard_ai.cube.CubeState.can_double`).
        efficiency: cube efficiency ``x``, scalar or ``(N,)``.

    Returns:
        ``(no_double, double_take, double_pass)``, each ``(N,)`` float64.
        Money play: points per game per unit of the current cube
        (``double_pass`` = 1). Match play: match-winning chances (MWC) of the
        side on roll.

    Raises:
        ValueError: on inconsistent probabilities, or a state that cannot double.
    """
    if not cube.can_double:
        raise ValueError("the side on roll cannot double in this cube state")
    nd = np.asarray(cubeful_equity(probs, cube, efficiency), dtype=np.float64)
    dt = np.asarray(cubeful_equity(probs, cube.doubled(), efficiency), dtype=np.float64)
    if cube.is_money:
        return nd, 2.0 * dt, np.ones_like(nd)
    dp = match_equity_after(cube.away, cube.opp_away, cube.value, cube.crawford)
    return nd, dt, np.full_like(nd, dp)


def model_doubles(probs, cube: CubeState, efficiency) -> np.ndarray:
    """Whether the side on roll doubles (gnubg's ``FindBestCubeDecision``), batched.

    The side doubles when :func:`nard_ai.cube.cube_decision_from_probs` would
    say ``"double_take"`` or ``"double_pass"``: the opponent's best answer
    ``min(double_take, double_pass)`` (with a beaver counted as
    ``2 * double_take`` when beavers are on and ``double_take < 0``) is at
    least ``no_double``; or no gammon can be won, ``double_pass < no_double``
    and the opponent would pass (gnubg never calls a position "too good"
    without a gammon to play for).

    Args:
        probs: ``(N, 5)`` probabilities for the side on roll.
        cube: its cube state (able to double).
        efficiency: ``x``, scalar or ``(N,)``.

    Returns:
        ``(N,)`` bool.
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    nd, dt, dp = cube_equities(p, cube, efficiency)
    if cube.is_money and cube.beavers:
        dt = np.where(dt < 0.0, 2.0 * dt, dt)
    answer = np.minimum(dt, dp)
    no_gammon = ~(p[:, 1] > 0.0)
    return (answer >= nd) | ((dp < nd) & no_gammon & (dt >= dp))


def model_takes(probs, cube: CubeState, efficiency) -> tuple[np.ndarray, np.ndarray]:
    """Whether the doubled side takes, and whether it beavers, batched.

    ``probs`` and ``cube`` are for the **doubler** (the side on roll), as the
    answering agent sees them. The doubled side takes when ``double_take <
    double_pass`` for the doubler (taking costs it less than passing, gnubg's
    rule); with beavers (money) it beavers when it takes and ``double_take <
    0`` (it is the favourite after the take), as long as the cube stays at or
    under :data:`nard_ai.cube.MAX_CUBE`.

    Returns:
        ``(take, beaver)``, ``(N,)`` bool each (``beaver`` implies ``take``).
    """
    _, dt, dp = cube_equities(probs, cube, efficiency)
    take = dt < dp
    beaver = take & (dt < 0.0) if (cube.is_money and cube.beavers and 4 * cube.value <= MAX_CUBE) else None
    if beaver is None:
        beaver = np.zeros_like(take)
    return take, beaver
