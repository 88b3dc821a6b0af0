"""Bounded loopback load test of the HTTP backend (not run by pytest).

Starts ``nard serve`` on 127.0.0.1 (a free port) in a subprocess, then for
each number of clients (default 32 and 128) runs, for ``--duration`` seconds
each: ``GET /health`` (the web stack's own ceiling: no engine work), ``GET
/move`` at 0-ply and at 1-ply, and ``GET /eval`` at 0-ply. Each client is one
keep-alive HTTP/1.1 connection sending its next request when the last answer
is in (a small asyncio client, so that the client's own cost stays small next
to the server's on the same cores). Positions come from seeded random games
with random dice. For each run it prints requests/s, p50 and p99 latency, the
errors (any answer but 200, or a failed connection), and the ratios of
requests/s and latency to ``/health`` of the same run; and the server's
resident memory (RSS, all its processes) at the start and at the end.

    python benchmarks/load_test.py                         # 2 x 4 runs of 30 s
    python benchmarks/load_test.py --duration 300 --clients 32 --runs move0   # memory over 5 minutes
    python benchmarks/load_test.py --serve-args="--workers 2 --batch-window-ms 2"

Bounded: every request has a 30 s timeout, every run stops after its
duration, and the server is stopped at the end (also on an error or Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

from nard_ai.interfaces.http.limits import MAX_CONNECTIONS

REQUEST_TIMEOUT = 30.0  # seconds for one answer
RUNS = {
    "health": ("/health", None),
    "move0": ("/move", 0),
    "move1": ("/move", 1),
    "eval0": ("/eval", 0),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _positions(n: int, seed: int) -> list[dict[str, int]]:
    """``n`` query dicts ``p0..p25, die1, die2`` of positions of seeded random games (side on roll's view)."""
    import nard_ai as na

    rng = np.random.default_rng(seed)
    out: list[dict[str, int]] = []
    games = na.new_games(64, rng)
    while len(out) < n:
        for b, d in zip(games.boards, games.dice, strict=True):
            if (b > 0).any() and (b < 0).any():
                out.append(
                    {**{f"p{i}": int(c) for i, c in enumerate(b) if c}, "die1": int(d[0]), "die2": int(d[1])}
                )
        after, owner = na.legal_plays_batch(games.boards, games.dice)
        games = na.step(games, after[np.searchsorted(owner, np.arange(len(games.boards)))], rng)
        if (~(games.boards > 0).any(axis=1) | ~(games.boards < 0).any(axis=1)).any():
            games = na.new_games(64, rng)  # a game ended: start afresh
    return out[:n]


def _targets(path: str, ply: int | None, positions: list[dict[str, int]]) -> list[bytes]:
    """The request lines of a run: one request per position (``/health``: one)."""
    if ply is None:
        return [f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()]
    out = []
    for p in positions:
        query = {k: v for k, v in p.items() if path == "/move" or not k.startswith("die")}
        out.append(
            f"GET {path}?{urlencode({**query, 'ply': ply})} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        )
    return out


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> int:
    """Send one request on a keep-alive connection and read its answer; returns the status code."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    await reader.readexactly(length)
    if b"connection: close" in head.lower():
        raise ConnectionResetError("the server closed the connection")
    return status


async def _client(port: int, requests: list[bytes], k: int, clients: int, deadline: float, out: dict) -> None:
    i = k
    reader = writer = None
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        ok = False
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", port), REQUEST_TIMEOUT
                )
            status = await asyncio.wait_for(
                _exchange(reader, writer, requests[i % len(requests)]), REQUEST_TIMEOUT
            )
            ok = status == 200
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            if writer is not None:
                writer.close()
            reader = writer = None
        out["latencies"].append(time.perf_counter() - t0)
        out["errors"] += not ok
        i += clients
    if writer is not None:
        writer.close()


def run(port: int, name: str, clients: int, duration: float, positions: list[dict[str, int]]) -> dict:
    """One run: ``clients`` connections for ``duration`` seconds on run ``name`` of :data:`RUNS`."""
    path, ply = RUNS[name]
    requests = _targets(path, ply, positions)
    out: dict = {"latencies": [], "errors": 0}

    async def main() -> float:
        deadline = time.perf_counter() + duration
        t0 = time.perf_counter()
        await asyncio.gather(*(_client(port, requests, k, clients, deadline, out) for k in range(clients)))
        return time.perf_counter() - t0

    wall = asyncio.run(main())
    lat = np.array(out["latencies"]) * 1000
    return {
        "run": name,
        "clients": clients,
        "seconds": round(wall, 1),
        "requests": len(lat),
        "errors": out["errors"],
        "requests_per_s": round(len(lat) / wall, 1),
        "p50_ms": round(float(np.percentile(lat, 50)), 1) if len(lat) else None,
        "p99_ms": round(float(np.percentile(lat, 99)), 1) if len(lat) else None,
    }


def _tree_rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants, MiB (Linux ``/proc``)."""
    total_kib = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total_kib / 1024


def _wait_for(port: int, server: subprocess.Popen, seconds: float = 120.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return True
        except OSError:
            time.sleep(0.2)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per run (default 30)")
    parser.add_argument(
        "--clients", type=int, nargs="+", default=[32, 128], help="concurrent clients (default 32 128)"
    )
    parser.add_argument(
        "--runs", nargs="+", choices=list(RUNS), default=list(RUNS), help="runs, in order (default: all)"
    )
    parser.add_argument(
        "--serve-args", default="", help="more `nard serve` options, e.g. '--workers 2 --batch-window-ms 2'"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per run")
    args = parser.parse_args()
    if not 0 < args.duration <= 3600 or any(not 1 <= c <= 1000 for c in args.clients):
        parser.error("--duration must be in (0, 3600] seconds and --clients each 1..1000")
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "nard_ai.interfaces.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    # the server's default limit (256: uvicorn answers 503 once that many connections are open) serves
    # 255 clients; more clients get their number plus 16, so that no run measures uvicorn's 503s
    limit = max(MAX_CONNECTIONS, max(args.clients) + 16)
    command += ["--max-connections", str(limit), *shlex.split(args.serve_args)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not _wait_for(port, server):
            print("server did not start", file=sys.stderr)
            return 1
        positions = _positions(4000, seed=0)
        rss_start = _tree_rss_mib(server.pid)
        print(f"server: {' '.join(command[3:])}; RSS at start {rss_start:.0f} MiB; {os.cpu_count()} CPUs")
        for clients in args.clients:
            health = None
            for name in args.runs:
                result = run(port, name, clients, args.duration, positions)
                if name == "health":
                    health = result
                elif health is not None and health["requests_per_s"]:
                    result["rate_vs_health"] = round(result["requests_per_s"] / health["requests_per_s"], 3)
                    result["p50_vs_health"] = round(result["p50_ms"] / health["p50_ms"], 2)
                    result["p99_vs_health"] = round(result["p99_ms"] / health["p99_ms"], 2)
                if args.json:
                    print(json.dumps(result), flush=True)
                else:
                    ratios = (
                        f"; vs /health: rate x{result['rate_vs_health']}, p50 x{result['p50_vs_health']}, "
                        f"p99 x{result['p99_vs_health']}"
                        if "rate_vs_health" in result
                        else ""
                    )
                    print(
                        f"{clients:4d} clients {name:7s}: {result['requests_per_s']:8.1f} req/s, "
                        f"p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, {result['errors']} errors "
                        f"({result['requests']} requests, {result['seconds']} s){ratios}",
                        flush=True,
                    )
        print(f"server RSS at end {_tree_rss_mib(server.pid):.0f} MiB (at start {rss_start:.0f} MiB)")
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
