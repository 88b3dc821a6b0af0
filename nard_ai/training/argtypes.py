"""argparse types shared by the command lines: whole numbers and seconds, with one wording of their errors.

``nard`` (:mod:`nard_ai.interfaces.cli` and its commands) and ``python -m
nard_ai.training`` (:mod:`nard_ai.training.cli`) both use them. They sit in
the lowest package with a command line (training, rank 7: it may not import
interfaces). Each raises :class:`argparse.ArgumentTypeError`, which argparse
prints as ``PROG: error: argument --FLAG: MESSAGE`` with exit status 2.
"""

from __future__ import annotations

import argparse

__all__ = ["int_in", "non_negative_int", "positive_int", "positive_seconds"]


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
