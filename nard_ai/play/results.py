"""What the game-playing drivers report, once: points per game over duplicate pairs with a 95% CI,
and sharded results put back in order.

Matches (:mod:`nard_ai.play.arena`), cube sessions (:mod:`nard_ai.play.sessions`) and rollouts
(:mod:`nard_ai.play.rollout`) report through these, so a driver adds no statistics of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["pair_ci95", "ci95_text", "DuplicatePoints", "in_shard_order"]


def pair_ci95(pair_means: np.ndarray) -> float:
    """Half-width of the 95% confidence interval of a mean over duplicate pairs (normal approximation).

    Args:
        pair_means: ``(P,)`` float, one value per duplicate pair (the mean of its two games).

    Returns:
        ``1.96 * sd / sqrt(P)``, or NaN with fewer than 2 pairs.
    """
    if len(pair_means) < 2:
        return float("nan")
    return float(1.96 * pair_means.std(ddof=1) / np.sqrt(len(pair_means)))


def ci95_text(ci95: float, units: int, unit: str = "game", percent: bool = False) -> str:
    """``"± 0.012 (95% CI) over 2,000 games (1,000 duplicate pairs)"``, the words of every driver's summary.

    Args:
        ci95: :func:`pair_ci95`'s half-width (NaN: one pair, so no interval is given).
        units: games or matches played (even: duplicate pairs).
        unit: ``"game"`` or ``"match"`` (plural with ``es`` or ``s`` as English has it).
        percent: the interval of a rate (``± 1.2%``) rather than of points.
    """
    pairs = units // 2
    plural = "es" if unit.endswith("ch") else "s"
    head = (
        "(no 95% CI from one duplicate pair)"
        if not np.isfinite(ci95)
        else (f"± {ci95:.1%} (95% CI)" if percent else f"± {ci95:.3f} (95% CI)")
    )
    return f"{head} over {units} {unit}{plural * (units != 1)} ({pairs} duplicate pair{'s' * (pairs != 1)})"


class DuplicatePoints:
    """Points per game of a duplicate-dice run, for a result class with a ``points`` attribute.

    ``points`` is ``(games,)`` int64, the points agent A won in each game, games ``2k`` and
    ``2k + 1`` sharing their dice.
    """

    points: np.ndarray

    @property
    def games(self) -> int:
        return len(self.points)

    @property
    def ppg(self) -> float:
        """A's mean points per game."""
        return float(self.points.mean())

    @property
    def ci95(self) -> float:
        """Half-width of the 95% confidence interval of :attr:`ppg`, over duplicate pairs."""
        return pair_ci95(self.points.reshape(-1, 2).mean(axis=1))


def in_shard_order(shards: Sequence[Any]) -> list[Any]:
    """Shard results (each with an ``index``) sorted by index, after checking each of ``0 .. len - 1`` is there once.

    Raises:
        ValueError: no shards, or a shard index missing or repeated (nothing lost, nothing
            counted twice).
    """
    indices = sorted(r.index for r in shards)
    if not shards or indices != list(range(len(shards))):
        raise ValueError(f"shards must be numbered 0..{len(shards) - 1} once each, got {indices}")
    return sorted(shards, key=lambda r: r.index)
