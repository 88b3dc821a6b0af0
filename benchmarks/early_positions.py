"""The opening positions self-play keeps meeting: a position set to ``--exclude`` from a benchmark.

A position set drawn from self-play (``python -m nard_ai.training positions``)
takes candidates from every ply of its games, the first plies included. The
positions of a game's first few plies recur across games (15 opening rolls,
then a few good replies to each), so any large self-play training set holds
them, and a benchmark drawn from self-play of another seed would share them
with it. Deeper positions almost never recur. This script plays ``--games``
games of each ``--network``'s exploring self-play (0-ply, ``--epsilon``
random plays: the settings of ``positions``' defaults, by which the training
sets were made) for their first ``--plies`` plies, in lockstep, and writes
every distinct pre-roll position (side on roll's view) as a position set;
``positions --exclude FOLDER`` then keeps a benchmark clear of them.

    python benchmarks/early_positions.py --out runs/early --seed 61 \
        --network checkpoints/nard-rich.pt --network checkpoints/nard-sup256.pt \
        --network checkpoints/nard-expert.pt [--games 200000] [--plies 8]

The dice and exploration draw from ``np.random.default_rng([seed, k])`` for
the k-th network: the same arguments give the same set (on one thread).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def early_positions(evaluator, games: int, plies: int, seed, epsilon: float = 0.05) -> np.ndarray:
    """The distinct pre-roll positions of the first ``plies`` plies of ``games`` exploring self-play games.

    Returns ``(N, 26)`` int8 boards, side on roll's view, in the order first seen. All games
    run in one lockstep pool of ``games`` slots, so the run stops with every game at ply
    ``plies`` (a game that ended sooner is not replaced: there are no more games to start).
    """
    from nard_ai.search import STANDARD_RULES
    from nard_ai.training.positions import _self_play, position_keys

    rng = np.random.default_rng(seed)
    seen: dict[bytes, np.ndarray] = {}
    count = [0]

    def visit(boards):
        if count[0] >= plies:
            return True
        count[0] += 1
        for key, board in zip(position_keys(boards), boards, strict=True):
            if key not in seen:
                seen[key] = board.copy()
        return False

    _self_play(evaluator, visit, rng, games, games, epsilon, 0.0, STANDARD_RULES)
    return np.array(list(seen.values()), dtype=np.int8).reshape(-1, 26)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output folder (a new position set)")
    p.add_argument("--network", action="append", required=True, help="checkpoint (repeatable)")
    p.add_argument("--games", type=int, default=200_000, help="games per network (default 200,000)")
    p.add_argument("--plies", type=int, default=8, help="plies of each game (default 8)")
    p.add_argument("--epsilon", type=float, default=0.05, help="chance of a random play (default 0.05)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.games < 1 or args.plies < 1 or not 0.0 <= args.epsilon <= 1.0:
        p.error("--games and --plies must be >= 1, --epsilon in [0, 1]")

    import numba
    import torch

    from nard_ai.eval.evaluator import NetworkEvaluator
    from nard_ai.model.network import load_checkpoint
    from nard_ai.training.positions import PositionSet, classify_positions, position_keys, write_position_set

    torch.set_num_threads(1)
    numba.set_num_threads(1)
    boards, keys = [], set()
    t0 = time.perf_counter()
    for k, path in enumerate(args.network):
        evaluator = NetworkEvaluator(load_checkpoint(Path(path)).network)
        found = early_positions(evaluator, args.games, args.plies, [args.seed, k], args.epsilon)
        new = [b for key, b in zip(position_keys(found), found, strict=True) if key not in keys]
        keys.update(position_keys(found))
        boards.extend(new)
        print(f"{path}: {len(found)} positions, {len(new)} new ({time.perf_counter() - t0:.0f} s)")
    boards = np.array(boards, dtype=np.int8).reshape(-1, 26)
    settings = {"games": args.games, "plies": args.plies, "epsilon": args.epsilon, "seed": args.seed}
    ps = PositionSet(
        boards, classify_positions(boards), {"early_positions": settings, "networks": args.network}
    )
    manifest = write_position_set(args.out, ps, shard_size=100_000)
    print(f"{len(ps)} positions in {len(manifest['shards'])} shards under {args.out}: {ps.counts()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
