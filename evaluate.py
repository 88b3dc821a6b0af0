"""Cubeless duplicate-dice matches between agents. Logic: nard_ai.arena.

python evaluate.py                                   # shipped network vs pubeval, 2,000 games
python evaluate.py --agent-a checkpoints/nard-td198.pt:0 --agent-b random --games 2000
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from tqdm import tqdm

from nard_ai.arena import agent_from_spec, play_match
from nard_ai.cli import parse_dataclass_args


@dataclass
class Args:
    """Play agent A against agent B (cubeless money, duplicate dice) and report A's points per game."""

    agent_a: str = "default"
    """agent spec: PATH[:PLY] (a checkpoint), default[:PLY] (the shipped one), pubeval or random"""
    agent_b: str = "pubeval"
    """the opponent, same kinds of spec"""
    games: int = 2000
    """games to play (rounded up to even: each dice sequence is played twice with sides swapped)"""
    seed: int = 0
    """seed of the dice (and of the random agents)"""
    batch: int = 1024
    """games in flight at once"""
    threads: int = 1
    """torch CPU threads"""
    progress: bool = True
    """show a tqdm progress bar"""

    def validate(self) -> None:
        """Reject impossible values (argparse reports the ValueError and exits 2)."""
        for name in ("games", "batch", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"argument --{name}: must be >= 1, got {getattr(self, name)}")


def main(args: Args) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    torch.set_num_threads(args.threads)
    try:
        agent_a = agent_from_spec(args.agent_a, seed=args.seed + 1)
        agent_b = agent_from_spec(args.agent_b, seed=args.seed + 2)
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(f"evaluate.py: error: {exc}") from None
    with tqdm(total=args.games + args.games % 2, unit="game", disable=not args.progress) as bar:
        result = play_match(
            agent_a,
            agent_b,
            args.games,
            seed=args.seed,
            batch=args.batch,
            progress=lambda done: bar.update(done - bar.n),
        )
    print(result.summary(args.agent_a, args.agent_b))


if __name__ == "__main__":
    main(parse_dataclass_args(Args))
