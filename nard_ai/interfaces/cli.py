"""The ``nard`` command line: argument parsing and output only; the engine does the work.

Commands (``nard COMMAND --help`` shows each one's options and examples)
-----------------------------------------------------------------------
* ``nard show ID``: the board (side on roll at the bottom, pip counts), its
  IDs, and the cube, score and dice of the ID.
* ``nard hint ID [--dice 31] [--ply N]``: every legal play of the roll, best
  first, with cubeless equity, the difference from the best, probabilities;
  in match play ranked by cubeless match-winning chance at the score.
* ``nard eval ID [--ply N]``: probabilities and cubeless equity at each ply
  0..N (default 2).
* ``nard cube ID [--ply N]``: the cube decision: no double / double, take /
  double, pass equities, the right action, the error of each alternative.
* ``nard rollout ID [--games N] [--cubeful]``: a Monte Carlo rollout with 95%
  confidence intervals.
* ``nard play [--ply N] [--cube]``: a game against the engine in the terminal
  (:mod:`nard_ai.interfaces.terminal`).
* ``nard analyze MATCH.mat [--ply N]``: every checker play and cube action of
  a match, the equity lost, skill marks, error rates (:mod:`nard_ai.reports.analysis`).
* ``nard serve [--port 8080]``: the HTTP JSON backend (:mod:`nard_ai.interfaces.http`),
  or gnubg's external-player protocol (``--external``; ``--max-connections``,
  ``--idle-timeout``: :mod:`nard_ai.interfaces.external`). The address is bound
  first (a busy port or a bad host is a one-line error); the port bound is
  logged (port 0: one the system picks).

``ID`` is a gnubg Position ID (``4HPwATDgc/ABMA``), a combined
``PositionID:MatchID`` or an XGID; the board is seen from its side on roll
(``X``), and every probability and equity printed is that side's, in points
per game at cube 1 unless said otherwise. The cube, score and dice of a Match
ID or XGID are used: ``hint`` takes the roll from the ID when ``--dice`` is
not given, ``cube`` and ``rollout --cubeful`` the cube and score. ``--ply``
is the search depth in gnubg's numbering (0 = the network's static
evaluation). ``--json`` prints one JSON object instead of text.

Money or match: with a Match ID or XGID that holds a match length, ``hint``
ranks the plays by their cubeless match-winning chance (MWC) at the score
(:func:`nard_ai.reports.analysis.score_plays`), not by money equity, and says so.

Sign convention: a play's error is shown as gnubg shows it, as its
difference from the best play, a number <= 0 (``-0.034``): ``hint`` prints
it in the ``diff`` column and gives the same number as ``diff`` in
``--json`` (in MWC in match play, else in cubeless equity). ``analyze``
prints decisions the same way; its JSON ``loss`` is that amount as a
positive number (it sums into the error rates).

Bad input (a malformed ID, dice outside 1..6, an illegal move, a missing
file, a corrupt ``.mat`` record or checkpoint, a ply the engine cannot
search) prints one ``nard CMD: error: ...`` line on stderr and exits with
status 2; Ctrl-C exits with status 130.

First run: when numba has to compile the engine's kernels (a cold on-disk
cache: the first run after an install or an update, about 30 s), one line
``nard: compiling the rules core ... (first run only, about 30 s)...`` goes
to stderr just before, if stderr is a terminal (scripts that read stderr see
nothing); runs that load the kernels from the cache print nothing
(:mod:`nard_ai.core.compile_notice`).

Also here: :func:`parse_dataclass_args`, the CleanRL-style argument parser
that ``train.py`` and ``evaluate.py`` use (one flag per dataclass field, the
docstring under each field as its help text).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import os
import re
import shlex
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from nard_ai.distributed import add_ray_argument, executor_from_args

__all__ = [
    "main",
    "build_parser",
    "parse_dataclass_args",
    "parse_dice",
    "describe_state",
    "format_hint",
    "format_cube",
]

T = TypeVar("T")


def _field_docs(cls: type) -> dict[str, str]:
    """The string literal under each field of a dataclass (CleanRL/tyro convention)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    docs: dict[str, str] = {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    for node, nxt in zip(body, body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def parse_dataclass_args(cls: type[T], argv: Sequence[str] | None = None) -> T:
    """Parse command-line flags into a dataclass, one ``--field-name`` per field.

    ``bool`` fields become ``--flag/--no-flag``; the docstring under each field
    is its help text; the class docstring is the description. If the dataclass
    has a ``validate()`` method, it is called on the parsed values; a
    ``ValueError`` it raises becomes an argparse error (usage, one
    ``error:`` line, exit status 2) before the caller runs.

    Args:
        cls: a dataclass whose fields all have defaults (int, float, str, bool).
        argv: arguments (default ``sys.argv[1:]``).
    """
    parser = _dataclass_parser(cls)
    obj = cls(**vars(parser.parse_args(argv)))
    validate = getattr(obj, "validate", None)
    if callable(validate):
        try:
            validate()
        except ValueError as exc:
            parser.error(str(exc))
    return obj


def given_fields(cls: type, argv: Sequence[str] | None = None) -> set[str]:
    """The fields of ``cls`` that ``argv`` sets explicitly (for :func:`parse_dataclass_args`'s flags)."""
    return set(vars(_dataclass_parser(cls, suppress=True).parse_args(argv)))


def _dataclass_parser(cls: type, suppress: bool = False) -> argparse.ArgumentParser:
    docs = _field_docs(cls)
    parser = argparse.ArgumentParser(
        description=inspect.cleandoc(cls.__doc__ or ""),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name] if not isinstance(hints[f.name], str) else eval(hints[f.name])  # noqa: S307
        default = argparse.SUPPRESS if suppress else f.default
        help_text = docs.get(f.name, "")
        if kind is bool:
            parser.add_argument(
                flag, dest=f.name, action=argparse.BooleanOptionalAction, default=default, help=help_text
            )
        else:
            parser.add_argument(flag, dest=f.name, type=kind, default=default, help=help_text)
    return parser


# --------------------------------------------------------------------------- argument handling


_DIE_TOKEN = re.compile(r"[^-\s]|-\d")  # one character (a die, or a typo for one), or a negative digit


def _join_dice_tokens(args: Sequence[str]) -> list[str]:
    """``--dice 3 1`` as one token ``--dice "3 1"``, so that an ID after it stays the positional argument.

    ``--dice`` takes one token (``31``, ``3-1``, ``3,1``); the two-token
    spelling ``3 1`` is joined here with the run of one-character tokens
    (other than ``-``; ``-1`` too) that follows the flag, digits or not, so
    that :func:`parse_dice` sees them all and names a bad one (``--dice a
    1``: "got 'a'", not argparse's "unrecognized arguments: 1"; ``--dice 3 1
    5`` becomes ``"3 1 5"``, which it refuses). ``--dice=3 1`` is joined the
    same way. No ID or option is that short. Nothing after ``--`` is touched.
    """
    out: list[str] = []
    i = 0
    args = list(args)
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            out.append(token)
            out.extend(args[i:])
            break
        if token == "--dice" or (token.startswith("--dice=") and len(token) == len("--dice=") + 1):
            run = [] if token == "--dice" else [token[len("--dice=") :]]
            while i < len(args) and _DIE_TOKEN.fullmatch(args[i]):
                run.append(args[i])
                i += 1
            out.append("--dice")
            if run:
                out.append(" ".join(run))
            continue
        out.append(token)
    return out


class _Parser(argparse.ArgumentParser):
    """argparse with errors as one line (``nard hint: error: ...``) on stderr and exit status 2.

    ``--dice 3 1`` is read as one option value wherever it stands (before or
    after the ID): see :func:`_join_dice_tokens`.
    """

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        args = sys.argv[1:] if args is None else args
        return super().parse_known_args(_join_dice_tokens(args), namespace)


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text}")
    return value


def _thresholds(text: str):
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


_DICE_PAIR = re.compile(r"(\S+?)(?:\s*[-,]\s*|\s+)(\S+)")  # two dice apart: a space, '-' or ','


def parse_dice(tokens: Sequence[str]) -> tuple[int, int]:
    """Two dice from ``["31"]``, ``["3", "1"]``, ``["3 1"]``, ``["3-1"]`` or ``["3,1"]``, larger die first.

    Raises:
        ValueError: unless the text is exactly two dice, each 1..6: "not two
            dice" for another count, else naming the first bad die
            (``"a 1"``: "each die must be 1..6, got 'a'"; ``"71"``: "got 7").
    """
    text = " ".join(tokens)
    body = text.strip()
    pair = _DICE_PAIR.fullmatch(body)
    if len(body) == 2:
        parts = list(body)  # "31"
    elif pair:
        parts = list(pair.groups())  # "3 1", "3-1", "3,1"
    else:
        raise ValueError(f"{text!r} is not two dice (write 31, 3-1 or 3 1)")
    dice = []
    for part in parts:
        if not (part.isdigit() and part.isascii()):
            raise ValueError(f"each die must be 1..6, got {part!r}")
        if not 1 <= int(part) <= 6:
            raise ValueError(f"each die must be 1..6, got {int(part)}")
        dice.append(int(part))
    return max(dice), min(dice)


def _position(parser: argparse.ArgumentParser, text: str, live: bool = True):
    """``(board, state)`` of an ID, or a one-line error."""
    from nard_ai.core.board import game_result
    from nard_ai.reports.analysis import read_position

    try:
        board, state = read_position(text)
    except ValueError as exc:
        parser.error(f"bad position {text!r}: {exc}")
    if live and game_result(board) != 0:
        parser.error(f"the game in position {text!r} is already over")
    return board, state


def _agent(parser: argparse.ArgumentParser, checkpoint: str | None, ply: int):
    """The network agent at ``ply``, or a one-line error (missing/corrupt checkpoint, unsupported ply)."""
    from nard_ai.agents import load_agent

    try:
        return load_agent(checkpoint, ply=ply)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))


def _cube_state(parser: argparse.ArgumentParser, state):
    from nard_ai.reports.analysis import cube_state_of

    try:
        return cube_state_of(state)
    except ValueError as exc:
        parser.error(f"the cube or score of the ID cannot be analysed: {exc}")


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, allow_nan=False))


def _num(value: float | None) -> float | None:
    """A float for JSON (NaN and None become null)."""
    return None if value is None or not np.isfinite(value) else round(float(value), 6)


def _probs_dict(p) -> dict[str, float]:
    from nard_ai.model.network import GNUBG_OUTPUTS

    return {name: round(float(v), 6) for name, v in zip(GNUBG_OUTPUTS, p, strict=True)}


def _probs_text(p) -> str:
    return " ".join(f"{100 * float(v):>6.1f}%" for v in p)


_PROBS_HEADER = f"{'win':>7} {'w-g':>7} {'w-bg':>7} {'l-g':>7} {'l-bg':>7}"


def _add_position(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "position",
        metavar="ID",
        help="gnubg Position ID (4HPwATDgc/ABMA), PositionID:MatchID, or XGID=...",
    )


def _add_checkpoint(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--checkpoint",
        default=None,
        help="network checkpoint (default: the shipped checkpoints/nard-rich.pt)",
    )


def _add_ply(p: argparse.ArgumentParser, default: int | None = 0, text: str = "") -> None:
    p.add_argument(
        "--ply",
        type=_non_negative_int,
        default=default,
        help=text or f"search depth, gnubg numbering: 0 = static evaluation (default: {default})",
    )


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


# --------------------------------------------------------------------------- show


def describe_state(state) -> list[str]:
    """Lines describing the cube, score, dice and turn of a Match ID/XGID state, from the mover's side (X)."""
    from nard_ai.core.game import CENTERED

    if state is None:
        return [
            "No match state: X is on roll in a money game, cube 1 centred (a Match ID or XGID sets them)."
        ]
    me = state.player_on_roll
    lines = []
    if state.match_length:
        mine, theirs = state.score[me], state.score[1 - me]
        crawford = ", Crawford game" if state.crawford else ""
        lines.append(
            f"{state.match_length}-point match, score X {mine}, O {theirs} "
            f"(X {state.match_length - mine}-away, O {state.match_length - theirs}-away){crawford}"
        )
    else:
        lines.append(
            "Money game"
            + (", Jacoby rule" if state.jacoby else "")
            + (", beavers allowed" if state.beavers else "")
        )
    if state.cube_owner == CENTERED:
        lines.append(f"Cube {state.cube_value}, centred")
    else:
        lines.append(f"Cube {state.cube_value}, owned by {'X' if state.cube_owner == me else 'O'}")
    if state.resignation:
        # the Match ID's resigner is its player on roll (X here); it offers to lose that many points x the cube
        kind = {1: "a single game", 2: "a gammon", 3: "a backgammon"}[int(state.resignation)]
        points = int(state.resignation) * state.cube_value
        lines.append(
            f"X offers to resign {kind} ({points} point{'s' if points != 1 else ''} at cube "
            f"{state.cube_value}); O must accept or reject"
        )
    if state.double_offered:
        lines.append(f"X has doubled to {2 * state.cube_value}; O must take or pass")
    elif state.dice != (0, 0):
        lines.append(f"X has rolled {state.dice[0]}-{state.dice[1]}")
    else:
        lines.append("X is on roll, before rolling")
    return lines


def _show(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.match_id import gnubg_id
    from nard_ai.formats.xgid import to_xgid

    board, state = _position(parser, args.position, live=False)
    dice = state.dice if state is not None and state.dice != (0, 0) else None
    print(render_board(board, dice))
    if state is not None:
        print(f" GNU Backgammon ID: {gnubg_id(board, state)}")
    try:
        print(f" {to_xgid(board, state)}")
    except ValueError:
        pass  # a state XGID cannot express (a resignation, a finished game): only gnubg's ID then
    for line in describe_state(state):
        print(f" {line}")
    return 0


# --------------------------------------------------------------------------- hint


def _scored(ranked: Any, cube=None):
    """``ranked`` as :class:`~nard_ai.reports.analysis.ScoredPlays` (a :class:`~nard_ai.search.lookahead.RankedPlays`
    is ranked for ``cube``: money when ``None``)."""
    from nard_ai.reports.analysis import ScoredPlays, score_plays

    return ranked if isinstance(ranked, ScoredPlays) else score_plays(ranked, cube)


def format_hint(board: np.ndarray, dice: tuple[int, int], ranked: Any, top: int = 0) -> str:
    """The ranked plays as a table, side on roll's view, best first.

    Args:
        board: ``(26,)`` int8, side on roll's view.
        dice: the roll.
        ranked: a :class:`~nard_ai.search.lookahead.RankedPlays` (money: cubeless
            equity) or a :class:`~nard_ai.reports.analysis.ScoredPlays` (match play:
            ranked by cubeless MWC at the score).
        top: show only the best ``top`` plays (0: all).

    Returns:
        The table: money play ``equity`` (cubeless, points per game) and
        ``diff``; match play ``mwc``, ``diff`` (in MWC) and ``emg`` (the MWC
        as normalised equity); then the five probabilities. ``diff`` is the
        play's value minus the best play's, negative, gnubg's convention
        (blank for the best).
    """
    from nard_ai.formats.notation import play_notation

    scored = _scored(ranked)
    plies = scored.plies
    deep = len(plies) and int(np.max(plies)) > 0  # show each play's depth
    ply_head = "ply  " if deep else ""
    if scored.by_mwc:
        head = f"{'mwc':>7} {'diff':>7} {'emg':>7}"
    else:
        head = f"{'equity':>7} {'diff':>7}"
    rows = [f"{'#':>3}  {'play':<24} {ply_head}{head} {_PROBS_HEADER}"]
    n = len(scored) if top <= 0 else min(top, len(scored))
    diff = scored.diff
    for i in range(n):
        move = play_notation(board, scored.afterstates[i], dice) or "(no move)"
        depth = f"{int(plies[i]):>3}  " if deep else ""
        if scored.by_mwc:
            d = "" if i == 0 else f"{100 * diff[i]:+.1f}%"
            values = f"{100 * scored.mwc[i]:>6.1f}% {d:>7} {scored.emg[i]:>+7.3f}"
        else:
            d = "" if i == 0 else f"{diff[i]:+.3f}"
            values = f"{scored.equity[i]:>+7.3f} {d:>7}"
        rows.append(f"{i + 1:>3}  {move:<24} {depth}{values} {_probs_text(scored.probs[i])}")
    if n < len(scored):
        rows.append(f"     ... {len(scored) - n} more")
    return "\n".join(rows)


def _match_text(cube) -> str:
    crawford = ", Crawford game" if cube.crawford else ""
    owner = {"centred": "centred", "on_roll": "owned by X", "opponent": "owned by O"}[cube.owner]
    return (
        f"{cube.match_length}-point match, X {cube.score[0]}, O {cube.score[1]}{crawford}, "
        f"cube {cube.value} {owner}"
    )


def _hint(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.notation import play_notation
    from nard_ai.formats.position_id import position_id

    board, state = _position(parser, args.position)
    if args.dice is not None:
        try:
            dice = parse_dice([args.dice])
        except ValueError as exc:
            parser.error(f"bad dice: {exc}")
    elif state is not None and state.dice != (0, 0):
        dice = (max(state.dice), min(state.dice))  # an XGID may write the lower die first
    else:
        parser.error("give the roll with --dice (e.g. --dice 31); the ID has no dice")
    cube = _cube_state(parser, state)
    agent = _agent(parser, args.checkpoint, args.ply)
    scored = _scored(agent.rank_plays(board, dice), cube)
    if args.json:
        n = len(scored) if args.top <= 0 else min(args.top, len(scored))
        diff = scored.diff
        plays = []
        for i in range(n):
            row = {
                "rank": i + 1,
                "play": play_notation(board, scored.afterstates[i], dice),
                "equity": round(float(scored.equity[i]), 6),
            }
            if scored.by_mwc:
                row["mwc"] = round(float(scored.mwc[i]), 6)
                row["emg"] = round(float(scored.emg[i]), 6)
            row["diff"] = round(float(diff[i]), 6)
            row["depth"] = int(scored.plies[i])  # the ply it was valued at
            row["probabilities"] = _probs_dict(scored.probs[i])
            plays.append(row)
        _print_json(
            {
                "position_id": position_id(board),
                "dice": list(dice),
                "ply": agent.ply,
                "agent": agent.name,
                "ranked_by": scored.ranked_by,
                "diff_unit": "mwc" if scored.by_mwc else "cubeless equity, points per game",
                "match": None
                if not scored.by_mwc
                else {
                    "length": cube.match_length,
                    "score": list(cube.score),
                    "crawford": cube.crawford,
                    "cube_value": cube.value,
                    "cube_owner": cube.owner,
                },
                "legal_plays": len(scored),
                "plays": plays,
            }
        )
        return 0
    print(render_board(board, dice))
    print()
    count = f"{len(scored)} legal play{'s' if len(scored) != 1 else ''} for {dice[0]}-{dice[1]}"
    if scored.by_mwc:
        print(
            f"{count}, ranked by {agent.ply}-ply cubeless MWC at the score ({_match_text(cube)}; {agent.name});"
        )
        print(
            "mwc: match-winning chance (Kazaross-XG2), diff: against the best, emg: the MWC as normalised "
            "equity; probabilities for the side on roll:"
        )
    else:
        print(
            f"{count}, ranked by {agent.ply}-ply cubeless equity ({agent.name}); "
            "diff: against the best; probabilities for the side on roll:"
        )
    print(format_hint(board, dice, scored, args.top))
    return 0


# --------------------------------------------------------------------------- eval


def _eval(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from nard_ai.agents import load_agent
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.position_id import position_id
    from nard_ai.search.lookahead import MAX_PLY

    board, _ = _position(parser, args.position)
    if args.ply is not None and args.ply > MAX_PLY:
        parser.error(f"--ply {args.ply}: the engine searches 0..{MAX_PLY} plies (gnubg numbering)")
    max_ply = MAX_PLY if args.ply is None else args.ply
    rows = []
    for ply in range(max_ply + 1):
        try:
            agent = load_agent(args.checkpoint, ply=ply)
        except FileNotFoundError as exc:
            parser.error(str(exc))
        except ValueError as exc:
            if args.ply is not None or ply == 0:
                parser.error(f"--ply {args.ply if args.ply is not None else ply}: {exc}")
            # only without --ply: the default depth goes as deep as the checkpoint's evaluator can
            print(f"nard eval: note: {ply}-ply and deeper not shown: {exc}", file=sys.stderr)
            break
        if ply == 0:
            agent.evaluate(board[None])  # untimed: the first call loads the compiled kernels
        t0 = time.perf_counter()
        probs, equity = agent.evaluate(board[None])
        rows.append((ply, np.asarray(probs[0], dtype=np.float64), float(equity[0]), time.perf_counter() - t0))
    if args.json:
        _print_json(
            {
                "position_id": position_id(board),
                "evaluations": [
                    {
                        "ply": ply,
                        "probabilities": _probs_dict(p),
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
    print(f"{'ply':>3} {_PROBS_HEADER} {'equity':>8} {'time':>8}")
    for ply, p, e, s in rows:
        print(f"{ply:>3} {_probs_text(p)} {e:>+8.3f} {s:>7.2f}s")
    return 0


# --------------------------------------------------------------------------- cube


def _cube_unavailable_reason(cube) -> str:
    from nard_ai.cube import OPPONENT

    if cube.owner == OPPONENT:
        return "O owns the cube"
    if cube.crawford:
        return "this is the Crawford game"
    return "the cube is dead for X (winning the current cube already wins X the match)"


def format_cube(decision, cube) -> str:
    """gnubg-style cube analysis text for the side on roll (X)."""
    from nard_ai.reports.analysis import cube_action_text
    from nard_ai.reports.position import cube_errors_text

    d = decision
    lines = [
        f"Cubeless probabilities for X: {'  '.join(f'{n} {100 * v:.1f}%' for n, v in zip(('win', 'w-g', 'w-bg', 'l-g', 'l-bg'), d.probs, strict=True))}",
        f"Cubeless equity {d.cubeless_equity:+.3f}" + ("" if cube.is_money else " (normalised match equity)"),
    ]
    mwc = {"no_double": d.no_double_mwc, "double_take": d.double_take_mwc, "double_pass": d.double_pass_mwc}
    if not d.cube_available:
        lines.append(f"X cannot double: {_cube_unavailable_reason(cube)}.")
        extra = "" if cube.is_money else f"  (MWC {100 * d.no_double_mwc:.1f}%)"
        lines.append(f"Cubeful equity (no double): {d.no_double:+.3f}{extra}")
        return "\n".join(lines)
    unit = "per unit of the current cube" if cube.is_money else "normalised match equity at the current cube"
    lines.append(f"Cubeful equities for X ({unit}):")
    names = {"no_double": "No double", "double_take": "Double, take", "double_pass": "Double, pass"}
    if cube.owner == "on_roll":  # gnubg: "Redouble" when the side on roll owns the cube
        names = {
            k: v.replace("Double", "Redouble").replace("No double", "No redouble") for k, v in names.items()
        }
    right = "no_double" if d.action.startswith(("no_double", "too_good")) else d.action
    # gnubg's order: the right action first, then the two doubles, then no double
    order = {
        "no_double": ["no_double", "double_take", "double_pass"],
        "double_take": ["double_take", "double_pass", "no_double"],
        "double_pass": ["double_pass", "double_take", "no_double"],
    }[right]
    top = d.equities[right]
    for i, key in enumerate(order, start=1):
        value = d.equities[key]
        diff = "" if i == 1 else f"  ({value - top:+.3f})"
        extra = "" if mwc[key] is None else f"  MWC {100 * mwc[key]:.1f}%"
        lines.append(f"{i}. {names[key]:<16} {value:+.3f}{diff}{extra}")
    lines.append(f"Proper cube action: {cube_action_text(d)} (take point {100 * d.take_point:.1f}%)")
    if d.beaver:
        # beavers (money): O answers a double by beavering, the cube goes to 4x and O keeps it
        lines.append(f"O beavers a double: X's equity after double, beaver {2 * d.double_take:+.3f}")
    lines.append(f"Errors: {cube_errors_text(d)}")
    return "\n".join(lines)


def _cube(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from nard_ai.cube import cube_decision
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.position_id import position_id
    from nard_ai.reports.analysis import cube_action_text

    board, state = _position(parser, args.position)
    cube = _cube_state(parser, state)
    agent = _agent(parser, args.checkpoint, args.ply)
    try:
        d = cube_decision(board, cube, agent=agent)
    except ValueError as exc:
        parser.error(str(exc))
    if args.json:
        _print_json(
            {
                "position_id": position_id(board),
                "ply": agent.ply,
                "cube": {
                    "value": cube.value,
                    "owner": cube.owner,
                    "match_length": cube.match_length,
                    "score": list(cube.score),
                    "crawford": cube.crawford,
                    "jacoby": cube.jacoby,
                    "beavers": cube.beavers,
                },
                "probabilities": _probs_dict(d.probs),
                "cubeless_equity": _num(d.cubeless_equity),
                "cube_available": d.cube_available,
                "action": d.action,
                "proper_action": cube_action_text(d),
                "beaver": d.beaver,
                "equities": {k: _num(v) for k, v in d.equities.items()},
                "mwc": None
                if cube.is_money
                else {
                    "no_double": _num(d.no_double_mwc),
                    "double_take": _num(d.double_take_mwc),
                    "double_pass": _num(d.double_pass_mwc),
                },
                "errors": {k: _num(v) for k, v in d.errors.items()},
                "take_point": _num(d.take_point),
                "efficiency": _num(d.efficiency),
            }
        )
        return 0
    print(render_board(board))
    print()
    kind = (
        "money game"
        if cube.is_money
        else f"{cube.match_length}-point match at X {cube.score[0]}, O {cube.score[1]}"
    )
    owner = {"centred": "centred", "on_roll": "owned by X", "opponent": "owned by O"}[cube.owner]
    print(f"Cube analysis, {agent.ply}-ply ({agent.name}): {kind}, cube {cube.value} {owner}")
    print(format_cube(d, cube))
    return 0


# --------------------------------------------------------------------------- rollout


def _rollout_games(text: str) -> int:
    """argparse type of ``rollout --games``: an integer 1 .. :data:`nard_ai.play.rollout.MAX_GAMES`."""
    from nard_ai.play.rollout import MAX_GAMES

    value = _positive_int(text)
    if value > MAX_GAMES:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_GAMES:,} games in one rollout (about three hours at 0-ply; run several seeds "
            f"for more), got {value:,}"
        )
    return value


def _rollout(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from tqdm import tqdm

    from nard_ai.formats.position_id import position_id
    from nard_ai.play.rollout import rollout

    if args.cubeful and args.luck:
        parser.error("--luck is not available with --cubeful: cubeful rollouts are not luck-adjusted")
    board, state = _position(parser, args.position)
    cube = _cube_state(parser, state) if args.cubeful else None
    agent = _agent(parser, args.checkpoint, args.ply)
    executor = executor_from_args(args, parser)  # --ray / --shard-games; None: the local lockstep
    # --progress forces the bar, --no-progress hides it; by default it shows when stderr is a terminal
    show = args.progress if args.progress is not None else _is_terminal(sys.stderr)
    bar = tqdm(
        total=args.games,
        desc="rolling out",
        unit="game",
        file=sys.stderr,
        disable=not show,
        leave=True,
        **_bar_size(sys.stderr),
    )
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
        _print_json(
            {
                "position_id": position_id(board),
                "games": r.games,
                "ply": r.ply,
                "seed": args.seed,
                "variance_reduction": r.variance_reduction,
                "truncated": r.truncated,
                "passes": r.passes,
                "probabilities": _probs_dict(r.probs),
                # a 95% CI needs >= 2 games: null (with the reason) when there is none
                "probabilities_ci95": _probs_dict(r.probs_ci) if np.isfinite(r.probs_ci).all() else None,
                "equity": _num(r.equity),
                "equity_ci95": _num(r.equity_ci),
                "cubeful": _num(r.cubeful),
                "cubeful_ci95": _num(r.cubeful_ci),
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
    print(f"{'':<8} {_PROBS_HEADER} {'equity':>8}")
    print(f"{'mean':<8} {_probs_text(r.probs)} {r.equity:>+8.3f}")
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
        print(f"{r.truncated} games truncated after {args.truncate} plies and scored by evaluation")
    if r.passes:
        print(
            f"{r.passes} of {r.games} games ended with a passed double (counted above as single games won or lost)"
        )
    return 0


# --------------------------------------------------------------------------- play


def _play(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import secrets

    from nard_ai.interfaces.terminal import play_session

    start, start_cube, start_dice = None, None, None
    if args.position is not None:
        start, state = _position(parser, args.position)
        start_cube, start_dice = _play_start(parser, state)
    agent = _agent(parser, args.checkpoint, args.ply)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    print(f"nard_ai: you (X) against {agent.name}. Seed {seed}. Type help for help, quit to stop.")
    result = play_session(
        agent,
        np.random.default_rng(seed),
        first=args.first,
        cube=args.cube,
        start=start,
        max_games=args.games,
        start_cube=start_cube,
        start_dice=start_dice,
    )
    return 130 if result.ended == "interrupt" else 0


def _play_start(parser: argparse.ArgumentParser, state):
    """The cube (money :class:`~nard_ai.cube.CubeState`) and roll of a ``--position`` ID's match state."""
    from nard_ai.cube import CENTRED, ON_ROLL, OPPONENT, CubeState
    from nard_ai.formats.match_id import CENTERED, Resignation

    if state is None:
        return None, None
    if state.double_offered or state.resignation != Resignation.NONE:
        waiting = "a double" if state.double_offered else "a resignation"
        parser.error(f"in the --position ID {waiting} waits for an answer; give one before or after the roll")
    if state.cube_owner == CENTERED:
        owner = CENTRED
    else:
        owner = ON_ROLL if state.cube_owner == state.player_on_roll else OPPONENT
    try:
        cube = CubeState(value=state.cube_value, owner=owner)
    except ValueError as exc:
        parser.error(f"the cube of the --position ID: {exc}")
    if state.match_length:
        print(
            f"nard play: note: games are money games; the ID's {state.match_length}-point match score "
            "is not used (its cube and dice are)",
            file=sys.stderr,
        )
    return cube, (state.dice if state.dice != (0, 0) else None)


# --------------------------------------------------------------------------- analyze


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _bar_size(stream) -> dict[str, int]:
    """tqdm's width for ``stream``: a terminal that reports 0 columns (a bare pty) gets 80, else tqdm decides.

    tqdm draws an empty bar on a terminal of width 0, as under ``script`` or
    some CI runners; the fixed width keeps the bar visible there.
    """
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return {"ncols": 80, "nrows": 24}  # not a terminal (a forced --progress into a file or pipe)
    if size.columns <= 0 or size.lines <= 0:
        return {"ncols": 80, "nrows": 24}
    return {}


def _analyze(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from tqdm import tqdm

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
    agent = _agent(parser, args.checkpoint, args.ply)
    # --progress forces the bar, --no-progress hides it; by default it shows when stderr is a terminal
    show = args.progress if args.progress is not None else _is_terminal(sys.stderr)
    bar = tqdm(
        total=count_records(match),
        desc="analysing",
        unit="record",
        file=sys.stderr,
        disable=not show,
        leave=True,
        **_bar_size(sys.stderr),
    )
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
        _print_json(analysis.to_dict(errors_only=args.errors_only))
    else:
        print(format_analysis(analysis, errors_only=args.errors_only))
    return 0


# --------------------------------------------------------------------------- serve


def _serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import logging

    for name, port in (("--port", args.port), ("--external", args.external)):
        if port is not None and not 0 <= port <= 65535:
            parser.error(f"{name} must be 0..65535, got {port}")
    limits = {"max_connections": args.max_connections, "idle_timeout": args.idle_timeout}
    if args.external is None:
        if args.idle_timeout is not None:
            parser.error("--idle-timeout applies to --external only")
    else:
        for flag, value in (
            ("--max-body-bytes", args.max_body_bytes),
            ("--request-timeout", args.request_timeout),
        ):
            if value is not None:
                parser.error(f"{flag} applies to HTTP only, not to --external")
        if args.idle_timeout is not None and not 0 < args.idle_timeout < float("inf"):
            parser.error(f"--idle-timeout must be a number of seconds above 0, got {args.idle_timeout:g}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        if args.external is not None:
            from nard_ai.interfaces.external import serve_external

            given = {key: value for key, value in limits.items() if value is not None}
            serve_external(args.external, host=args.host, checkpoint=args.checkpoint, ply=args.ply, **given)
        else:
            from nard_ai.interfaces.http import serve

            limits = {
                name: getattr(args, name)
                for name in ("max_body_bytes", "request_timeout", "max_connections")
                if getattr(args, name) is not None
            }
            serve(host=args.host, port=args.port, checkpoint=args.checkpoint, ply=args.ply, **limits)
    except (ValueError, FileNotFoundError, OSError) as exc:
        parser.error(str(exc))
    except KeyboardInterrupt:
        pass
    return 0


# --------------------------------------------------------------------------- the parser

START_ID = "4HPwATDgc/ABMA"
START_XGID_52 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
CUBE_XGID = "XGID=-b--BBC-B---eD---c-e----B-:0:0:1:00:0:0:0:0:10"  # X has made its 4- and 5-points
MATCH_GNUBG_ID = "4HPwATDgc/ABMA:QQmgADAAEAAE"  # 5-point match, X 2, O 3, O owns a 2-cube
CUBE_MATCH_ID = "4HPwATDYzuABMA:cAngAEAAEAAE"  # CUBE_XGID in a 7-point match, X 2, O 4
DMP_XGID = "XGID=-b--BBC-B---eD---c-e----B-:0:0:1:64:4:4:0:5:10"  # CUBE_XGID at 4-4 of 5 (DMP), X rolled 64
#: The sample match record in the source tree, named by its absolute path so the examples run anywhere.
SAMPLE_MAT = Path(__file__).resolve().parents[2] / "tests" / "data" / "match_3pt.mat"


def _analyze_examples() -> list[str]:
    if SAMPLE_MAT.is_file():
        path = shlex.quote(str(SAMPLE_MAT))
        return [f"nard analyze {path}", f"nard analyze {path} --errors-only --json"]
    return ["nard analyze MATCH.mat", "nard analyze MATCH.mat --errors-only --json"]


def _command(sub, name: str, handler, summary: str, description: str, examples: Sequence[str]):
    p = sub.add_parser(
        name,
        help=summary,
        description=textwrap.fill(description, 79),
        epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(handler=handler, parser=p)
    return p


def build_parser() -> argparse.ArgumentParser:
    """The ``nard`` argument parser (each subcommand's ``--help`` ends with runnable examples)."""
    parser = _Parser(
        prog="nard",
        description="nard_ai: backgammon analysis from the command line. "
        "Positions are gnubg Position IDs, PositionID:MatchID or XGIDs, seen from the side on roll (X).",
        epilog="run `nard COMMAND --help` for a command's options and examples",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _command(
        sub,
        "show",
        _show,
        "draw a position with pip counts, its IDs, cube and score",
        "Draw the board of an ID, the side on roll (X) at the bottom, with pip counts, the position's "
        "gnubg ID and XGID, and the cube, score and dice that a Match ID or XGID holds.",
        [f"nard show {MATCH_GNUBG_ID}", f"nard show {START_XGID_52}"],
    )
    _add_position(p)

    p = _command(
        sub,
        "hint",
        _hint,
        "rank the legal plays of a roll by the network's equity",
        "Every legal play of the roll, best first, with its cubeless equity for X (points per game), "
        "its difference from the best play (diff, negative, as gnubg shows it; the same number in "
        "--json), and the win / gammon / backgammon probabilities. In match play (a Match ID or XGID "
        "with a match length) the plays are ranked by their cubeless match-winning chance at the score "
        "(Kazaross-XG2), shown as mwc, diff in MWC and emg (the MWC as normalised equity). The roll "
        "comes from --dice, or from the ID (a Match ID or XGID with dice).",
        [
            f"nard hint {START_ID} --dice 31",
            f"nard hint --dice 3 1 {START_ID}",
            f"nard hint {START_XGID_52} --top 3 --json",
            f"nard hint {DMP_XGID} --top 3",
        ],
    )
    _add_position(p)
    p.add_argument(
        "--dice",
        default=None,
        metavar="D",
        help="the roll: --dice 31, --dice 3-1 or --dice 3 1, before or after the ID",
    )
    _add_ply(p)
    p.add_argument(
        "--top", type=_non_negative_int, default=0, help="show only the best N plays (default: 0 = all)"
    )
    _add_json(p)
    _add_checkpoint(p)

    p = _command(
        sub,
        "eval",
        _eval,
        "probabilities and cubeless equity at each ply",
        "The network's win / gammon / backgammon probabilities and cubeless equity for X, on roll "
        "before rolling, at each search depth from 0-ply to --ply (default 2, the deepest the engine "
        "searches; deeper plies are slower). A --ply beyond 2 is an error; without --ply, plies the "
        "checkpoint's evaluator cannot search are left out with a note on stderr.",
        [f"nard eval {START_ID}", f"nard eval {CUBE_XGID} --ply 0 --json"],
    )
    _add_position(p)
    _add_ply(p, default=None, text="deepest ply to show (default: 2, or the deepest available)")
    _add_json(p)
    _add_checkpoint(p)

    p = _command(
        sub,
        "cube",
        _cube,
        "the cube decision: no double, double/take, double/pass",
        "The cube decision for X before rolling: the three cubeful equities, the proper action, the "
        "take point and what each wrong choice costs, from the network's probabilities with "
        "nard_ai.cube.decision's model (Janowski cube efficiency; Kazaross-XG2 match equities in match play). "
        "The cube and score come from the Match ID or XGID (money, cube centred, without one).",
        [f"nard cube {CUBE_XGID}", f"nard cube {CUBE_MATCH_ID} --json", f"nard cube {MATCH_GNUBG_ID}"],
    )
    _add_position(p)
    _add_ply(p)
    _add_json(p)
    _add_checkpoint(p)

    p = _command(
        sub,
        "rollout",
        _rollout,
        "Monte Carlo rollout with 95%% confidence intervals",
        "Play --games games from the position with the network choosing every play, and print the "
        "mean probabilities and equity for X with 95% confidence intervals. The first two rolls are "
        "stratified (1296 games cover every pair). --cubeful plays the cube too, from the ID's cube and "
        "score. Cubeless results are luck-adjusted (variance reduction) from 1-ply up, not at 0-ply "
        "(there it costs about 20 times the work for about the same interval per second); --luck / --no-luck "
        "force it. At most 10,000,000 games; a progress bar shows on stderr when it is a terminal "
        "(--progress / --no-progress force it on / off).",
        [
            f"nard rollout {START_ID} --games 72 --seed 1",
            f"nard rollout {CUBE_XGID} --games 36 --cubeful --json",
        ],
    )
    _add_position(p)
    p.add_argument(
        "--games", type=_rollout_games, default=144, help="games to play, 1 to 10,000,000 (default: 144)"
    )
    _add_ply(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the dice (default: 0)")
    p.add_argument("--cubeful", action="store_true", help="play the cube and report the cubeful equity")
    p.add_argument(
        "--truncate", type=_positive_int, default=None, help="score games by evaluation after N plies"
    )
    p.add_argument(
        "--luck",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="luck adjustment on or off (default: on from 1-ply and in races, off for contact at 0-ply); not with --cubeful, whose "
        "rollouts are never luck-adjusted",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal)",
    )
    _add_json(p)
    _add_checkpoint(p)
    add_ray_argument(p, "games", 1 << 17)  # nard_ai.play.rollout.CHUNK_GAMES, without loading it here

    p = _command(
        sub,
        "play",
        _play,
        "play a game against the engine in the terminal",
        "A money game against the network: the board is drawn from your side (X) every turn; type "
        "plays in standard notation (24/18 13/11*, bar/22, 8/2(2), 6/off); an illegal play is refused "
        "with the reason. Commands: hint, board, help, quit; Ctrl-D or Ctrl-C end the session.",
        ["nard play --seed 7 --first human", "nard play --ply 0 --cube"],
    )
    _add_ply(p, text="the engine's search depth (default: 0)")
    p.add_argument(
        "--seed",
        type=_non_negative_int,
        default=None,
        help="seed of the dice, an integer >= 0 (default: random, printed)",
    )
    p.add_argument(
        "--first",
        choices=("roll", "human", "engine"),
        default="roll",
        help="who starts: the opening roll decides (default), you, or the engine",
    )
    p.add_argument("--cube", action="store_true", help="play with the doubling cube")
    p.add_argument(
        "--position",
        metavar="ID",
        default=None,
        help="start every game from this position instead (its side on roll: you, or the engine with --first engine)",
    )
    p.add_argument("--games", type=_positive_int, default=None, help="stop after N games (default: ask)")
    _add_checkpoint(p)

    p = _command(
        sub,
        "analyze",
        _analyze,
        "analyse every move and cube action of a .mat match",
        "Check every checker play and cube action of a Jellyfish .mat match against the network at "
        "--ply: the equity each decision lost (normalised equity per unit cube, EMG; checker plays by "
        "cubeless equity, or cubeless match equity at the score in match play; cube actions by "
        "nard_ai.cube.decision at the score), marks ?! doubtful, ? bad, ?? very bad (gnubg 1.07's thresholds "
        "0.03 / 0.06 / 0.12), and each player's error rate in millipoints per decision. A progress "
        "bar shows on stderr when it is a terminal (--progress / --no-progress force it on / off). "
        "The examples use the sample record of the source tree (tests/data/match_3pt.mat); export "
        "your own from gnubg with `export match mat FILE`.",
        _analyze_examples(),
    )
    p.add_argument("match", metavar="MATCH.mat", help="the match record (Jellyfish .mat, as gnubg exports)")
    _add_ply(p)
    p.add_argument(
        "--thresholds",
        type=_thresholds,
        default=None,
        metavar="D,B,VB",
        help="skill thresholds doubtful,bad,very_bad in EMG (default: 0.03,0.06,0.12)",
    )
    p.add_argument(
        "--errors-only",
        action="store_true",
        help="list only the decisions with a mark (text and --json; the totals stay complete)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal)",
    )
    _add_json(p)
    _add_checkpoint(p)

    p = _command(
        sub,
        "serve",
        _serve,
        "run the HTTP JSON opponent backend, or gnubg's external-player protocol with --external",
        "Serve the engine over HTTP (FastAPI; OpenAPI schema at /openapi.json), e.g. "
        "`nard serve --port 8080` then `curl 'http://127.0.0.1:8080/move?id=4HPwATDgc/ABMA&die1=3&die2=1'`; "
        "or gnubg's external-player protocol: `nard serve --external 4321`, then in gnubg "
        "`set player 1 external localhost:4321`. The address is bound first: a port in use or a bad "
        "--host is one error line (status 2); port 0 picks a free port, and the port bound is logged. "
        "The external player reads lines of at most 4096 bytes, serves --max-connections at once and "
        "closes a connection after --idle-timeout seconds without a request. Runs until interrupted.",
        [
            "nard serve --port 8080",
            "nard serve --external 4321",
            "nard serve --external 0",
            "nard serve --external 4321 --idle-timeout 3600",
        ],
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="HTTP port (default: 8080)")
    _add_ply(p, text="default search depth, gnubg numbering (default: 0)")
    _add_checkpoint(p)
    p.add_argument(
        "--external",
        type=int,
        default=None,
        metavar="PORT",
        help="serve gnubg's external-player protocol on PORT",
    )
    # defaults None: nard_ai.interfaces.http's (not imported here: the web stack is slow to load);
    # tests/test_server.py checks that the numbers in these help texts are its defaults
    p.add_argument(
        "--max-body-bytes",
        type=_non_negative_int,
        default=None,
        help="HTTP: the largest request body taken, in bytes; a larger one is answered 413 (default: 65536)",
    )
    p.add_argument(
        "--request-timeout",
        type=_positive_seconds,
        default=None,
        metavar="SECONDS",
        help="HTTP: seconds a request's line and headers may take to arrive, and again its body; "
        "then the answer is 408 (default: 10)",
    )
    p.add_argument(
        "--max-connections",
        type=_positive_int,
        default=None,
        help="HTTP: connections open and requests in progress at most; beyond, uvicorn answers 503 "
        "(default: 128); with --external: connections served at once, one more is refused with an "
        "Error line (default: 64)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --external: close a connection silent for this long (default: 600)",
    )
    from nard_ai.interfaces.commands import command_modules

    for module in command_modules():
        p = _command(sub, module.NAME, module.run, module.SUMMARY, module.DESCRIPTION, module.EXAMPLES)
        module.configure(p)
    return parser


def _announce_compile() -> None:
    """The first-compile notice on stderr, if stderr is a terminal (a script reading stderr sees nothing)."""
    from nard_ai.core.compile_notice import COMPILE_NOTICE

    stream = sys.stderr
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        terminal = False
    if terminal:
        print(f"nard: {COMPILE_NOTICE}", file=stream, flush=True)


_compile_notice = None


def _install_compile_notice() -> None:
    """Listen (once per process) for numba's first compile of a nard_ai kernel: a cold cache."""
    global _compile_notice
    if _compile_notice is None:
        from nard_ai.core.compile_notice import FirstCompileNotice

        _compile_notice = FirstCompileNotice(_announce_compile).install()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nard`` console script; returns the exit status (0, 2 on bad input, 130 on Ctrl-C).

    On a cold numba cache it says so on stderr (a terminal) before compiling: :func:`_announce_compile`.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    _install_compile_notice()
    try:
        return args.handler(args, args.parser)
    except KeyboardInterrupt:
        print(f"{args.parser.prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`nard analyze ... | head`): stop quietly, as other Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
