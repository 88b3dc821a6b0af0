"""The HTTP backend's transport limits: what a request may cost before the engine sees it.

The limit constants (README "Serving the engine"), :class:`_RequestLimits` (the ASGI middleware
for a body's size and the time it may take to arrive: 413 and 408), :class:`_H11WithHeaderTimeout`
(uvicorn's h11 protocol with a deadline for the request line and headers: 408), and
:func:`_check_limits`, the check of the settings of :func:`nard_ai.interfaces.http.app.create_app`,
:func:`~nard_ai.interfaces.http.app.server_config` and :func:`~nard_ai.interfaces.http.app.serve`.
"""

from __future__ import annotations

import asyncio
import json
import math

import h11
from fastapi import HTTPException
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

# --------------------------------------------------------------------------- limits (README "Serving the engine")

MAX_BODY_BYTES = 65_536  # a request body, bytes (the largest real one is a few hundred)
SMALLEST_BODY = '{"id":"4HPwATDgc/ABMA","dice":[3,1]}'  # the smallest body of a position and a roll
MIN_BODY_BYTES = len(SMALLEST_BODY)  # 36: the least body limit; below it POST /move could never be answered
REQUEST_TIMEOUT = 10.0  # seconds for a request's headers to arrive, and again for its body
MAX_CONNECTIONS = 256  # uvicorn's limit_concurrency: a request is answered 503 once this many connections
# are open (or this many requests are in progress), so up to 255 keep-alive clients are served
MAX_WORKERS = 16  # server processes at most: each holds its own engine (about 460 MiB with the default
# network), and on this project's 2-core machine more than 2 do not serve more
MAX_HEADER_BYTES = 16_384  # request line and headers (h11's incomplete-event limit); beyond: uvicorn's 400
KEEP_ALIVE_TIMEOUT = 5  # seconds an idle keep-alive connection stays open (uvicorn's default)
MAX_ERRORS = 10  # schema errors listed in a 422 answer
MAX_ECHO = 80  # characters of a refused value shown back in a 422 answer


# --------------------------------------------------------------------------- a request's size and time


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


# --------------------------------------------------------------------------- the settings


def _check_limits(**limits: float) -> None:
    """Raises ValueError naming a limit that is not a positive number (``max_body_bytes``: at least
    :data:`MIN_BODY_BYTES`)."""
    for name, value in limits.items():
        integral = name != "request_timeout"  # max_body_bytes, max_connections, workers
        ok = isinstance(value, int) if integral else isinstance(value, (int, float))
        ok = ok and not isinstance(value, bool) and math.isfinite(value)
        if name == "max_body_bytes" and (not ok or value < MIN_BODY_BYTES):  # every POST /move a 413
            raise ValueError(
                f"max_body_bytes must be {'' if ok else 'an integer and '}at least {MIN_BODY_BYTES} bytes "
                f"(the smallest POST /move body, {SMALLEST_BODY}, is {MIN_BODY_BYTES} bytes), got {value!r}"
            )
        if not ok or value <= 0:
            kind = "an integer" if integral else "a number"
            raise ValueError(f"{name} must be {kind} > 0, got {value!r}")
        if name == "workers" and value > MAX_WORKERS:
            raise ValueError(
                f"workers must be at most {MAX_WORKERS} (each process holds its own engine), got {value!r}"
            )
