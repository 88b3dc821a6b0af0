"""The first network layer over TD-Gammon's point units as an embedding lookup (compiled).

A network over the ``td198``, ``rich``, ``expert`` or ``expert_race`` encoder (:mod:`nard_ai.model.encoding`)
starts with ``h = W x + b``. TD-Gammon's 192 point units come in groups of
four per (point, side) whose values depend only on the checker count ``n``
on that point (``n >= 1``, ``n >= 2``, ``n >= 3``, ``(n - 3) / 2``). So the
four columns of a group times the four units is one of 16 vectors, one per
``n`` in 0..15, and the point units' part of ``W x`` is a sum of table rows,
one per occupied point (an "embedding bag")::

    table[slot, n] = sum_k W[:, 4 slot + k] * unit_k(n)     (slot 0..47)
    W x = sum over occupied (slot, n) of table[slot, n] + W_dense x_dense

where ``x_dense`` are the remaining inputs: the bar and borne-off units
(192..195) and, for ``rich``, units 198..220 (for ``expert``, 198..270; for
``expert_race``, 198..311); the
constant unit 196 (always 1) joins the bias and unit 197 (always 0) drops
out. A typical position has about 14 occupied points, so the lookup replaces
192 multiply-adds per hidden unit by about 14 adds, and the dense part is a
27-column matrix product (77 for ``expert``). The arithmetic is the same first layer; only the order of the
float32 sums differs (agreement with the plain layer to about 1e-6).

:func:`first_layer` computes, for a batch of boards, the lookup sum plus the
bias ``(N, H)`` and the dense inputs ``(N, D)`` in one pass (the ``rich``
features come from the encoder's own functions), and for ``expert`` a second
pass writes gnubg's inputs with :func:`nard_ai.model.expert.expert_inputs_into`
(the function the encoder uses; for ``expert_race`` a third, the race inputs with
:func:`nard_ai.model.race_inputs.race_inputs_into`); the caller adds ``x_dense @ W_dense.T``
(:class:`nard_ai.model.network.Network` does it with torch).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS, NUM_POINTS
from nard_ai.model.encoding import (
    ESCAPES_BY_POINT,
    EXPERT_RACE_SIZE,
    EXPERT_SIZE,
    RICH_SIDE_FEATURES,
    _side_features,
)
from nard_ai.model.expert import HALF_INPUTS, expert_inputs_into
from nard_ai.model.race_inputs import race_inputs_into

__all__ = ["SLOTS", "MAX_COUNT", "CONSTANT_UNIT", "dense_columns", "unit_values", "first_layer"]

SLOTS = 2 * NUM_POINTS
"""(point, side) groups of four point units: slot ``p - 1`` is the side on roll's point ``p``,
slot ``24 + q - 1`` the opponent's point ``q`` (its own numbering), as in ``td198``."""

MAX_COUNT = NUM_CHECKERS
"""The most checkers of one side on a point; a table has ``MAX_COUNT + 1`` rows per slot."""

_TD_DENSE = (192, 193, 194, 195)  # bar / 2 and borne off / 15, each side
CONSTANT_UNIT = 196  # TD-Gammon's "side on roll" unit: always 1 in nard_ai (encoding module docstring)
_RICH_FIRST, _RICH_END = 198, 221
_RICH_WIDTH = len(_TD_DENSE) + _RICH_END - _RICH_FIRST  # dense columns of a rich network


def dense_columns(encoder_name: str) -> list[int]:
    """Input units that :func:`first_layer` hands back as dense inputs, in its column order.

    Raises:
        ValueError: for an encoder other than ``td198``, ``rich``, ``expert`` and ``expert_race``.
    """
    if encoder_name == "td198":
        return list(_TD_DENSE)
    if encoder_name == "rich":
        return list(_TD_DENSE) + list(range(_RICH_FIRST, _RICH_END))
    if encoder_name == "expert":
        return list(_TD_DENSE) + list(range(_RICH_FIRST, EXPERT_SIZE))
    if encoder_name == "expert_race":
        return list(_TD_DENSE) + list(range(_RICH_FIRST, EXPERT_RACE_SIZE))
    raise ValueError(
        f"no embedding form for encoder {encoder_name!r} (td198, rich, expert and expert_race only)"
    )


def unit_values() -> np.ndarray:
    """``(16, 4)`` float32: TD-Gammon's four point units for ``n`` = 0..15 checkers (encoding module docstring)."""
    n = np.arange(MAX_COUNT + 1, dtype=np.float32)
    return np.stack([n >= 1, n >= 2, n >= 3, np.where(n > 3, (n - 3) / 2, 0)], axis=1).astype(np.float32)


@njit(cache=True, nogil=True)
def _rows(boards, rich, table, bias, pre, dense, start, stop):
    # scratch allocated here, per call: one thread's rows never share a cache line with another's
    hidden = bias.shape[0]
    acc = np.empty(hidden, dtype=np.float32)
    swapped = np.empty(BOARD_SIZE, dtype=np.int8)
    occupied = np.empty(2 * NUM_POINTS + 1, dtype=np.int64)
    flat = table.reshape(table.shape[0] * table.shape[1], hidden)  # row slot * 16 + n
    for i in range(start, stop):
        b = boards[i]
        for k in range(hidden):
            acc[k] = bias[k]
        # the occupied (slot, count) rows in order, gathered without branches (the board's pattern
        # defeats branch prediction), then summed: the same float32 additions in the same order
        mine_on = 0
        theirs_on = 0
        n = 0
        for p in range(1, NUM_POINTS + 1):
            pos = max(np.int64(b[p]), np.int64(0))
            mine_on += pos
            occupied[n] = (p - 1) * (MAX_COUNT + 1) + pos
            n += np.int64(pos > 0)
            neg = max(-np.int64(b[BAR - p]), np.int64(0))  # the opponent's point p is board index 25 - p
            theirs_on += neg
            occupied[n] = (NUM_POINTS + p - 1) * (MAX_COUNT + 1) + neg
            n += np.int64(neg > 0)
        for j in range(n):
            r = occupied[j]
            for k in range(hidden):
                acc[k] += flat[r, k]
        for k in range(hidden):
            pre[i, k] = acc[k]
        my_bar = b[BAR]
        their_bar = -b[0]
        dense[i, 0] = my_bar * 0.5
        dense[i, 1] = their_bar * 0.5
        dense[i, 2] = (NUM_CHECKERS - mine_on - my_bar) / NUM_CHECKERS
        dense[i, 3] = (NUM_CHECKERS - theirs_on - their_bar) / NUM_CHECKERS
        if rich:
            for j in range(BOARD_SIZE):
                swapped[j] = -b[BOARD_SIZE - 1 - j]
            contact = _side_features(b, ESCAPES_BY_POINT, dense, i, 4)
            _side_features(swapped, ESCAPES_BY_POINT, dense, i, 4 + RICH_SIDE_FEATURES)
            dense[i, 4 + 2 * RICH_SIDE_FEATURES] = 0.0 if contact else 1.0


@njit(cache=True, nogil=True)
def _serial(boards, rich, table, bias, pre, dense):
    _rows(boards, rich, table, bias, pre, dense, 0, boards.shape[0])


@njit(cache=True, parallel=True)
def _parallel(boards, rich, table, bias, pre, dense, chunks):
    n = boards.shape[0]
    per = (n + chunks - 1) // chunks
    for c in numba.prange(chunks):
        _rows(boards, rich, table, bias, pre, dense, c * per, min(n, (c + 1) * per))


def first_layer(
    boards: np.ndarray,
    rich: bool,
    table: np.ndarray,
    bias: np.ndarray,
    threads: int = 1,
    *,
    expert: bool = False,
    race_inputs: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The point units' part of a first layer, plus the bias, and the dense inputs, for a batch.

    Args:
        boards: ``(N, 26)`` C-contiguous int8 valid boards, each from its
            side on roll's view (not checked: a count above 15 would read
            past the table).
        rich: the network reads the ``rich`` encoder (else ``td198``).
        table: ``(48, 16, H)`` float32, ``table[slot, n]`` as in the module docstring.
        bias: ``(H,)`` float32, the layer's bias plus the constant unit's column.
        threads: parallel chunks (1 = serial).
        expert: the network reads the ``expert`` encoder (``rich`` plus gnubg's
            inputs; ``rich`` is then implied).
        race_inputs: the network reads ``expert_race`` (``expert`` plus the race inputs of
            :mod:`nard_ai.model.race_inputs`; ``expert`` is then implied).

    Returns:
        ``(pre (N, H) float32, dense (N, D) float32)``: ``pre + dense @
        W[:, dense_columns].T`` is the layer's pre-activation ``W x + b``;
        ``dense`` holds the inputs of :func:`dense_columns`, equal to the
        encoder's units there.
    """
    n = boards.shape[0]
    hidden = bias.shape[0]
    expert = expert or race_inputs
    rich = rich or expert
    name = "expert_race" if race_inputs else "expert" if expert else "rich" if rich else "td198"
    width = len(dense_columns(name))
    pre = np.empty((n, hidden), dtype=np.float32)
    dense = np.empty((n, width), dtype=np.float32)
    chunks = max(1, min(threads, n))
    if chunks > 1:
        _parallel(boards, rich, table, bias, pre, dense, chunks)
    else:
        _serial(boards, rich, table, bias, pre, dense)
    if expert:
        expert_inputs_into(boards, dense, _RICH_WIDTH, chunks)
    if race_inputs:
        race_inputs_into(boards, dense, _RICH_WIDTH + 2 * HALF_INPUTS, chunks)
    return pre, dense
