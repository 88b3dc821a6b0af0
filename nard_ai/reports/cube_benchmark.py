"""The cube benchmark: money cube decisions with the gnubg program as the referee (a CSV file and its
JSON sidecar), made, stored, read and scored; its commands are :mod:`nard_ai.reports.benchmark`'s
``make-cubes`` and ``cubes``.

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
  group, the sampling (agent ``sampled_by``; ``sampled_by_network``, the file
  name and SHA-256 of the checkpoint it plays, since ``default`` is another
  network in each generation, absent from files made before the key was
  added; seed, quotas, cube, window), the CSV's SHA-256 and the code version.

:func:`score_cubes` takes an agent's own cube decision
(:func:`nard_ai.cube.cube_decision` at the agent's ply) for each position
and reports the agreement of the four groups with gnubg's, overall and per
gnubg group, with the confusion counts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nard_ai.core.classes import CLASS_NAMES, classify_positions
from nard_ai.model.atomic import atomic_write_bytes
from nard_ai.reports.benchmark_files import EQUITY_DECIMALS, ClassFigures, parse_counts, read_checked
from nard_ai.reports.error_rate import sample_cases
from nard_ai.search.lookahead import agent_value
from nard_ai.training.store import atomic_write_json, code_version, file_sha256

__all__ = [
    "CUBES_FORMAT",
    "CUBE_GROUPS",
    "cube_group",
    "parse_cube_quotas",
    "make_cube_benchmark",
    "write_cube_benchmark",
    "read_cube_benchmark",
    "score_cubes",
]


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
    return parse_counts(spec, CUBE_GROUPS, "GROUP")


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

    path, rows, meta = read_checked(path, "cube benchmark", CUBES_FORMAT, CUBES_FORMAT_VERSION, CUBE_COLUMNS)
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
