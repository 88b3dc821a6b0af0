"""HTTP backend and web board, a frontend developer's pass: regressions of what it found.

* ``/web/reply`` (and every web board search) answered in other last bits than ``/move`` and than
  itself, depending on which thread of FastAPI's pool ran it: the web board's agents were the bare
  network, whose sums round differently with 1 and 2 torch threads on batches of 32 rows or more
  (``nard_ai/eval/aligned.py``'s docstring, measured there), and a pool thread keeps the count it
  started with. The right value: the same bits on any thread count, as the engine's
  ``BatchInvariantEvaluator``-wrapped agents give (README "Serving the engine": "the answers are
  the same JSON bytes as each request sent alone"); found by 240 mixed requests sent in sequence
  and then in parallel (3 ``/web/reply`` answers differed in the 7th digit of ``equity``).
* ``POST /web/analysis`` requests waiting for the one analysis at a time each held a thread of
  FastAPI's pool (40), so 45 uploads held up every other ``/web/*`` endpoint and the page: a
  ``POST /web/roll`` took 10.7 s. They now wait on the event loop; one whose client has gone is
  not analysed.
"""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from nard_ai.eval.aligned import BatchInvariantEvaluator
from nard_ai.formats.position import parse_position
from nard_ai.interfaces import web
from nard_ai.interfaces.http import create_app

START_ID = "4HPwATDgc/ABMA"  # README "Serving the engine"


@pytest.fixture(scope="module")
def app():
    return create_app()


def _on_a_thread(threads: int, work):
    """``work()`` on a new thread whose torch thread count is ``threads`` (as a pool thread's may be)."""
    import torch

    out = []

    def run():
        torch.set_num_threads(threads)
        out.append(work())

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out[0]


def test_web_board_searches_answer_alike_on_any_torch_thread_count(app):
    agent = app.state.web_board.agent_for(0)
    assert isinstance(agent.evaluator, BatchInvariantEvaluator)  # as the engine's (engine.batch_invariant)
    board, _ = parse_position(START_ID)
    # the opening 1-1: 42 plays, so the afterstates' batch is over the 32 rows a second thread splits
    one, two = (_on_a_thread(n, lambda: agent.rank_plays(board, (1, 1))) for n in (1, 2))
    assert len(one.equity) == 42
    assert one.equity.tobytes() == two.equity.tobytes()
    np.testing.assert_array_equal(one.afterstates, two.afterstates)


def test_web_reply_gives_the_best_move_of_post_move_to_the_last_bit(app):
    client = TestClient(app)
    for dice in ([1, 1], [2, 4], [4, 4]):
        reply = client.post("/web/reply", json={"id": START_ID, "dice": dice, "ply": 0}).json()
        best = client.post("/move", json={"id": START_ID, "dice": dice, "ply": 0}).json()["moves"][0]
        # README "Web board": the ranked plays come "from POST /move (the same ranking as every client)"
        assert (reply["notation"], reply["equity"]) == (best["notation"], best["equity"])


def _slow_analysis(calls: list):
    def slow(board_state, data, ply, errors_only):
        with board_state.analysis_lock:  # as web._analyse: one analysis at a time
            time.sleep(0.05)
            calls.append(data)
        return web.AnalysisResponse(analysis={}, swing=[], warnings=[])

    return slow


def test_waiting_analyses_hold_no_thread_of_the_pool(app, monkeypatch):
    calls: list[bytes] = []
    monkeypatch.setattr(web, "_analyse", _slow_analysis(calls))

    async def main():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=60) as c:
            uploads = [asyncio.create_task(c.post("/web/analysis", content=b"x")) for _ in range(45)]
            await asyncio.sleep(0.02)
            roll = await c.post("/web/roll", json={"seed": 1, "turn": 0})
            done_then = len(calls)
            answers = await asyncio.gather(*uploads)
        return roll, done_then, answers

    roll, done_then, answers = asyncio.run(main())
    assert roll.status_code == 200 and roll.json()["dice"] == [3, 6]  # README "Web board": [3, 6]
    # with each waiting upload on a pool thread (40), the roll waited for 6 or more analyses of 0.05 s
    assert done_then <= 2
    assert [a.status_code for a in answers] == [200] * 45 and len(calls) == 45


def test_an_analysis_whose_client_left_while_it_waited_is_not_run(app, monkeypatch):
    calls: list[bytes] = []
    monkeypatch.setattr(web, "_analyse", _slow_analysis(calls))

    async def main():
        gate = app.state.web_board.analysis_turn()
        await gate.acquire()  # another analysis is running
        messages = [{"type": "http.request", "body": b"x", "more_body": False}]

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        sent = []

        async def send(message):
            sent.append(message)

        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": "/web/analysis", "raw_path": b"/web/analysis", "query_string": b"",
            "root_path": "", "headers": [(b"content-length", b"1")], "server": ("t", 80), "client": ("c", 1),
        }  # fmt: skip
        task = asyncio.create_task(app(scope, receive, send))
        await asyncio.sleep(0.05)
        gate.release()
        await task
        return sent

    sent = asyncio.run(main())
    assert calls == []
    assert sent[0]["status"] == 400 and b"closed the connection" in sent[1]["body"]
