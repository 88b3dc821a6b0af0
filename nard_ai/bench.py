"""Speed benchmarks of the rules core and of move search: ``python -m nard_ai.bench [--json] [--part P]``.

Prints, on a fixed seeded set of positions met in random play:

* the batched legal-play generator's afterstates per second at batch sizes
  1, 256 and 4096 (through the public :func:`~nard_ai.core.movegen.legal_plays_batch`,
  sorted as the API returns them, and unsorted);
* random full games per second at batch sizes 1, 256 and 4096: the fully
  compiled :func:`~nard_ai.core.movegen.random_games` called for ``batch`` games
  at a time (key ``random_games_per_s``), and games in lockstep through the
  public batched API (``legal_plays_batch`` + a uniform pick +
  :func:`~nard_ai.core.game.step`, key ``random_games_per_s_lockstep``);
* GNU Backgammon's move generator (``gnubg_nn.moves``, when installed)
  on the same positions in the same run, and the ratio;
* the time a fresh process takes to import ``nard_ai`` and finish its first
  ``legal_plays`` call (numba's on-disk cache makes this a load, not a compile);
* search speed: milliseconds per move of the default network
  (:func:`nard_ai.agents.load_agent`) choosing a play at 1-ply and 2-ply
  (gnubg's ``normal`` move filters), next to GNU Backgammon's
  ``gnubg.findbestmove`` at the same ply with the same filters (cubeless,
  gnubg's pruning nets on, as in its predefined settings), on the same
  ``--search-positions`` distinct contact positions from random play. Both
  run on one thread (``torch`` and numba are set to one thread for this
  part; gnubg's move search is single-threaded). gnubg runs in a
  subprocess (its module must stay on the main thread) and its position
  cache is emptied before every timed call, so no position is answered from
  an earlier search; our search has no cache.

Every figure is the median of ``--repeats`` runs (the machine is noisy), timed
after one untimed warm-up call at the same sizes (numba compiles or loads a
kernel at its first call; no figure holds that, whatever ``--repeats``); a
search figure is the median over the positions of each position's median
time. ``--json`` prints one JSON object with the keys ``afterstates_per_s``,
``random_games_per_s``, ``gnubg_afterstates_per_s``, ``search_ms_per_move``
and more. ``--part rules``, ``--part search``, ``--part rollout`` or
``--part selfplay`` runs one part only. The rollout part (:func:`run_rollout_benchmark`, key ``rollouts``)
rolls out three positions with the default network at 0-ply, with and
without variance reduction, and the opening at 1-ply: games/s and the 95%
CI of the equity per 1,296 games and per second;
``--network PATH`` rolls out another checkpoint too, the two taking turns in
one process, with its games/s as ratios to the default network's; ``--network``
naming the default network's own file loads it a second time and measures it
as any other, labelled :data:`DEFAULT_AGAIN`: its ratios are the machine's noise
floor (``--part networks`` alike). The self-play part
(:func:`run_selfplay_benchmark`, key ``selfplay``) times ``train.py``'s
training loop on the TD network ``nard-rich.pt`` (``train.py``'s default architecture: ``rich``, 128
hidden units, a race net), against the same with one worker thread (the baseline) and the td198
network.

Long because it holds all five benchmark parts (rules, search against gnubg, rollouts, self-play,
network costs) behind one command line and one table formatter; a package of one module per
part is the way to split it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np

from nard_ai.core.board import starting_board, swap_sides
from nard_ai.core.game import new_games, step
from nard_ai.core.movegen import legal_plays_batch, random_games
from nard_ai.interfaces.cli import OneLineErrorParser
from nard_ai.training.argtypes import int_in

BATCH_SIZES = (1, 256, 4096)
SEARCH_PLIES = (1, 2)
DEFAULT_AGAIN = "the default again: noise floor"
"""The label ``--network`` gives the default network's own file, loaded again and measured beside the
default (the baseline): its figures differ from the baseline's only by the machine's noise."""


def _same_file(path, other) -> bool:
    """Whether ``path`` and ``other`` name one file (``other`` None: never)."""
    return other is not None and Path(path).resolve() == Path(other).resolve()


def random_play_positions(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` positions met in random games (mover's view) and a roll for each.

    Games are played in lockstep with uniformly random legal plays; every
    position on roll is kept. Returns ``(boards (n, 26) int8, dice (n, 2) int8)``.
    """
    boards = []
    lanes = 64
    state = new_games(lanes, rng)
    total = 0
    while total < n:
        running = np.flatnonzero(~state.done)
        if len(running) == 0:
            state = new_games(lanes, rng)
            continue
        boards.append(state.boards[running].copy())
        total += len(running)
        plays, owner = legal_plays_batch(state.boards[running], state.dice[running], sort=False)
        chosen = _pick_uniform(plays, owner, len(running), rng)
        after = state.boards.copy()
        after[running] = chosen
        state = step(state, after, rng)
    all_boards = np.concatenate(boards)[:n]
    dice = rng.integers(1, 7, size=(n, 2), dtype=np.int8)
    return all_boards, dice


def _pick_uniform(plays: np.ndarray, owner: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random row of ``plays`` per owner ``0..n-1``."""
    counts = np.bincount(owner, minlength=n)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return plays[starts + (rng.random(n) * counts).astype(np.int64)]


def _median_rate(fn, units: float, repeats: int, warm_up) -> float:
    """Median of ``units`` per second over ``repeats`` timed calls of ``fn``, after one untimed call of
    ``warm_up`` (numba compiles or loads a kernel at its first call, a cost a figure must not hold, whatever
    ``repeats``; a kernel may have a serial and a parallel version, so ``warm_up`` runs the same sizes)."""
    warm_up()
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        rates.append(units / (time.perf_counter() - t))
    return statistics.median(rates)


def afterstates_per_s(boards: np.ndarray, dice: np.ndarray, batch: int, repeats: int, sort: bool) -> float:
    """Afterstates per second of :func:`legal_plays_batch` called on chunks of ``batch`` positions (fewer
    positions than ``batch`` are repeated to fill one chunk: the figure is always at that batch size)."""
    size = max(len(boards), batch)
    boards, dice = np.resize(boards, (size, 26)), np.resize(dice, (size, 2))
    n = len(boards)
    chunks = [(boards[i : i + batch], dice[i : i + batch]) for i in range(0, n, batch)]
    # every chunk once, untimed: the count is also the warm-up
    total = sum(len(legal_plays_batch(b, d, sort=sort)[0]) for b, d in chunks)

    def run() -> None:
        for b, d in chunks:
            legal_plays_batch(b, d, sort=sort)

    return _median_rate(run, total, repeats, warm_up=lambda: None)


def lockstep_games_per_s(batch: int, n_games: int, seed: int, repeats: int) -> float:
    """Random full games per second, ``batch`` games in lockstep through the public batched API."""

    def run() -> None:
        rng = np.random.default_rng(seed)
        played = 0
        while played < n_games:
            state = new_games(batch, rng)
            while not state.done.all():
                running = np.flatnonzero(~state.done)
                plays, owner = legal_plays_batch(state.boards[running], state.dice[running], sort=False)
                after = state.boards.copy()
                after[running] = _pick_uniform(plays, owner, len(running), rng)
                state = step(state, after, rng)
            played += batch

    def warm_up() -> None:  # one turn of ``batch`` games: every kernel of a run, at the run's sizes
        rng = np.random.default_rng(seed)
        state = new_games(batch, rng)
        plays, owner = legal_plays_batch(state.boards, state.dice, sort=False)
        step(state, _pick_uniform(plays, owner, batch, rng), rng)

    games = batch * -(-n_games // batch)
    return _median_rate(run, games, repeats, warm_up)


def compiled_games_per_s(batch: int, n_games: int, seed: int, repeats: int) -> float:
    """Random full games per second of the fully compiled :func:`random_games`, called for ``batch`` games
    at a time until at least ``n_games`` are played (each call with its own seeded generator)."""
    calls = -(-n_games // batch)

    def run() -> None:
        for c in range(calls):
            random_games(batch, np.random.default_rng([seed, c]))

    def warm_up() -> None:  # one call at the run's batch size (random_games is serial for a small batch)
        random_games(batch, np.random.default_rng([seed, calls]))

    return _median_rate(run, calls * batch, repeats, warm_up)


def gnubg_afterstates_per_s(boards: np.ndarray, dice: np.ndarray, repeats: int) -> float | None:
    """Afterstates per second of ``gnubg_nn.moves`` on the same positions, or None if not installed."""
    try:
        import gnubg_nn
    except ImportError:
        return None
    rows = [_gnubg_rows(b) for b in boards]
    pairs = [(int(d[0]), int(d[1])) for d in dice]
    # every position once, untimed: the count is also the warm-up
    total = sum(len(gnubg_nn.moves(r, d1, d2)) for r, (d1, d2) in zip(rows, pairs, strict=True))

    def run() -> None:
        for r, (d1, d2) in zip(rows, pairs, strict=True):
            gnubg_nn.moves(r, d1, d2)

    return _median_rate(run, total, repeats, warm_up=lambda: None)


def _gnubg_rows(board: np.ndarray) -> tuple[list[int], list[int]]:
    """gnubg's two-row board: ``(opponent row, mover row)``; row 1 is the side on roll, each row in its own numbering."""
    mine = [max(int(board[p]), 0) for p in range(1, 25)] + [int(board[25])]
    theirs = [max(-int(board[25 - p]), 0) for p in range(1, 25)] + [-int(board[0])]
    return theirs, mine


def search_positions(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` distinct contact positions met in random play (mover's view) and a roll for each.

    Returns ``(boards (n, 26) int8, dice (n, 2) int8)``.
    """
    from nard_ai.core.classes import has_contact

    boards, _ = random_play_positions(40 * n, rng)
    boards = boards[has_contact(boards)]
    _, first = np.unique(boards.view(np.dtype((np.void, boards.shape[1]))).ravel(), return_index=True)
    pick = rng.choice(np.sort(first), size=min(n, len(first)), replace=False)
    return boards[pick], rng.integers(1, 7, size=(len(pick), 2), dtype=np.int8)


def search_candidates(evaluator, boards: np.ndarray, dice: np.ndarray) -> list[int]:
    """Plays gnubg's ``normal`` filter passes from the 0-ply ranking to the deeper search, per position.

    0 where it leaves a single play (that play is chosen without lookahead).
    """
    from nard_ai.search.filters import NORMAL, filter_plays
    from nard_ai.search.lookahead import rank_plays

    out = []
    for b, d in zip(boards, dice, strict=True):
        equity = rank_plays(evaluator, b, d).equity
        kept = int(filter_plays(equity, np.zeros(len(equity), dtype=np.int64), NORMAL.ply1[0]).sum())
        out.append(kept if kept > 1 else 0)
    return out


def search_ms_per_move(agent, boards: np.ndarray, dice: np.ndarray, repeats: int) -> list[float]:
    """Milliseconds ``agent.choose_plays`` takes for each position alone (median of ``repeats``), after one
    untimed call on the first position (the first call compiles or loads the kernels)."""
    if len(boards):
        agent.choose_plays(boards[:1], dice[:1])
    out = []
    for b, d in zip(boards, dice, strict=True):
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            agent.choose_plays(b[None], d[None])
            times.append(time.perf_counter() - t)
        out.append(1e3 * statistics.median(times))
    return out


def cube_ms_per_position(agent, boards: np.ndarray) -> list[float]:
    """Milliseconds :func:`nard_ai.cube.cube_decision` takes for each position (money, cube centred) at the agent's
    ply, after one untimed call on the first position (the first call compiles or loads the kernels)."""
    from nard_ai.cube import cube_decision

    if len(boards):
        cube_decision(boards[0], agent=agent)
    out = []
    for b in boards:
        t = time.perf_counter()
        cube_decision(b, agent=agent)
        out.append(1e3 * (time.perf_counter() - t))
    return out


# gnubg's MOVEFILTER_NORMAL (movefilters.inc), as gnubg.findbestmove takes it.
_GNUBG_NORMAL_FILTERS = [
    {"ply": 1, "level": 0, "acceptmoves": 0, "extramoves": 8, "threshold": 0.16},
    {"ply": 2, "level": 0, "acceptmoves": 0, "extramoves": 8, "threshold": 0.16},
    {"ply": 2, "level": 1, "acceptmoves": -1, "extramoves": 0, "threshold": 0.0},
    {"ply": 3, "level": 0, "acceptmoves": 0, "extramoves": 8, "threshold": 0.16},
    {"ply": 3, "level": 1, "acceptmoves": -1, "extramoves": 0, "threshold": 0.0},
    {"ply": 3, "level": 2, "acceptmoves": 0, "extramoves": 2, "threshold": 0.04},
    {"ply": 4, "level": 0, "acceptmoves": 0, "extramoves": 8, "threshold": 0.16},
    {"ply": 4, "level": 1, "acceptmoves": -1, "extramoves": 0, "threshold": 0.0},
    {"ply": 4, "level": 2, "acceptmoves": 0, "extramoves": 2, "threshold": 0.04},
    {"ply": 4, "level": 3, "acceptmoves": -1, "extramoves": 0, "threshold": 0.0},
]

# Runs in a subprocess: gnubg prints to stdout and must stay on its main thread.
# One round: each position once at each ply, the position cache emptied before every timed call.
_GNUBG_SEARCH_DRIVER = r"""
import json, sys, time
import gnubg
job = json.load(sys.stdin)
gnubg.command("set threads 1")
ci = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0)
out = {"candidates": []}
for rows, dice in zip(job["boards"], job["dice"]):
    # plays the 'normal' filter (accept 0, extra 8, threshold 0.16) passes on to the deeper search
    scores = [m["score"] for m in gnubg.findbestmoves(rows, ci, gnubg.evalcontext(0, 0, 1, 1, 0.0), tuple(dice))]
    kept = [x for x in scores[:8] if x >= scores[0] - 0.16] if scores else []
    out["candidates"].append(len(kept) if len(kept) > 1 else 0)
for ply in job["plies"]:
    ec = gnubg.evalcontext(0, ply, 1, 1, 0.0)  # cubeless, deterministic, pruning nets on, no noise
    times = []
    for rows, dice in zip(job["boards"], job["dice"]):
        gnubg.command("set cache 0")  # empty the position cache: nothing answered from earlier searches
        gnubg.command("set cache %d" % job["cache"])
        t = time.perf_counter()
        gnubg.findbestmove(rows, ci, ec, tuple(dice), job["filters"])
        times.append(1e3 * (time.perf_counter() - t))
    out[str(ply)] = times
print("RESULT " + json.dumps(out), flush=True)
"""

GNUBG_CACHE_ENTRIES = 1 << 19  # gnubg's default position cache (CACHE_SIZE_DEFAULT = 19 bits)


def gnubg_search_round(
    boards: np.ndarray, dice: np.ndarray, plies: tuple[int, ...], timeout: float = 600.0
) -> dict[str, list] | None:
    """One timing round of ``gnubg.findbestmove`` in a subprocess, or None without a working gnubg module.

    Cubeless, gnubg's ``normal`` move filters, pruning nets on, the position
    cache emptied before each timed call. Returns ``{str(ply): [ms per
    position], "candidates": [plays the filter passes on, per position]}``.
    """
    import importlib.util

    if importlib.util.find_spec("gnubg") is None:
        return None
    job = {
        "boards": [_gnubg_rows(b) for b in boards],
        "dice": [[int(x) for x in d] for d in dice],
        "plies": list(plies),
        "filters": _GNUBG_NORMAL_FILTERS,
        "cache": GNUBG_CACHE_ENTRIES,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", _GNUBG_SEARCH_DRIVER],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        return None
    return json.loads(lines[-1][len("RESULT ") :])


def run_search_benchmark(positions: int = 50, repeats: int = 3, seed: int = 0) -> dict:
    """ms per move at 1- and 2-ply, ours (the default network, one thread) and gnubg's, on the same positions.

    ``repeats`` rounds, ours and gnubg's taking turns so both meet the same
    machine load; each position's figure is its median over the rounds, and
    the reported figure the median over the positions.

    Returns ``{"positions": n, "repeats": r, "nard_ai": {ply: ms}, "gnubg":
    {ply: ms} or None, "mean_candidates": ..., "ms_per_candidate": ...,
    "per_position": ...}`` (ply keys are strings).
    """
    import torch

    from nard_ai.agents import load_agent

    boards, dice = search_positions(positions, np.random.default_rng([seed, 1]))
    agents = {str(ply): load_agent(ply=ply) for ply in SEARCH_PLIES}
    evaluator = agents[str(SEARCH_PLIES[0])].evaluator
    ours_rounds: dict[str, list[list[float]]] = {k: [] for k in agents}
    cube_rounds: dict[str, list[list[float]]] = {k: [] for k in agents}
    theirs_rounds: dict[str, list[list[float]]] | None = {k: [] for k in agents}
    theirs_candidates = None
    threads = (torch.get_num_threads(), numba.get_num_threads())
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    try:
        for agent in agents.values():
            agent.choose_plays(boards[:3], dice[:3])  # compile or load every kernel first
        ours_candidates = search_candidates(evaluator, boards, dice)
        for _ in range(repeats):
            for k, agent in agents.items():
                ours_rounds[k].append(search_ms_per_move(agent, boards, dice, 1))
                cube_rounds[k].append(cube_ms_per_position(agent, boards))
            if theirs_rounds is not None:
                got = gnubg_search_round(boards, dice, SEARCH_PLIES)
                if got is None:
                    theirs_rounds = None
                    continue
                theirs_candidates = got.pop("candidates")
                for k in theirs_rounds:
                    theirs_rounds[k].append(got[k])
    finally:
        torch.set_num_threads(threads[0])
        numba.set_num_threads(threads[1])

    def per_position(rounds: dict[str, list[list[float]]]) -> dict[str, list[float]]:
        return {k: [statistics.median(t) for t in zip(*v, strict=True)] for k, v in rounds.items()}

    def per_candidate(times: dict[str, list[float]], candidates: list[int]) -> dict[str, float | None]:
        total = sum(candidates)
        return {k: (sum(v) / total if total else None) for k, v in times.items()}

    ours = per_position(ours_rounds)
    theirs = None if theirs_rounds is None else per_position(theirs_rounds)
    return {
        "positions": len(boards),
        "repeats": repeats,
        "nard_ai": {k: statistics.median(v) for k, v in ours.items()},
        "cube_decision_ms": {k: statistics.median(v) for k, v in per_position(cube_rounds).items()},
        "gnubg": None if theirs is None else {k: statistics.median(v) for k, v in theirs.items()},
        "mean_candidates": {
            "nard_ai": statistics.mean(ours_candidates),
            "gnubg": None if theirs is None else statistics.mean(theirs_candidates),
        },
        "ms_per_candidate": {
            "nard_ai": per_candidate(ours, ours_candidates),
            "gnubg": None if theirs is None else per_candidate(theirs, theirs_candidates),
        },
        "per_position": {
            "nard_ai": ours,
            "gnubg": theirs,
            "candidates": {"nard_ai": ours_candidates, "gnubg": theirs_candidates},
        },
    }


def cold_start_seconds(repeats: int) -> tuple[float, bool]:
    """Median wall time of a fresh process importing nard_ai and finishing one ``legal_plays`` call.

    Returns:
        ``(seconds, scipy_loaded)``: ``scipy_loaded`` says whether that
        process imported SciPy. nard_ai does not use or require it, but when
        it is installed (other packages pull it in, e.g. ``open-spiel``)
        numba imports ``scipy.linalg`` the first time it loads any compiled
        function (``numba.np.arraymath`` checks for BLAS), about 0.2 s here.
    """
    code = (
        "import time; t = time.perf_counter(); import nard_ai as na; "
        "na.legal_plays(na.starting_board(), (3, 1)); import sys; "
        "print(time.perf_counter() - t, 'scipy' in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)  # fills the cache
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        ).stdout.split()
        for _ in range(repeats)
    ]
    return statistics.median(float(r[0]) for r in runs), runs[-1][1] == "True"


PARTS = ("all", "rules", "search", "rollout", "selfplay", "networks")
"""The benchmark parts ``--part`` accepts."""


def run_benchmarks(
    positions: int = 20_000,
    games: int = 2_000,
    repeats: int = 5,
    seed: int = 0,
    *,
    part: str = "all",
    search_positions: int = 50,
    networks: tuple[str, ...] = (),
) -> dict:
    """Run the benchmarks of ``part`` (one of :data:`PARTS`).

    ``networks`` are the checkpoints ``--part networks`` compares with the default network (none:
    the other shipped ones), and those ``--part rollout`` rolls out beside it
    (:func:`run_rollout_benchmark`'s ``compare``); the other parts ignore them.

    Returns the figures as a dict.
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    result: dict = {
        "machine": {"threads": numba.get_num_threads(), "positions": positions, "repeats": repeats}
    }
    if part in ("all", "rules"):
        result.update(_rules_benchmarks(positions, games, repeats, seed))
    if part in ("all", "search"):
        try:
            result["search_ms_per_move"] = run_search_benchmark(search_positions, min(repeats, 3), seed)
        except (ImportError, FileNotFoundError) as exc:  # no torch, or no shipped checkpoint
            result["search_ms_per_move"] = None
            result["search_skipped"] = str(exc)
    if part in ("all", "rollout"):
        try:
            compare = networks if part == "rollout" else ()
            result["rollouts"] = run_rollout_benchmark(repeats=min(repeats, 3), seed=seed, compare=compare)
        except (ImportError, FileNotFoundError) as exc:  # no torch, or no shipped checkpoint
            result["rollouts"] = None
            result["rollouts_skipped"] = str(exc)
    if part in ("all", "selfplay"):
        try:
            result["selfplay"] = run_selfplay_benchmark(repeats=min(repeats, 3), seed=seed)
        except (ImportError, FileNotFoundError) as exc:  # no torch, or no shipped checkpoint
            result["selfplay"] = None
            result["selfplay_skipped"] = str(exc)
    if part == "networks":  # not in "all": it compares checkpoints, given or the other shipped ones
        result["networks"] = run_network_benchmark(networks, min(repeats, 3), seed, search_positions)
    return result


def _rules_benchmarks(positions: int, games: int, repeats: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    boards, dice = random_play_positions(positions, rng)
    # Warm up (compile or load every kernel) before timing.
    legal_plays_batch(boards[:300], dice[:300])
    legal_plays_batch(boards[:300], dice[:300], sort=False)
    random_games(4, np.random.default_rng(seed))
    swap_sides(starting_board())

    result: dict = {
        "afterstates_per_s": {},
        "afterstates_per_s_unsorted": {},
        "random_games_per_s": {},
        "random_games_per_s_lockstep": {},
    }
    for batch in BATCH_SIZES:
        result["afterstates_per_s"][str(batch)] = afterstates_per_s(boards, dice, batch, repeats, sort=True)
        result["afterstates_per_s_unsorted"][str(batch)] = afterstates_per_s(
            boards, dice, batch, repeats, sort=False
        )
    for batch in BATCH_SIZES:
        n = max(games // 4, 64) if batch == 1 else max(2 * games, 2 * batch)
        result["random_games_per_s"][str(batch)] = compiled_games_per_s(batch, n, seed, repeats)
    for batch in BATCH_SIZES:
        n = max(games // 8, 32) if batch == 1 else max(games, batch)
        result["random_games_per_s_lockstep"][str(batch)] = lockstep_games_per_s(
            batch, n, seed, max(1, repeats // 2)
        )
    gnubg = gnubg_afterstates_per_s(boards, dice, max(1, repeats // 2))
    result["gnubg_afterstates_per_s"] = gnubg
    if gnubg:
        result["ratio_vs_gnubg"] = {k: v / gnubg for k, v in result["afterstates_per_s"].items()}
    result["cold_start_s"], result["cold_start_scipy_loaded"] = cold_start_seconds(max(repeats, 5))
    return result


def format_table(result: dict) -> str:
    """The figures as a plain-text table."""
    lines = []
    if "afterstates_per_s" in result:
        lines.append(f"nard_ai rules-core benchmark (medians; threads={result['machine']['threads']})")
        gnubg = result.get("gnubg_afterstates_per_s")
        lines.append(
            f"{'batch':>8} {'afterstates/s':>15} {'unsorted':>15} {'vs gnubg':>9}"
            f" {'random games/s':>15} {'lockstep API':>13}"
        )
        for batch in BATCH_SIZES:
            k = str(batch)
            a = result["afterstates_per_s"][k]
            u = result["afterstates_per_s_unsorted"][k]
            ratio = f"{a / gnubg:8.1f}x" if gnubg else "     n/a"
            lines.append(
                f"{batch:>8} {a:>15,.0f} {u:>15,.0f} {ratio:>9} {result['random_games_per_s'][k]:>15,.0f}"
                f" {result['random_games_per_s_lockstep'][k]:>13,.0f}"
            )
        lines.append(
            "random games/s: random_games(batch) per call, fully compiled; lockstep API:"
            " legal_plays_batch + a uniform pick + step"
        )
        lines.append(
            "gnubg_nn.moves: "
            + (f"{gnubg:,.0f} afterstates/s" if gnubg else "not installed (pip install gnubg-nn)")
        )
        scipy_note = (
            " (numba imported SciPy, installed here but not needed by nard_ai: about 0.2 s of it)"
            if result.get("cold_start_scipy_loaded")
            else ""
        )
        lines.append(f"fresh process to first legal_plays(): {result['cold_start_s']:.3f} s{scipy_note}")
    search = result.get("search_ms_per_move")
    if "search_skipped" in result:
        lines.append(f"search benchmark skipped: {result['search_skipped']}")
    if search:
        lines.append(
            f"move choice, ms per move (median of {search['positions']} contact positions, one thread, "
            "gnubg 'normal' filters, cubeless)"
        )
        lines.append(f"{'ply':>8} {'nard_ai':>10} {'gnubg':>10} {'ratio':>8}")
        for ply in SEARCH_PLIES:
            k = str(ply)
            ours = search["nard_ai"][k]
            theirs = (search["gnubg"] or {}).get(k)
            right = f"{theirs:>10.2f} {ours / theirs:>7.2f}x" if theirs else f"{'n/a':>10} {'':>8}"
            lines.append(f"{ply:>8} {ours:>10.2f} {right}")
        cands, per = search["mean_candidates"], search["ms_per_candidate"]
        if search["gnubg"] is not None and cands["gnubg"] and cands["nard_ai"]:
            lines.append(
                f"plays valued deeper per move (mean): nard_ai {cands['nard_ai']:.2f}, gnubg {cands['gnubg']:.2f} "
                "(the networks differ, so their 0-ply rankings and filters pass different plays)"
            )
            lines.append(
                "ms per play valued deeper: "
                + ", ".join(
                    f"{ply}-ply nard_ai {per['nard_ai'][str(ply)]:.2f} / gnubg {per['gnubg'][str(ply)]:.2f}"
                    for ply in SEARCH_PLIES
                )
            )
        if search["gnubg"] is None:
            lines.append("gnubg.findbestmove: not available (pip install gnubg)")
        lines.append(
            "cube decision (money, cube centred), ms per position: "
            + ", ".join(f"{ply}-ply {search['cube_decision_ms'][str(ply)]:.2f}" for ply in SEARCH_PLIES)
        )
    if "rollouts_skipped" in result:
        lines.append(f"rollout benchmark skipped: {result['rollouts_skipped']}")
    if result.get("rollouts"):
        lines += format_rollout_table(result["rollouts"])
    if "selfplay_skipped" in result:
        lines.append(f"self-play benchmark skipped: {result['selfplay_skipped']}")
    if result.get("selfplay"):
        sp = result["selfplay"]
        lines.append(
            f"self-play training (train.py's loop and defaults: {sp['workers']} workers; rounds of "
            f"{sp['round_games']:,} games; torch threads {sp['threads']} with one worker), games/s (medians):"
        )
        base = sp["networks"][sp["baseline"]]
        for name, rate in sp["networks"].items():
            lines.append(f"{name:>40} {rate:>9,.0f}   {rate / base:.2f}x the baseline")
    if result.get("networks"):
        nets = result["networks"]
        lines.append(
            f"what a network costs (one thread; medians; ratios to {nets['baseline']}): 0-ply evaluation at "
            "batch 30 (boards/s), 1-ply move choice (ms/move), self-play (games/s, one worker)"
        )
        base = nets["figures"][nets["baseline"]]
        for name, f in nets["figures"].items():
            lines.append(
                f"{name:>40} {f['eval_boards_per_s']:>10,.0f} ({f['eval_boards_per_s'] / base['eval_boards_per_s']:.2f}x)"
                f" {f['ply1_ms']:>7.2f} ms ({f['ply1_ms'] / base['ply1_ms']:.2f}x)"
                f" {f['selfplay_games_per_s']:>7,.0f} ({f['selfplay_games_per_s'] / base['selfplay_games_per_s']:.2f}x)"
            )
    return "\n".join(lines)


def run_network_benchmark(paths=(), repeats: int = 3, seed: int = 0, positions: int = 50) -> dict:
    """The cost of networks in search and self-play, against the default network in the same process.

    For the default network and each checkpoint in ``paths`` (default: the other shipped ones),
    taking turns ``repeats`` times, on one torch and numba thread: 0-ply evaluation of batches of
    30 boards (about one position's plays), 1-ply move choice on :func:`search_positions`
    (ms per move), and a self-play round of 500 games with one worker. Each figure is a median.
    A path of the default network's own file is loaded again and measured as another network,
    named ``"PATH, the default again: noise floor"`` (:data:`DEFAULT_AGAIN`): its ratios to the
    baseline are the machine's noise floor.

    Returns:
        ``{"baseline": name, "figures": {name: {"eval_boards_per_s", "ply1_ms",
        "selfplay_games_per_s", "hidden", "race_hidden", "encoder"}}}`` (``race_hidden``: the race net's
        hidden layers, ``None`` without one); a name is the checkpoint's path as given, the baseline's
        the default network's path.
    """
    import copy

    import torch

    from nard_ai.agents import load_agent
    from nard_ai.eval.evaluator import NetworkEvaluator
    from nard_ai.model.learn import Learner
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.play.selfplay import play_round

    shipped = default_checkpoint_path()
    paths = paths or [p for p in sorted(shipped.parent.glob("nard-*.pt")) if p != shipped]
    files = {str(shipped): shipped}  # name -> checkpoint file, the baseline first
    for p in paths:
        files[f"{p}, {DEFAULT_AGAIN}" if _same_file(p, shipped) else str(p)] = Path(p)
    boards, dice = search_positions(positions, np.random.default_rng([seed, 1]))
    rows = random_play_positions(3000, np.random.default_rng([seed, 2]))[0][:3000]
    nets = {name: load_checkpoint(path).network for name, path in files.items()}  # each loaded anew
    runs: dict[str, dict[str, list[float]]] = {n: {"eval": [], "ply1": [], "selfplay": []} for n in nets}
    threads = (torch.get_num_threads(), numba.get_num_threads())
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    try:
        for k in range(repeats + 1):
            for name, net in nets.items():
                ev = NetworkEvaluator(net)
                agent = load_agent(files[name], ply=1)
                t = time.perf_counter()
                for s in range(0, len(rows) - 29, 30):
                    ev.evaluate(rows[s : s + 30])
                rate = (len(rows) // 30 * 30) / (time.perf_counter() - t)
                ply1 = statistics.median(search_ms_per_move(agent, boards, dice, 1))
                stats = play_round(Learner(copy.deepcopy(net), lr=1e-5), 500, np.random.default_rng([seed, k]),
                                   pool=256, workers=1, lam=0.7, batch_size=512)  # fmt: skip
                if k:  # round 0 compiles and loads
                    runs[name]["eval"].append(rate)
                    runs[name]["ply1"].append(ply1)
                    runs[name]["selfplay"].append(stats.games / stats.seconds)
    finally:
        torch.set_num_threads(threads[0])
        numba.set_num_threads(threads[1])
    figures = {
        name: {
            "eval_boards_per_s": statistics.median(r["eval"]),
            "ply1_ms": statistics.median(r["ply1"]),
            "selfplay_games_per_s": statistics.median(r["selfplay"]),
            "hidden": list(nets[name].config.hidden),
            "race_hidden": list(nets[name].config.net_hidden("race_mlp"))
            if nets[name].race_mlp is not None
            else None,
            "encoder": nets[name].encoder.key,
        }
        for name, r in runs.items()
    }
    return {"baseline": str(shipped), "figures": figures}


# --------------------------------------------------------------------------- self-play


SELFPLAY_POOL = 1024
SELFPLAY_WORKERS = 2
"""``train.py``'s defaults for the self-play benchmark (``Args.pool``, ``Args.workers``)."""


def run_selfplay_benchmark(repeats: int = 3, seed: int = 0, round_games: int = 5000) -> dict:
    """Self-play training speed: :func:`nard_ai.play.selfplay.play_round` with ``train.py``'s defaults.

    0-ply move choice and TD(lambda) updates (pool, workers, batch size and
    lambda of :class:`train.Args`, Adam at a small learning rate), on a copy of
    the TD network ``nard-rich.pt`` (``train.py``'s default architecture; the default network until
    2026-12-04); in the same process, as baselines, the same network
    with one worker (everything on the calling thread, torch and numba on
    their own thread pools) and ``checkpoints/nard-td198.pt`` (TD-Gammon's 198
    inputs, 80 hidden units) with the defaults. Rounds of ``round_games``
    games (``train.py``'s ``--checkpoint-every``: every round ends with its
    pool drained) take turns ``repeats`` times after one warm-up round each;
    each figure is the median games/s.

    Returns:
        ``{"round_games": n, "threads": torch threads, "workers": default workers,
        "baseline": name, "networks": {name: games/s}}``.
    """
    import copy

    import torch

    from nard_ai.model.learn import Learner
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.play.selfplay import play_round

    td = load_checkpoint(default_checkpoint_path().with_name("nard-rich.pt")).network
    runs = {
        "nard-rich.pt": (td, SELFPLAY_WORKERS),
        "nard-rich.pt, one worker (baseline)": (td, 1),
    }
    baseline = default_checkpoint_path().with_name("nard-td198.pt")
    if baseline.exists():
        runs["td198 network"] = (load_checkpoint(baseline).network, SELFPLAY_WORKERS)
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for k in range(repeats + 1):
        for name, (network, workers) in runs.items():
            games = min(500, round_games) if k == 0 else round_games
            stats = play_round(
                Learner(copy.deepcopy(network), lr=1e-5),
                games,
                np.random.default_rng([seed, k]),
                pool=SELFPLAY_POOL,
                workers=workers,
                lam=0.7,
                batch_size=512,
            )
            if k:
                rates[name].append(stats.games / stats.seconds)
    networks = {name: statistics.median(r) for name, r in rates.items()}
    return {
        "round_games": round_games,
        "threads": torch.get_num_threads(),
        "workers": SELFPLAY_WORKERS,
        "baseline": "nard-rich.pt, one worker (baseline)",
        "networks": networks,
    }


# --------------------------------------------------------------------------- rollouts

ROLLOUT_GAMES = 1296  # a full stratification of the first two rolls


def _rollout_positions() -> dict[str, np.ndarray]:
    from nard_ai.core.board import pos

    return {
        "opening": starting_board(),
        # a race of about 70 pips each, and a bear-off with 13 checkers each
        "race": pos(me={6: 3, 5: 3, 4: 3, 3: 2, 8: 2, 10: 2}, opp={6: 3, 5: 3, 4: 2, 3: 2, 9: 2, 11: 3}),
        "bearoff": pos(me={6: 2, 5: 2, 4: 3, 3: 2, 2: 2, 1: 2}, opp={6: 2, 5: 3, 4: 2, 3: 2, 2: 2, 1: 2}),
    }


def run_rollout_benchmark(
    games: int = ROLLOUT_GAMES,
    vr_games: int = 216,
    repeats: int = 3,
    seed: int = 0,
    ply1_games: int = 36,
    checkpoint: str | None = None,
    compare: tuple[str, ...] = (),
) -> dict:
    """Rollouts of the default network (:func:`nard_ai.play.rollout.rollout`): games/s and the CI they buy.

    For each position of :func:`_rollout_positions`, 0-ply rollouts without
    variance reduction (``games`` games) and with it (``vr_games`` games)
    take turns ``repeats`` times, on the process's threads (``rollout``'s
    default: one per core); for the opening a plain rollout on one thread
    takes its turn too. Each figure is a median. ``ci_1296`` is the 95% half-width of
    the equity scaled to 1,296 games (``ci * sqrt(n / 1296)``), ``ci_per_s``
    the half-width one second of rolling out buys (``ci * sqrt(n / (games/s))``):
    lower is better, so it says whether variance reduction pays for its
    cost. The opening is also rolled out at 1-ply (``ply1_games`` games each
    way, once) when ``ply1_games > 0``. ``checkpoint`` names another network
    than the default one.

    ``compare`` names further checkpoints rolled out the same way in the same
    process, each round of ``repeats`` giving every network its turn (``checkpoint``'s
    first) on the same seeds, so that a machine that drifts between rounds
    (this one does, by up to ±30%) moves all of them alike; their figures go
    under ``"compared"``, keyed by path, and :func:`format_rollout_table` gives
    their games/s as ratios to the first network's. A ``compare`` path of the first network's own
    file is loaded again and rolled out as another network, its ``"network"`` name followed by
    ``", the default again: noise floor"`` (:data:`DEFAULT_AGAIN`; ``"the baseline again"`` when
    ``checkpoint`` names another network than the default): its ratios are the machine's noise floor.

    Returns:
        ``{"network": agent name, "threads": [torch, numba], "positions": {name: {"plain": F,
        "vr": F}}, "one_thread": {"plain": F}, "ply1": {"plain": F, "vr": F} or None}``, each ``F`` a dict with ``games``, ``games_per_s``,
        ``equity``, ``ci``, ``ci_1296``, ``ci_per_s`` and ``mean_plies``; with ``compare``, also
        ``"compared": {path: the same dict for that network}``.

    Raises:
        FileNotFoundError: ``checkpoint`` or a ``compare`` path is not a file.
    """
    import torch

    from nard_ai.agents import load_agent
    from nard_ai.play.rollout import rollout

    try:
        from nard_ai.model.network import default_checkpoint_path

        default = default_checkpoint_path()
    except ImportError:  # no torch: load_agent below says so
        default = None
    baseline_file = default if checkpoint is None else checkpoint
    again = DEFAULT_AGAIN if _same_file(baseline_file, default) else "the baseline again: noise floor"
    specs = [checkpoint, *compare]
    agents = [load_agent(c) for c in specs]  # each loaded anew: the first network's file again too
    for agent in agents:  # load every kernel first: each kind of rollout timed below, once, untimed
        for luck, threads in ((True, None), (False, None), (False, 1)):
            rollout(starting_board(), 36, agent=agent, variance_reduction=luck, threads=threads)

    def summary(runs) -> dict:
        rate = statistics.median(r.games_per_s for r in runs)
        ci = statistics.median(r.equity_ci for r in runs)
        n = runs[0].games
        return {
            "games": n,
            "games_per_s": rate,
            "equity": statistics.median(r.equity for r in runs),
            "ci": ci,
            "ci_1296": ci * (n / ROLLOUT_GAMES) ** 0.5,
            "ci_per_s": ci * (n / rate) ** 0.5,
            "mean_plies": statistics.median(r.mean_plies for r in runs),
        }

    boards = _rollout_positions()
    runs = [{name: ([], []) for name in boards} for _ in agents]
    one_thread: list[list] = [[] for _ in agents]
    for k in range(repeats):
        for name, board in boards.items():
            for i, agent in enumerate(agents):  # the networks take turns, position by position
                plain, lucky = runs[i][name]
                plain.append(rollout(board, games, agent=agent, seed=seed + k, variance_reduction=False))
                lucky.append(rollout(board, vr_games, agent=agent, seed=seed + k, variance_reduction=True))
                if name == "opening":
                    one_thread[i].append(
                        rollout(board, games, agent=agent, seed=seed + k, variance_reduction=False, threads=1)
                    )
    results = []
    for i, agent in enumerate(agents):
        result: dict = {
            "network": f"{agent.name}, {again}" if i and _same_file(specs[i], baseline_file) else agent.name,
            "threads": [torch.get_num_threads(), numba.get_num_threads()],
            "positions": {
                name: {"plain": summary(plain), "vr": summary(lucky)}
                for name, (plain, lucky) in runs[i].items()
            },
            "one_thread": {"plain": summary(one_thread[i])},
            "ply1": None,
        }
        if ply1_games > 0:
            agent1 = load_agent(specs[i], ply=1)
            board = starting_board()
            for luck in (False, True):  # one untimed game each way: the 1-ply kernels load first
                rollout(board, 1, agent=agent1, seed=seed, variance_reduction=luck)
            result["ply1"] = {
                "plain": summary(
                    [rollout(board, ply1_games, agent=agent1, seed=seed, variance_reduction=False)]
                ),
                "vr": summary([rollout(board, ply1_games, agent=agent1, seed=seed, variance_reduction=True)]),
            }
        results.append(result)
    first = results[0]
    if compare:
        first["compared"] = dict(zip(compare, results[1:], strict=True))
    return first


def format_rollout_table(rollouts: dict, baseline: dict | None = None) -> list[str]:
    """The rollout figures of :func:`run_rollout_benchmark` as lines of a plain-text table.

    With ``baseline`` (another network's figures from the same run), a last column gives each row's
    games/s as a ratio to the baseline's same row. The networks under ``rollouts["compared"]``
    follow, each in its own table with that column against ``rollouts``.
    """
    ratio_head = f" {'x ' + str(baseline.get('network', 'baseline')):>16}" if baseline else ""
    lines = [
        f"rollouts of {rollouts.get('network', 'the default network')} (medians): games/s, "
        "equity 95% CI per 1,296 games and per second",
        f"{'position':>10} {'ply':>4} {'luck adj.':>10} {'threads':>8} {'games/s':>9} {'CI/1296 g':>10} "
        f"{'CI/1 s':>8} {'plies':>6}{ratio_head}",
    ]

    def rows_of(r: dict) -> list[tuple]:
        threads = "/".join(str(t) for t in r["threads"])
        rows = []
        for name, both in r["positions"].items():
            rows += [(name, 0, "no", threads, both["plain"]), (name, 0, "yes", threads, both["vr"])]
        rows.append(("opening", 0, "no", "1/1", r["one_thread"]["plain"]))
        if r.get("ply1"):
            rows += [
                ("opening", 1, "no", threads, r["ply1"]["plain"]),
                ("opening", 1, "yes", threads, r["ply1"]["vr"]),
            ]
        return rows

    base_rows = rows_of(baseline) if baseline else None
    for j, (name, ply, luck, threads, f) in enumerate(rows_of(rollouts)):
        ratio = ""
        if base_rows is not None and j < len(base_rows):
            ratio = f" {f['games_per_s'] / base_rows[j][4]['games_per_s']:>15.2f}x"
        lines.append(
            f"{name:>10} {ply:>4} {luck:>10} {threads:>8} {f['games_per_s']:>9,.1f} {f['ci_1296']:>10.4f} "
            f"{f['ci_per_s']:>8.4f} {f['mean_plies']:>6.1f}{ratio}"
        )
    lines.append("threads: torch/numba; rollout()'s default is the process's (one per core)")
    for other in (rollouts.get("compared") or {}).values():
        lines += format_rollout_table(other, baseline=rollouts)
    return lines


MAX_SEED = 2**63 - 1
"""The largest ``--seed``: seeds of numpy's generators and of rollouts (``seed + round`` < 2**64)."""


def _check_networks(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (``parser.error``: one line, status 2) a ``--network`` that is not a readable checkpoint or one
    given twice, before any benchmark starts. The default network's own file is taken: it is loaded again and
    measured beside the baseline, labelled :data:`DEFAULT_AGAIN` (the machine's noise floor)."""
    if not args.network:
        return
    if args.part not in ("networks", "rollout"):
        parser.error(f"--network needs --part networks or --part rollout, not --part {args.part}")
    try:
        from nard_ai.model.network import load_checkpoint  # torch
    except ImportError:  # no torch: the part says it is skipped
        load_checkpoint = None
    seen: set[Path] = set()
    for path in args.network:
        if not Path(path).is_file():
            parser.error(f"--network {path}: no such checkpoint file")
        if Path(path).resolve() in seen:
            parser.error(f"--network {path}: given twice")
        seen.add(Path(path).resolve())
    for path in args.network if load_checkpoint else ():
        try:
            load_checkpoint(path)
        except (ValueError, OSError) as exc:  # its message names the file
            parser.error(f"--network: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineErrorParser(prog="python -m nard_ai.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    for flag, least, most, default, text in (
        ("--positions", 1, 1_000_000, 20_000, "positions from random play, 1 .. 1,000,000"),
        (
            "--games", 1, 1_000_000, 2_000,
            "random games per lockstep measurement (twice that compiled), 1 .. 1,000,000",
        ),
        (
            "--repeats", 1, 100, 5,
            "runs per figure, 1 .. 100, each after an untimed warm-up; the median is reported",
        ),
        ("--seed", 0, MAX_SEED, 0, "seed of the positions and games, 0 .. 2**63 - 1"),
        (
            "--search-positions", 1, 10_000, 50,
            "contact positions of the search and networks benchmarks, 1 .. 10,000",
        ),
    ):  # fmt: skip
        parser.add_argument(
            flag, type=int_in(least, most), default=default, help=f"{text} (default {default})"
        )
    parser.add_argument("--part", choices=PARTS, default="all", help="which benchmarks to run (default all)")
    parser.add_argument(
        "--network",
        action="append",
        default=[],
        metavar="PATH",
        help="--part networks: a checkpoint to compare with the default network (repeatable; default: the "
        "other shipped networks); --part rollout: a checkpoint rolled out too, taking turns with the default "
        "network in this process, its games/s also as ratios to the default's (repeatable). The default "
        f"network's own file is loaded again and measured as '{DEFAULT_AGAIN}'",
    )
    args = parser.parse_args(argv)
    _check_networks(parser, args)
    result = run_benchmarks(
        args.positions,
        args.games,
        args.repeats,
        args.seed,
        part=args.part,
        search_positions=args.search_positions,
        networks=tuple(args.network),
    )
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
