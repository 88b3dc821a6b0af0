"""The HTTP server's fast path (issue 17 section 1): the plain GET /move and /eval, answered as FastAPI would.

:class:`nard_ai.interfaces.http.fast._PlainQueries` answers a plain pip query without FastAPI's routing;
anything it is not sure of goes on to FastAPI. The promise checked here: a request it answers gets
the bytes and headers FastAPI's route gives the same request, and what it passes on is answered
as before. FastAPI's route is reached with the same request spelled with one ``%``-escaped digit
(``p6=%35`` for ``p6=5``), which the fast path never takes and FastAPI reads as the same value.
"""

from __future__ import annotations

import json
import warnings
from urllib.parse import urlencode

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from nard_ai.interfaces import http  # noqa: E402
from nard_ai.interfaces.http.engine import _json_bytes  # noqa: E402
from nard_ai.interfaces.http.fast import _PlainQueries  # noqa: E402
from tests.test_batching import _positions  # noqa: E402


@pytest.fixture(scope="module")
def app():
    return http.create_app()


@pytest.fixture(scope="module")
def client(app) -> TestClient:
    return TestClient(app)


def _query(board: np.ndarray, dice: tuple[int, int] | None, ply: int | None = 0) -> dict[str, int]:
    q = {f"p{i}": int(c) for i, c in enumerate(board) if c}
    if dice is not None:
        q |= {"die1": dice[0], "die2": dice[1]}
    return q if ply is None else q | {"ply": ply}


def _escaped(query: dict[str, int]) -> str:
    """The same query with its first value's last digit %-escaped: FastAPI's path, the same values."""
    text = urlencode(query)
    key, _, rest = text.partition("=")
    value, amp, tail = rest.partition("&")
    return f"{key}={value[:-1]}%{ord(value[-1]):02X}{amp}{tail}"


@pytest.mark.parametrize("path", ["/move", "/eval"])
def test_the_fast_path_gives_fastapis_bytes_and_headers_on_200_positions(app, client, path):
    fast = _PlainQueries(None, app.state.engine)
    for board, dice in _positions(200, seed=23):
        query = _query(board, dice if path == "/move" else None)
        assert fast._job(path.strip("/"), urlencode(query).encode()) is not None  # it takes this one
        assert fast._job(path.strip("/"), _escaped(query).encode()) is None  # and not that one
        got = client.get(f"{path}?{urlencode(query)}")
        want = client.get(f"{path}?{_escaped(query)}")
        assert got.status_code == want.status_code == 200
        assert got.content == want.content
        assert got.headers["content-type"] == want.headers["content-type"] == "application/json"
        assert got.headers["content-length"] == want.headers["content-length"]


def test_the_move_answer_is_the_json_of_its_dict(client):
    """The answer's hand-written JSON is ``json.dumps`` (compact, allow_nan=False) of the same values."""
    for board, dice in _positions(50, seed=29):
        body = client.get(f"/move?{urlencode(_query(board, dice))}").content
        assert _json_bytes(json.loads(body)) == body


@pytest.mark.parametrize(
    "path, query",
    [
        ("/move", "p24=2&p1=-2&die1=3"),  # a die missing: FastAPI's 400
        ("/move", "p24=2&p1=-2&die1=3&die2=7"),  # a die out of range
        ("/move", "p24=2&p1=-2&die1=3&die2=1&die2=1"),  # repeated
        ("/move", "p24=2&p1=-2&die1=3&die2=1&dice=31"),  # unknown
        ("/move", "p24=2&p1=-2&die1=%2B3&die2=1"),  # an escape (+3): FastAPI reads it
        ("/move", "p24=2&p1=-2&die1=3&die2=1&ply=7"),  # a ply the server refuses
        ("/move", "p24=2&p1=-2&die1=3&die2=1&ply=1"),  # a ply whose agent is not built yet
        ("/move", "p24=16&p1=-2&die1=3&die2=1"),  # 16 checkers
        ("/move", "p24=2&die1=3&die2=1"),  # the game is over
        ("/move", "p0=2&p24=2&p1=-2&die1=3&die2=1"),  # the opponent's bar holds the mover's checkers
        ("/move", "id=4HPwATDgc/ABMA&die1=3&die2=1"),  # an ID
        ("/move", ""),
        ("/eval", "p24=2&p1=-2&die1=3&die2=1"),  # /eval takes no dice
    ],
)
def test_what_the_fast_path_passes_on_is_answered_by_fastapi(app, client, path, query):
    fast = _PlainQueries(None, app.state.engine)
    assert fast._job(path.strip("/"), query.encode()) is None
    answer = client.get(f"{path}?{query}")
    if "id=" in query or "%2B3" in query or "ply=1" in query:
        assert answer.status_code == 200  # answered by FastAPI's route, as before
    else:
        assert answer.status_code == 400
        assert "detail" in answer.json()
