"""Matches, position analysis and error rates. Logic: nard_ai.play.arena, nard_ai.reports.position, nard_ai.reports.error_rate.

python evaluate.py                                   # the default network vs pubeval, 2,000 games
python evaluate.py --agent-a gnubg:0 --agent-b pubeval --games 2000
python evaluate.py --cube --games 2000               # money play with the cube (ppg with a 95% CI)
python evaluate.py --cube --jacoby --beavers         # ... under the Jacoby rule, with beavers
python evaluate.py --match-length 5 --games 500      # 500 matches to 5 points, Crawford rule
python evaluate.py --positions tests/data/positions.txt --ply 0 --compare gnubg [--rollout 1296] [--json]
python evaluate.py --make-cases cases.txt --cases 500 --agent-a default
python evaluate.py --error-rate cases.txt --agent-a pubeval --referee gnubg:2
python evaluate.py --games 20000 --ray auto          # the match's shards on a Ray cluster (nard_ai.distributed)
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, fields

import nard_ai  # noqa: F401  (before torch: it sets OpenMP's wait policy that torch's OpenMP reads on loading)

# isort: split
import torch
from tqdm import tqdm

from nard_ai.agents import agent_from_spec
from nard_ai.cube.met import MAX_AWAY, MET_NAME
from nard_ai.distributed import make_executor
from nard_ai.interfaces.cli import check_counts, parse_dataclass_args
from nard_ai.play.arena import play_match
from nard_ai.play.sessions import play_matches, play_money_session
from nard_ai.reports.error_rate import run_error_rate, run_make_cases
from nard_ai.reports.position import run_positions
from nard_ai.training.argtypes import MAX_SEED

LIMITS = {
    "games": 10_000_000,
    "batch": 65_536,
    "threads": 256,
    "cases": 1_000_000,
    "rollout": 10_000_000,
    "shard_games": 10_000_000,
    "shard_cases": 1_000_000,
}
"""Upper bounds of the size arguments, checked before anything runs: beyond them a run would not fit in
memory (a match holds per-game arrays of every game it plays) or would take no sensible time. The
games and rollout bounds are ``nard rollout``'s; threads is train.py's."""


@dataclass
class Args:
    """Play agent A against agent B (cubeless money, duplicate dice) and report A's points per game;
    or analyse positions (--positions), measure A's error rate (--error-rate), or write a case file (--make-cases)."""

    agent_a: str = "default"
    """agent spec: PATH[:PLY] (a checkpoint), default[:PLY] (the default network, checkpoints/nard-expert.pt), gnubg[:PLY], pubeval or random"""
    agent_b: str = "pubeval"
    """the opponent, same kinds of spec"""
    games: int = 2000
    """games to play (rounded up to even: each dice sequence is played twice with sides swapped);
    with --match-length, the number of matches"""
    cube: bool = False
    """money play with the cube (agents double, take and pass: nard_ai.play.sessions), instead of cubeless"""
    jacoby: bool = False
    """--cube: the Jacoby rule (gammons count only once the cube was turned)"""
    beavers: bool = False
    """--cube: beavers allowed (a doubled player may take at twice the doubled cube and keep it)"""
    match_length: int = 0
    """play matches to this many points (1..25, the match equity table's range) with the cube and the
    Crawford rule (0 = money play)"""
    seed: int = 0
    """seed of the dice (and of the random agents, rollouts and case sampling)"""
    batch: int = 1024
    """games (or error-rate cases) in flight at once"""
    threads: int = 0
    """torch CPU threads; 0 = torch's default, one per core"""
    progress: bool = True
    """show a tqdm progress bar"""
    positions: str = ""
    """FILE of gnubg PositionID:MatchID or XGID lines: print equities and cube decisions with --agent-a"""
    ply: int = -1
    """--positions: search depth 0..2 of --agent-a (gnubg numbering); -1 = the ply in the spec (0 if none)"""
    rollout: int = 0
    """--positions: also roll each position out with this many games (0 = no rollout)"""
    compare: str = ""
    """--positions: 'gnubg' compares the cube decisions with gnubg's at the same ply (needs the gnubg package)"""
    json: bool = False
    """--positions / --error-rate: print one JSON object instead of text"""
    error_rate: str = ""
    """FILE of 'ID DICE' cases: millipoints per move that --agent-a loses against --referee"""
    referee: str = "default"
    """--error-rate: the agent that values every play (a network or gnubg[:PLY])"""
    make_cases: str = ""
    """write a new case FILE of --cases positions from --agent-a self-play"""
    cases: int = 500
    """--make-cases: number of cases"""
    ray: str = ""
    """run the shards on Ray: 'local', 'auto' (the running cluster) or a head's ADDRESS; default the
    RAY_ADDRESS environment variable, else this process (matches, --cube sessions, --match-length matches,
    --error-rate and --positions --rollout)"""
    shard_games: int = 1000
    """--ray: games per shard of a match or money session, matches per shard with --match-length (even; the same
    seed and shard size give the same points on every backend)"""
    shard_cases: int = 1024
    """--ray with --error-rate: cases per shard (a multiple of --batch gives the unsharded figures)"""

    def validate(self) -> None:
        """Reject impossible values (argparse reports the ValueError and exits 2)."""
        if self.threads < 0:
            raise ValueError(f"argument --threads: must be >= 0 (0 = one per core), got {self.threads}")
        check_counts(self, ("games", "batch", "cases", "shard_cases", "shard_games"), LIMITS)
        if not 0 <= self.match_length <= MAX_AWAY:
            raise ValueError(
                f"argument --match-length: must be 1..{MAX_AWAY} (the range of the {MET_NAME} match equity "
                f"table), or 0 for money play, got {self.match_length}"
            )
        for name in ("jacoby", "beavers"):
            if getattr(self, name) and not self.cube:
                raise ValueError(f"argument --{name}: goes with --cube (money play with the cube)")
            if getattr(self, name) and self.match_length:
                raise ValueError(f"argument --{name}: a money-play option, not with --match-length")
        if self.rollout < 0:
            raise ValueError(f"argument --rollout: must be >= 0, got {self.rollout}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"argument --seed: must be 0 .. 2**64 - 1, got {self.seed}")
        if not -1 <= self.ply <= 2:
            raise ValueError(f"argument --ply: must be 0, 1, 2 (or -1), got {self.ply}")
        if self.compare not in ("", "gnubg"):
            raise ValueError(f"argument --compare: only 'gnubg' is supported, got {self.compare!r}")
        for name in ("compare", "rollout"):
            if getattr(self, name) and not self.positions:
                raise ValueError(f"argument --{name}: goes with --positions")
        given = [
            f"--{n.replace('_', '-')}" for n in ("positions", "error_rate", "make_cases") if getattr(self, n)
        ]
        if len(given) > 1:
            raise ValueError(
                f"argument {given[0]}: not with {' or '.join(given[1:])} (give one of --positions, "
                "--error-rate, --make-cases)"
            )
        playing = not (self.positions or self.error_rate or self.make_cases)
        if playing and self.shard_games % 2:
            raise ValueError(
                f"argument --shard-games: must be even for a match or session (duplicate pairs stay in one "
                f"shard), got {self.shard_games}"
            )
        if self.shard_cases != 1024 and not self.error_rate:
            raise ValueError("argument --shard-cases: goes with --error-rate")
        if self.ray and not self.uses_ray:
            raise ValueError(
                f"argument --ray: {self.mode}{' without --rollout' if self.positions else ''} does not run on "
                "Ray; matches, sessions with the cube, "
                "--error-rate and --positions --rollout do"
            )
        if self.positions:
            for name in ("cube", "jacoby", "beavers", "match_length"):
                if getattr(self, name):
                    raise ValueError(
                        f"argument --{name.replace('_', '-')}: not with --positions, which takes the cube, "
                        "score and Jacoby/beaver settings from each line's Match ID or XGID"
                    )
        for name in sorted(set(_MODE_OPTIONS) - _MODE_OPTIONS_USED[self.mode]):
            if getattr(self, name) != _DEFAULTS[name]:  # an option this mode would ignore
                raise ValueError(
                    f"argument --{name.replace('_', '-')}: {_MODE_OPTIONS[name]}, not with {self.mode}"
                )

    @property
    def mode(self) -> str:
        """What the run does: ``--positions``, ``--error-rate``, ``--make-cases``, or ``a match`` (the default)."""
        for name in ("positions", "error_rate", "make_cases"):
            if getattr(self, name):
                return f"--{name.replace('_', '-')}"
        return "a match"

    @property
    def uses_ray(self) -> bool:
        """Whether the run has shards for Ray (--ray, RAY_ADDRESS): matches, sessions, --error-rate and
        --positions --rollout (RAY_ADDRESS is not used by the others)."""
        return self.mode in ("a match", "--error-rate") or (self.mode == "--positions" and self.rollout > 0)

    def ray_address(self) -> str:
        """--ray, else RAY_ADDRESS, else '' (no Ray, or a run that does not use it: :attr:`uses_ray`)."""
        return (self.ray or os.environ.get("RAY_ADDRESS", "")) if self.uses_ray else ""


_MODE_OPTIONS = {
    "agent_b": "the opponent of a match",
    "games": "the games of a match",
    "cube": "a match's option",
    "match_length": "a match's option",
    "shard_games": "a match's shards",
    "batch": "games or cases in flight, for a match or --error-rate",
    "ply": "goes with --positions (a match's or --error-rate's agents take their ply in the spec, e.g. default:2)",
    "json": "goes with --positions or --error-rate",
    "referee": "goes with --error-rate",
    "cases": "goes with --make-cases",
}
"""Options that one mode only (or two) reads, with what they are for: given to another mode, where they
would be silently ignored, they are an error (--jacoby, --beavers, --compare, --rollout and
--shard-cases have their own checks above)."""
_MODE_OPTIONS_USED = {
    "a match": {"agent_b", "games", "cube", "match_length", "shard_games", "batch"},
    "--positions": {"ply", "json"},
    "--error-rate": {"batch", "json", "referee"},
    "--make-cases": {"cases"},
}

_DEFAULTS = {f.name: f.default for f in fields(Args)}


def main(args: Args) -> int:
    try:
        executor = make_executor(args.ray_address()) if args.ray_address() else None
    except (ValueError, ConnectionError) as exc:
        print(f"evaluate.py: error: --ray {args.ray_address()}: {exc}", file=sys.stderr)
        return 2
    try:
        return _run(args, executor)
    except KeyboardInterrupt:
        print("evaluate.py: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`python evaluate.py ... | head -1`): stop quietly, as `nard` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        if executor is not None:
            executor.close()


def _run(args: Args, executor) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.positions:
        return run_positions(
            args.positions,
            args.agent_a,
            args.ply,
            rollout_games=args.rollout,
            compare=args.compare,
            as_json=args.json,
            seed=args.seed,
            executor=executor,
        )
    if args.error_rate:
        bars = []  # the bar starts with the first case judged, so an error before it prints alone

        def progress(done: int) -> None:
            if not bars:
                bars.append(tqdm(unit="case", disable=not args.progress, file=sys.stderr))
            bars[0].update(done - bars[0].n)

        try:
            return run_error_rate(
                args.error_rate,
                args.agent_a,
                args.referee,
                seed=args.seed,
                batch=args.batch,
                as_json=args.json,
                progress=progress,
                executor=executor,
                shard_cases=args.shard_cases,
            )
        finally:
            for bar in bars:
                bar.close()
    if args.make_cases:
        return run_make_cases(args.make_cases, args.cases, args.agent_a, seed=args.seed)
    try:
        agent_a = agent_from_spec(args.agent_a, seed=args.seed + 1)
        agent_b = agent_from_spec(args.agent_b, seed=args.seed + 2)
    except (ValueError, FileNotFoundError) as exc:
        print(f"evaluate.py: error: {exc}", file=sys.stderr)
        return 2  # a usage error, like argparse's
    unit = "match" if args.match_length else "game"
    with tqdm(total=args.games + args.games % 2, unit=unit, disable=not args.progress) as bar:
        progress = lambda done: bar.update(done - bar.n)  # noqa: E731
        if args.match_length:
            result = play_matches(
                agent_a,
                agent_b,
                args.games,
                args.match_length,
                seed=args.seed,
                batch=args.batch,
                progress=progress,
                executor=executor,
                shard_matches=args.shard_games,
            )
        elif args.cube:
            result = play_money_session(
                agent_a,
                agent_b,
                args.games,
                seed=args.seed,
                jacoby=args.jacoby,
                beavers=args.beavers,
                batch=args.batch,
                progress=progress,
                executor=executor,
                shard_games=args.shard_games,
            )
        else:
            result = play_match(
                agent_a,
                agent_b,
                args.games,
                seed=args.seed,
                batch=args.batch,
                progress=progress,
                executor=executor,
                shard_games=args.shard_games,
            )
    print(result.summary(args.agent_a, args.agent_b))
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_dataclass_args(Args)))
