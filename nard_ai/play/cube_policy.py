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

from nard_ai.cube import (
    DEFAULT_EFFICIENCY,
    CubeEfficiency,
    CubeState,
    cubeful_equity,
)
from nard_ai.cube.decision import DOUBLE_PASS, DOUBLE_TAKE, answers, cube_actions
from nard_ai.cube.met import match_equity_after
from nard_ai.cube.state import (  # re-exported: their old home
    OWNER_BY_CODE,
    may_double,
    owner_codes,
    owner_seat,
)
from nard_ai.eval.evaluator import PubevalEvaluator, RandomEvaluator

__all__ = [
    "CubePolicy",
    "MODEL_POLICY",
    "PASSIVE_POLICY",
    "default_cube_policy",
    "cube_equities",
    "model_doubles",
    "model_takes",
    "model_actions",
    "OWNER_BY_CODE",
    "owner_codes",
    "owner_seat",
    "may_double",
    "taken_cube",
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

    def threshold_decisions(self, win: np.ndarray, answer: bool) -> np.ndarray:
        """A threshold policy's decisions: doubles (``answer=False``) or takes, from the decider's ``win``.

        Args:
            win: ``(N,)`` float, the side on roll's winning chance (``probs[:, 0]``) when doubling;
                the doubler's when answering (the taker's chance is ``1 - win``).
            answer: decide takes instead of doubles.

        Returns:
            ``(N,)`` bool: doubles when ``win >= double_at`` (never with ``double_at=None``); takes when
            ``1 - win >= take_at``.

        Raises:
            ValueError: for a model policy (its decisions come from :func:`model_actions`).
        """
        if self.kind != "threshold":
            raise ValueError(
                "threshold_decisions is for a threshold policy; a model policy uses model_actions"
            )
        win = np.asarray(win, dtype=np.float64)
        if answer:
            return 1.0 - win >= self.take_at
        if self.double_at is None:
            return np.zeros(win.shape, dtype=bool)
        return win >= self.double_at


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


# --------------------------------------------------------------------------- the cube owner

# owner codes and seats: nard_ai.cube.state (OWNER_BY_CODE, owner_codes, owner_seat), re-exported here


def taken_cube(value, beaver, taker) -> tuple[np.ndarray, np.ndarray]:
    """The cube after a double is taken: the one rule of the drivers (sessions and rollouts).

    The taker owns the cube at twice its value, or at four times when it beavers
    (RULES.md, "Beavers"; money play only, decided by :func:`model_takes`).

    Args:
        value: ``(N,)`` int cube values before the double.
        beaver: ``(N,)`` bool, the take is a beaver.
        taker: ``(N,)`` (or scalar) int, the taker's seat.

    Returns:
        ``(value, owner)``: ``(N,)`` int64 each, the new value and owning seat.
    """
    value = np.asarray(value, dtype=np.int64)
    new_value = value * np.where(np.asarray(beaver, dtype=bool), 4, 2)
    return new_value, np.broadcast_to(np.asarray(taker, dtype=np.int64), value.shape).copy()


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
    """Whether the side on roll doubles, batched: :func:`nard_ai.cube.decision.cube_actions` says
    ``"double_take"`` or ``"double_pass"`` (the rule of :func:`nard_ai.cube.cube_decision_from_probs`).

    Args:
        probs: ``(N, 5)`` probabilities for the side on roll.
        cube: its cube state (able to double).
        efficiency: ``x``, scalar or ``(N,)``.

    Returns:
        ``(N,)`` bool.
    """
    codes, _ = model_actions(probs, cube, efficiency)
    return (codes == DOUBLE_TAKE) | (codes == DOUBLE_PASS)


def model_actions(probs, cube: CubeState, efficiency) -> tuple[np.ndarray, np.ndarray]:
    """The cube action of each position, batched: :func:`nard_ai.cube.decision.cube_actions` on
    :func:`cube_equities` (one pass for a driver that takes the double and the answer together).

    Args: as :func:`model_doubles`.

    Returns:
        ``(codes, beaver)``: ``(N,)`` int8 indices into :data:`~nard_ai.cube.decision.CUBE_ACTIONS`
        (``DOUBLE_TAKE``: doubled and taken, ``DOUBLE_PASS``: doubled and passed) and ``(N,)`` bool,
        a take that is a beaver.
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    return cube_actions(*cube_equities(p, cube, efficiency), cube, p[:, 1] > 0.0)


def model_takes(probs, cube: CubeState, efficiency) -> tuple[np.ndarray, np.ndarray]:
    """Whether the doubled side takes, and whether it beavers, batched (:func:`nard_ai.cube.decision.cube_actions`).

    ``probs`` and ``cube`` are for the **doubler** (the side on roll), as the
    answering agent sees them. The doubled side takes when the take costs it less than the
    pass (``double_take < double_pass`` for the doubler, a beaver counted at ``2 double_take``);
    it beavers when the rule says so (money with beavers, ``double_take < 0``, the cube at most
    :data:`nard_ai.cube.MAX_CUBE` after it).

    Returns:
        ``(take, beaver)``, ``(N,)`` bool each (``beaver`` implies ``take``).
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    _, dt, dp = cube_equities(p, cube, efficiency)
    take, beaver, _ = answers(dt, dp, cube)
    return take, beaver & take
