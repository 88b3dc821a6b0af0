"""Checker-play error rate of an agent against a referee, over a file of (position, dice) cases.

The logic of ``python evaluate.py --error-rate FILE --agent-a SPEC --referee SPEC``.

What is measured
----------------
For each case the agent plays the roll; the referee values **every** legal
play (our generator, :func:`nard_ai.core.movegen.legal_plays_batch`) as the
afterstate's cubeless equity for the mover at the referee's ply::

    value(play) = cubeless_equity(invert(referee.value(swap_sides(afterstate)).probs))

(the exact result when the play bears off the mover's last checker,
RULES.md §6), and the equity the move lost is::

    lost = value(referee's best play) - value(agent's play)   >= 0

in points per game (cubeless money, cube 1). The **error rate** is the mean
of ``lost`` over the cases, reported in millipoints per move (1000 x points
per game), with its 95% confidence interval ``1.96 x std / sqrt(n)``; the
same mean over the unforced cases (two or more distinct legal plays) is
gnubg's convention and is reported too. The referee values all plays at its
full ply, without move filters, so an agent that searches with filters can
lose equity even against a referee with its own evaluator and ply; at 0-ply
an agent against itself loses exactly 0. Match scores and the cube in the
IDs do not enter: checker play is judged cubeless, in money equity. Any
agent can play (``random`` and ``pubeval`` too); a referee needs real
probabilities (a network or gnubg), so ``random`` and ``pubeval`` are
refused as referees.

Case files
----------
One case per line; blank lines and ``#`` comments (a whole line, or the rest
of a line after ``#``) are skipped::

    # ID                             dice
    4HPwATDgc/ABMA                   31
    4HPwATDgc/ABMA                   6 5
    4HPwATDgc/ABMA:cAkAAAAAAAAA      4-2
    4HPwATDgc/ABMA:cIkWAAAAAAAA              (dice taken from the Match ID)
    XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10   (dice from the XGID)

The ID is the first whitespace-separated token: a gnubg Position ID (the
side on roll's view), ``PositionID:MatchID``, or an XGID; the board is the
Match ID's or XGID's player on roll. The dice follow as one token (``31``,
``3-1``, ``3,1``, ``3/1``) or two (``3 1``); they may be left out when the
Match ID or XGID holds a roll, and must equal it when both are given. A
pending double or a finished game is an error. :func:`sample_cases` and
:func:`format_cases` write such a file from self-play positions.

Bad lines stop the run: :func:`read_cases` raises one ``ValueError`` naming
every bad line (up to ten) and what is wrong with it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np

from nard_ai.core.board import game_result, starting_board, swap_sides_unchecked
from nard_ai.core.game import opening_roll, roll_dice
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.core.outcomes import cubeless_equity, invert_probs, result_probs
from nard_ai.formats.position_id import position_id
from nard_ai.play.lockstep import Lockstep, choose_by_side
from nard_ai.reports.position import parse_position, read_text_file
from nard_ai.search.lookahead import STANDARD_RULES, Agent, afterstate_probs, agent_value

__all__ = [
    "ErrorRateResult",
    "parse_case",
    "read_cases",
    "format_cases",
    "sample_cases",
    "play_values",
    "error_rate",
    "BAD",
    "VERY_BAD",
]

#: gnubg's default skill thresholds for a checker play, points per game: "bad" (error) and "very bad"
#: (blunder), GNU Backgammon 1.07's values as in :class:`nard_ai.reports.analysis.SkillThresholds` (releases
#: before 1.07 used 0.08 and 0.16).
BAD = 0.06
VERY_BAD = 0.12
MAX_LISTED_ERRORS = 10
_DICE_TOKEN = re.compile(r"^([1-6])[-,/]?([1-6])$")


# --------------------------------------------------------------------------- case files


def parse_case(text: str) -> tuple[np.ndarray, np.ndarray]:
    """One case line (format in the module docstring, without comments) -> board and dice.

    Returns:
        ``(board, dice)``: ``(26,)`` int8 in the side on roll's view and
        ``(2,)`` int8, larger die first.

    Raises:
        ValueError: saying what is wrong: the ID, the dice (missing, malformed,
            outside 1-6, or not the Match ID's roll), a pending double or
            resignation, or a finished game.
    """
    tokens = text.split()
    if not tokens:
        raise ValueError("empty case")
    board, state = parse_position(tokens[0])
    dice = None
    rest = tokens[1:]
    if len(rest) == 1:
        m = _DICE_TOKEN.match(rest[0])
        if m is None:
            raise ValueError(f"dice {rest[0]!r}: write two dice 1-6, such as 31, 3-1 or '3 1'")
        dice = (int(m.group(1)), int(m.group(2)))
    elif len(rest) == 2:
        if not all(len(t) == 1 and t in "123456" for t in rest):
            raise ValueError(f"dice {' '.join(rest)!r}: each die must be 1-6")
        dice = (int(rest[0]), int(rest[1]))
    elif len(rest) > 2:
        raise ValueError(f"expected 'ID DICE', got {len(tokens)} fields: {text.strip()!r}")
    if state is not None:
        if state.double_offered:
            raise ValueError("a double is pending: there is no checker play to make")
        if state.resignation:
            raise ValueError("a resignation is pending: there is no checker play to make")
        if state.dice != (0, 0):
            if dice is not None and sorted(dice) != sorted(state.dice):
                raise ValueError(
                    f"dice {dice[0]}{dice[1]} differ from the roll in the ID, {state.dice[0]}{state.dice[1]}"
                )
            dice = state.dice
    if dice is None:
        raise ValueError(
            "no dice: give the roll after the ID (e.g. '4HPwATDgc/ABMA 31') or in the Match ID/XGID"
        )
    if game_result(board) != 0:
        raise ValueError("the game is over: there is no play to make")
    return board, np.array(sorted(dice, reverse=True), dtype=np.int8)


def read_cases(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read a case file (module docstring).

    Returns:
        ``(boards, dice, lines)``: ``(N, 26)`` int8 boards (side on roll's
        view), ``(N, 2)`` int8 dice and ``(N,)`` int64 1-based line numbers.

    Raises:
        ValueError: ``"line 3: ...; line 9: ..."`` naming every bad line (up
            to ten, then how many more), or when the text holds no case.
    """
    boards, dice, lines, errors = [], [], [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        try:
            b, d = parse_case(body)
        except ValueError as exc:
            errors.append(f"line {number}: {exc}")
            continue
        boards.append(b)
        dice.append(d)
        lines.append(number)
    if errors:
        more = len(errors) - MAX_LISTED_ERRORS
        listed = "; ".join(errors[:MAX_LISTED_ERRORS]) + (f"; and {more} more bad lines" if more > 0 else "")
        raise ValueError(listed)
    if not boards:
        raise ValueError("no case: the file holds only blank lines and comments")
    return np.array(boards, dtype=np.int8), np.array(dice, dtype=np.int8), np.array(lines, dtype=np.int64)


def format_cases(boards: np.ndarray, dice: np.ndarray, header: str = "") -> str:
    """A case file: ``PositionID D1D2`` per line (``(N, 26)`` boards, side on roll's view; ``(N, 2)`` dice).

    ``header`` lines are written first as ``#`` comments.
    """
    out = [f"# {line}" for line in header.splitlines()]
    for board, (d1, d2) in zip(boards, np.asarray(dice).tolist(), strict=True):
        out.append(f"{position_id(board)} {max(d1, d2)}{min(d1, d2)}")
    return "\n".join(out) + "\n"


def sample_cases(
    n: int,
    agent,
    seed: int = 0,
    *,
    keep: float = 0.1,
    unforced: bool = True,
    batch: int = 256,
    rules=STANDARD_RULES,
    opponent=None,
    whole_games: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Cases from play: positions and the rolls met in ``agent``-vs-itself games, or ``agent``-vs-``opponent``.

    Games start from the starting position with the opening roll and run on the lockstep
    engine (:class:`nard_ai.play.lockstep.Lockstep`: its turn end and ply limit), a finished
    game's slot taking a new game; at each turn each game's (board, dice) is kept with
    probability ``keep``, so one game gives cases from all its phases. The dice and the
    sampling draw from ``np.random.default_rng(seed)`` only.

    With an ``opponent`` the games are ``agent`` (seat 0) against ``opponent`` (seat 1),
    the side on roll choosing its play (:func:`nard_ai.play.lockstep.choose_by_side`); games
    started in turn are opened by seat 0, seat 1, seat 0, ... (the opening roll's dice are their
    first play's), so each agent opens half the games. Cases are kept from both
    sides' turns alike: the positions a match between the two meets, to score any agent on.

    Args:
        n: cases wanted, >= 1.
        agent: plays both sides, or seat 0 with ``opponent`` (anything with ``choose_plays``).
        seed: seed of the dice and of the sampling.
        keep: chance of keeping each turn, in ``(0, 1]``.
        unforced: keep only turns with two or more distinct legal plays.
        batch: games in flight.
        rules: rule settings of the legal-play count.
        opponent: ``None`` (self-play), or the agent of seat 1.
        whole_games: ``False`` (the default) returns the first ``n`` cases met, ply by ply over the
            ``batch`` games in flight: while ``n`` is below a few times ``batch`` x ``keep`` x the
            plies of a game, those come from the games' first plies only (500 cases of 256 games: the
            first 20 plies, no bear-off). ``True`` starts no game once ``n`` cases are in hand, plays
            the games in flight to their end and returns the first ``n`` cases in the order the games
            started (each game's in ply order): the cases of whole games, every phase in its share.

    Returns:
        ``(boards, dice)``: ``(n, 26)`` int8 (side on roll's view) and ``(n, 2)`` int8.

    Raises:
        ValueError: on ``n < 1``, ``keep`` outside ``(0, 1]`` or ``batch < 1``.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0.0 < keep <= 1.0:
        raise ValueError(f"keep must be in (0, 1], got {keep}")
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    rng = np.random.default_rng(seed)
    boards, dice = [], []
    got = 0
    lock = Lockstep(batch, what="sampled game")
    started = batch
    lock.start(np.arange(batch), starting_board(), np.arange(batch) % 2)
    rolls = np.empty((batch, 2), dtype=np.int8)
    _, rolls[:] = opening_roll(batch, rng)
    game_of = np.arange(batch)  # the number of the game each slot plays, in the order started
    games = []  # the game of each case kept
    while lock.running.any() if whole_games else got < n:
        running = np.flatnonzero(lock.running)
        b, d = lock.boards[running], rolls[running]
        take = rng.random(len(running)) < keep
        if unforced and take.any():
            _, owner = legal_plays_batch(b[take], d[take], rules, sort=False)
            forced = np.bincount(owner, minlength=int(take.sum())) < 2
            take[np.flatnonzero(take)[forced]] = False
        boards.append(b[take])
        dice.append(d[take])
        games.append(game_of[running][take])
        got += int(take.sum())
        if opponent is None:
            after = agent.choose_plays(b, d)
        else:
            seat = lock.turn[running]
            after = choose_by_side(((agent, seat == 0), (opponent, seat == 1)), b, d)
        ended, _ = lock.play(running, after)
        going = running[~ended]
        rolls[going] = roll_dice(len(going), rng)
        new = running[ended] if not (whole_games and got >= n) else running[:0]
        if len(new):
            lock.start(new, starting_board(), (started + np.arange(len(new))) % 2)
            game_of[new] = started + np.arange(len(new))
            started += len(new)
            _, rolls[new] = opening_roll(len(new), rng)
    order = np.argsort(np.concatenate(games), kind="stable")[:n] if whole_games else slice(0, n)
    return np.concatenate(boards)[order], np.concatenate(dice)[order]


# --------------------------------------------------------------------------- error rate


def _check_referee(referee) -> None:
    evaluator = getattr(referee, "evaluator", None)
    if getattr(evaluator, "score_plays", None) is not None:
        name = getattr(referee, "name", type(evaluator).__name__)
        raise ValueError(
            f"{name} cannot referee: it ranks plays by its own score and has no real probabilities "
            "(use a network, default[:PLY], or gnubg[:PLY])"
        )


def play_values(referee, afterstates: np.ndarray) -> np.ndarray:
    """The referee's cubeless equity of afterstates for the mover.

    A :class:`nard_ai.search.lookahead.Agent` is valued with
    :func:`nard_ai.search.lookahead.afterstate_probs` at its ply, every play at full
    depth (no move filters); at 0-ply these are the very numbers its own move
    choice uses. Any other agent (a :class:`nard_ai.gnubg.agent.GnubgAgent`)
    as ``invert(referee.value(swap_sides(afterstate)).probs)``. Finished games
    get their exact result (RULES.md §6).

    Args:
        referee: the valuing agent.
        afterstates: ``(M, 26)`` int8, the mover's view.

    Returns:
        ``(M,)`` float64 equity, points per game at cube 1, for the mover
        (computed in float32, as the search ranks plays).
    """
    if isinstance(referee, Agent):
        probs = afterstate_probs(referee.evaluator, afterstates, referee.ply, referee.rules)
    else:
        probs = invert_probs(
            np.asarray(agent_value(referee, swap_sides_unchecked(afterstates)).probs, dtype=np.float32)
        )
        done = ~(afterstates > 0).any(axis=1)
        if done.any():
            probs[done] = result_probs(game_result(afterstates[done]))
    return cubeless_equity(probs).astype(np.float32).astype(np.float64)


@dataclass(frozen=True)
class ErrorRateResult:
    """Equity an agent lost per move against a referee.

    Attributes:
        lost: ``(N,)`` float64 equity lost per case, points per game (>= 0).
        best: ``(N,)`` float64 the referee's equity of its best play.
        chosen: ``(N,)`` float64 the referee's equity of the agent's play.
        plays: ``(N,)`` int64 distinct legal plays per case.
        agent: the agent's name.
        referee: the referee's name.
        seconds: wall time.
    """

    lost: np.ndarray
    best: np.ndarray
    chosen: np.ndarray
    plays: np.ndarray
    agent: str
    referee: str
    seconds: float

    @property
    def cases(self) -> int:
        return len(self.lost)

    @property
    def unforced(self) -> int:
        """Cases with two or more distinct legal plays."""
        return int((self.plays > 1).sum())

    @property
    def millipoints_per_move(self) -> float:
        """Mean equity lost per case, in millipoints (1000 x points per game)."""
        return float(1000.0 * self.lost.mean())

    @property
    def millipoints_per_unforced_move(self) -> float:
        """Mean equity lost per unforced case, in millipoints (gnubg's convention); NaN without one."""
        unforced = self.plays > 1
        return float(1000.0 * self.lost[unforced].mean()) if unforced.any() else float("nan")

    @property
    def ci95(self) -> float:
        """Half-width of the 95% interval of :attr:`millipoints_per_move`."""
        if self.cases < 2:
            return float("nan")
        return float(1000.0 * 1.96 * self.lost.std(ddof=1) / np.sqrt(self.cases))

    def counts(self) -> dict[str, int]:
        """Cases with a loss above :data:`BAD` (0.06) and above :data:`VERY_BAD` (0.12) points per game
        (strictly, as gnubg's ``Skill()`` marks them)."""
        return {"bad": int((self.lost > BAD).sum()), "very_bad": int((self.lost > VERY_BAD).sum())}

    def summary(self) -> str:
        """A few lines for humans."""
        c = self.counts()

        def num(x: float, sign: str = "") -> str:  # n/a: one case has no interval, no unforced case no mean
            return f"{sign}{x:.1f}" if np.isfinite(x) else f"{sign}n/a"

        return (
            f"{self.agent} judged by {self.referee}: {self.millipoints_per_move:.1f} {num(self.ci95, '± ')} "
            f"millipoints per move (95% CI) over {self.cases} case{'s' * (self.cases != 1)}\n"
            f"  per unforced move: {num(self.millipoints_per_unforced_move)} ({self.unforced} unforced)\n"
            f"  bad (> {BAD:.2f}): {c['bad']}   very bad (> {VERY_BAD:.2f}): {c['very_bad']}   "
            f"{self.seconds:.1f} s"
        )

    def to_dict(self) -> dict:
        """JSON-ready summary (no per-case arrays except ``lost``)."""

        def num(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "agent": self.agent,
            "referee": self.referee,
            "cases": self.cases,
            "unforced": self.unforced,
            "millipoints_per_move": num(self.millipoints_per_move),
            "ci95": num(self.ci95),
            "millipoints_per_unforced_move": num(self.millipoints_per_unforced_move),
            **self.counts(),
            "lost": [float(x) for x in self.lost],
            "seconds": self.seconds,
        }


def error_rate(
    agent,
    referee,
    boards: np.ndarray,
    dice: np.ndarray,
    *,
    batch: int = 256,
    progress=None,
    executor=None,
    shard_cases: int = 1024,
) -> ErrorRateResult:
    """The equity ``agent`` loses per move, judged by ``referee`` (module docstring).

    Args:
        agent: anything with ``choose_plays(boards, dice)``.
        referee: an agent with real probabilities (``evaluate``, or an
            ``evaluator`` and ``ply``); its ``rules`` generate the plays.
        boards: ``(N, 26)`` int8, side on roll's view.
        dice: ``(N, 2)`` the rolls.
        batch: cases per call of the agent and the referee.
        progress: optional callable ``progress(cases_done)``.
        executor: ``None`` (default) judges every case in this process; an executor
            (:mod:`nard_ai.distributed`: this process or a Ray cluster) judges shards of
            ``shard_cases`` consecutive cases with ``(agent, referee)`` as the shared object, and
            the shards' per-case figures are joined in case order. A case's figures depend only on
            its batch, so with ``shard_cases`` a multiple of ``batch`` (as by default) every executor
            gives the same figures, and those of the unsharded run on one torch thread (other
            thread counts can round network sums differently, in the last bits).
        shard_cases: cases per shard with an executor, >= 1.

    Returns:
        An :class:`ErrorRateResult`.

    Raises:
        ValueError: on invalid boards or dice, a referee without real
            probabilities, or an agent whose play is not legal (the case named by its number in
            ``boards``, sharded or not).
    """
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    if isinstance(shard_cases, bool) or not isinstance(shard_cases, (int, np.integer)) or shard_cases < 1:
        raise ValueError(f"shard_cases must be an integer >= 1, got {shard_cases!r}")
    _check_referee(referee)
    boards = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
    dice = np.asarray(dice).reshape(-1, 2)
    if len(boards) != len(dice):
        raise ValueError(f"{len(boards)} boards but {len(dice)} dice")
    t0 = time.perf_counter()
    if executor is None:
        lost, best, chosen_eq, plays = _judge((agent, referee), (0, boards, dice, batch, progress))
    else:
        n = len(boards)
        tasks = [(first, boards[first : first + shard_cases], dice[first : first + shard_cases], batch, None)
                 for first in range(0, n, shard_cases)]  # fmt: skip
        done = [0]

        def arrived(i: int, result) -> None:
            done[0] += len(result[0])
            if progress is not None:
                progress(done[0])

        parts = executor.map(_judge, tasks, (agent, referee), on_result=arrived)
        lost, best, chosen_eq, plays = (
            np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in range(4)
        )
        plays = plays.astype(np.int64)
    return ErrorRateResult(
        lost=lost,
        best=best,
        chosen=chosen_eq,
        plays=plays,
        agent=getattr(agent, "name", type(agent).__name__),
        referee=getattr(referee, "name", type(referee).__name__),
        seconds=time.perf_counter() - t0,
    )


def _judge(agents: tuple, task: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cases ``boards``, ``dice`` (numbered from ``first``) judged in batches: ``(lost, best, chosen,
    plays)`` per case. ``agents = (agent, referee)``; ``task = (first, boards, dice, batch, progress)``."""
    agent, referee = agents
    first, boards, dice, batch, progress = task
    rules = getattr(referee, "rules", STANDARD_RULES)
    n = len(boards)
    lost, best, chosen_eq = np.zeros(n), np.zeros(n), np.zeros(n)
    plays = np.zeros(n, dtype=np.int64)
    for start in range(0, n, batch):
        sl = slice(start, min(n, start + batch))
        b, d = boards[sl], dice[sl]
        afterstates, owner = legal_plays_batch(b, d, rules, sort=False)
        values = play_values(referee, afterstates)
        chosen = np.asarray(agent.choose_plays(b, d), dtype=np.int8)
        k = len(b)
        best_value = np.full(k, -np.inf)
        np.maximum.at(best_value, owner, values)
        # the agent's play among the case's afterstates, matched by the position it produces
        match = (afterstates == chosen[owner]).all(axis=1)
        found = np.zeros(k, dtype=bool)
        found[owner[match]] = True
        if not found.all():
            case = first + start + int(np.flatnonzero(~found)[0])
            raise ValueError(f"case {case}: the agent's play is not a legal play of the position and roll")
        value_of_chosen = np.empty(k)
        value_of_chosen[owner[match]] = values[match]
        best[sl], chosen_eq[sl] = best_value, value_of_chosen
        lost[sl] = np.maximum(best_value - value_of_chosen, 0.0)
        plays[sl] = np.bincount(owner, minlength=k)
        if progress is not None:
            progress(sl.stop)
    return lost, best, chosen_eq, plays


# --------------------------------------------------------------------------- command line glue


def run_error_rate(
    path: str,
    agent_spec: str,
    referee_spec: str,
    *,
    seed: int = 0,
    batch: int = 256,
    as_json: bool = False,
    progress=None,
    out=None,
    err=None,
    executor=None,
    shard_cases: int = 1024,
) -> int:
    """``evaluate.py --error-rate FILE``: read the cases, judge ``agent_spec`` by ``referee_spec``, print
    (with ``executor``: in shards of ``shard_cases`` cases there, :func:`error_rate`).

    Returns:
        The exit status: 0, or 2 (with one ``evaluate.py: error: ...`` line
        on ``err``) when the file cannot be read, holds a bad line (all bad
        lines are named), or an agent cannot be built.
    """
    import json
    import sys

    from nard_ai.agents import agent_from_spec

    out = out or sys.stdout
    err = err or sys.stderr
    text = read_text_file(path, err)
    if text is None:
        return 2
    try:
        boards, dice, _ = read_cases(text)
    except ValueError as exc:
        print(f"evaluate.py: error: {path}: {exc}", file=err)
        return 2
    try:
        agent = agent_from_spec(agent_spec, seed=seed + 1)
        referee = agent_from_spec(referee_spec, seed=seed + 2)
        result = error_rate(
            agent,
            referee,
            boards,
            dice,
            batch=batch,
            progress=progress,
            executor=executor,
            shard_cases=shard_cases,
        )
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"evaluate.py: error: {exc}", file=err)
        return 2
    if as_json:
        json.dump(result.to_dict(), out, indent=1)
        out.write("\n")
    else:
        out.write(result.summary() + "\n")
    return 0


def run_make_cases(path: str, n: int, agent_spec: str, *, seed: int = 0, out=None, err=None) -> int:
    """``evaluate.py --make-cases FILE``: write ``n`` unforced cases from ``agent_spec`` self-play.

    Returns:
        The exit status: 0, or 2 (one ``evaluate.py: error: ...`` line) when
        the agent cannot be built or the file cannot be written.
    """
    import sys

    from nard_ai.agents import agent_from_spec

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        agent = agent_from_spec(agent_spec, seed=seed + 1)
        # whole games, ~5 cases each: about n / 20 in flight plays four rounds of games
        boards, dice = sample_cases(n, agent, seed, batch=min(256, -(-n // 20)), whole_games=True)
        header = (
            f"{n} unforced (position, dice) cases from {getattr(agent, 'name', agent_spec)} self-play, seed {seed}\n"
            "format: PositionID DICE (nard_ai.reports.error_rate)"
        )
        with open(path, "x", encoding="utf-8") as f:
            f.write(format_cases(boards, dice, header))
    except FileExistsError:
        print(
            f"evaluate.py: error: {path} exists; not overwriting it (remove it or give another file)",
            file=err,
        )
        return 2
    except (ValueError, FileNotFoundError, OSError) as exc:
        print(f"evaluate.py: error: {exc}", file=err)
        return 2
    print(f"wrote {n} case{'s' * (n != 1)} to {path}", file=out)
    return 0
