"""Search depth in gnubg's numbering: :data:`MAX_PLY` and the one check of a ``ply`` argument.

gnubg numbers plies from 0: 0-ply is the static evaluation of each play's
afterstate, 1-ply averages the opponent's 21 rolls after it, 2-ply looks one
roll further (gnubg manual, "Evaluation settings"). The engine searches
0..:data:`MAX_PLY`. Every layer that takes a ``ply`` (the search, the cube,
rollouts, agent specs, the command line and HTTP) checks it here, so that a bad
ply reads the same everywhere. It sits in the rules core because the cube and
rollout layers check plies without loading the search (and torch).
"""

from __future__ import annotations

from numbers import Integral

__all__ = ["MAX_PLY", "check_ply"]

MAX_PLY = 2
"""The deepest search implemented (gnubg numbering)."""


def check_ply(ply: object) -> int:
    """``ply`` as an ``int`` if it is a search depth the engine has, 0..:data:`MAX_PLY` (gnubg numbering).

    Args:
        ply: a Python or numpy integer (not a bool).

    Raises:
        ValueError: "ply must be an integer 0..2 (gnubg numbering), got ..."
            for anything else (a bool, a float, a string, a number outside 0..2).
    """
    if isinstance(ply, bool) or not isinstance(ply, Integral) or not 0 <= ply <= MAX_PLY:
        raise ValueError(f"ply must be an integer 0..{MAX_PLY} (gnubg numbering), got {ply!r}")
    return int(ply)
