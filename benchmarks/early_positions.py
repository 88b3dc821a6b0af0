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

The exclusion set of ``benchmarks/contact-positions`` (1,622,387 positions,
about 5 minutes; peak memory about 2.2 GB, growing with ``--games``):

    python benchmarks/early_positions.py --out runs/early61 --seed 61 \
        --games 100000 --plies 10 --network checkpoints/nard-rich.pt \
        --network checkpoints/nard-sup256.pt --network checkpoints/nard-expert.pt

The dice and exploration draw from ``np.random.default_rng([seed, k])`` for
the k-th network: the same arguments give the same set (on one thread). The
manifest records the settings and each network's file, path and SHA-256.
Bad input (a missing or unreadable checkpoint, an ``--out`` that is a file or
already a position set, a negative ``--seed``) is one error line and exit
status 2, before any game is played.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def early_positions(evaluator, games: int, plies: int, seed, epsilon: float = 0.05) -> np.ndarray:
    """The distinct pre-roll positions of the first ``plies`` plies of ``games`` exploring self-play games.

    Args:
        evaluator: a batch evaluator (``NetworkEvaluator``) choosing the 0-ply plays.
        games: games played, >= 1, all at once in one lockstep pool (a game that ends sooner
            is not replaced: there are no more games to start).
        plies: plies of each game, >= 1; ply 1 is the starting position.
        seed: anything ``np.random.default_rng`` takes (an int >= 0 or a sequence of them).
        epsilon: chance of a random legal play instead of the best 0-ply play, in [0, 1].

    Returns:
        ``(N, 26)`` int8 boards, side on roll's view, before it rolls, in the order first seen.

    Raises:
        ValueError: ``games`` or ``plies`` not an integer >= 1, ``epsilon`` not a finite number
            in [0, 1], or a seed ``np.random.default_rng`` refuses (a negative one).
    """
    from nard_ai.search import STANDARD_RULES
    from nard_ai.training.positions import _check_float, _check_int, _self_play, position_keys

    games = _check_int("games", games, 1)
    plies = _check_int("plies", plies, 1)
    epsilon = _check_float("epsilon", epsilon, 0.0, 1.0)
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
    """Run the command line; returns the exit status (0, or 2 on bad input: one error line)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output folder (a new position set)")
    p.add_argument("--network", action="append", required=True, help="checkpoint (repeatable)")
    p.add_argument("--games", type=int, default=200_000, help="games per network (default 200,000)")
    p.add_argument("--plies", type=int, default=8, help="plies of each game (default 8)")
    p.add_argument("--epsilon", type=float, default=0.05, help="chance of a random play (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="seed, >= 0 (default 0)")
    args = p.parse_args(argv)
    for bad, message in (
        (args.games < 1, f"--games must be >= 1, got {args.games}"),
        (args.plies < 1, f"--plies must be >= 1, got {args.plies}"),
        (not 0.0 <= args.epsilon <= 1.0, f"--epsilon must be in [0, 1], got {args.epsilon}"),
        (args.seed < 0, f"--seed must be >= 0, got {args.seed}"),
    ):
        if bad:
            p.exit(2, f"{p.prog}: error: {message}\n")

    import numba
    import torch

    from nard_ai.eval.evaluator import NetworkEvaluator
    from nard_ai.model.network import load_checkpoint
    from nard_ai.training.positions import (
        PositionSet,
        check_new_set_folder,
        classify_positions,
        position_keys,
        write_position_set,
    )
    from nard_ai.training.store import file_provenance

    try:  # every check before the first game
        out = check_new_set_folder(args.out)
        paths = [Path(n) for n in args.network]
        networks = [load_checkpoint(path).network for path in paths]
    except (OSError, ValueError) as exc:
        p.exit(2, f"{p.prog}: error: {exc}\n")
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    boards, keys = [], set()
    t0 = time.perf_counter()
    for k, (path, network) in enumerate(zip(paths, networks, strict=True)):
        found = early_positions(
            NetworkEvaluator(network), args.games, args.plies, [args.seed, k], args.epsilon
        )
        found_keys = position_keys(found)
        new = [b for key, b in zip(found_keys, found, strict=True) if key not in keys]
        keys.update(found_keys)
        boards.extend(new)
        print(f"{path}: {len(found)} positions, {len(new)} new ({time.perf_counter() - t0:.0f} s)")
    boards = np.array(boards, dtype=np.int8).reshape(-1, 26)
    settings = {"games": args.games, "plies": args.plies, "epsilon": args.epsilon, "seed": args.seed}
    ps = PositionSet(boards, classify_positions(boards), {"early_positions": settings})
    try:
        networks_seen = [file_provenance(q) for q in paths]
        manifest = write_position_set(out, ps, shard_size=100_000, extra={"networks": networks_seen})
    except (OSError, ValueError) as exc:  # a network file or the folder changed while the games ran
        p.exit(2, f"{p.prog}: error: {exc}\n")
    print(f"{len(ps)} positions in {len(manifest['shards'])} shards under {out}: {ps.counts()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
