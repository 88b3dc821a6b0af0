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
on roll, and its dice, cube and score are used (its dice where the request
gives none).

Give the position one way only: ``id`` together with ``p0``..``p25`` (or
with ``board`` in a JSON body) is refused. So is the cube and match state
given twice: ``/cube`` with an ID that holds one (a Match ID, an XGID) and
any of its cube parameters (``cube_value``, ``cube_owner``,
``match_length``, ``score_on_roll`` and ``score_opponent`` in a query,
``score`` in a body, ``crawford``, ``jacoby``); with a bare Position ID or
pips they set the state, money with the cube centred at 1 where none is
given, a score left out 0. Dice are ``die1`` and ``die2``
(1..6) in a query, ``"dice": [3, 1]`` in a JSON body. ``ply`` is the search
depth in gnubg's numbering (default: the server's ``--ply``). An unknown or
repeated query parameter, or an unknown field of a JSON body, is refused
(``400``) with its name, so a misspelt parameter is never silently ignored;
so is any query parameter of a POST, whose fields are its JSON body.

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
...) on :data:`~nard_ai.interfaces.http.endpoints.router`, with its request
and response models in :mod:`~nard_ai.interfaces.http.schemas`; they share an
:class:`~nard_ai.interfaces.http.engine.Engine` held in ``app.state.engine``.
The package's modules, each importing only those listed before it:

- :mod:`~nard_ai.interfaces.http.limits`: the limit constants, the body size
  and time limit middleware (413, 408), the deadline for the headers, the
  check of the settings;
- :mod:`~nard_ai.interfaces.http.schemas`: the pydantic request and response
  models, the strict query types ``QInt`` and ``QBool``;
- :mod:`~nard_ai.interfaces.http.decoding`: reading and checking a request's
  query or body (the position, the dice), the 400 answers and the bounded 422
  list;
- :mod:`~nard_ai.interfaces.http.engine`: the ``Engine`` (the agents per ply,
  the batcher) and the answers its batched jobs build;
- :mod:`~nard_ai.interfaces.http.fast`: the plain pip ``GET /move`` and
  ``GET /eval`` answered before FastAPI, with the same bytes;
- :mod:`~nard_ai.interfaces.http.endpoints`: ``router`` and its handlers, the
  app-wide exception handlers;
- :mod:`~nard_ai.interfaces.http.app`: :func:`create_app` (sets the limits and
  error answers and includes the routers, the web board's too),
  :func:`bind_socket`, :func:`server_config` and :func:`serve`.

The names below are re-exported here: ``from nard_ai.interfaces.http import
create_app`` and the rest work as before the split.
"""

from __future__ import annotations

from nard_ai.cube.state import cube_state_from_match
from nard_ai.formats.position import parse_position
from nard_ai.interfaces.external import checker_moves
from nard_ai.interfaces.http.app import WORKER_START_SECONDS as WORKER_START_SECONDS
from nard_ai.interfaces.http.app import bind_socket, create_app, serve, server_config
from nard_ai.interfaces.http.endpoints import router as router
from nard_ai.interfaces.http.engine import Engine as Engine
from nard_ai.interfaces.http.engine import EngineDep as EngineDep
from nard_ai.interfaces.http.limits import (
    KEEP_ALIVE_TIMEOUT,
    MAX_BODY_BYTES,
    MAX_CONNECTIONS,
    MAX_ECHO,
    MAX_ERRORS,
    MAX_HEADER_BYTES,
    REQUEST_TIMEOUT,
)
from nard_ai.interfaces.http.schemas import CheckerMove as CheckerMove
from nard_ai.interfaces.http.schemas import CubeAdvice as CubeAdvice
from nard_ai.interfaces.http.schemas import CubeBody as CubeBody
from nard_ai.interfaces.http.schemas import CubeResponse as CubeResponse
from nard_ai.interfaces.http.schemas import ErrorResponse as ErrorResponse
from nard_ai.interfaces.http.schemas import EvalResponse as EvalResponse
from nard_ai.interfaces.http.schemas import MoveBody as MoveBody
from nard_ai.interfaces.http.schemas import MoveInfo as MoveInfo
from nard_ai.interfaces.http.schemas import MoveResponse as MoveResponse
from nard_ai.interfaces.http.schemas import PositionBody as PositionBody
from nard_ai.interfaces.http.schemas import Probabilities as Probabilities
from nard_ai.interfaces.http.schemas import QBool as QBool
from nard_ai.interfaces.http.schemas import QInt as QInt

__all__ = [
    "create_app", "bind_socket", "server_config", "serve", "parse_position", "cube_state_from_match",
    "checker_moves", "MAX_BODY_BYTES", "REQUEST_TIMEOUT", "MAX_CONNECTIONS", "MAX_HEADER_BYTES",
    "KEEP_ALIVE_TIMEOUT", "MAX_ERRORS", "MAX_ECHO",
]  # fmt: skip
