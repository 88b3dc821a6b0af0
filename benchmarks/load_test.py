"""Bounded loopback load test of the HTTP backend (not run by pytest).

Starts ``nard serve`` on 127.0.0.1 (a free port) in a subprocess, then runs
32 concurrent clients for ``--duration`` seconds per ply, each sending
``GET /move`` for positions from random games with random dice, and reports
requests/s, p50/p99 latency and the error count per ply.

    python benchmarks/load_test.py --duration 30 --plies 0 1
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time

import httpx
import numpy as np


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _positions(n: int, seed: int) -> list[dict[str, int]]:
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
        pick = np.searchsorted(owner, np.arange(len(games.boards)))
        games = na.step(games, after[pick], rng)
    return out[:n]


def run(base: str, ply: int, clients: int, duration: float, positions: list[dict[str, int]]) -> dict:
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    deadline = time.perf_counter() + duration

    def worker(k: int) -> None:
        nonlocal errors
        mine: list[float] = []
        bad = 0
        with httpx.Client(base_url=base, timeout=30) as client:
            i = k
            while time.perf_counter() < deadline:
                params = {**positions[i % len(positions)], "ply": ply}
                t0 = time.perf_counter()
                try:
                    r = client.get("/move", params=params)
                    ok = r.status_code == 200
                except httpx.HTTPError:
                    ok = False
                mine.append(time.perf_counter() - t0)
                bad += not ok
                i += clients
        with lock:
            latencies.extend(mine)
            errors += bad

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = np.array(latencies) * 1000
    return {
        "ply": ply,
        "clients": clients,
        "seconds": round(wall, 1),
        "requests": len(lat),
        "errors": errors,
        "requests_per_s": round(len(lat) / wall, 1),
        "p50_ms": round(float(np.percentile(lat, 50)), 1) if len(lat) else None,
        "p99_ms": round(float(np.percentile(lat, 99)), 1) if len(lat) else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per ply (default 30)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 1], help="plies to test (default 0 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per ply")
    args = parser.parse_args()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "nard_ai.interfaces.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            print("server did not start", file=sys.stderr)
            return 1
        positions = _positions(2000, seed=0)
        for ply in args.plies:
            probe = httpx.get(base + "/move", params={**positions[0], "ply": ply}, timeout=30)
            if probe.status_code != 200:
                print(f"ply {ply}: skipped, server says {probe.status_code} {probe.text}")
                continue
            result = run(base, ply, args.clients, args.duration, positions)
            if args.json:
                print(json.dumps(result))
            else:
                print(
                    f"ply {ply}: {result['requests_per_s']} req/s, p50 {result['p50_ms']} ms, "
                    f"p99 {result['p99_ms']} ms, {result['errors']} errors "
                    f"({result['requests']} requests, {args.clients} clients, {result['seconds']} s)"
                )
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
