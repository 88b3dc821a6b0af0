"""gnubg's move filters: which plays survive each level of a deeper search.

A ``k``-ply move choice values every legal play at 0-ply, then keeps, level
by level, the plays that pass that level's :class:`MoveFilter` (gnubg
``FindnSaveBestMoves``; presets and their numbers are gnubg's ``movefilter``
tables). The full description is in :mod:`nard_ai.search.lookahead`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from nard_ai.core.ply import MAX_PLY, check_ply

__all__ = [
    "MoveFilter",
    "MoveFilters",
    "SKIP",
    "TINY",
    "NARROW",
    "NORMAL",
    "LARGE",
    "HUGE",
    "MOVE_FILTERS",
    "DEFAULT_FILTERS",
    "filter_plays",
    "MAX_PLY",
]


# --------------------------------------------------------------------------- move filters


@dataclass(frozen=True)
class MoveFilter:
    """One level of gnubg's move filter (``movefilter``: ``Accept``, ``Extra``, ``Threshold``).

    Attributes:
        accept: plays always kept (the best ``accept``); ``-1`` skips the level.
        extra: further plays kept, best first, while within ``threshold`` of the best.
        threshold: equity window below the best play, in points per game (cubeless).

    Raises:
        ValueError: ``accept < -1``, ``extra < 0``, ``threshold < 0`` or not
            finite, or a level that is not skipped but keeps no play
            (``accept + extra == 0``).
    """

    accept: int
    extra: int = 0
    threshold: float = 0.0

    def __post_init__(self) -> None:
        for name in ("accept", "extra"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"MoveFilter.{name} must be an integer, got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.accept < -1:
            raise ValueError(f"MoveFilter.accept must be >= -1 (-1 skips the level), got {self.accept}")
        if self.extra < 0:
            raise ValueError(f"MoveFilter.extra must be >= 0, got {self.extra}")
        try:
            threshold = float(self.threshold)
        except (TypeError, ValueError):
            raise ValueError(f"MoveFilter.threshold must be a number, got {self.threshold!r}") from None
        if not np.isfinite(threshold) or threshold < 0:
            raise ValueError(f"MoveFilter.threshold must be a finite number >= 0, got {self.threshold!r}")
        object.__setattr__(self, "threshold", threshold)
        if self.accept >= 0 and self.accept + self.extra == 0:
            raise ValueError(
                "a MoveFilter that is not skipped (accept >= 0) must keep a play: accept + extra >= 1"
            )

    @property
    def skipped(self) -> bool:
        """Whether the level is skipped (``accept == -1``)."""
        return self.accept < 0


SKIP = MoveFilter(-1)


@dataclass(frozen=True)
class MoveFilters:
    """A move-filter table: for each search depth, one :class:`MoveFilter` per level.

    Attributes:
        name: label for reports.
        ply1: the level of a 1-ply search: ``(level 0,)``.
        ply2: the levels of a 2-ply search: ``(level 0, level 1)``.

    Raises:
        ValueError: on a wrong number of levels or a level that is not a
            :class:`MoveFilter`. (A skipped level keeps every play: a 1-ply
            table whose level is skipped values every play at 1-ply.)
    """

    name: str
    ply1: tuple[MoveFilter, ...]
    ply2: tuple[MoveFilter, ...]

    def __post_init__(self) -> None:
        for k, levels in ((1, self.ply1), (2, self.ply2)):
            levels = tuple(levels)
            if len(levels) != k or not all(isinstance(f, MoveFilter) for f in levels):
                raise ValueError(f"MoveFilters.ply{k} must be {k} MoveFilter level(s), got {levels!r}")
            object.__setattr__(self, f"ply{k}", levels)

    def levels(self, ply: int) -> tuple[MoveFilter, ...]:
        """The filter levels of a ``ply``-ply search (``ply`` of them); ``()`` at 0-ply."""
        return {0: (), 1: self.ply1, 2: self.ply2}[check_ply(ply)]


def _preset(name: str, accept: int, extra: int, threshold: float) -> MoveFilters:
    first = MoveFilter(accept, extra, threshold)
    return MoveFilters(name=name, ply1=(first,), ply2=(first, SKIP))


# gnubg movefilters.inc, rows for 1- and 2-ply.
TINY = _preset("tiny", 0, 5, 0.08)
NARROW = _preset("narrow", 0, 8, 0.12)
NORMAL = _preset("normal", 0, 8, 0.16)
LARGE = _preset("large", 0, 16, 0.32)
HUGE = _preset("huge", 0, 20, 0.44)
MOVE_FILTERS: dict[str, MoveFilters] = {f.name: f for f in (TINY, NARROW, NORMAL, LARGE, HUGE)}
"""gnubg's named presets, by lower-case name."""
DEFAULT_FILTERS = NORMAL
"""gnubg's default for evaluation and hints (``MOVEFILTER_NORMAL``)."""


@njit(cache=True, nogil=True)
def _filter_kernel(equity, owner, accept, extra, threshold):
    m = equity.shape[0]
    keep = np.zeros(m, dtype=np.bool_)
    i = 0
    while i < m:
        j = i + 1
        while j < m and owner[j] == owner[i]:
            j += 1
        # stable: among equal equities the earlier play ranks first
        order = np.argsort(-equity[i:j], kind="mergesort")
        floor = equity[i + order[0]] - threshold
        limit = min(j - i, accept + extra)
        for r in range(limit):
            k = i + order[r]
            # gnubg: past the accepted ones, stop at the first play below best - threshold
            if r >= accept and equity[k] < floor:
                break
            keep[k] = True
        i = j
    return keep


def filter_plays(equity: np.ndarray, owner: np.ndarray, move_filter: MoveFilter) -> np.ndarray:
    """Which plays pass one filter level, position by position (gnubg's rule).

    For each position, its plays ranked by equity (ties: the earlier play
    first): the best ``accept`` are kept, then the following ones, up to
    ``accept + extra`` in all, while each is not below the best minus
    ``threshold``.

    Args:
        equity: ``(M,)`` the plays' equities for the mover (points per game).
        owner: ``(M,)`` int the position each play belongs to; a position's
            plays must be contiguous (as :func:`~nard_ai.core.movegen.legal_plays_batch`
            returns them).
        move_filter: the level; a skipped level (``accept == -1``) keeps every play.

    Returns:
        ``(M,)`` bool, True for the plays kept.

    Raises:
        ValueError: if the shapes differ.
    """
    equity = np.ascontiguousarray(equity, dtype=np.float64)
    owner = np.ascontiguousarray(owner, dtype=np.int64)
    if equity.shape != owner.shape or equity.ndim != 1:
        raise ValueError(f"equity and owner must both have shape (M,), got {equity.shape} and {owner.shape}")
    if move_filter.skipped:
        return np.ones(len(equity), dtype=bool)
    return _filter_kernel(equity, owner, move_filter.accept, move_filter.extra, move_filter.threshold)


def _check_filters(filters) -> MoveFilters:
    if filters is None:
        return DEFAULT_FILTERS
    if isinstance(filters, str):
        try:
            return MOVE_FILTERS[filters]
        except KeyError:
            raise ValueError(
                f"unknown move filter preset {filters!r}; one of {sorted(MOVE_FILTERS)}"
            ) from None
    if not isinstance(filters, MoveFilters):
        raise ValueError(f"filters must be a MoveFilters, a preset name or None, got {filters!r}")
    return filters
