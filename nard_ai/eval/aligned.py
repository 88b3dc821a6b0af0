"""An evaluator whose answer for a board does not depend on the other boards of its batch.

Why: torch's CPU matrix multiply (MKL sgemm, torch 2.13) works on tiles of 16
rows, and the rows of a last, partial tile take another code path whose sums
round differently in the last bit. So a board evaluated in a batch of 20 can
get float32 probabilities one unit in the last place away from the same board
in a batch of 64 (measured 2026-12-02: 5.8% of the rows of 20-row batches
differ from the same rows in 64-row batches; every batch of a multiple of 16
rows agrees bit for bit with every other). The HTTP server evaluates
concurrent requests together (:mod:`nard_ai.interfaces.batching`) and promises
the same answer as for the request alone, to the last digit of its JSON.

:class:`BatchInvariantEvaluator` sends each network its rows in batches of a
multiple of :data:`ROW_TILE` rows: the boards are split by the MLP the
network routes them to (contact, crashed or race, :meth:`nard_ai.model.network.Network.predict_grouped`),
and each group is padded with copies of its first board. The padding costs at
most 15 boards per group and call. Evaluators without a network (pubeval,
random, test fakes) are called unchanged.

Threads: with torch on more than one thread, a batch of 32 rows or more is
split between the threads on some CPUs (measured 2026-12-02 on an AVX-512 AMD
EPYC: with 2 threads, 59 of 192 rows of 32-row batches differed from the same
rows in 16-row batches; with 1 thread none, at 16, 32, 48, 64 and 128 rows).
So the wrapped network runs on one torch thread during each call (the
calling thread's count is set to 1 and put back after).
"""

from __future__ import annotations

import sys

import numpy as np

from nard_ai.core.board import BOARD_SIZE

ROW_TILE = 16
"""Rows of MKL's sgemm tile (torch 2.13 CPU): a batch of a multiple of this many rows rounds each row
alike, whatever the batch (measured, module docstring; ``tests/test_batching.py`` checks it)."""

__all__ = ["BatchInvariantEvaluator", "ROW_TILE"]


class BatchInvariantEvaluator:
    """Wraps an evaluator so that ``evaluate(boards)[i]`` depends only on ``boards[i]``.

    Args:
        inner: any evaluator (:class:`nard_ai.eval.evaluator.Evaluator`); one with
            a ``network`` (:class:`nard_ai.eval.evaluator.NetworkEvaluator`) gets
            its rows padded per network, any other is called as it is.

    ``score_plays`` and ``probs6`` of the inner evaluator are offered unchanged
    where it has them (a search then ranks plays by them, as with the inner one).
    """

    def __init__(self, inner) -> None:
        self.inner = inner
        network = getattr(inner, "network", None)
        self._network = network if hasattr(network, "encoder") else None
        score_plays = getattr(inner, "score_plays", None)
        if score_plays is not None:
            self.score_plays = score_plays

    def _routes(self, boards: np.ndarray) -> np.ndarray | None:
        """The MLP each board goes to (:meth:`nard_ai.model.network.Network.routes`), or ``None`` when
        the network has one MLP."""
        routes = getattr(self._network, "routes", None)
        return None if routes is None else routes(boards)

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 26)`` int8 boards (side on roll's view) -> ``(N, 5)`` float32, as the inner evaluator's.

        Not validated here (search's hot path), as the inner evaluator.
        """
        if self._network is None:
            return self.inner.evaluate(boards)
        boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
        n = len(boards)
        if n == 0:
            return np.asarray(self.inner.evaluate(boards), dtype=np.float32)
        routes = self._routes(boards)
        groups = (
            [np.arange(n)] if routes is None else [np.flatnonzero(routes == r) for r in np.unique(routes)]
        )
        out = np.empty((n, 5), dtype=np.float32)
        torch = sys.modules.get("torch")  # loaded: the network is a torch module
        threads = torch.get_num_threads() if torch is not None else 1
        if threads != 1:
            torch.set_num_threads(1)
        try:
            for rows in groups:
                if len(rows) == 0:
                    continue
                group = boards[rows]
                pad = -len(rows) % ROW_TILE
                if pad:
                    group = np.concatenate([group, np.repeat(group[:1], pad, axis=0)])
                out[rows] = np.asarray(self.inner.evaluate(group), dtype=np.float32)[: len(rows)]
        finally:
            if threads != 1:
                torch.set_num_threads(threads)
        return out
