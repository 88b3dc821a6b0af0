"""The HTTP backend's endpoints: one handler function per endpoint on :data:`router`, and the error answers.

Each endpoint is one handler (``get_move``, ``post_move``, ``get_eval``, ``post_eval``,
``get_cube``, ``post_cube``, ``health``) taking its request model
(:mod:`nard_ai.interfaces.http.schemas`) or its query parameters (the names each GET takes:
``_MOVE_QUERY``, ``_EVAL_QUERY``, ``_CUBE_QUERY``); the GET and the POST of one path share their
work (:func:`_move`, :func:`_eval`, :func:`_cube_answer`). :func:`_schema_error` and
:func:`_unexpected` are the app-wide exception handlers
:func:`nard_ai.interfaces.http.app.create_app` installs.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from nard_ai import cube as _cube
from nard_ai.cube.state import cube_state_from_match
from nard_ai.formats.position import is_xgid
from nard_ai.formats.position_id import position_id
from nard_ai.interfaces.commands.common import impossible_double
from nard_ai.interfaces.http.decoding import (
    _PIP_NAMES,
    _PIP_PARAMETERS,
    IdQuery,
    Pips,
    PlyQuery,
    _bad,
    _brief_errors,
    _check_query,
    _decode,
    _dice,
    _extra_fields_message,
    _live,
    _name_list,
    _no_repeated_fields,
    _no_stray_query,
    _not_json,
)
from nard_ai.interfaces.http.engine import Engine, EngineDep, _advice, _json
from nard_ai.interfaces.http.schemas import (
    CubeBody,
    CubeResponse,
    ErrorResponse,
    EvalResponse,
    MoveBody,
    MoveResponse,
    PositionBody,
    Probabilities,
    QBool,
    QInt,
)

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- what the endpoints take and answer

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorResponse,
        "description": "a malformed request: a bad ID, dice, pips or ply, a finished game (or an ID whose "
        "game is over, or with a resignation or, but for /cube, a double awaiting its answer), the position "
        "given twice, the cube and match state given twice (/cube: an ID with a Match ID or an XGID and a "
        "cube parameter), an unknown or repeated parameter, an unknown body field, or a query parameter "
        "of a POST (its fields go in the JSON body); the detail names it",
    }
}
_MOVE_QUERY = _PIP_NAMES | {"id", "die1", "die2", "ply"}
_EVAL_QUERY = _PIP_NAMES | {"id", "ply"}
_CUBE_QUERY = _PIP_NAMES | {
    "id", "ply", "cube_value", "cube_owner", "match_length", "score_on_roll", "score_opponent",
    "crawford", "jacoby",
}  # fmt: skip


_NOT_WITH_AN_ID_STATE = (
    "; only with a bare Position ID or p0..p25 (an ID with a Match ID, or an XGID, holds its own)"
)
_CUBE_PARAMETERS = (
    "cube_value", "cube_owner", "match_length", "score_on_roll", "score_opponent", "crawford", "jacoby",
)  # fmt: skip
_CUBE_FIELDS = ("cube_value", "cube_owner", "match_length", "score", "crawford", "jacoby")


def _cube_state_once(position: str | None, state, given: dict[str, Any], where: str, pips: str) -> None:
    """Refuse the cube and match state given twice: an ID that holds one (a Match ID or an XGID) and
    cube parameters too, as the position given twice is refused; which should win is not for the
    server to guess (gnubg and XG take the whole state from the ID).

    Raises:
        HTTPException: 400 naming the parameters (or body fields) given with the ID.
    """
    names = [name for name, value in given.items() if value is not None]
    if state is None or not names:
        return
    text = (position or "").strip()
    kind = "XGID" if is_xgid(text) else "Match ID"
    listed = _name_list(names)
    raise _bad(
        f"give the cube and match state one way, not both: the ID's {kind} holds it (cube, score, "
        f"match length, Crawford, Jacoby) and the {where} also gives {listed}; give "
        f"{'these' if len(names) > 1 else 'it'} with a bare Position ID or {pips}, or the ID alone"
    )


def _probs_view(p: np.ndarray) -> Probabilities:
    p = [float(v) for v in p]
    return Probabilities(win=p[0], winG=p[1], winBg=p[2], loseG=p[3], loseBg=p[4])


def _nan_to_none(v: float | None) -> float | None:
    return None if v is None or not np.isfinite(v) else float(v)


# --------------------------------------------------------------------------- handlers: one per endpoint


async def _move(engine: Engine, board, state, dice, req_ply) -> Response:
    # the position is checked by the handler, before the dice: a finished game is named before missing dice
    try:
        cube_state = cube_state_from_match(state)  # money for a bare Position ID or pips
    except ValueError as exc:
        raise _bad(f"id: the match state cannot be used: {exc}") from None
    agent = await engine.agent_for(req_ply)
    return _json(await engine.submit("move", agent, (board, dice, cube_state)))


async def _eval(engine: Engine, board, state, req_ply) -> Response:
    # the position before the roll: an ID's dice are not used (as nard eval, which says so)
    _live(board, state)
    agent = await engine.agent_for(req_ply)
    return _json(await engine.submit("eval", agent, (board, state)))


async def _cube_answer(engine: Engine, board, state, req_ply, overrides) -> CubeResponse:
    # before the roll (an ID's dice are not used); a double awaiting its answer is this question, for the taker
    _live(board, state, double_ok=True)
    try:
        cube_state = cube_state_from_match(state, **overrides)
    except ValueError as exc:  # named by what set it: the request's cube fields, else the ID (as /move)
        given = any(v is not None for v in overrides.values())
        raise _bad(f"cube: {exc}" if given else f"id: the match state cannot be used: {exc}") from None
    agent = await engine.agent_for(req_ply)

    def decide():
        try:
            return _cube.cube_decision(board, cube_state, agent=agent)
        except ValueError as exc:
            raise _bad(f"cube: {exc}") from None

    d = await engine.batcher.run(decide)  # not batched: one decision is a search of its own
    impossible = impossible_double(state, d)  # as nard cube: a double the cube does not allow
    if impossible is not None:
        raise _bad(f"id: {impossible}")
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


router = APIRouter(dependencies=[Depends(_no_stray_query), Depends(_no_repeated_fields)])
"""The engine's endpoints; :func:`app.create_app` includes it (and any other router, see there)."""


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
    _live(board, state)
    return await _move(engine, board, state, _dice(die1, die2, state), ply)


@router.post("/move", response_model=MoveResponse, summary="ranked plays, JSON body", responses=_ERRORS)
async def post_move(body: MoveBody, engine: EngineDep) -> Response:
    board, state = _decode(body.id, body.board)
    _live(board, state)
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
    cube_value: Annotated[
        QInt | None, Query(description="the cube's value, 1, 2, 4, ... (default 1)" + _NOT_WITH_AN_ID_STATE)
    ] = None,
    cube_owner: Annotated[
        str | None,
        Query(description="centred, on_roll or opponent (default centred)" + _NOT_WITH_AN_ID_STATE),
    ] = None,
    match_length: Annotated[
        QInt | None,
        Query(description="points of the match, 1..25; 0 (the default): money" + _NOT_WITH_AN_ID_STATE),
    ] = None,
    score_on_roll: Annotated[
        QInt | None,
        Query(
            description="the match score of the side on roll (default 0), below match_length"
            + _NOT_WITH_AN_ID_STATE
        ),
    ] = None,
    score_opponent: Annotated[
        QInt | None,
        Query(
            description="the match score of its opponent (default 0), below match_length"
            + _NOT_WITH_AN_ID_STATE
        ),
    ] = None,
    crawford: Annotated[
        QBool | None,
        Query(description="true: the Crawford game of a match (default false)" + _NOT_WITH_AN_ID_STATE),
    ] = None,
    jacoby: Annotated[
        QBool | None,
        Query(description="true: money play under the Jacoby rule (default false)" + _NOT_WITH_AN_ID_STATE),
    ] = None,
) -> CubeResponse:
    pips_given = _check_query(request, _CUBE_QUERY)
    board, state = _decode(id, pips, pips_given, "p0..p25")
    given = dict(
        zip(
            _CUBE_PARAMETERS,
            (cube_value, cube_owner, match_length, score_on_roll, score_opponent, crawford, jacoby),
            strict=True,
        )
    )
    _cube_state_once(id, state, given, "query", "p0..p25")
    score = None  # a score parameter left out is 0 (no ID state here to take it from)
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
    _cube_state_once(body.id, state, {name: getattr(body, name) for name in _CUBE_FIELDS}, "body", '"board"')
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
