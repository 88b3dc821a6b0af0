"""Throughput of the sharded workloads in this process and on a local Ray cluster (not run by pytest).

For each workload (TD self-play, a rollout of the opening, a cubeless match, a labelling run)
it measures, in the same process and with the same shards:

* ``plain``: the workload's own local path (no executor; the baseline, on the
  process's threads);
* ``local``: :class:`~nard_ai.distributed.LocalExecutor` (the shards one after
  another on 1 thread, the numbers a Ray run gives);
* ``ray1`` / ``ray2``: :class:`~nard_ai.distributed.RayExecutor` on a local Ray
  cluster of 1 and 2 CPUs (started here, one after the other; a warm-up run
  first, so worker start-up is not counted);

TD self-play's shards are its 2 pool shards, played by threads (``plain`` and
``local``) or by 2 Ray actors (``ray2``; 2 actors of 1 CPU do not fit the
1-CPU cluster, so ``ray1`` is n/a); and Ray's overhead per shard: a no-op shard (the agent as the shared object)
over many tasks on the 1-CPU cluster. Each figure is the median of
``--repeats`` runs; ratios are against ``plain`` of the same run.

    python benchmarks/ray_bench.py [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import nard_ai  # noqa: F401  (before torch: OpenMP's wait policy)

ROOT = Path(__file__).resolve().parent.parent


def _noop(shared, task: int) -> int:
    return task


def _median_time(fn, repeats: int) -> float:
    """Median seconds of ``fn()`` over ``repeats`` runs; NaN if it says it cannot run (returns False)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        if fn() is False:
            return math.nan
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _workloads(tmp: Path):
    """name -> (units, unit name, shards, run(executor or None))."""
    from nard_ai.agents import agent_from_spec
    from nard_ai.core.board import starting_board
    from nard_ai.eval.evaluator import NetworkEvaluator
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.play.arena import play_match
    from nard_ai.play.rollout import rollout
    from nard_ai.search.loading import default_agent
    from nard_ai.training.labels import make_plan, run_labels
    from nard_ai.training.positions import generate_positions, write_position_set

    agent, pubeval = default_agent(0), agent_from_spec("pubeval")
    board = starting_board()
    network = default_checkpoint_path()
    ps = generate_positions(NetworkEvaluator(load_checkpoint(network).network), 96, 11, pool=32)
    positions = tmp / "positions"
    write_position_set(positions, ps, shard_size=12, extra={"network": {"path": str(network)}})
    plan = make_plan("1ply", None)
    runs = iter(range(10**6))

    def labels(executor):
        out = tmp / f"labels-{next(runs)}"  # a fresh folder: every run labels all 8 shards
        kw = {"executor": executor} if executor is not None else {"workers": 1}
        run_labels(positions, out, plan, seed=1, progress=False, **kw)

    from nard_ai.distributed import RayExecutor, RayShardRunner
    from nard_ai.model.learn import Learner
    from nard_ai.play.selfplay import play_round

    td_net = load_checkpoint(network.with_name("nard-rich.pt")).network  # train.py's TD architecture

    runners: dict = {}

    def td(executor):
        # a fresh copy of the TD network (nard-rich.pt) each run; 2 shards: threads, or 2 Ray actors (started by
        # the warm-up run and kept, as train.py keeps them from round to round)
        if isinstance(executor, RayExecutor) and executor.workers < 2:
            return False  # two actors of 1 CPU each do not fit a 1-CPU cluster
        runner = None
        if isinstance(executor, RayExecutor):
            runner = runners.setdefault(id(executor), RayShardRunner(executor))
        learner = Learner(copy.deepcopy(td_net))
        play_round(learner, 400, np.random.default_rng(1), pool=256, workers=2, runner=runner)
        return True

    def td_done() -> None:
        # the actors hold their CPUs: end them before the next workload needs the cluster
        for runner in runners.values():
            runner.shutdown()
        runners.clear()

    td.done = td_done

    return {
        "TD self-play (nard-rich.pt, pool 256, 2 shards, 400 games)": (400, "games", 2, td),
        "rollout (opening, 0-ply, 2,000 games)": (
            2000,
            "games",
            8,
            lambda ex: rollout(board, 2000, seed=1, agent=agent, executor=ex, shard_games=250),
        ),
        "match (default:0 vs pubeval, 2,000 games)": (
            2000,
            "games",
            8,
            lambda ex: play_match(agent, pubeval, 2000, seed=1, executor=ex, shard_games=250),
        ),
        "labelling (1-ply, 96 positions)": (96, "positions", 8, labels),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--noop-shards", type=int, default=200)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.repeats < 1 or args.noop_shards < 1:
        p.error("--repeats and --noop-shards must be >= 1")
    import os

    import ray

    from nard_ai.distributed import LocalExecutor, RayExecutor

    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    results: dict = {"workloads": {}, "repeats": args.repeats}
    with tempfile.TemporaryDirectory() as d:
        work = _workloads(Path(d))
        for name, (_units, _unit, _shards, run) in work.items():
            run(None)  # warm-up (numba kernels, caches)
            results["workloads"][name] = {
                "plain": _median_time(lambda run=run: run(None), args.repeats),
                "local": _median_time(lambda run=run: run(LocalExecutor()), args.repeats),
            }
        for cpus in (1, 2):
            ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
            try:
                ex = RayExecutor()
                if cpus == 1:
                    from nard_ai.search.loading import default_agent

                    shared = default_agent(0)
                    ex.map(_noop, list(range(4)), shared=shared)  # start the worker
                    t = _median_time(
                        lambda ex=ex, shared=shared: ex.map(
                            _noop, list(range(args.noop_shards)), shared=shared
                        ),
                        args.repeats,
                    )
                    results["ray_overhead_per_shard_s"] = t / args.noop_shards
                for name, (_units, _unit, _shards, run) in work.items():
                    run(ex)  # warm-up: workers import torch and nard_ai, fetch the agent
                    results["workloads"][name][f"ray{cpus}"] = _median_time(
                        lambda run=run, ex=ex: run(ex), args.repeats
                    )
                    if hasattr(run, "done"):
                        run.done()
            finally:
                ray.shutdown()
    for name, (units, unit, shards, _run) in work.items():
        r = results["workloads"][name]
        r.update(units=units, unit=unit, shards=shards)
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return 0
    print(f"medians of {args.repeats} runs; throughput and ratio to plain (the workload's own local path)")
    print("| workload | plain | local executor | Ray, 1 worker | Ray, 2 workers |")
    print("|---|---:|---:|---:|---:|")
    for name, r in results["workloads"].items():
        cells = []
        for k in ("plain", "local", "ray1", "ray2"):
            if math.isnan(r[k]):
                cells.append("n/a")
                continue
            rate = r["units"] / r[k]
            cells.append(f"{rate:,.0f} {r['unit']}/s ({r['plain'] / r[k]:.2f}x)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"Ray overhead per no-op shard (1 worker): {results['ray_overhead_per_shard_s'] * 1e3:.2f} ms")
    for name, r in results["workloads"].items():
        if math.isnan(r["ray1"]):
            continue
        extra = (r["ray1"] - r["local"]) / r["shards"]
        print(f"{name}: Ray 1 worker minus local executor, per shard: {extra * 1e3:+.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
