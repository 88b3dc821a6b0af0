"""Speed benchmark of the rules core: ``python -m nard_ai.bench [--json]``.

Prints, on a fixed seeded set of positions met in random play:

* the batched legal-play generator's afterstates per second at batch sizes
  1, 256 and 4096 (through the public :func:`~nard_ai.movegen.legal_plays_batch`,
  sorted as the API returns them, and unsorted);
* random full games per second: games in lockstep through the public
  batched API (``legal_plays_batch`` + a uniform pick + :func:`~nard_ai.game.step`)
  at batch sizes 1, 256 and 4096, and the fully compiled
  :func:`~nard_ai.movegen.random_games`;
* GNU Backgammon's move generator (``gnubg_nn.moves``, when installed)
  on the same positions in the same run, and the ratio;
* the time a fresh process takes to import ``nard_ai`` and finish its first
  ``legal_plays`` call (numba's on-disk cache makes this a load, not a compile).

Every figure is the median of ``--repeats`` runs (the machine is noisy).
``--json`` prints one JSON object with the keys ``afterstates_per_s``,
``random_games_per_s``, ``gnubg_afterstates_per_s`` and more.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numba
import numpy as np

from .board import starting_board, swap_sides
from .game import new_games, step
from .movegen import legal_plays_batch, random_games

BATCH_SIZES = (1, 256, 4096)


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


def _median_rate(fn, units: float, repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        rates.append(units / (time.perf_counter() - t))
    return statistics.median(rates)


def afterstates_per_s(boards: np.ndarray, dice: np.ndarray, batch: int, repeats: int, sort: bool) -> float:
    """Afterstates per second of :func:`legal_plays_batch` called on chunks of ``batch`` positions."""
    n = len(boards)
    chunks = [(boards[i : i + batch], dice[i : i + batch]) for i in range(0, n, batch)]
    total = sum(len(legal_plays_batch(b, d, sort=sort)[0]) for b, d in chunks)

    def run() -> None:
        for b, d in chunks:
            legal_plays_batch(b, d, sort=sort)

    return _median_rate(run, total, repeats)


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

    games = batch * -(-n_games // batch)
    return _median_rate(run, games, repeats)


def compiled_games_per_s(n_games: int, seed: int, repeats: int) -> float:
    """Random full games per second of the fully compiled :func:`random_games`."""
    return _median_rate(lambda: random_games(n_games, np.random.default_rng(seed)), n_games, repeats)


def gnubg_afterstates_per_s(boards: np.ndarray, dice: np.ndarray, repeats: int) -> float | None:
    """Afterstates per second of ``gnubg_nn.moves`` on the same positions, or None if not installed."""
    try:
        import gnubg_nn
    except ImportError:
        return None
    # gnubg's two-row board: row 1 is the player on roll, each row in its own numbering.
    rows = []
    for b in boards:
        mine = [max(int(b[p]), 0) for p in range(1, 25)] + [int(b[25])]
        theirs = [max(-int(b[25 - p]), 0) for p in range(1, 25)] + [-int(b[0])]
        rows.append((theirs, mine))
    pairs = [(int(d[0]), int(d[1])) for d in dice]
    total = sum(len(gnubg_nn.moves(r, d1, d2)) for r, (d1, d2) in zip(rows, pairs, strict=True))

    def run() -> None:
        for r, (d1, d2) in zip(rows, pairs, strict=True):
            gnubg_nn.moves(r, d1, d2)

    return _median_rate(run, total, repeats)


def cold_start_seconds(repeats: int) -> float:
    """Median wall time of a fresh process importing nard_ai and finishing one ``legal_plays`` call."""
    code = (
        "import time; t = time.perf_counter(); import nard_ai as na; "
        "na.legal_plays(na.starting_board(), (3, 1)); print(time.perf_counter() - t)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)  # fills the cache
    times = [
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
        for _ in range(repeats)
    ]
    return statistics.median(times)


def run_benchmarks(positions: int = 20_000, games: int = 2_000, repeats: int = 5, seed: int = 0) -> dict:
    """Run every benchmark; returns the figures as a dict (rates per second, medians)."""
    rng = np.random.default_rng(seed)
    boards, dice = random_play_positions(positions, rng)
    # Warm up (compile or load every kernel) before timing.
    legal_plays_batch(boards[:300], dice[:300])
    legal_plays_batch(boards[:300], dice[:300], sort=False)
    random_games(4, np.random.default_rng(seed))
    swap_sides(starting_board())

    result: dict = {
        "machine": {"threads": numba.get_num_threads(), "positions": positions, "repeats": repeats},
        "afterstates_per_s": {},
        "afterstates_per_s_unsorted": {},
        "random_games_per_s": {},
    }
    for batch in BATCH_SIZES:
        result["afterstates_per_s"][str(batch)] = afterstates_per_s(boards, dice, batch, repeats, sort=True)
        result["afterstates_per_s_unsorted"][str(batch)] = afterstates_per_s(boards, dice, batch, repeats, sort=False)
    for batch in BATCH_SIZES:
        n = max(games // 8, 32) if batch == 1 else max(games, batch)
        result["random_games_per_s"][str(batch)] = lockstep_games_per_s(batch, n, seed, max(1, repeats // 2))
    result["random_games_per_s"]["compiled"] = compiled_games_per_s(games * 2, seed, repeats)
    gnubg = gnubg_afterstates_per_s(boards, dice, max(1, repeats // 2))
    result["gnubg_afterstates_per_s"] = gnubg
    if gnubg:
        result["ratio_vs_gnubg"] = {k: v / gnubg for k, v in result["afterstates_per_s"].items()}
    result["cold_start_s"] = cold_start_seconds(repeats)
    return result


def format_table(result: dict) -> str:
    """The figures as a plain-text table."""
    lines = [f"nard_ai rules-core benchmark (medians; threads={result['machine']['threads']})"]
    gnubg = result.get("gnubg_afterstates_per_s")
    lines.append(f"{'batch':>8} {'afterstates/s':>15} {'unsorted':>15} {'vs gnubg':>9} {'random games/s':>15}")
    for batch in BATCH_SIZES:
        k = str(batch)
        a = result["afterstates_per_s"][k]
        u = result["afterstates_per_s_unsorted"][k]
        ratio = f"{a / gnubg:8.1f}x" if gnubg else "     n/a"
        lines.append(f"{batch:>8} {a:>15,.0f} {u:>15,.0f} {ratio:>9} {result['random_games_per_s'][k]:>15,.0f}")
    lines.append(f"compiled random_games(): {result['random_games_per_s']['compiled']:,.0f} games/s")
    lines.append(
        "gnubg_nn.moves: " + (f"{gnubg:,.0f} afterstates/s" if gnubg else "not installed (pip install gnubg-nn)")
    )
    lines.append(f"fresh process to first legal_plays(): {result['cold_start_s']:.3f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nard_ai.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--positions", type=int, default=20_000, help="positions from random play (default 20000)")
    parser.add_argument("--games", type=int, default=2_000, help="random games per lockstep measurement")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure; the median is reported")
    parser.add_argument("--seed", type=int, default=0, help="seed of the positions and games")
    args = parser.parse_args(argv)
    for name in ("positions", "games", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    result = run_benchmarks(args.positions, args.games, args.repeats, args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
