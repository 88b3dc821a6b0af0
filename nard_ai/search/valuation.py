"""How agents value positions: :class:`Valuation`, the agents' ``value(boards)`` and the one way to ask any agent.

An evaluator's ``evaluate(boards)`` gives ``(N, 5)`` probabilities (:class:`nard_ai.eval.evaluator.Evaluator`);
an agent's ``value(boards)`` gives a :class:`Valuation` (probabilities and cubeless equity at the agent's
ply). nard_ai 0.2 called the agents' method ``evaluate`` too: :class:`ValuingAgent` keeps that name as a
deprecated alias until 0.3, and :func:`agent_value` serves agent objects written for 0.2.

Perspective: each position's side on roll, before it rolls; equities cubeless, points per game at cube 1.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

__all__ = ["Valuation", "EVALUATE_DEPRECATED", "ValuingAgent", "values_positions", "agent_value"]


class Valuation(NamedTuple):
    """Positions valued by an agent (:meth:`Agent.value`), for each one's side on roll before it rolls.

    Attributes:
        probs: ``(N, 5)`` float32, gnubg's cumulative probabilities (win, win
            gammon, win backgammon, lose gammon, lose backgammon).
        equity: ``(N,)`` float32, cubeless equity in points per game at cube 1.
    """

    probs: np.ndarray
    equity: np.ndarray


EVALUATE_DEPRECATED = (
    "an agent's evaluate(boards) is deprecated and will be removed in nard_ai 0.3: use "
    "agent.value(boards), the same (probs, equity) as a Valuation (an evaluator's evaluate(boards) "
    "is the one evaluate: (N, 5) probabilities)"
)
"""The warning of the agents' old ``evaluate``: one name, two contracts (an evaluator's gives ``(N, 5)``
probabilities, an agent's gave ``(probs, equity)``), so the agents' is renamed ``value``. It is removed
in 0.3, not changed in place: a caller's ``probs, equity = agent.evaluate(two_boards)`` would then
unpack two rows of probabilities without an error."""


def values_positions(agent) -> bool:
    """Whether ``agent`` can value positions: it has ``value(boards)`` (or 0.2's ``evaluate``, :func:`agent_value`)."""
    return callable(getattr(agent, "value", None)) or callable(getattr(agent, "evaluate", None))


def agent_value(agent, boards: np.ndarray) -> Valuation:
    """``agent.value(boards)`` for any agent object, checked; the drivers and reports value positions through it.

    An object with only the old ``evaluate(boards) -> (probs, equity)`` (an agent written for
    nard_ai 0.2 or earlier) is still served, with a ``DeprecationWarning``.

    Args:
        agent: an :class:`Agent`, a :class:`nard_ai.gnubg.agent.GnubgAgent`, or any object with
            ``value(boards) -> (probs, equity)``.
        boards: ``(N, 26)`` int8 boards, side on roll's view.

    Returns:
        A :class:`Valuation` of ``N`` rows.

    Raises:
        TypeError: when ``agent`` has neither method, or is an evaluator (its ``evaluate`` gives
            probabilities only: wrap it in :class:`Agent`), or its answer is not ``(probs, equity)``.
    """
    value = getattr(agent, "value", None)
    if callable(value):
        result = value(boards)
        what = "value"
    elif callable(getattr(agent, "evaluate", None)):
        result = agent.evaluate(boards)
        what = "evaluate"
        if (
            isinstance(result, (tuple, list)) and len(result) == 2
        ):  # an agent of 0.2: served, with the warning
            warnings.warn(EVALUATE_DEPRECATED, DeprecationWarning, stacklevel=2)
    else:
        raise TypeError(f"{type(agent).__name__} is not an agent: it has no value(boards) method")
    if isinstance(result, np.ndarray) or not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError(
            f"{type(agent).__name__}.{what}(boards) must return (probs (N, 5), equity (N,)), got "
            f"{type(result).__name__}"
            + (" (an evaluator? wrap it in Agent(evaluator))" if what == "evaluate" else "")
        )
    return result if isinstance(result, Valuation) else Valuation(*result)


class ValuingAgent:
    """The agents' shared part: 0.2's ``evaluate``, a deprecated alias of the subclass's ``value``."""

    def value(self, boards: np.ndarray) -> Valuation:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def evaluate(self, boards: np.ndarray) -> Valuation:
        """Deprecated alias of :meth:`value`, removed in 0.3 (:data:`EVALUATE_DEPRECATED`).

        Warns:
            DeprecationWarning: always.
        """
        warnings.warn(EVALUATE_DEPRECATED, DeprecationWarning, stacklevel=2)
        return self.value(boards)
