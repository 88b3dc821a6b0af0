"""The HTTP backend's fast path: the plain pip ``GET /move`` and ``GET /eval`` answered before FastAPI.

:class:`_PlainQueries`, an ASGI middleware: a query it can read without doubt goes straight to the
:class:`nard_ai.interfaces.http.engine.Engine`, with the same answer bytes and headers as FastAPI's
route; anything else goes on to FastAPI unchanged (``tests/test_http_fast.py`` checks both).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from fastapi import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS, OPP_BAR
from nard_ai.cube.state import cube_state_from_match
from nard_ai.interfaces.batching import QueueFull
from nard_ai.interfaces.http.engine import Engine

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
