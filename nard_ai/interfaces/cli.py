"""The ``nard`` command line: argument parsing and output only; the engine does the work.

Each command is one module of :mod:`nard_ai.interfaces.commands` (``NAME``,
``SUMMARY``, ``DESCRIPTION``, ``EXAMPLES``, ``configure``, ``run``), listed
in its ``COMMANDS``; what several commands share is
:mod:`nard_ai.interfaces.commands.common` (argument types and helpers) and
:mod:`nard_ai.interfaces.output` (text and JSON output). This module holds the
top parser, :func:`main`, the first-compile notice and :func:`parse_dataclass_args`.

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
* ``nard play [--ply N] [--cube [--jacoby]]``: a game against the engine in the terminal
  (:mod:`nard_ai.interfaces.terminal`); with the cube, the money rules in play are said at the start.
* ``nard analyze MATCH.mat [--ply N]``: every checker play and cube action of
  a match, the equity lost, skill marks, error rates (:mod:`nard_ai.reports.analysis`).
* ``nard serve [--port 8080]``: the HTTP JSON backend (:mod:`nard_ai.interfaces.http`),
  or gnubg's external-player protocol (``--external``; ``--max-connections``,
  ``--idle-timeout``: :mod:`nard_ai.interfaces.external`). The address is bound
  first (a busy port or a bad host is a one-line error); the port bound is
  logged (port 0: one the system picks); the web board at ``/``
  (:mod:`nard_ai.interfaces.web`).
* ``nard ubgi``: the Universal Backgammon Interface v0.2 on stdin/stdout
  (:mod:`nard_ai.interfaces.ubgi`).
* ``nard export --onnx FILE``: the network as ONNX (:mod:`nard_ai.model.onnx_export`).

``ID`` is a gnubg Position ID (``4HPwATDgc/ABMA``), a combined
``PositionID:MatchID`` or an XGID; the board is seen from its side on roll
(``X``), and every probability and equity printed is that side's, in points
per game at cube 1 unless said otherwise. An XGID written without its
``XGID=`` prefix that starts with ``-`` would read as an option: it is refused
with a message saying to add the prefix or put ``--`` before it. The cube,
score and dice of a Match ID or XGID are used: ``hint`` takes the roll from the
ID when ``--dice`` is not given, ``cube`` and ``rollout --cubeful`` the cube
and score. ``--ply`` is the search depth in gnubg's numbering, 0..2 (0 = the
network's static evaluation), checked by argparse in one wording for every
command; ``--seed`` is 0..2**64 - 1. ``--checkpoint`` takes a path, or a
shipped network's file name alone (``nard-td198.pt``) from any folder (a file
of that name in the current folder wins): a missing one's error names the
shipped networks' folder and files. ``--json`` prints one JSON object instead of text.

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
file, a corrupt ``.mat`` record or checkpoint, a ply outside 0..2) prints one ``nard CMD: error: ...`` line on stderr and exits with
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
import contextlib
import dataclasses
import inspect
import os
import re
import sys
import textwrap
from collections.abc import Sequence
from typing import TypeVar

from nard_ai.interfaces.commands import common as _common
from nard_ai.interfaces.commands.common import parse_dice
from nard_ai.interfaces.output import describe_state, format_cube, format_hint

__all__ = [
    "main",
    "build_parser",
    "parse_dataclass_args",
    "check_counts",
    "parse_dice",
    "describe_state",
    "format_hint",
    "format_cube",
]

T = TypeVar("T")

# The --help examples' positions and the progress bar's width, where tests/test_cli.py names them.
START_ID = _common.START_ID
START_XGID_52 = _common.START_XGID_52
CUBE_XGID = _common.CUBE_XGID
MATCH_GNUBG_ID = _common.MATCH_GNUBG_ID
CUBE_MATCH_ID = _common.CUBE_MATCH_ID
DMP_XGID = _common.DMP_XGID
_bar_size = _common.bar_size


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


def parse_dataclass_args(cls: type[T], argv: Sequence[str] | None = None) -> T:
    """Parse command-line flags into a dataclass, one ``--field-name`` per field.

    ``bool`` fields become ``--flag/--no-flag``; the docstring under each field
    is its help text; the class docstring is the description. If the dataclass
    has a ``validate()`` method, it is called on the parsed values; a
    ``ValueError`` it raises becomes an argparse error (one ``PROG: error:``
    line, no usage text, exit status 2: :class:`OneLineErrorParser`) before
    the caller runs.

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


def check_counts(args, names: Sequence[str], limits: dict[str, int]) -> None:
    """Check the integer fields of a :func:`parse_dataclass_args` result: each of ``names`` at least 1, each
    of ``limits`` at most its limit (flags ``--field-name``; train.py's and evaluate.py's size arguments).

    Raises:
        ValueError: one line naming the first flag out of range: ``argument --NAME: must be >= 1, got V``
            or ``argument --NAME: must be at most LIMIT, got V`` (thousands separated).
    """
    for name in names:
        if getattr(args, name) < 1:
            raise ValueError(f"argument --{name.replace('_', '-')}: must be >= 1, got {getattr(args, name)}")
    for name, limit in limits.items():
        if getattr(args, name) > limit:
            raise ValueError(
                f"argument --{name.replace('_', '-')}: must be at most {limit:,}, got {getattr(args, name):,}"
            )


def _dataclass_parser(cls: type, suppress: bool = False) -> argparse.ArgumentParser:
    docs = _field_docs(cls)
    parser = OneLineErrorParser(
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


MAX_ERROR_CHARS = 600
"""Longest error message printed whole; a longer one (an ID of 100,000 characters quoted back) keeps
its first and last 300 characters around a count of what was cut."""


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse with errors as one line (``PROG: error: ...``, no usage text) on stderr and exit status 2.

    argparse prints the whole usage (15 lines for ``train.py``) before its error line; ``--help`` still
    prints it. An error that echoes a long input is cut to :data:`MAX_ERROR_CHARS`.
    """

    def error(self, message: str):  # type: ignore[override]
        if len(message) > MAX_ERROR_CHARS:  # an error echoes the input: bounded, whatever was typed
            cut = len(message) - MAX_ERROR_CHARS
            message = f"{message[: MAX_ERROR_CHARS // 2]} ...[{cut} characters]... {message[-MAX_ERROR_CHARS // 2 :]}"
        self.exit(2, f"{self.prog}: error: {message}\n")


#: An XGID's position field and what follows, without ``XGID=``: 26 characters of ``-``, ``a``-``o``, ``A``-``O``.
#: Its first point (X's bar, or O's in XG's order) is ``-`` whenever that bar is empty, so argparse takes it
#: for an option.
_BARE_XGID = re.compile(r"-[-a-oA-O]{25}(:\S*)?")


def _dash_id_error(args: Sequence[str]) -> str | None:
    """Why an argument list cannot hold the ID it seems to: a bare XGID starting with ``-`` (argparse reads it
    as an option, and says only "the following arguments are required: ID"), or ``None``. Nothing after ``--``
    is looked at (there it is the ID), nor a list asking for the help."""
    head = list(args[: args.index("--")] if "--" in args else args)
    if "-h" in head or "--help" in head:
        return None  # the help, as asked
    for i, token in enumerate(head):
        if _BARE_XGID.fullmatch(token):
            after_option = i > 0 and args[i - 1] == "--position"  # an option's value: -- would not help
            return (
                f"{token!r} starts with '-' and reads as an option: write the XGID with its prefix, "
                f"XGID={token}" + ("" if after_option else ", or put -- before it")
            )
    return None


class _Parser(OneLineErrorParser):
    """The ``nard`` parser: one-line errors (``nard hint: error: ...``, exit status 2).

    ``--dice 3 1`` is read as one option value wherever it stands (before or
    after the ID): see :func:`_join_dice_tokens`. A command that takes an ID
    (a positional ``ID`` or ``--position ID``) refuses a bare XGID beginning
    with ``-`` with a message that says how to write it (:func:`_dash_id_error`).
    """

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        args = sys.argv[1:] if args is None else list(args)
        if any(action.dest == "position" for action in self._actions):  # a command taking an ID
            problem = _dash_id_error(args)
            if problem is not None:
                self.error(problem)
        return super().parse_known_args(_join_dice_tokens(args), namespace)


# --------------------------------------------------------------------------- the parser


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
    """Entry point of the ``nard`` console script; returns the exit status (0, 2 on bad input, 130 on Ctrl-C,
    1 when the output cannot be written: a closed pipe quietly, any other write error in one stderr line).

    On a cold numba cache it says so on stderr (a terminal) before compiling: :func:`_announce_compile`.
    """
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # argparse would name only "nard"; the error names the command, as every other one does
        args.parser.error(f"unrecognized arguments: {' '.join(extras)}")
    _install_compile_notice()
    try:
        status = args.handler(args, args.parser)
        sys.stdout.flush()  # a write error of the buffered output is this command's, not the exit's
        return status
    except KeyboardInterrupt:
        print(f"{args.parser.prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`nard analyze ... | head`): stop quietly, as other Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:
        # the output cannot be written (`> /dev/full`: a full disk, an I/O error): one line, no traceback,
        # and the unwritten rest dropped, so that Python's exit does not fail on it again
        print(f"{args.parser.prog}: error: {exc}", file=sys.stderr)
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
