"""The HTTP JSON opponent backend (FastAPI): transport only, the engine does the work.

Endpoints (the OpenAPI schema is served at ``/openapi.json``, docs at ``/docs``):

=================  =========================================================
endpoint           what
=================  =========================================================
``GET /move``      every legal play of a position and roll, best first, with
                   probabilities and cubeless equity (wildbg's ``/move``)
``POST /move``     the same, the request as a JSON body
``GET /eval``      probabilities and cubeless equity of a position, side on
                   roll, before it rolls (wildbg's ``/eval``), with the cube
                   advice when :mod:`nard_ai.cube.decision` is available
``POST /eval``     the same, JSON body
``GET /cube``      the cube decision (no double / double-take / double-pass
                   equities, take point) for money or match play
``POST /cube``     the same, JSON body
``GET /health``    liveness and the settings the server runs with
=================  =========================================================

Positions
---------
A position is given either as **wildbg's pip parameters** ``p0``..``p25`` (the
layout of :mod:`nard_ai.core.board`, seen from the side on roll: ``p1``..``p24``
the mover's points, positive = the mover's checkers, negative = the
opponent's; ``p25`` the mover's bar, ``>= 0``; ``p0`` the opponent's bar,
``<= 0``; missing = 0), or as ``id``: a gnubg Position ID
(``4HPwATDgc/ABMA``), a combined ``PositionID:MatchID``, or an XGID
(``XGID=...``). With a Match ID or an XGID the board is seen from its player
on roll, and its dice, cube and score are used where the request gives none.

Give the position one way only: ``id`` together with ``p0``..``p25`` (or
with ``board`` in a JSON body) is refused. Dice are ``die1`` and ``die2``
(1..6) in a query, ``"dice": [3, 1]`` in a JSON body. ``ply`` is the search
depth in gnubg's numbering (default: the server's ``--ply``). An unknown or
repeated query parameter, or an unknown field of a JSON body, is refused
(``400``) with its name, so a misspelt parameter is never silently ignored.

Money or match: ``/move`` ranks the plays by cubeless equity, unless the ID
(a Match ID or an XGID) holds a match length; then by the plays' cubeless
match-winning chance at its score (:func:`nard_ai.reports.analysis.score_plays`:
each outcome valued by the Kazaross-XG2 table, so gammons count only as
much as they matter at that score), with each play's ``mwc`` given and
``ranked_by`` saying which order it is.

Responses (all probabilities for the **side on roll** of the request's
position; for ``/move`` the side making the play): ``probabilities`` in
wildbg's/gnubg's five cumulative numbers ``win``, ``winG``, ``winBg``,
``loseG``, ``loseBg``; ``equity`` the cubeless equity in points per game.
Each play of ``/move`` is given as wildbg's ``play`` (a list of single
checker moves ``{"from": 24, "to": 18}``, 25 = bar, 0 = off) and as gnubg's
notation (``"24/18 13/11*"``).

Errors: a malformed request (bad ID, dice, pips, a finished game, a ply
outside 0..2, unknown or repeated parameters, an unknown body field) gets
``400`` with ``{"detail": "..."}`` naming the field (documented as the
``400`` response of each endpoint in the OpenAPI schema); a request failing
the schema otherwise gets ``422`` with FastAPI's list of errors, at most
:data:`MAX_ERRORS` of them, each refused value cut to :data:`MAX_ECHO`
characters. Types are strict: a JSON integer field takes only a JSON integer
(not ``true``, ``"3"`` or ``3.0``), a query integer only digits (``die1=3``,
not ``3.0``). A body not sent as JSON (``Content-Type: application/json``)
is a ``415``.

Limits (README "Serving the engine"): a body over ``max_body_bytes``
(:data:`MAX_BODY_BYTES`) is a ``413``, refused unread when its Content-Length
says so and counted while read otherwise; a request whose line and headers,
or whose body after them, take over ``request_timeout``
(:data:`REQUEST_TIMEOUT`) seconds is a ``408``; both close the connection.
uvicorn's own settings do the rest (:func:`server_config`). The server never
dies on input: any other exception is answered ``500`` and logged.

Batching: every engine computation runs on one engine thread, off the event
loop, through :class:`nard_ai.interfaces.batching.Batcher`: concurrent
``/move`` requests of one depth are ranked in one batched search, concurrent
``/eval`` requests in one evaluation, with the same answer bytes as alone
(the agents' evaluators are wrapped in
:class:`nard_ai.eval.aligned.BatchInvariantEvaluator`). More than
``max_queue`` requests waiting is a ``503``.

Layout: each endpoint is one handler function (``get_move``, ``post_move``,
...) on the module's :data:`router`, with its request and response models
above; they share an :class:`Engine` held in ``app.state.engine``.
:func:`create_app` sets the limits and error answers and includes the
routers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import reprlib
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import h11
import numpy as np
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic_core import PydanticCustomError
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from nard_ai import cube as _cube
from nard_ai.core.board import (
    BAR,
    BOARD_SIZE,
    NUM_CHECKERS,
    OPP_BAR,
    game_result,
    starting_board,
    swap_sides,
    validate_board,
    validate_dice,
)  # fmt: skip
from nard_ai.core.ply import MAX_PLY, check_ply
from nard_ai.cube.state import cube_state_from_match
from nard_ai.eval.aligned import BatchInvariantEvaluator
from nard_ai.formats.match_id import MatchState
from nard_ai.formats.notation_fast import describe_plays_batch
from nard_ai.formats.position import parse_position
from nard_ai.formats.position_id import position_id, position_ids
from nard_ai.interfaces.batching import Batcher, BatchSettings, QueueFull
from nard_ai.interfaces.external import checker_moves
from nard_ai.interfaces.web import BODY_MODELS as _WEB_BODY_MODELS
from nard_ai.interfaces.web import web_router
from nard_ai.reports.analysis import score_plays
from nard_ai.search.lookahead import Agent, rank_plays_batch

__all__ = [
    "create_app", "bind_socket", "server_config", "serve", "parse_position", "cube_state_from_match",
    "checker_moves", "MAX_BODY_BYTES", "REQUEST_TIMEOUT", "MAX_CONNECTIONS", "MAX_HEADER_BYTES",
    "KEEP_ALIVE_TIMEOUT", "MAX_ERRORS", "MAX_ECHO",
]  # fmt: skip

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- limits (README "Serving the engine")

MAX_BODY_BYTES = 65_536  # a request body, bytes (the largest real one is a few hundred)
REQUEST_TIMEOUT = 10.0  # seconds for a request's headers to arrive, and again for its body
MAX_CONNECTIONS = 128  # open connections and requests in progress; beyond: uvicorn's 503
MAX_HEADER_BYTES = 16_384  # request line and headers (h11's incomplete-event limit); beyond: uvicorn's 400
KEEP_ALIVE_TIMEOUT = 5  # seconds an idle keep-alive connection stays open (uvicorn's default)
MAX_ERRORS = 10  # schema errors listed in a 422 answer
MAX_ECHO = 80  # characters of a refused value shown back in a 422 answer

# --------------------------------------------------------------------------- parsing (no HTTP here)


# --------------------------------------------------------------------------- schema


class Probabilities(BaseModel):
    """gnubg's five cumulative probabilities for one side (wildbg's names)."""

    win: float = Field(description="win a single game, gammon or backgammon")
    winG: float = Field(description="win a gammon or backgammon")
    winBg: float = Field(description="win a backgammon")
    loseG: float = Field(description="lose a gammon or backgammon")
    loseBg: float = Field(description="lose a backgammon")


class CheckerMove(BaseModel):
    """One checker moved by one die, mover's numbering."""

    model_config = {"populate_by_name": True}
    from_: int = Field(alias="from", serialization_alias="from", description="1..24, 25 = bar")
    to: int = Field(description="1..24, 0 = off")


class MoveInfo(BaseModel):
    play: list[CheckerMove] = Field(description="0-4 single checker moves; empty when no move is possible")
    notation: str = Field(description="gnubg's notation, e.g. '24/18 13/11*'; '-' for no move")
    probabilities: Probabilities
    equity: float = Field(description="cubeless equity after the play, mover's view, points per game")
    mwc: float | None = Field(
        default=None,
        description="match play: the mover's cubeless match-winning chance at the score after the play "
        "(Kazaross-XG2); null in money play",
    )
    position_id: str = Field(description="gnubg Position ID of the position after the play, opponent on roll")


class MoveResponse(BaseModel):
    moves: list[MoveInfo] = Field(
        description="every legal play, best first; exactly one when no move is possible"
    )
    ranked_by: str = Field(
        default="cubeless equity",
        description="'cubeless equity' (money) or 'cubeless MWC at the score' (an ID with a match length)",
    )
    dice: tuple[int, int]
    ply: int
    position_id: str


class ErrorResponse(BaseModel):
    """A refused request."""

    detail: str = Field(description="what is wrong, naming the parameter or field")


class CubeAdvice(BaseModel):
    """wildbg's cube summary."""

    double: bool = Field(description="the side on roll should double")
    accept: bool = Field(description="the opponent should take a double")


class EvalResponse(BaseModel):
    probabilities: Probabilities
    equity: float = Field(description="cubeless equity, side on roll, before rolling")
    cube: CubeAdvice | None = Field(
        default=None, description="cube advice (money, cube centred, unless given)"
    )
    ply: int
    position_id: str


class CubeResponse(BaseModel):
    action: str = Field(description="no_double, double_take, double_pass, too_good_take or too_good_pass")
    double: bool
    accept: bool
    no_double: float
    double_take: float | None
    double_pass: float | None
    optimal: float
    cubeless_equity: float
    take_point: float | None
    probabilities: Probabilities
    cube_value: int
    cube_owner: str
    match_length: int
    score: tuple[int, int]
    mwc: dict[str, float | None] | None = Field(
        default=None, description="match play: the three equities as MWC"
    )
    ply: int
    position_id: str


class PositionBody(BaseModel):
    """A position by ID, or by the 26 counts of :mod:`nard_ai.core.board` (``board``); unknown fields are refused.

    Types are strict: an integer field takes a JSON integer only (not ``true``, ``"3"`` or ``3.0``), a
    string field a JSON string, a flag ``true`` or ``false``. A list stops at its first bad item, so a
    long list of bad values is one error.
    """

    model_config = ConfigDict(extra="forbid")
    id: StrictStr | None = Field(default=None, description="Position ID, PositionID:MatchID, or XGID")
    board: list[StrictInt] | None = Field(
        default=None, max_length=BOARD_SIZE, fail_fast=True, description="26 counts: [p0, p1, ..., p25]"
    )
    ply: StrictInt | None = Field(default=None, description=f"search depth 0..{MAX_PLY}, gnubg numbering")


class MoveBody(PositionBody):
    dice: tuple[StrictInt, StrictInt] | None = Field(
        default=None, description="the roll; default: the dice in the ID"
    )


class CubeBody(PositionBody):
    cube_value: StrictInt | None = None
    cube_owner: StrictStr | None = Field(default=None, description="centred, on_roll or opponent")
    match_length: StrictInt | None = None
    score: tuple[StrictInt, StrictInt] | None = Field(default=None, description="(side on roll, opponent)")
    crawford: StrictBool | None = None
    jacoby: StrictBool | None = None


# --------------------------------------------------------------------------- request decoding

_INT_TEXT = re.compile(r"[+-]?[0-9]+")


def _int_text(value: Any) -> Any:
    """A query integer is written in digits: ``3``, not ``3.0``, ``1e3``, `` 3`` or ``true``.

    Raises:
        PydanticCustomError: ``int_parsing`` (FastAPI's 422) for any other text.
    """
    if isinstance(value, str) and not _INT_TEXT.fullmatch(value):
        raise PydanticCustomError("int_parsing", "Input should be an integer written in digits, e.g. 3")
    return value


QInt = Annotated[int, BeforeValidator(_int_text)]


def _bool_text(value: Any) -> Any:
    """A query flag is ``true`` or ``false`` (JSON's spelling), not FastAPI's ``1``/``yes``/``on``.

    Raises:
        PydanticCustomError: ``bool_parsing`` (FastAPI's 422) for any other text.
    """
    if isinstance(value, str) and value not in ("true", "false"):
        raise PydanticCustomError("bool_parsing", "Input should be true or false")
    return value


QBool = Annotated[bool, BeforeValidator(_bool_text)]


def _repeated_keys_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    repeated = [k for k, _ in pairs if k in seen or seen.add(k)]
    if repeated:
        raise _RepeatedFields(list(dict.fromkeys(repeated)))
    return dict(pairs)


class _RepeatedFields(Exception):
    def __init__(self, names: list[str]) -> None:
        self.names = names


async def _no_repeated_fields(request: Request) -> None:
    """Refuse a JSON body that gives a field twice (``{"dice": [3, 1], "dice": [6, 6]}``), which a
    JSON reader would otherwise take silently, the last one winning (RFC 8259 section 4: names
    "SHOULD be unique"). Runs before the body is validated; a body that is not JSON is left to the
    validation's own answers.

    Raises:
        HTTPException: 400 naming the repeated fields.
    """
    if request.method != "POST":
        return
    body = await request.body()  # cached by Starlette: the validation reads the same bytes
    try:
        json.loads(body, object_pairs_hook=_repeated_keys_hook)
    except _RepeatedFields as exc:
        raise _bad(
            f"body field{'s' if len(exc.names) > 1 else ''} {_name_list(exc.names)} given more than once"
        ) from None
    except (ValueError, RecursionError):  # not JSON (or not UTF-8): the schema's 400/415/422 answer it
        return


_INT_DIGITS_MAX = 4300  # pydantic's (and Python's) longest integer text; longer is int_parsing_size
_INT_MESSAGE = "Input should be an integer written in digits, e.g. 3"
_PIP_PARAMETERS = [
    {
        "name": f"p{i}",
        "in": "query",
        "required": False,
        "schema": {"type": "integer", "default": 0, "title": f"P{i}"},
        "description": (
            "opponent's bar (<= 0)" if i == 0 else "mover's bar (>= 0)" if i == 25 else f"point {i}"
        ),
    }
    for i in range(26)
]
"""OpenAPI entries of p0..p25, which :func:`_pip_query` reads by hand (``openapi_extra`` of a route)."""


def _pip_error(name: str, text: str) -> dict[str, Any] | None:
    """FastAPI's 422 error for a refused query integer ``text``, or None when it is one.

    The same answer as a ``QInt`` parameter: ``int_parsing`` unless written in digits
    (:func:`_int_text`), ``int_parsing_size`` past pydantic's 4,300 digits (its rule: a ``+``
    and leading zeros do not count, a ``-`` does).
    """
    if not _INT_TEXT.fullmatch(text):
        return {"type": "int_parsing", "loc": ("query", name), "msg": _INT_MESSAGE, "input": text}
    body = text[1:] if text[0] == "+" else text
    negative = body[0] == "-"
    digits = (body[1:] if negative else body).lstrip("0") or "0"
    if len(digits) + negative > _INT_DIGITS_MAX:
        return {
            "type": "int_parsing_size",
            "loc": ("query", name),
            "msg": "Unable to parse input string as an integer, exceeded maximum size",
            "input": text,
        }
    return None


async def _pip_query(request: Request) -> list[int]:
    """wildbg's pip parameters: p0 = opponent's bar (<= 0), p1..p24 points, p25 = mover's bar.

    Read by hand from the query string rather than as 26 FastAPI parameters, whose validation cost
    about half of a 0-ply ``GET /move`` (cProfile, 2026-12-02); the answers are a ``QInt``'s: an
    absent point is 0, a repeated one counts its last value here (the handler's
    :func:`_check_query` then refuses the repeat with a 400), and refused values are FastAPI's 422
    errors in p0..p25 order. One difference: when a pip and another parameter (``die1``, ``ply``...)
    are both refused, the 422 lists the pips' errors only; the others' follow once those are fixed.

    Returns:
        26 ints, p0..p25.

    Raises:
        RequestValidationError: FastAPI's 422 for values not written in digits or too long.
    """
    params = request.query_params
    pips = [0] * BOARD_SIZE
    errors: list[dict[str, Any]] = []
    for i, name in enumerate(_PIP_ORDER):
        text = params.get(name)
        if text is None:
            continue
        error = _pip_error(name, text)
        if error is None:
            pips[i] = int(text)
        else:
            errors.append(error)
    if errors:
        raise RequestValidationError(errors)
    return pips


Pips = Annotated[list[int], Depends(_pip_query)]
IdQuery = Annotated[
    str | None, Query(description="Position ID, PositionID:MatchID or XGID (instead of p0..p25)")
]
PlyQuery = Annotated[QInt | None, Query(description=f"search depth 0..{MAX_PLY}, gnubg numbering")]


def _not_json(value: Any) -> bool:
    """A number strict JSON cannot hold (NaN, +-Infinity; ``1e400`` reads as infinity)."""
    return isinstance(value, float) and not math.isfinite(value)


def _bad(message: str) -> HTTPException:
    # a 100 kB bad id should not come back whole in the message
    if len(message) > 500:
        message = message[:500] + f"... ({len(message)} characters)"
    return HTTPException(status_code=400, detail=message)


_PIP_ORDER = tuple(f"p{i}" for i in range(BOARD_SIZE))
_PIP_NAMES = frozenset(_PIP_ORDER)
_PIP_NAME = re.compile(r"p\d+")
_QUERY_HINTS = {
    "dice": "give the roll as die1 and die2",
    "board": "give the position as id or p0..p25",
    "score": "give score_on_roll and score_opponent",
}


def _name_list(names: list[str], most: int = 10) -> str:
    """``a, b, c`` of the first ``most`` names (each cut to 40 characters), ``and N more`` after."""
    shown = ", ".join(n if len(n) <= 40 else n[:40] + "..." for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _check_query(request: Request, allowed: frozenset[str]) -> bool:
    """Refuse unknown and repeated query parameters; returns whether any of p0..p25 was given.

    Raises:
        HTTPException: 400 naming the parameters, or when both ``id`` and pips are given.
    """
    names = [name for name, _ in request.query_params.multi_items()]
    unknown = [n for n in dict.fromkeys(names) if n not in allowed]  # first-seen order, linear time
    if unknown:
        hints = [_QUERY_HINTS[n] for n in unknown if n in _QUERY_HINTS]
        if any(_PIP_NAME.fullmatch(n) for n in unknown):
            hints.append("points are p0..p25")
        expected = ", ".join(sorted(n for n in allowed if n not in _PIP_NAMES))
        raise _bad(
            f"unknown query parameter{'s' if len(unknown) > 1 else ''} {_name_list(unknown)}"
            + (f" ({'; '.join(hints)})" if hints else "")
            + f"; this endpoint takes {expected} and p0..p25"
        )
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    repeated = [n for n, k in counts.items() if k > 1]
    if repeated:
        raise _bad(
            f"query parameter{'s' if len(repeated) > 1 else ''} {_name_list(repeated)} given more than once"
        )
    pips_given = any(n in _PIP_NAMES for n in names)
    if pips_given and "id" in names:
        raise _bad("give the position one way: id=... or p0..p25, not both")
    return pips_given


def _decode(
    position: str | None, pips: list[int] | None, pips_given: bool = True, pips_name: str = "board"
) -> tuple[np.ndarray, MatchState | None]:
    """The board and match state of a request: ``id``, or the 26 counts (``pips_given``: they were sent)."""
    if position is not None and pips is not None and pips_given:
        raise _bad(f"give the position one way: id or {pips_name}, not both")
    if position:
        try:
            return parse_position(position)
        except ValueError as exc:
            plus = (
                " (a '+' of an ID arrives as a space in a query string: write it %2B)"
                if " " in position
                else ""
            )
            raise _bad(f"id: {exc}{plus}") from None
    if pips is not None and len(pips) != BOARD_SIZE:
        raise _bad(f"board: {BOARD_SIZE} counts [p0..p25] needed, got a list of length {len(pips)}")
    if pips is None or not any(pips):
        raise _bad("give a position: id=<Position ID, PositionID:MatchID or XGID> or p0..p25")
    if any(not -15 <= c <= 15 for c in pips):
        raise _bad("board: each count must be within -15..15")
    try:
        board = validate_board(np.asarray(pips, dtype=np.int8))
    except ValueError as exc:
        raise _bad(f"board: {exc}") from None
    if board[BAR] < 0 or board[OPP_BAR] > 0:
        raise _bad("board: p25 (the mover's bar) must be >= 0 and p0 (the opponent's bar) <= 0")
    return board, None


def _live(board: np.ndarray) -> None:
    if game_result(board) != 0 or not (board > 0).any() or not (board < 0).any():
        raise _bad("the game in that position is already over")


def _dice(
    die1: int | None, die2: int | None, state: MatchState | None, names: tuple[str, str] = ("die1", "die2")
) -> tuple[int, int]:
    if state is not None and state.dice != (0, 0):
        if die1 is None and die2 is None:
            die1, die2 = state.dice
        elif sorted((die1, die2)) != sorted(state.dice):
            raise _bad(
                f"dice: the ID holds the roll {state.dice[0]}-{state.dice[1]}, and {names[0]}/{names[1]} "
                f"give {die1}-{die2}: give the dice one way (the ID's, or an ID without dice)"
            )
    if die1 is None or die2 is None:
        raise _bad(f"dice: give {names[0]} and {names[1]} (1..6), or an ID whose dice are rolled")
    for name, die in zip(names, (die1, die2), strict=True):
        if not 1 <= die <= 6:  # before numpy: a 30-digit die is no int64
            raise _bad(f"{name} must be 1..6, got {die}")
    try:
        d = validate_dice(np.asarray([die1, die2]))[0]
    except ValueError as exc:
        raise _bad(f"dice: {exc}") from None
    return int(d[0]), int(d[1])


def _probs_view(p: np.ndarray) -> Probabilities:
    p = [float(v) for v in p]
    return Probabilities(win=p[0], winG=p[1], winBg=p[2], loseG=p[3], loseBg=p[4])


def _nan_to_none(v: float | None) -> float | None:
    return None if v is None or not np.isfinite(v) else float(v)


_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorResponse,
        "description": "a malformed request: a bad ID, dice, pips or ply, a finished game, the position "
        "given twice, an unknown or repeated parameter or an unknown body field; the detail names it",
    }
}
_MOVE_QUERY = _PIP_NAMES | {"id", "die1", "die2", "ply"}
_EVAL_QUERY = _PIP_NAMES | {"id", "ply"}
_CUBE_QUERY = _PIP_NAMES | {
    "id", "ply", "cube_value", "cube_owner", "match_length", "score_on_roll", "score_opponent",
    "crawford", "jacoby",
}  # fmt: skip
_BODY_HINTS = {
    "die1": 'the roll is "dice": [die1, die2]',
    "die2": 'the roll is "dice": [die1, die2]',
    "position": 'the position is "id" or "board"',
    "pips": 'the position is "id" or "board"',
    "score_on_roll": 'the score is "score": [side on roll, opponent]',
    "score_opponent": 'the score is "score": [side on roll, opponent]',
}
_BODY_MODELS = {"/move": "MoveBody", "/eval": "PositionBody", "/cube": "CubeBody"}


def _extra_fields_message(request: Request, errors: list[dict[str, Any]]) -> str:
    """``unknown field(s) ...`` of a JSON body, with the field meant and the fields the endpoint takes."""
    names = list(dict.fromkeys(str(e["loc"][-1]) for e in errors if e.get("loc")))
    hints = list(dict.fromkeys(_BODY_HINTS[n] for n in names if n in _BODY_HINTS))
    if any(_PIP_NAME.fullmatch(n) for n in names):
        hints.append('the position is "id" or "board": [p0, ..., p25]')
    model = (
        _WEB_BODY_MODELS.get(request.url.path)
        or {"MoveBody": MoveBody, "PositionBody": PositionBody, "CubeBody": CubeBody}[
            _BODY_MODELS.get(request.url.path, "PositionBody")
        ]
    )
    expected = ", ".join(model.model_fields)
    return (
        f"unknown field{'s' if len(names) > 1 else ''} {_name_list(names)}"
        + (f" ({'; '.join(hints)})" if hints else "")
        + f"; the body takes {expected}"
    )


# --------------------------------------------------------------------------- schema errors, bounded

_ECHO = reprlib.Repr()  # keyword arguments only from Python 3.12
_ECHO.maxlevel, _ECHO.maxtuple, _ECHO.maxlist, _ECHO.maxdict = 2, 4, 4, 4
_ECHO.maxstring = _ECHO.maxother = _ECHO.maxlong = MAX_ECHO


def _cut(text: str, most: int = MAX_ECHO) -> str:
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def _echo(value: Any) -> Any:
    """A refused value as shown back: a short scalar as it is, anything else cut to a short text.

    Bounded in time and size whatever the value (reprlib stops at a few items and levels).
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) < 10**18:
            return value
        digits = value.bit_length() * 0.30103
        return _cut(str(value)) if digits < 4000 else f"an integer of about {digits:.0f} digits"
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, (list, tuple, dict)) and not value:
        return type(value)() if isinstance(value, dict) else []
    return _ECHO.repr(value)


def _brief_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """FastAPI's 422 ``detail`` list, bounded: the first :data:`MAX_ERRORS` errors, each value cut short.

    A further item ``{"type": "too_many_errors", ...}`` counts the errors left out. Every item
    is plain JSON (a ``ctx`` holding an exception is given as its message).
    """
    brief = []
    for e in errors[:MAX_ERRORS]:
        item: dict[str, Any] = {
            "type": e.get("type"),
            "loc": [x if isinstance(x, int) else _cut(str(x), 40) for x in e.get("loc", ())],
            "msg": _cut(str(e.get("msg", "")), 200),
        }
        if "input" in e:
            item["input"] = _echo(e["input"])
        if e.get("ctx"):
            item["ctx"] = {
                str(k): _echo(v if isinstance(v, (int, float, str)) else str(v)) for k, v in e["ctx"].items()
            }
        brief.append(item)
    if len(errors) > MAX_ERRORS:
        left = len(errors) - MAX_ERRORS
        brief.append(
            {"type": "too_many_errors", "loc": [], "msg": f"{left} more error{'s' * (left > 1)} not shown"}
        )
    return brief


# --------------------------------------------------------------------------- transport limits


def _limit_error(status: int, detail: str) -> HTTPException:
    """An answer that also closes the connection (the rest of the body is not read)."""
    return HTTPException(status_code=status, detail=detail, headers={"Connection": "close"})


def _too_large(limit: int) -> HTTPException:
    return _limit_error(413, f"request body too large: the limit is {limit} bytes")


class _RequestLimits:
    """ASGI middleware for what uvicorn lacks: a request body's size and the time it may take to arrive.

    A body over ``max_body_bytes`` is a 413: at once, unread, when its Content-Length says so, else as soon
    as the bytes read pass the limit (a chunked body). A body still incomplete ``timeout`` seconds after
    the request's headers is a 408. Both answers close the connection. A Content-Length that is not a
    number is a 400 (uvicorn's h11 refuses most such requests before they get here).
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, timeout: float) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                if not value.strip().isdigit():
                    refusal = _limit_error(400, "Content-Length must be a number of bytes")
                elif int(value) > self.max_body_bytes:
                    refusal = _too_large(self.max_body_bytes)
        if refusal is not None:
            response = JSONResponse(
                status_code=refusal.status_code, content={"detail": refusal.detail}, headers=refusal.headers
            )
            await response(scope, receive, send)
            return
        deadline = asyncio.get_running_loop().time() + self.timeout
        body_done = False
        size = 0

        async def limited_receive() -> Message:
            nonlocal body_done, size
            if body_done:  # after the body: a disconnect may be awaited as long as it takes
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise _limit_error(
                    408, f"request timeout: the body did not arrive within {self.timeout:g} s"
                ) from None
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                if size > self.max_body_bytes:
                    raise _too_large(self.max_body_bytes)
                body_done = not message.get("more_body", False)
            else:
                body_done = True
            return message

        await self.app(scope, limited_receive, send)


_FAST_INT = re.compile(rb"-?[0-9]{1,2}")
_FAST_KEYS = {f"p{i}".encode(): i for i in range(BOARD_SIZE)}
_FAST_PATHS = {"/move": "move", "/eval": "eval"}
_MONEY = cube_state_from_match(None)


class _PlainQueries:
    """ASGI middleware: the plain ``GET /move`` and ``GET /eval`` answered without FastAPI's routing.

    A bot asks ``GET /move?p1=2&...&die1=3&die2=1`` over and over; FastAPI's routing, dependencies
    and parameter validation cost about as much as the engine's 0-ply work (cProfile, 2026-12-02).
    This path takes only a query it can read without doubt: ``key=value`` pairs of ``p0..p25``,
    ``die1``/``die2`` (``/move``) and ``ply``, each at most once, every value one or two digits
    with an optional ``-``, no ``%`` or ``+`` escapes; a legal board of a game not over; dice
    1..6; a ply whose agent is built. Anything else (an ``id``, an unknown or repeated parameter, a
    value to refuse, a full queue, a ply not used before) goes on to FastAPI unchanged, which
    answers it as it always did, errors included. What this path answers is the same
    job through the same :class:`Engine` and the same bytes and headers as FastAPI's route
    (``tests/test_http_fast.py`` compares them), so which path served a request cannot be told.
    """

    def __init__(self, app: ASGIApp, engine: Engine) -> None:
        self.app = app
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = _FAST_PATHS.get(scope.get("path", "")) if scope["type"] == "http" else None
        if kind is not None and scope["method"] == "GET":
            job = self._job(kind, scope.get("query_string", b""))
            if job is not None:
                try:
                    body = await self.engine.try_submit(*job)
                except (QueueFull, HTTPException):
                    pass  # FastAPI's route answers it: the 503 or the request's own 400, as always
                else:
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 200,
                            "headers": [
                                (b"content-length", str(len(body)).encode()),
                                (b"content-type", b"application/json"),
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": body})
                    return
        await self.app(scope, receive, send)

    def _job(self, kind: str, query: bytes) -> tuple[str, Any, tuple] | None:
        """``(kind, agent, payload)`` of a plain query, or None for FastAPI to answer."""
        if not query or b"%" in query or b"+" in query:
            return None
        pips = [0] * BOARD_SIZE
        dice: dict[bytes, int] = {}
        ply = None
        seen: set[bytes] = set()
        for item in query.split(b"&"):
            key, eq, value = item.partition(b"=")
            if not eq or key in seen or not _FAST_INT.fullmatch(value):
                return None
            seen.add(key)
            index = _FAST_KEYS.get(key)
            if index is not None:
                pips[index] = int(value)
            elif key == b"ply":
                ply = int(value)
            elif kind == "move" and key in (b"die1", b"die2"):
                dice[key] = int(value)
            else:
                return None
        agent = self.engine.agents.get(self.engine.default_ply if ply is None else ply)
        if agent is None or pips[BAR] < 0 or pips[OPP_BAR] > 0 or (pips[BAR] and pips[OPP_BAR]):
            return None  # (both sides on the bar: validate_board's dead-position check is FastAPI's)
        mine = sum(c for c in pips if c > 0)
        theirs = -sum(c for c in pips if c < 0)
        # validate_board's rules on these counts (each -99..99 here): at most 15 a side; and the
        # game not over (_live): both sides have checkers left, so neither has borne off all 15
        if not (0 < mine <= NUM_CHECKERS and 0 < theirs <= NUM_CHECKERS):
            return None
        board = np.array(pips, dtype=np.int8)
        if kind == "eval":
            return kind, agent, (board, None)
        d1, d2 = dice.get(b"die1", 0), dice.get(b"die2", 0)
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
            return None
        return kind, agent, (board, (d1, d2), _MONEY)


_TIMEOUT_408 = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s"
)


class _H11WithHeaderTimeout(H11Protocol):
    """uvicorn's h11 protocol with a deadline for a request's line and headers, which uvicorn lacks.

    From a connection's start, and from the first byte of each later request, the headers must be in
    within ``header_timeout`` seconds, or the connection is answered 408 and closed.
    """

    header_timeout: float = REQUEST_TIMEOUT

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_timed_out)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self._arm_header_timer()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _headers_timed_out(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        body = json.dumps(
            {
                "detail": f"request timeout: the request line and headers did not arrive within {self.header_timeout:g} s"
            }
        ).encode()
        self.transport.write(_TIMEOUT_408 % (len(body), body))
        self.transport.close()


# --------------------------------------------------------------------------- the engine behind the handlers


class Engine:
    """What the handlers share: the agents per ply and the batcher that runs all engine work.

    Args:
        agent_factory: ``ply -> agent``; a :class:`nard_ai.search.lookahead.Agent` gets a
            :class:`nard_ai.eval.aligned.BatchInvariantEvaluator` around its evaluator, so
            that a request's answer does not depend on the requests batched with it.
        default_ply: the depth of requests that give none.
        batch: the batcher's window and bounds.

    Raises:
        ValueError: if the default-ply agent cannot be built (built here, at start-up).
    """

    def __init__(self, agent_factory: Callable[[int], Any], default_ply: int, batch: BatchSettings) -> None:
        self.agent_factory = agent_factory
        self.default_ply = default_ply
        self.agents: dict[int, Any] = {default_ply: self._build(default_ply)}
        self.batcher = Batcher(self._compute, batch, inline=self._cheap)
        self._warm_up(self.agents[default_ply])

    @staticmethod
    def _warm_up(agent: Any) -> None:
        """Answer one ``/move`` and one ``/eval`` now, so that what loads on first use (the bear-off
        database, the network's first-layer tables) loads at start-up, not in the first requests' time."""
        board = starting_board()
        _move_answers(agent, [(board, (3, 1), cube_state_from_match(None))])
        if hasattr(agent, "evaluate"):
            bearoff = np.zeros(BOARD_SIZE, dtype=np.int8)
            bearoff[[1, 2, 3]], bearoff[[22, 23, 24]] = 5, -5  # both sides home: a bear-off database position
            _eval_answers(agent, [(board, None), (bearoff, None)])

    def _cheap(self, kind: str, key: Any) -> bool:
        """Whether a group of jobs is cheap enough for the event loop: 0-ply ``/move`` and ``/eval``."""
        return kind in ("move", "eval") and any(
            id(agent) == key and getattr(agent, "ply", None) == 0 for agent in self.agents.values()
        )

    def _build(self, p: int) -> Any:
        agent = self.agent_factory(p)
        if isinstance(agent, Agent) and not isinstance(agent.evaluator, BatchInvariantEvaluator):
            agent = Agent(
                BatchInvariantEvaluator(agent.evaluator), ply=agent.ply, rules=agent.rules,
                name=agent.name, filters=agent.filters,
            )  # fmt: skip
        return agent

    async def agent_for(self, p: int | None) -> Any:
        """The agent of a request's ``ply`` (built on first use, on the engine's thread).

        Raises:
            HTTPException: 400 on a ply outside 0..MAX_PLY or one the agent refuses.
        """
        try:
            p = check_ply(self.default_ply if p is None else int(p))
        except ValueError as exc:
            raise _bad(str(exc)) from None
        if p not in self.agents:
            try:
                agent = await self.batcher.run(lambda: self._build(p))
            except ValueError as exc:
                raise _bad(f"ply: {exc}") from None
            self.agents.setdefault(p, agent)
        return self.agents[p]

    async def try_submit(self, kind: str, agent: Any, payload: Any) -> Any:
        """One request's job through the batcher.

        Raises:
            QueueFull: when ``max_queue`` jobs already wait (nothing is queued then).
        """
        return await self.batcher.submit(kind, id(agent), (agent, payload))

    async def submit(self, kind: str, agent: Any, payload: Any) -> Any:
        """One request's job through the batcher (answers 503 when its queue is full)."""
        try:
            return await self.try_submit(kind, agent, payload)
        except QueueFull as exc:
            raise HTTPException(status_code=503, detail=str(exc), headers={"Retry-After": "1"}) from None

    def _compute(self, kind: str, key: Any, jobs: Sequence[tuple[Any, Any]]) -> list[Any]:
        agent = jobs[0][0]  # one key, one agent
        payloads = [payload for _, payload in jobs]
        if kind == "move":
            return _move_answers(agent, payloads)
        if kind == "eval":
            return _eval_answers(agent, payloads)
        raise ValueError(f"unknown job kind {kind!r}")


async def _engine(request: Request) -> Engine:
    return request.app.state.engine


EngineDep = Annotated[Engine, Depends(_engine)]


def _json_bytes(content: Any) -> bytes:
    """JSON as Starlette's ``JSONResponse`` renders it (compact, UTF-8, no NaN)."""
    return json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode()


def _json(body: bytes) -> Response:
    return Response(content=body, media_type="application/json")


def _probs_dict(p: list[float]) -> dict[str, float]:
    return {"win": p[0], "winG": p[1], "winBg": p[2], "loseG": p[3], "loseBg": p[4]}


def _move_answers(agent: Any, payloads: Sequence[tuple]) -> list[bytes]:
    """``/move`` answers (JSON bytes of :class:`MoveResponse`) of requests ``(board, dice, cube_state)``.

    One batched search for all of them (:func:`nard_ai.search.lookahead.rank_plays_batch`) when the
    agent is an :class:`Agent`; any other agent (a test's fake) ranks each position itself. The
    answers are built for the whole batch at once: one Position ID call and one play description
    (:func:`describe_plays_batch`) for every play of every request, then each answer's JSON
    (:func:`_move_json`).
    """
    boards = np.stack([board for board, _, _ in payloads])
    dice = np.array([d for _, d, _ in payloads], dtype=np.int8)
    if isinstance(agent, Agent):
        ranked = rank_plays_batch(
            agent.evaluator, boards, dice, agent.rules, ply=agent.ply, filters=agent.filters
        )
    else:
        ranked = [agent.rank_plays(board, d) for board, d, _ in payloads]
    scored = [
        score_plays(plays, cube_state) for plays, (_, _, cube_state) in zip(ranked, payloads, strict=True)
    ]
    counts = [len(s.afterstates) for s in scored]
    after = np.concatenate([np.asarray(s.afterstates, dtype=np.int8).reshape(-1, BOARD_SIZE) for s in scored])
    owner = np.repeat(np.arange(len(payloads)), counts)
    described = describe_plays_batch(boards, dice, after, owner)
    ids = position_ids(np.concatenate([boards, swap_sides(after)]))
    board_ids, after_ids = ids[: len(payloads)], ids[len(payloads) :]
    answers = []
    start = 0
    for i, s in enumerate(scored):
        stop = start + counts[i]
        answers.append(
            _move_json(
                s, described[start:stop], after_ids[start:stop], payloads[i][1], agent.ply, board_ids[i]
            )
        )
        start = stop
    return answers


def _number(value: float) -> str:
    """A float as JSON text, as ``json.dumps`` writes it (``repr``); NaN and infinities are refused.

    Raises:
        ValueError: on NaN or an infinity (``json.dumps(..., allow_nan=False)``'s error).
    """
    if value != value or value in (math.inf, -math.inf):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return repr(value)


def _move_json(scored, described, after_ids, dice, ply: int, board_id: str) -> bytes:
    """One ``/move`` answer: the bytes ``_json_bytes`` gives for the answer's dict, written directly.

    The answer holds only ints, floats and ASCII strings that need no escape (notation, Position
    IDs, ``ranked_by``), so each move is one formatted string; ``tests/test_http_fast.py`` checks
    the bytes against :func:`_json_bytes` of the same dict.
    """
    probs = np.asarray(scored.probs, dtype=np.float64).tolist()  # float32 -> the same doubles as float()
    equity = np.asarray(scored.equity, dtype=np.float64).tolist()
    mwc = None if scored.mwc is None else np.asarray(scored.mwc, dtype=np.float64).tolist()
    n = _number
    parts = []
    for i, (steps, notation) in enumerate(described):
        p = probs[i]
        play = ",".join(f'{{"from":{int(a)},"to":{int(b)}}}' for a, b in steps)
        parts.append(
            f'{{"play":[{play}],"notation":"{notation}","probabilities":{{"win":{n(p[0])},'
            f'"winG":{n(p[1])},"winBg":{n(p[2])},"loseG":{n(p[3])},"loseBg":{n(p[4])}}},'
            f'"equity":{n(equity[i])},"mwc":{"null" if mwc is None else n(mwc[i])},'
            f'"position_id":"{after_ids[i]}"}}'
        )
    return (
        f'{{"moves":[{",".join(parts)}],"ranked_by":"{scored.ranked_by}","dice":[{int(dice[0])},{int(dice[1])}],'
        f'"ply":{int(ply)},"position_id":"{board_id}"}}'
    ).encode()


def _eval_answers(agent: Any, payloads: Sequence[tuple]) -> list[bytes | HTTPException]:
    """``/eval`` answers (JSON bytes of :class:`EvalResponse`) of requests ``(board, state)``, one evaluation."""
    boards = np.stack([board for board, _ in payloads])
    probs, equity = agent.evaluate(boards)
    board_ids = position_ids(boards)
    answers: list[bytes | HTTPException] = []
    for i, (board, state) in enumerate(payloads):
        advice = None
        if _cube is not None:
            try:
                decision = _cube.cube_decision_from_probs(
                    probs[i], cube_state_from_match(state), _cube.cube_efficiency(board), ply=agent.ply
                )
            except ValueError as exc:
                answers.append(_bad(f"cube: {exc}"))
                continue
            advice = _advice(decision).model_dump()
        answers.append(
            _json_bytes(
                {
                    "probabilities": _probs_dict([float(v) for v in probs[i]]),
                    "equity": float(equity[i]),
                    "cube": advice,
                    "ply": agent.ply,
                    "position_id": board_ids[i],
                }
            )
        )
    return answers


# --------------------------------------------------------------------------- handlers: one per endpoint


async def _move(engine: Engine, board, state, dice, req_ply) -> Response:
    _live(board)
    try:
        cube_state = cube_state_from_match(state)  # money for a bare Position ID or pips
    except ValueError as exc:
        raise _bad(f"id: the match state cannot be used: {exc}") from None
    agent = await engine.agent_for(req_ply)
    return _json(await engine.submit("move", agent, (board, dice, cube_state)))


async def _eval(engine: Engine, board, state, req_ply) -> Response:
    _live(board)
    agent = await engine.agent_for(req_ply)
    return _json(await engine.submit("eval", agent, (board, state)))


async def _cube_answer(engine: Engine, board, state, req_ply, overrides) -> CubeResponse:
    _live(board)
    try:
        cube_state = cube_state_from_match(state, **overrides)
    except ValueError as exc:
        raise _bad(f"cube: {exc}") from None
    agent = await engine.agent_for(req_ply)

    def decide():
        try:
            return _cube.cube_decision(board, cube_state, agent=agent)
        except ValueError as exc:
            raise _bad(f"cube: {exc}") from None

    d = await engine.batcher.run(decide)  # not batched: one decision is a search of its own
    mwc = None
    if not cube_state.is_money:
        mwc = {
            "no_double": _nan_to_none(d.no_double_mwc),
            "double_take": _nan_to_none(d.double_take_mwc),
            "double_pass": _nan_to_none(d.double_pass_mwc),
        }
    advice = _advice(d)
    return CubeResponse(
        action=d.action,
        double=advice.double,
        accept=advice.accept,
        no_double=float(d.no_double),
        double_take=_nan_to_none(d.double_take),
        double_pass=_nan_to_none(d.double_pass),
        optimal=float(d.optimal),
        cubeless_equity=float(d.cubeless_equity),
        take_point=_nan_to_none(d.take_point),
        probabilities=_probs_view(d.probs),
        cube_value=cube_state.value,
        cube_owner=cube_state.owner,
        match_length=cube_state.match_length,
        score=cube_state.score,
        mwc=mwc,
        ply=agent.ply,
        position_id=position_id(board),
    )


router = APIRouter(dependencies=[Depends(_no_repeated_fields)])
"""The engine's endpoints; :func:`create_app` includes it (and any other router, see there)."""


@router.get(
    "/move", response_model=MoveResponse, summary="ranked plays of a position and roll (wildbg /move)",
    responses=_ERRORS, openapi_extra={"parameters": _PIP_PARAMETERS},
)  # fmt: skip
async def get_move(
    request: Request,
    engine: EngineDep,
    pips: Pips,
    die1: Annotated[QInt | None, Query(description="first die, 1..6")] = None,
    die2: Annotated[QInt | None, Query(description="second die, 1..6")] = None,
    id: IdQuery = None,  # noqa: A002 - the public parameter name
    ply: PlyQuery = None,
) -> Response:
    pips_given = _check_query(request, _MOVE_QUERY)
    board, state = _decode(id, pips, pips_given, "p0..p25")
    return await _move(engine, board, state, _dice(die1, die2, state), ply)


@router.post("/move", response_model=MoveResponse, summary="ranked plays, JSON body", responses=_ERRORS)
async def post_move(body: MoveBody, engine: EngineDep) -> Response:
    board, state = _decode(body.id, body.board)
    die1, die2 = body.dice if body.dice is not None else (None, None)
    return await _move(engine, board, state, _dice(die1, die2, state, ("dice[0]", "dice[1]")), body.ply)


@router.get(
    "/eval", response_model=EvalResponse, summary="probabilities and cubeless equity (wildbg /eval)",
    responses=_ERRORS, openapi_extra={"parameters": _PIP_PARAMETERS},
)  # fmt: skip
async def get_eval(
    request: Request,
    engine: EngineDep,
    pips: Pips,
    id: IdQuery = None,  # noqa: A002
    ply: PlyQuery = None,
) -> Response:
    pips_given = _check_query(request, _EVAL_QUERY)
    board, state = _decode(id, pips, pips_given, "p0..p25")
    return await _eval(engine, board, state, ply)


@router.post("/eval", response_model=EvalResponse, summary="evaluation, JSON body", responses=_ERRORS)
async def post_eval(body: PositionBody, engine: EngineDep) -> Response:
    board, state = _decode(body.id, body.board)
    return await _eval(engine, board, state, body.ply)


@router.get(
    "/cube", response_model=CubeResponse, summary="cube decision for the side on roll, before rolling",
    responses=_ERRORS, openapi_extra={"parameters": _PIP_PARAMETERS},
)  # fmt: skip
async def get_cube(
    request: Request,
    engine: EngineDep,
    pips: Pips,
    id: IdQuery = None,  # noqa: A002
    ply: PlyQuery = None,
    cube_value: QInt | None = None,
    cube_owner: Annotated[str | None, Query(description="centred, on_roll or opponent")] = None,
    match_length: QInt | None = None,
    score_on_roll: QInt | None = None,
    score_opponent: QInt | None = None,
    crawford: QBool | None = None,
    jacoby: QBool | None = None,
) -> CubeResponse:
    pips_given = _check_query(request, _CUBE_QUERY)
    board, state = _decode(id, pips, pips_given, "p0..p25")
    score = None
    if score_on_roll is not None or score_opponent is not None:
        score = (score_on_roll or 0, score_opponent or 0)
    overrides = dict(
        value=cube_value, owner=cube_owner, match_length=match_length, score=score,
        crawford=crawford, jacoby=jacoby,
    )  # fmt: skip
    return await _cube_answer(engine, board, state, ply, overrides)


@router.post("/cube", response_model=CubeResponse, summary="cube decision, JSON body", responses=_ERRORS)
async def post_cube(body: CubeBody, engine: EngineDep) -> CubeResponse:
    board, state = _decode(body.id, body.board)
    overrides = dict(
        value=body.cube_value, owner=body.cube_owner, match_length=body.match_length,
        score=body.score, crawford=body.crawford, jacoby=body.jacoby,
    )  # fmt: skip
    return await _cube_answer(engine, board, state, body.ply, overrides)


@router.get("/health", summary="liveness and settings")
async def health(engine: EngineDep) -> dict[str, Any]:
    return {"status": "ok", "default_ply": engine.default_ply, "cube": _cube is not None}


# --------------------------------------------------------------------------- errors, app-wide


async def _schema_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    # an unknown body field is a 400 naming it and the expected fields; other schema errors stay 422,
    # with at most MAX_ERRORS errors and each refused value cut short: bounded work on the event loop
    errors = exc.errors()
    extra = [e for e in errors if e.get("type") == "extra_forbidden"]
    if extra and len(extra) == len(errors):
        return JSONResponse(status_code=400, content={"detail": _extra_fields_message(request, extra)})
    if any(isinstance(e.get("input"), bytes) for e in errors):
        # the body was not read as JSON: no JSON content type (and perhaps not even UTF-8)
        return JSONResponse(
            status_code=415,
            content={"detail": "the body must be JSON, sent with Content-Type: application/json"},
        )
    bad_numbers = [e for e in errors if _not_json(e.get("input"))]
    if bad_numbers:
        # NaN, Infinity or 1e400 in a JSON body (Python's JSON reader takes them)
        fields = _name_list([".".join(str(x) for x in e.get("loc", ())[1:]) or "body" for e in bad_numbers])
        return JSONResponse(
            status_code=400, content={"detail": f"{fields}: not a finite number in range (NaN/Infinity?)"}
        )
    return JSONResponse(status_code=422, content={"detail": _brief_errors(errors)})


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:  # the server never dies on input
    log.exception("unexpected error on %s", request.url)
    return JSONResponse(status_code=500, content={"detail": f"internal error: {type(exc).__name__}: {exc}"})


# --------------------------------------------------------------------------- the app


def create_app(
    checkpoint: str | Path | None = None,
    ply: int = 0,
    agent_factory: Callable[[int], Any] | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    request_timeout: float = REQUEST_TIMEOUT,
    batch: BatchSettings | None = None,
) -> FastAPI:
    """The FastAPI application: the limits, the error answers, and the routers.

    Args:
        checkpoint: network checkpoint (default: the shipped one).
        ply: default search depth of requests that give none.
        agent_factory: ``ply -> agent`` (a :class:`nard_ai.search.lookahead.Agent`);
            default :func:`nard_ai.agents.load_agent` with ``checkpoint``.
            Agents are built on first use and cached per ply.
        max_body_bytes: the largest request body taken; a larger one is answered 413.
        request_timeout: seconds a request's body may take to arrive after its headers; then 408.
        batch: the request batcher's window and bounds (:class:`nard_ai.interfaces.batching.BatchSettings`;
            default its defaults).

    Raises:
        ValueError: on a limit that is not a positive number (``max_body_bytes`` may be 0), or if the
            default-ply agent cannot be built.
        FileNotFoundError: on a missing checkpoint.
    """
    _check_limits(max_body_bytes=max_body_bytes, request_timeout=request_timeout)
    if agent_factory is None:
        from nard_ai.agents import load_agent

        def agent_factory(p: int):
            return load_agent(checkpoint, ply=p)

    engine = Engine(agent_factory, ply, batch or BatchSettings())  # fails at start-up, not on a request
    app = FastAPI(
        title="nard_ai",
        version="0.1.0",
        description=(__doc__ or "").split("\n\n")[0]
        + " Positions as wildbg's p0..p25 or as gnubg/XG IDs; see each endpoint.",
    )
    app.state.engine = engine
    app.add_middleware(_PlainQueries, engine=engine)
    app.add_middleware(_RequestLimits, max_body_bytes=max_body_bytes, timeout=request_timeout)
    app.add_exception_handler(RequestValidationError, _schema_error)
    app.add_exception_handler(Exception, _unexpected)
    # the routers: the engine's JSON endpoints; other pages and endpoints are included here, one line each
    app.include_router(router)
    app.include_router(_web_board(agent_factory, ply), dependencies=[Depends(_no_repeated_fields)])
    return app


def _web_board(agent_factory: Callable[[int], Any], default_ply: int):
    """The web board's router (:mod:`nard_ai.interfaces.web`): the page at ``/`` and its ``/web/*``
    endpoints. Its handlers run in FastAPI's thread pool, not on the batcher's engine thread, so they
    get agents of their own from ``agent_factory`` (cached per ply, searched under one lock of their
    own) and never share an evaluator with the batched endpoints."""
    agents: dict[int, Any] = {}
    build_lock = threading.Lock()

    def agent_for(p: int | None) -> Any:
        try:
            p = check_ply(default_ply if p is None else int(p))
        except ValueError as exc:
            raise _bad(str(exc)) from None
        with build_lock:
            if p not in agents:
                try:
                    agents[p] = agent_factory(p)
                except ValueError as exc:
                    raise _bad(f"ply: {exc}") from None
            return agents[p]

    return web_router(agent_for, threading.Lock(), _decode, _live, _dice, agent_factory)


def _advice(decision) -> CubeAdvice:
    double = decision.cube_available and decision.action in ("double_take", "double_pass")
    # the taker's view, whether or not the double is right
    accept = bool(
        not decision.cube_available
        or not np.isfinite(decision.double_take)
        or decision.double_take <= decision.double_pass
    )
    return CubeAdvice(double=bool(double), accept=accept)


def bind_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (port 0: a free one), not yet listening.

    Binding first lets a busy port or a bad address be one clear error
    instead of a server that starts, logs and exits.

    Raises:
        ValueError: ``cannot listen on HOST:PORT: <reason>`` (a port in use,
            an address that is not this machine's, a host that does not resolve).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, UnicodeError, IndexError) as exc:
        raise ValueError(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: restart despite TIME_WAIT
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _check_limits(**limits: float) -> None:
    """Raises ValueError naming a limit that is not a positive number (``max_body_bytes`` may be 0)."""
    for name, value in limits.items():
        integral = name != "request_timeout"  # max_body_bytes, max_connections, workers
        ok = isinstance(value, int) if integral else isinstance(value, (int, float))
        ok = ok and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value < 0 or (value == 0 and name != "max_body_bytes"):
            kind = "an integer" if integral else "a number"
            least = ">= 0" if name == "max_body_bytes" else "> 0"
            raise ValueError(f"{name} must be {kind} {least}, got {value!r}")


def server_config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8080,
    request_timeout: float = REQUEST_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
) -> Any:
    """The ``uvicorn.Config`` of :func:`serve`: uvicorn's own limits where they do the job.

    h11 with a deadline for the request line and headers (``request_timeout``, 408),
    ``limit_concurrency=max_connections`` (beyond: uvicorn's 503), ``h11_max_incomplete_event_size``
    :data:`MAX_HEADER_BYTES` (beyond: uvicorn's 400), ``timeout_keep_alive`` :data:`KEEP_ALIVE_TIMEOUT`.

    Raises:
        ValueError: on a limit that is not a positive number.
    """
    import uvicorn

    _check_limits(request_timeout=request_timeout, max_connections=max_connections)
    protocol = type(
        "H11WithHeaderTimeout", (_H11WithHeaderTimeout,), {"header_timeout": float(request_timeout)}
    )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        limit_concurrency=max_connections,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_TIMEOUT,
        log_level="info",
    )


def serve(
    host: str = "127.0.0.1",
    port: int = 8080,
    checkpoint: str | None = None,
    ply: int = 0,
    max_body_bytes: int = MAX_BODY_BYTES,
    request_timeout: float = REQUEST_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
    batch: BatchSettings | None = None,
    workers: int = 1,
) -> None:
    """Run the HTTP server with uvicorn until interrupted.

    The address is bound before the network loads (:func:`bind_socket`), and
    the port actually bound (port 0: one the system picks) is logged. The limits
    are those of :func:`create_app` and :func:`server_config`; ``batch`` the
    batcher's (:class:`nard_ai.interfaces.batching.BatchSettings`).

    With ``workers > 1``, that many processes are forked after the socket is bound
    (before any network is loaded), each with its own app and engine, all accepting
    on the one socket (the kernel hands each connection to one of them); the limits
    hold per process. A worker that exits is started again, unless it exits within
    :data:`WORKER_START_SECONDS` of its start: then the server stops with an error.

    Raises:
        ValueError: when ``host:port`` cannot be bound, a limit is not a positive number, or the agent
            cannot be built.
        FileNotFoundError: on a missing checkpoint.
        RuntimeError: when a worker process fails at start-up.
    """
    import uvicorn

    _check_limits(
        max_body_bytes=max_body_bytes, request_timeout=request_timeout, max_connections=max_connections,
        workers=workers,
    )  # fmt: skip
    sock = bind_socket(host, port)
    if checkpoint is not None and not Path(checkpoint).is_file():  # before any worker is forked
        sock.close()
        raise FileNotFoundError(f"no checkpoint at {checkpoint}")

    def run_one() -> None:
        app = create_app(
            checkpoint=checkpoint, ply=ply, max_body_bytes=max_body_bytes, request_timeout=request_timeout,
            batch=batch,
        )  # fmt: skip
        config = server_config(
            app, host, bound, request_timeout=request_timeout, max_connections=max_connections
        )
        uvicorn.Server(config).run(sockets=[sock])

    try:
        bound = sock.getsockname()[1]
        log.info("nard_ai HTTP server on http://%s:%d (OpenAPI schema at /openapi.json)", host, bound)
        if workers == 1:
            run_one()
        else:
            sock.listen(socket.SOMAXCONN)
            _supervise(run_one, workers)
    finally:
        sock.close()


WORKER_START_SECONDS = 10.0
"""A worker process that exits sooner than this after its start failed to start (:func:`serve`)."""


def _worker_main(run_one: Callable[[], None]) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers (SIGTERM)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        run_one()
    except KeyboardInterrupt:
        pass


def _supervise(run_one: Callable[[], None], workers: int) -> None:
    """Fork ``workers`` processes running ``run_one`` and keep them running until interrupted.

    Raises:
        RuntimeError: when a worker exits within :data:`WORKER_START_SECONDS` of its start.
    """
    import multiprocessing
    import signal
    import time

    context = multiprocessing.get_context("fork")  # the bound socket and the settings go by memory

    def start():
        process = context.Process(target=_worker_main, args=(run_one,), daemon=True)
        process.start()
        return process, time.monotonic()

    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` stops the workers too
    running = [start() for _ in range(workers)]
    log.info("started %d worker processes: %s", workers, ", ".join(str(p.pid) for p, _ in running))
    try:
        while True:
            for k, (process, started) in enumerate(running):
                process.join(timeout=0.5 / workers)
                if process.exitcode is None:
                    continue
                if time.monotonic() - started < WORKER_START_SECONDS:
                    raise RuntimeError(
                        f"HTTP worker process {process.pid} exited with status {process.exitcode} "
                        f"at start-up (see the log above)"
                    )
                log.warning(
                    "HTTP worker %d exited with status %s; starting another", process.pid, process.exitcode
                )
                running[k] = start()
    finally:
        signal.signal(signal.SIGTERM, previous)
        for process, _ in running:
            if process.exitcode is None:
                process.terminate()
        for process, _ in running:
            process.join(timeout=10)
            if process.exitcode is None:
                process.kill()
