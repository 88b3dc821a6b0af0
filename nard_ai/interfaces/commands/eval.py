"""``nard eval ID [--ply N]``: probabilities and cubeless equity at each ply 0..N (default 2), for X on roll before rolling."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from nard_ai.interfaces.commands.common import (
    CUBE_XGID,
    START_ID,
    add_checkpoint,
    add_json,
    add_ply,
    add_position,
    checkpoint_missing,
    note_unused_roll,
    position_arg,
)
from nard_ai.interfaces.output import PROBS_HEADER, print_json, probs_dict, probs_text

NAME = "eval"
SUMMARY = "probabilities and cubeless equity at each ply"
DESCRIPTION = (
    "The network's win / gammon / backgammon probabilities and cubeless equity for X, on roll "
    "before rolling, at each search depth from 0-ply to --ply (default 2, the deepest the engine "
    "searches; deeper plies are slower). A --ply beyond 2 is an error (as in every command); without "
    "--ply, plies the checkpoint's evaluator cannot search are left out with a note on stderr. The position is valued "
    "before the roll: an ID's dice are not used (a note on stderr says so; nard hint ranks the plays "
    "of a roll). An ID whose game is over, or with a double or resignation awaiting its answer, is an error."
)
EXAMPLES = (f"nard eval {START_ID}", f"nard eval {CUBE_XGID} --ply 0 --json")


def configure(parser: argparse.ArgumentParser) -> None:
    """``ID``, ``--ply`` (default ``None``: as deep as the engine and checkpoint go), ``--json``, ``--checkpoint``."""
    add_position(parser)
    add_ply(parser, default=None, text="deepest ply to show (default: 2, or the deepest available)")
    add_json(parser)
    add_checkpoint(parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Evaluate the position at each ply and print the rows (text, or ``--json``); returns 0."""
    from nard_ai.agents import load_agent
    from nard_ai.core.ply import MAX_PLY
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.position_id import position_id

    board, state = position_arg(parser, args.position, playing=True)
    max_ply = MAX_PLY if args.ply is None else args.ply
    # as HTTP /eval and gnubg's eval: X's position before it rolls
    note_unused_roll(
        parser, state, "eval values the position before X rolls (nard hint ranks the roll's plays)"
    )
    rows = []
    for ply in range(max_ply + 1):
        try:
            agent = load_agent(args.checkpoint, ply=ply)
        except FileNotFoundError as exc:
            checkpoint_missing(parser, exc)
        except ValueError as exc:
            if ply == 0:
                # 0-ply is every checkpoint's depth: the checkpoint itself is at fault (corrupt, mismatched),
                # said in the words of every other command (common.agent_arg), not blamed on --ply
                parser.error(str(exc))
            if args.ply is not None:
                parser.error(f"--ply {args.ply}: {exc}")
            # only without --ply: the default depth goes as deep as the checkpoint's evaluator can
            print(f"nard eval: note: {ply}-ply and deeper not shown: {exc}", file=sys.stderr)
            break
        if ply == 0:
            agent.value(board[None])  # untimed: the first call loads the compiled kernels
        t0 = time.perf_counter()
        probs, equity = agent.value(board[None])
        rows.append((ply, np.asarray(probs[0], dtype=np.float64), float(equity[0]), time.perf_counter() - t0))
    if args.json:
        print_json(
            {
                "position_id": position_id(board),
                "evaluations": [
                    {
                        "ply": ply,
                        "probabilities": probs_dict(p),
                        "equity": round(e, 6),
                        "seconds": round(s, 4),
                    }
                    for ply, p, e, s in rows
                ],
            }
        )
        return 0
    print(render_board(board))
    print()
    print("Cubeless evaluation for X (on roll, before rolling), equity in points per game:")
    print(f"{'ply':>3} {PROBS_HEADER} {'equity':>8} {'time':>8}")
    for ply, p, e, s in rows:
        print(f"{ply:>3} {probs_text(p)} {e:>+8.3f} {s:>7.2f}s")
    return 0
