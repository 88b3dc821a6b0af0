"""Named, versioned input encoders: boards -> float32 network inputs.

An encoder turns boards of :mod:`nard_ai.board` (``(N, 26)`` int8, each seen
from its **side on roll**, the "mover") into an ``(N, size)`` float32 array.
A network is trained for one encoder name *and* version; checkpoints record
both (:mod:`nard_ai.network`) and refuse to load against another. Changing
what an encoder computes therefore means a new version (or a new name), never
an edit in place.

Registered encoders
-------------------
=========  =======  ====  =====================================================
name       version  size  description
=========  =======  ====  =====================================================
``td198``  1        198   TD-Gammon's raw inputs (Tesauro 1992, 1995), below
=========  =======  ====  =====================================================

``td198`` v1 (TD-Gammon's 198 raw inputs, in the side-on-roll convention)
--------------------------------------------------------------------------
For ``n`` checkers of one side on a point, 4 units: ``n >= 1``, ``n >= 2``,
``n >= 3``, and ``(n - 3) / 2`` when ``n > 3`` (else 0). Layout:

==============  ============================================================
units           meaning
==============  ============================================================
``0 .. 95``     the side on roll's points 1..24 in its own numbering; point
                ``p`` at units ``4 (p - 1) .. 4 (p - 1) + 3``
``96 .. 191``   the opponent's points 1..24 in **its own** numbering (board
                index ``25 - q`` for its point ``q``), same 4 units each
``192``         side on roll's checkers on the bar / 2
``193``         opponent's checkers on the bar / 2
``194``         side on roll's checkers borne off / 15
``195``         opponent's checkers borne off / 15
``196, 197``    TD-Gammon's two "whose turn" units, fixed at ``(1, 0)``
==============  ============================================================

TD-Gammon encoded positions in a fixed white/black orientation and used the
last two units to say who was on roll. nard_ai always encodes a board from
the side on roll (to value an afterstate, search swaps it with
:func:`nard_ai.board.swap_sides` so the opponent is on roll, evaluates, and
inverts the probabilities), so "the first-encoded side is on roll" is always
true: the units are the constant ``(1, 0)`` and act as a bias. They are kept so
that the input count and layout match the published description.

Because both halves are written in their own side's numbering, the encoding
is symmetric: ``encode(swap_sides(b))`` equals ``encode(b)`` with units
``0..95`` and ``96..191`` exchanged and the pairs ``(192, 193)`` and
``(194, 195)`` exchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from .board import BAR, BOARD_SIZE, NUM_CHECKERS, NUM_POINTS, OPP_BAR

__all__ = ["Encoder", "ENCODERS", "get_encoder", "encode_td198", "TD198"]


@dataclass(frozen=True)
class Encoder:
    """A named, versioned board encoder.

    Attributes:
        name: registry name, e.g. ``"td198"``.
        version: integer version; bumped whenever the output changes.
        size: number of float32 inputs per board.
        fn: ``(N, 26) int8 boards (side on roll's view) -> (N, size) float32``.
    """

    name: str
    version: int
    size: int
    fn: Callable[[np.ndarray], np.ndarray]

    def encode(self, boards: np.ndarray) -> np.ndarray:
        """Encode ``(N, 26)`` or ``(26,)`` int8 boards (side on roll's view) to ``(N, size)`` float32."""
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        if boards.ndim == 1:
            boards = boards[None]
        if boards.ndim != 2 or boards.shape[1] != BOARD_SIZE:
            raise ValueError(f"boards must have shape (N, 26), got {boards.shape}")
        return self.fn(boards)

    @property
    def key(self) -> str:
        """``"name@version"``, as written in logs and checkpoints."""
        return f"{self.name}@{self.version}"


@njit(cache=True, inline="always")
def _point_units(out, row, base, n):
    # TD-Gammon's truncated unary code for n checkers of one side on a point.
    out[row, base] = 1.0 if n >= 1 else 0.0
    out[row, base + 1] = 1.0 if n >= 2 else 0.0
    out[row, base + 2] = 1.0 if n >= 3 else 0.0
    out[row, base + 3] = (n - 3) * 0.5 if n > 3 else 0.0


@njit(cache=True)
def _td198_kernel(boards, out):
    n = boards.shape[0]
    for i in range(n):
        mine_on = 0
        theirs_on = 0
        for p in range(1, NUM_POINTS + 1):
            v = boards[i, p]
            mine = v if v > 0 else 0
            # the opponent's point q is board index 25 - q
            w = boards[i, BAR - p]
            theirs = -w if w < 0 else 0
            mine_on += mine
            theirs_on += theirs
            _point_units(out, i, 4 * (p - 1), mine)
            _point_units(out, i, 96 + 4 * (p - 1), theirs)
        my_bar = boards[i, BAR]
        their_bar = -boards[i, OPP_BAR]
        out[i, 192] = my_bar * 0.5
        out[i, 193] = their_bar * 0.5
        out[i, 194] = (NUM_CHECKERS - mine_on - my_bar) / NUM_CHECKERS
        out[i, 195] = (NUM_CHECKERS - theirs_on - their_bar) / NUM_CHECKERS
        out[i, 196] = 1.0
        out[i, 197] = 0.0


def encode_td198(boards: np.ndarray) -> np.ndarray:
    """TD-Gammon's 198 raw inputs (``td198`` v1, layout in the module docstring).

    Args:
        boards: ``(N, 26)`` C-contiguous int8 boards, each from its side on roll's view.

    Returns:
        ``(N, 198)`` float32.
    """
    out = np.empty((boards.shape[0], 198), dtype=np.float32)
    _td198_kernel(boards, out)
    return out


TD198 = Encoder(name="td198", version=1, size=198, fn=encode_td198)

ENCODERS: dict[str, Encoder] = {TD198.name: TD198}


def get_encoder(name: str, version: int | None = None) -> Encoder:
    """Look up a registered encoder.

    Args:
        name: encoder name (see the module docstring's table).
        version: required version; ``None`` accepts the registered one.

    Raises:
        ValueError: if no encoder of that name, or not that version, is registered.
    """
    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}")
    enc = ENCODERS[name]
    if version is not None and version != enc.version:
        raise ValueError(f"encoder {name!r} is at version {enc.version}, but version {version} was asked for")
    return enc
