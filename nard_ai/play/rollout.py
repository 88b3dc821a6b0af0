"""Monte Carlo rollouts of a position, cubeless or cubeful, batched in lockstep.

A rollout plays ``games`` games from a position to the end (or to a
truncation point) with an agent choosing every play, and averages the
results. Perspective: the position is the board of **the side on roll, before
it rolls** (the root side); every number reported is for that side.

How
---
* **Lockstep.** ``batch`` games are in flight at once, each in a *slot* of
  preallocated arrays (board, ply, luck, cube). Every step advances every
  running game by one ply with one batched move choice (``agent.choose_plays``:
  one :func:`nard_ai.core.movegen.legal_plays_batch` call and one evaluator call
  for all of them at 0-ply) and then steps the games as :mod:`nard_ai.core.game`
  does: a play that bears off the mover's last checker ends the game
  (RULES.md §6), otherwise the board is turned with
  :func:`~nard_ai.core.board.swap_sides`. A slot whose game ends takes the next
  game at the end of the step, so batches stay full until the last games.
  There is no Python loop over games anywhere in the loop: the side on roll
  is the ply's parity, results are written by fancy indexing, cube decisions
  are taken per group of games that share a cube state.
* **Threads.** By default the rollout uses torch's and numba's settings
  as they are (one thread per core unless the process changed them): on
  the project's 2-core machine two threads roll the opening out about 1.5
  times as fast as one, and still a little faster with another process busy
  on one core (OpenMP waiters sleep rather than spin, see
  :mod:`nard_ai.core.movegen`). ``threads=n`` sets both for the rollout only.
* **Early plies are shared.** All games start from the same board, so the
  first plies repeat positions: while at least 10% of a step's (board, roll)
  pairs are repeats, each distinct one is searched once.
* **Dice** (:func:`rollout_dice`). The roll of game ``g`` at its ply ``t`` is
  a pure function of ``(seed, g, t)``, so a rollout is reproducible whatever
  the batch size. The first two rolls are stratified and unbiased for any
  number of games: the seed fixes two random orders of the 36 ordered rolls,
  ``first`` and ``reply`` (each from its own SplitMix64 stream, sorted); game
  ``g`` opens with ``first[g mod 36]`` and the reply is
  ``reply[(g mod 36 + g div 36) mod 36]``. So 36 games cover every first
  roll once, 1296 every pair of first rolls once (a Latin square, gnubg's
  quasi-random dice), and for any other count each game's pair of rolls is
  still uniform over the 1296 (an unbiased estimate; a fixed order such as
  "game g replies with roll g div 36" would give 144 games only the replies
  1-1 to 1-4). Later rolls come from
  SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
  generators", OOPSLA 2014): output number ``g * 2**20 + t + 1`` of the
  generator seeded with ``seed``, reduced mod 36 to one of the 36 ordered
  rolls. Being counter-based, it needs no generator object per game.
* **Variance reduction** (``variance_reduction=True``, cubeless), gnubg's
  luck adjustment (``rollout.c``): at every turn the side on roll's best
  0-ply play of each of the 21 rolls is found, and valued at ``ply - 1``
  (at 0-ply its 0-ply value, which the 0-ply search already gives). The
  *luck* of the roll thrown is its value minus the roll-weighted mean over
  the 21 rolls, for each of the five probabilities, from the root side's
  view. Each game's result minus its summed luck is an unbiased estimate of
  the same mean (every luck term has mean zero given the position) with far
  less variance. All running games x 21 rolls go to the search in batches of
  :data:`VR_CHUNK` positions; at 0-ply the play actually made is the one the
  expansion already chose for the roll thrown, so the rollout's own move
  choice costs nothing more. It is still about 25 times the work of a plain
  0-ply step (every play of every roll is evaluated) but less than a 1-ply
  step's own search, so by default (``variance_reduction=None``) it is on
  from 1-ply and off at 0-ply; the README's rollout figures show what it
  buys per second of rolling out.
* **Truncation** (``truncate=N``): games still running after ``N`` plies are
  scored with the agent's own evaluation of the position reached.
* **Cubeful** (``cube=CubeState(...)``): before each roll the side on roll
  doubles when :mod:`nard_ai.cube.decision`'s model says so (no double / double, take /
  double, pass from the agent's probabilities at the position, "too good"
  plays on), the opponent takes or passes likewise (in money play with
  beavers, a take worth more than nothing to the taker is a beaver: the cube
  goes to four times its value, kept by the taker; the model never offers
  such a double, as :func:`nard_ai.cube.cube_decision_from_probs` shows),
  and results count the
  cube: money in points per unit of the starting cube, match play in the
  root side's match-winning chance after the game. Cubeful games are not
  luck-adjusted.
* **Confidence.** Every mean comes with the half-width of its 95% interval,
  ``1.96 * std / sqrt(games)`` over the per-game values (conservative with
  stratified dice).
* **Memory.** Per-game results are kept for one block of :data:`CHUNK_GAMES`
  consecutive game numbers at a time: when every game of a block has
  finished, its sums and sums of squared deviations are taken and the block
  is dropped; the blocks' statistics are merged in block order as they
  complete (Chan, Golub and LeVeque's pairwise update). So memory does not grow with
  ``games``, the games themselves are played exactly as in one lockstep
  (the same dice and batches), and a rollout of at most :data:`CHUNK_GAMES`
  games is computed with the same numpy operations as a whole-array mean and
  standard deviation (bit for bit what the code before the blocks gave).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from nard_ai.core.board import (
    BOARD_SIZE,
    game_result,
    game_result_unchecked,
    swap_sides_unchecked,
    validate_board,
)
from nard_ai.core.ply import check_ply
from nard_ai.cube import (
    CENTRED,
    DEFAULT_EFFICIENCY,
    ON_ROLL,
    OPPONENT,
    CubeEfficiency,
    CubeState,
    as_probs,
    check_cube,
    check_efficiency,
    efficiencies,
    match_cubeful,
    money_cubeful,
    mwc_at_score,
)

__all__ = [
    "RolloutResult",
    "PlayRollout",
    "rollout",
    "rollout_plays",
    "rollout_dice",
    "RolloutShard",
    "RolloutShardResult",
    "rollout_shard",
    "merge_rollout_shards",
    "ROLLS_21",
    "ROLL_WEIGHTS",
    "ROLLS_36",
    "VR_CHUNK",
    "MAX_GAMES",
    "CHUNK_GAMES",
]

#: ``(21, 2)`` int8: the 21 distinct rolls, larger die first.
ROLLS_21 = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int8)
#: ``(21,)`` float64: each roll's chance (non-doubles 2/36, doubles 1/36).
ROLL_WEIGHTS = np.where(ROLLS_21[:, 0] == ROLLS_21[:, 1], 1.0, 2.0) / 36.0
_ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
for _k, (_a, _b) in enumerate(ROLLS_21):
    _ROLL_INDEX[_a, _b] = _ROLL_INDEX[_b, _a] = _k
#: ``(36, 2)`` int8: the 36 ordered rolls, ``(1, 1), (1, 2), ..., (6, 6)``.
ROLLS_36 = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)

MAX_GAMES = 10_000_000
"""The most games one rollout takes: about three hours for a 0-ply rollout of the opening on this
project's two cores (about 1,000 games/s; deeper plies are many times slower). Memory does not depend
on it (:data:`CHUNK_GAMES`)."""
CHUNK_GAMES = 1 << 17
"""Games per block of per-game results (module docstring, "Memory"): 131,072 games, about 7 MB of
results and about as much again while a block's statistics are taken."""

MAX_PLIES = 5000
"""A safety net: a rollout game longer than this raises ``RuntimeError``."""
VR_CHUNK = 1024
"""Positions (board x roll) per search call in the 21-roll expansion of variance reduction."""
Z95 = 1.959963984540054
_DEDUP_MIN_SHARE = 0.1  # keep merging repeated (board, roll) pairs while at least this share repeats

# SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c).
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_PLY_BITS = np.uint64(20)  # MAX_PLIES < 2**20: plies of one game are consecutive outputs


@dataclass(frozen=True, eq=False)
class RolloutResult:
    """Means over a rollout, each with the half-width of its 95% confidence interval.

    Attributes:
        probs: ``(5,)`` gnubg-order probabilities for the root side (win,
            win-gammon, win-backgammon, lose-gammon, lose-backgammon); luck-
            adjusted means may stray slightly outside ``[0, 1]``. In a cubeful
            rollout a game that ends in a passed double counts here as a single
            game won or lost.
        probs_ci: ``(5,)`` their 95% half-widths.
        equity: cubeless money equity for the root side (points per game, cube 1).
        equity_ci: its 95% half-width.
        cubeful: money: points per game per unit of the starting cube; match:
            the root side's match-winning chance; ``None`` for a cubeless rollout.
        cubeful_ci: its 95% half-width, or ``None``.
        games: games played.
        truncated: games scored by evaluation at the truncation point.
        mean_plies: average plies played per game.
        seconds: wall time.
        variance_reduction: whether results were luck-adjusted.
        ply: the agent's search depth, if it has one.
        passes: cubeful rollouts: games that ended with a passed double (each
            counted in ``probs`` as a single game won or lost); 0 otherwise.
    """

    probs: np.ndarray
    probs_ci: np.ndarray
    equity: float
    equity_ci: float
    cubeful: float | None
    cubeful_ci: float | None
    games: int
    truncated: int
    mean_plies: float
    seconds: float
    variance_reduction: bool
    ply: int | None
    passes: int = 0

    @property
    def games_per_s(self) -> float:
        """Games per second of wall time."""
        return self.games / max(self.seconds, 1e-9)


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, Integral) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer 0 <= seed < 2**64, got {seed!r}")
    return int(seed)


def _splitmix64(seed: int, counter: np.ndarray) -> np.ndarray:
    """Output number ``counter`` (1-based, ``(N,)`` uint64) of SplitMix64 seeded with ``seed``."""
    z = np.uint64(seed) + counter * _GAMMA  # wraps mod 2**64, as the C original
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def rollout_dice(seed: int, games: np.ndarray, plies: np.ndarray) -> np.ndarray:
    """The roll of rollout game ``games[i]`` at its ply ``plies[i]`` (module docstring, "Dice").

    Args:
        seed: the rollout's seed, ``0 <= seed < 2**64``.
        games: ``(N,)`` non-negative game numbers.
        plies: ``(N,)`` plies, ``0 <= ply < 2**20`` (ply 0 is the root side's roll).

    Returns:
        ``(N, 2)`` int8 ordered rolls: ply 0 is ``ROLLS_36[first[g % 36]]``,
        ply 1 ``ROLLS_36[reply[(g % 36 + g // 36) % 36]]``, where ``first`` and
        ``reply`` are the seed's two random orders of the 36 rolls
        (module docstring); later plies ``ROLLS_36[z % 36]`` with ``z`` the
        SplitMix64 output number ``g * 2**20 + ply + 1``.

    Raises:
        ValueError: on a bad seed, negative games or plies outside ``0 .. 2**20 - 1``.
    """
    seed = _check_seed(seed)
    games = np.asarray(games, dtype=np.int64).reshape(-1)
    plies = np.asarray(plies, dtype=np.int64).reshape(-1)
    if games.shape != plies.shape:
        raise ValueError(f"games and plies must have the same length, got {games.shape} and {plies.shape}")
    if (games < 0).any() or (plies < 0).any() or (plies >= 1 << int(_PLY_BITS)).any():
        raise ValueError("games must be >= 0 and plies 0 .. 2**20 - 1")
    counter = (games.astype(np.uint64) << _PLY_BITS) + plies.astype(np.uint64) + np.uint64(1)
    which = (_splitmix64(seed, counter) % np.uint64(36)).astype(np.int64)
    first, reply = _stratification(seed)
    i, j = games % 36, (games // 36) % 36
    which = np.where(plies == 0, first[i], np.where(plies == 1, reply[(i + j) % 36], which))
    return ROLLS_36[which]


@functools.lru_cache(maxsize=64)
def _stratification(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The seed's two random orders of the 36 rolls (first roll, reply), from SplitMix64 streams of their own."""
    counters = np.arange(1, 37, dtype=np.uint64)
    first = np.argsort(_splitmix64(seed ^ 0xD1B54A32D192ED03, counters), kind="stable")
    reply = np.argsort(_splitmix64(seed ^ 0x8CB92BA72F3D8DD7, counters), kind="stable")
    return first, reply


def _flip_diff(diff: np.ndarray, flip: np.ndarray) -> np.ndarray:
    """Differences of gnubg-order probabilities for one side -> for the other side where ``flip``.

    ``invert_probs`` is affine (``win -> 1 - win``, gammons swap sides), so a
    difference inverts by negating the win column and swapping the columns.
    """
    out = diff.copy()
    if flip.any():
        d = diff[flip]
        out[flip] = np.stack([-d[:, 0], d[:, 3], d[:, 4], d[:, 1], d[:, 2]], axis=1)
    return out


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each distinct row of a 2-D int8 array, and each row's distinct number."""
    rows = np.ascontiguousarray(rows)
    keys = rows.view(np.dtype((np.void, rows.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _efficiency_param(efficiency) -> CubeEfficiency | float:
    return efficiency if isinstance(efficiency, CubeEfficiency) else check_efficiency(efficiency)


def _scores_its_own_plays(agent) -> bool:
    evaluator = getattr(agent, "evaluator", None)
    return getattr(evaluator, "score_plays", None) is not None


@contextmanager
def _threads(n: int | None):
    """Run the block with ``n`` torch and numba threads (``None``: as they are), then restore them."""
    if n is None:
        yield
        return
    import numba

    torch = sys.modules.get("torch")  # an agent without torch never loaded it: nothing to set
    saved = (numba.get_num_threads(), torch.get_num_threads() if torch is not None else None)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    if torch is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(saved[0])
        if torch is not None:
            torch.set_num_threads(saved[1])


def rollout(
    board: np.ndarray,
    games: int,
    ply: int = 0,
    cube: CubeState | None = None,
    seed: int = 0,
    agent=None,
    *,
    truncate: int | None = None,
    variance_reduction: bool | None = None,
    batch: int = 1296,
    efficiency: CubeEfficiency | float = DEFAULT_EFFICIENCY,
    threads: int | None = None,
    root_action: str | None = None,
    on_games: Callable[[int], object] | None = None,
    executor=None,
    shard_games: int = CHUNK_GAMES,
) -> RolloutResult:
    """Roll out a position for the side on roll, before it rolls.

    Args:
        board: ``(26,)`` int8, the root side's view, game not over.
        games: number of games, 1 .. :data:`MAX_GAMES` (1296 stratifies the first two rolls fully).
        ply: search depth of the shipped network when ``agent`` is ``None``.
        cube: ``None`` for a cubeless rollout, or the cube state at the root
            (money or match) for a cubeful one.
        seed: seed of the dice, ``0 <= seed < 2**64``.
        agent: anything with ``choose_plays(boards, dice)`` and
            ``evaluate(boards) -> (probs, equity)`` (a :class:`nard_ai.search.lookahead.Agent`
            at any ply); ``None`` loads the shipped network at ``ply``. A
            :class:`~nard_ai.search.lookahead.Agent` (anything with ``evaluator``,
            ``rules`` and ``ply``) gets gnubg's variance reduction (values of
            the 21 rolls' best 0-ply plays at ``ply - 1``); any other agent
            values the 21 rolls with its own ``choose_plays`` and ``evaluate``.
        truncate: stop each game after this many plies and score it with the
            agent's evaluation; ``None`` plays to the end.
        variance_reduction: luck-adjust cubeless results (module docstring).
            ``None`` (the default) turns it on when the agent searches at
            1-ply or deeper, where it adds less work than the plays
            themselves, and for races (no contact at the root) at any ply,
            where the race net and the bear-off database value the 21 rolls
            so well that a second of luck-adjusted rolling out narrows the
            interval 15-40 times more than a plain one; off for contact
            positions at 0-ply, where it multiplies the work by about 30
            and buys less than that (README, rollout figures).
        batch: games in flight at once.
        efficiency: cube efficiency parameters for cubeful rollouts
            (:class:`~nard_ai.cube.CubeEfficiency`), or one fixed ``x`` in ``[0, 1]``.
        threads: torch and numba threads while the rollout runs (the
            process's settings are restored after it); ``None``, the
            default, leaves them as they are (one per core unless changed).
            torch's setting is global to the process, numba's to the calling
            thread.
        root_action: cubeful rollouts only: what the root side does with the
            cube before its first roll, to check a cube decision by rollout
            as gnubg does. ``None`` (the default) lets the cube model decide
            as everywhere else; ``"no_double"`` plays the first roll without
            doubling; ``"double_take"`` doubles and has the opponent take (the
            cube goes to twice its value, owned by the opponent) before the
            first roll. Later cube actions follow the model. The results stay
            in the units of the root cube (money: points per unit of the root
            cube), so the three can be compared with double/pass (+1).
        on_games: optional callable ``on_games(n)`` told each time ``n`` more
            games finish (for a progress bar; the ``n`` add up to ``games``).
        executor: ``None`` (the default) plays every game in this process's lockstep; an
            executor (:mod:`nard_ai.distributed`: one process or a Ray cluster) plays shards of
            ``shard_games`` consecutive game numbers with :func:`rollout_shard` and merges them
            with :func:`merge_rollout_shards` in shard order. The dice of a game depend only on
            the seed and its game number, so the games are the same either way; with the default
            ``shard_games`` (:data:`CHUNK_GAMES`, the lockstep's own block) the numbers are too, bit
            for bit, and with any shard size they are the same on every executor.
        shard_games: games per shard with an executor, >= 1.

    Returns:
        A :class:`RolloutResult` for the root side.

    Raises:
        ValueError: on an invalid or finished board, ``games`` outside
            ``1 ..`` :data:`MAX_GAMES`, a truncation below 1, a batch below 1,
            a bad seed or ``threads < 1``; an ``on_games`` that is not callable;
            a ``ply`` that is not 0..2 or differs from the agent's; a ``cube``
            that is not a :class:`~nard_ai.cube.CubeState`; an agent without
            ``choose_plays`` and ``evaluate``, or one without real
            probabilities (pubeval, random) where the rollout needs them
            (cubeful, truncated or luck-adjusted); ``variance_reduction``
            that is not a bool (or ``None``), or ``True`` with a cube
            (cubeful rollouts are not luck-adjusted); a bad ``efficiency``;
            a ``root_action`` other than those above, given without a cube,
            or ``"double_take"`` where the root side may not double; a ``shard_games`` below 1;
            an ``executor`` without ``map``.
        RuntimeError: if a game passes :data:`MAX_PLIES` plies.
    """
    board = validate_board(np.asarray(board).reshape(-1))
    if game_result(board) != 0:
        raise ValueError("the game is over: nothing to roll out")
    if isinstance(games, bool) or not isinstance(games, Integral) or not 1 <= games <= MAX_GAMES:
        raise ValueError(f"games must be an integer 1..{MAX_GAMES:,}, got {games!r}")
    if truncate is not None and (
        isinstance(truncate, bool) or not isinstance(truncate, Integral) or truncate < 1
    ):
        raise ValueError(f"truncate must be an integer >= 1 plies (or None), got {truncate!r}")
    if isinstance(batch, bool) or not isinstance(batch, Integral) or batch < 1:
        raise ValueError(f"batch must be an integer >= 1, got {batch!r}")
    seed = _check_seed(seed)
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, Integral) or threads < 1
    ):
        raise ValueError(f"threads must be an integer >= 1 (or None), got {threads!r}")
    ply = check_ply(ply)
    if cube is not None:
        check_cube(cube)
    cubeful = cube is not None
    if variance_reduction is not None and not isinstance(variance_reduction, (bool, np.bool_)):
        raise ValueError(f"variance_reduction must be True, False or None, got {variance_reduction!r}")
    if cubeful and variance_reduction:
        raise ValueError("variance_reduction=True with a cube: cubeful rollouts are not luck-adjusted")
    efficiency = _efficiency_param(efficiency)
    if root_action not in (None, "no_double", "double_take"):
        raise ValueError(f"root_action must be None, 'no_double' or 'double_take', got {root_action!r}")
    if root_action is not None and not cubeful:
        raise ValueError(f"root_action={root_action!r} needs a cube (a cubeful rollout)")
    if on_games is not None and not callable(on_games):
        raise ValueError(f"on_games must be a callable or None, got {on_games!r}")
    if isinstance(shard_games, bool) or not isinstance(shard_games, Integral) or shard_games < 1:
        raise ValueError(f"shard_games must be an integer >= 1, got {shard_games!r}")
    if executor is not None and not callable(getattr(executor, "map", None)):
        raise ValueError(f"executor must have map(fn, tasks, shared) (nard_ai.distributed), got {executor!r}")
    if root_action == "double_take" and not cube.can_double:
        raise ValueError("root_action='double_take': the side on roll may not double with this cube state")
    if agent is None:
        from nard_ai.search.loading import default_agent

        agent = default_agent(int(ply))
    else:
        if not (
            callable(getattr(agent, "choose_plays", None)) and callable(getattr(agent, "evaluate", None))
        ):
            raise ValueError(
                f"agent must have choose_plays(boards, dice) and evaluate(boards) (a nard_ai agent), got {agent!r}"
            )
        agent_ply = getattr(agent, "ply", None)
        if ply and agent_ply is not None and agent_ply != ply:
            raise ValueError(f"ply={ply} but the agent searches at ply {agent_ply}")
    if variance_reduction is None:
        # on from 1-ply, and in races at any ply: README, rollout figures
        from nard_ai.model.encoding import race_flags

        variance_reduction = int(getattr(agent, "ply", 0) or 0) >= 1 or bool(race_flags(board[None])[0])
    vr = bool(variance_reduction) and not cubeful
    if (cubeful or truncate is not None or vr) and _scores_its_own_plays(agent):
        raise ValueError(
            "this agent chooses plays by its own score and has no real probabilities (pubeval, random): "
            "it can roll out cubeless, untruncated and without luck adjustment only"
        )
    t0 = time.perf_counter()
    if executor is not None:
        tasks = [
            RolloutShard(
                k,
                board,
                first,
                min(int(shard_games), int(games) - first),
                seed,
                cube,
                truncate,
                vr,
                int(batch),
                efficiency,
                root_action,
            )
            for k, first in enumerate(range(0, int(games), int(shard_games)))
        ]
        done = None if on_games is None else (lambda _i, r: on_games(r.games))
        with _threads(threads):
            shards = executor.map(rollout_shard, tasks, shared=agent, on_result=done)
        return merge_rollout_shards(
            shards,
            cubeful=cubeful,
            variance_reduction=vr,
            ply=getattr(agent, "ply", ply),
            seconds=time.perf_counter() - t0,
        )
    run = _Lockstep(board, int(games), seed, agent, cube, truncate, vr, int(batch), efficiency, on_games)
    if root_action is not None:
        run.cubes.root_action(root_action)
    with _threads(threads):
        run.play()
    stats = run.statistics()
    return stats.result(
        cubeful, truncated=run.truncated, seconds=time.perf_counter() - t0, variance_reduction=vr,
        ply=getattr(agent, "ply", ply), passes=run.passes,
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class RolloutShard:
    """One shard of a rollout: the games ``first .. first + games - 1`` (plain values, picklable).

    The fields are :func:`rollout`'s, validated there; ``variance_reduction`` is the resolved
    bool. A shard's results are a pure function of the task and the agent (the dice of game ``g``
    are :func:`rollout_dice` of ``(seed, g, ply)``), whatever process runs it.
    """

    index: int
    board: np.ndarray
    first: int
    games: int
    seed: int
    cube: CubeState | None
    truncate: int | None
    variance_reduction: bool
    batch: int
    efficiency: CubeEfficiency | float
    root_action: str | None


@dataclass(frozen=True, eq=False)
class RolloutShardResult:
    """What a shard returns for :func:`merge_rollout_shards`.

    Attributes:
        index: the shard's number.
        games: games played.
        truncated: of them, scored by evaluation at the truncation point.
        passes: of them, ended by a passed double.
        statistics: the sums of the shard's per-game values (an internal record).
        seconds: the shard's wall time where it ran.
    """

    index: int
    games: int
    truncated: int
    passes: int
    statistics: object
    seconds: float


def rollout_shard(agent, task: RolloutShard) -> RolloutShardResult:
    """Play one shard of a rollout with ``agent`` (the executor's shared object; :func:`rollout`).

    Raises:
        RuntimeError: if a game passes :data:`MAX_PLIES` plies.
    """
    t0 = time.perf_counter()
    run = _Lockstep(
        task.board,
        task.games,
        task.seed,
        agent,
        task.cube,
        task.truncate,
        task.variance_reduction,
        task.batch,
        task.efficiency,
        first=task.first,
    )
    if task.root_action is not None:
        run.cubes.root_action(task.root_action)
    run.play()
    return RolloutShardResult(
        task.index, task.games, run.truncated, run.passes, run.statistics(), time.perf_counter() - t0
    )


def merge_rollout_shards(
    shards: list[RolloutShardResult],
    *,
    cubeful: bool,
    variance_reduction: bool,
    ply: int | None,
    seconds: float,
) -> RolloutResult:
    """The :class:`RolloutResult` of a rollout's shards, merged in shard order (Chan et al.'s update).

    Args:
        shards: every shard's result, each index ``0 .. len - 1`` exactly once (any order).
        cubeful, variance_reduction, ply: copied into the result.
        seconds: the rollout's wall time.

    Raises:
        ValueError: no shards, or a shard index missing or repeated (nothing lost, nothing
            counted twice).
    """
    indices = sorted(r.index for r in shards)
    if not shards or indices != list(range(len(shards))):
        raise ValueError(f"shards must be numbered 0..{len(shards) - 1} once each, got {indices}")
    ordered = sorted(shards, key=lambda r: r.index)
    stats = ordered[0].statistics
    for r in ordered[1:]:
        stats = stats.merge(r.statistics)
    return stats.result(
        cubeful, truncated=sum(r.truncated for r in ordered), seconds=seconds,
        variance_reduction=variance_reduction, ply=ply, passes=sum(r.passes for r in ordered),
    )  # fmt: skip


@dataclass
class _Moments:
    """Count, sums and sums of squared deviations from the mean of per-game values (columns).

    ``total`` is what the mean is taken from, ``m2`` what the variance is taken from; a block's
    are computed as numpy's ``mean`` and ``std(ddof=1)`` compute them (so one block gives their
    results exactly), and :meth:`merge` combines two blocks (Chan, Golub and LeVeque 1979)."""

    n: int
    total: np.ndarray
    m2: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray) -> _Moments:
        """The moments of the rows of a 2-D ``x`` (``x.mean(axis=0)``, ``x.std(axis=0, ddof=1)``)."""
        n = len(x)
        total = x.sum(axis=0) if x.shape[1] > 1 else x[:, 0].sum(keepdims=True)  # 1-D: as ``x.mean()``
        d = x - x.sum(axis=0, keepdims=True) / n
        d *= d
        return cls(n, total, d.sum(axis=0))

    def merge(self, other: _Moments) -> _Moments:
        n = self.n + other.n
        delta = other.total / other.n - self.total / self.n
        m2 = self.m2 + other.m2 + delta * delta * (self.n * other.n / n)
        return _Moments(n, self.total + other.total, m2)

    def mean(self) -> np.ndarray:
        return self.total / self.n

    def ci(self) -> np.ndarray:
        """The 95% half-widths, ``1.96 * std / sqrt(n)`` (NaN below 2 values)."""
        if self.n < 2:
            return np.full(self.total.shape, np.nan)
        return Z95 * np.sqrt(self.m2 / (self.n - 1)) / np.sqrt(self.n)


@dataclass
class _Statistics:
    """What a rollout reports, from its per-game values (:meth:`_Lockstep.statistics`)."""

    games: int
    plies: int
    probs: _Moments
    equity: _Moments
    cubeful: _Moments

    def result(
        self,
        cubeful: bool,
        *,
        truncated: int,
        seconds: float,
        variance_reduction: bool,
        ply: int,
        passes: int,
    ) -> RolloutResult:
        """The :class:`RolloutResult` of these statistics (means and 95% half-widths); the cubeful
        figures only for a cubeful rollout (else ``None``)."""
        return RolloutResult(
            probs=self.probs.mean(),
            probs_ci=self.probs.ci(),
            equity=float(self.equity.mean()[0]),
            equity_ci=float(self.equity.ci()[0]),
            cubeful=float(self.cubeful.mean()[0]) if cubeful else None,
            cubeful_ci=float(self.cubeful.ci()[0]) if cubeful else None,
            games=int(self.games),
            truncated=truncated,
            mean_plies=self.plies / self.games,
            seconds=seconds,
            variance_reduction=variance_reduction,
            ply=ply,
            passes=passes,
        )

    @classmethod
    def of(cls, values: np.ndarray, cube_values: np.ndarray, plies: np.ndarray) -> _Statistics:
        equity = 2.0 * values[:, 0] - 1.0 + values[:, 1] + values[:, 2] - values[:, 3] - values[:, 4]
        return cls(
            len(values),
            int(plies.sum()),
            _Moments.of(values),
            _Moments.of(equity[:, None]),
            _Moments.of(cube_values[:, None]),
        )

    def merge(self, other: _Statistics) -> _Statistics:
        return _Statistics(
            self.games + other.games,
            self.plies + other.plies,
            self.probs.merge(other.probs),
            self.equity.merge(other.equity),
            self.cubeful.merge(other.cubeful),
        )


class _Block:
    """Per-game results of the games ``start .. start + size - 1`` of a rollout, until all have finished."""

    def __init__(self, start: int, size: int) -> None:
        self.start, self.size, self.done = start, size, 0
        self.values = np.zeros((size, 5))
        self.cube_values = np.zeros(size)
        self.plies = np.zeros(size, dtype=np.int64)


class _Lockstep:
    """The games of one rollout in ``batch`` slots of preallocated arrays (module docstring).

    Slot arrays: ``game`` (the game number a slot plays), ``boards`` (the side
    on roll's view), ``ply`` (plies played; the root side is on roll at even
    plies), ``luck`` (summed luck, root side's view), ``running``. Per-game
    outputs (root side's probabilities minus luck, cubeful value, plies) go
    to the :class:`_Block` of their game number, whose statistics are taken
    when its last game finishes (module docstring, "Memory").
    """

    def __init__(
        self, board, games, seed, agent, cube, truncate, vr, batch, efficiency, on_games=None, first=0
    ) -> None:
        from nard_ai.model.network import result_probs

        self.result_probs = result_probs
        self.root, self.games, self.seed, self.agent = board, games, seed, agent
        self.first = first  # a shard plays the game numbers first .. first + games - 1
        self.truncate, self.vr = truncate, vr
        slots = min(batch, games)
        self.game = np.arange(first, first + slots, dtype=np.int64)
        self.boards = np.tile(board, (slots, 1))
        self.ply = np.zeros(slots, dtype=np.int64)
        self.luck = np.zeros((slots, 5))
        self.running = np.ones(slots, dtype=bool)
        self.next_game = first + slots
        self.cubes = None if cube is None else _Cubes(cube, slots, efficiency)
        self.chunk = CHUNK_GAMES
        self.blocks: dict[int, _Block] = {}  # block number -> the results of its finished games
        self.done: dict[int, _Statistics] = {}  # finished blocks waiting for an earlier one
        self.merged: _Statistics | None = None  # blocks 0 .. next_block - 1
        self.next_block = 0
        self.on_games = on_games
        self.truncated = 0
        self.passes = 0
        self.dedup = True
        # gnubg's variance reduction needs the evaluator under the agent (a search.Agent)
        self.fast_vr = all(hasattr(agent, a) for a in ("evaluator", "rules", "ply"))
        self.agent_ply = int(getattr(agent, "ply", 0) or 0)

    # ---------------------------------------------------------------- the loop

    def play(self) -> None:
        while True:
            idx = np.flatnonzero(self.running)
            if len(idx) == 0:
                return
            if self.truncate is not None:
                idx = self._truncate(idx)
            if self.cubes is not None and len(idx):
                idx = self._cube_actions(idx)
            if len(idx):
                self._move(idx)
            self._refill()

    def _finish(self, slots: np.ndarray, probs_root: np.ndarray, cube_value: np.ndarray | None) -> None:
        if len(slots) == 0:
            return
        game = self.game[slots]
        values = probs_root - self.luck[slots]
        plies = self.ply[slots]
        block = (game - self.first) // self.chunk
        one = block.min() == block.max()  # the usual case: every game here is of one block
        for k in block[:1] if one else np.unique(block):
            here = slice(None) if one else block == k
            b = self.blocks.get(int(k))
            if b is None:
                start = int(k) * self.chunk
                b = self.blocks[int(k)] = _Block(self.first + start, min(self.chunk, self.games - start))
            at = game[here] - b.start
            b.values[at] = values[here]
            b.plies[at] = plies[here]
            if cube_value is not None:
                b.cube_values[at] = cube_value[here]
            b.done += len(at)
            if b.done == b.size:  # the block's last game: keep its statistics, drop its results
                self.done[int(k)] = _Statistics.of(b.values, b.cube_values, b.plies)
                del self.blocks[int(k)]
                self._merge_done()
        self.running[slots] = False
        if self.on_games is not None:
            self.on_games(len(slots))

    def _merge_done(self) -> None:
        # merge in block order (whatever order the blocks finish in, so the sums do not depend on batch)
        while self.next_block in self.done:
            stats = self.done.pop(self.next_block)
            self.merged = stats if self.merged is None else self.merged.merge(stats)
            self.next_block += 1

    def statistics(self) -> _Statistics:
        """The merged statistics of all blocks (after :meth:`play`)."""
        assert not self.blocks and not self.done and self.merged is not None, "games left unfinished"
        return self.merged

    def _refill(self) -> None:
        left = self.first + self.games - self.next_game
        if left <= 0:
            return
        free = np.flatnonzero(~self.running)[:left]
        if len(free) == 0:
            return
        self.game[free] = np.arange(self.next_game, self.next_game + len(free))
        self.next_game += len(free)
        self.boards[free] = self.root
        self.ply[free] = 0
        self.luck[free] = 0.0
        self.running[free] = True
        if self.cubes is not None:
            self.cubes.reset(free)

    def _truncate(self, idx: np.ndarray) -> np.ndarray:
        stop = idx[self.ply[idx] >= self.truncate]
        if len(stop) == 0:
            return idx
        from nard_ai.model.network import invert_probs

        probs = np.asarray(self.agent.evaluate(self.boards[stop])[0], dtype=np.float64)
        mover = self.ply[stop] & 1
        root = probs.copy()
        flip = mover == 1
        root[flip] = invert_probs(probs[flip])
        cube_value = None
        if self.cubes is not None:
            cube_value = self.cubes.position_value(stop, mover, probs, self.boards[stop])
        self._finish(stop, root, cube_value)
        self.truncated += len(stop)
        return idx[self.ply[idx] < self.truncate]

    def _cube_actions(self, idx: np.ndarray) -> np.ndarray:
        # with a fixed root action the root side's first decision (ply 0) is already taken
        acting = idx[self.ply[idx] > 0] if self.cubes.skip_first else idx
        if len(acting) == 0:
            return idx
        mover = self.ply[acting] & 1
        passed, root_points = self.cubes.act(acting, mover, self.boards[acting], self.agent)
        if len(passed) == 0:
            return idx
        probs_root = self.result_probs(np.sign(root_points)).astype(np.float64)
        self._finish(acting[passed], probs_root, self.cubes.score(root_points))
        self.passes += len(passed)
        return idx[self.running[idx]]

    def _move(self, idx: np.ndarray) -> None:
        boards = self.boards[idx]
        mover = self.ply[idx] & 1
        roll = rollout_dice(self.seed, self.game[idx], self.ply[idx])
        if self.vr:
            after, luck = self._lucky_plays(boards, roll)
            self.luck[idx] += _flip_diff(luck, mover == 1)
        else:
            after = self._plays(boards, roll)
        self.ply[idx] += 1
        if self.ply[idx].max() > MAX_PLIES:
            raise RuntimeError(f"a rollout game passed {MAX_PLIES} plies")
        finished = ~(after > 0).any(axis=1)
        if finished.any():
            done = idx[finished]
            points = game_result_unchecked(after[finished])  # the mover's view
            root_points = np.where(mover[finished] == 0, points, -points)
            cube_value = None
            if self.cubes is not None:
                cube_value = self.cubes.score(root_points * self.cubes.value[done])
            self._finish(done, self.result_probs(root_points).astype(np.float64), cube_value)
            idx, after = idx[~finished], after[~finished]
        self.boards[idx] = swap_sides_unchecked(after)

    # ---------------------------------------------------------------- move choice

    def _merge(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Distinct rows and the inverse map while repeats are common; ``None`` once they are not."""
        if not self.dedup:
            return None
        first, inverse = _unique_rows(rows)
        if len(first) > (1.0 - _DEDUP_MIN_SHARE) * len(rows):
            self.dedup = False  # from here on the games have diverged
            return None
        return first, inverse

    def _plays(self, boards: np.ndarray, roll: np.ndarray) -> np.ndarray:
        """The agent's play of each ``(board, roll)``: ``(N, 26)`` afterstates (mover's view)."""
        merged = self._merge(np.concatenate([boards, roll], axis=1))
        if merged is None:
            return self.agent.choose_plays(boards, roll)
        first, inverse = merged
        return self.agent.choose_plays(boards[first], roll[first])[inverse]

    def _lucky_plays(self, boards: np.ndarray, roll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The agent's plays and the luck of each roll, ``(N, 5)`` in the mover's view (module docstring)."""
        merged = self._merge(boards)
        first, inverse = merged if merged is not None else (np.arange(len(boards)), np.arange(len(boards)))
        distinct = boards[first]
        after21, probs21 = self._roll_values(distinct)
        mean = np.einsum("r,nrf->nf", ROLL_WEIGHTS, probs21.reshape(len(distinct), len(ROLLS_21), 5))
        row = inverse * len(ROLLS_21) + _ROLL_INDEX[roll[:, 0], roll[:, 1]]
        luck = probs21[row] - mean[inverse]
        if self.fast_vr and self.agent_ply > 0:
            after = self.agent.choose_plays(boards, roll)
        else:
            # 0-ply (or an agent valuing the rolls itself): the expansion holds the play for the roll thrown
            after = after21[row]
        return after, luck

    def _roll_values(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best play of each board x each of the 21 rolls and its value for the mover.

        Returns ``(afterstates (21 N, 26) int8, probs (21 N, 5) float64)``,
        rows ``21 i .. 21 i + 20`` for ``boards[i]`` in :data:`ROLLS_21` order.
        """
        n = len(boards)
        k = len(ROLLS_21)
        after = np.empty((n * k, BOARD_SIZE), dtype=np.int8)
        probs = np.empty((n * k, 5), dtype=np.float64)
        step = max(1, VR_CHUNK // k)
        for start in range(0, n, step):
            chunk = boards[start : start + step]
            rows = slice(start * k, (start + len(chunk)) * k)
            reps = np.repeat(chunk, k, axis=0)
            dice = np.tile(ROLLS_21, (len(chunk), 1))
            after[rows], probs[rows] = self._best_plays(reps, dice)
        return after, probs

    def _best_plays(self, boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.fast_vr:
            from nard_ai.search.lookahead import afterstate_probs, select_plays

            agent = self.agent
            sel = select_plays(agent.evaluator, boards, dice, agent.rules)
            if self.agent_ply <= 1:
                return sel.afterstates, sel.probs
            # gnubg: the best 0-ply play, re-evaluated at ply - 1
            return sel.afterstates, afterstate_probs(
                agent.evaluator, sel.afterstates, self.agent_ply - 1, agent.rules
            )
        from nard_ai.model.network import invert_probs

        after = self.agent.choose_plays(boards, dice)
        probs = invert_probs(
            np.asarray(self.agent.evaluate(swap_sides_unchecked(after))[0], dtype=np.float64)
        )
        done = ~(after > 0).any(axis=1)
        if done.any():
            probs[done] = self.result_probs(game_result_unchecked(after[done]))
        return after, probs


class _Cubes:
    """The cube of each slot of a cubeful rollout, kept from the root side's view.

    ``value`` is the cube value, ``owner`` -1 (centred), 0 (the root side) or
    1 (its opponent). Decisions are taken per group of games sharing a cube
    state (value, owner, side on roll): a handful of groups, each vectorized.
    """

    def __init__(self, cube: CubeState, slots: int, efficiency: CubeEfficiency | float) -> None:
        self.root = cube
        self.efficiency = efficiency
        self.start_owner = {CENTRED: -1, ON_ROLL: 0, OPPONENT: 1}[cube.owner]
        self.start_value = cube.value
        self.value = np.full(slots, cube.value, dtype=np.int64)
        self.owner = np.full(slots, self.start_owner, dtype=np.int64)
        self.skip_first = False  # the root side's first cube action is already taken

    def root_action(self, action: str) -> None:
        """Fix the root side's cube action before its first roll (``rollout``'s ``root_action``)."""
        self.skip_first = True
        if action == "double_take":
            self.start_value, self.start_owner = 2 * self.root.value, 1
            self.value[:] = self.start_value
            self.owner[:] = self.start_owner

    def reset(self, slots: np.ndarray) -> None:
        self.value[slots] = self.start_value
        self.owner[slots] = self.start_owner

    def state(self, value: int, owner: int, mover: int) -> CubeState:
        """The cube state from the mover's view."""
        rel = CENTRED if owner < 0 else (ON_ROLL if owner == mover else OPPONENT)
        root = self.root
        score = root.score if mover == 0 else (root.score[1], root.score[0])
        return CubeState(
            value=value,
            owner=rel,
            match_length=root.match_length,
            score=score,
            crawford=root.crawford,
            jacoby=root.jacoby,
            beavers=root.beavers,
        )

    def groups(self, slots: np.ndarray, mover: np.ndarray):
        """``(CubeState, members)`` for each cube state among ``slots`` (``members`` index ``slots``)."""
        key = (self.value[slots] * 3 + self.owner[slots] + 1) * 2 + mover
        keys, inverse = np.unique(key, return_inverse=True)
        for j in range(len(keys)):
            members = np.flatnonzero(inverse == j)
            s, m = slots[members[0]], int(mover[members[0]])
            yield self.state(int(self.value[s]), int(self.owner[s]), m), members

    def score(self, root_points: np.ndarray) -> np.ndarray:
        """Cubeful result of games ending with ``root_points`` (result x cube value, root side's view)."""
        root = self.root
        if root.is_money:
            return root_points / root.value
        points, inverse = np.unique(root_points, return_inverse=True)
        mwc = np.array([mwc_at_score(root.away, root.opp_away, int(p), root.crawford) for p in points])
        return mwc[inverse.reshape(-1)]

    @staticmethod
    def _equity(probs: np.ndarray, cs: CubeState, x: np.ndarray) -> np.ndarray:
        p = as_probs(probs)
        return money_cubeful(p, cs, x) if cs.is_money else match_cubeful(p, cs, x)

    def position_value(self, slots, mover, probs, boards) -> np.ndarray:
        """Cubeful value (root side's view) of positions where the games stop; ``probs`` for the mover."""
        x = efficiencies(boards, self.efficiency)
        out = np.zeros(len(slots))
        for cs, m in self.groups(slots, mover):
            v = self._equity(probs[m], cs, x[m])
            if self.root.is_money:
                v = v * cs.value / self.root.value
                out[m] = v if mover[m[0]] == 0 else -v
            else:
                out[m] = v if mover[m[0]] == 0 else 1.0 - v
        return out

    def act(self, slots, mover, boards, agent) -> tuple[np.ndarray, np.ndarray]:
        """Let each side on roll double and its opponent answer.

        Returns the positions in ``slots`` of the games that ended in a pass,
        and their points (cube value, root side's view); takes update the cube.
        """
        groups = [(cs, m) for cs, m in self.groups(slots, mover) if cs.can_double]
        if not groups:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        ask = np.concatenate([m for _, m in groups])
        probs = np.zeros((len(slots), 5))
        probs[ask] = as_probs(agent.evaluate(boards[ask])[0])
        x = np.zeros(len(slots))
        x[ask] = efficiencies(boards[ask], self.efficiency)
        passed, points = [], []
        for cs, m in groups:
            nd = self._equity(probs[m], cs, x[m])
            dt = self._equity(probs[m], cs.doubled(), x[m])
            if cs.is_money:
                dt, dp = 2.0 * dt, 1.0
            else:
                dp = mwc_at_score(cs.away, cs.opp_away, cs.value, cs.crawford)
            # money with beavers: a taker whose take is worth more than 0 to it (dt < 0 for the doubler)
            # beavers, redoubling at once and keeping the cube (cube.cube_decision_from_probs)
            beaver = (dt < 0.0) if (cs.is_money and cs.beavers) else np.zeros(len(m), dtype=bool)
            answer = np.minimum(np.where(beaver, 2.0 * dt, dt), dp)
            double = answer >= nd  # else no double (or too good: play on)
            drop = m[double & (dt >= dp)]  # double, pass: the mover wins the current cube
            take = slots[m[double & (dt < dp)]]  # double, take: the taker owns the cube at twice the value
            self.value[take] *= np.where(beaver[double & (dt < dp)], 4, 2)  # a beaver: four times
            self.owner[take] = 1 - mover[m[0]]
            if len(drop):
                passed.append(drop)
                points.append(np.full(len(drop), cs.value if mover[m[0]] == 0 else -cs.value, dtype=np.int64))
        if not passed:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(passed), np.concatenate(points)


# --------------------------------------------------------------------------- candidate plays


@dataclass(frozen=True)
class PlayRollout:
    """The rollout of one candidate play, for the side making it.

    Attributes:
        afterstate: ``(26,)`` int8, the board after the play (the mover's view).
        result: the :class:`RolloutResult` of the position after the play,
            turned to the mover's view: probabilities for the mover, equity and
            cubeful value for the mover (money: points per unit of the cube
            before the play; match: the mover's match-winning chance).
        search_equity: the agent's own cubeless equity for the play (the
            ranking that chose the candidates), points per game for the mover.
    """

    afterstate: np.ndarray
    result: RolloutResult
    search_equity: float


def _for_mover(r: RolloutResult, match: bool) -> RolloutResult:
    """A rollout of the opponent's position (opponent on roll) as seen by the side that moved into it."""
    from nard_ai.model.network import invert_probs

    cubeful = None if r.cubeful is None else (1.0 - r.cubeful if match else -r.cubeful)
    return RolloutResult(
        probs=invert_probs(r.probs),
        probs_ci=r.probs_ci[[0, 3, 4, 1, 2]],
        equity=-r.equity,
        equity_ci=r.equity_ci,
        cubeful=cubeful,
        cubeful_ci=r.cubeful_ci,
        games=r.games,
        truncated=r.truncated,
        mean_plies=r.mean_plies,
        seconds=r.seconds,
        variance_reduction=r.variance_reduction,
        ply=r.ply,
        passes=r.passes,
    )


def _finished_result(afterstate: np.ndarray, cube: CubeState | None) -> RolloutResult:
    # the play bears off the mover's last checker: the exact result (RULES.md section 6)
    from nard_ai.model.network import result_probs

    points = int(game_result(afterstate))
    cubeful = None
    if cube is not None:
        cubeful = (
            points * 1.0
            if cube.is_money
            else mwc_at_score(cube.away, cube.opp_away, points * cube.value, cube.crawford)
        )
    return RolloutResult(
        probs=result_probs(np.array([points]))[0].astype(np.float64),
        probs_ci=np.zeros(5),
        equity=float(points),
        equity_ci=0.0,
        cubeful=cubeful,
        cubeful_ci=None if cube is None else 0.0,
        games=0,
        truncated=0,
        mean_plies=0.0,
        seconds=0.0,
        variance_reduction=False,
        ply=None,
    )


def rollout_plays(
    board: np.ndarray,
    dice,
    games: int,
    ply: int = 0,
    cube: CubeState | None = None,
    seed: int = 0,
    agent=None,
    *,
    candidates: int = 4,
    **rollout_options,
) -> list[PlayRollout]:
    """Roll out the best candidate plays of a position and rank them by the rollout (gnubg's "rollout of moves").

    The agent ranks every legal play of ``board`` with ``dice``
    (:meth:`nard_ai.search.lookahead.Agent.rank_plays`, at its own ply); the best
    ``candidates`` are each rolled out with :func:`rollout` from the position
    after the play (the opponent on roll), all with the same ``seed``, so
    every candidate meets the same dice (gnubg's default: the comparison
    between plays is sharper than each rollout alone). A play that bears off
    the mover's last checker gets its exact result.

    Args:
        board: ``(26,)`` int8, the mover's view, before the play.
        dice: the roll, two integers 1..6.
        games: games per candidate.
        ply: search depth of the shipped network when ``agent`` is ``None``
            (it ranks the candidates and plays the rollouts).
        cube: ``None`` (cubeless), or the cube state before the play, from the
            mover's view; the rollouts then start from the opponent's side of
            it (:meth:`nard_ai.cube.CubeState.swapped`) and rank by cubeful value.
        seed: seed of the dice, shared by every candidate.
        agent: a :class:`nard_ai.search.lookahead.Agent` (anything with ``rank_plays``
            and what :func:`rollout` needs).
        candidates: how many of the best plays to roll out, >= 1.
        **rollout_options: passed to :func:`rollout` (``truncate``,
            ``variance_reduction``, ``batch``, ``efficiency``, ``threads``).

    Returns:
        A list of :class:`PlayRollout`, best first by the rollout (cubeful
        value with a cube, else cubeless equity).

    Raises:
        ValueError: on an invalid board or dice, a finished game, ``candidates
        < 1``, an agent without ``rank_plays``, and whatever :func:`rollout` raises.
    """
    if isinstance(candidates, bool) or not isinstance(candidates, Integral) or candidates < 1:
        raise ValueError(f"candidates must be an integer >= 1, got {candidates!r}")
    if "root_action" in rollout_options:
        raise ValueError("rollout_plays takes no root_action: the cube action before a play is not a play's")
    if cube is not None:
        check_cube(cube)
    ply = check_ply(ply)
    board = validate_board(np.asarray(board).reshape(-1))
    if game_result(board) != 0:
        raise ValueError("the game is over: there is no play to roll out")
    if agent is None:
        from nard_ai.search.loading import default_agent

        agent = default_agent(int(ply))
    elif not callable(getattr(agent, "rank_plays", None)):
        raise ValueError(
            f"agent must have rank_plays(board, dice) (a nard_ai.search.lookahead.Agent), got {agent!r}"
        )
    ranked = agent.rank_plays(board, dice)
    out = []
    for k in range(min(int(candidates), len(ranked))):
        after = np.array(ranked.afterstates[k], dtype=np.int8)
        if game_result(after) != 0:
            result = _finished_result(after, cube)
        else:
            r = rollout(
                swap_sides_unchecked(after),
                games,
                ply=0,
                cube=None if cube is None else cube.swapped(),
                seed=seed,
                agent=agent,
                **rollout_options,
            )
            result = _for_mover(r, cube is not None and not cube.is_money)
        out.append(PlayRollout(after, result, float(ranked.equity[k])))
    key = (lambda p: p.result.cubeful) if cube is not None else (lambda p: p.result.equity)
    return sorted(out, key=key, reverse=True)
