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
  sampled (agent, ``opponent`` when the cases come from its games against
  another agent, seed, quotas; ``sampled_by_network`` and ``opponent_network``,
  the file name and SHA-256 of the checkpoint each plays, since ``default`` is
  another network in each generation), the CSV's SHA-256 and the code version.

Reading checks that each case's plays are exactly the legal plays this engine
generates (standard rules), that every equity is a finite number in -3 .. 3 and that the CSV
matches its sidecar, so a stale or edited file is an error, not silently wrong figures.

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

Paired against a baseline (``moves --baseline SPEC``, ``equities --baseline SPEC``)
-------------------------------------------------------------------------------------
Two networks' errors on the same cases are strongly correlated, so the
difference of their means is known far better than either mean's interval
suggests. With a baseline agent, each agent's rows also get ``paired``: the
mean over the cases of (the agent's loss or absolute equity error minus the
baseline's on the same case), with its 95% interval ``paired_ci95`` (``1.96
std / sqrt(n)`` of the per-case differences; :func:`paired_figures`), in
mp/move for moves and cubeless ppg for equities; negative is better than the
baseline. ``--json`` keeps its shape (``{agent spec: [rows]}``); an agent's
rows then also hold ``paired``, ``paired_ci95`` and ``paired_against`` (the
baseline's spec); label folders' rows (``equities --labels``) have none.
The baseline's own figures are printed only when it is also an ``--agent``.

By pip total (``moves --pips EDGES``, ``equities --pips EDGES``)
-----------------------------------------------------------------
Classes say what kind of position an error is in; the **pip total** (both
sides' pip counts added: 334 at the start, falling as the game goes on) says
how far into the game. ``--pips 150,200,250,300`` adds, after the class rows,
one row per band of pip totals that holds a case, named ``pips<150``,
``pips 150-199``, ..., ``pips>=300`` (:func:`pip_groups`), with the same
figures (and paired figures) as the class rows; ``--json`` writes them as
rows too, their band in ``class``.

Cube benchmark: :mod:`nard_ai.reports.cube_benchmark` (its file format, making and scoring); its
commands are this module's ``make-cubes`` and ``cubes``.

Command line: ``python -m nard_ai.reports.benchmark make-moves|moves|equities|make-cubes|cubes`` (``--help``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nard_ai.core.board import NUM_CHECKERS, pip_count
from nard_ai.core.classes import CLASS_NAMES, classify_positions
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.core.outcomes import cubeless_equity
from nard_ai.formats.position_id import boards_from_position_ids, position_id
from nard_ai.model.atomic import atomic_write_bytes
from nard_ai.reports.benchmark_files import (
    EQUITY_DECIMALS,
    ClassFigures,
    network_record,
    parse_counts,
    read_checked,
)
from nard_ai.reports.cube_benchmark import (  # the commands' parts; also re-exported as before the split
    CUBE_GROUPS,
    CUBE_WINDOW,
    CUBES_FORMAT,
    cube_group,
    make_cube_benchmark,
    parse_cube_quotas,
    read_cube_benchmark,
    score_cubes,
    write_cube_benchmark,
)
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
    "equity_errors",
    "paired_figures",
    "parse_pip_edges",
    "pip_groups",
    "MAX_PIP_TOTAL",
    "main",
    "CUBES_FORMAT",
    "CUBE_GROUPS",
    "cube_group",
    "make_cube_benchmark",
    "read_cube_benchmark",
    "score_cubes",
]

MOVES_FORMAT = "nard_ai.move_benchmark"
MOVES_FORMAT_VERSION = 1
MOVE_COLUMNS = ("case", "position_id", "dice", "class", "play", "equity")
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


# --------------------------------------------------------------------------- cases


def parse_quotas(spec: str) -> dict[str, int]:
    """``"contact=500,crashed=250,race=350,bearoff=100"`` -> cases per class.

    Raises:
        ValueError: an unknown class (or ``over``), a count that is not an integer >= 0, all zero.
    """
    return parse_counts(spec, REPORTED, "CLASS")


def sample_stratified_cases(
    quotas: dict[str, int],
    agent,
    seed: int = 0,
    *,
    keep: float = 0.1,
    max_rounds: int = 64,
    opponent=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Unforced (position, dice) cases of ``agent``'s self-play (or games against ``opponent``), ``quotas[class]`` of each class.

    The cases come from :func:`nard_ai.reports.error_rate.sample_cases`
    (each turn kept with chance ``keep``, two or more distinct plays; with an
    ``opponent``, both sides' turns of ``agent``-vs-``opponent`` games) in
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
        boards, dice = sample_cases(per_round, agent, seed + r, keep=keep, opponent=opponent)
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
        source = "self-play" if opponent is None else "match"
        raise ValueError(
            f"{max_rounds} rounds of {per_round} {source} cases did not fill the quotas: {short}"
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


def read_move_benchmark(path: str | Path) -> MoveBenchmark:
    """Read a move benchmark written by :func:`write_move_benchmark`, checking it (module docstring).

    Raises:
        FileNotFoundError: no CSV or no sidecar.
        ValueError: a sidecar of another format, a CSV that does not match it, a bad row, or a
            case whose plays are not exactly the legal plays of its position and roll.
    """
    path, rows, meta = read_checked(path, "move benchmark", MOVES_FORMAT, MOVES_FORMAT_VERSION, MOVE_COLUMNS)
    boards, dice, classes, afters, owner, values = [], [], [], [], [], []  # boards, afters: Position IDs
    board_lines, after_lines = [], []  # the CSV line of each ID, for the decoder's errors
    for n, row in enumerate(rows[1:], start=2):
        case = int(row[0])
        if case == len(boards):
            boards.append(row[1])
            board_lines.append(n)
            if len(row[2]) != 2 or not set(row[2]) <= set("123456"):
                raise ValueError(f"{path}, line {n}: dice {row[2]!r} must be two digits 1-6")
            dice.append((int(row[2][0]), int(row[2][1])))
            if row[3] not in CLASS_NAMES:
                raise ValueError(f"{path}, line {n}: unknown class {row[3]!r}")
            classes.append(CLASS_NAMES.index(row[3]))
        elif case != len(boards) - 1:
            raise ValueError(f"{path}, line {n}: case {case} out of order")
        afters.append(row[4])
        after_lines.append(n)
        owner.append(case)
        values.append(float(row[5]))
    bench = MoveBenchmark(
        boards=boards_from_position_ids(boards, lambda i: f"{path}, line {board_lines[i]}").reshape(-1, 26),
        dice=np.array(dice, dtype=np.int8).reshape(-1, 2),
        classes=np.array(classes, dtype=np.int8),
        afterstates=boards_from_position_ids(afters, lambda i: f"{path}, line {after_lines[i]}").reshape(
            -1, 26
        ),
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


def _table(classes: np.ndarray, figures, groups=()) -> list[ClassFigures]:
    rows = [ClassFigures("all", len(classes), figures(np.ones(len(classes), bool)))]
    masks = [(name, classes == CLASS_NAMES.index(name)) for name in REPORTED]
    for name, mask in [*masks, *groups]:
        if mask.any():
            rows.append(ClassFigures(name, int(mask.sum()), figures(mask)))
    return rows


MAX_PIP_TOTAL = 2 * NUM_CHECKERS * 25
"""The largest pip total of a position: both sides' 15 checkers on the bar, 25 pips each (750)."""


def parse_pip_edges(spec: str) -> tuple[int, ...]:
    """``"150,200,250,300"`` -> ``(150, 200, 250, 300)``: the edges of the pip-total bands of ``--pips``.

    Raises:
        ValueError: empty, not comma-separated whole numbers (ASCII digits), not strictly ascending,
            or an edge outside 1 .. 750 (:data:`MAX_PIP_TOTAL`).
    """
    parts = [p.strip() for p in spec.split(",")]
    shown = spec if len(spec) <= 60 else spec[:57] + "..."
    if not spec.strip() or not all(re.fullmatch(r"[0-9]{1,4}", p) for p in parts):
        raise ValueError(
            f"--pips must be comma-separated whole numbers of pips in 1 .. {MAX_PIP_TOTAL}, e.g. "
            f"150,200,250,300; got {shown!r}"
        )
    edges = tuple(int(p) for p in parts)
    for a, b in zip(edges, edges[1:], strict=False):
        if b <= a:
            raise ValueError(f"--pips {shown}: the edges must be strictly ascending ({b} after {a})")
    for edge in edges:
        if not 1 <= edge <= MAX_PIP_TOTAL:
            raise ValueError(f"--pips: edge {edge} is outside 1 .. {MAX_PIP_TOTAL} (pips of both sides)")
    return edges


def pip_groups(boards: np.ndarray, edges) -> list[tuple[str, np.ndarray]]:
    """Extra table rows by the position's **pip total** (both sides' pip counts added,
    :func:`nard_ai.core.board.pip_count`): how far into the game it is (the starting position has 334;
    a race near its end a few dozen). The benchmark tables add one row per band that holds a case.

    Args:
        boards: ``(N, 26)`` int8 positions before the roll.
        edges: ascending pip totals (:func:`parse_pip_edges`); ``k`` edges make ``k + 1`` bands,
            named ``pips<E0``, ``pips E0-E1'`` (``E1' = E1 - 1``: bands are half-open), ...,
            ``pips>=Ek`` (a band of one pip total is ``pips E``).

    Returns:
        ``[(name, mask (N,) bool), ...]`` in ascending order; empty when ``edges`` is.
    """
    if not len(edges):
        return []
    total = pip_count(np.asarray(boards, dtype=np.int8).reshape(-1, 26)).sum(axis=1)
    bands = np.digitize(total, edges)  # 0: below the first edge, k: at or above the last
    names = [f"pips<{edges[0]}"]
    names += [
        f"pips {lo}" if hi == lo + 1 else f"pips {lo}-{hi - 1}"
        for lo, hi in zip(edges, edges[1:], strict=False)
    ]
    names.append(f"pips>={edges[-1]}")
    return [(name, bands == k) for k, name in enumerate(names)]


def _mean_ci(x: np.ndarray, scale: float = 1.0) -> tuple[float, float]:
    if len(x) == 0:
        return float("nan"), float("nan")
    ci = 1.96 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return float(scale * x.mean()), float(scale * ci)


def score_moves(
    agent, bench: MoveBenchmark, *, batch: int = 256, pip_edges=()
) -> tuple[ErrorRateResult, list[ClassFigures]]:
    """Judge ``agent``'s plays by the benchmark's stored values (module docstring, "Scoring").

    Args:
        pip_edges: edges of extra rows by pip total (:func:`pip_groups`); none by default.

    Returns:
        ``(result, table)``: the :class:`~nard_ai.reports.error_rate.ErrorRateResult` of all cases,
        and per class (``all`` first, then the pip bands) ``mp_per_move``, ``ci95``, ``bad`` (losses
        above 0.06 ppg).

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

    return result, _table(bench.classes, figures, pip_groups(bench.boards, pip_edges))


def equity_errors(agent, boards: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(probs (N, 5) float64, err (N,) float64)``: ``agent``'s pre-roll probabilities of ``boards``
    (side on roll's view) and its cubeless equity minus the labels' (ppg), case by case.

    Raises:
        ValueError: as many boards as labels are needed; an agent without real probabilities (pubeval,
            random: they rank plays by their own score).
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 26)
    labels = np.asarray(labels, dtype=np.float64).reshape(-1, 5)
    if len(boards) != len(labels):
        raise ValueError(f"{len(boards)} boards but {len(labels)} labels")
    _check_referee(agent)  # pubeval and random rank plays by a score: no equity to compare
    probs = np.empty((len(boards), 5), dtype=np.float64)
    for s in range(0, len(boards), 1024):
        probs[s : s + 1024] = np.asarray(agent_value(agent, boards[s : s + 1024]).probs, dtype=np.float64)
    return probs, cubeless_equity(probs) - cubeless_equity(labels)


def paired_figures(
    classes: np.ndarray, diff: np.ndarray, scale: float = 1.0, groups=()
) -> list[ClassFigures]:
    """Per class (``all`` first, the rows of the benchmark tables): ``paired``, the mean of ``diff``
    (an agent's per-case error minus a baseline's on the same cases), and ``paired_ci95``, its 95%
    interval ``1.96 std / sqrt(n)`` (module docstring, "Paired against a baseline"), both times
    ``scale`` (1000 for mp/move).

    Args:
        classes: ``(N,)`` class numbers (:data:`CLASS_NAMES` indices).
        diff: ``(N,)`` float per-case differences.
        groups: extra rows after the classes, ``[(name, mask (N,) bool)]`` (:func:`pip_groups`).

    Raises:
        ValueError: ``classes`` and ``diff`` of different lengths.
    """
    diff = np.asarray(diff, dtype=np.float64).reshape(-1)
    if len(diff) != len(classes):
        raise ValueError(f"{len(diff)} differences but {len(classes)} cases")

    def figures(mask):
        mean, ci = _mean_ci(diff[mask], scale)
        return {"paired": mean, "paired_ci95": ci}

    return _table(np.asarray(classes), figures, groups)


def _with_paired(table: list[ClassFigures], paired: list[ClassFigures], against: str) -> list[ClassFigures]:
    """``table``'s rows with ``paired_figures``'s figures and ``paired_against`` (the baseline's spec)
    added (the same classes, in the same order)."""
    assert [r.name for r in table] == [r.name for r in paired]
    return [
        ClassFigures(r.name, r.cases, {**r.figures, **q.figures, "paired_against": against})
        for r, q in zip(table, paired, strict=True)
    ]


def score_equities(agent, boards: np.ndarray, labels: np.ndarray, *, pip_edges=()) -> list[ClassFigures]:
    """Mean absolute errors of ``agent``'s pre-roll evaluation against labels, per class.

    Args:
        agent: anything with ``value(boards) -> (probs (N, 5), equity (N,))`` (an agent, or a label
            folder as :class:`nard_ai.training.store.LabelValues`).
        boards: ``(N, 26)`` int8 positions, side on roll's view.
        labels: ``(N, 5)`` gnubg-order cumulative probabilities (e.g. rollouts) for the side on roll.
        pip_edges: edges of extra rows by pip total (:func:`pip_groups`); none by default.

    Returns:
        Rows (``all`` first, the classes, then the pip bands): ``equity_mae`` (cubeless ppg) with ``ci95``, ``win_mae``,
        ``gammon_mae`` (the mean of the win-gammon and lose-gammon errors), ``equity_bias``
        (mean of the agent's equity minus the label's).
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 26)
    labels = np.asarray(labels, dtype=np.float64).reshape(-1, 5)
    probs, err = equity_errors(agent, boards, labels)
    return _equity_table(classify_positions(boards), probs, labels, err, pip_groups(boards, pip_edges))


def _equity_table(
    classes: np.ndarray, probs: np.ndarray, labels: np.ndarray, err: np.ndarray, groups=()
) -> list[ClassFigures]:
    """:func:`score_equities`'s rows from :func:`equity_errors`' ``probs`` and ``err``."""

    def figures(mask):
        mae, ci = _mean_ci(np.abs(err[mask]))
        return {
            "equity_mae": mae,
            "ci95": ci,
            "win_mae": float(np.abs(probs[mask, 0] - labels[mask, 0]).mean()),
            "gammon_mae": float(np.abs(probs[mask][:, [1, 3]] - labels[mask][:, [1, 3]]).mean()),
            "equity_bias": float(err[mask].mean()),
        }

    return _table(classes, figures, groups)


# --------------------------------------------------------------------------- command line


def _format_table(title: str, columns: list[str], rows: dict[str, list[ClassFigures]], fmt: dict) -> str:
    out = [title]
    width = max([8] + [len(r.name) for table in rows.values() for r in table])
    for agent, table in rows.items():
        out.append(f"  {agent}")
        for r in table:
            cells = "  ".join(f"{c} {fmt[c] % r.figures[c]}" for c in columns if c in r.figures)
            out.append(f"    {r.name:{width}s} {r.cases:6d} cases  {cells}")
    return "\n".join(out)


PIPS_HELP = (
    "extra rows by the positions' pip total (both sides' pip counts added; the start is 334) in bands "
    "cut at these strictly ascending edges in 1 .. 750, e.g. 150,200,250,300 gives rows pips<150, "
    "pips 150-199, ..., pips>=300 (bands holding no case are left out): how far into the game the errors lie"
)


def _agents_of(specs: list[str], agent_from_spec, check=None) -> dict:
    """``{spec: agent}`` for the ``--agent`` specs, all made (and passed to ``check``, if given) before
    any is scored, so a bad spec fails at once, not after minutes of scoring the others.

    Raises:
        ValueError: a spec given twice (the table's rows are named by spec; one row would hide the other),
            a spec ``agent_from_spec`` refuses, or an agent ``check`` refuses.
    """
    seen: dict = {}
    for spec in specs:
        if spec in seen:
            raise ValueError(f"--agent {spec} is given twice")
        seen[spec] = agent_from_spec(spec, seed=1)
        if check is not None:
            check(seen[spec])
    return seen


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
    mk.add_argument(
        "--agent",
        default="default",
        help="agent whose self-play (or games against --opponent) gives the cases",
    )
    mk.add_argument(
        "--opponent",
        metavar="SPEC",
        help="take the cases from --agent's games against this agent (both sides' turns: the positions "
        "their match meets) instead of from self-play",
    )
    mk.add_argument(
        "--quotas", default="contact=500,crashed=250,race=350,bearoff=100", help="cases per class"
    )
    mk.add_argument("--seed", type=int, default=0)
    mv = sub.add_parser("moves", help="error rates (mp/move) of agents on a move benchmark")
    mv.add_argument("bench", help="a move benchmark .csv")
    mv.add_argument("--agent", action="append", required=True, help="agent spec (repeat for several)")
    mv.add_argument(
        "--baseline",
        metavar="SPEC",
        help="agent spec: each agent's rows also give the mean per-case change of its loss against this "
        "agent's, with a 95%% interval (negative: fewer mp/move than the baseline)",
    )
    mv.add_argument("--pips", metavar="EDGES", help=PIPS_HELP)
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
    eq.add_argument(
        "--baseline",
        metavar="SPEC",
        help="agent spec: each --agent's rows also give the mean per-position change of its absolute "
        "equity error against this agent's, with a 95%% interval (negative: closer to the labels)",
    )
    eq.add_argument("--pips", metavar="EDGES", help=PIPS_HELP)
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
            opponent = None
            if args.opponent is not None:
                try:
                    opponent = agent_from_spec(args.opponent, seed=args.seed + 3)
                except (ValueError, FileNotFoundError) as exc:
                    return fail(f"--opponent {args.opponent!r}: {exc}")
            boards, dice = sample_stratified_cases(quotas, sampler, args.seed, opponent=opponent)
            t0 = time.perf_counter()
            bench = make_move_benchmark(
                boards,
                dice,
                referee,
                meta={
                    "referee": args.referee,
                    "sampled_by": args.agent,
                    **network_record("sampled_by_network", args.agent),
                    **(
                        {"opponent": args.opponent, **network_record("opponent_network", args.opponent)}
                        if args.opponent is not None
                        else {}
                    ),
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
            edges = parse_pip_edges(args.pips) if args.pips is not None else ()
            bench = read_move_benchmark(args.bench)
            base = agent_from_spec(args.baseline, seed=1) if args.baseline is not None else None
            agents = _agents_of(args.agent, agent_from_spec)  # every spec checked before any scoring
            rows = {}
            base_lost = score_moves(base, bench)[0].lost if base is not None else None
            groups = pip_groups(bench.boards, edges)
            for spec, agent in agents.items():
                result, table = score_moves(agent, bench, pip_edges=edges)
                if base_lost is not None:
                    paired = paired_figures(bench.classes, result.lost - base_lost, 1000.0, groups)
                    table = _with_paired(table, paired, args.baseline)
                rows[spec] = table
            cols = ["mp_per_move", "ci95", "bad"] + (["paired", "paired_ci95"] if base is not None else [])
            if args.json:
                out = {k: [r.to_dict() for r in v] for k, v in rows.items()}
                print(json.dumps(out, indent=1, allow_nan=False))
            else:
                title = f"move error, millipoints per move, referee {bench.meta.get('referee')}, {bench.cases} cases"
                if base is not None:
                    title += f"; paired: change against {args.baseline}, case by case"
                print(_format_table(title, cols, rows, {"mp_per_move": "%6.1f", "ci95": "± %4.1f", "bad": "%4d",
                                                        "paired": "%+5.2f", "paired_ci95": "± %4.2f"}))  # fmt: skip
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
            meta = {"referee": f"gnubg program {args.ply}-ply", "sampled_by": args.agent,
                    **network_record("sampled_by_network", args.agent), "seed": args.seed, "quotas": quotas,
                    "cube": "money, cube 1 centred, no Jacoby, no beavers", "window": list(CUBE_WINDOW)}  # fmt: skip
            write_cube_benchmark(out, ids, classes, analyses, meta)
            print(f"wrote {len(ids)} positions to {out} in {time.perf_counter() - t0:.0f} s")
            return 0
        if args.command == "cubes":
            boards, cubes, actions, meta = read_cube_benchmark(args.bench)
            agents = _agents_of(args.agent, agent_from_spec)
            results = {spec: score_cubes(agent, boards, cubes, actions) for spec, agent in agents.items()}
            if args.json:
                print(
                    json.dumps(
                        {
                            k: {"rows": [r.to_dict() for r in v[0]], "confusion": v[1]}
                            for k, v in results.items()
                        },
                        indent=1,
                        allow_nan=False,
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
        edges = parse_pip_edges(args.pips) if args.pips is not None else ()
        ids, labels = read_labels(args.labels)
        if not ids:
            return fail(f"{args.labels} holds no complete label shard")
        boards = boards_from_position_ids(ids)
        others = [LabelValues(folder) for folder in args.other_labels]  # read and checked before any agent
        shared = [np.array([pid in other for pid in ids]) for other in others]
        for other, both in zip(others, shared, strict=True):
            if not both.any():
                return fail(f"{other.folder} labels none of the positions of {args.labels}")
        if args.baseline is not None and not args.agent:
            return fail("--baseline compares agents: give at least one --agent")
        base = agent_from_spec(args.baseline, seed=1) if args.baseline is not None else None
        if base is not None:
            _check_referee(base)
        agents = _agents_of(args.agent, agent_from_spec, _check_referee)  # pubeval: no equity, refused now
        classes = classify_positions(boards)
        groups = pip_groups(boards, edges)
        base_err = np.abs(equity_errors(base, boards, labels)[1]) if base is not None else None
        rows = {}
        for spec, agent in agents.items():
            probs, err = equity_errors(agent, boards, labels)
            rows[spec] = _equity_table(classes, probs, labels, err, groups)
            if base_err is not None:
                paired = paired_figures(classes, np.abs(err) - base_err, 1.0, groups)
                rows[spec] = _with_paired(rows[spec], paired, args.baseline)
        for other, both in zip(others, shared, strict=True):  # the table names the part a folder scores
            part = "" if args.json or both.all() else f" ({int(both.sum())} of {len(ids)})"
            rows[f"labels {other.folder}{part}"] = score_equities(
                other, boards[both], labels[both], pip_edges=edges
            )
        if args.json:
            out = {k: [r.to_dict() for r in v] for k, v in rows.items()}
            print(json.dumps(out, indent=1, allow_nan=False))
        else:
            title = f"equity error against {args.labels}, {len(ids)} positions (cubeless ppg)"
            cols = ["equity_mae", "ci95", "win_mae", "gammon_mae", "equity_bias"]
            fmt = {"equity_mae": "%.4f", "ci95": "± %.4f", "win_mae": "%.4f", "gammon_mae": "%.4f",
                   "equity_bias": "%+.4f", "paired": "%+.4f", "paired_ci95": "± %.4f"}  # fmt: skip
            if base is not None:
                title += f"; paired: change against {args.baseline}, position by position"
                cols += ["paired", "paired_ci95"]  # label folders' rows have none: not agents
            print(_format_table(title, cols, rows, fmt))
        return 0
    except (ValueError, FileNotFoundError, RuntimeError, OSError) as exc:
        return fail(str(exc))


if __name__ == "__main__":
    sys.exit(main())
