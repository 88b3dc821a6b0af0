"""``python -m nard_ai.training``: make position sets, label them, check two sets do not overlap.

::

    python -m nard_ai.training positions --network checkpoints/nard-rich.pt --count 150000 \\
        --out runs/train-pos --seed 1
    python -m nard_ai.training label --positions runs/train-pos --out runs/train-2ply --method 2ply
    python -m nard_ai.training label --positions runs/bench-pos --out runs/bench-ro \\
        --method rollout --games 1296 --rollout-ply 0
    python -m nard_ai.training overlap runs/train-pos runs/bench-pos
    python -m nard_ai.training label --positions runs/train-pos --out runs/train-2ply --ray auto
    python -m nard_ai.training ensemble --out runs/ens.pt runs/a.pt runs/b.pt runs/c.pt

``label --ray auto|local|ADDRESS`` (or ``RAY_ADDRESS`` set) labels the shards
on a Ray cluster (:mod:`nard_ai.distributed`; the same files as a local run).

``ensemble`` writes one checkpoint whose logits are the mean of the members'
(:mod:`nard_ai.model.ensemble`: their hidden layers side by side), an
ordinary network every command loads.

Every input is checked before any work starts: the sizes are bounded
(:data:`nard_ai.training.argtypes.TRAINING_LIMITS`: ``--count`` up to
10,000,000, ``--count`` x ``--oversample`` up to 20,000,000, ``--oversample``
up to 100, ``--pool`` up to 16,384, ``--max-games`` up to 100,000,000,
``--shard-size`` and ``--shard-games`` up to 1,000,000, ``--workers`` up to
64, ``--games`` up to 10,000,000, ``--truncate`` up to 5,000 plies,
``--max-shards`` up to 10,000,000; ``--seed`` below 2**64), an empty
``--out`` is refused, rollout options (``--games``, ``--rollout-ply``,
``--truncate``, ``--variance-reduction``) are refused when no class is rolled
out, and ``--shards`` must lie within the set's shards (``N``,
``START:STOP`` with ``STOP`` at most the set's shard count, or ``START:`` for
the rest). ``label`` without ``--network`` refuses a network file whose
SHA-256 is not the one the position set records. A ``label`` run that fails
before labelling a shard removes the output folder it created.

Exit status: 0 done; 1 ``overlap`` found shared positions; 2 bad input (a
message, no traceback); 130 interrupted by Ctrl-C, 143 stopped by SIGTERM
(``kill PID``). An interrupted ``label`` keeps its complete shards: rerun the
same command to resume (a shard in flight is relabelled). ``positions``
writes its set only at the end, so an interrupted one keeps nothing (a rerun
starts over); ``ensemble`` writes its checkpoint atomically at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from nard_ai.core.signals import sigterm_as_interrupt
from nard_ai.distributed import add_ray_argument, executor_from_args
from nard_ai.training.argtypes import MAX_SEED, TRAINING_LIMITS, finite_float, int_in, non_empty

__all__ = ["main"]

_INTERRUPTED = {
    "label": "interrupted; complete shards are kept: rerun the same command to resume",
    "positions": "interrupted; no position set was written (it is written only at the end): "
    "rerun the command to start over",
    "ensemble": "interrupted; no ensemble checkpoint was written",
    "overlap": "interrupted",
}
"""What an interrupted command says (what it kept)."""


def _bounded(name: str):
    """argparse type: an integer in ``1 .. TRAINING_LIMITS[name]``."""
    return int_in(1, TRAINING_LIMITS[name])


def _shard_range(text: str) -> int | slice:
    """argparse type of ``--shards``: ``N`` (one shard, as the ``int``, so that a refusal names it as
    typed), ``START:STOP``, ``START:`` (to the last shard) or ``:STOP``, as a slice whose ``stop`` is
    ``None`` for ``START:``. Whether it lies within the
    position set is :func:`nard_ai.training.labels.run_labels`'s check (it knows the set)."""
    start, sep, stop = text.partition(":")
    try:
        a = int(start) if start else 0
        b = int(stop) if stop else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shards takes START:STOP (shard numbers), got {text!r}") from None
    if not sep:
        b = a + 1
    if a < 0 or (b is not None and b <= a):
        raise argparse.ArgumentTypeError(f"--shards START:STOP needs 0 <= START < STOP, got {text!r}")
    return a if not sep else slice(a, b)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m nard_ai.training",
        description="Training data made by nard_ai itself: position sets from self-play, and their labels.",
    )
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("positions", help="generate a deduplicated, stratified position set from self-play")
    g.add_argument(
        "--network",
        type=non_empty,
        default=None,
        help="checkpoint to play (default: the default network, checkpoints/nard-expert.pt)",
    )
    g.add_argument("--count", type=_bounded("count"), required=True, help="positions wanted")
    g.add_argument(
        "--out", type=non_empty, required=True, help="output folder (must not hold a position set)"
    )
    g.add_argument("--seed", type=int_in(0, MAX_SEED), default=0)
    g.add_argument(
        "--classes",
        default=None,
        help="class proportions, e.g. contact=0.55,crashed=0.15,race=0.25,bearoff=0.05 (the default)",
    )
    g.add_argument(
        "--epsilon", type=finite_float(0, 1), default=0.05, help="chance of a random play (default 0.05)"
    )
    g.add_argument(
        "--temperature",
        type=finite_float(0),
        default=0.0,
        help="softmax temperature of the other plays (0: best)",
    )
    g.add_argument("--pool", type=_bounded("pool"), default=256, help="games in lockstep")
    g.add_argument(
        "--oversample",
        type=finite_float(1, TRAINING_LIMITS["oversample"]),
        default=2.0,
        help="candidates kept per class, x its quota",
    )
    g.add_argument("--max-games", type=_bounded("max_games"), default=None)
    g.add_argument(
        "--exclude",
        type=non_empty,
        action="append",
        default=[],
        help="a position set none of whose positions to use",
    )
    g.add_argument(
        "--disagreement-ply",
        type=int,
        choices=(1, 2),
        default=None,
        help="keep per class the candidates where PLY-ply and 0-ply disagree most (costs one PLY-ply "
        "evaluation of each of oversample x count candidates)",
    )
    g.add_argument(
        "--shard-size", type=_bounded("shard_size"), default=1000, help="positions per shard (default 1000)"
    )
    g.add_argument("--no-progress", action="store_true")
    add_ray_argument(g, "games", 1000, shard_dest="shard_games")

    lab = sub.add_parser("label", help="label a position set (resumable: rerun to finish)")
    lab.add_argument("--positions", type=non_empty, required=True, help="a position set folder")
    lab.add_argument("--out", type=non_empty, required=True, help="labels folder")
    lab.add_argument("--method", default="2ply", choices=("0ply", "1ply", "2ply", "rollout"))
    lab.add_argument("--mix", default=None, help="per-class methods, e.g. race=rollout,bearoff=exact")
    lab.add_argument(
        "--network", type=non_empty, default=None, help="checkpoint (default: the position set's)"
    )
    lab.add_argument("--seed", type=int_in(0, MAX_SEED), default=0)
    lab.add_argument("--workers", type=_bounded("workers"), default=2, help="worker processes (default 2)")
    # the rollout options default to None: given with a plan that rolls out nothing, they are refused
    lab.add_argument(
        "--games", type=_bounded("games"), default=None, help="rollout games per position (default 1296)"
    )
    lab.add_argument(
        "--rollout-ply", type=int, choices=(0, 1), default=None, help="depth the rollout games play at (0)"
    )
    lab.add_argument("--truncate", type=_bounded("truncate"), default=None, help="rollout truncation, plies")
    lab.add_argument(
        "--variance-reduction",
        choices=("auto", "on", "off"),
        default=None,
        help="rollout luck adjustment (default auto: the rollout's own rule)",
    )
    lab.add_argument(
        "--shards",
        type=_shard_range,
        default=None,
        help="only shard N, shards START:STOP (STOP at most the set's shard count) or START: (to the last)",
    )
    lab.add_argument(
        "--max-shards", type=_bounded("max_shards"), default=None, help="stop after this many shards"
    )
    lab.add_argument("--no-progress", action="store_true")
    add_ray_argument(lab)

    o = sub.add_parser("overlap", help="count positions two position sets share (exit 1 if any)")
    o.add_argument("first")
    o.add_argument("second")

    e = sub.add_parser(
        "ensemble",
        help="one checkpoint whose logits are the mean of two or more networks' (hidden layers side by side)",
    )
    e.add_argument("--out", type=non_empty, required=True, help="the checkpoint to write (must not exist)")
    e.add_argument("members", nargs="+", help="two or more checkpoints of one encoder, activation and nets")
    return p


def _positions(args) -> int:
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.training.positions import (
        check_new_set_folder,
        generate_positions,
        load_keys,
        parse_proportions,
        write_position_set,
    )
    from nard_ai.training.store import file_provenance, file_sha256

    if args.count * args.oversample > TRAINING_LIMITS["candidates"]:
        raise ValueError(
            f"--count x --oversample must be at most {TRAINING_LIMITS['candidates']:,} candidates (the "
            f"positions generation holds), got {args.count:,} x {args.oversample:g}"
        )
    if args.shard_games is not None and args.shard_games > TRAINING_LIMITS["shard_games"]:
        raise ValueError(
            f"argument --shard-games: must be <= {TRAINING_LIMITS['shard_games']}, got {args.shard_games}"
        )
    out = check_new_set_folder(args.out)
    proportions = parse_proportions(args.classes) if args.classes else None
    network = Path(args.network) if args.network else default_checkpoint_path()
    exclude_keys = load_keys(args.exclude) if args.exclude else None

    import numba
    import torch

    from nard_ai.eval.evaluator import NetworkEvaluator

    torch.set_num_threads(1)
    numba.set_num_threads(1)
    evaluator = NetworkEvaluator(load_checkpoint(network).network)
    t0 = time.perf_counter()
    executor = executor_from_args(args, shard_dest="shard_games")
    if executor is not None and args.shard_games is None:
        args.shard_games = 1000  # --ray alone: shards of the default size
    try:
        ps = generate_positions(
            evaluator,
            args.count,
            args.seed,
            proportions=proportions,
            epsilon=args.epsilon,
            temperature=args.temperature,
            pool=args.pool,
            oversample=args.oversample,
            max_games=args.max_games,
            exclude=exclude_keys,
            disagreement_ply=args.disagreement_ply,
            progress=not args.no_progress,
            executor=executor,
            shard_games=args.shard_games or 0,
        )
    finally:
        if executor is not None:
            executor.close()
    seconds = time.perf_counter() - t0
    extra = {
        "network": file_provenance(network),
        "exclude": [
            {"path": str(Path(d).resolve()), "manifest_sha256": file_sha256(Path(d) / "positions.json")}
            for d in args.exclude
        ],
    }
    manifest = write_position_set(out, ps, shard_size=args.shard_size, extra=extra)
    info = ps.info
    print(
        f"{len(ps)} positions in {len(manifest['shards'])} shards under {out} "
        f"({info['plies']} plies of {info['games_started']} games in {seconds:.1f} s, "
        f"{info['plies'] / max(seconds, 1e-9):.0f} plies/s)"
    )
    # no pre-roll position of a running game is over: the manifest's "over" count is always 0
    print("classes: " + json.dumps({k: v for k, v in manifest["classes"].items() if k != "over"}))
    if info["shortfall"]:
        print(f"shortfall (raise --max-games): {json.dumps(info['shortfall'])}", file=sys.stderr)
    return 0


def _label(args) -> int:
    from nard_ai.training.labels import make_plan, run_labels

    given = [
        flag
        for flag, value in (
            ("--games", args.games),
            ("--rollout-ply", args.rollout_ply),
            ("--truncate", args.truncate),
            ("--variance-reduction", args.variance_reduction),
        )
        if value is not None
    ]
    if given and not any(m.method == "rollout" for m in make_plan(args.method, args.mix).values()):
        raise ValueError(
            f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to rollouts (--method "
            "rollout, or CLASS=rollout in --mix), and this plan rolls out no class"
        )
    vr = {"auto": None, "on": True, "off": False, None: None}[args.variance_reduction]
    plan = make_plan(
        args.method,
        args.mix,
        games=args.games,
        play_ply=args.rollout_ply,
        truncate=args.truncate,
        variance_reduction=vr,
    )
    executor = executor_from_args(args)  # None without --ray (or RAY_ADDRESS): no Ray import
    try:
        summary = run_labels(
            args.positions,
            args.out,
            plan,
            network=args.network,
            seed=args.seed,
            workers=args.workers,
            shards=args.shards,
            progress=not args.no_progress,
            max_shards=args.max_shards,
            executor=executor,
        )
    finally:
        if executor is not None:
            executor.close()
    rate = summary["rows"] / max(summary["seconds"], 1e-9)
    print(
        f"{summary['done']} shards labelled ({summary['rows']} positions, {rate:.1f}/s), "
        f"{summary['skipped']} already complete, {summary['shards']} in all, under {args.out}"
    )
    if summary["complete"] < summary["set_shards"]:
        print(
            f"note: {summary['complete']} of the position set's {summary['set_shards']} shards are labelled "
            f"in {args.out}; training reads those only (rerun without --max-shards or --shards to label "
            "the rest)",
            file=sys.stderr,
        )
    return 0


def _overlap(args) -> int:
    from nard_ai.training.positions import load_keys

    a, b = load_keys([args.first]), load_keys([args.second])
    shared = len(a & b)
    print(f"{shared} positions shared ({len(a)} in {args.first}, {len(b)} in {args.second})")
    return 1 if shared else 0


def _ensemble(args) -> int:
    from nard_ai.model.ensemble import ensemble_checkpoint

    ckpt = ensemble_checkpoint(args.members, args.out)
    cfg = ckpt.network.config
    race = cfg.net_hidden("race_mlp") if cfg.race_net else None
    print(
        f"wrote {args.out}: the mean of {len(args.members)} networks' logits; "
        f"hidden {list(cfg.hidden)}" + (f", race net {list(race)}" if race else "")
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (module docstring)."""
    args = _parser().parse_args(argv)  # exits 2 on a usage error
    # SIGTERM (`kill PID`) as Ctrl-C: the label pool's workers stop, the run log's `stop` line is written
    with sigterm_as_interrupt() as stop:
        try:
            return {"positions": _positions, "label": _label, "overlap": _overlap, "ensemble": _ensemble}[
                args.command
            ](args)
        # OSError: a file or folder (and ConnectionError: no Ray cluster)
        except (ValueError, OSError) as exc:
            print(f"python -m nard_ai.training {args.command}: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(_INTERRUPTED[args.command], file=sys.stderr)
            return 143 if stop.signalled else 130
