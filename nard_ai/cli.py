"""The ``nard`` command line: argument parsing and output only.

Commands
--------
``nard hint POSITION_ID --dice D1 D2 [--checkpoint PATH] [--top N]``
    Print the board (side on roll at the bottom) and every legal play in
    standard notation, ranked by the network's 0-ply cubeless equity, with
    the win / gammon / backgammon probabilities of each (for the side on
    roll). The position is a gnubg Position ID, read with its side on roll
    as the mover. Without ``--checkpoint`` the shipped network
    (``checkpoints/nard-td198.pt``) is used.

``nard serve [--host H] [--port 8080] [--ply 0] [--checkpoint PATH]``
    The HTTP JSON backend of :mod:`nard_ai.server` (uvicorn).
``nard serve --external PORT [--host H] [--ply 0] [--checkpoint PATH]``
    gnubg's external-player protocol (:mod:`nard_ai.external`) on ``PORT``.

Bad input (a malformed Position ID, dice outside 1..6, a missing or corrupt
checkpoint) prints one ``nard: error: ...`` line and exits with status 2.

Also here: :func:`parse_dataclass_args`, the CleanRL-style argument parser
that ``train.py`` and ``evaluate.py`` use (one flag per dataclass field, the
docstring under each field as its help text).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

__all__ = ["main", "build_parser", "parse_dataclass_args", "format_hint"]

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
    docs = _field_docs(cls)
    parser = argparse.ArgumentParser(
        description=inspect.cleandoc(cls.__doc__ or ""),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name] if not isinstance(hints[f.name], str) else eval(hints[f.name])  # noqa: S307
        help_text = docs.get(f.name, "")
        if kind is bool:
            parser.add_argument(
                flag, dest=f.name, action=argparse.BooleanOptionalAction, default=f.default, help=help_text
            )
        else:
            parser.add_argument(flag, dest=f.name, type=kind, default=f.default, help=help_text)
    obj = cls(**vars(parser.parse_args(argv)))
    validate = getattr(obj, "validate", None)
    if callable(validate):
        try:
            validate()
        except ValueError as exc:
            parser.error(str(exc))
    return obj


def build_parser() -> argparse.ArgumentParser:
    """The ``nard`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="nard", description="nard_ai: backgammon analysis from the command line"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    hint = sub.add_parser("hint", help="rank the legal plays of a position by the network's equity")
    hint.add_argument("position_id", help="gnubg Position ID, e.g. 4HPwATDgc/ABMA (the starting position)")
    hint.add_argument(
        "--dice", nargs=2, type=int, required=True, metavar=("D1", "D2"), help="the roll, e.g. --dice 3 1"
    )
    hint.add_argument(
        "--checkpoint",
        default=None,
        help="network checkpoint (default: the shipped checkpoints/nard-td198.pt)",
    )
    hint.add_argument(
        "--top", type=_non_negative_int, default=0, help="show only the best N plays (default: 0 = all)"
    )
    serve = sub.add_parser(
        "serve",
        help="run the HTTP JSON opponent backend, or gnubg's external-player protocol with --external",
        description=(
            "Serve the engine over HTTP (FastAPI; OpenAPI schema at /openapi.json), e.g. "
            "`nard serve --port 8080` then `curl 'http://127.0.0.1:8080/move?id=4HPwATDgc/ABMA&die1=3&die2=1'`; "
            "or gnubg's external-player protocol: `nard serve --external 4321`, then in gnubg "
            "`set player 1 external localhost:4321`."
        ),
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="HTTP port (default: 8080)")
    serve.add_argument(
        "--ply", type=int, default=0, help="default search depth, gnubg numbering (default: 0)"
    )
    serve.add_argument(
        "--checkpoint",
        default=None,
        help="network checkpoint (default: the shipped checkpoints/nard-td198.pt)",
    )
    serve.add_argument(
        "--external",
        type=int,
        default=None,
        metavar="PORT",
        help="serve gnubg's external-player protocol on PORT",
    )
    return parser


def format_hint(board: np.ndarray, dice: tuple[int, int], ranked: Any, top: int = 0) -> str:
    """The ranked plays as a table (equity and probabilities for the side on roll)."""
    from .formats.notation import play_notation

    rows = [f"{'#':>3}  {'play':<24} {'equity':>7}  {'win':>6} {'w-g':>6} {'w-bg':>6} {'l-g':>6} {'l-bg':>6}"]
    n = len(ranked) if top <= 0 else min(top, len(ranked))
    for i in range(n):
        p = ranked.probs[i]
        move = play_notation(board, ranked.afterstates[i], dice) or "(no move)"
        rows.append(
            f"{i + 1:>3}  {move:<24} {ranked.equity[i]:>+7.3f}  " + " ".join(f"{100 * v:>5.1f}%" for v in p)
        )
    if n < len(ranked):
        rows.append(f"     ... {len(ranked) - n} more")
    return "\n".join(rows)


def _hint(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .arena import agent_from_spec
    from .board import validate_dice
    from .formats.ascii import render_board
    from .formats.position_id import board_from_position_id

    try:
        board = board_from_position_id(args.position_id)
    except ValueError as exc:
        parser.error(f"bad position ID {args.position_id!r}: {exc}")
    try:
        dice = tuple(int(d) for d in validate_dice(np.asarray(args.dice))[0])
    except ValueError as exc:
        parser.error(f"bad dice {args.dice}: {exc}")
    if not (board > 0).any() or not (board < 0).any():
        parser.error("the game in that position is already over")
    try:
        agent = agent_from_spec(args.checkpoint or "default")
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    ranked = agent.rank_plays(board, dice)
    print(render_board(board, dice))
    print()
    print(
        f"{len(ranked)} legal play{'s' if len(ranked) != 1 else ''} for {dice[0]}-{dice[1]}, "
        f"ranked by 0-ply cubeless equity ({agent.name}); probabilities for the side on roll:"
    )
    print(format_hint(board, dice, ranked, args.top))
    return 0


def _serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for name, port in (("--port", args.port), ("--external", args.external)):
        if port is not None and not 0 <= port <= 65535:
            parser.error(f"{name} must be 0..65535, got {port}")
    try:
        if args.external is not None:
            from .external import serve_external

            serve_external(args.external, host=args.host, checkpoint=args.checkpoint, ply=args.ply)
        else:
            from .server import serve

            serve(host=args.host, port=args.port, checkpoint=args.checkpoint, ply=args.ply)
    except (ValueError, FileNotFoundError, OSError) as exc:
        parser.error(str(exc))
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nard`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "hint":
        return _hint(args, _sub(parser, "hint"))
    if args.command == "serve":
        return _serve(args, _sub(parser, "serve"))
    parser.error(f"unknown command {args.command!r}")
    return 2


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    return parser


if __name__ == "__main__":
    sys.exit(main())
