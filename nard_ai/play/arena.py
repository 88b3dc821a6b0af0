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

from nard_ai.core.board import BOARD_SIZE, game_result_unchecked, starting_board, swap_sides_unchecked
from nard_ai.core.game import opening_roll, roll_dice
from nard_ai.search.lookahead import Agent

__all__ = ["MatchResult", "play_match", "dice_chunk", "pair_ci95"]

_CHUNK = 128  # dice generated per pair at a time
MAX_PLIES = 5000


@dataclass(frozen=True)
class MatchResult:
    """Outcome of a duplicate-dice match, from agent A's side.

    Attributes:
        points: ``(games,)`` int64 points A won in each game (``+-1/2/3``);
            games ``2k`` and ``2k + 1`` share their dice.
        seconds: wall time.
        plies: plies played in all.
    """

    points: np.ndarray
    seconds: float
    plies: int

    @property
    def games(self) -> int:
        return len(self.points)

    @property
    def ppg(self) -> float:
        """A's mean points per game."""
        return float(self.points.mean())

    @property
    def ci95(self) -> float:
        """Half-width of the 95% confidence interval of :attr:`ppg`, over duplicate pairs."""
        return pair_ci95(self.points.reshape(-1, 2).mean(axis=1))

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
            f"{name_a} vs {name_b}: {self.ppg:+.3f} ppg "
            + (
                f"± {self.ci95:.3f} (95% CI)"
                if np.isfinite(self.ci95)
                else "(no 95% CI from one duplicate pair)"
            )
            + f" over {self.games} games "
            f"({self.games // 2} duplicate pairs)\n"
            f"  {name_a}: wins {r['win']:.1%}  gammons {r['win_gammon']:.1%}  backgammons {r['win_backgammon']:.1%}\n"
            f"  {name_b}: wins {r['lose']:.1%}  gammons {r['lose_gammon']:.1%}  backgammons {r['lose_backgammon']:.1%}\n"
            f"  {self.games_per_s:.3g} games/s, {self.plies / max(self.games, 1):.1f} plies/game"
        )


def dice_chunk(key: tuple[int, ...], chunk: int) -> tuple[int, np.ndarray]:
    """The starting seat and ``_CHUNK`` rolls of one game's dice chunk (chunk 0 starts with the opening roll).

    ``key`` names the dice sequence: ``(seed, pair)`` here, ``(seed, pair, game)`` for matches in
    :mod:`nard_ai.play.sessions`; both games of a duplicate pair read the same key.
    """
    rng = np.random.default_rng([*key, chunk])
    if chunk == 0:
        starter, first = opening_roll(1, rng)
        return int(starter[0]), np.concatenate([first, roll_dice(_CHUNK - 1, rng)])
    return 0, roll_dice(_CHUNK, rng)


def _pair_dice(seed: int, pair: int, chunk: int) -> tuple[int, np.ndarray]:
    return dice_chunk((seed, pair), chunk)


def pair_ci95(pair_means: np.ndarray) -> float:
    """Half-width of the 95% confidence interval of a mean over duplicate pairs (normal approximation).

    Args:
        pair_means: ``(P,)`` float, one value per duplicate pair (the mean of its two games).

    Returns:
        ``1.96 * sd / sqrt(P)``, or NaN with fewer than 2 pairs.
    """
    if len(pair_means) < 2:
        return float("nan")
    return float(1.96 * pair_means.std(ddof=1) / np.sqrt(len(pair_means)))


def play_match(
    agent_a: Agent,
    agent_b: Agent,
    games: int,
    seed: int = 0,
    *,
    batch: int = 1024,
    progress=None,
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

    Returns:
        A :class:`MatchResult` from A's side.
    """
    t0 = time.perf_counter()
    games = games + games % 2
    slots = min(batch, games)
    boards = np.zeros((slots, BOARD_SIZE), dtype=np.int8)
    game_of = np.full(slots, -1, dtype=np.int64)
    ply = np.zeros(slots, dtype=np.int64)
    turn = np.zeros(slots, dtype=np.int64)  # seat on roll
    dice_buf = np.zeros((slots, _CHUNK, 2), dtype=np.int8)
    points = np.zeros(games, dtype=np.int64)
    start_board = starting_board()
    next_game = 0
    plies = 0

    def start(slot: int, game: int) -> None:
        starter, rolls = _pair_dice(seed, game // 2, 0)
        boards[slot] = start_board
        game_of[slot] = game
        ply[slot] = 0
        turn[slot] = starter
        dice_buf[slot] = rolls

    for s in range(slots):
        start(s, next_game)
        next_game += 1
    finished = 0
    while True:
        idx = np.flatnonzero(game_of >= 0)
        if len(idx) == 0:
            break
        need = idx[(ply[idx] % _CHUNK == 0) & (ply[idx] > 0)]
        for s in need:
            dice_buf[s] = _pair_dice(seed, int(game_of[s]) // 2, int(ply[s]) // _CHUNK)[1]
        dice = dice_buf[idx, ply[idx] % _CHUNK]
        # seat 0 is A in the first game of a pair, B in the second
        a_to_play = (turn[idx] == 0) == (game_of[idx] % 2 == 0)
        after = np.empty((len(idx), BOARD_SIZE), dtype=np.int8)
        for agent, mask in ((agent_a, a_to_play), (agent_b, ~a_to_play)):
            if mask.any():
                after[mask] = agent.choose_plays(boards[idx[mask]], dice[mask])
        plies += len(idx)
        done = ~(after > 0).any(axis=1)
        if done.any():
            result = game_result_unchecked(after[done])
            points[game_of[idx[done]]] = np.where(a_to_play[done], result, -result)
        boards[idx] = swap_sides_unchecked(after)
        turn[idx] ^= 1
        ply[idx] += 1
        if (ply[idx] > MAX_PLIES).any():
            raise RuntimeError(f"a game passed {MAX_PLIES} plies")
        for s in idx[done]:
            finished += 1
            if next_game < games:
                start(s, next_game)
                next_game += 1
            else:
                game_of[s] = -1
        if progress is not None and done.any():
            progress(finished)
    return MatchResult(points=points, seconds=time.perf_counter() - t0, plies=plies)
