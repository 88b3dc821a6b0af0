"""Large batches take the kernels' threaded paths; small ones run on one thread. Both give the same numbers.

The per-board kernels (encoding, the first layer as a lookup, the outcome
conversion) switch to numba's threads only above a batch size
(:data:`nard_ai.model.encoding.PARALLEL_MIN_BOARDS`,
:data:`nard_ai.eval.evaluator.PARALLEL_MIN_PROBS`). Each board's numbers depend on
that board alone, so a batch above the thresholds must equal the same boards
evaluated in chunks below them, exactly (same float32 operations per row).
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from nard_ai import legal_plays_batch, starting_board
from nard_ai.core.board import swap_sides_unchecked
from nard_ai.eval.evaluator import PARALLEL_MIN_PROBS, NetworkEvaluator
from nard_ai.model.encoding import PARALLEL_MIN_BOARDS, encode_rich
from nard_ai.model.network import default_checkpoint_path, load_checkpoint

pytestmark = pytest.mark.skipif(numba.get_num_threads() < 2, reason="needs two numba threads")


def _boards(n: int, seed: int = 3) -> np.ndarray:
    """At least ``n`` afterstates of random play (opponent's view), contact and race."""
    rng = np.random.default_rng(seed)
    boards = np.tile(starting_board(), (64, 1))
    out, total = [], 0
    while total < n:
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        plays, owner = legal_plays_batch(boards, dice, sort=False)
        out.append(swap_sides_unchecked(plays))
        total += len(plays)
        pick = np.array([rng.choice(np.flatnonzero(owner == i)) for i in range(len(boards))])
        chosen = plays[pick]
        alive = (chosen > 0).any(axis=1)
        boards = swap_sides_unchecked(chosen[alive])
        if len(boards) == 0:
            boards = np.tile(starting_board(), (64, 1))
    return np.ascontiguousarray(np.concatenate(out)[:n])


def _in_chunks(fn, boards: np.ndarray, chunk: int) -> np.ndarray:
    return np.concatenate([fn(boards[i : i + chunk]) for i in range(0, len(boards), chunk)])


def test_threaded_encoding_equals_one_thread():
    boards = _boards(2 * PARALLEL_MIN_BOARDS + 7)
    np.testing.assert_array_equal(
        encode_rich(boards), _in_chunks(encode_rich, boards, PARALLEL_MIN_BOARDS - 1)
    )


def test_threaded_evaluation_equals_one_thread():
    evaluator = NetworkEvaluator(load_checkpoint(default_checkpoint_path()).network)
    boards = _boards(PARALLEL_MIN_PROBS + 11)
    whole = evaluator.evaluate(boards)
    chunked = _in_chunks(evaluator.evaluate, boards, PARALLEL_MIN_BOARDS - 1)
    # torch's matrix products may sum in another order for another batch size: float32 rounding only
    np.testing.assert_allclose(whole, chunked, rtol=0, atol=2e-6)
