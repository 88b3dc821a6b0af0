"""TD(lambda) self-play: many games in lockstep, one batched network call per ply.

:func:`play_round` plays a fixed number of self-play games with a pool of
``pool`` concurrent slots. Every ply, all active games' legal plays go through
the search (:func:`nard_ai.search.lookahead.select_plays_unchecked`, 0-ply by default: one move-generator call
and one network forward pass over all afterstates of all games), each game
takes its greedy best play (exploration comes from the dice, as in
TD-Gammon), and the chosen afterstate's value for the mover is recorded as
that ply's one-step target. When a game ends, its lambda-return targets are
computed (:mod:`nard_ai.model.learn`, forward view) and its states join a sample
buffer; the buffer is shuffled and consumed in minibatches of ``batch_size``,
one Adam step each, as soon as it holds ``4 * batch_size`` samples. A freed
slot starts a new game until ``games`` have started; then the pool drains and
the buffer is flushed. A round therefore ends with no game in flight, so a
checkpoint taken between rounds (weights, optimizer, game counter, RNG) resumes
*exactly*: training ``a + b`` games in one run or in two runs gives the same
weights.

Workers
-------
With ``workers = 1`` everything runs on the calling thread, and a gradient
step takes effect from the next ply on. With ``workers = W > 1`` the pool and
the games are split into ``W`` shards, each with its own dice generator
(seeded from ``rng``). Play goes in epochs of :data:`EPOCH_PLIES` plies: each
shard plays an epoch in its own Python thread
(:func:`nard_ai.core.movegen.serial_kernels`: one numba thread each; torch on
one thread too, set as each thread starts, :func:`_one_torch_thread`; the
kernels and torch release the GIL) with a copy of the network, while another thread
takes the gradient steps due at the epoch's start; at the epoch's end the
finished games' samples are collected in shard order and the new weights are
copied into the search network. So a step takes effect up to two epochs later
than with one worker. Every exchange between the threads happens at these
fixed points, so the result depends on the seed and ``workers``, never on
timing: still deterministic, and still exact on resume. On this project's
2-core machine two workers keep both cores busier than numba's and torch's
own thread pools do on self-play's per-ply batches (README, the "Self-play speed" paragraph).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch

from nard_ai.core.board import BOARD_SIZE, game_result_unchecked, starting_board
from nard_ai.core.game import opening_roll, roll_dice
from nard_ai.core.movegen import serial_kernels
from nard_ai.core.rules import Rules
from nard_ai.eval.evaluator import NetworkEvaluator
from nard_ai.model.learn import Learner, lambda_returns
from nard_ai.model.network import Network, gnubg_to_exclusive
from nard_ai.play.lockstep import Lockstep
from nard_ai.search.lookahead import STANDARD_RULES, select_plays_unchecked

__all__ = [
    "RoundStats",
    "play_round",
    "rng_state",
    "rng_from_state",
    "ShardRunner",
    "ThreadShardRunner",
    "WorkerLost",
    "search_copy",
    "sync_weights",
    "EPOCH_PLIES",
]


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

    def add(self, boards: np.ndarray, targets: np.ndarray, train: bool = True) -> None:
        """Add samples; with ``train``, take the gradient steps that are due (:meth:`take_due`)."""
        self.boards.append(boards)
        self.targets.append(targets)
        self.count += len(boards)
        if train:
            self.train(self.take_due())

    def take_due(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Once ``4 * batch_size`` samples wait: every full minibatch, shuffled, taken out of the
        buffer (the rest stays); else nothing."""
        return self._take(flush=False) if self.count >= 4 * self.batch_size else []

    def flush(self) -> None:
        """Train on everything left (the last minibatch may be short)."""
        if self.count:
            self.train(self._take(flush=True))

    def _take(self, flush: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        boards = np.concatenate(self.boards)
        targets = np.concatenate(self.targets)
        order = self.rng.permutation(len(boards))
        n_full = len(boards) // self.batch_size
        stop = len(boards) if flush else n_full * self.batch_size
        batches = []
        for start in range(0, stop, self.batch_size):
            sel = order[start : min(start + self.batch_size, stop)]
            batches.append((boards[sel], targets[sel]))
        rest = order[stop:]
        self.boards, self.targets, self.count = [boards[rest]], [targets[rest]], len(rest)
        return batches

    def train(self, batches: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """One gradient step per minibatch, in order."""
        for boards, targets in batches:
            self.stats.loss_sum += self.learner.update(boards, targets)
            self.stats.updates += 1
            self.stats.samples += len(boards)


def rng_state(rng: np.random.Generator) -> dict:
    """A generator's state as plain values (JSON text), for checkpoints."""
    return {"numpy": json.dumps(rng.bit_generator.state)}


def rng_from_state(state: dict) -> np.random.Generator:
    """Rebuild a generator saved by :func:`rng_state` (PCG64, numpy's default).

    Raises:
        ValueError: on a state that is not one :func:`rng_state` writes.
    """
    try:
        saved = json.loads(state["numpy"])
        name = saved["bit_generator"]
        if name not in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"):
            raise ValueError(f"unknown bit generator {name!r}")
        bit_generator = getattr(np.random, name)()
        bit_generator.state = saved
    except (KeyError, TypeError, ValueError, OverflowError) as exc:  # json.JSONDecodeError is a ValueError
        raise ValueError(f"not a saved RNG state ({type(exc).__name__}: {exc})") from exc
    return np.random.Generator(bit_generator)


@dataclass
class _Finished:
    """The games one shard finished in one ply: their training samples and results."""

    boards: np.ndarray  # (S, 26) int8 pre-roll states of all plies of these games
    targets: np.ndarray  # (S, 6) float32 lambda-return targets
    points: np.ndarray  # (G,) int64 result for the side that made the last play
    lengths: np.ndarray  # (G,) int64 plies of each game


class _Shard:
    """A group of self-play slots that play in lockstep: boards, dice, trajectories, own dice generator.

    Args:
        slots: games in flight at once.
        games: games this shard plays in all.
        rng: its dice generator.
    """

    def __init__(self, slots: int, games: int, rng: np.random.Generator, rules: Rules, ply: int, lam: float):
        self.games, self.rng, self.rules, self.ply, self.lam = games, rng, rules, ply, lam
        self.length = 256
        self.lock = Lockstep(slots, what="self-play game")  # boards, plies, running games
        self.boards, self.game_ply, self.active = self.lock.boards, self.lock.ply, self.lock.running
        self.dice = np.zeros((slots, 2), dtype=np.int8)
        self.traj_boards = np.zeros((slots, self.length, BOARD_SIZE), dtype=np.int8)
        self.traj_y = np.zeros((slots, self.length, 6), dtype=np.float32)
        self.started = 0
        self._start_board = starting_board()
        self._start(np.arange(slots))
        self._pending = None

    def _start(self, where: np.ndarray) -> None:
        self.lock.start(where, self._start_board)
        _, self.dice[where] = opening_roll(len(where), self.rng)
        self.started += len(where)

    @property
    def running(self) -> bool:
        return bool(self.active.any())

    def search(self, evaluator: NetworkEvaluator) -> tuple[int, int, _Finished | None]:
        """Choose every active game's play; returns ``(positions evaluated, plies, finished games)``.

        The boards are not advanced until :meth:`advance` (so the caller can
        train in between, as the one-worker loop does)."""
        idx = np.flatnonzero(self.active)
        sel = select_plays_unchecked(evaluator, self.boards[idx], self.dice[idx], self.rules, ply=self.ply)
        t = self.game_ply[idx]  # plies played before this one: the trajectory's row
        if t.max() >= self.length:  # (the Lockstep stops a game past MAX_PLIES plies)
            self.traj_boards = np.concatenate([self.traj_boards, np.zeros_like(self.traj_boards)], axis=1)
            self.traj_y = np.concatenate([self.traj_y, np.zeros_like(self.traj_y)], axis=1)
            self.length *= 2
        self.traj_boards[idx, t] = self.boards[idx]
        self.traj_y[idx, t] = gnubg_to_exclusive(sel.probs)
        fin = sel.finished
        done = idx[fin]
        finished = None
        if len(done):
            lengths = self.game_ply[done] + 1
            longest = int(lengths.max())
            targets = lambda_returns(self.traj_y[done, :longest], lengths, self.lam)
            mask = np.arange(longest)[None, :] < lengths[:, None]
            finished = _Finished(
                boards=self.traj_boards[done, :longest][mask],
                targets=targets[mask],
                points=game_result_unchecked(sel.afterstates[fin]),  # > 0: the mover won
                lengths=lengths,
            )
        self._pending = (idx, sel.afterstates, fin)
        return int(sel.num_plays.sum()), len(idx), finished

    def advance(self) -> None:
        """Apply the plays chosen by :meth:`search`: roll for the games that go on, start new games in
        freed slots while this shard has games left."""
        idx, afterstates, _ = self._pending
        self._pending = None
        fin, _ = self.lock.play(idx, afterstates)  # the ply counted, the other boards turned round
        done = idx[fin]
        cont = idx[~fin]
        self.dice[cont] = roll_dice(len(cont), self.rng)
        k = min(len(done), self.games - self.started)
        if k:
            self._start(done[:k])

    def play(self, evaluator: NetworkEvaluator, plies: int) -> list[tuple[int, int, _Finished | None]]:
        """Up to ``plies`` plies (:meth:`search` then :meth:`advance` each) on one numba thread, for a
        worker thread; stops early when the shard has no game left. One result per ply played."""
        results = []
        with serial_kernels():
            for _ in range(plies):
                if not self.running:
                    break
                results.append(self.search(evaluator))
                self.advance()
        return results


def _record(stats: RoundStats, positions: int, plies: int, finished: _Finished | None, on_games) -> None:
    stats.positions += positions
    stats.plies += plies
    if finished is None:
        return
    points, lengths = finished.points, finished.lengths
    stats.games += len(points)
    np.add.at(stats.results, points - 1, 1)
    # the first mover is on roll at even plies; the winner made the last ply
    first_won = (lengths - 1) % 2 == 0
    stats.first_player_points += int(np.where(first_won, points, -points).sum())
    if on_games is not None:
        on_games(len(points))


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (k < total % parts) for k in range(parts)]


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
    workers: int = 1,
    stats: RoundStats | None = None,
    on_games=None,
    should_stop=None,
    runner: ShardRunner | None = None,
    max_restarts: int = 3,
) -> RoundStats:
    """Play ``games`` self-play games in lockstep and train on them as they finish.

    Args:
        learner: the network and its optimizer; updated in place.
        games: games to play in this round.
        rng: the only source of randomness (dice, buffer shuffling; with
            ``workers > 1`` it seeds the shards' dice generators).
        pool: games in flight at once (the batch of each network call is all
            their afterstates; split between the shards).
        lam: TD lambda (see :mod:`nard_ai.model.learn`).
        batch_size: samples per gradient step.
        rules: rule settings.
        ply: search depth of the move choice (gnubg numbering, 0..2). The
            recorded one-step target is the chosen play's value at that
            depth, so ``ply=1`` trains on 1-ply lookahead targets (and is
            about two orders of magnitude slower per game).
        workers: Python threads that play the games (module docstring,
            "Workers"); the results depend on it. With more than one, torch
            runs on one thread per caller for the round (its thread count is
            restored after).
        stats: a :class:`RoundStats` to fill in (so a caller interrupted
            mid-round still sees what was done); a new one by default.
        on_games: optional callable ``on_games(n)`` told each time ``n`` more
            games finish (for progress bars).
        should_stop: optional callable checked once per ply; when it returns
            true the round stops at once: games in flight are dropped, the
            finished games' samples are still trained on, and
            ``stats.interrupted`` is set.
        runner: where the shards of ``workers > 1`` play their epochs (a :class:`ShardRunner`;
            default a :class:`ThreadShardRunner`: threads of this process). Any runner gives the
            same result, because every exchange with the shards happens at the same fixed plies:
            :class:`nard_ai.distributed.RayShardRunner` plays them on Ray actors.
        max_restarts: when the runner loses a worker (:class:`WorkerLost`: a Ray actor died), the
            round is played again from its start, at most this many times: the learner, ``rng``
            and ``stats`` are put back as they were when the round began and ``on_games`` is told
            ``-n`` for the ``n`` games it had counted, so nothing is lost or counted twice and the
            result is the undisturbed round's.

    Returns:
        The :class:`RoundStats`.

    Raises:
        ValueError: ``workers`` below 1, or ``max_restarts`` below 0.
        WorkerLost: a worker was lost more than ``max_restarts`` times in the round.
    """
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if isinstance(max_restarts, bool) or not isinstance(max_restarts, (int, np.integer)) or max_restarts < 0:
        raise ValueError(f"max_restarts must be an integer >= 0, got {max_restarts!r}")
    t0 = time.perf_counter()
    stats = RoundStats() if stats is None else stats
    n_shards = min(int(workers), pool, games)
    if n_shards <= 0:
        return stats
    if workers == 1:
        buffer = _SampleBuffer(learner, batch_size, rng, stats)
        _play_inline(
            learner,
            _Shard(min(pool, games), games, rng, rules, ply, lam),
            buffer,
            stats,
            on_games,
            should_stop,
        )
        buffer.flush()
        stats.seconds = time.perf_counter() - t0
        return stats
    runner = ThreadShardRunner() if runner is None else runner
    start = _RoundStart(learner, rng, stats)
    for attempt in range(int(max_restarts) + 1):
        counted = _Counter(on_games)
        buffer = _SampleBuffer(learner, batch_size, rng, stats)
        seeds = rng.integers(0, 2**63, size=n_shards)
        shards = [
            _Shard(min(slots, n), n, np.random.default_rng(seed), rules, ply, lam)
            for slots, n, seed in zip(_split(pool, n_shards), _split(games, n_shards), seeds, strict=True)
        ]
        try:
            _play_epochs(runner, learner, shards, buffer, stats, counted, should_stop)
        except WorkerLost:
            if attempt == max_restarts:
                raise
            counted.take_back()
            start.restore(learner, rng, stats)
            continue
        break
    buffer.flush()
    stats.seconds = time.perf_counter() - t0
    return stats


class _Counter:
    """``on_games`` of one attempt at a round, remembering what it was told (to take it back)."""

    def __init__(self, on_games) -> None:
        self.on_games, self.told = on_games, 0

    def __call__(self, n: int) -> None:
        self.told += n
        if self.on_games is not None:
            self.on_games(n)

    def take_back(self) -> None:
        if self.on_games is not None and self.told:
            self.on_games(-self.told)
        self.told = 0


class _RoundStart:
    """The learner (weights, optimizer), the generator and the stats as a round began."""

    def __init__(self, learner: Learner, rng: np.random.Generator, stats: RoundStats) -> None:
        self.weights = copy.deepcopy(learner.network.state_dict())
        self.optimizer = copy.deepcopy(learner.optimizer.state_dict())
        self.steps = learner.steps
        self.rng = copy.deepcopy(rng.bit_generator.state)
        self.stats = copy.deepcopy(stats)

    def restore(self, learner: Learner, rng: np.random.Generator, stats: RoundStats) -> None:
        with torch.no_grad():
            learner.network.load_state_dict(self.weights)
        learner.network.weights_changed()
        learner.optimizer.load_state_dict(copy.deepcopy(self.optimizer))
        learner.steps = self.steps
        rng.bit_generator.state = copy.deepcopy(self.rng)
        for f in dataclasses.fields(stats):
            setattr(stats, f.name, copy.deepcopy(getattr(self.stats, f.name)))


def _play_inline(learner, shard, buffer, stats, on_games, should_stop) -> None:
    # one worker: search, train on the games just finished, then advance (the steps count from the next ply)
    evaluator = NetworkEvaluator(learner.network)
    while shard.running:
        if should_stop is not None and should_stop():
            stats.interrupted = True
            return
        positions, plies, finished = shard.search(evaluator)
        _record(stats, positions, plies, finished, on_games)
        if finished is not None:
            buffer.add(finished.boards, finished.targets)
        shard.advance()


EPOCH_PLIES = 4
"""With ``workers > 1``: plies each shard plays between two exchanges with the calling thread. The
gradient steps on the samples collected up to an exchange run beside the next epoch, and their
weights reach the search network at the exchange after it."""


class WorkerLost(RuntimeError):
    """A :class:`ShardRunner` lost a worker mid-epoch (a Ray actor died): the round's shards are gone."""


class ShardRunner(Protocol):
    """Where the shards of a round with ``workers > 1`` play (module docstring, "Workers").

    :func:`play_round` calls :meth:`open` once per attempt at a round, then :meth:`epoch` until no
    shard has a game left, then :meth:`close`. A runner must give every shard the weights of the
    learner's network as they were at the previous :meth:`epoch`'s end if ``train`` was given
    then (else as before), so that every runner gives the same games.
    """

    def open(self, shards: list, network: Network) -> None:
        """Take the round's shards (each plays by its own ``play(evaluator, plies)``) and a network
        whose weights the shards search with; ``network`` is the learner's, which only
        :meth:`epoch`'s ``train`` changes."""
        ...

    def epoch(self, indices: list[int], plies: int, train) -> list[tuple[list, bool]]:
        """Shards ``indices`` each play ``plies`` plies while ``train()`` (if not None) takes the
        gradient steps due; returns, per shard in ``indices`` order, its ``play`` results and
        whether it still has games. Raises :class:`WorkerLost` if a worker died."""
        ...

    def close(self) -> None:
        """Release the workers (also after an error)."""
        ...


class ThreadShardRunner:
    """The shards played in threads of this process (one per shard, one more for the gradient steps),
    torch on one thread each (:func:`_one_torch_thread`) and numba serial; the default runner."""

    def open(self, shards: list, network: Network) -> None:
        self.shards, self.network = shards, network
        self.search_net = search_copy(network)
        self.evaluator = NetworkEvaluator(self.search_net)
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)
        self.serial = serial_kernels()
        self.serial.__enter__()
        self.pool = ThreadPoolExecutor(
            len(shards) + 1, thread_name_prefix="selfplay", initializer=_one_torch_thread
        )

    def epoch(self, indices: list[int], plies: int, train) -> list[tuple[list, bool]]:
        training = self.pool.submit(_serially, train) if train is not None else None
        futures = [self.pool.submit(self.shards[i].play, self.evaluator, plies) for i in indices]
        try:
            results = [f.result() for f in futures]
        finally:
            if training is not None:
                training.result()
        if training is not None:
            sync_weights(self.search_net, self.network)
        return [(r, self.shards[i].running) for i, r in zip(indices, results, strict=True)]

    def close(self) -> None:
        pool = self.__dict__.pop("pool", None)
        if pool is None:
            return
        pool.shutdown(wait=True)
        self.serial.__exit__(None, None, None)
        torch.set_num_threads(self.threads)


def _play_epochs(runner: ShardRunner, learner, shards, buffer, stats, on_games, should_stop) -> None:
    # Epochs of EPOCH_PLIES plies: each shard plays an epoch with the search network while the
    # gradient steps due at the epoch's start are taken; at its end the samples are collected in
    # shard order and the new weights reach the search network. Every exchange happens at a fixed
    # ply, whatever the runner: deterministic.
    running = list(range(len(shards)))
    try:
        runner.open(shards, learner.network)  # inside: close() puts the threads back after a failed open
        while running:
            if should_stop is not None and should_stop():
                stats.interrupted = True
                return
            batches = buffer.take_due()
            train = (lambda b=batches: buffer.train(b)) if batches else None
            epoch = runner.epoch(running, EPOCH_PLIES, train)
            for shard_results, _ in epoch:
                for positions, plies, finished in shard_results:
                    _record(stats, positions, plies, finished, on_games)
                    if finished is not None:
                        buffer.add(finished.boards, finished.targets, train=False)
            running = [i for i, (_, still) in zip(running, epoch, strict=True) if still]
    finally:
        runner.close()


def _one_torch_thread() -> None:
    """Each worker thread's first act: torch (its OpenMP team and MKL) on one thread *in this thread*.

    ``torch.set_num_threads`` on the calling thread sets that thread's own OpenMP and MKL thread counts
    (``omp_set_num_threads``, ``mkl_set_num_threads_local``) and a process-wide number that a new
    thread copies only lazily, on its first ``at::parallel_for``. Until then an MKL GEMM in a new
    thread runs on MKL's process default (one thread per core), which rounds differently from one
    thread (``addmm`` of the output layer, last bit). Which pool thread had already run a parallel
    torch op depended on the threads' timing, so two identical rounds differed near 1e-8 in about a
    third of the runs (issue 15). Set here, before any work, every thread computes alike."""
    torch.set_num_threads(1)


def _serially(fn) -> None:
    with serial_kernels():
        fn()


def search_copy(network: Network) -> Network:
    """A copy of ``network`` for searching while the original trains: eval mode, its first-layer
    tables built (so several threads may read them at once)."""
    copy_ = copy.deepcopy(network)
    copy_.eval()
    copy_.weights_changed()
    copy_.build_tables()  # before the worker threads read them
    return copy_


def sync_weights(search_net: Network, network) -> None:
    """Copy ``network``'s weights (a :class:`Network`, or its parameters as a sequence of tensors, in
    order) into ``search_net`` (a :func:`search_copy`) and rebuild its tables."""
    weights = network.parameters() if isinstance(network, torch.nn.Module) else network
    with torch.no_grad():
        for target, source in zip(search_net.parameters(), weights, strict=True):
            target.copy_(source)  # bumps the version counters: the cached tables are rebuilt
    search_net.build_tables()
