"""Strength benchmarks by position class: move error against stored referee values, equity error against rollouts.

Two benchmarks measure an evaluator where matches cannot say *where* it is weak
(issue 14, section 4). Both report per position class (gnubg's
``ClassifyPosition`` of the position before the roll, :mod:`nard_ai.core.classes`):
``contact``, ``crashed``, ``race``, ``bearoff``.

Move benchmark (a CSV file and its JSON sidecar)
------------------------------------------------
A set of (position, dice) cases where **every** legal play was valued once by
a referee (gnubg 2-ply, or any agent with real probabilities), so any number
of agents can then be judged in seconds without the referee:

* ``NAME.csv``: one row per legal play, header
  ``case,position_id,dice,class,play,equity``. ``case`` numbers the cases from
  0; ``position_id`` is the gnubg Position ID of the board before the roll
  (side on roll's view), ``dice`` two digits, larger first (``31``),
  ``class`` the position's class name; ``play`` the Position ID of the
  afterstate **from the mover's view** (the side that just played as the
  "player on roll" of the ID, not swapped), ``equity`` the referee's cubeless
  money equity of that play for the mover, points per game at cube 1, 6
  decimals (:func:`nard_ai.reports.error_rate.play_values`: the referee's
  probabilities of the position after the play with the opponent on roll,
  inverted; a play that bears off the last checker gets its exact result).
  Rows of a case are consecutive, its plays in this engine's generator order.
* ``NAME.json``: ``format = "nard_ai.move_benchmark"``, ``format_version``,
  the referee, the cases and plays, counts per class, how the cases were
  sampled (agent, seed, quotas), the CSV's SHA-256 and the code version.

Reading checks that each case's plays are exactly the legal plays this engine
generates (standard rules) and that the CSV matches its sidecar, so a stale or
edited file is an error, not silently wrong figures.

Scoring (:func:`score_moves`) is :mod:`nard_ai.reports.error_rate`'s: the
agent plays each case; it loses ``max(equity) - equity(its play)``; the
error rate is the mean loss in millipoints per move (1000 x ppg) with a 95%
interval ``1.96 std / sqrt(n)``, over all cases and per class.

Equity benchmark
----------------
A label folder of :mod:`nard_ai.training.store` (``position_id`` and gnubg's
five cumulative probabilities, side on roll to roll), for instance positions
rolled out by :func:`nard_ai.training.labels.run_labels` with
``--method rollout``. :func:`score_equities` evaluates each position with an
agent (its ``evaluate``, at its ply, pre-roll) and reports per class the mean
absolute error of the cubeless equity (``win - lose + gammons + backgammons``,
:func:`nard_ai.core.outcomes.cubeless_equity`) and of the win and gammon
probabilities, against the labels. Another label folder can be scored the
same way (:class:`nard_ai.training.store.LabelValues`, ``equities REF --labels OTHER``): its labels
of the positions both folders hold, as the values of an agent; that is how
label methods are compared (README, "Strength benchmarks by position class").

Cube benchmark (a CSV file and its JSON sidecar)
------------------------------------------------
Money positions (cube 1, centred, no Jacoby rule, no beavers) from
self-play, each with the gnubg **program's** cube analysis at 2-ply
(:func:`nard_ai.gnubg.agent.gnubg_cube_analysis`, gnubg's ``eval`` in a child
process) as the referee, stratified by gnubg's action in four groups
(:data:`CUBE_GROUPS`: no double, double/take, double/pass, too good; gnubg's
too good/take and too good/pass are one group, "optional double" counts as a
double). Candidates are the positions whose sampling agent's cubeless equity
lies in ``[0.1, 1.8]`` (where a double can be right).

* ``NAME.csv``: header ``id,class,gnubg_action,no_double,double_take,double_pass``:
  the ``PositionID:MatchID`` (side on roll to roll, no dice), the class,
  gnubg's action (one of :data:`nard_ai.cube.ACTIONS`) and its three cubeful
  equities (ppg per unit of the cube).
* ``NAME.json``: ``format = "nard_ai.cube_benchmark"``, the referee, counts per
  group, the sampling, the CSV's SHA-256 and the code version.

:func:`score_cubes` takes an agent's own cube decision
(:func:`nard_ai.cube.cube_decision` at the agent's ply) for each position
and reports the agreement of the four groups with gnubg's, overall and per
gnubg group, with the confusion counts.

Command line: ``python -m nard_ai.reports.benchmark make-moves|moves|equities|make-cubes|cubes`` (``--help``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nard_ai.core.classes import CLASS_NAMES, classify_positions
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.core.outcomes import cubeless_equity
from nard_ai.formats.position_id import board_from_position_id, position_id
from nard_ai.model.atomic import atomic_write_bytes
from nard_ai.reports.error_rate import ErrorRateResult, _check_referee, play_values, sample_cases
from nard_ai.search.lookahead import STANDARD_RULES, agent_value
from nard_ai.training.store import LabelValues, atomic_write_json, code_version, file_sha256, read_labels

__all__ = [
    "MOVES_FORMAT",
    "MoveBenchmark",
    "ClassFigures",
    "sample_stratified_cases",
    "make_move_benchmark",
    "write_move_benchmark",
    "read_move_benchmark",
    "score_moves",
    "score_equities",
    "CUBES_FORMAT",
    "CUBE_GROUPS",
    "cube_group",
    "make_cube_benchmark",
    "read_cube_benchmark",
    "score_cubes",
    "main",
]

MOVES_FORMAT = "nard_ai.move_benchmark"
MOVES_FORMAT_VERSION = 1
MOVE_COLUMNS = ("case", "position_id", "dice", "class", "play", "equity")
EQUITY_DECIMALS = 6
#: Classes a benchmark reports, in this order (``over`` positions have no play and no value).
REPORTED = ("contact", "crashed", "race", "bearoff")


@dataclass(frozen=True)
class MoveBenchmark:
    """Cases with every legal play valued by a referee.

    Attributes:
        boards: ``(N, 26)`` int8 positions before the roll, side on roll's view.
        dice: ``(N, 2)`` int8 rolls, larger die first.
        classes: ``(N,)`` int8 class numbers (:data:`nard_ai.core.classes.CLASS_NAMES`).
        afterstates: ``(M, 26)`` int8 every legal play of every case, mover's view, case by case.
        owner: ``(M,)`` int64 the case of each play (non-decreasing).
        values: ``(M,)`` float64 the referee's cubeless equity of each play for the mover, ppg.
        meta: the sidecar's provenance (referee, sampling), a dict.
    """

    boards: np.ndarray
    dice: np.ndarray
    classes: np.ndarray
    afterstates: np.ndarray
    owner: np.ndarray
    values: np.ndarray
    meta: dict

    @property
    def cases(self) -> int:
        return len(self.boards)


@dataclass(frozen=True)
class ClassFigures:
    """One row of a benchmark table: a class (or ``all``), its cases and the figures."""

    name: str
    cases: int
    figures: dict

    def to_dict(self) -> dict:
        return {"class": self.name, "cases": self.cases, **self.figures}


# --------------------------------------------------------------------------- cases


def _parse_counts(spec: str, names: tuple[str, ...], word: str) -> dict[str, int]:
    """``"NAME=COUNT,..."`` with each NAME one of ``names`` -> counts (the quotas of both benchmarks)."""
    out: dict[str, int] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise ValueError(
                f"quotas must be {word}=COUNT,... with {word} one of {', '.join(names)}; got {part!r}"
            )
        if not value.strip().isdigit():
            raise ValueError(f"quota {part!r}: the count must be an integer >= 0")
        out[name] = int(value)
    if not out or sum(out.values()) == 0:
        raise ValueError(f"quotas {spec!r}: give at least one {word.lower()} a count above 0")
    return out


def parse_quotas(spec: str) -> dict[str, int]:
    """``"contact=500,crashed=250,race=350,bearoff=100"`` -> cases per class.

    Raises:
        ValueError: an unknown class (or ``over``), a count that is not an integer >= 0, all zero.
    """
    return _parse_counts(spec, REPORTED, "CLASS")


def sample_stratified_cases(
    quotas: dict[str, int], agent, seed: int = 0, *, keep: float = 0.1, max_rounds: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """Unforced (position, dice) cases of ``agent``'s self-play, ``quotas[class]`` of each class.

    Self-play cases come from :func:`nard_ai.reports.error_rate.sample_cases`
    (each turn kept with chance ``keep``, two or more distinct plays) in
    rounds of seeds ``seed, seed + 1, ...``; each class takes its first
    ``quotas[class]`` cases in the order met, until every quota is full.

    Returns:
        ``(boards (n, 26) int8, dice (n, 2) int8)``, class by class in :data:`REPORTED` order.

    Raises:
        ValueError: bad quotas, or ``max_rounds`` rounds that did not fill them (a rare class).
    """
    want = {name: int(quotas.get(name, 0)) for name in REPORTED}
    got: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {name: [] for name in REPORTED}
    have = dict.fromkeys(REPORTED, 0)
    per_round = max(1000, 4 * sum(want.values()))
    for r in range(max_rounds):
        if all(have[k] >= want[k] for k in REPORTED):
            break
        boards, dice = sample_cases(per_round, agent, seed + r, keep=keep)
        cls = classify_positions(boards)
        for name in REPORTED:
            need = want[name] - have[name]
            if need <= 0:
                continue
            idx = np.flatnonzero(cls == CLASS_NAMES.index(name))[:need]
            got[name].append((boards[idx], dice[idx]))
            have[name] += len(idx)
    short = {k: f"{have[k]}/{want[k]}" for k in REPORTED if have[k] < want[k]}
    if short:
        raise ValueError(
            f"{max_rounds} rounds of {per_round} self-play cases did not fill the quotas: {short}"
        )
    parts = [p for name in REPORTED for p in got[name]]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# --------------------------------------------------------------------------- making and storing


def make_move_benchmark(
    boards: np.ndarray, dice: np.ndarray, referee, *, batch: int = 64, progress=None, meta: dict | None = None
) -> MoveBenchmark:
    """Value every legal play of each case with ``referee`` (:func:`~nard_ai.reports.error_rate.play_values`).

    Args:
        boards: ``(N, 26)`` int8 valid positions (side on roll's view), games not over.
        dice: ``(N, 2)`` rolls.
        referee: an agent with real probabilities (a network agent or gnubg[:PLY]).
        batch: cases valued per call.
        progress: optional ``progress(cases_done)``.
        meta: provenance to store in the sidecar (the referee's name is added).

    Raises:
        ValueError: a referee without real probabilities (pubeval, random), bad boards or dice.
    """
    _check_referee(referee)
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 26)
    dice = np.sort(np.asarray(dice, dtype=np.int8).reshape(-1, 2), axis=1)[:, ::-1].copy()
    if len(boards) != len(dice):
        raise ValueError(f"{len(boards)} boards but {len(dice)} dice")
    classes = classify_positions(boards)
    afters, owners, values = [], [], []
    for start in range(0, len(boards), batch):
        stop = min(len(boards), start + batch)
        a, o = legal_plays_batch(boards[start:stop], dice[start:stop], STANDARD_RULES, sort=False)
        afters.append(a)
        owners.append(o + start)
        values.append(play_values(referee, a))
        if progress is not None:
            progress(stop)
    info = dict(meta or {})
    info.setdefault("referee", getattr(referee, "name", repr(referee)))
    return MoveBenchmark(
        boards=boards,
        dice=dice,
        classes=classes,
        afterstates=np.concatenate(afters) if afters else np.zeros((0, 26), np.int8),
        owner=np.concatenate(owners) if owners else np.zeros(0, np.int64),
        values=np.round(np.concatenate(values), EQUITY_DECIMALS) if values else np.zeros(0),
        meta=info,
    )


def _csv_bytes(bench: MoveBenchmark) -> bytes:
    ids = [position_id(b) for b in bench.boards]
    lines = [",".join(MOVE_COLUMNS)]
    for j in range(len(bench.afterstates)):
        i = int(bench.owner[j])
        d = bench.dice[i]
        lines.append(
            f"{i},{ids[i]},{d[0]}{d[1]},{CLASS_NAMES[bench.classes[i]]},{position_id(bench.afterstates[j])},"
            f"{bench.values[j] + 0.0:.{EQUITY_DECIMALS}f}"
        )
    return ("\n".join(lines) + "\n").encode()


def write_move_benchmark(path: str | Path, bench: MoveBenchmark) -> Path:
    """Write ``PATH`` (``.csv``) and its sidecar ``PATH`` with ``.json`` (module docstring), atomically.

    Returns:
        The CSV's path.
    """
    path = Path(path)
    if path.suffix != ".csv":
        raise ValueError(f"a move benchmark is a .csv file (with a .json sidecar), got {path}")
    data = _csv_bytes(bench)
    atomic_write_bytes(path, data)
    counts = {name: int((bench.classes == CLASS_NAMES.index(name)).sum()) for name in REPORTED}
    atomic_write_json(
        path.with_suffix(".json"),
        {
            "format": MOVES_FORMAT,
            "format_version": MOVES_FORMAT_VERSION,
            "cases": bench.cases,
            "plays": len(bench.afterstates),
            "classes": counts,
            **bench.meta,
            "csv": path.name,
            "csv_sha256": file_sha256(path),
            "code": code_version(),
        },
    )
    return path


def _read_checked(
    path, what: str, fmt: str, version: int, columns: tuple
) -> tuple[Path, list[list[str]], dict]:
    """A benchmark CSV and its sidecar, checked: ``(path, rows with the header first, sidecar)``.

    Raises:
        FileNotFoundError: no CSV or no sidecar.
        ValueError: a sidecar of another format or version, a CSV whose SHA-256 is not the sidecar's,
            a wrong header, a row with another number of fields.
    """
    path = Path(path)
    side = path.with_suffix(".json")
    if not path.is_file():
        raise FileNotFoundError(f"no {what} {path}")
    if not side.is_file():
        raise FileNotFoundError(f"{path} has no sidecar {side.name}")
    meta = json.loads(side.read_text(encoding="utf-8"))
    if meta.get("format") != fmt or meta.get("format_version") != version:
        raise ValueError(f"{side}: not a {fmt} v{version} sidecar")
    if file_sha256(path) != meta.get("csv_sha256"):
        raise ValueError(f"{path} does not match its sidecar's SHA-256 (edited or damaged)")
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows or tuple(rows[0]) != columns:
        raise ValueError(f"{path}: the header must be {','.join(columns)!r}")
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(columns):
            raise ValueError(f"{path}, line {n}: expected {len(columns)} fields, got {len(row)}")
    return path, rows, meta


def read_move_benchmark(path: str | Path) -> MoveBenchmark:
    """Read a move benchmark written by :func:`write_move_benchmark`, checking it (module docstring).

    Raises:
        FileNotFoundError: no CSV or no sidecar.
        ValueError: a sidecar of another format, a CSV that does not match it, a bad row, or a
            case whose plays are not exactly the legal plays of its position and roll.
    """
    path, rows, meta = _read_checked(path, "move benchmark", MOVES_FORMAT, MOVES_FORMAT_VERSION, MOVE_COLUMNS)
    boards, dice, classes, afters, owner, values = [], [], [], [], [], []
    for n, row in enumerate(rows[1:], start=2):
        case = int(row[0])
        if case == len(boards):
            boards.append(board_from_position_id(row[1]))
            if len(row[2]) != 2 or not row[2].isdigit():
                raise ValueError(f"{path}, line {n}: dice {row[2]!r} must be two digits 1-6")
            dice.append((int(row[2][0]), int(row[2][1])))
            if row[3] not in CLASS_NAMES:
                raise ValueError(f"{path}, line {n}: unknown class {row[3]!r}")
            classes.append(CLASS_NAMES.index(row[3]))
        elif case != len(boards) - 1:
            raise ValueError(f"{path}, line {n}: case {case} out of order")
        afters.append(board_from_position_id(row[4]))
        owner.append(case)
        values.append(float(row[5]))
    bench = MoveBenchmark(
        boards=np.array(boards, dtype=np.int8).reshape(-1, 26),
        dice=np.array(dice, dtype=np.int8).reshape(-1, 2),
        classes=np.array(classes, dtype=np.int8),
        afterstates=np.array(afters, dtype=np.int8).reshape(-1, 26),
        owner=np.array(owner, dtype=np.int64),
        values=np.array(values, dtype=np.float64),
        meta=meta,
    )
    if (classify_positions(bench.boards) != bench.classes).any():
        bad = int(np.flatnonzero(classify_positions(bench.boards) != bench.classes)[0])
        raise ValueError(f"{path}: case {bad}'s class is not its position's class")
    legal, legal_owner = legal_plays_batch(bench.boards, bench.dice, STANDARD_RULES, sort=False)
    if (
        len(legal) != len(bench.afterstates)
        or (legal_owner != bench.owner).any()
        or (legal != bench.afterstates).any()
    ):
        mine = np.bincount(bench.owner, minlength=bench.cases)
        theirs = np.bincount(legal_owner, minlength=bench.cases)
        diff = np.flatnonzero(mine != theirs)
        case = int(diff[0]) if len(diff) else -1
        raise ValueError(
            f"{path}: the stored plays are not this engine's legal plays"
            + (
                f" (case {case}: {mine[case]} stored, {theirs[case]} legal)"
                if case >= 0
                else " (a play differs)"
            )
        )
    return bench


# --------------------------------------------------------------------------- scoring


def _table(classes: np.ndarray, figures) -> list[ClassFigures]:
    rows = [ClassFigures("all", len(classes), figures(np.ones(len(classes), bool)))]
    for name in REPORTED:
        mask = classes == CLASS_NAMES.index(name)
        if mask.any():
            rows.append(ClassFigures(name, int(mask.sum()), figures(mask)))
    return rows


def _mean_ci(x: np.ndarray, scale: float = 1.0) -> tuple[float, float]:
    if len(x) == 0:
        return float("nan"), float("nan")
    ci = 1.96 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return float(scale * x.mean()), float(scale * ci)


def score_moves(
    agent, bench: MoveBenchmark, *, batch: int = 256
) -> tuple[ErrorRateResult, list[ClassFigures]]:
    """Judge ``agent``'s plays by the benchmark's stored values (module docstring, "Scoring").

    Returns:
        ``(result, table)``: the :class:`~nard_ai.reports.error_rate.ErrorRateResult` of all cases,
        and per class (``all`` first) ``mp_per_move``, ``ci95``, ``bad`` (losses above 0.06 ppg).

    Raises:
        ValueError: an agent whose play is not a legal play of the case.
    """
    t0 = time.perf_counter()
    n = bench.cases
    best = np.full(n, -np.inf)
    np.maximum.at(best, bench.owner, bench.values)
    chosen_value = np.empty(n)
    start_of = np.searchsorted(bench.owner, np.arange(n + 1))
    for s in range(0, n, batch):
        e = min(n, s + batch)
        chosen = np.asarray(agent.choose_plays(bench.boards[s:e], bench.dice[s:e]), dtype=np.int8)
        for i in range(s, e):
            plays = bench.afterstates[start_of[i] : start_of[i + 1]]
            hit = np.flatnonzero((plays == chosen[i - s]).all(axis=1))
            if len(hit) == 0:
                raise ValueError(f"case {i}: the agent's play is not a legal play of the position and roll")
            chosen_value[i] = bench.values[start_of[i] + hit[0]]
    lost = np.maximum(best - chosen_value, 0.0)
    result = ErrorRateResult(
        lost=lost,
        best=best,
        chosen=chosen_value,
        plays=np.diff(start_of).astype(np.int64),
        agent=getattr(agent, "name", type(agent).__name__),
        referee=str(bench.meta.get("referee", "stored values")),
        seconds=time.perf_counter() - t0,
    )

    def figures(mask):
        mp, ci = _mean_ci(lost[mask], 1000.0)
        return {"mp_per_move": mp, "ci95": ci, "bad": int((lost[mask] > 0.06).sum())}

    return result, _table(bench.classes, figures)


def score_equities(agent, boards: np.ndarray, labels: np.ndarray) -> list[ClassFigures]:
    """Mean absolute errors of ``agent``'s pre-roll evaluation against labels, per class.

    Args:
        agent: anything with ``value(boards) -> (probs (N, 5), equity (N,))`` (an agent, or a label
            folder as :class:`nard_ai.training.store.LabelValues`).
        boards: ``(N, 26)`` int8 positions, side on roll's view.
        labels: ``(N, 5)`` gnubg-order cumulative probabilities (e.g. rollouts) for the side on roll.

    Returns:
        Rows (``all`` first): ``equity_mae`` (cubeless ppg) with ``ci95``, ``win_mae``,
        ``gammon_mae`` (the mean of the win-gammon and lose-gammon errors), ``equity_bias``
        (mean of the agent's equity minus the label's).
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 26)
    labels = np.asarray(labels, dtype=np.float64).reshape(-1, 5)
    if len(boards) != len(labels):
        raise ValueError(f"{len(boards)} boards but {len(labels)} labels")
    probs = np.empty((len(boards), 5), dtype=np.float64)
    for s in range(0, len(boards), 1024):
        probs[s : s + 1024] = np.asarray(agent_value(agent, boards[s : s + 1024]).probs, dtype=np.float64)
    err = cubeless_equity(probs) - cubeless_equity(labels)
    classes = classify_positions(boards)

    def figures(mask):
        mae, ci = _mean_ci(np.abs(err[mask]))
        return {
            "equity_mae": mae,
            "ci95": ci,
            "win_mae": float(np.abs(probs[mask, 0] - labels[mask, 0]).mean()),
            "gammon_mae": float(np.abs(probs[mask][:, [1, 3]] - labels[mask][:, [1, 3]]).mean()),
            "equity_bias": float(err[mask].mean()),
        }

    return _table(classes, figures)


# --------------------------------------------------------------------------- cube benchmark

CUBES_FORMAT = "nard_ai.cube_benchmark"
CUBES_FORMAT_VERSION = 1
CUBE_COLUMNS = ("id", "class", "gnubg_action", "no_double", "double_take", "double_pass")
CUBE_GROUPS = ("no_double", "double_take", "double_pass", "too_good")
#: The sampling agent's cubeless equity range of the candidates (module docstring).
CUBE_WINDOW = (0.1, 1.8)


def cube_group(action: str) -> str:
    """The benchmark's group of a cube action: ``too_good_take`` and ``too_good_pass`` are ``too_good``."""
    return "too_good" if action.startswith("too_good") else action


def parse_cube_quotas(spec: str) -> dict[str, int]:
    """``"no_double=150,double_take=150,double_pass=150,too_good=100"`` -> positions per group.

    Raises:
        ValueError: an unknown group, a count that is not an integer >= 0, all zero.
    """
    return _parse_counts(spec, CUBE_GROUPS, "GROUP")


def make_cube_benchmark(
    quotas: dict[str, int],
    sampler,
    seed: int = 0,
    *,
    ply: int = 2,
    chunk: int = 100,
    max_candidates: int = 50_000,
    analyse=None,
    progress=None,
) -> tuple[list[str], list[str], list]:
    """Money cube positions from ``sampler``'s self-play, ``quotas[group]`` per gnubg group (module docstring).

    Args:
        quotas: positions wanted per :data:`CUBE_GROUPS` group.
        sampler: the agent whose self-play gives the positions (``choose_plays``, ``evaluate``).
        seed: seed of the self-play.
        ply: gnubg's ply.
        chunk: candidates per gnubg run.
        max_candidates: give up (ValueError) after analysing this many.
        analyse: the referee, ``analyse(list of (board, CubeState), ply) -> analyses``; default
            :func:`nard_ai.gnubg.agent.gnubg_cube_analysis` (tests pass another).
        progress: optional ``progress(filled, wanted)``.

    Returns:
        ``(ids, classes, analyses)`` in group order: ``PositionID:MatchID`` strings, class names and
        the referee's analyses (``action``, ``no_double``, ``double_take``, ``double_pass``).
    """
    from nard_ai.cube import CubeState
    from nard_ai.gnubg.agent import gnubg_cube_analysis, gnubg_id_for_cube

    analyse = analyse or gnubg_cube_analysis
    want = {g: int(quotas.get(g, 0)) for g in CUBE_GROUPS}
    got: dict[str, list] = {g: [] for g in CUBE_GROUPS}
    seen: set[bytes] = set()
    analysed = 0
    r = 0
    while any(len(got[g]) < want[g] for g in CUBE_GROUPS):
        if analysed >= max_candidates:
            short = {g: f"{len(got[g])}/{want[g]}" for g in CUBE_GROUPS if len(got[g]) < want[g]}
            raise ValueError(f"{analysed} candidates did not fill the quotas: {short}")
        boards, _ = sample_cases(4 * chunk, sampler, seed + r, keep=0.1, unforced=False)
        r += 1
        eq = agent_value(sampler, boards).equity
        keep = (eq >= CUBE_WINDOW[0]) & (eq <= CUBE_WINDOW[1])
        fresh = []
        for b in boards[keep]:
            key = b.tobytes()
            if key not in seen:
                seen.add(key)
                fresh.append(b)
        for s in range(0, len(fresh), chunk):
            part = fresh[s : s + chunk]
            analyses = analyse([(b, CubeState()) for b in part], ply)
            analysed += len(part)
            for b, a in zip(part, analyses, strict=True):
                g = cube_group(a.action)
                if len(got[g]) < want[g]:
                    got[g].append((b, a))
            if progress is not None:
                progress(sum(min(len(got[g]), want[g]) for g in CUBE_GROUPS), sum(want.values()))
            if all(len(got[g]) >= want[g] for g in CUBE_GROUPS):
                break
    items = [item for g in CUBE_GROUPS for item in got[g]]
    boards = np.array([b for b, _ in items], dtype=np.int8).reshape(-1, 26)
    classes = [CLASS_NAMES[k] for k in classify_positions(boards)] if len(boards) else []
    ids = [gnubg_id_for_cube(b, CubeState()) for b, _ in items]
    return ids, classes, [a for _, a in items]


def write_cube_benchmark(
    path: str | Path, ids: list[str], classes: list[str], analyses: list, meta: dict
) -> Path:
    """Write ``PATH`` (``.csv``) and its ``.json`` sidecar (module docstring, "Cube benchmark"), atomically."""
    path = Path(path)
    if path.suffix != ".csv":
        raise ValueError(f"a cube benchmark is a .csv file (with a .json sidecar), got {path}")
    lines = [",".join(CUBE_COLUMNS)]
    for pid, cls, a in zip(ids, classes, analyses, strict=True):
        nums = ",".join(f"{x + 0.0:.{EQUITY_DECIMALS}f}" for x in (a.no_double, a.double_take, a.double_pass))
        lines.append(f"{pid},{cls},{a.action},{nums}")
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode())
    groups = {g: sum(cube_group(a.action) == g for a in analyses) for g in CUBE_GROUPS}
    atomic_write_json(
        path.with_suffix(".json"),
        {
            "format": CUBES_FORMAT,
            "format_version": CUBES_FORMAT_VERSION,
            "positions": len(ids),
            "groups": groups,
            **meta,
            "csv": path.name,
            "csv_sha256": file_sha256(path),
            "code": code_version(),
        },
    )
    return path


def read_cube_benchmark(path: str | Path) -> tuple[np.ndarray, list, list[str], dict]:
    """``(boards (N, 26) int8, cube states, gnubg's actions, sidecar)`` of a cube benchmark.

    Raises:
        FileNotFoundError: no CSV or no sidecar.
        ValueError: a sidecar of another format, a CSV that does not match it, a bad row.
    """
    from nard_ai.cube import ACTIONS
    from nard_ai.formats.position import parse_position
    from nard_ai.reports.position import cube_state_from_match

    path, rows, meta = _read_checked(path, "cube benchmark", CUBES_FORMAT, CUBES_FORMAT_VERSION, CUBE_COLUMNS)
    boards, cubes, actions = [], [], []
    for n, row in enumerate(rows[1:], start=2):
        if row[2] not in ACTIONS:
            raise ValueError(f"{path}, line {n}: unknown cube action {row[2]!r}")
        try:
            board, state = parse_position(row[0])
            cubes.append(cube_state_from_match(state))
        except ValueError as exc:
            raise ValueError(f"{path}, line {n}: {exc}") from None
        boards.append(board)
        actions.append(row[2])
    return np.array(boards, dtype=np.int8).reshape(-1, 26), cubes, actions, meta


def score_cubes(
    agent, boards: np.ndarray, cubes: list, actions: list[str]
) -> tuple[list[ClassFigures], dict]:
    """Agreement of ``agent``'s cube decisions with the referee's, in the four :data:`CUBE_GROUPS`.

    Returns:
        ``(rows, confusion)``: rows ``all`` then one per referee group with ``agreement`` (fraction)
        and ``agree``; ``confusion[referee group][agent group]`` counts.
    """
    from nard_ai.cube import cube_decision

    ply = int(getattr(agent, "ply", 0) or 0)
    ours = [cube_group(cube_decision(b, c, ply, agent).action) for b, c in zip(boards, cubes, strict=True)]
    theirs = [cube_group(a) for a in actions]
    confusion = {g: dict.fromkeys(CUBE_GROUPS, 0) for g in CUBE_GROUPS}
    for t, o in zip(theirs, ours, strict=True):
        confusion[t][o] += 1
    same = np.array([t == o for t, o in zip(theirs, ours, strict=True)])
    rows = [ClassFigures("all", len(same), {"agreement": float(same.mean()) if len(same) else float("nan"),
                                             "agree": int(same.sum())})]  # fmt: skip
    for g in CUBE_GROUPS:
        mask = np.array([t == g for t in theirs])
        if mask.any():
            rows.append(
                ClassFigures(
                    g,
                    int(mask.sum()),
                    {"agreement": float(same[mask].mean()), "agree": int(same[mask].sum())},
                )
            )
    return rows, confusion


# --------------------------------------------------------------------------- command line


def _format_table(title: str, columns: list[str], rows: dict[str, list[ClassFigures]], fmt: dict) -> str:
    out = [title]
    for agent, table in rows.items():
        out.append(f"  {agent}")
        for r in table:
            cells = "  ".join(f"{c} {fmt[c] % r.figures[c]}" for c in columns)
            out.append(f"    {r.name:8s} {r.cases:6d} cases  {cells}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """``python -m nard_ai.reports.benchmark``: make a move benchmark, or score agents on either benchmark.

    Returns:
        The exit status: 0, or 2 with one ``benchmark: error: ...`` line on a bad file or agent spec.
    """
    from nard_ai.agents import agent_from_spec

    parser = argparse.ArgumentParser(
        prog="python -m nard_ai.reports.benchmark",
        description="Strength benchmarks by position class (nard_ai.reports.benchmark).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make-moves", help="sample cases and value every play with a referee")
    mk.add_argument("--out", required=True, help="the benchmark's .csv (a .json sidecar goes beside it)")
    mk.add_argument(
        "--referee", default="gnubg:2", help="agent spec that values every play (default gnubg:2)"
    )
    mk.add_argument("--agent", default="default", help="agent whose self-play gives the cases")
    mk.add_argument(
        "--quotas", default="contact=500,crashed=250,race=350,bearoff=100", help="cases per class"
    )
    mk.add_argument("--seed", type=int, default=0)
    mv = sub.add_parser("moves", help="error rates (mp/move) of agents on a move benchmark")
    mv.add_argument("bench", help="a move benchmark .csv")
    mv.add_argument("--agent", action="append", required=True, help="agent spec (repeat for several)")
    mv.add_argument("--json", action="store_true")
    eq = sub.add_parser("equities", help="equity errors of agents against a label folder (rollouts)")
    eq.add_argument("labels", help="a label folder (nard_ai.training.store)")
    eq.add_argument("--agent", action="append", default=[], help="agent spec (repeat for several)")
    eq.add_argument(
        "--labels",
        action="append",
        default=[],
        dest="other_labels",
        metavar="FOLDER",
        help="another label folder, scored on the positions both hold (repeat for several); a folder "
        "holding part of them is named with that part in the table, e.g. 'labels F (200 of 1400)'",
    )
    eq.add_argument("--json", action="store_true")
    mc = sub.add_parser("make-cubes", help="sample money cube positions, gnubg program 2-ply as the referee")
    mc.add_argument("--out", required=True, help="the benchmark's .csv (a .json sidecar goes beside it)")
    mc.add_argument("--agent", default="default", help="agent whose self-play gives the positions")
    mc.add_argument("--quotas", default="no_double=150,double_take=150,double_pass=150,too_good=100")
    mc.add_argument("--ply", type=int, default=2, choices=(0, 1, 2), help="gnubg's ply (default 2)")
    mc.add_argument("--seed", type=int, default=0)
    cu = sub.add_parser("cubes", help="agreement of agents' cube decisions with a cube benchmark's")
    cu.add_argument("bench", help="a cube benchmark .csv")
    cu.add_argument("--agent", action="append", required=True, help="agent spec (repeat for several)")
    cu.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    def fail(msg: str) -> int:
        print(f"benchmark: error: {msg}", file=sys.stderr)
        return 2

    try:
        if args.command == "make-moves":
            out = Path(args.out)
            if out.exists():
                return fail(f"{out} exists; not overwriting it")
            quotas = parse_quotas(args.quotas)
            sampler = agent_from_spec(args.agent, seed=args.seed + 1)
            referee = agent_from_spec(args.referee, seed=args.seed + 2)
            boards, dice = sample_stratified_cases(quotas, sampler, args.seed)
            t0 = time.perf_counter()
            bench = make_move_benchmark(
                boards,
                dice,
                referee,
                meta={
                    "referee": args.referee,
                    "sampled_by": args.agent,
                    "seed": args.seed,
                    "quotas": quotas,
                },
            )
            write_move_benchmark(out, bench)
            print(
                f"wrote {bench.cases} cases, {len(bench.afterstates)} plays valued by {args.referee} to {out} "
                f"in {time.perf_counter() - t0:.0f} s"
            )
            return 0
        if args.command == "moves":
            bench = read_move_benchmark(args.bench)
            rows = {}
            for spec in args.agent:
                _, table = score_moves(agent_from_spec(spec, seed=1), bench)
                rows[spec] = table
            if args.json:
                print(json.dumps({k: [r.to_dict() for r in v] for k, v in rows.items()}, indent=1))
            else:
                title = f"move error, millipoints per move, referee {bench.meta.get('referee')}, {bench.cases} cases"
                print(_format_table(title, ["mp_per_move", "ci95", "bad"], rows,
                                    {"mp_per_move": "%6.1f", "ci95": "± %4.1f", "bad": "%4d"}))  # fmt: skip
            return 0
        if args.command == "make-cubes":
            out = Path(args.out)
            if out.exists():
                return fail(f"{out} exists; not overwriting it")
            quotas = parse_cube_quotas(args.quotas)
            sampler = agent_from_spec(args.agent, seed=args.seed + 1)
            t0 = time.perf_counter()
            ids, classes, analyses = make_cube_benchmark(
                quotas,
                sampler,
                args.seed,
                ply=args.ply,
                progress=lambda done, want: print(f"{done}/{want} positions", file=sys.stderr, flush=True),
            )
            meta = {"referee": f"gnubg program {args.ply}-ply", "sampled_by": args.agent, "seed": args.seed,
                    "quotas": quotas, "cube": "money, cube 1 centred, no Jacoby, no beavers",
                    "window": list(CUBE_WINDOW)}  # fmt: skip
            write_cube_benchmark(out, ids, classes, analyses, meta)
            print(f"wrote {len(ids)} positions to {out} in {time.perf_counter() - t0:.0f} s")
            return 0
        if args.command == "cubes":
            boards, cubes, actions, meta = read_cube_benchmark(args.bench)
            results = {
                spec: score_cubes(agent_from_spec(spec, seed=1), boards, cubes, actions)
                for spec in args.agent
            }
            if args.json:
                print(
                    json.dumps(
                        {
                            k: {"rows": [r.to_dict() for r in v[0]], "confusion": v[1]}
                            for k, v in results.items()
                        },
                        indent=1,
                    )
                )
                return 0
            print(
                f"cube decisions against {meta.get('referee')}, {len(boards)} positions (agreement by the referee's group)"
            )
            for spec, (rows, confusion) in results.items():
                print(f"  {spec}")
                for r in rows:
                    print(
                        f"    {r.name:12s} {r.cases:5d} positions  agreement {100 * r.figures['agreement']:5.1f}%"
                    )
                print("    confusion (referee's group: agent's groups) " + "; ".join(
                    f"{g}: " + " ".join(f"{confusion[g][h]}" for h in CUBE_GROUPS) for g in CUBE_GROUPS))  # fmt: skip
            return 0
        if not args.agent and not args.other_labels:
            return fail("equities needs at least one --agent or --labels")
        ids, labels = read_labels(args.labels)
        if not ids:
            return fail(f"{args.labels} holds no complete label shard")
        boards = np.array([board_from_position_id(p) for p in ids], dtype=np.int8)
        others = [LabelValues(folder) for folder in args.other_labels]  # read and checked before any agent
        shared = [np.array([pid in other for pid in ids]) for other in others]
        for other, both in zip(others, shared, strict=True):
            if not both.any():
                return fail(f"{other.folder} labels none of the positions of {args.labels}")
        rows = {spec: score_equities(agent_from_spec(spec, seed=1), boards, labels) for spec in args.agent}
        for other, both in zip(others, shared, strict=True):  # the table names the part a folder scores
            part = "" if args.json or both.all() else f" ({int(both.sum())} of {len(ids)})"
            rows[f"labels {other.folder}{part}"] = score_equities(other, boards[both], labels[both])
        if args.json:
            print(json.dumps({k: [r.to_dict() for r in v] for k, v in rows.items()}, indent=1))
        else:
            title = f"equity error against {args.labels}, {len(ids)} positions (cubeless ppg)"
            cols = ["equity_mae", "ci95", "win_mae", "gammon_mae", "equity_bias"]
            fmt = {"equity_mae": "%.4f", "ci95": "± %.4f", "win_mae": "%.4f", "gammon_mae": "%.4f",
                   "equity_bias": "%+.4f"}  # fmt: skip
            print(_format_table(title, cols, rows, fmt))
        return 0
    except (ValueError, FileNotFoundError, RuntimeError, OSError) as exc:
        return fail(str(exc))


if __name__ == "__main__":
    sys.exit(main())
