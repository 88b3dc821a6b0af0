"""Position analysis from a file of IDs: equities, cube decisions, rollouts, gnubg comparison.

The logic of ``python evaluate.py --positions FILE``.

Input
-----
One position per line, as a gnubg ``PositionID:MatchID`` (e.g.
``4HPwATDgc/ABMA:cAkAAAAAAAAA``), an XGID
(``XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10``) or a bare
Position ID (money play, cube centred). Blank lines and ``#`` comments (a
whole line, or the rest of a line after ``#``) are skipped. The board is
the side on roll's (the Match ID's or XGID's player on roll, or the doubler
while a double is pending), analysed **before it rolls**: dice in the ID are
ignored. The cube and score come from the Match ID or XGID
(:func:`cube_state_from_match`). A game that is over or resigned, or a
resignation awaiting its answer, is a bad line
(:func:`nard_ai.formats.match_id.not_playing`, ``nard cube``'s check).

The file is UTF-8; a byte order mark at its start (as Windows editors
write) is skipped.

Bad lines: every line is read; each bad one gets one message naming its
line number and what is wrong (``FILE:LINE: ...`` on stderr, and in the
``errors`` list of ``--json``), the good ones are still analysed, and the
exit status is 1 when any line was bad (2 for a bad command line or a file
that cannot be read). A file with no position at all is an error (with
``--json`` the JSON object is still printed, its ``positions`` empty and
every bad line in ``errors``).

Output, per position (all for the side on roll, money equities in points
per game per unit of the current cube, match equities as normalised money
equity at the current cube with the MWC alongside):

* the cubeless probabilities and equity at the agent's ply;
* the cubeful equity with the right cube action (and without doubling);
* the cube decision of :func:`nard_ai.cube.cube_decision`: the action in
  gnubg's words (:func:`nard_ai.reports.analysis.cube_action_text`: "No double,
  beaver" when beavers are on and the opponent should beaver), no double /
  double, take / double, pass, the opponent's take point, and how wrong each
  choice is (:attr:`~nard_ai.cube.CubeDecision.errors`, printed by
  :func:`cube_errors_text` as ``nard cube`` prints them);
* with ``--rollout N``: a cubeless rollout (:func:`nard_ai.play.rollout.rollout`,
  the same agent playing; luck-adjusted when the rollout's default says so,
  from 1-ply up) and the cube decision its probabilities give, with a 95%
  confidence bound on that decision's cubeful equities
  (:func:`cubeful_ci_bound`);
* with ``--compare gnubg``: gnubg's own cube analysis at the same ply
  (:func:`nard_ai.gnubg.agent.gnubg_cube_analysis`), and at the end how
  often the two actions agree and the mean absolute difference of the
  cubeful equities (with the right cube action) and of the three columns.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from nard_ai.core.board import game_result
from nard_ai.cube import (
    CENTRED,
    ON_ROLL,
    OPPONENT,
    CubeDecision,
    CubeState,
    cube_decision,
    cube_decision_from_probs,
    cube_efficiency,
)
from nard_ai.cube.state import cube_state_from_match as _cube_state_from_match
from nard_ai.formats.match_id import GameStatus, MatchState, not_playing
from nard_ai.formats.position import parse_position
from nard_ai.formats.position_id import position_id
from nard_ai.reports.analysis import cube_action_text

__all__ = [
    "PositionLine",
    "PositionAnalysis",
    "Comparison",
    "parse_position",
    "cube_state_from_match",
    "read_positions",
    "analysis_agent",
    "analyse_positions",
    "compare_with_gnubg",
    "cube_errors_text",
    "cubeful_ci_bound",
    "format_report",
    "report_dict",
    "run_positions",
]


# --------------------------------------------------------------------------- input


def cube_state_from_match(state: MatchState | None) -> CubeState:
    """The :class:`~nard_ai.cube.CubeState` of a match state, seen from its player on roll.

    ``None`` (a bare Position ID) is money play with the cube centred
    (:func:`nard_ai.cube.state.cube_state_from_match`).

    Raises:
        ValueError: when the state cannot be analysed: the game is over or
            not started, or the cube and match do not fit
            :class:`~nard_ai.cube.CubeState` (e.g. a match longer than 25).
    """
    if state is not None and state.game_state != GameStatus.PLAYING:
        raise ValueError(f"the Match ID's game state is {state.game_state.name.lower()}, not playing")
    return _cube_state_from_match(state)


@dataclass(frozen=True, eq=False)
class PositionLine:
    """One good line of a positions file.

    Attributes:
        line: 1-based line number.
        text: the ID as written.
        board: ``(26,)`` int8, side on roll's view.
        cube: its cube state, side on roll first.
    """

    line: int
    text: str
    board: np.ndarray
    cube: CubeState


def read_positions(text: str) -> tuple[list[PositionLine], list[tuple[int, str]]]:
    """Read a positions file (format in the module docstring).

    Returns:
        ``(positions, errors)``: the good lines in order, and ``(line,
        message)`` for every bad one.
    """
    positions, errors = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        try:
            board, state = parse_position(body)
            if game_result(board) != 0:
                raise ValueError("the game is over: there is no decision to analyse")
            # a game over or resigned, a resignation awaiting its answer (nard cube's check: a pending
            # double is the doubler's position, analysed before it rolls: module docstring)
            reason = not_playing(state, double_ok=True)
            if reason is not None:
                raise ValueError(reason)
            cube = cube_state_from_match(state)
        except ValueError as exc:
            errors.append((number, f"{body!r}: {exc}"))
            continue
        positions.append(PositionLine(number, body, board, cube))
    return positions, errors


# --------------------------------------------------------------------------- analysis


def analysis_agent(spec: str, ply: int = -1):
    """The agent that analyses positions: ``spec`` at ``ply``.

    Args:
        spec: an agent spec of :func:`nard_ai.agents.agent_from_spec` with real
            probabilities: ``default[:PLY]``, ``PATH[:PLY]`` or ``gnubg[:PLY]``.
        ply: ``-1`` keeps the ply in the spec (0 when it names none); 0..2
            sets it when the spec names none, and must equal it otherwise.

    Raises:
        ValueError: on pubeval or random (no real probabilities), a ply that
            contradicts the spec, or anything :func:`agent_from_spec` rejects.
        FileNotFoundError: on a missing checkpoint.
    """
    from nard_ai.agents import agent_from_spec

    if spec in ("pubeval", "random"):
        raise ValueError(
            f"{spec} has no real probabilities to analyse positions with; use default[:PLY] or gnubg[:PLY]"
        )
    if ply >= 0:
        head, sep, tail = spec.rpartition(":")
        if sep and tail.isdigit():
            if int(tail) != ply:
                raise ValueError(f"--ply {ply} contradicts the agent spec {spec!r}; give the ply once")
        else:
            spec = f"{spec}:{ply}"
    return agent_from_spec(spec)


@dataclass(frozen=True, eq=False)
class PositionAnalysis:
    """The analysis of one position (side on roll, before it rolls).

    Attributes:
        position: the input line.
        decision: :func:`nard_ai.cube.cube_decision` with the agent.
        rollout: a cubeless rollout (:class:`nard_ai.play.rollout.RolloutResult`), or ``None``.
        rollout_decision: the cube decision from the rollout's probabilities, or ``None``.
        gnubg: gnubg's cube analysis (:class:`nard_ai.gnubg.agent.GnubgCubeAnalysis`), or ``None``.
        rollout_ci: :func:`cubeful_ci_bound` of ``rollout_decision`` (95% half-widths of its
            ``no_double``, ``double_take`` and ``optimal`` equities), or ``None`` without a rollout.
    """

    position: PositionLine
    decision: CubeDecision
    rollout: Any = None
    rollout_decision: CubeDecision | None = None
    gnubg: Any = None
    rollout_ci: dict[str, float] | None = None


def _consistent(probs: np.ndarray) -> np.ndarray:
    """Luck-adjusted rollout means (which may stray slightly outside [0, 1]) made a valid 5-vector."""
    w, wg, wb, lg, lb = np.clip(np.asarray(probs, dtype=np.float64), 0.0, 1.0)
    wg = min(wg, w)
    lg = min(lg, 1.0 - w)
    return np.array([w, wg, min(wb, wg), lg, min(lb, lg)])


def cubeful_ci_bound(probs, probs_ci, cube: CubeState, efficiency: float) -> dict[str, float]:
    """95% confidence half-widths of the cube decision made from a cubeless rollout's mean probabilities.

    The cubeful equities of :func:`nard_ai.cube.cube_decision_from_probs`
    are functions ``f(p)`` of the five mean probabilities ``p``; the
    rollout gives each mean's 95% half-width ``ci_i`` but not their
    correlations. For a linear ``f = a . p`` the standard deviation of
    ``a . p`` is at most ``sum |a_i| sd(p_i)`` whatever the correlations
    (the triangle inequality for standard deviations), so ``sum |a_i| ci_i``
    bounds its 95% half-width; that sum is also the largest ``|f(p + d) -
    f(p)|`` over the 32 corners ``d = (+-ci_1, ..., +-ci_5)``. The cube model
    is piecewise linear in ``p``, so the bound returned is that largest
    change over the corners (each corner made a consistent 5-vector, as the
    means are). It is conservative: with the real, mostly positive
    correlations of win and gammon rates the interval is narrower.

    Args:
        probs: ``(5,)`` the rollout's mean probabilities (side on roll, gnubg order).
        probs_ci: ``(5,)`` their 95% half-widths (NaN with fewer than 2 games).
        cube: the cube state of the decision.
        efficiency: the cube efficiency ``x`` of the position
            (:func:`nard_ai.cube.cube_efficiency`).

    Returns:
        ``{"no_double": ..., "double_take": ..., "optimal": ...}``: half-widths
        in the decision's units (money: points per unit of the current cube;
        match: normalised equity); NaN where the probabilities have no
        interval or the side on roll cannot double (``double_take``).

    Raises:
        ValueError: on probabilities or intervals not of shape ``(5,)``.
    """
    p = np.asarray(probs, dtype=np.float64)
    ci = np.asarray(probs_ci, dtype=np.float64)
    if p.shape != (5,) or ci.shape != (5,):
        raise ValueError(f"probs and probs_ci must have shape (5,), got {p.shape} and {ci.shape}")
    keys = ("no_double", "double_take", "optimal")
    if not np.isfinite(ci).all():
        return dict.fromkeys(keys, float("nan"))

    def values(q: np.ndarray) -> np.ndarray:
        d = cube_decision_from_probs(_consistent(q), cube, efficiency)
        return np.array([d.no_double, d.double_take, d.optimal])

    centre = values(p)
    signs = np.array(np.meshgrid(*[(-1.0, 1.0)] * 5, indexing="ij")).reshape(5, -1).T  # (32, 5)
    spread = np.max([np.abs(values(p + s * ci) - centre) for s in signs], axis=0)
    return {k: float(v) for k, v in zip(keys, spread, strict=True)}


def rollout_position(agent, task: tuple[np.ndarray, int, int]):
    """One shard of :func:`analyse_positions` on an executor: ``rollout(board, games, agent=agent,
    seed=seed)`` of ``task = (board, games, seed)`` (the same call as the local path)."""
    from nard_ai.play.rollout import rollout

    board, games, seed = task
    return rollout(board, games, agent=agent, seed=seed)


def analyse_positions(
    positions: list[PositionLine],
    agent,
    *,
    rollout_games: int = 0,
    seed: int = 0,
    progress=None,
    executor=None,
) -> list[PositionAnalysis]:
    """Cube decision (and optionally a rollout) of each position with ``agent``.

    Args:
        positions: from :func:`read_positions`.
        agent: anything with ``evaluate`` (and ``choose_plays`` for rollouts)
            and a ``ply``.
        rollout_games: games per cubeless rollout; 0 for none.
        seed: seed of the rollout dice.
        progress: optional callable ``progress(done)``.
        executor: ``None``: the rollouts run here one after another; an executor of
            :mod:`nard_ai.distributed` (a Ray cluster) runs one position's rollout per shard
            (:func:`rollout_position`, the agent shared once): the same rollouts, so the same numbers.

    Raises:
        ValueError: on ``rollout_games < 0``.
    """
    if rollout_games < 0:
        raise ValueError(f"rollout games must be >= 0, got {rollout_games}")
    rolls: list = [None] * len(positions)
    if rollout_games and executor is not None:
        tasks = [(p.board, rollout_games, seed) for p in positions]
        rolls = executor.map(rollout_position, tasks, shared=agent)

    out = []
    for k, p in enumerate(positions):
        decision = cube_decision(p.board, p.cube, agent=agent)
        rolled = rolled_decision = rolled_ci = None
        if rollout_games:
            rolled = (
                rolls[k] if rolls[k] is not None else rollout_position(agent, (p.board, rollout_games, seed))
            )
            x = cube_efficiency(p.board)
            rolled_decision = cube_decision_from_probs(_consistent(rolled.probs), p.cube, x, ply=decision.ply)
            rolled_ci = cubeful_ci_bound(rolled.probs, rolled.probs_ci, p.cube, x)
        out.append(PositionAnalysis(p, decision, rolled, rolled_decision, rollout_ci=rolled_ci))
        if progress is not None:
            progress(k + 1)
    return out


@dataclass(frozen=True)
class Comparison:
    """Our cube decisions against gnubg's at the same ply.

    Attributes:
        ply: the ply of both.
        positions: positions compared.
        agree: positions where the actions are the same.
        mean_abs_cubeful: mean ``|ours - gnubg's|`` of the cubeful equity
            with the right cube action (:attr:`CubeDecision.optimal`).
        mean_abs_no_double, mean_abs_double_take: the same for those columns,
            over positions where both have them.
        mean_abs_cubeless: the same for the cubeless equity.
    """

    ply: int
    positions: int
    agree: int
    mean_abs_cubeful: float
    mean_abs_no_double: float
    mean_abs_double_take: float
    mean_abs_cubeless: float

    @property
    def agreement(self) -> float:
        """Fraction of positions where the cube actions agree."""
        return self.agree / self.positions if self.positions else float("nan")


def _mean_abs(pairs) -> float:
    diffs = [abs(a - b) for a, b in pairs if math.isfinite(a) and math.isfinite(b)]
    return float(np.mean(diffs)) if diffs else float("nan")


def compare_with_gnubg(
    analyses: list[PositionAnalysis], ply: int
) -> tuple[list[PositionAnalysis], Comparison]:
    """Add gnubg's cube analysis at ``ply`` to each analysis and summarise the agreement.

    Raises:
        ValueError: if gnubg is not installed or the ply is not 0..2.
        RuntimeError: if gnubg fails (see :func:`nard_ai.gnubg.agent.gnubg_cube_analysis`).
    """
    from nard_ai.gnubg.agent import gnubg_cube_analysis

    if ply is None:
        raise ValueError("the agent has no ply to compare gnubg at")
    theirs = gnubg_cube_analysis([(a.position.board, a.position.cube) for a in analyses], ply)
    analyses = [
        PositionAnalysis(a.position, a.decision, a.rollout, a.rollout_decision, g, a.rollout_ci)
        for a, g in zip(analyses, theirs, strict=True)
    ]
    pairs = [(a.decision, a.gnubg) for a in analyses]
    comparison = Comparison(
        ply=ply,
        positions=len(pairs),
        agree=sum(d.action == g.action for d, g in pairs),
        mean_abs_cubeful=_mean_abs((d.optimal, g.optimal) for d, g in pairs),
        mean_abs_no_double=_mean_abs((d.no_double, g.no_double) for d, g in pairs),
        mean_abs_double_take=_mean_abs((d.double_take, g.double_take) for d, g in pairs),
        mean_abs_cubeless=_mean_abs((d.cubeless_equity, g.cubeless_equity) for d, g in pairs),
    )
    return analyses, comparison


# --------------------------------------------------------------------------- output


def _action_words(d: CubeDecision) -> str:
    """gnubg's words for the proper action, "Redouble" when the side on roll owns the cube."""
    return cube_action_text(d)


def cube_errors_text(d: CubeDecision, opponent: str = "O") -> str:
    """How wrong each cube choice is, as ``nard cube`` and ``evaluate.py --positions`` print it.

    The figures are :attr:`nard_ai.cube.CubeDecision.errors` (equity the
    chooser gives up against the right choice, in the decision's units:
    money, points per unit of the current cube; match, normalised equity).
    When the opponent should beaver (:attr:`~nard_ai.cube.CubeDecision.beaver`)
    its ``take`` error is that of beavering, and a plain take, which leaves
    the stake at the doubled cube instead of four times it, costs
    ``errors["take"] - double_take`` (``double_take`` < 0 there).

    Args:
        d: the decision, for the side on roll.
        opponent: the name of the player who answers a double.

    Returns:
        ``"not doubling 0.000, doubling 0.546; O taking 0.000, O passing 1.487"``;
        ``""`` when the side on roll cannot double.
    """
    if not d.cube_available:
        return ""
    e = d.errors
    mine = f"not doubling {e['no_double']:.3f}, doubling {e['double']:.3f}"
    if d.beaver:
        theirs = (
            f"{opponent} beavering {e['take']:.3f}, {opponent} taking without a beaver "
            f"{e['take'] - d.double_take:.3f}, {opponent} passing {e['pass']:.3f}"
        )
    else:
        theirs = f"{opponent} taking {e['take']:.3f}, {opponent} passing {e['pass']:.3f}"
    return f"{mine}; {theirs}"


def _describe_cube(cube: CubeState) -> str:
    owner = {CENTRED: "centred", ON_ROLL: "owned by the side on roll", OPPONENT: "owned by the opponent"}[
        cube.owner
    ]
    if cube.is_money:
        rules = (", Jacoby" if cube.jacoby else "") + (", beavers" if cube.beavers else "")
        return f"money{rules}, cube {cube.value} {owner}"
    crawford = ", Crawford game" if cube.crawford else ""
    return (
        f"{cube.match_length}-point match, score {cube.score[0]}-{cube.score[1]} "
        f"(side on roll first){crawford}, cube {cube.value} {owner}"
    )


def _eq(x: float) -> str:
    return "   n/a" if not math.isfinite(x) else f"{x:+.3f}"


def _pm(x: float) -> str:
    return "± n/a" if not math.isfinite(x) else f"± {x:.3f}"


def _decision_lines(d: CubeDecision) -> list[str]:
    p = d.probs
    lines = [
        f"  cubeless: win {p[0]:.3f} (gammon {p[1]:.3f}, backgammon {p[2]:.3f})  "
        f"lose {1 - p[0]:.3f} (gammon {p[3]:.3f}, backgammon {p[4]:.3f})  equity {_eq(d.cubeless_equity)}",
        f"  cubeful equity {_eq(d.optimal)} (no double {_eq(d.no_double)})",
    ]
    if d.cube_available:
        lines.append(
            f"  cube: {_action_words(d):<28} ND {_eq(d.no_double)}  D/T {_eq(d.double_take)}  "
            f"D/P {_eq(d.double_pass)}  take point {d.take_point:.1%}"
        )
        lines.append(f"  errors: {cube_errors_text(d, 'opponent')}")
    else:
        lines.append("  cube: not available to the side on roll")
    if not d.cube.is_money:
        mwc = (d.no_double_mwc, d.double_take_mwc, d.double_pass_mwc)
        lines.append(
            "  MWC:  "
            + "  ".join(
                f"{k} {'n/a' if v is None or not math.isfinite(v) else f'{v:.1%}'}"
                for k, v in zip(("ND", "D/T", "D/P"), mwc, strict=True)
            )
        )
    return lines


def format_report(
    analyses: list[PositionAnalysis], agent_name: str, comparison: Comparison | None = None
) -> str:
    """Human-readable report: a block per position, then the comparison summary."""
    out = []
    for a in analyses:
        d, p = a.decision, a.position
        out.append(f"line {p.line}: {p.text}")
        out.append(f"  {_describe_cube(p.cube)}; {agent_name} at {d.ply}-ply")
        out.extend(_decision_lines(d))
        if a.rollout is not None:
            r = a.rollout
            out.append(
                f"  rollout ({r.games} game{'s' * (r.games != 1)}, "
                f"{'luck-adjusted' if r.variance_reduction else 'plain'}): "
                f"win {r.probs[0]:.3f} {_pm(r.probs_ci[0])}  equity {_eq(r.equity)} {_pm(r.equity_ci)}"
            )
            rd, ci = a.rollout_decision, a.rollout_ci or {}
            nan = float("nan")
            line = f"  rollout cube: {_action_words(rd) if rd.cube_available else 'not available'}  "
            line += f"cubeful {_eq(rd.optimal)} {_pm(ci.get('optimal', nan))} (conservative 95% CI)"
            if rd.cube_available:
                line += (
                    f"  ND {_eq(rd.no_double)} {_pm(ci.get('no_double', nan))}  "
                    f"D/T {_eq(rd.double_take)} {_pm(ci.get('double_take', nan))}"
                )
                out.append(line)
                out.append(f"  rollout errors: {cube_errors_text(rd, 'opponent')}")
            else:
                out.append(line)
        if a.gnubg is not None:
            g = a.gnubg
            words = g.gnubg_action or "cube not available"
            agree = "agrees" if g.action == d.action else "differs"
            out.append(
                f"  gnubg {g.ply}-ply: {words}  ND {_eq(g.no_double)}  D/T {_eq(g.double_take)}  "
                f"D/P {_eq(g.double_pass)}  cubeful {_eq(g.optimal)}  ({agree})"
            )
        out.append("")
    if comparison is not None:
        c = comparison
        out.append(
            f"gnubg comparison at {c.ply}-ply: cube actions agree on {c.agree} of {c.positions} positions "
            f"({c.agreement:.0%}); mean |equity difference|: cubeful {c.mean_abs_cubeful:.3f}, "
            f"no double {c.mean_abs_no_double:.3f}, double/take {c.mean_abs_double_take:.3f}, "
            f"cubeless {c.mean_abs_cubeless:.3f}"
        )
    return "\n".join(out).rstrip() + "\n"


def _num(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _decision_dict(d: CubeDecision) -> dict:
    return {
        "action": d.action,
        "proper_action": _action_words(d),
        "beaver": d.beaver,
        "cube_available": d.cube_available,
        "no_double": _num(d.no_double),
        "double_take": _num(d.double_take),
        "double_pass": _num(d.double_pass),
        "cubeful_equity": _num(d.optimal),
        "cubeless_equity": _num(d.cubeless_equity),
        "take_point": _num(d.take_point),
        "errors": {k: _num(v) for k, v in d.errors.items()},
        "probabilities": [float(v) for v in d.probs],
        "mwc": None
        if d.cube.is_money
        else {
            "no_double": _num(d.no_double_mwc),
            "double_take": _num(d.double_take_mwc),
            "double_pass": _num(d.double_pass_mwc),
        },
        "ply": d.ply,
    }


def report_dict(
    analyses: list[PositionAnalysis],
    agent_name: str,
    errors: list[tuple[int, str]] = (),
    comparison: Comparison | None = None,
) -> dict:
    """The report as one JSON-ready dict (NaN becomes ``None``).

    Keys: ``agent``, ``positions`` (one object per position: ``line``,
    ``id``, ``position_id``, ``cube``, ``decision`` and optionally
    ``rollout``, ``rollout_decision``, ``gnubg``), ``errors`` (``line``,
    ``message``), ``comparison`` (or ``None``). A decision holds ``action``,
    ``proper_action`` (gnubg's words), ``beaver``, the three cubeful
    equities, ``errors`` (:attr:`~nard_ai.cube.CubeDecision.errors`), the
    probabilities and, in match play, the MWC; a ``rollout_decision`` also
    ``ci95_bound`` (:func:`cubeful_ci_bound`).
    """
    items = []
    for a in analyses:
        p, c = a.position, a.position.cube
        item: dict[str, Any] = {
            "line": p.line,
            "id": p.text,
            "position_id": position_id(p.board),
            "cube": {
                "value": c.value,
                "owner": c.owner,
                "match_length": c.match_length,
                "score": list(c.score),
                "crawford": c.crawford,
                "jacoby": c.jacoby,
                "beavers": c.beavers,
            },
            "decision": _decision_dict(a.decision),
        }
        if a.rollout is not None:
            r = a.rollout
            item["rollout"] = {
                "games": r.games,
                "probabilities": [float(v) for v in r.probs],
                "probabilities_ci95": [_num(v) for v in r.probs_ci],  # null for one game (no interval)
                "equity": _num(r.equity),
                "equity_ci95": _num(r.equity_ci),
                "variance_reduction": r.variance_reduction,
            }
            item["rollout_decision"] = _decision_dict(a.rollout_decision)
            ci = a.rollout_ci or {}
            item["rollout_decision"]["ci95_bound"] = {
                k: _num(ci.get(k)) for k in ("no_double", "double_take", "optimal")
            }
        if a.gnubg is not None:
            g = a.gnubg
            item["gnubg"] = {
                "action": g.action,
                "gnubg_action": g.gnubg_action,
                "no_double": _num(g.no_double),
                "double_take": _num(g.double_take),
                "double_pass": _num(g.double_pass),
                "cubeful_equity": _num(g.optimal),
                "cubeless_equity": _num(g.cubeless_equity),
                "probabilities": [float(v) for v in g.probs],
                "ply": g.ply,
            }
        items.append(item)
    comp = None
    if comparison is not None:
        comp = {k: (_num(v) if isinstance(v, float) else v) for k, v in vars(comparison).items()}
        comp["agreement"] = _num(comparison.agreement)
    return {
        "agent": agent_name,
        "positions": items,
        "errors": [{"line": line, "message": message} for line, message in errors],
        "comparison": comp,
    }


def read_text_file(path: str, err) -> str | None:
    """A UTF-8 text file's contents (a leading byte order mark dropped), or ``None`` after one
    ``evaluate.py: error: cannot read ...`` line on ``err``."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"evaluate.py: error: cannot read {path}: {exc}", file=err)
        return None


def run_positions(
    path: str,
    agent_spec: str = "default",
    ply: int = -1,
    *,
    rollout_games: int = 0,
    compare: str = "",
    as_json: bool = False,
    seed: int = 0,
    out: TextIO | None = None,
    err: TextIO | None = None,
    executor=None,
) -> int:
    """``evaluate.py --positions``: read, analyse, print; returns the exit status.

    ``executor``: where the rollouts run (:func:`analyse_positions`).

    Exit status: 0 when every line was analysed, 1 when some line was bad
    (the others are still reported) or the file holds no position, 2 when
    the file cannot be read or the agent or comparison cannot be set up.
    Messages go to ``err`` as ``evaluate.py: error: ...`` / ``FILE:LINE: ...``;
    with ``as_json`` the JSON object goes to ``out`` whenever the file was
    read, also when it holds no good position (``positions`` empty, the
    agent named by its spec, every bad line in ``errors``).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    text = read_text_file(path, err)
    if text is None:
        return 2
    positions, errors = read_positions(text)
    for line, message in errors:
        print(f"{path}:{line}: {message}", file=err)
    if not positions:
        print(f"evaluate.py: error: {path} holds no position to analyse", file=err)
        if as_json:  # the caller parses stdout: the bad lines go there too
            json.dump(report_dict([], agent_spec, errors), out, indent=1)
            out.write("\n")
        return 1
    if compare not in ("", "gnubg"):
        print(f"evaluate.py: error: --compare takes 'gnubg', got {compare!r}", file=err)
        return 2
    try:
        agent = analysis_agent(agent_spec, ply)
        analyses = analyse_positions(
            positions, agent, rollout_games=rollout_games, seed=seed, executor=executor
        )
        comparison = None
        if compare == "gnubg":
            analyses, comparison = compare_with_gnubg(analyses, agent.ply)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"evaluate.py: error: {exc}", file=err)
        return 2
    name = getattr(agent, "name", agent_spec)
    if as_json:
        json.dump(report_dict(analyses, name, errors, comparison), out, indent=1)
        out.write("\n")
    else:
        out.write(format_report(analyses, name, comparison))
    return 1 if errors else 0
