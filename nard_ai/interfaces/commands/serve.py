"""``nard serve``: the HTTP JSON backend (:mod:`nard_ai.interfaces.http`), or gnubg's external player.

Over HTTP, concurrent requests are evaluated together (:mod:`nard_ai.interfaces.batching`:
``--batch-window-ms``, ``--max-batch``, ``--max-queue``), and ``--workers N`` runs N server
processes on the one listening socket. With ``--external PORT`` it serves gnubg's
external-player protocol instead (:mod:`nard_ai.interfaces.external`; ``--max-connections``,
``--idle-timeout``). The address is bound first, so a busy port or a bad host is one error
line (status 2); port 0 picks a free port, and the port bound is logged.
"""

from __future__ import annotations

import argparse
import math

from nard_ai.interfaces.commands.common import (
    add_checkpoint,
    add_ply,
    agent_arg,
    positive_int,
    positive_seconds,
)

NAME = "serve"
SUMMARY = "run the HTTP JSON opponent backend, or gnubg's external-player protocol with --external"
DESCRIPTION = (
    "Serve the engine over HTTP (FastAPI; OpenAPI schema at /openapi.json), e.g. "
    "`nard serve --port 8080` then `curl 'http://127.0.0.1:8080/move?id=4HPwATDgc/ABMA&die1=3&die2=1'`; "
    "or gnubg's external-player protocol: `nard serve --external 4321`, then in gnubg "
    "`set player 1 external localhost:4321`. The address is bound first: a port in use or a bad "
    "--host is one error line (status 2); port 0 picks a free port, and the port bound is logged. "
    "Concurrent HTTP requests are evaluated together: those arriving within --batch-window-ms of "
    "each other (and those that arrive while a batch is computed) form one batch of at most "
    "--max-batch requests, with the same answers as one at a time; beyond --max-queue waiting "
    "requests the answer is 503. "
    "The external player reads lines of at most 4096 bytes, serves --max-connections at once and "
    "closes a connection after --idle-timeout seconds without a request. Runs until interrupted."
)
EXAMPLES = (
    "nard serve --port 8080",
    "nard serve --port 8080 --ply 1 --batch-window-ms 2",
    "nard serve --port 8080 --workers 2",
    "nard serve --external 4321",
    "nard serve --external 0",
    "nard serve --external 4321 --idle-timeout 3600",
)

_HTTP_ONLY = ("max_body_bytes", "request_timeout", "batch_window_ms", "max_batch", "max_queue", "workers")


# http.limits.MIN_BODY_BYTES and SMALLEST_BODY, not imported here (the web stack is slow to load);
# tests/test_server.py keeps them equal
MIN_BODY_BYTES = 36
SMALLEST_BODY = '{"id":"4HPwATDgc/ABMA","dice":[3,1]}'


def _body_bytes(text: str) -> int:
    """argparse type: a body limit in bytes, at least :data:`MIN_BODY_BYTES` (the smallest POST /move body)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < MIN_BODY_BYTES:
        raise argparse.ArgumentTypeError(
            f"must be at least {MIN_BODY_BYTES} bytes (the smallest POST /move body, {SMALLEST_BODY}, "
            f"is {MIN_BODY_BYTES} bytes), got {text}"
        )
    return value


def _window_ms(text: str) -> float:
    """argparse type: a number of milliseconds 0..1000."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of milliseconds: {text!r}") from None
    if not (math.isfinite(value) and 0 <= value <= 1000):
        raise argparse.ArgumentTypeError(f"must be a number of milliseconds 0..1000, got {text}")
    return value


def configure(p: argparse.ArgumentParser) -> None:
    """The options of ``nard serve`` (defaults ``None``: the HTTP modules' own, not imported here)."""
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="HTTP port (default: 8080)")
    add_ply(p, text="default search depth, gnubg numbering (default: 0)")
    add_checkpoint(p)
    p.add_argument(
        "--external",
        type=int,
        default=None,
        metavar="PORT",
        help="serve gnubg's external-player protocol on PORT",
    )
    # defaults None: nard_ai.interfaces.http's and .batching's (not imported here: the web stack is slow
    # to load); tests/test_server.py checks that the numbers in these help texts are their defaults
    p.add_argument(
        "--max-body-bytes",
        type=_body_bytes,
        default=None,
        help=f"HTTP: the largest request body taken, in bytes, at least {MIN_BODY_BYTES} (the smallest POST "
        "/move body); a larger one is answered 413 (default: 65536)",
    )
    p.add_argument(
        "--request-timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="HTTP: seconds a request's line and headers may take to arrive, and again its body; "
        "then the answer is 408 (default: 10)",
    )
    p.add_argument(
        "--max-connections",
        type=positive_int,
        default=None,
        # the default is http.limits.MAX_CONNECTIONS (tests/test_server.py keeps them equal; the CLI
        # does not import the server, and with it FastAPI, just to print it)
        help="HTTP: connections open (and requests in progress) at most: once this many connections are "
        "open, uvicorn answers 503 (default: 256), so 255 keep-alive clients are served; with --external: "
        "connections served at once, one more is refused with an Error line (default: 64)",
    )
    p.add_argument(
        "--batch-window-ms",
        type=_window_ms,
        default=None,
        metavar="MS",
        help="HTTP: milliseconds a batch waits after its first request for more to arrive "
        "(0: only those already waiting; default: 0)",
    )
    p.add_argument(
        "--max-batch",
        type=positive_int,
        default=None,
        help="HTTP: requests evaluated in one batch at most (default: 64)",
    )
    p.add_argument(
        "--max-queue",
        type=positive_int,
        default=None,
        help="HTTP: requests waiting for a batch at most; one more is answered 503 (default: 256)",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="HTTP: server processes sharing the listening socket, each with its own engine (about 460 MiB), "
        "1..16 (default: 1)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --external: close a connection silent for this long (default: 600)",
    )


def _load_error(checkpoint: str | None, ply: int | None) -> str | None:
    """Why the network at ``checkpoint`` cannot be loaded at ``ply`` (``agent_arg``'s message), or None.

    Run in a spawned process for ``--workers N``, so that the server processes fork from a parent
    that never started torch's threads."""
    from nard_ai.agents import load_agent

    try:
        load_agent(checkpoint, ply=ply)
    except (ValueError, FileNotFoundError) as exc:
        return str(exc)
    return None


def _load_error_in_child(checkpoint: str | None, ply: int | None) -> str | None:
    """:func:`_load_error` in a new Python process (a subprocess, not multiprocessing, whose resource
    tracker the forked server processes would inherit)."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys; from nard_ai.interfaces.commands.serve import _load_error; "
        "print(json.dumps(_load_error(*json.loads(sys.argv[1]))))"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, json.dumps([checkpoint, ply])], capture_output=True, text=True
    )
    lines = child.stdout.strip().splitlines()
    if child.returncode != 0 or not lines:
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return f"the checkpoint could not be checked before the workers start: {last}"
    return json.loads(lines[-1])


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Serve until interrupted; bad options, a busy port or a missing checkpoint: ``parser.error``."""
    import logging

    for name, port in (("--port", args.port), ("--external", args.external)):
        if port is not None and not 0 <= port <= 65535:
            parser.error(f"{name} must be 0..65535, got {port}")
    if args.external is None:
        if args.idle_timeout is not None:
            parser.error("--idle-timeout applies to --external only")
    else:
        for name in _HTTP_ONLY:
            if getattr(args, name) is not None:
                parser.error(f"--{name.replace('_', '-')} applies to HTTP only, not to --external")
        if args.idle_timeout is not None and not 0 < args.idle_timeout < float("inf"):
            parser.error(f"--idle-timeout must be a number of seconds above 0, got {args.idle_timeout:g}")
    # a bad --ply or checkpoint is one error line before the server logs that it is listening
    if args.ply is not None:
        from nard_ai.core.ply import check_ply

        try:
            check_ply(args.ply)
        except ValueError as exc:
            parser.error(str(exc))
    if args.external is not None or args.workers in (None, 1):
        # one process: load the network as the engine will (a missing or truncated file fails here).
        # Never before --workers N forks: a worker forked after torch started its threads hangs.
        agent_arg(parser, args.checkpoint, args.ply)
    else:  # --workers N: the same load in a child process of its own, which the workers do not inherit
        error = _load_error_in_child(args.checkpoint, args.ply)
        if error:
            parser.error(error)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        if args.external is not None:
            from nard_ai.interfaces.external import serve_external

            limits = {"max_connections": args.max_connections, "idle_timeout": args.idle_timeout}
            given = {key: value for key, value in limits.items() if value is not None}
            serve_external(args.external, host=args.host, checkpoint=args.checkpoint, ply=args.ply, **given)
        else:
            from nard_ai.interfaces.batching import BatchSettings
            from nard_ai.interfaces.http import serve

            batch = {
                field: getattr(args, option)
                for field, option in (
                    ("window_ms", "batch_window_ms"),
                    ("max_batch", "max_batch"),
                    ("max_queue", "max_queue"),
                )
                if getattr(args, option) is not None
            }
            limits = {
                name: getattr(args, name)
                for name in ("max_body_bytes", "request_timeout", "max_connections", "workers")
                if getattr(args, name) is not None
            }
            serve(
                host=args.host, port=args.port, checkpoint=args.checkpoint, ply=args.ply,
                batch=BatchSettings(**batch), **limits,
            )  # fmt: skip
    except (ValueError, FileNotFoundError, OSError, RuntimeError) as exc:
        parser.error(str(exc))
    except KeyboardInterrupt:
        pass
    return 0
