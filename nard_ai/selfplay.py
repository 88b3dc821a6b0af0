"""TD(lambda) self-play: many games in lockstep, one batched network call per ply.

:func:`play_round` plays a fixed number of self-play games with a pool of
``pool`` concurrent slots. Every ply, all active games' legal plays go through
the search (:func:`nard_ai.search.select_plays_unchecked`, 0-ply by default: one move-generator call
and one network forward pass over all afterstates of all games), each game
takes its greedy best play (exploration comes from the dice, as in
TD-Gammon), and the chosen afterstate's value for the mover is recorded as
that ply's one-step target. When a game ends, its lambda-return targets are
computed (:mod:`nard_ai.learn`, forward view) and its states join a sample
buffer; the buffer is shuffled and consumed in minibatches of ``batch_size``,
one Adam step each, as soon as it holds ``4 * batch_size`` samples. A freed
slot starts a new game until ``games`` have started; then the pool drains and
the buffer is flushed. A round therefore ends with no game in flight, so a
checkpoint taken between rounds (weights, optimizer, game counter, RNG) resumes
*exactly*: training ``a + b`` games in one run or in two runs gives the same
weights.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import numpy as np

from .board import BOARD_SIZE, game_result_unchecked, starting_board, swap_sides_unchecked
from .evaluator import NetworkEvaluator
from .game import opening_roll, roll_dice
from .learn import Learner, lambda_returns
from .network import gnubg_to_exclusive
from .rules import Rules
from .search import STANDARD_RULES, select_plays_unchecked

__all__ = ["RoundStats", "play_round", "rng_state", "rng_from_state"]

MAX_PLIES = 5000  # a safety net: a real game is far shorter


@dataclass
class RoundStats:
    """What one round of self-play did.

    Attributes:
        games: games finished.
        plies: plies played (one play by one side = one ply).
        results: ``(3,)`` count of singles, gammons, backgammons.
        first_player_points: points won by the side that moved first, summed.
        samples: training samples (pre-roll states) consumed.
        updates: gradient steps taken.
        loss_sum: sum of the per-step losses (``loss_sum / updates`` = mean).
        seconds: wall time.
        positions: afterstates evaluated.
        interrupted: the round was stopped early (``should_stop``).
    """

    games: int = 0
    plies: int = 0
    results: np.ndarray = field(default_factory=lambda: np.zeros(3, dtype=np.int64))
    first_player_points: int = 0
    samples: int = 0
    updates: int = 0
    loss_sum: float = 0.0
    seconds: float = 0.0
    positions: int = 0
    interrupted: bool = False

    @property
    def mean_loss(self) -> float:
        return self.loss_sum / max(self.updates, 1)


class _SampleBuffer:
    """Finished games' (board, target) pairs, shuffled and cut into minibatches."""

    def __init__(
        self, learner: Learner, batch_size: int, rng: np.random.Generator, stats: RoundStats
    ) -> None:
        self.learner, self.batch_size, self.rng, self.stats = learner, batch_size, rng, stats
        self.boards: list[np.ndarray] = []
        self.targets: list[np.ndarray] = []
        self.count = 0

    def add(self, boards: np.ndarray, targets: np.ndarray) -> None:
        self.boards.append(boards)
        self.targets.append(targets)
        self.count += len(boards)
        if self.count >= 4 * self.batch_size:
            self._train(flush=False)

    def flush(self) -> None:
        if self.count:
            self._train(flush=True)

    def _train(self, flush: bool) -> None:
        boards = np.concatenate(self.boards)
        targets = np.concatenate(self.targets)
        order = self.rng.permutation(len(boards))
        n_full = len(boards) // self.batch_size
        stop = len(boards) if flush else n_full * self.batch_size
        for start in range(0, stop, self.batch_size):
            sel = order[start : min(start + self.batch_size, stop)]
            self.stats.loss_sum += self.learner.update(boards[sel], targets[sel])
            self.stats.updates += 1
            self.stats.samples += len(sel)
        rest = order[stop:]
        self.boards, self.targets, self.count = [boards[rest]], [targets[rest]], len(rest)


def rng_state(rng: np.random.Generator) -> dict:
    """A generator's state as plain values (JSON text), for checkpoints."""
    return {"numpy": json.dumps(rng.bit_generator.state)}


def rng_from_state(state: dict) -> np.random.Generator:
    """Rebuild a generator saved by :func:`rng_state` (PCG64, numpy's default)."""
    saved = json.loads(state["numpy"])
    bit_generator = getattr(np.random, saved["bit_generator"])()
    bit_generator.state = saved
    return np.random.Generator(bit_generator)


def play_round(
    learner: Learner,
    games: int,
    rng: np.random.Generator,
    *,
    pool: int = 512,
    lam: float = 0.7,
    batch_size: int = 512,
    rules: Rules = STANDARD_RULES,
    ply: int = 0,
    stats: RoundStats | None = None,
    on_games=None,
    should_stop=None,
) -> RoundStats:
    """Play ``games`` self-play games in lockstep and train on them as they finish.

    Args:
        learner: the network and its optimizer; updated in place.
        games: games to play in this round.
        rng: the only source of randomness (dice, buffer shuffling).
        pool: games in flight at once (the batch of each network call is all
            their afterstates).
        lam: TD lambda (see :mod:`nard_ai.learn`).
        batch_size: samples per gradient step.
        rules: rule settings.
        ply: search depth of the move choice (gnubg numbering, 0..2). The
            recorded one-step target is the chosen play's value at that
            depth, so ``ply=1`` trains on 1-ply lookahead targets (and is
            about two orders of magnitude slower per game).
        stats: a :class:`RoundStats` to fill in (so a caller interrupted
            mid-round still sees what was done); a new one by default.
        on_games: optional callable ``on_games(n)`` told each time ``n`` more
            games finish (for progress bars).
        should_stop: optional callable checked once per ply; when it returns
            true the round stops at once: games in flight are dropped, the
            finished games' samples are still trained on, and
            ``stats.interrupted`` is set.

    Returns:
        The :class:`RoundStats`.
    """
    t0 = time.perf_counter()
    stats = RoundStats() if stats is None else stats
    buffer = _SampleBuffer(learner, batch_size, rng, stats)
    evaluator = NetworkEvaluator(learner.network)
    slots = min(pool, games)
    if slots <= 0:
        return stats
    length = 256
    boards = np.zeros((slots, BOARD_SIZE), dtype=np.int8)
    dice = np.zeros((slots, 2), dtype=np.int8)
    game_ply = np.zeros(slots, dtype=np.int64)
    active = np.zeros(slots, dtype=bool)
    traj_boards = np.zeros((slots, length, BOARD_SIZE), dtype=np.int8)
    traj_y = np.zeros((slots, length, 6), dtype=np.float32)
    start_board = starting_board()

    def start(where: np.ndarray) -> None:
        boards[where] = start_board
        _, dice[where] = opening_roll(len(where), rng)
        game_ply[where] = 0
        active[where] = True

    start(np.arange(slots))
    started = slots
    while True:
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        if should_stop is not None and should_stop():
            stats.interrupted = True
            break
        sel = select_plays_unchecked(evaluator, boards[idx], dice[idx], rules, ply=ply)
        stats.positions += int(sel.num_plays.sum())
        t = game_ply[idx]
        if t.max() >= length:
            if length >= MAX_PLIES:
                raise RuntimeError(f"a self-play game passed {MAX_PLIES} plies")
            traj_boards = np.concatenate([traj_boards, np.zeros_like(traj_boards)], axis=1)
            traj_y = np.concatenate([traj_y, np.zeros_like(traj_y)], axis=1)
            length *= 2
        traj_boards[idx, t] = boards[idx]
        traj_y[idx, t] = gnubg_to_exclusive(sel.probs)
        game_ply[idx] += 1
        stats.plies += len(idx)

        fin = sel.finished
        done = idx[fin]
        if len(done):
            lengths = game_ply[done]
            longest = int(lengths.max())
            targets = lambda_returns(traj_y[done, :longest], lengths, lam)
            mask = np.arange(longest)[None, :] < lengths[:, None]
            buffer.add(traj_boards[done, :longest][mask], targets[mask])
            points = game_result_unchecked(sel.afterstates[fin])  # > 0: the mover won
            stats.games += len(done)
            np.add.at(stats.results, points - 1, 1)
            # the first mover is on roll at even plies; the winner made the last ply
            first_won = (lengths - 1) % 2 == 0
            stats.first_player_points += int(np.where(first_won, points, -points).sum())
            if on_games is not None:
                on_games(len(done))

        cont = idx[~fin]
        boards[cont] = swap_sides_unchecked(sel.afterstates[~fin])
        dice[cont] = roll_dice(len(cont), rng)
        k = min(len(done), games - started)
        if k:
            start(done[:k])
            started += k
        active[done[k:]] = False
    buffer.flush()
    stats.seconds = time.perf_counter() - t0
    return stats
