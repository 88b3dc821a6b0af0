"""The games of a rollout in lockstep: its dice, its slots on :class:`nard_ai.play.lockstep.Lockstep`, its cubes, its statistics.

:func:`nard_ai.play.rollout.rollout` (whose module docstring describes the method: dice,
variance reduction, truncation, the cube, memory) plays its games here. :class:`_RolloutGames`
keeps the games in the slots of a :class:`~nard_ai.play.lockstep.Lockstep` (the root side on roll
at even plies, seat 0), rolls them with :func:`rollout_dice` (counter-based, so a game's dice
depend only on the seed and its number), lets the agent choose the plays of all of them at once
(repeated ``(board, roll)`` pairs merged while the games have not diverged), adds up each game's
luck, stops games at the truncation ply, and takes the cube actions of a cubeful rollout
(:class:`_Cubes`, with :mod:`nard_ai.play.cube_policy`'s batched decisions). Per-game results
go to blocks of :data:`CHUNK_GAMES` games whose statistics (:class:`_Statistics`) are merged in
block order, so the means do not depend on the batch size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from nard_ai.core.board import BOARD_SIZE, game_result_unchecked, swap_sides_unchecked
from nard_ai.core.dice import ROLL_INDEX, ROLL_WEIGHTS, ROLLS_21, ROLLS_36, splitmix64
from nard_ai.core.game import CENTERED
from nard_ai.cube import (
    CubeEfficiency,
    CubeState,
    as_probs,
    efficiencies,
    finished_points,
    match_cubeful,
    money_cubeful,
    mwc_at_score,
)
from nard_ai.cube.decision import DOUBLE_PASS, DOUBLE_TAKE
from nard_ai.play.cube_policy import OWNER_BY_CODE, model_actions, owner_codes, owner_seat, taken_cube
from nard_ai.play.lockstep import Lockstep
from nard_ai.search.lookahead import agent_value

CHUNK_GAMES = 1 << 17
"""Games per block of per-game results (module docstring, "Memory"): 131,072 games, about 7 MB of
results and about as much again while a block's statistics are taken."""

VR_CHUNK = 1024
"""Positions (board x roll) per search call in the 21-roll expansion of variance reduction."""
Z95 = 1.959963984540054
_DEDUP_MIN_SHARE = 0.1  # keep merging repeated (board, roll) pairs while at least this share repeats

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
    which = (splitmix64(seed, counter) % np.uint64(36)).astype(np.int64)
    first, reply = _stratification(seed)
    i, j = games % 36, (games // 36) % 36
    which = np.where(plies == 0, first[i], np.where(plies == 1, reply[(i + j) % 36], which))
    return ROLLS_36[which]


@functools.lru_cache(maxsize=64)
def _stratification(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The seed's two random orders of the 36 rolls (first roll, reply), from SplitMix64 streams of their own."""
    counters = np.arange(1, 37, dtype=np.uint64)
    first = np.argsort(splitmix64(seed ^ 0xD1B54A32D192ED03, counters), kind="stable")
    reply = np.argsort(splitmix64(seed ^ 0x8CB92BA72F3D8DD7, counters), kind="stable")
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
    """What a rollout reports, from its per-game values (:meth:`_RolloutGames.statistics`)."""

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


class _RolloutGames:
    """The games of one rollout in ``batch`` slots of preallocated arrays (module docstring).

    Slot arrays: ``boards`` (the side on roll's view), ``ply`` (plies played; the
    root side is on roll at even plies) and ``running`` are the
    :class:`~nard_ai.play.lockstep.Lockstep`'s (``lock``, which also plays each
    ply); ``game`` (the game number a slot plays) and ``luck`` (summed luck, root
    side's view) are the rollout's own. Per-game
    outputs (root side's probabilities minus luck, cubeful value, plies) go
    to the :class:`_Block` of their game number, whose statistics are taken
    when its last game finishes (module docstring, "Memory").
    """

    def __init__(
        self, board, games, seed, agent, cube, truncate, vr, batch, efficiency, on_games=None, first=0
    ) -> None:
        from nard_ai.core.outcomes import result_probs

        self.result_probs = result_probs
        self.root, self.games, self.seed, self.agent = board, games, seed, agent
        self.first = first  # a shard plays the game numbers first .. first + games - 1
        self.truncate, self.vr = truncate, vr
        slots = min(batch, games)
        self.game = np.arange(first, first + slots, dtype=np.int64)
        self.lock = Lockstep(slots, what="rollout game")  # the root side on roll at even plies
        self.lock.start(np.arange(slots), board)
        self.boards, self.ply, self.running = self.lock.boards, self.lock.ply, self.lock.running
        self.luck = np.zeros((slots, 5))
        self.next_game = first + slots
        self.cubes = None if cube is None else _Cubes(cube, slots, efficiency)
        self.chunk = CHUNK_GAMES
        self.blocks: dict[int, _Block] = {}  # block number -> the results of its finished games
        self.done: dict[int, _Statistics] = {}  # finished blocks waiting for an earlier one
        self.merged: _Statistics | None = None  # blocks 0 .. next_block - 1
        self.next_block = 0
        self.on_games = on_games
        self.on_ply = None  # rollout's on_ply: called after every ply
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
            if self.on_ply is not None:
                self.on_ply()

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
        self.lock.start(free, self.root)
        self.luck[free] = 0.0
        if self.cubes is not None:
            self.cubes.reset(free)

    def _truncate(self, idx: np.ndarray) -> np.ndarray:
        stop = idx[self.ply[idx] >= self.truncate]
        if len(stop) == 0:
            return idx
        from nard_ai.core.outcomes import invert_probs

        probs = np.asarray(agent_value(self.agent, self.boards[stop]).probs, dtype=np.float64)
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
        finished, points = self.lock.play(idx, after)  # points: the mover's view
        if finished.any():
            done = idx[finished]
            root_points = np.where(mover[finished] == 0, points, -points)
            cube_value = None
            if self.cubes is not None:
                cube_value = self.cubes.score(self.cubes.points(done, root_points))
            self._finish(done, self.result_probs(root_points).astype(np.float64), cube_value)

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
        row = inverse * len(ROLLS_21) + ROLL_INDEX[roll[:, 0], roll[:, 1]]
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
        from nard_ai.core.outcomes import invert_probs

        after = self.agent.choose_plays(boards, dice)
        probs = invert_probs(
            np.asarray(agent_value(self.agent, swap_sides_unchecked(after)).probs, dtype=np.float64)
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
        self.start_owner = owner_seat(cube, 0)  # the root side in seat 0
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
        rel = OWNER_BY_CODE[int(owner_codes(owner, mover))]
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

    def points(self, slots: np.ndarray, root_points: np.ndarray) -> np.ndarray:
        """Points of games in ``slots`` ending with ``root_points`` (cubeless, root side's view) at their cube,
        with the Jacoby rule in money play (:func:`nard_ai.cube.state.finished_points`)."""
        root = self.root
        centred = self.owner[slots] == CENTERED
        return finished_points(root_points, self.value[slots], centred, root.is_money and root.jacoby)

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
        probs[ask] = as_probs(agent_value(agent, boards[ask]).probs)
        x = np.zeros(len(slots))
        x[ask] = efficiencies(boards[ask], self.efficiency)
        passed, points = [], []
        for cs, m in groups:
            # the one batched cube policy of the drivers (nard_ai.play.cube_policy), as cube sessions use it
            codes, beaver = model_actions(probs[m], cs, x[m])
            drop = m[codes == DOUBLE_PASS]  # double, pass: the mover wins the current cube
            took = slots[m[codes == DOUBLE_TAKE]]
            self.value[took], self.owner[took] = taken_cube(
                self.value[took], beaver[codes == DOUBLE_TAKE], 1 - mover[m[0]]
            )
            if len(drop):
                passed.append(drop)
                points.append(np.full(len(drop), cs.value if mover[m[0]] == 0 else -cs.value, dtype=np.int64))
        if not passed:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(passed), np.concatenate(points)
