"""The HTTP JSON opponent backend (FastAPI): transport only, the engine does the work.

This module builds and runs it: :func:`create_app` (the limits, the error answers and the routers,
the web board's among them), :func:`bind_socket`, :func:`server_config`, and :func:`serve` with its
worker processes (:func:`_supervise`). The endpoints and their rules are described in
:mod:`nard_ai.interfaces.http`; the first paragraph above is the start of the OpenAPI description
(:func:`create_app` reads it from this module's ``__doc__``).
"""

from __future__ import annotations

import logging
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError

from nard_ai.core.ply import check_ply
from nard_ai.core.signals import sigterm_as_interrupt
from nard_ai.interfaces.batching import BatchSettings
from nard_ai.interfaces.http.decoding import _bad, _decode, _dice, _live, _no_repeated_fields, _no_stray_query
from nard_ai.interfaces.http.endpoints import _schema_error, _unexpected, router
from nard_ai.interfaces.http.engine import Engine, batch_invariant
from nard_ai.interfaces.http.fast import _PlainQueries
from nard_ai.interfaces.http.limits import (
    KEEP_ALIVE_TIMEOUT,
    MAX_BODY_BYTES,
    MAX_CONNECTIONS,
    MAX_HEADER_BYTES,
    REQUEST_TIMEOUT,
    _check_limits,
    _H11WithHeaderTimeout,
    _RequestLimits,
)
from nard_ai.interfaces.ubgi import _package_version as _version  # the installed distribution's
from nard_ai.interfaces.web import WebBoard, install_web_board

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- the app


def create_app(
    checkpoint: str | Path | None = None,
    ply: int = 0,
    agent_factory: Callable[[int], Any] | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    request_timeout: float = REQUEST_TIMEOUT,
    batch: BatchSettings | None = None,
    jobs_folder: str | Path | None = None,
) -> FastAPI:
    """The FastAPI application: the limits, the error answers, and the routers.

    Args:
        checkpoint: network checkpoint (default: the default network, ``checkpoints/nard-expert.pt``).
        ply: default search depth of requests that give none.
        agent_factory: ``ply -> agent`` (a :class:`nard_ai.search.lookahead.Agent`);
            default :func:`nard_ai.agents.load_agent` with ``checkpoint``.
            Agents are built on first use and cached per ply.
        max_body_bytes: the largest request body taken, at least
            :data:`~nard_ai.interfaces.http.limits.MIN_BODY_BYTES` (36); a larger one is answered 413.
        request_timeout: seconds a request's body may take to arrive after its headers; then 408.
        batch: the request batcher's window and bounds (:class:`nard_ai.interfaces.batching.BatchSettings`;
            default its defaults).
        jobs_folder: the web board's rollout jobs folder, shared by the worker processes of one
            server (:mod:`nard_ai.interfaces.web_jobs`); ``None``: a temporary one of this app's own.

    Raises:
        ValueError: on a limit that is not a positive number (``max_body_bytes`` below
            :data:`~nard_ai.interfaces.http.limits.MIN_BODY_BYTES` too), or if the default-ply agent
            cannot be built.
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
        version=_version(),
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
    install_web_board(
        app,
        _web_board(agent_factory, ply, jobs_folder),
        dependencies=[Depends(_no_stray_query), Depends(_no_repeated_fields)],
    )
    return app


def _web_board(agent_factory: Callable[[int], Any], default_ply: int, jobs_folder) -> WebBoard:
    """The web board's state (:class:`nard_ai.interfaces.web.WebBoard`), for the page at ``/`` and its
    ``/web/*`` endpoints. Their handlers run in FastAPI's thread pool, not on the batcher's engine
    thread, so they get agents of their own from ``agent_factory`` (cached per ply, searched under one
    lock of their own) and never share an evaluator with the batched endpoints; each wrapped as the
    engine's (:func:`engine.batch_invariant`), so that ``/web/reply`` answers in the same bits
    whichever pool thread runs it, and as ``/move``."""
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
                    agents[p] = batch_invariant(agent_factory(p))  # the same bits as /move
                except ValueError as exc:
                    raise _bad(f"ply: {exc}") from None
            return agents[p]

    return WebBoard.create(
        agent_for, threading.Lock(), _decode, _live, _dice, agent_factory, jobs_folder=jobs_folder
    )


# --------------------------------------------------------------------------- serving


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
        from nard_ai.model.network import missing_checkpoint_message  # torch: loaded here, not at import

        raise FileNotFoundError(missing_checkpoint_message(checkpoint))

    jobs = tempfile.TemporaryDirectory(prefix="nard-rollouts-")  # made before the fork: every worker's

    def run_one() -> None:
        app = create_app(
            checkpoint=checkpoint, ply=ply, max_body_bytes=max_body_bytes, request_timeout=request_timeout,
            batch=batch, jobs_folder=jobs.name,
        )  # fmt: skip
        config = server_config(
            app, host, bound, request_timeout=request_timeout, max_connections=max_connections
        )
        uvicorn.Server(config).run(sockets=[sock])

    try:
        bound = sock.getsockname()[1]
        log.info(
            "nard_ai HTTP server on http://%s:%d (OpenAPI schema at /openapi.json), accepting "
            "connections once the network is loaded (uvicorn logs 'Application startup complete')",
            host, bound,
        )  # fmt: skip
        if workers == 1:
            # uvicorn shuts down on SIGTERM, then raises it again: as KeyboardInterrupt here, so that
            # the finally below removes the rollout jobs folder (the default action would kill at once)
            with sigterm_as_interrupt():
                run_one()
        else:
            sock.listen(socket.SOMAXCONN)
            _supervise(run_one, workers)
    finally:
        sock.close()
        jobs.cleanup()


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
    import time

    context = multiprocessing.get_context("fork")  # the bound socket and the settings go by memory

    def start():
        process = context.Process(target=_worker_main, args=(run_one,), daemon=True)
        process.start()
        return process, time.monotonic()

    running: list = []
    try:
        with sigterm_as_interrupt():  # `kill` stops the workers too
            running.extend(start() for _ in range(workers))
            log.info("started %d worker processes: %s", workers, ", ".join(str(p.pid) for p, _ in running))
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
                        "HTTP worker %d exited with status %s; starting another",
                        process.pid,
                        process.exitcode,
                    )
                    running[k] = start()
    finally:
        for process, _ in running:
            if process.exitcode is None:
                process.terminate()
        for process, _ in running:
            process.join(timeout=10)
            if process.exitcode is None:
                process.kill()
