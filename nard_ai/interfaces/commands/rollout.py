"""``nard rollout ID [--games N] [--cubeful]``: a Monte Carlo rollout (:func:`nard_ai.play.rollout.rollout`) with 95% confidence intervals."""

from __future__ import annotations

import argparse

import numpy as np

from nard_ai.distributed import add_ray_argument, executor_from_args
from nard_ai.interfaces.commands.common import (
    CUBE_XGID,
    START_ID,
    add_checkpoint,
    add_json,
    add_ply,
    add_position,
    add_progress,
    add_seed,
    agent_arg,
    cube_state_arg,
    note_unused_roll,
    position_arg,
    positive_int,
    progress_bar,
)
from nard_ai.interfaces.output import PROBS_HEADER, num, print_json, probs_dict, probs_text

NAME = "rollout"
SUMMARY = "Monte Carlo rollout with 95%% confidence intervals"  # %%: argparse formats help strings
DESCRIPTION = (
    "Play --games games from the position with the network choosing every play, and print the "
    "mean probabilities and equity for X with 95% confidence intervals. The first two rolls are "
    "stratified (1296 games cover every pair). --cubeful plays the cube too, from the ID's cube and "
    "score. Cubeless results are luck-adjusted (variance reduction) from 1-ply up and in races at any "
    "ply, not for contact positions at 0-ply (there it costs about 30 times the work for less interval "
    'per second: README, "Analysing a position"); --luck / --no-luck '
    "force it. At most 10,000,000 games; a progress bar shows on stderr when it is a terminal "
    "(--progress / --no-progress force it on / off). A rollout starts before X rolls, so an ID's dice "
    "are not used (a note on stderr says so). An ID whose game is over, or with a double or "
    "resignation awaiting its answer, is an error."
)
EXAMPLES = (
    f"nard rollout {START_ID} --games 72 --seed 1",
    f"nard rollout {CUBE_XGID} --games 36 --cubeful --json",
)


def games_arg(text: str) -> int:
    """argparse type of ``rollout --games``: an integer 1 .. :data:`nard_ai.play.rollout.MAX_GAMES`."""
    from nard_ai.play.rollout import MAX_GAMES

    value = positive_int(text)
    if value > MAX_GAMES:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_GAMES:,} games in one rollout (run several seeds for more), got {value:,}"
        )
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """``ID``, ``--games``, ``--ply``, ``--seed``, ``--cubeful``, ``--truncate``, ``--luck``, ``--progress``, ``--json``, ``--checkpoint``."""
    add_position(parser)
    parser.add_argument(
        "--games", type=games_arg, default=144, help="games to play, 1 to 10,000,000 (default: 144)"
    )
    add_ply(parser)
    add_seed(parser, 0, "seed of the dice, an integer 0..2**64 - 1 (default: 0)")
    parser.add_argument("--cubeful", action="store_true", help="play the cube and report the cubeful equity")
    parser.add_argument(
        "--truncate", type=positive_int, default=None, help="score games by evaluation after N plies"
    )
    parser.add_argument(
        "--luck",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="luck adjustment on or off (default: on from 1-ply and in races, off for contact at 0-ply); not with --cubeful, whose "
        "rollouts are never luck-adjusted",
    )
    add_progress(parser)
    add_json(parser)
    add_checkpoint(parser)
    add_ray_argument(parser, "games", 1 << 17)  # nard_ai.play.rollout.CHUNK_GAMES, without loading it here


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Roll the position out and print the mean probabilities, equities and 95% intervals; returns 0."""
    from nard_ai.formats.position_id import position_id
    from nard_ai.play.rollout import rollout

    if args.cubeful and args.luck:
        parser.error("--luck is not available with --cubeful: cubeful rollouts are not luck-adjusted")
    board, state = position_arg(parser, args.position, playing=True)
    note_unused_roll(parser, state, "a rollout starts before X rolls (its first two rolls are stratified)")
    cube = cube_state_arg(parser, state) if args.cubeful else None
    agent = agent_arg(parser, args.checkpoint, args.ply)
    executor = executor_from_args(args, parser)  # --ray / --shard-games; None: the local lockstep
    bar = progress_bar(args.progress, args.games, "rolling out", "game")
    try:
        r = rollout(
            board,
            args.games,
            cube=cube,
            seed=args.seed,
            agent=agent,
            truncate=args.truncate,
            variance_reduction=args.luck,
            on_games=bar.update,
            executor=executor,
            **({"shard_games": args.shard_size} if args.shard_size else {}),
        )
    except ValueError as exc:
        parser.error(str(exc))
    finally:
        bar.close()
        if executor is not None:
            executor.close()
    if args.json:
        print_json(
            {
                "position_id": position_id(board),
                "games": r.games,
                "ply": r.ply,
                "seed": args.seed,
                "variance_reduction": r.variance_reduction,
                "truncated": r.truncated,
                "passes": r.passes,
                "probabilities": probs_dict(r.probs),
                # a 95% CI needs >= 2 games: null (with the reason) when there is none
                "probabilities_ci95": probs_dict(r.probs_ci) if np.isfinite(r.probs_ci).all() else None,
                "equity": num(r.equity),
                "equity_ci95": num(r.equity_ci),
                "cubeful": num(r.cubeful),
                "cubeful_ci95": num(r.cubeful_ci),
                "cubeful_unit": None
                if cube is None
                else ("points per unit cube" if cube.is_money else "mwc"),
                "ci95_note": None if r.games >= 2 else "a 95% confidence interval needs at least 2 games",
                "seconds": round(r.seconds, 3),
            }
        )
        return 0
    luck = "luck-adjusted" if r.variance_reduction else "not luck-adjusted"
    print(
        f"Rollout of {position_id(board)} for X (on roll): {r.games} game{'s' if r.games != 1 else ''}, {r.ply}-ply, seed {args.seed}, "
        f"{luck}, {r.mean_plies:.0f} plies/game, {r.seconds:.1f} s"
    )
    print(f"{'':<8} {PROBS_HEADER} {'equity':>8}")
    print(f"{'mean':<8} {probs_text(r.probs)} {r.equity:>+8.3f}")
    if np.isfinite(r.probs_ci).all() and np.isfinite(r.equity_ci):
        ci = " ".join(f"±{100 * float(v):>5.1f}%" for v in r.probs_ci)
        print(f"{'95% CI':<8} {ci} {'±':>2}{r.equity_ci:>6.3f}")
    else:
        na = " ".join(f"{'n/a':>7}" for _ in r.probs_ci)
        print(f"{'95% CI':<8} {na} {'n/a':>8}   (a confidence interval needs at least 2 games)")
    if r.cubeful is not None:
        if cube.is_money:
            ci = f"± {r.cubeful_ci:.3f}" if np.isfinite(r.cubeful_ci) else "± n/a"
            print(f"Cubeful equity {r.cubeful:+.3f} {ci} (points per unit of the starting cube)")
        else:
            ci = f"± {100 * r.cubeful_ci:.1f}%" if np.isfinite(r.cubeful_ci) else "± n/a"
            print(f"Cubeful match-winning chance {100 * r.cubeful:.1f}% {ci}")
    if r.truncated:
        games = f"{r.truncated} game{'s' if r.truncated != 1 else ''}"
        plies = f"{args.truncate} pl{'ies' if args.truncate != 1 else 'y'}"
        print(f"{games} truncated after {plies} and scored by evaluation")
    if r.passes:
        print(
            f"{r.passes} of {r.games} games ended with a passed double (counted above as single games won or lost)"
        )
    return 0
