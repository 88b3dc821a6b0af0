"""What several ``nard`` commands share: argument types, the position / agent / cube arguments, examples.

Every helper that takes ``parser`` turns bad input into ``parser.error(...)``:
one ``nard CMD: error: ...`` line on stderr and exit status 2
(:mod:`nard_ai.interfaces.cli` documents the convention). The text output
(probabilities, JSON) is :mod:`nard_ai.interfaces.output`.

The command line, the HTTP backend and ``evaluate.py --positions`` refuse the same IDs in the
same words through :func:`nard_ai.formats.match_id.not_playing` (a Match ID's game over, or a
double or resignation awaiting its answer); :func:`roll_conflict` (an ID's roll and the dice of
the request differ) is shared with :mod:`nard_ai.interfaces.http.decoding`. This module is
light (no torch, no web stack), so either side can import it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

# re-exported: the argument types of every nard command
from nard_ai.core.ply import MAX_PLY
from nard_ai.formats.match_id import not_playing
from nard_ai.training.argtypes import MAX_SEED, int_in, non_negative_int, positive_int, positive_seconds

__all__ = [
    "START_ID",
    "START_XGID_52",
    "CUBE_XGID",
    "MATCH_GNUBG_ID",
    "CUBE_MATCH_ID",
    "DMP_XGID",
    "non_negative_int",
    "positive_int",
    "positive_seconds",
    "ply_arg",
    "seed_arg",
    "checkpoint_arg",
    "PLY_RANGE_TEXT",
    "parse_dice",
    "not_playing",
    "impossible_double",
    "answer_to_double",
    "roll_conflict",
    "id_roll",
    "note_unused_roll",
    "position_arg",
    "agent_arg",
    "checkpoint_missing",
    "cube_state_arg",
    "add_position",
    "add_checkpoint",
    "add_ply",
    "add_seed",
    "add_json",
    "add_progress",
    "is_terminal",
    "bar_size",
    "progress_bar",
]

# --------------------------------------------------------------------------- positions of the --help examples

START_ID = "4HPwATDgc/ABMA"
START_XGID_52 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
CUBE_XGID = "XGID=-b--BBC-B---eD---c-e----B-:0:0:1:00:0:0:0:0:10"  # X has made its 4- and 5-points
MATCH_GNUBG_ID = "4HPwATDgc/ABMA:QQmgADAAEAAE"  # 5-point match, X 2, O 3, O owns a 2-cube
CUBE_MATCH_ID = "4HPwATDYzuABMA:cAngAEAAEAAE"  # CUBE_XGID in a 7-point match, X 2, O 4
DMP_XGID = "XGID=-b--BBC-B---eD---c-e----B-:0:0:1:64:4:4:0:5:10"  # CUBE_XGID at 4-4 of 5 (DMP), X rolled 64


# --------------------------------------------------------------------------- dice


_DICE_PAIR = re.compile(r"(\S+?)(?:\s*[-,]\s*|\s+)(\S+)")  # two dice apart: a space, '-' or ','
_DICE_SEPARATOR = re.compile(r".[-,]")  # a separator inside one die's text: more than two dice


def parse_dice(tokens: Sequence[str]) -> tuple[int, int]:
    """Two dice from ``["31"]``, ``["3", "1"]``, ``["3 1"]``, ``["3-1"]`` or ``["3,1"]``, larger die first.

    Raises:
        ValueError: unless the text is exactly two dice, each 1..6: "not two
            dice" for another count (``"3 1 5"``, ``"6-6-6"``), else naming the
            first bad die (``"a 1"``: "each die must be 1..6, got 'a'"; ``"71"``: "got 7").
    """
    text = " ".join(tokens)
    body = text.strip()
    pair = _DICE_PAIR.fullmatch(body)
    if len(body) == 2:
        parts = list(body)  # "31"
    elif pair and not any(_DICE_SEPARATOR.search(part) for part in pair.groups()):
        parts = list(pair.groups())  # "3 1", "3-1", "3,1"
    else:  # another count, or a third die behind a second separator ("6-6-6", "6,6,6")
        raise ValueError(f"{text!r} is not two dice (write 31, 3-1 or 3 1)")
    dice = []
    for part in parts:
        if not (part.isdigit() and part.isascii()):
            raise ValueError(f"each die must be 1..6, got {part!r}")
        if not 1 <= int(part) <= 6:
            raise ValueError(f"each die must be 1..6, got {int(part)}")
        dice.append(int(part))
    return max(dice), min(dice)


# --------------------------------------------------------------------------- the ID's roll and game state (HTTP too)


def id_roll(state) -> tuple[int, int] | None:
    """The roll a Match ID or XGID holds, larger die first; ``None`` before the roll or without a state."""
    if state is None or tuple(state.dice) == (0, 0):
        return None
    return max(state.dice), min(state.dice)  # an XGID may write the lower die first


def roll_conflict(state, dice: tuple[int, int], given_as: str) -> str | None:
    """Why ``dice`` cannot go with the ID's roll, or None; ``given_as`` names them (``"--dice gives"``).

    The same dice in either order agree; a roll given twice and different is refused rather than
    one silently winning (``nard hint`` and the HTTP ``/move`` alike).
    """
    rolled = id_roll(state)
    if rolled is None or sorted(dice) == sorted(rolled):
        return None
    return (
        f"the ID holds the roll {state.dice[0]}-{state.dice[1]}, and {given_as} {dice[0]}-{dice[1]}: "
        "give the dice one way (the ID's, or an ID without dice)"
    )


def impossible_double(state, decision) -> str | None:
    """Why an ID's double awaiting its answer cannot stand, or None: the ID says X has doubled, but the
    cube decision finds X may not double (a dead cube, the Crawford game, a cube O owns: the README's
    ``highest_cube_value`` rule), so there is no take or pass to answer. ``nard cube`` and ``/cube`` refuse it."""
    if state is None or not state.double_offered or decision.cube_available:
        return None
    return (
        "the ID says X has doubled, but X cannot double here (the cube is not X's to turn): no take or pass"
    )


def answer_to_double(decision) -> str:
    """The doubled side's answer as a word: ``beaver`` (money with beavers, when the take is worth a
    redouble: ``decision.beaver``), else ``take`` or ``pass`` (:attr:`CubeDecision.taker_takes`)."""
    if not decision.taker_takes:
        return "pass"
    return "beaver" if decision.beaver else "take"


# --------------------------------------------------------------------------- the position, agent and cube


def position_arg(
    parser: argparse.ArgumentParser,
    text: str,
    live: bool = True,
    *,
    playing: bool = False,
    double_ok: bool = False,
):
    """``(board, state)`` of an ID, or a one-line error.

    ``live``: refuse a board whose game is over. ``playing``: also refuse a match state with nothing
    to analyse (:func:`not_playing`; ``double_ok`` lets a double awaiting its answer through).
    """
    from nard_ai.core.board import game_result
    from nard_ai.reports.analysis import read_position

    try:
        board, state = read_position(text)
    except ValueError as exc:
        parser.error(f"bad position {text!r}: {exc}")
    if live and game_result(board) != 0:
        parser.error(f"the game in position {text!r} is already over")
    if playing:
        reason = not_playing(state, double_ok=double_ok)
        if reason is not None:
            parser.error(f"position {text!r}: {reason}")
    return board, state


def note_unused_roll(parser: argparse.ArgumentParser, state, why: str) -> None:
    """One ``nard CMD: note:`` line on stderr when the ID holds a roll the command does not use, and why."""
    rolled = id_roll(state)
    if rolled is not None:
        print(
            f"{parser.prog}: note: the ID's roll {rolled[0]}-{rolled[1]} is not used: {why}", file=sys.stderr
        )


def agent_arg(parser: argparse.ArgumentParser, checkpoint: str | None, ply: int):
    """The network agent at ``ply``, or a one-line error (missing/corrupt checkpoint, unsupported ply).

    ``checkpoint`` is :func:`checkpoint_arg`'s (a shipped network's bare file name already resolved); a
    missing one is :func:`checkpoint_missing`'s error, which says where the shipped networks are.
    """
    from nard_ai.agents import load_agent

    try:
        return load_agent(checkpoint, ply=ply)
    except FileNotFoundError as exc:
        checkpoint_missing(parser, exc)
    except ValueError as exc:
        parser.error(str(exc))


def checkpoint_missing(parser: argparse.ArgumentParser, exc: BaseException):
    """The one-line error of a checkpoint that is not a file (``exc``: the loader's FileNotFoundError, ``"no
    checkpoint at PATH"``), followed by where the shipped networks are and their names
    (:func:`nard_ai.model.network.shipped_checkpoints_note`)."""
    from nard_ai.model.network import shipped_checkpoints_note

    parser.error(f"{exc}; {shipped_checkpoints_note()}")


def cube_state_arg(parser: argparse.ArgumentParser, state):
    """The :class:`~nard_ai.cube.CubeState` of an ID's match state (money, cube centred, when ``None``), or a one-line error."""
    from nard_ai.reports.analysis import cube_state_of

    try:
        return cube_state_of(state)
    except ValueError as exc:
        parser.error(f"the cube or score of the ID cannot be analysed: {exc}")


# --------------------------------------------------------------------------- arguments several commands take


def add_position(p: argparse.ArgumentParser) -> None:
    """The positional ``ID`` argument (``args.position``)."""
    p.add_argument(
        "position",
        metavar="ID",
        help="gnubg Position ID (4HPwATDgc/ABMA), PositionID:MatchID, or XGID=...",
    )


CHECKPOINT_HELP = (
    "network checkpoint: a path, or a shipped network's file name (nard-td198.pt) from any folder "
    "(default: the shipped nard-expert.pt)"
)


def checkpoint_arg(text: str) -> str:
    """argparse type of ``--checkpoint``: the path as given when it exists, a shipped network's bare file name
    as its file (:func:`nard_ai.model.network.resolve_checkpoint`, the one resolution; torch loads here, as the
    command is about to load the network anyway), else the text as given (loading it says it is missing)."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty: name a checkpoint file")
    from nard_ai.model.network import resolve_checkpoint

    resolved = resolve_checkpoint(text)
    return text if resolved == Path(text) else str(resolved)


def add_checkpoint(p: argparse.ArgumentParser, metavar: str | None = None) -> None:
    """``--checkpoint PATH`` (:func:`checkpoint_arg`; ``None``: the default network, ``checkpoints/nard-expert.pt``)."""
    p.add_argument("--checkpoint", type=checkpoint_arg, default=None, metavar=metavar, help=CHECKPOINT_HELP)


PLY_RANGE_TEXT = (
    f"must be an integer 0..{MAX_PLY} (the search depth in gnubg's numbering: 0 = static evaluation)"
)
"""The one wording of a bad ``--ply`` of every ``nard`` command: ``argument --ply: PLY_RANGE_TEXT, got V``."""


def ply_arg(text: str) -> int:
    """argparse type of ``--ply``: a search depth the engine has, 0..:data:`nard_ai.core.ply.MAX_PLY`
    ("argument --ply: must be an integer 0..2 (the search depth in gnubg's numbering: 0 = static
    evaluation), got 3"; the same words for ``-1`` and ``x``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{PLY_RANGE_TEXT}, got {text!r}") from None
    if not 0 <= value <= MAX_PLY:
        raise argparse.ArgumentTypeError(f"{PLY_RANGE_TEXT}, got {value}")
    return value


seed_arg = int_in(0, MAX_SEED)
"""argparse type of ``--seed``: an integer 0..2**64 - 1 (:data:`nard_ai.training.argtypes.MAX_SEED`, the bound of
``train.py``, ``evaluate.py`` and ``python -m nard_ai.training``): "must be >= 0, got -1", "must be <= 18446744073709551615, got ..."."""


def add_ply(p: argparse.ArgumentParser, default: int | None = 0, text: str = "") -> None:
    """``--ply N`` (:func:`ply_arg`: 0..2 in gnubg's numbering, refused by argparse in one wording otherwise)."""
    p.add_argument(
        "--ply",
        type=ply_arg,
        default=default,
        metavar="N",
        help=text
        or f"search depth 0..{MAX_PLY}, gnubg numbering: 0 = static evaluation (default: {default})",
    )


def add_seed(p: argparse.ArgumentParser, default: int | None, text: str) -> None:
    """``--seed N`` (:data:`seed_arg`: 0..2**64 - 1)."""
    p.add_argument("--seed", type=seed_arg, default=default, metavar="N", help=text)


def add_json(p: argparse.ArgumentParser) -> None:
    """``--json``: one JSON object on stdout instead of text."""
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (default ``None``: a bar only when stderr is a terminal)."""
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal)",
    )


# --------------------------------------------------------------------------- progress bars


def is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (a closed or replaced stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def bar_size(stream) -> dict[str, int]:
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


def progress_bar(show: bool | None, total: int, desc: str, unit: str):
    """A tqdm bar on stderr for ``total`` ``unit`` s; ``show`` ``None`` (no ``--progress`` flag): only on a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=not (show if show is not None else is_terminal(sys.stderr)),
        leave=True,
        **bar_size(sys.stderr),
    )
