"""The ``Evaluator`` protocol and its implementations: network, pubeval, random.

An evaluator maps boards to outcome probabilities::

    evaluate(boards: (N, 26) int8) -> (N, 5) float32

Each board is in the layout of :mod:`nard_ai.core.board`, seen **from its side on
roll** (about to roll the dice), and the 5 numbers are gnubg's cumulative
probabilities for **that side**: win, win-gammon, win-backgammon,
lose-gammon, lose-backgammon (:mod:`nard_ai.model.network`). To value an afterstate
(the mover's board just after its play), search swaps it to the opponent's
view, evaluates, and inverts (:func:`nard_ai.search.lookahead.afterstate_probs`).

An evaluator may also offer ``score_plays(boards, afterstates, owner) -> (M,)``
(higher is better for the mover) when it ranks plays by something other than
the equity of its probabilities; search then uses that for move choice. Pubeval
does (it picks its weights from the position *before* the move), and so does
the random evaluator (uniformly random plays).

Lookahead (1-ply, 2-ply) will be an evaluator that wraps an evaluator.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numba
import numpy as np
from numba import njit

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS, swap_sides
from nard_ai.core.classes import has_contact, is_bearoff_row  # has_contact re-exported
from nard_ai.core.movegen import parallel_threads
from nard_ai.core.outcomes import exclusive_to_gnubg
from nard_ai.eval.bearoff import bearoff_probs_unchecked

if TYPE_CHECKING:  # the torch network loads with the first NetworkEvaluator, not with this module
    from nard_ai.model.network import Network

PARALLEL_MIN_PROBS = 4096
"""Batches of fewer boards convert the network's outcomes on one thread: about 0.1 µs a board,
so smaller batches gain less than starting the threads costs (see
:data:`nard_ai.model.encoding.PARALLEL_MIN_BOARDS`)."""

__all__ = [
    "Evaluator",
    "NetworkEvaluator",
    "PubevalEvaluator",
    "RandomEvaluator",
    "has_contact",
    "sanity_check",
    "pubeval_scores",
]


@runtime_checkable
class Evaluator(Protocol):
    """Boards ``(N, 26)`` int8 (side on roll's view) -> ``(N, 5)`` float32 gnubg-order probabilities for that side."""

    def evaluate(self, boards: np.ndarray) -> np.ndarray: ...


class NetworkEvaluator:
    """Evaluates boards with a :class:`nard_ai.model.network.Network` (one batched forward pass).

    Args:
        network: the network; it is put in eval mode for evaluation.
        bearoff: bear-off positions (both sides all home, no contact:
            :func:`nard_ai.core.classes.is_bearoff`) take the one-sided bear-off
            database's values instead of the network's (gnubg does the same);
            the database is loaded, or built once, on first use.
    """

    def __init__(self, network: Network, bearoff: bool = True) -> None:
        self.network = network
        self.bearoff = bearoff

    @classmethod
    def from_checkpoint(cls, path) -> NetworkEvaluator:
        """Load a checkpoint (see :func:`nard_ai.model.network.load_checkpoint`; raises ``ValueError`` on a bad file)."""
        from nard_ai.model.network import load_checkpoint

        return cls(load_checkpoint(path).network)

    def probs6(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 6)`` float32 exclusive outcome probabilities for the side on roll (may be a strided view)."""
        return self.network.probs6(boards)

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 26)`` boards -> ``(N, 5)`` float32 gnubg-order probabilities for the side on roll.

        One pass of compiled code turns the network's exclusive outcomes into
        gnubg's 5 numbers and zeroes the outcomes the position rules out
        (:func:`sanity_check`); with ``bearoff`` on, bear-off positions get
        the database's values (:func:`nard_ai.eval.bearoff.bearoff_probs`). The
        boards are not validated here (search's hot path); public entry
        points validate them first.
        """
        boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
        p6t, order = self.network.predict_grouped(boards)
        out = np.empty((len(boards), 5), dtype=np.float32)
        covered = np.zeros(len(boards), dtype=np.bool_)
        threads = parallel_threads()
        if len(boards) >= PARALLEL_MIN_PROBS and threads > 1:
            _network_probs_parallel(boards, p6t, order, self.bearoff, out, covered, threads)
        else:
            _network_probs_kernel(boards, p6t, order, self.bearoff, out, covered)
        if self.bearoff and covered.any():
            out[covered] = bearoff_probs_unchecked(boards[covered])
        return out


@njit(cache=True, inline="always")
def _sanity_row(b, win, wg, wb, lg, lb, out, r):
    # gnubg eval.c SanityCheck; see sanity_check's docstring
    mine_on = 0
    theirs_on = 0
    my_rear = -1
    opp_rear = BOARD_SIZE
    opp_in_my_home = False
    mine_in_their_home = False
    for j in range(BOARD_SIZE):
        v = b[j]
        if v > 0:
            mine_on += v
            my_rear = j
            if 19 <= j <= 24:
                mine_in_their_home = True
        elif v < 0:
            theirs_on -= v
            if opp_rear == BOARD_SIZE:
                opp_rear = j
            if 1 <= j <= 6:
                opp_in_my_home = True
    race = my_rear < opp_rear
    if theirs_on < NUM_CHECKERS:
        wg = np.float32(0.0)
        wb = np.float32(0.0)
    if mine_on < NUM_CHECKERS:
        lg = np.float32(0.0)
        lb = np.float32(0.0)
    if race and not opp_in_my_home:
        wb = np.float32(0.0)
    if race and not mine_in_their_home:
        lb = np.float32(0.0)
    win = min(win, np.float32(1.0))  # the outcomes' float32 sum can pass 1 by an ulp: no negative 1 - win
    wg = min(wg, win)
    wb = min(wb, wg)
    lg = min(lg, np.float32(1.0) - win)
    lb = min(lb, lg)
    out[r, 0] = win
    out[r, 1] = wg
    out[r, 2] = wb
    out[r, 3] = lg
    out[r, 4] = lb


@njit(cache=True, nogil=True)
def _sanity_kernel(boards, probs, out):
    for i in range(boards.shape[0]):
        _sanity_row(boards[i], probs[i, 0], probs[i, 1], probs[i, 2], probs[i, 3], probs[i, 4], out, i)


@njit(cache=True, inline="always")
def _network_probs_row(boards, p6t, i, r, bearoff, out, covered):
    # p6t[:, i] = exclusive outcomes (OUTCOMES order) of board r; gnubg's 5 numbers, sanity-checked
    wb = p6t[2, i]
    wg = p6t[1, i] + wb
    lb = p6t[5, i]
    win = p6t[0, i] + p6t[1, i] + wb
    lg = p6t[4, i] + lb
    _sanity_row(boards[r], win, wg, wb, lg, lb, out, r)
    if bearoff:
        covered[r] = is_bearoff_row(boards[r])


@njit(cache=True, nogil=True)
def _network_probs_kernel(boards, p6t, order, bearoff, out, covered):
    for i in range(order.shape[0]):
        _network_probs_row(boards, p6t, i, order[i], bearoff, out, covered)


@njit(cache=True, parallel=True)
def _network_probs_parallel(boards, p6t, order, bearoff, out, covered, chunks):
    # Each thread writes a contiguous range of output rows r (column inv[r] of p6t): split by the
    # input position instead, the two threads' rows would interleave and share cache lines.
    n = order.shape[0]
    inv = np.empty(n, dtype=np.int64)
    for i in range(n):
        inv[order[i]] = i
    per = (n + chunks - 1) // chunks
    for c in numba.prange(chunks):
        for r in range(c * per, min(n, (c + 1) * per)):
            _network_probs_row(boards, p6t, inv[r], r, bearoff, out, covered)


def sanity_check(boards: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Zero the outcomes a position rules out, in place (after gnubg's ``SanityCheck`` in eval.c).

    For each board (side on roll's view) and its gnubg-order probabilities:

    * the opponent has borne off a checker: the side on roll cannot win a
      gammon or backgammon (RULES.md §6: a gammon needs the loser to have
      borne off none);
    * the side on roll has borne off a checker: it cannot lose a gammon or
      backgammon;
    * no contact (a race): a side can be backgammoned only while it has a
      checker in the winner's home board (RULES.md §6), and in a race no
      checker moves back, so with none there now it cannot happen;
    * and the cumulative numbers stay ordered: win <= 1 (a network's float32
      sum of outcomes can pass 1 by an ulp, which left ``1 - win`` and so the
      lose-gammon bound a hair below 0), win-backgammon <= win-gammon <= win,
      lose-backgammon <= lose-gammon <= 1 - win.

    Args:
        boards: ``(N, 26)`` int8, side on roll's view.
        probs: ``(N, 5)`` float32 gnubg-order probabilities for the side on roll.

    Returns:
        ``probs``, corrected.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
    fixed = np.empty((len(boards), 5), dtype=np.float32)
    _sanity_kernel(boards, np.asarray(probs, dtype=np.float32), fixed)
    probs[...] = fixed
    return probs


def _pubeval_weights_path() -> Path:
    path = Path(__file__).resolve().parents[1] / "data" / "pubeval_weights.json"  # nard_ai/data/
    if not path.is_file():
        raise FileNotFoundError(f"pubeval_weights.json not found in nard_ai/data/ ({path})")
    return path


@njit(cache=True, nogil=True)
def _pubeval_kernel(afterstates, race, contact_w, race_w, out):
    for i in range(afterstates.shape[0]):
        b = afterstates[i]
        on = 0
        for j in range(1, BAR + 1):
            if b[j] > 0:
                on += b[j]
        if on == 0:
            # "A position with all own checkers off scores +infinity."
            out[i] = np.inf
            continue
        w = race_w if race[i] else contact_w
        s = 0.0
        # locations 24 down to 1: unit block k encodes board index 24 - k
        for k in range(24):
            n = b[24 - k]
            base = 5 * k
            if n == -1:
                s += w[base]
            elif n == 1:
                s += w[base + 1]
            elif n >= 2:
                s += w[base + 2]
                if n == 3:
                    s += w[base + 3]
                elif n >= 4:
                    s += w[base + 4] * (n - 3) * 0.5
        s += w[120] * (-b[0]) * 0.5
        s += w[121] * (NUM_CHECKERS - on) / NUM_CHECKERS
        out[i] = s


def pubeval_scores(afterstates: np.ndarray, race: np.ndarray, weights: dict[str, np.ndarray]) -> np.ndarray:
    """Tesauro's pubeval score of afterstates, for the side that just moved (higher is better).

    Args:
        afterstates: ``(M, 26)`` int8, the mover's view (not swapped).
        race: ``(M,)`` bool, use the race weights (pubeval: when the position
            *before* the move has no contact) instead of the contact weights.
        weights: ``{"contact": (122,), "race": (122,)}`` float64.

    Returns:
        ``(M,)`` float64; ``+inf`` where the mover has borne off everything.
    """
    out = np.empty(len(afterstates), dtype=np.float64)
    _pubeval_kernel(
        np.ascontiguousarray(afterstates, dtype=np.int8),
        np.ascontiguousarray(race, dtype=np.bool_),
        weights["contact"],
        weights["race"],
        out,
    )
    return out


class PubevalEvaluator:
    """Tesauro's pubeval (1993), the classic benchmark, from ``nard_ai/data/pubeval_weights.json``.

    Pubeval is a move chooser: a linear score of the position after the move,
    from the mover's side, with race weights when the position before the
    move has no contact. :meth:`score_plays` is exactly that and is what
    search uses to choose plays. :meth:`evaluate` exists to satisfy the
    :class:`Evaluator` protocol: it scores the board from the side that just
    moved (the side *not* on roll), choosing the weights by the board's own
    contact, and maps the score to a pseudo win probability
    ``1 - sigmoid(score)`` for the side on roll with no gammons. That number is
    monotone in the score but not calibrated; do not read it as a real
    probability.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        data = json.loads(Path(path or _pubeval_weights_path()).read_text())
        self.weights = {k: np.asarray(data[k], dtype=np.float64) for k in ("contact", "race")}
        if any(w.shape != (122,) for w in self.weights.values()):
            raise ValueError("pubeval weights must be two lists of 122 numbers ('contact' and 'race')")

    def score_plays(self, boards: np.ndarray, afterstates: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """Pubeval scores ``(M,)`` of afterstates; ``boards[owner]`` is each one's position before the move."""
        race = ~has_contact(boards)[owner]
        return pubeval_scores(afterstates, race, self.weights)

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """Pseudo-probabilities ``(N, 5)`` float32 for the side on roll (see the class docstring)."""
        movers = swap_sides(np.asarray(boards, dtype=np.int8))
        score = pubeval_scores(movers, ~has_contact(movers), self.weights)
        with np.errstate(over="ignore"):
            mover_win = 1.0 / (1.0 + np.exp(-np.clip(score, -50.0, None)))
        out = np.zeros((len(boards), 5), dtype=np.float32)
        out[:, 0] = 1.0 - mover_win
        return out


class RandomEvaluator:
    """Random probabilities; as a move chooser it picks a uniformly random legal play.

    Args:
        seed: seed (a non-negative integer, a sequence of them, or ``None``
            for fresh entropy) or ``np.random.Generator``; randomness is
            explicit, never global.

    Raises:
        ValueError: on a seed numpy cannot use.
    """

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        if isinstance(seed, np.random.Generator):
            self.rng = seed
            return
        try:
            self.rng = np.random.default_rng(seed)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"seed must be a non-negative integer or a numpy Generator, got {seed!r}"
            ) from exc

    def score_plays(self, boards: np.ndarray, afterstates: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """Independent uniform scores ``(M,)``: the argmax per position is a uniformly random play."""
        return self.rng.random(len(afterstates))

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """Random consistent probabilities ``(N, 5)`` float32 (a flat Dirichlet over the 6 outcomes)."""
        p6 = self.rng.dirichlet(np.ones(6), size=len(boards)).astype(np.float32)
        return exclusive_to_gnubg(p6)
