"""``nard ubgi``: the engine over the Universal Backgammon Interface v0.2 on stdin/stdout.

The protocol, its replies and error codes, and every choice made where the
specification is silent are in :mod:`nard_ai.interfaces.ubgi`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from nard_ai.interfaces.commands.common import add_checkpoint, add_ply

NAME = "ubgi"
SUMMARY = "serve the engine over UBGI v0.2 (Universal Backgammon Interface) on stdin/stdout"
DESCRIPTION = (
    "Speak the Universal Backgammon Interface v0.2 on stdin/stdout, for bot frameworks, GUIs and "
    "engine-duel tools: ubgi/ubgiok, isready/readyok, newgame, position gnubgid ID | position xgid XGID, "
    "dice D1 D2, go chequer|cube|turn answered bestmove / bestcube / bestturn, set/get/keys, quit. "
    "Positions are seen from the side on roll. The setting engine.ply counts plies UBGI's way, root "
    "included: UBGI ply 1 is nard's (and gnubg's) 0-ply, so engine.ply = --ply + 1. Errors are "
    "'error bad_command|bad_value|bad_state|unsupported DETAIL' lines; the engine reads on. Log lines "
    "go to stderr."
)
EXAMPLES = (
    "printf 'ubgi\\nisready\\nposition gnubgid 4HPwATDgc/ABMA\\ndice 3 1\\ngo\\nquit\\n' | nard ubgi",
    "printf 'ubgi\\nset engine.ply 2\\nposition xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10\\n"
    "go turn\\nquit\\n' | nard ubgi --filter narrow",
)


def configure(parser: argparse.ArgumentParser) -> None:
    """``--checkpoint``, ``--ply`` (nard numbering, the starting ``engine.ply`` minus one), ``--filter``."""
    from nard_ai.search.filters import MAX_PLY, MOVE_FILTERS

    add_checkpoint(parser)
    add_ply(
        parser,
        text=f"starting search depth in nard/gnubg numbering, 0..{MAX_PLY} (default 0); "
        "UBGI's engine.ply is N + 1",
    )
    parser.add_argument(
        "--filter",
        default="normal",
        choices=tuple(MOVE_FILTERS),
        help="starting move-filter preset of deeper searches, UBGI's engine.filter (default: normal)",
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Serve UBGI until ``quit`` or the end of input; a missing checkpoint is a usage error (status 2)."""
    from nard_ai.interfaces.ubgi import serve_ubgi

    if args.checkpoint is not None and not Path(args.checkpoint).is_file():
        from nard_ai.model.network import shipped_checkpoints_note

        problem = "is a directory" if Path(args.checkpoint).is_dir() else "does not exist"
        parser.error(
            f"no checkpoint file {args.checkpoint!r} (the path {problem}); {shipped_checkpoints_note()}"
        )
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")
    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # bytes: a line that is not UTF-8 is quoted, not fatal
    return serve_ubgi(stdin, sys.stdout, checkpoint=args.checkpoint, ply=args.ply + 1, filters=args.filter)
