"""Batched serving (issue 17 section 1): concurrent requests answered together, byte for byte as alone.

The server gathers concurrent requests into batches (:mod:`nard_ai.interfaces.batching`) and
makes one move generation and evaluator call per ply for a batch
(:func:`nard_ai.search.lookahead.rank_plays_batch`). The promise checked here: every answer is
the same JSON bytes as the answer to the request sent alone, because the server's evaluator
(:class:`nard_ai.eval.aligned.BatchInvariantEvaluator`) rounds each board alike in any batch.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

import nard_ai as na  # noqa: E402
from nard_ai.agents import load_agent  # noqa: E402
from nard_ai.core.board import swap_sides  # noqa: E402
from nard_ai.eval.aligned import ROW_TILE, BatchInvariantEvaluator  # noqa: E402
from nard_ai.formats.notation import describe_plays, play_notation  # noqa: E402
from nard_ai.formats.position_id import position_id, position_ids  # noqa: E402
from nard_ai.interfaces.batching import Batcher, BatchSettings, QueueFull  # noqa: E402
from nard_ai.interfaces.external import checker_moves  # noqa: E402
from nard_ai.interfaces.http import create_app  # noqa: E402
from nard_ai.search.lookahead import rank_plays, rank_plays_batch  # noqa: E402


def _positions(n: int, seed: int) -> list[tuple[np.ndarray, tuple[int, int]]]:
    """``n`` (board, dice) of seeded random games, both sides with checkers left, side on roll's view."""
    rng = np.random.default_rng(seed)
    games = na.new_games(32, rng)
    out: list[tuple[np.ndarray, tuple[int, int]]] = []
    while len(out) < n:
        live = [(b.copy(), (int(d[0]), int(d[1]))) for b, d in zip(games.boards, games.dice, strict=True)]
        out.extend((b, d) for b, d in live if (b > 0).any() and (b < 0).any())
        after, owner = na.legal_plays_batch(games.boards, games.dice)
        games = na.step(games, after[np.searchsorted(owner, np.arange(len(games.boards)))], rng)
        if (~(games.boards > 0).any(axis=1) | ~(games.boards < 0).any(axis=1)).any():
            games = na.new_games(32, rng)  # a game ended: start afresh (step needs live games)
    return out[:n]


@pytest.fixture(scope="module")
def network_agent():
    return load_agent(None, ply=0)


@pytest.fixture(scope="module")
def positions():
    return _positions(300, seed=17)


def test_aligned_evaluator_gives_each_board_the_same_bits_in_any_batch(network_agent, positions):
    """A board's float32 probabilities do not depend on the batch it is evaluated in (bit for bit).

    Reference: each board's afterstates evaluated as their own batch; the same rows evaluated inside
    batches of every size 1..70 and a few large ones, at random offsets, must match exactly.
    """
    evaluator = BatchInvariantEvaluator(network_agent.evaluator)
    rng = np.random.default_rng(5)
    afterstates = np.concatenate([na.legal_plays(b, d) for b, d in positions[:60]])
    boards = swap_sides(afterstates)  # the opponent on roll, as search evaluates them
    alone = np.concatenate([evaluator.evaluate(boards[i : i + 1]) for i in range(len(boards))])
    for size in [*range(1, 71), 255, 1000, len(boards)]:
        rows = rng.choice(len(boards), size=min(size, len(boards)), replace=False)
        assert np.array_equal(evaluator.evaluate(boards[rows]), alone[rows]), f"batch of {size}"
    # and the wrapper gives the network's own numbers (float32 rounding apart)
    np.testing.assert_allclose(alone, network_agent.evaluator.evaluate(boards), atol=1e-6)
    assert ROW_TILE == 16


@pytest.mark.parametrize("ply", [0, 1])
def test_rank_plays_batch_is_rank_plays_of_each_position(network_agent, positions, ply):
    """Batched ranking: the same plays, order and bits as :func:`rank_plays` of each position alone."""
    evaluator = BatchInvariantEvaluator(network_agent.evaluator)
    chosen = positions[:40] if ply == 0 else positions[:12]
    boards = np.stack([b for b, _ in chosen])
    dice = np.array([d for _, d in chosen])
    batched = rank_plays_batch(evaluator, boards, dice, ply=ply)
    for (board, d), got in zip(chosen, batched, strict=True):
        want = rank_plays(evaluator, board, d, ply=ply)
        assert np.array_equal(got.afterstates, want.afterstates)
        assert np.array_equal(got.probs, want.probs) and got.probs.dtype == want.probs.dtype
        assert np.array_equal(got.equity, want.equity) and np.array_equal(got.plies, want.plies)


def test_rank_plays_batch_refuses_a_bad_ply(network_agent, positions):
    board, d = positions[0]
    with pytest.raises(ValueError, match="ply must be an integer 0..2"):
        rank_plays_batch(network_agent.evaluator, board[None], np.array([d]), ply=3)


def test_position_ids_match_position_id_on_every_afterstate(positions):
    afterstates = np.concatenate([na.legal_plays(b, d) for b, d in positions])
    assert position_ids(afterstates) == [position_id(a) for a in afterstates]
    assert position_ids(na.starting_board()) == ["4HPwATDgc/ABMA"]  # gnubg's ID of the opening position
    with pytest.raises(ValueError):
        position_ids(np.full((2, 26), 9, dtype=np.int8))


def test_describe_plays_gives_checker_moves_and_notation_of_each_play(positions):
    for board, d in positions:
        plays = na.legal_plays(board, d)
        want = [(checker_moves(board, a, d), play_notation(board, a, d)) for a in plays]
        assert describe_plays(board, plays, d) == want


async def _gather(app, requests: list[tuple[str, str, dict]]) -> list[tuple[int, bytes]]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:

        async def one(method: str, path: str, params: dict):
            if method == "GET":
                r = await client.get(path, params=params)
            else:
                r = await client.post(path, json=params)
            return r.status_code, r.content

        return list(await asyncio.gather(*(one(*req) for req in requests)))


def _requests(positions) -> list[tuple[str, str, dict]]:
    reqs: list[tuple[str, str, dict]] = []
    for k, (board, d) in enumerate(positions):
        pips = {f"p{i}": int(c) for i, c in enumerate(board) if c}
        ply = 1 if k % 8 == 0 else 0
        if k % 3 == 0:
            reqs.append(("POST", "/move", {"board": [int(c) for c in board], "dice": list(d), "ply": ply}))
        else:
            reqs.append(("GET", "/move", {**pips, "die1": d[0], "die2": d[1], "ply": ply}))
        if k % 4 == 0:
            reqs.append(("GET", "/eval", {**pips, "ply": ply}))
    # a bad one among them: its own 400 (the opponent's three checkers on p24: a game still on, so the die
    # is what the answer names; the position is checked first)
    reqs.append(("GET", "/move", {"p1": 3, "p24": -3, "die1": 9, "die2": 1}))
    return reqs


def test_concurrent_requests_through_the_batcher_get_the_bytes_of_each_alone(positions):
    """64 concurrent /move and /eval requests (0- and 1-ply, GET and POST) vs each sent alone."""
    reqs = _requests(positions[:64])
    app = create_app()
    batcher = app.state.engine.batcher
    together = asyncio.run(_gather(app, reqs))
    assert batcher.jobs > batcher.batches  # they were batched: fewer batches than requests
    alone_app = create_app()
    alone = [asyncio.run(_gather(alone_app, [req]))[0] for req in reqs]
    assert alone_app.state.engine.batcher.batches == alone_app.state.engine.batcher.jobs  # one by one
    assert [status for status, _ in together[:-1]] == [200] * (len(reqs) - 1)
    assert together[-1][0] == 400 and b"die1 must be 1..6" in together[-1][1]
    for req, got, want in zip(reqs, together, alone, strict=True):
        assert got == want, req


def test_a_full_queue_is_a_503_naming_the_limit():
    # one request gathers for 300 ms with room for one waiting request: the second one is refused
    app = create_app(batch=BatchSettings(window_ms=300, max_batch=1, max_queue=1))
    move = ("GET", "/move", {"id": "4HPwATDgc/ABMA", "die1": 3, "die2": 1})
    answers = asyncio.run(_gather(app, [move, move]))
    assert sorted(status for status, _ in answers) == [200, 503]
    refused = next(body for status, body in answers if status == 503)
    assert b"server busy: 1 requests are waiting" in refused


def test_one_failing_job_gets_its_error_and_the_others_their_answers():
    def compute(kind, key, payloads):
        if any(p < 0 for p in payloads):
            raise ValueError("negative")
        return [p * 2 for p in payloads]

    batcher = Batcher(compute, BatchSettings(window_ms=20))

    async def run():
        return await asyncio.gather(*(batcher.submit("x", 0, p) for p in (1, -1, 3)), return_exceptions=True)

    one, bad, three = asyncio.run(run())
    assert (one, three) == (2, 6) and isinstance(bad, ValueError)
    assert batcher.batches == 1 and batcher.jobs == 3


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"window_ms": -1}, "window_ms must be a number of milliseconds 0..1000"),
        ({"window_ms": float("nan")}, "window_ms must be"),
        ({"max_batch": 0}, "max_batch must be an integer >= 1"),
        ({"max_queue": True}, "max_queue must be an integer >= 1"),
    ],
)
def test_batch_settings_refuse_out_of_range_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BatchSettings(**kwargs)


def test_queue_full_is_raised_by_submit_itself():
    async def run():
        batcher = Batcher(
            lambda kind, key, payloads: list(payloads), BatchSettings(window_ms=200, max_queue=1)
        )
        first = asyncio.ensure_future(batcher.submit("x", 0, 1))
        await asyncio.sleep(0)
        with pytest.raises(QueueFull, match="1 requests are waiting"):
            await batcher.submit("x", 0, 2)
        return await first

    assert asyncio.run(run()) == 1


def _pips(board) -> dict[str, int]:
    return {f"p{i}": int(c) for i, c in enumerate(board) if c}


def test_cheap_batches_run_on_the_event_loop_unless_the_worker_thread_is_busy():
    """inline: a cheap batch is computed on the loop's thread, but never beside work on the worker."""
    threads: list[int] = []

    def compute(kind, key, payloads):
        threads.append(threading.get_ident())
        return list(payloads)

    async def run():
        batcher = Batcher(compute, inline=lambda kind, key: kind == "cheap")
        loop_thread = threading.get_ident()
        assert await batcher.submit("cheap", 0, 1) == 1  # on the loop
        assert await batcher.submit("deep", 0, 2) == 2  # on the worker
        busy = asyncio.ensure_future(batcher.run(lambda: time.sleep(0.3)))  # the worker is busy
        await asyncio.sleep(0.05)
        assert await batcher.submit("cheap", 0, 3) == 3  # so it waits for the worker, and runs there
        await busy
        return loop_thread, batcher.inline_batches

    loop_thread, inline_batches = asyncio.run(run())
    assert threads[0] == loop_thread
    assert threads[1] != loop_thread and threads[2] == threads[1]
    assert inline_batches == 1


def test_the_server_computes_0_ply_batches_on_the_loop_and_1_ply_on_the_worker(positions):
    app = create_app()
    batcher = app.state.engine.batcher
    reqs = [("GET", "/move", {**_pips(b), "die1": d[0], "die2": d[1], "ply": 0}) for b, d in positions[:8]]
    asyncio.run(_gather(app, reqs))
    assert batcher.inline_batches == batcher.batches > 0
    before = batcher.batches
    reqs = [("GET", "/move", {**_pips(b), "die1": d[0], "die2": d[1], "ply": 1}) for b, d in positions[:4]]
    asyncio.run(_gather(app, reqs))
    assert batcher.batches > before and batcher.inline_batches == before


# --------------------------------------------------------------------------- nard serve


def test_nard_serve_help_states_the_batchers_defaults(capsys):
    from nard_ai.interfaces import cli
    from nard_ai.interfaces.batching import MAX_BATCH, MAX_QUEUE, WINDOW_MS

    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(0: only those already waiting; default: {WINDOW_MS:g})" in text
    assert f"in one batch at most (default: {MAX_BATCH})" in text
    assert f"answered 503 (default: {MAX_QUEUE})" in text
    assert "own engine (about 460 MiB), 1..16 (default: 1)" in text


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            ["--batch-window-ms", "-1"],
            "argument --batch-window-ms: must be a number of milliseconds 0..1000, got -1",
        ),
        (
            ["--batch-window-ms", "inf"],
            "argument --batch-window-ms: must be a number of milliseconds 0..1000, got inf",
        ),
        (["--max-batch", "0"], "argument --max-batch: must be >= 1, got 0"),
        (["--max-queue", "x"], "argument --max-queue: invalid int value: 'x'"),
        (["--workers", "0"], "argument --workers: must be >= 1, got 0"),
        (["--workers", "17"], "workers must be at most 16 (each process holds its own engine), got 17"),
        (["--external", "0", "--workers", "2"], "--workers applies to HTTP only, not to --external"),
        (
            ["--external", "0", "--batch-window-ms", "2"],
            "--batch-window-ms applies to HTTP only, not to --external",
        ),
    ],
)
def test_nard_serve_refuses_bad_batching_options_with_status_2(capsys, option, message):
    from tests.conftest import run_cli

    status, _, err = run_cli(["serve", "--port", "0", *option], capsys)
    assert status == 2 and err.strip().endswith(f"nard serve: error: {message}"), err


def test_nard_serve_with_two_workers_answers():
    """``--workers 2``: the worker processes accept on the socket the parent bound and logged."""
    import time
    import urllib.request

    from tests.conftest import cli_server

    args = ["serve", "--port", "0", "--workers", "2"]
    with cli_server(args, r"nard_ai HTTP server on http://127\.0\.0\.1:(\d+)") as port:
        body = None
        for _ in range(120):  # the workers load the network first
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/move?id=4HPwATDgc/ABMA&die1=3&die2=1"
                ) as r:
                    body = json.loads(r.read())
                    break
            except OSError:
                time.sleep(1)
        # the 3-1 opening: 8/5 6/5 is the best play (gnubg's choice, and the shipped network's)
        assert body is not None and body["moves"][0]["notation"] == "8/5 6/5"


def test_nard_serve_with_workers_refuses_a_bad_checkpoint_in_one_line_before_it_listens(tmp_path, capsys):
    """With ``--workers N`` the network is not loaded in the parent (workers forked after torch
    started its threads hang), so a child process of its own loads it first: a truncated or missing
    checkpoint is the one-line error that one process gives, before anything is logged or bound
    (each worker once failed with a traceback after the parent's log line)."""
    from pathlib import Path

    from tests.conftest import run_cli

    truncated = tmp_path / "truncated.pt"
    shipped = Path(__file__).resolve().parents[1] / "checkpoints" / "nard-expert.pt"
    truncated.write_bytes(shipped.read_bytes()[:1000])
    for path, message in (
        (
            truncated,
            f"{truncated}: not a readable nard_ai checkpoint (corrupt or truncated; torch.load failed",
        ),
        (tmp_path / "missing.pt", f"no checkpoint at {tmp_path / 'missing.pt'}"),
    ):
        status, out, err = run_cli(
            ["serve", "--port", "0", "--workers", "2", "--checkpoint", str(path)], capsys
        )
        assert status == 2 and out == "", err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"nard serve: error: {message}"), err
