"""Monte Carlo rollouts of a position, cubeless or cubeful, batched in lockstep.

A rollout plays ``games`` games from a position to the end (or to a
truncation point) with an agent choosing every play, and averages the
results. Perspective: the position is the board of **the side on roll, before
it rolls** (the root side); every number reported is for that side.

How
---
* **Lockstep.** All games of a batch advance one ply per step: one
  ``agent.choose_plays`` call (through :func:`nard_ai.movegen.legal_plays_batch`
  inside the agent's search) for every running game, then the games are
  stepped as :mod:`nard_ai.game` does (a play that bears off the mover's last
  checker ends the game, RULES.md §6; otherwise the board is turned with
  :func:`~nard_ai.board.swap_sides`).
* **Dice.** Game ``i`` rolls from its own generator,
  ``np.random.default_rng([seed, i])``, so a rollout is reproducible whatever
  the batch size. The first two rolls are stratified: game ``i`` opens with
  the ``(i mod 36)``-th of the 36 ordered rolls and answers with the
  ``(i div 36 mod 36)``-th, so ``games`` a multiple of 1296 covers every pair
  of first rolls equally (gnubg's quasi-random dice).
* **Variance reduction** (``variance_reduction=True``, cubeless): at every
  turn the agent plays all 21 rolls; the *luck* of the roll actually thrown is
  the value of its chosen play minus the roll-weighted mean over the 21 rolls
  (each of the five probabilities, from the root side's view). Each game's
  result minus its summed luck is an unbiased estimate of the same mean with
  far less variance (gnubg's luck adjustment). It costs 21 evaluations per
  ply instead of one.
* **Truncation** (``truncate=N``): games still running after ``N`` plies are
  scored with the agent's own evaluation of the position reached.
* **Cubeful** (``cube=CubeState(...)``): before each roll the side on roll
  doubles when :mod:`nard_ai.cube`'s model says so (no double / double, take /
  double, pass from the agent's probabilities at the position, "too good"
  plays on), the opponent takes or passes likewise, and results count the
  cube: money in points per unit of the starting cube, match play in the
  root side's match-winning chance after the game. Cubeful games are not
  luck-adjusted.
* **Confidence.** Every mean comes with the half-width of its 95% interval,
  ``1.96 * std / sqrt(games)`` over the per-game values (conservative with
  stratified dice).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .board import game_result, swap_sides_unchecked, validate_board
from .cube import (
    CENTRED,
    DEFAULT_EFFICIENCY,
    ON_ROLL,
    OPPONENT,
    CubeEfficiency,
    CubeState,
    _as_probs,
    _match_cubeful,
    _money_cubeful,
    _mwc,
    cube_efficiency,
)

__all__ = ["RolloutResult", "rollout", "ROLLS_21", "ROLL_WEIGHTS"]

#: The 21 distinct rolls (larger die first) and their chances out of 36.
ROLLS_21 = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int8)
ROLL_WEIGHTS = np.where(ROLLS_21[:, 0] == ROLLS_21[:, 1], 1.0, 2.0) / 36.0
_ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
for _k, (_a, _b) in enumerate(ROLLS_21):
    _ROLL_INDEX[_a, _b] = _ROLL_INDEX[_b, _a] = _k
#: The 36 ordered rolls, for stratification.
ROLLS_36 = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)

_CHUNK = 64  # dice drawn per game at a time
MAX_PLIES = 5000
Z95 = 1.959963984540054


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

    @property
    def games_per_s(self) -> float:
        return self.games / max(self.seconds, 1e-9)


def _ci(values: np.ndarray) -> np.ndarray:
    n = len(values)
    if n < 2:
        return np.full(values.shape[1:], np.nan)
    return Z95 * values.std(axis=0, ddof=1) / np.sqrt(n)


class _Dice:
    """Per-game dice streams: stratified first two rolls, then ``default_rng([seed, game])``."""

    def __init__(self, seed: int, game_ids: np.ndarray) -> None:
        self.rngs = [np.random.default_rng([seed, int(g)]) for g in game_ids]
        self.ids = game_ids
        self.buf = np.stack([rng.integers(1, 7, size=(_CHUNK, 2), dtype=np.int8) for rng in self.rngs])
        self.buf[:, 0] = ROLLS_36[game_ids % 36]
        self.buf[:, 1] = ROLLS_36[(game_ids // 36) % 36]

    def roll(self, idx: np.ndarray, ply: np.ndarray) -> np.ndarray:
        need = ply >= self.buf.shape[1]
        if need.any():
            extra = np.stack([rng.integers(1, 7, size=(_CHUNK, 2), dtype=np.int8) for rng in self.rngs])
            self.buf = np.concatenate([self.buf, extra], axis=1)
        return self.buf[idx, ply]


def _afterstate_probs(agent, afterstates: np.ndarray, invert_probs, result_probs) -> np.ndarray:
    """gnubg-order probabilities of afterstates for the side that just moved (exact when it has finished)."""
    probs = invert_probs(np.asarray(agent.evaluate(swap_sides_unchecked(afterstates))[0], dtype=np.float64))
    done = ~(afterstates > 0).any(axis=1)
    if done.any():
        probs[done] = result_probs(game_result(afterstates[done]))
    return probs


def _to_root(values: np.ndarray, mover: np.ndarray, invert_probs) -> np.ndarray:
    """Probabilities for the mover -> for the root side (the mover is the root when ``mover == 0``)."""
    out = values.copy()
    flip = mover == 1
    if flip.any():
        out[flip] = invert_probs(values[flip])
    return out


def rollout(
    board: np.ndarray,
    games: int,
    ply: int = 0,
    cube: CubeState | None = None,
    seed: int = 0,
    agent=None,
    *,
    truncate: int | None = None,
    variance_reduction: bool = True,
    batch: int = 1296,
    efficiency: CubeEfficiency = DEFAULT_EFFICIENCY,
) -> RolloutResult:
    """Roll out a position for the side on roll, before it rolls.

    Args:
        board: ``(26,)`` int8, the root side's view, game not over.
        games: number of games, >= 1 (1296 stratifies the first two rolls fully).
        ply: search depth of the shipped network when ``agent`` is ``None``.
        cube: ``None`` for a cubeless rollout, or the cube state at the root
            (money or match) for a cubeful one.
        seed: seed of the dice.
        agent: anything with ``choose_plays(boards, dice)`` and
            ``evaluate(boards) -> (probs, equity)`` (a :class:`nard_ai.search.Agent`
            at any ply); ``None`` loads the shipped network at ``ply``.
        truncate: stop each game after this many plies and score it with the
            agent's evaluation; ``None`` plays to the end.
        variance_reduction: luck-adjust cubeless results (21 evaluations per ply).
        batch: games in flight at once.
        efficiency: cube efficiency parameters for cubeful rollouts.

    Returns:
        A :class:`RolloutResult` for the root side.

    Raises:
        ValueError: on an invalid or finished board, ``games < 1``, a
            truncation below 1 or a batch below 1.
    """
    from .network import invert_probs, result_probs

    board = validate_board(np.asarray(board).reshape(-1))
    if game_result(board) != 0:
        raise ValueError("the game is over: nothing to roll out")
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if truncate is not None and truncate < 1:
        raise ValueError(f"truncate must be >= 1 plies (or None), got {truncate}")
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    if agent is None:
        from .cube import _default_agent

        agent = _default_agent(int(ply))
    agent_ply = getattr(agent, "ply", ply)
    cubeful = cube is not None
    vr = variance_reduction and not cubeful
    t0 = time.perf_counter()
    values = np.zeros((games, 5))
    cube_values = np.zeros(games)
    plies = np.zeros(games, dtype=np.int64)
    truncated = 0
    for start in range(0, games, batch):
        ids = np.arange(start, min(games, start + batch))
        out = _rollout_batch(
            board, ids, seed, agent, cube, truncate, vr, efficiency, invert_probs, result_probs
        )
        values[ids], cube_values[ids], plies[ids] = out[0], out[1], out[2]
        truncated += out[3]
    equity = 2.0 * values[:, 0] - 1.0 + values[:, 1] + values[:, 2] - values[:, 3] - values[:, 4]
    return RolloutResult(
        probs=values.mean(axis=0),
        probs_ci=_ci(values),
        equity=float(equity.mean()),
        equity_ci=float(_ci(equity[:, None])[0]),
        cubeful=float(cube_values.mean()) if cubeful else None,
        cubeful_ci=float(_ci(cube_values[:, None])[0]) if cubeful else None,
        games=games,
        truncated=truncated,
        mean_plies=float(plies.mean()),
        seconds=time.perf_counter() - t0,
        variance_reduction=vr,
        ply=agent_ply,
    )


def _rollout_batch(board, ids, seed, agent, cube, truncate, vr, efficiency, invert_probs, result_probs):
    n = len(ids)
    dice = _Dice(seed, ids)
    boards = np.tile(board, (n, 1))
    mover = np.zeros(n, dtype=np.int64)  # 0 = the root side is on roll
    ply = np.zeros(n, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    result = np.zeros((n, 5))  # root side's view
    luck = np.zeros((n, 5))
    cube_result = np.zeros(n)
    truncated = 0
    if cube is not None:
        cubes = _CubeTrack(cube, n)
    while True:
        idx = np.flatnonzero(~done)
        if len(idx) == 0:
            break
        if truncate is not None:
            stop = idx[ply[idx] >= truncate]
            if len(stop):
                probs = np.asarray(agent.evaluate(boards[stop])[0], dtype=np.float64)
                result[stop] = _to_root(probs, mover[stop], invert_probs)
                if cube is not None:
                    cube_result[stop] = cubes.value_of_position(
                        stop, probs, mover[stop], boards[stop], efficiency
                    )
                done[stop] = True
                truncated += len(stop)
                idx = np.flatnonzero(~done)
                if len(idx) == 0:
                    break
        if cube is not None:
            ended = cubes.cube_actions(idx, boards[idx], mover[idx], agent, efficiency)
            if len(ended):
                cube_result[ended] = cubes.final[ended]
                points = cubes.final_points[ended]  # cubeless view of a pass: a single game won or lost
                result[ended] = result_probs(np.sign(points).astype(np.int64))
                done[ended] = True
                idx = np.flatnonzero(~done)
                if len(idx) == 0:
                    break
        roll = dice.roll(idx, ply[idx])
        if vr:
            reps = np.repeat(boards[idx], len(ROLLS_21), axis=0)
            after21 = agent.choose_plays(reps, np.tile(ROLLS_21, (len(idx), 1)))
            v21 = _afterstate_probs(agent, after21, invert_probs, result_probs).reshape(
                len(idx), len(ROLLS_21), 5
            )
            k = _ROLL_INDEX[roll[:, 0], roll[:, 1]]
            pick = np.arange(len(idx)) * len(ROLLS_21) + k
            after = after21[pick]
            mean = np.einsum("r,nrf->nf", ROLL_WEIGHTS, v21)
            luck[idx] += _to_root(v21[np.arange(len(idx)), k], mover[idx], invert_probs) - _to_root(
                mean, mover[idx], invert_probs
            )
        else:
            after = agent.choose_plays(boards[idx], roll)
        finished = ~(after > 0).any(axis=1)
        if finished.any():
            fin = idx[finished]
            points = game_result(after[finished])
            result[fin] = _to_root(result_probs(points).astype(np.float64), mover[fin], invert_probs)
            if cube is not None:
                root_points = np.where(mover[fin] == 0, points, -points) * cubes.value[fin]
                cube_result[fin] = cubes.score_points(fin, root_points)
            done[fin] = True
        boards[idx] = np.where(finished[:, None], after, swap_sides_unchecked(after))
        mover[idx] ^= 1
        ply[idx] += 1
        if (ply > MAX_PLIES).any():
            raise RuntimeError(f"a rollout game passed {MAX_PLIES} plies")
    values = result - luck if vr else result
    return values, cube_result, ply, truncated


class _CubeTrack:
    """The cube of each game of a cubeful rollout, kept from the root side's view."""

    def __init__(self, cube: CubeState, n: int) -> None:
        self.root = cube
        self.value = np.full(n, cube.value, dtype=np.int64)
        owner = {CENTRED: -1, ON_ROLL: 0, OPPONENT: 1}[cube.owner]
        self.owner = np.full(n, owner, dtype=np.int64)  # -1 centred, 0 root, 1 opponent
        self.final = np.zeros(n)
        self.final_points = np.zeros(n, dtype=np.int64)

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

    def score_points(self, games: np.ndarray, root_points: np.ndarray) -> np.ndarray:
        """Cubeful result of games ending with ``root_points`` (result x cube value, root side's view)."""
        root = self.root
        if root.is_money:
            return root_points / root.value
        return np.array(
            [_mwc(root.away, root.opp_away, int(p), root.crawford) for p in root_points], dtype=np.float64
        )

    def _equity(self, probs: np.ndarray, cs: CubeState, x: np.ndarray) -> np.ndarray:
        p = _as_probs(probs)
        return _money_cubeful(p, cs, x) if cs.is_money else _match_cubeful(p, cs, x)

    def value_of_position(self, games, probs, mover, boards, efficiency) -> np.ndarray:
        """Cubeful value (root side's view) of positions where the game is stopped."""
        x = cube_efficiency(boards, efficiency)
        out = np.zeros(len(games))
        for k, g in enumerate(games):
            cs = self.state(int(self.value[g]), int(self.owner[g]), int(mover[k]))
            v = float(self._equity(probs[k], cs, x[k]))
            if self.root.is_money:
                v = v * cs.value / self.root.value
                out[k] = v if mover[k] == 0 else -v
            else:
                out[k] = v if mover[k] == 0 else 1.0 - v
        return out

    def cube_actions(self, idx, boards, mover, agent, efficiency) -> np.ndarray:
        """Let each side on roll double and its opponent answer; returns the games that ended in a pass."""
        states = [
            self.state(int(self.value[g]), int(self.owner[g]), int(m))
            for g, m in zip(idx, mover, strict=True)
        ]
        can = np.array([cs.can_double for cs in states], dtype=bool)
        if not can.any():
            return np.zeros(0, dtype=np.int64)
        sel = np.flatnonzero(can)
        probs = _as_probs(agent.evaluate(boards[sel])[0])
        x = cube_efficiency(boards[sel], efficiency)
        ended = []
        for k, j in enumerate(sel):
            cs, g = states[j], idx[j]
            nd = float(self._equity(probs[k], cs, x[k]))
            dt = float(self._equity(probs[k], cs.doubled(), x[k]))
            if cs.is_money:
                dt, dp = 2.0 * dt, 1.0
            else:
                dp = _mwc(cs.away, cs.opp_away, cs.value, cs.crawford)
            if min(dt, dp) < nd:
                continue  # no double (or too good: play on)
            if dt >= dp:  # double, pass: the mover wins the current cube
                root_points = cs.value if mover[j] == 0 else -cs.value
                self.final_points[g] = root_points
                self.final[g] = self.score_points(np.array([g]), np.array([root_points]))[0]
                ended.append(g)
            else:  # double, take: the taker owns the cube at twice the value
                self.value[g] *= 2
                self.owner[g] = 1 - mover[j]
        return np.array(ended, dtype=np.int64)
