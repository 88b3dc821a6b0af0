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

import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from nard_ai.core.board import (
    game_result,
    swap_sides_unchecked,
    validate_board,
)
from nard_ai.core.dice import ROLL_WEIGHTS, ROLLS_21, ROLLS_36  # re-exported here
from nard_ai.core.ply import check_ply
from nard_ai.cube import (
    CENTRED,
    DEFAULT_EFFICIENCY,
    CubeEfficiency,
    CubeState,
    check_cube,
    check_efficiency,
    finished_points,
    mwc_at_score,
)
from nard_ai.play.lockstep import MAX_PLIES
from nard_ai.play.results import in_shard_order
from nard_ai.play.rollout_games import (
    CHUNK_GAMES,
    VR_CHUNK,
    RolloutResult,
    _check_seed,
    _RolloutGames,
    rollout_dice,
)
from nard_ai.search.lookahead import values_positions

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
    "MAX_PLIES",
]

MAX_GAMES = 10_000_000
"""The most games one rollout takes: about 12 hours for a 0-ply rollout of the opening on this
project's two cores with the default network (generation 16, about 236 games/s; README, "The default
network"), about three with ``nard-rich.pt`` (about 1,000 games/s); deeper plies are many times slower.
Memory does not depend on it (:data:`CHUNK_GAMES`)."""


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
    on_ply: Callable[[], object] | None = None,
) -> RolloutResult:
    """Roll out a position for the side on roll, before it rolls.

    Args:
        board: ``(26,)`` int8, the root side's view, game not over.
        games: number of games, 1 .. :data:`MAX_GAMES` (1296 stratifies the first two rolls fully).
        ply: search depth of the default network when ``agent`` is ``None``.
        cube: ``None`` for a cubeless rollout, or the cube state at the root
            (money or match) for a cubeful one.
        seed: seed of the dice, ``0 <= seed < 2**64``.
        agent: anything with ``choose_plays(boards, dice)`` and
            ``evaluate(boards) -> (probs, equity)`` (a :class:`nard_ai.search.lookahead.Agent`
            at any ply); ``None`` loads the default network at ``ply``. A
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
        on_ply: optional callable ``on_ply()`` called after every ply of the games in flight
            (with no ``executor``): an exception it raises stops the rollout and propagates, so a
            caller can cancel a rollout or stop it at a time limit within one ply, even at 1-ply
            where the first games finish late.
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
            a bad seed or ``threads < 1``; an ``on_games`` or ``on_ply`` that is not
            callable, or an ``on_ply`` with an ``executor``;
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
    for name, hook in (("on_games", on_games), ("on_ply", on_ply)):
        if hook is not None and not callable(hook):
            raise ValueError(f"{name} must be a callable or None, got {hook!r}")
    if on_ply is not None and executor is not None:
        raise ValueError("on_ply needs the rollout in this process (executor=None)")
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
        if not (callable(getattr(agent, "choose_plays", None)) and values_positions(agent)):
            raise ValueError(
                f"agent must have choose_plays(boards, dice) and value(boards) (a nard_ai agent), got {agent!r}"
            )
        agent_ply = getattr(agent, "ply", None)
        if ply and agent_ply is not None and agent_ply != ply:
            raise ValueError(f"ply={ply} but the agent searches at ply {agent_ply}")
    if variance_reduction is None:
        # on from 1-ply, and in races at any ply: README, rollout figures
        from nard_ai.core.classes import race_flags

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
    run = _RolloutGames(board, int(games), seed, agent, cube, truncate, vr, int(batch), efficiency, on_games)
    run.on_ply = on_ply
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
    run = _RolloutGames(
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
    ordered = in_shard_order(shards)
    stats = ordered[0].statistics
    for r in ordered[1:]:
        stats = stats.merge(r.statistics)
    return stats.result(
        cubeful, truncated=sum(r.truncated for r in ordered), seconds=seconds,
        variance_reduction=variance_reduction, ply=ply, passes=sum(r.passes for r in ordered),
    )  # fmt: skip


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
    from nard_ai.core.outcomes import invert_probs

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
    from nard_ai.core.outcomes import result_probs

    points = int(game_result(afterstate))
    cubeful = None
    if cube is not None:
        centred = cube.owner == CENTRED
        cubeful = (
            float(finished_points(points, 1, centred, cube.jacoby))  # per unit of the root cube
            if cube.is_money
            else mwc_at_score(
                cube.away,
                cube.opp_away,
                int(finished_points(points, cube.value, centred, False)),
                cube.crawford,
            )
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
        ply: search depth of the default network when ``agent`` is ``None``
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
