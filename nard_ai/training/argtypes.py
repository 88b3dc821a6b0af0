"""argparse types shared by the command lines: whole numbers and seconds, with one wording of their errors.

``nard`` (:mod:`nard_ai.interfaces.cli` and its commands) and ``python -m
nard_ai.training`` (:mod:`nard_ai.training.cli`) both use them. They sit in
the lowest package with a command line (training, rank 7: it may not import
interfaces). Each raises :class:`argparse.ArgumentTypeError`, which argparse
prints as ``PROG: error: argument --FLAG: MESSAGE`` with exit status 2.
"""

from __future__ import annotations

import argparse

__all__ = [
    "MAX_SEED",
    "TRAINING_LIMITS",
    "finite_float",
    "int_in",
    "non_empty",
    "non_negative_int",
    "positive_int",
    "positive_seconds",
]

MAX_SEED = 2**64 - 1
"""The largest seed of ``python -m nard_ai.training`` (as ``train.py``'s: below 2**64)."""

TRAINING_LIMITS = {
    "count": 10_000_000,
    "candidates": 20_000_000,
    "oversample": 100,
    "pool": 16_384,
    "max_games": 100_000_000,
    "shard_size": 1_000_000,
    "shard_games": 1_000_000,
    "workers": 64,
    "games": 10_000_000,
    "truncate": 5_000,
    "max_shards": 10_000_000,
}
"""Upper bounds of the sizes of ``python -m nard_ai.training positions|label`` (and of
:func:`nard_ai.training.positions.generate_positions`), checked before any work: beyond them a run
would not fit in memory or would take no sensible time. ``count`` positions (the largest set made
so far: 750,000); ``candidates``, ``count x oversample``, the distinct positions generation holds
(about 150 bytes each); ``pool`` games in lockstep (``train.py``'s bound); ``max_games`` games
played; ``shard_size`` positions per shard; ``shard_games`` games per game shard; ``workers``
label processes (``train.py``'s bound); ``games`` rollout games per position (``nard rollout``'s
bound); ``truncate`` plies (a game's ply limit, :data:`nard_ai.play.lockstep.MAX_PLIES`);
``max_shards`` (a set of the largest ``count`` in shards of one)."""


def _int_at_least(text: str, least: int, most: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
    if most is not None and value > most:
        raise argparse.ArgumentTypeError(f"must be <= {most}, got {value}")
    return value


def int_in(least: int, most: int):
    """argparse type: an integer in ``least .. most`` ("invalid int value: 'x'", "must be >= 1, got 0",
    "must be <= 100, got 101")."""
    return lambda text: _int_at_least(text, least, most)


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 ("invalid int value: 'x'", "must be >= 0, got -1")."""
    return _int_at_least(text, 0)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 ("invalid int value: 'x'", "must be >= 1, got 0")."""
    return _int_at_least(text, 1)


def finite_float(least: float, most: float | None = None):
    """argparse type: a finite number in ``[least, most]`` (``most=None``: ``>= least``) ("invalid
    number: 'x'", "must be a number in [0, 1], got 1.5", "must be a finite number >= 0, got inf")."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
        if not (value >= least and (most is None or value <= most) and value < float("inf")):
            bounds = f"a finite number >= {least:g}" if most is None else f"a number in [{least:g}, {most:g}]"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {text}")
        return value

    return parse


def non_empty(text: str) -> str:
    """argparse type: a path that is not the empty string (``""`` would mean the current folder)
    ("must not be empty: name a folder or file")."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must not be empty: name a folder or file, got {text!r}")
    return text


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0 ("invalid number of seconds: 'x'",
    "must be a number of seconds > 0, got inf")."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text}")
    return value
