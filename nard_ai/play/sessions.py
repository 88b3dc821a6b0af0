"""Playing with the doubling cube: money sessions and matches to N points, batched in lockstep.

Agents (:class:`nard_ai.search.lookahead.Agent`, or anything with ``evaluate(boards) ->
(probs (N, 5), equity (N,))`` for the side on roll and ``choose_plays(boards,
dice)``) play each other with the cube of RULES.md §8. :func:`play_money_session`
plays money games and reports points per game (ppg); :func:`play_matches`
plays matches to ``match_length`` points with the Crawford rule and reports
the share of matches won. Both report 95% confidence intervals.

The cube (RULES.md §8)
----------------------
* "On their own turn, **before rolling**, a player who owns the cube (or
  anyone while it is centred) may double." No one doubles before the opening
  roll: its dice are thrown before anyone could (RULES.md §2), so the first
  cube decision of a game is the second turn's.
* "The opponent either **takes** — the game value doubles and the taker now
  owns the cube, and only they may redouble — or **passes** and loses the
  current value at once." A game ended by a pass scores the cube value before
  the double, whatever gammon chances there were.
* "The final score is result points (1/2/3) × cube value."
* Money play: with ``jacoby=True`` a gammon or backgammon counts as a single
  game while the cube is centred (the Jacoby rule); with ``beavers=True`` a
  doubled side may beaver: take and at once redouble, keeping the cube (the
  game is then worth four times the value before the double). Raccoons are
  not offered. The cube stops at :data:`nard_ai.cube.MAX_CUBE` (4096): no
  double (or beaver) takes it above that.
* Match play: gammons and backgammons count (no Jacoby rule). "In the first
  game after either player first reaches one point short of the match length,
  nobody may double" (the Crawford game); in the games after it (post-Crawford)
  the trailer may double. A side may double only while winning the current
  cube would not already win it the match (:attr:`nard_ai.cube.CubeState.can_double`:
  such a cube is dead for the doubler; this is also why the post-Crawford
  leader never doubles). A match ends after the game in which a side reaches
  ``match_length`` points; the winner's final score can exceed it when that
  game was worth more than it needed.

Cube decisions: :class:`CubePolicy`
-----------------------------------
Each agent gets a policy (``policy_a``/``policy_b``; default
:func:`default_cube_policy`):

* ``CubePolicy("model")`` (:data:`MODEL_POLICY`, the default for network
  agents): the decisions of :mod:`nard_ai.cube.decision` (Janowski's cubeful equity
  with gnubg's cube efficiencies; the Kazaross-XG2 MET in match play) from the
  agent's own cubeless probabilities of the position before the roll. The side
  on roll doubles when gnubg's ``FindBestCubeDecision`` says "double, take" or
  "double, pass" (:func:`model_doubles`); "too good" plays on. The doubled
  side, evaluating the same position with *its* agent, takes when taking
  costs it less than passing (:func:`model_takes`), and beavers (money,
  ``beavers=True``) when the doubler's equity after the take is below zero.
* ``CubePolicy("threshold", double_at, take_at)``: fixed thresholds on the
  agent's winning chance ``probs[:, 0]`` (pseudo-probabilities welcome):
  double when it is at least ``double_at`` (``None``: never), take when the
  taker's own chance is at least ``take_at`` (0: always, without evaluating).
  No beavers.
* :data:`PASSIVE_POLICY` = ``CubePolicy("threshold", None, 0.0)``: **never
  doubles, always takes**. :func:`default_cube_policy` gives it to pubeval and
  the random agent, whose ``evaluate`` is not a real probability (pubeval's is
  an uncalibrated sigmoid of its score with no gammons, the random agent's a
  random draw). An opponent that never doubles and takes everything is easy
  to exploit, so a network's cubeful ppg against pubeval overstates what it
  would win against a cube-aware player.

Batching
--------
``batch`` games (money) or matches are in flight at once, one slot each. Per
ply: the sides on roll that may double are evaluated with **one**
``evaluate`` call per agent; the positions where a double was offered are
evaluated once more, one call per answering agent (only when a double was
offered and the answering policy needs probabilities); then every game still
running gets its play from one ``choose_plays`` call per agent. When both
agents are the same object with the same policy, their calls are merged.

Duplicate dice
--------------
As in :func:`nard_ai.play.arena.play_match`: games (or matches) come in pairs that
share their dice; agent A sits in seat 0 in the first of a pair, B in the
second. Each game's dice are one roll per ply, the first ply's the opening
roll, from ``np.random.default_rng([seed, pair, chunk])`` in money play
(exactly :func:`nard_ai.play.arena.play_match`'s dice, so a money session in which
nobody doubles is that cubeless match) and ``np.random.default_rng([seed,
pair, game, chunk])`` for game ``game`` (0, 1, ...) of a match pair. Cube
actions take no dice: a dice sequence stays with its ply. The 95% intervals
are ``1.96 * std(pair mean) / sqrt(pairs)`` over the independent pairs.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from nard_ai.core.board import starting_board
from nard_ai.core.game import CENTERED
from nard_ai.cube import (
    CubeState,
    cube_efficiency,
    finished_points,
)
from nard_ai.cube.met import MAX_AWAY
from nard_ai.play.cube_policy import (
    MODEL_POLICY,
    OWNER_BY_CODE,
    PASSIVE_POLICY,
    CubePolicy,
    cube_equities,
    default_cube_policy,
    may_double,
    model_doubles,
    model_takes,
    owner_codes,
    taken_cube,
)
from nard_ai.play.lockstep import MAX_PLIES, KeyedDice, Lockstep, choose_by_side
from nard_ai.play.results import DuplicatePoints, ci95_text, pair_ci95
from nard_ai.search.lookahead import agent_value, values_positions

__all__ = [
    "CubePolicy",
    "MODEL_POLICY",
    "PASSIVE_POLICY",
    "default_cube_policy",
    "cube_equities",
    "model_doubles",
    "model_takes",
    "CubeStats",
    "GameLog",
    "MoneySessionResult",
    "MatchPlayResult",
    "play_money_session",
    "play_matches",
    "MAX_PLIES",
]

# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CubeStats:
    """Cube actions of one agent over a session or a set of matches.

    Attributes:
        doubles: doubles and redoubles it offered.
        takes: doubles it took (beavers included).
        passes: doubles it passed.
        beavers: takes that were beavers.
    """

    doubles: int = 0
    takes: int = 0
    passes: int = 0
    beavers: int = 0


@dataclass(frozen=True)
class GameLog:
    """Every game played, one row per game in order of finishing, from agent A's side.

    Attributes:
        unit: ``(G,)`` int64, the money game's index (games ``2k``, ``2k + 1``
            share their dice) or the match's index (matches ``2k``, ``2k + 1`` do).
        game: ``(G,)`` int64, the game's number within its match (0 for money).
        a_seat: ``(G,)`` int8, A's seat (0 or 1); the opening roll decides which seat starts.
        score: ``(G, 2)`` int64, the match score (A, B) before the game (0 for money).
        crawford: ``(G,)`` bool, the game was the Crawford game.
        points: ``(G,)`` int64, points A won (negative: B won), cube included.
        cube_value: ``(G,)`` int64, the cube at the end (before the double
            that was passed, for a game ended by a pass).
        cube_owner: ``(G,)`` int8, the cube's owner at the end in the log's frame of agents:
            ``CENTERED`` (-1), 0 A, 1 B (the drivers' owning seat mapped through ``a_seat``,
            as every other column here is A's and B's, not the seats').
        passed: ``(G,)`` bool, the game ended with a double passed.
        doubles: ``(G, 2)`` int64, doubles offered in the game by A and by B.
        plies: ``(G,)`` int64, plays made (a pass ends a game before its ply).
    """

    unit: np.ndarray
    game: np.ndarray
    a_seat: np.ndarray
    score: np.ndarray
    crawford: np.ndarray
    points: np.ndarray
    cube_value: np.ndarray
    cube_owner: np.ndarray
    passed: np.ndarray
    doubles: np.ndarray
    plies: np.ndarray

    def __len__(self) -> int:
        return len(self.points)


def _stats_line(name: str, s: CubeStats) -> str:
    return f"  {name}: doubles {s.doubles}  takes {s.takes}  passes {s.passes}  beavers {s.beavers}"


@dataclass(frozen=True)
class MoneySessionResult(DuplicatePoints):
    """A duplicate-dice money session with the cube, from agent A's side (``games``, ``ppg``, ``ci95``: :class:`DuplicatePoints`).

    Attributes:
        points: ``(games,)`` int64 points A won in each game (result × cube,
            or the cube value of a pass); games ``2k`` and ``2k + 1`` share their dice.
        log: the :class:`GameLog` of the games, in order of finishing.
        stats_a, stats_b: cube actions of A and of B.
        seconds: wall time.
        plies: plies played in all.
        jacoby, beavers: the money-play options used.
    """

    points: np.ndarray
    log: GameLog
    stats_a: CubeStats
    stats_b: CubeStats
    seconds: float
    plies: int
    jacoby: bool = False
    beavers: bool = False

    @property
    def average_cube(self) -> float:
        """Mean cube value at the end of a game (the value passed, for a pass)."""
        return float(self.log.cube_value.mean())

    @property
    def pass_rate(self) -> float:
        """Fraction of games that ended with a double passed."""
        return float(self.log.passed.mean())

    def summary(self, name_a: str = "A", name_b: str = "B") -> str:
        """A few lines for humans: ppg with its 95% CI, cube statistics, speed."""
        options = ", ".join(n for n, on in (("Jacoby", self.jacoby), ("beavers", self.beavers)) if on)
        return (
            f"{name_a} vs {name_b}, money with the cube{f' ({options})' if options else ''}: "
            f"{self.ppg:+.3f} ppg {ci95_text(self.ci95, self.games)}\n"
            f"  average cube {self.average_cube:.2f}, games ended by a pass {self.pass_rate:.1%}\n"
            f"{_stats_line(name_a, self.stats_a)}\n{_stats_line(name_b, self.stats_b)}\n"
            f"  {self.games / max(self.seconds, 1e-9):.0f} games/s, {self.plies / max(self.games, 1):.1f} plies/game"
        )


@dataclass(frozen=True)
class MatchPlayResult:
    """Duplicate-dice matches to ``match_length`` points, from agent A's side.

    Attributes:
        match_length: points to win a match.
        won: ``(matches,)`` bool, A won the match; matches ``2k`` and ``2k + 1`` share their dice.
        score: ``(matches, 2)`` int64 final score (A, B); the winner's is at
            least ``match_length``, the loser's below it.
        log: the :class:`GameLog` of every game of every match.
        stats_a, stats_b: cube actions of A and of B.
        seconds: wall time.
        plies: plies played in all.
    """

    match_length: int
    won: np.ndarray
    score: np.ndarray
    log: GameLog
    stats_a: CubeStats
    stats_b: CubeStats
    seconds: float
    plies: int

    @property
    def matches(self) -> int:
        return len(self.won)

    @property
    def win_rate(self) -> float:
        """Fraction of matches A won."""
        return float(self.won.mean())

    @property
    def ci95(self) -> float:
        """Half-width of the 95% confidence interval of :attr:`win_rate`, over duplicate pairs."""
        return pair_ci95(self.won.astype(np.float64).reshape(-1, 2).mean(axis=1))

    @property
    def points_won(self) -> int:
        """Points A won in all matches (the sum of its final scores)."""
        return int(self.score[:, 0].sum())

    @property
    def points_lost(self) -> int:
        """Points B won in all matches."""
        return int(self.score[:, 1].sum())

    @property
    def games(self) -> int:
        """Games played in all matches."""
        return len(self.log)

    def summary(self, name_a: str = "A", name_b: str = "B") -> str:
        """A few lines for humans: matches won with the 95% CI, points, cube statistics, speed."""
        return (
            f"{name_a} vs {name_b}, {self.match_length}-point matches: won {self.win_rate:.1%} "
            f"{ci95_text(self.ci95, self.matches, 'match', percent=True)}\n"
            f"  points {self.points_won} to {self.points_lost} "
            f"({self.points_won / max(self.matches, 1):.2f} to {self.points_lost / max(self.matches, 1):.2f} "
            f"per match), {self.games / max(self.matches, 1):.1f} games per match\n"
            f"{_stats_line(name_a, self.stats_a)}\n{_stats_line(name_b, self.stats_b)}\n"
            f"  {self.matches / max(self.seconds, 1e-9):.1f} matches/s, {self.plies / max(self.games, 1):.1f} plies/game"
        )


# --------------------------------------------------------------------------- the engine


@dataclass
class _Counters:
    doubles: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.int64))  # by agent A, B
    takes: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.int64))
    passes: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.int64))
    beavers: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.int64))

    def stats(self, agent: int) -> CubeStats:
        return CubeStats(
            doubles=int(self.doubles[agent]),
            takes=int(self.takes[agent]),
            passes=int(self.passes[agent]),
            beavers=int(self.beavers[agent]),
        )


class _Arena:
    """Slots of games (money) or matches played in lockstep; see :func:`play_money_session`."""

    def __init__(self, agents, policies, units, match_length, seed, jacoby, beavers, batch, first=0) -> None:
        # units first .. first + units - 1 (a shard's; ``first`` even: duplicate pairs stay together)
        self.agents = agents
        self.policies = policies
        self.first = first
        self.units = units
        self.length = match_length
        self.seed = seed
        self.jacoby = jacoby
        self.beavers = beavers
        n = min(batch, units)
        self.unit = np.full(n, -1, dtype=np.int64)
        self.game_no = np.zeros(n, dtype=np.int64)
        self.lock = Lockstep(n)  # boards, seat on roll, plies of each slot's game
        self.boards, self.turn, self.ply = self.lock.boards, self.lock.turn, self.lock.ply
        self.dice = KeyedDice(n)
        self.value = np.ones(n, dtype=np.int64)
        self.owner = np.full(n, CENTERED, dtype=np.int64)  # CENTERED (-1), else the owning seat
        self.score = np.zeros((n, 2), dtype=np.int64)  # by agent (A, B)
        self.stage = np.zeros(n, dtype=np.int8)  # 0 before the Crawford game, 1 in it, 2 after it
        self.game_doubles = np.zeros((n, 2), dtype=np.int64)  # by agent, this game
        self.counters = _Counters()
        self.rows: list[tuple] = []
        self.final_score = np.zeros((units, 2), dtype=np.int64)
        self.next_unit = first
        self.finished = 0
        self.start_board = starting_board()

    # ---------------------------------------------------------------- slots

    def _key(self, s: int) -> tuple[int, ...]:
        pair = int(self.unit[s]) // 2
        if self.length == 0:
            return (self.seed, pair)
        return (self.seed, pair, int(self.game_no[s]))

    def _start_game(self, s: int) -> None:
        self.lock.start(s, self.start_board, turn=self.dice.start(s, self._key(s)))
        self.value[s] = 1
        self.owner[s] = CENTERED
        self.game_doubles[s] = 0

    def _start_unit(self, s: int) -> None:
        if self.next_unit >= self.first + self.units:
            self.unit[s] = -1
            return
        self.unit[s] = self.next_unit
        self.next_unit += 1
        self.game_no[s] = 0
        self.score[s] = 0
        self.stage[s] = 0
        self._start_game(s)

    def a_seat(self, slots: np.ndarray) -> np.ndarray:
        """A's seat in each slot's unit: 0 in the first unit of a pair, 1 in the second."""
        return self.unit[slots] % 2

    # ---------------------------------------------------------------- cube states

    def _states(self, slots: np.ndarray, roller: np.ndarray) -> np.ndarray:
        """Rows ``(value, owner code, roller's score, opponent's score, crawford)`` from each roller's view."""
        roller_is_b = (roller != self.a_seat(slots)).astype(np.int64)
        owner = self.owner[slots]
        code = owner_codes(owner, roller)
        sc = self.score[slots]
        rows = np.arange(len(slots))
        return np.stack(
            [
                self.value[slots],
                code,
                sc[rows, roller_is_b],
                sc[rows, 1 - roller_is_b],
                (self.stage[slots] == 1).astype(np.int64),
            ],
            axis=1,
        )

    def _cube_state(self, row) -> CubeState:
        value, code, mine, theirs, crawford = (int(v) for v in row)
        if self.length == 0:
            return CubeState(value=value, owner=OWNER_BY_CODE[code], jacoby=self.jacoby, beavers=self.beavers)
        return CubeState(
            value=value,
            owner=OWNER_BY_CODE[code],
            match_length=self.length,
            score=(mine, theirs),
            crawford=bool(crawford),
        )

    def _can_double(self, states: np.ndarray) -> np.ndarray:
        """:attr:`CubeState.can_double` of each row, plus the :data:`MAX_CUBE` cap (vectorized)."""
        if self.length == 0:
            return may_double(states[:, 1], states[:, 0])
        return may_double(
            states[:, 1], states[:, 0], away=self.length - states[:, 2], crawford=states[:, 4] != 0
        )

    # ---------------------------------------------------------------- decisions

    def _groups(self, is_a: np.ndarray):
        """``(agent, policy, mask)`` per agent (``is_a`` selects A's rows); one group when A and B are the same agent and policy."""
        (a, b), (pa, pb) = self.agents, self.policies
        if a is b and pa == pb:
            return [(a, pa, np.ones_like(is_a))]
        return [(a, pa, is_a), (b, pb, ~is_a)]

    def _decide(self, boards: np.ndarray, states: np.ndarray, is_a: np.ndarray, answer: bool):
        """Cube decisions of the agent of each row (the roller's if not ``answer``, else the doubled side's).

        Returns ``(yes, beaver)``: doubles, or takes and beavers.
        """
        yes = np.zeros(len(boards), dtype=bool)
        beaver = np.zeros(len(boards), dtype=bool)
        for agent, policy, mask in self._groups(is_a):
            sel = np.flatnonzero(mask)
            if len(sel) == 0:
                continue
            if policy.kind == "threshold":
                if not answer and policy.double_at is None:
                    continue  # never doubles: no evaluation needed
                if answer and policy.take_at <= 0.0:
                    yes[sel] = True  # always takes
                    continue
                win = np.asarray(agent_value(agent, boards[sel]).probs, dtype=np.float64)[:, 0]
                yes[sel] = policy.threshold_decisions(win, answer)
                continue
            probs = np.asarray(agent_value(agent, boards[sel]).probs, dtype=np.float64).reshape(-1, 5)
            x = cube_efficiency(boards[sel], policy.efficiency)
            keys, inverse = np.unique(states[sel], axis=0, return_inverse=True)
            for k, row in enumerate(keys):
                rows = np.flatnonzero(inverse.reshape(-1) == k)
                cube = self._cube_state(row)
                if answer:
                    take, bv = model_takes(probs[rows], cube, x[rows])
                    yes[sel[rows]], beaver[sel[rows]] = take, bv
                else:
                    yes[sel[rows]] = model_doubles(probs[rows], cube, x[rows])
        return yes, beaver

    def cube_phase(self, slots: np.ndarray) -> np.ndarray:
        """Let each side on roll in ``slots`` double and the other answer; returns the slots ended by a pass."""
        if len(slots) == 0:
            return slots
        roller = self.turn[slots]
        states = self._states(slots, roller)
        can = self._can_double(states)
        slots, roller, states = slots[can], roller[can], states[can]
        if len(slots) == 0:
            return slots
        roller_is_a = roller == self.a_seat(slots)
        boards = self.boards[slots]
        double, _ = self._decide(boards, states, roller_is_a, answer=False)
        slots, roller, states, roller_is_a = (
            slots[double],
            roller[double],
            states[double],
            roller_is_a[double],
        )
        if len(slots) == 0:
            return slots
        doubler = np.where(roller_is_a, 0, 1)
        np.add.at(self.counters.doubles, doubler, 1)
        np.add.at(self.game_doubles, (slots, doubler), 1)
        take, beaver = self._decide(self.boards[slots], states, ~roller_is_a, answer=True)
        taker = 1 - doubler
        np.add.at(self.counters.takes, taker[take], 1)
        np.add.at(self.counters.beavers, taker[beaver], 1)
        np.add.at(self.counters.passes, taker[~take], 1)
        took = slots[take]
        self.value[took], self.owner[took] = taken_cube(self.value[took], beaver[take], 1 - roller[take])
        passed = slots[~take]
        points_a = np.where(roller_is_a[~take], 1, -1) * self.value[passed]
        for s, p in zip(passed, points_a, strict=True):
            self._end_game(int(s), int(p), passed=True)
        return passed

    # ---------------------------------------------------------------- moves and game ends

    def move_phase(self, slots: np.ndarray) -> np.ndarray:
        """One play per game in ``slots``; returns the slots whose game ended."""
        dice = self.dice.roll(slots, self.ply[slots])
        a_to_play = self.turn[slots] == self.a_seat(slots)
        groups = [(agent, mask) for agent, _, mask in self._groups(a_to_play)]
        after = choose_by_side(groups, self.boards[slots], dice)
        done, result = self.lock.play(slots, after)
        ended = slots[done]
        if len(ended):
            # the Jacoby rule (money play): gammons count only once the cube has been turned
            points = finished_points(
                result, self.value[ended], self.owner[ended] == CENTERED, self.length == 0 and self.jacoby
            )
            points_a = np.where(a_to_play[done], points, -points)
            for s, p in zip(ended, points_a, strict=True):
                self._end_game(int(s), int(p), passed=False)
        return ended

    def _end_game(self, s: int, points_a: int, passed: bool) -> None:
        a_seat = int(self.unit[s] % 2)
        owner = int(self.owner[s])
        self.rows.append(
            (
                int(self.unit[s]),
                int(self.game_no[s]),
                a_seat,
                int(self.score[s, 0]),
                int(self.score[s, 1]),
                bool(self.stage[s] == 1),
                points_a,
                int(self.value[s]),
                CENTERED if owner == CENTERED else int(owner != a_seat),
                passed,
                int(self.game_doubles[s, 0]),
                int(self.game_doubles[s, 1]),
                int(self.ply[s]),
            )
        )
        if self.length == 0:
            self._finish_unit(s)
            return
        self.score[s, 0 if points_a > 0 else 1] += abs(points_a)
        if self.score[s].max() >= self.length:
            self.final_score[self.unit[s] - self.first] = self.score[s]
            self._finish_unit(s)
            return
        # RULES.md §8: the first game after a side first reaches match length - 1 is the Crawford game
        if self.stage[s] == 1:
            self.stage[s] = 2
        elif self.stage[s] == 0 and self.score[s].max() == self.length - 1:
            self.stage[s] = 1
        self.game_no[s] += 1
        self._start_game(s)

    def _finish_unit(self, s: int) -> None:
        self.finished += 1
        self._start_unit(s)

    # ---------------------------------------------------------------- the loop

    def run(self, progress=None) -> None:
        for s in range(len(self.unit)):
            self._start_unit(s)
        while True:
            idx = np.flatnonzero(self.unit >= 0)
            if len(idx) == 0:
                break
            before = self.finished
            # Cube first (before the roll); a game's first ply is the opening roll, already thrown.
            self.cube_phase(idx[self.ply[idx] > 0])
            # A slot whose game just ended by a pass holds the next game (or none): it plays its opening ply.
            self.move_phase(idx[self.unit[idx] >= 0])
            if progress is not None and self.finished > before:
                progress(self.finished)

    def log(self) -> GameLog:
        cols = list(zip(*self.rows, strict=True)) if self.rows else [()] * 13
        return GameLog(
            unit=np.array(cols[0], dtype=np.int64),
            game=np.array(cols[1], dtype=np.int64),
            a_seat=np.array(cols[2], dtype=np.int8),
            score=np.stack([np.array(cols[3], dtype=np.int64), np.array(cols[4], dtype=np.int64)], axis=-1),
            crawford=np.array(cols[5], dtype=bool),
            points=np.array(cols[6], dtype=np.int64),
            cube_value=np.array(cols[7], dtype=np.int64),
            cube_owner=np.array(cols[8], dtype=np.int8),
            passed=np.array(cols[9], dtype=bool),
            doubles=np.stack(
                [np.array(cols[10], dtype=np.int64), np.array(cols[11], dtype=np.int64)], axis=-1
            ),
            plies=np.array(cols[12], dtype=np.int64),
        )


def _check_common(agent_a, agent_b, count: int, what: str, batch: int, policies) -> tuple:
    for name, agent in (("agent_a", agent_a), ("agent_b", agent_b)):
        if not (values_positions(agent) and callable(getattr(agent, "choose_plays", None))):
            raise ValueError(f"{name} must have value(boards) and choose_plays(boards, dice)")
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"{what} must be an integer >= 1, got {count!r}")
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch must be an integer >= 1, got {batch!r}")
    out = []
    for name, agent, policy in (("policy_a", agent_a, policies[0]), ("policy_b", agent_b, policies[1])):
        policy = default_cube_policy(agent) if policy is None else policy
        if not isinstance(policy, CubePolicy):
            raise ValueError(f"{name} must be a CubePolicy or None, got {type(policy).__name__}")
        out.append(policy)
    return tuple(out)


def _arena_shard(shared: tuple, task: tuple) -> tuple:
    """One shard of a session or of matches, units ``first .. first + n - 1`` (an executor's shard
    function; ``shared = (agents, policies)``, ``task = (first, n, match_length, seed, jacoby, beavers,
    batch)``). A unit's dice depend only on the seed and its number (:meth:`_Arena._key`), so a
    shard's games are those the same units play in one arena. Returns ``(log, final_score, counters,
    plies)``."""
    agents, policies = shared
    first, n, length, seed, jacoby, beavers, batch = task
    arena = _Arena(agents, policies, n, length, seed, jacoby, beavers, batch, first=first)
    arena.run()
    return arena.log(), arena.final_score, arena.counters, arena.lock.plies


def _played(agents, policies, units, length, seed, jacoby, beavers, batch, progress, executor, shard_units):
    """``(log, final_score, counters, plies)`` of units ``0 .. units - 1``: one arena in this process
    (``executor`` None), or shards of ``shard_units`` on the executor joined in shard order (the log's
    rows by shard, then by finishing within it)."""
    if executor is None:
        arena = _Arena(agents, policies, units, length, seed, jacoby, beavers, batch)
        arena.run(progress)
        return arena.log(), arena.final_score, arena.counters, arena.lock.plies
    if not callable(getattr(executor, "map", None)):
        raise ValueError(f"executor must have map(fn, tasks, shared) (nard_ai.distributed), got {executor!r}")
    tasks = [
        (first, min(shard_units, units - first), length, seed, jacoby, beavers, batch)
        for first in range(0, units, shard_units)
    ]
    done = [0]

    def arrived(i: int, result) -> None:
        done[0] += tasks[i][1]
        if progress is not None:
            progress(done[0])

    parts = executor.map(_arena_shard, tasks, (agents, policies), on_result=arrived)
    log = GameLog(
        **{
            f.name: np.concatenate([getattr(p[0], f.name) for p in parts])
            for f in dataclasses.fields(GameLog)
        }
    )
    counters = _Counters()
    for f in dataclasses.fields(_Counters):
        setattr(counters, f.name, sum((getattr(p[2], f.name) for p in parts), np.zeros(2, dtype=np.int64)))
    return log, np.concatenate([p[1] for p in parts]), counters, sum(p[3] for p in parts)


def _check_shard_units(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2 or value % 2:
        raise ValueError(
            f"{name} must be an even integer >= 2 (duplicate pairs stay in one shard), got {value!r}"
        )
    return int(value)


def play_money_session(
    agent_a,
    agent_b,
    games: int,
    seed: int = 0,
    *,
    jacoby: bool = False,
    beavers: bool = False,
    policy_a: CubePolicy | None = None,
    policy_b: CubePolicy | None = None,
    batch: int = 1024,
    progress=None,
    executor=None,
    shard_games: int = 1000,
) -> MoneySessionResult:
    """Play a duplicate-dice money session with the cube (``games`` rounded up to even).

    Args:
        agent_a: the agent whose points are reported.
        agent_b: its opponent.
        games: number of games (pairs of two share their dice).
        seed: seed of the dice.
        jacoby: the Jacoby rule (gammons count only once the cube is turned).
        beavers: a doubled side may beaver (money play only).
        policy_a, policy_b: the agents' cube policies (default :func:`default_cube_policy`).
        batch: games in flight at once.
        progress: optional callable ``progress(games_finished)``.
        executor: ``None`` (default) plays every game in this process; an executor
            (:mod:`nard_ai.distributed`: this process or a Ray cluster) plays shards of
            ``shard_games`` games (both agents and policies as the shared object). A game's dice
            depend only on the seed and its number, so the same seed and shard size give the same
            result on every executor; the log's rows come shard by shard.
        shard_games: games per shard with an executor: even, >= 2.

    Returns:
        A :class:`MoneySessionResult` from A's side.

    Raises:
        ValueError: on a bad count, batch, policy, agent, shard size or executor.
    """
    policies = _check_common(agent_a, agent_b, games, "games", batch, (policy_a, policy_b))
    shard_games = _check_shard_units("shard_games", shard_games)
    games = int(games) + int(games) % 2
    t0 = time.perf_counter()
    log, _, counters, plies = _played(
        (agent_a, agent_b), policies, games, 0, int(seed), bool(jacoby), bool(beavers), int(batch),
        progress, executor, shard_games,
    )  # fmt: skip
    points = np.zeros(games, dtype=np.int64)
    points[log.unit] = log.points
    return MoneySessionResult(
        points=points,
        log=log,
        stats_a=counters.stats(0),
        stats_b=counters.stats(1),
        seconds=time.perf_counter() - t0,
        plies=plies,
        jacoby=bool(jacoby),
        beavers=bool(beavers),
    )


def play_matches(
    agent_a,
    agent_b,
    matches: int,
    match_length: int,
    seed: int = 0,
    *,
    policy_a: CubePolicy | None = None,
    policy_b: CubePolicy | None = None,
    batch: int = 512,
    progress=None,
    executor=None,
    shard_matches: int = 100,
) -> MatchPlayResult:
    """Play duplicate-dice matches to ``match_length`` points with the cube and the Crawford rule.

    Args:
        agent_a: the agent whose results are reported.
        agent_b: its opponent.
        matches: number of matches (rounded up to even; pairs share their dice).
        match_length: points to win, 1..25 (the range of the Kazaross-XG2 MET).
        seed: seed of the dice.
        policy_a, policy_b: the agents' cube policies (default :func:`default_cube_policy`).
        batch: matches in flight at once (each holds one game at a time).
        progress: optional callable ``progress(matches_finished)``.
        executor: as for :func:`play_money_session`, in shards of ``shard_matches`` matches
            (a match's dice depend only on the seed, its number and the game's number in it).
        shard_matches: matches per shard with an executor: even, >= 2.

    Returns:
        A :class:`MatchPlayResult` from A's side.

    Raises:
        ValueError: on a bad count, match length, batch, policy, agent, shard size or executor.
    """
    policies = _check_common(agent_a, agent_b, matches, "matches", batch, (policy_a, policy_b))
    if isinstance(match_length, bool) or not isinstance(match_length, (int, np.integer)):
        raise ValueError(f"match_length must be an integer 1..{MAX_AWAY}, got {match_length!r}")
    if not 1 <= match_length <= MAX_AWAY:
        raise ValueError(f"match_length must be 1..{MAX_AWAY} (the MET's range), got {match_length}")
    shard_matches = _check_shard_units("shard_matches", shard_matches)
    matches = int(matches) + int(matches) % 2
    t0 = time.perf_counter()
    log, score, counters, plies = _played(
        (agent_a, agent_b), policies, matches, int(match_length), int(seed), False, False, int(batch),
        progress, executor, shard_matches,
    )  # fmt: skip
    return MatchPlayResult(
        match_length=int(match_length),
        won=score[:, 0] >= match_length,
        score=score,
        log=log,
        stats_a=counters.stats(0),
        stats_b=counters.stats(1),
        seconds=time.perf_counter() - t0,
        plies=plies,
    )
