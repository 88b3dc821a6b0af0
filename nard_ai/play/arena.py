"""Cubeless money matches between agents, with duplicate dice, batched in lockstep.

The agents are :class:`~nard_ai.search.lookahead.Agent` objects; the specs that
name them on a command line (``PATH[:PLY]``, ``default[:PLY]``, ``pubeval``,
``random``, ``gnubg[:PLY]``) are :mod:`nard_ai.agents`'s
(:func:`nard_ai.agents.agent_from_spec`, whose module docstring has the table).

Duplicate dice: games come in pairs that share one dice sequence (opening
roll, then one roll per ply). In the first game of a pair agent A sits in
seat 0, in the second agent B does; the opening roll decides which seat
starts. So each agent gets exactly the dice the other got in the same seat,
and much of the luck cancels in the pair's total. The 95% confidence
interval of points per game is computed over pairs (independent), as
``1.96 * std(pair mean) / sqrt(pairs)``.

Each pair's dice come from ``np.random.default_rng([seed, pair, chunk])``,
so a match is reproducible whatever the batch size (the random agent draws
from its own seeded generator, so its games depend on the batch size too).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from nard_ai.core.board import starting_board
from nard_ai.play.lockstep import MAX_PLIES, KeyedDice, Lockstep, choose_by_side, dice_chunk
from nard_ai.play.results import (
    DuplicatePoints,
    ci95_text,
    in_shard_order,
    pair_ci95,
)  # pair_ci95 re-exported
from nard_ai.search.lookahead import Agent

__all__ = [
    "MatchResult",
    "MatchShard",
    "MatchShardResult",
    "play_match",
    "play_match_shard",
    "merge_match_shards",
    "dice_chunk",
    "MAX_PLIES",
    "pair_ci95",
]


@dataclass(frozen=True)
class MatchResult(DuplicatePoints):
    """Outcome of a duplicate-dice match, from agent A's side (``games``, ``ppg``, ``ci95``: :class:`DuplicatePoints`).

    Attributes:
        points: ``(games,)`` int64 points A won in each game (``+-1/2/3``);
            games ``2k`` and ``2k + 1`` share their dice.
        seconds: wall time.
        plies: plies played in all.
    """

    points: np.ndarray
    seconds: float
    plies: int

    def rates(self) -> dict[str, float]:
        """Fractions of games: A wins, A's gammons/backgammons (incl. backgammons in gammons), and the same for B."""
        p = self.points
        return {
            "win": float((p > 0).mean()),
            "win_gammon": float((p >= 2).mean()),
            "win_backgammon": float((p >= 3).mean()),
            "lose": float((p < 0).mean()),
            "lose_gammon": float((p <= -2).mean()),
            "lose_backgammon": float((p <= -3).mean()),
        }

    @property
    def games_per_s(self) -> float:
        return self.games / max(self.seconds, 1e-9)

    def summary(self, name_a: str = "A", name_b: str = "B") -> str:
        """A few lines for humans: ppg with its 95% CI, result rates, speed."""
        r = self.rates()
        return (
            f"{name_a} vs {name_b}: {self.ppg:+.3f} ppg {ci95_text(self.ci95, self.games)}\n"
            f"  {name_a}: wins {r['win']:.1%}  gammons {r['win_gammon']:.1%}  backgammons {r['win_backgammon']:.1%}\n"
            f"  {name_b}: wins {r['lose']:.1%}  gammons {r['lose_gammon']:.1%}  backgammons {r['lose_backgammon']:.1%}\n"
            f"  {self.games_per_s:.3g} games/s, {self.plies / max(self.games, 1):.1f} plies/game"
        )


@dataclass(frozen=True)
class MatchShard:
    """One shard of a match: the games ``first .. first + games - 1`` (``first`` and ``games`` even).

    Game ``g`` plays the dice of duplicate pair ``g // 2`` (``np.random.default_rng([seed, pair,
    chunk])``), so a shard's points are a pure function of the task and the two agents.
    """

    index: int
    seed: int
    first: int
    games: int
    batch: int


@dataclass(frozen=True)
class MatchShardResult:
    """A shard's games: ``points`` ``(games,)`` int64 from A's side, ``plies`` played, wall ``seconds``."""

    index: int
    points: np.ndarray
    plies: int
    seconds: float


def play_match_shard(agents: tuple[Agent, Agent], task: MatchShard) -> MatchShardResult:
    """Play one shard of a match (``agents`` = ``(agent_a, agent_b)``, the executor's shared object)."""
    t0 = time.perf_counter()
    points, plies = _play_games(agents[0], agents[1], task.seed, task.first, task.games, task.batch, None)
    return MatchShardResult(task.index, points, plies, time.perf_counter() - t0)


def merge_match_shards(shards: list[MatchShardResult], seconds: float) -> MatchResult:
    """The :class:`MatchResult` of a match's shards: their points end to end, in shard order.

    Raises:
        ValueError: no shards, or a shard index missing or repeated.
    """
    ordered = in_shard_order(shards)
    return MatchResult(
        points=np.concatenate([r.points for r in ordered]),
        seconds=seconds,
        plies=sum(r.plies for r in ordered),
    )


def play_match(
    agent_a: Agent,
    agent_b: Agent,
    games: int,
    seed: int = 0,
    *,
    batch: int = 1024,
    progress=None,
    executor=None,
    shard_games: int = 1000,
) -> MatchResult:
    """Play a cubeless duplicate-dice match (``games`` rounded up to even).

    Args:
        agent_a: the agent whose points are reported.
        agent_b: its opponent.
        games: number of games (pairs of two).
        seed: seed of the dice.
        batch: games in flight at once; each ply is one ``choose_plays``
            call per agent over all its games.
        progress: optional callable ``progress(games_finished)``.
        executor: ``None`` (the default) plays every game in this process; an executor
            (:mod:`nard_ai.distributed`: one process or a Ray cluster) plays shards of
            ``shard_games`` games (:func:`play_match_shard`) with both agents as the shared
            object, and :func:`merge_match_shards` joins them. A game's dice depend only on the
            seed and its pair number, so the points are the same game for game on every
            executor and with or without one (except for the ``random`` agent, whose own
            generator follows the batches).
        shard_games: games per shard with an executor: even, >= 2.

    Returns:
        A :class:`MatchResult` from A's side.

    Raises:
        ValueError: ``games`` or ``batch`` below 1, an odd or non-positive ``shard_games``, an
            ``executor`` without ``map``.
        RuntimeError: a game passes :data:`MAX_PLIES` plies.
    """
    for name, value, low in (("games", games, 1), ("batch", batch, 1), ("shard_games", shard_games, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if shard_games % 2:
        raise ValueError(f"shard_games must be even (duplicate pairs stay in one shard), got {shard_games}")
    t0 = time.perf_counter()
    games = int(games) + int(games) % 2
    if executor is not None:
        if not callable(getattr(executor, "map", None)):
            raise ValueError(
                f"executor must have map(fn, tasks, shared) (nard_ai.distributed), got {executor!r}"
            )
        tasks = [
            MatchShard(k, seed, first, min(int(shard_games), games - first), int(batch))
            for k, first in enumerate(range(0, games, int(shard_games)))
        ]
        finished = 0

        def done(_i: int, r: MatchShardResult) -> None:
            nonlocal finished
            finished += len(r.points)
            if progress is not None:
                progress(finished)

        shards = executor.map(play_match_shard, tasks, shared=(agent_a, agent_b), on_result=done)
        return merge_match_shards(shards, time.perf_counter() - t0)
    points, plies = _play_games(agent_a, agent_b, seed, 0, games, int(batch), progress)
    return MatchResult(points=points, seconds=time.perf_counter() - t0, plies=plies)


def _play_games(agent_a, agent_b, seed: int, first: int, games: int, batch: int, progress):
    """Games ``first .. first + games - 1`` of a match in lockstep: ``(points (games,), plies)``."""
    slots = min(batch, games)
    lock = Lockstep(slots)
    dice = KeyedDice(slots)
    game_of = np.full(slots, -1, dtype=np.int64)
    points = np.zeros(games, dtype=np.int64)
    start_board = starting_board()
    next_game = first
    end = first + games

    def start(slot: int, game: int) -> None:
        game_of[slot] = game
        lock.start(slot, start_board, turn=dice.start(slot, (seed, game // 2)))

    for s in range(slots):
        start(s, next_game)
        next_game += 1
    finished = 0
    while True:
        idx = np.flatnonzero(lock.running)
        if len(idx) == 0:
            break
        roll = dice.roll(idx, lock.ply[idx])
        # seat 0 is A in the first game of a pair, B in the second
        a_to_play = (lock.turn[idx] == 0) == (game_of[idx] % 2 == 0)
        after = choose_by_side(((agent_a, a_to_play), (agent_b, ~a_to_play)), lock.boards[idx], roll)
        done, result = lock.play(idx, after)
        if done.any():
            points[game_of[idx[done]] - first] = np.where(a_to_play[done], result, -result)
        for s in idx[done]:
            finished += 1
            if next_game < end:
                start(s, next_game)
                next_game += 1
        if progress is not None and done.any():
            progress(finished)
    return points, lock.plies


_MOVED_TO_AGENTS = ("agent_from_spec", "load_agent", "pubeval_agent", "random_agent")


def __getattr__(name: str):
    """The old ``nard_ai.arena``'s agent loaders moved to :mod:`nard_ai.agents`: say so instead of a bare ImportError."""
    if name in _MOVED_TO_AGENTS:
        raise ImportError(
            f"{name} moved from the old nard_ai.arena to nard_ai.agents: use 'from nard_ai.agents import {name}'"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
