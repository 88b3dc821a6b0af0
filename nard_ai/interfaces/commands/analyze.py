"""``nard analyze MATCH.mat [--ply N]``: every checker play and cube action of a match, the equity lost,
skill marks, error rates (:mod:`nard_ai.reports.analysis`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from nard_ai.interfaces.commands.common import (
    add_checkpoint,
    add_json,
    add_ply,
    add_progress,
    agent_arg,
    progress_bar,
)
from nard_ai.interfaces.output import print_json

#: The sample match record in the source tree, named by its absolute path so the examples run anywhere.
SAMPLE_MAT = Path(__file__).resolve().parents[3] / "tests" / "data" / "match_3pt.mat"


def _examples() -> tuple[str, ...]:
    if SAMPLE_MAT.is_file():
        path = shlex.quote(str(SAMPLE_MAT))
        return (f"nard analyze {path}", f"nard analyze {path} --errors-only --json")
    return ("nard analyze MATCH.mat", "nard analyze MATCH.mat --errors-only --json")


NAME = "analyze"
SUMMARY = "analyse every move and cube action of a .mat match"
DESCRIPTION = (
    "Check every checker play and cube action of a Jellyfish .mat match against the network at "
    "--ply: the equity each decision lost (normalised equity per unit cube, EMG; checker plays by "
    "cubeless equity, or cubeless match equity at the score in match play; cube actions by "
    "nard_ai.cube.decision at the score), marks ?! doubtful, ? bad, ?? very bad (gnubg 1.07's thresholds "
    "0.03 / 0.06 / 0.12), and each player's error rate in millipoints per decision. Each decision "
    "is named by the record's own numbering (game, move N), player) and its line in the file. A record "
    "with a doubled opening roll is refused (docs/RULES.md 2); a later game naming other players is "
    "a warning on stderr, and game 1's names are kept. A progress "
    "bar shows on stderr when it is a terminal (--progress / --no-progress force it on / off). "
    "The examples use the sample record of the source tree (tests/data/match_3pt.mat); export "
    "your own from gnubg with `export match mat FILE`."
)
EXAMPLES = _examples()


def thresholds_arg(text: str):
    """argparse type: three comma-separated skill thresholds ``doubtful,bad,very_bad``."""
    from nard_ai.reports.analysis import SkillThresholds

    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
        if len(values) != 3:
            raise ValueError(f"give three numbers doubtful,bad,very_bad, got {len(values)}")
        return SkillThresholds(*values)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def configure(parser: argparse.ArgumentParser) -> None:
    """``MATCH.mat``, ``--ply``, ``--thresholds``, ``--errors-only``, ``--progress``, ``--json``, ``--checkpoint``."""
    parser.add_argument(
        "match", metavar="MATCH.mat", help="the match record (Jellyfish .mat, as gnubg exports)"
    )
    add_ply(parser)
    parser.add_argument(
        "--thresholds",
        type=thresholds_arg,
        default=None,
        metavar="D,B,VB",
        help="skill thresholds doubtful,bad,very_bad in EMG (default: 0.03,0.06,0.12)",
    )
    parser.add_argument(
        "--errors-only",
        action="store_true",
        help="list only the decisions with a mark (text and --json; the totals stay complete)",
    )
    add_progress(parser)
    add_json(parser)
    add_checkpoint(parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Analyse the match record and print the analysis (text, or ``--json``); returns 0.

    A record :func:`~nard_ai.formats.mat.read_mat` refuses (a doubled opening roll among the rest)
    is ``parser.error`` (exit 2) naming the file and the line; each of the match's ``warnings`` (a
    game naming other players) is a ``nard analyze: warning: FILE: line N: ...`` line on stderr, and
    the analysis goes on with game 1's names.
    """
    from nard_ai.formats.mat import read_mat
    from nard_ai.reports.analysis import GNUBG_SKILL, analyze_match, count_records, format_analysis

    try:
        with open(args.match, "rb") as f:
            data = f.read()
    except OSError as exc:
        parser.error(f"cannot read {args.match}: {exc.strerror or exc}")
    try:
        match = read_mat(data)  # UTF-8, else Windows-1252 / Latin-1 (older exports): formats.mat.decode_mat
    except ValueError as exc:
        parser.error(f"{args.match}: {exc}")
    for warning in match.warnings:  # gnubg's import takes such names silently; say it
        print(f"{parser.prog}: warning: {args.match}: {warning}", file=sys.stderr)
    from nard_ai.cube.met import MAX_AWAY, MET_NAME

    if match.length > MAX_AWAY:  # a record may hold up to 64 points (gnubg's); cube analysis needs the MET
        parser.error(
            f"{args.match}: a {match.length}-point match: the analysis takes money play or matches of "
            f"1..{MAX_AWAY} points (the range of the {MET_NAME} match equity table)"
        )
    agent = agent_arg(parser, args.checkpoint, args.ply)
    bar = progress_bar(args.progress, count_records(match), "analysing", "record")
    last = 0

    def progress(done: int) -> None:
        nonlocal last
        bar.update(done - last)
        last = done

    try:
        analysis = analyze_match(match, agent, thresholds=args.thresholds or GNUBG_SKILL, progress=progress)
    except ValueError as exc:
        parser.error(f"{args.match}: {exc}")
    finally:
        bar.close()
    if args.json:
        print_json(analysis.to_dict(errors_only=args.errors_only))
    else:
        print(format_analysis(analysis, errors_only=args.errors_only))
    return 0
