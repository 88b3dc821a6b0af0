"""The HTTP backend's request reading: queries and bodies in, a board and a match state out, errors shaped.

What every handler of :mod:`nard_ai.interfaces.http.endpoints` (and the web board's) reads a
request with: :func:`_pip_query` (``p0``..``p25`` read by hand, FastAPI's 422 answers),
:func:`_check_query` (unknown and repeated query parameters: 400), :func:`_no_stray_query` (a query
string where the endpoint takes none, a JSON body's POST included: 400), :func:`_no_repeated_fields`
(a JSON body giving a field twice: 400), :func:`_decode` (the position: ``id`` or the 26 counts),
:func:`_live` (a finished game, a state with no turn to analyse: the command line's check) and
:func:`_dice`; and the shape of the answers refusing a request: :func:`_bad`
(a 400 naming the field), :func:`_extra_fields_message` (an unknown body field) and
:func:`_brief_errors` (FastAPI's 422 list, bounded).
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from typing import Annotated, Any

import numpy as np
from fastapi import Depends, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError

from nard_ai.core.board import BAR, BOARD_SIZE, OPP_BAR, game_result, validate_board, validate_dice
from nard_ai.core.ply import MAX_PLY
from nard_ai.formats.match_id import MatchState, not_playing
from nard_ai.formats.position import parse_position
from nard_ai.interfaces.commands.common import roll_conflict
from nard_ai.interfaces.http.limits import MAX_ECHO, MAX_ERRORS
from nard_ai.interfaces.http.schemas import _INT_TEXT, CubeBody, MoveBody, PositionBody, QInt
from nard_ai.interfaces.web import BODY_MODELS as _WEB_BODY_MODELS

# --------------------------------------------------------------------------- request decoding


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


def _takes_query(dependant: Any) -> bool:
    """Whether a route's handler, or any dependency of it, declares a query parameter."""
    return bool(dependant.query_params) or any(_takes_query(d) for d in dependant.dependencies)


async def _no_stray_query(request: Request) -> None:
    """Refuse a query string that the endpoint would otherwise ignore: any query parameter of a POST
    whose fields are its JSON body (``POST /eval?ply=2`` would answer at the default ply), and of
    an endpoint that takes no query parameter (``GET /health``, ``GET /web/rollout/{job}``). The
    endpoints that read a query (``GET /move``, ``/eval``, ``/cube``, ``POST /web/analysis``) check
    theirs themselves (:func:`_check_query`); pages outside the schema (``/``, ``/static/...``) are
    left alone.

    Raises:
        HTTPException: 400 naming the parameters and, for a JSON body, saying that they go there.
    """
    route = request.scope.get("route")
    if not request.scope.get("query_string") or not getattr(route, "include_in_schema", False):
        return
    body = getattr(route, "body_field", None)
    if body is None and _takes_query(route.dependant):  # a query the handler reads and checks itself
        return
    names = list(dict.fromkeys(name for name, _ in request.query_params.multi_items()))
    if not names:  # "?" or "?&" alone
        return
    endpoint = f"{request.method} {route.path}"
    if body is not None:
        fields = list(getattr(body.field_info.annotation, "model_fields", ()))
        sent = [n for n in names if n in fields]
        quoted = [f'"{n}"' for n in sent]
        hints = [f"send {_name_list(quoted)} in the body"] if sent else []
        hints += list(dict.fromkeys(_BODY_HINTS[n] for n in names if n in _BODY_HINTS))
        if any(_PIP_NAME.fullmatch(n) for n in names):
            hints.append('the position is "id" or "board": [p0, ..., p25]')
        raise _bad(
            f"query parameter{'s' if len(names) > 1 else ''} {_name_list(names)}: {endpoint} takes its "
            "fields in the JSON body, not in the query string"
            + (f" ({'; '.join(hints)})" if hints else "")
            + (f"; the body takes {', '.join(fields)}" if fields else "")
        )
    raise _bad(
        f"unknown query parameter{'s' if len(names) > 1 else ''} {_name_list(names)}; "
        f"{endpoint} takes no query parameters"
    )


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
    (:func:`schemas._int_text`), ``int_parsing_size`` past pydantic's 4,300 digits (its rule: a ``+``
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
        if pips_name == "p0..p25":  # a query
            raise _bad("give a position: id=<Position ID, PositionID:MatchID or XGID> or p0..p25")
        raise _bad(
            ("board: all 26 counts are 0, no checkers; " if pips is not None else "")
            + 'give a position in the JSON body: "id" (a Position ID, PositionID:MatchID or XGID) '
            'or "board" (26 counts [p0, ..., p25])'
        )
    if any(not -15 <= c <= 15 for c in pips):
        raise _bad("board: each count must be within -15..15")
    try:
        board = validate_board(np.asarray(pips, dtype=np.int8))
    except ValueError as exc:
        raise _bad(f"board: {exc}") from None
    if board[BAR] < 0 or board[OPP_BAR] > 0:
        raise _bad("board: p25 (the mover's bar) must be >= 0 and p0 (the opponent's bar) <= 0")
    return board, None


def _live(board: np.ndarray, state: MatchState | None = None, *, double_ok: bool = False) -> None:
    """Refuse a position with nothing to analyse: a board whose game is over, or a match state that is
    not a live turn (:func:`nard_ai.formats.match_id.not_playing`, the check ``nard hint``,
    ``eval``, ``cube`` and ``rollout`` make too: a game over, resigned or dropped, a resignation or,
    unless ``double_ok`` (``/cube``, which answers take or pass), a double awaiting its answer).

    Raises:
        HTTPException: 400 naming the state.
    """
    if game_result(board) != 0 or not (board > 0).any() or not (board < 0).any():
        raise _bad("the game in that position is already over")
    reason = not_playing(state, double_ok=double_ok)
    if reason is not None:
        raise _bad(f"id: {reason}")


_BODY_DICE = ("dice[0]", "dice[1]")  # the names of a JSON body's dice in the answers


def _dice(
    die1: int | None, die2: int | None, state: MatchState | None, names: tuple[str, str] = ("die1", "die2")
) -> tuple[int, int]:
    if state is not None and state.dice != (0, 0):
        if die1 is None and die2 is None:
            die1, die2 = state.dice
        elif die1 is None or die2 is None:
            raise _bad(
                f"dice: give both {names[0]} and {names[1]}, or neither for the ID's roll "
                f"{state.dice[0]}-{state.dice[1]}"
            )
        else:
            conflict = roll_conflict(state, (die1, die2), f"{names[0]}/{names[1]} give")
            if conflict is not None:
                raise _bad(f"dice: {conflict}")
    if die1 is None or die2 is None:
        wanted = '"dice": [die1, die2]' if names == _BODY_DICE else f"{names[0]} and {names[1]}"
        raise _bad(f"dice: give {wanted} (1..6), or an ID whose dice are rolled")
    for name, die in zip(names, (die1, die2), strict=True):
        if not 1 <= die <= 6:  # before numpy: a 30-digit die is no int64
            raise _bad(f"{name} must be 1..6, got {die}")
    try:
        d = validate_dice(np.asarray([die1, die2]))[0]
    except ValueError as exc:
        raise _bad(f"dice: {exc}") from None
    return int(d[0]), int(d[1])


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
