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

from nard_ai.core.board import pos, swap_sides  # noqa: E402
from nard_ai.cube.state import CubeState, cube_state_from_match  # noqa: E402
from nard_ai.formats.notation import describe_plays  # noqa: E402
from nard_ai.formats.position_id import position_id  # noqa: E402
from nard_ai.interfaces import http  # noqa: E402
from nard_ai.interfaces.http.engine import _float_texts, _move_answers  # noqa: E402
from nard_ai.interfaces.http.fast import _PlainQueries  # noqa: E402
from nard_ai.reports.analysis import score_plays  # noqa: E402
from tests.test_batching import _positions  # noqa: E402

_MONEY = cube_state_from_match(None)


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


def _reference_move(agent, board, dice, cube_state) -> dict:
    """The ``/move`` answer's values one position at a time, by the slow paths: the agent's own
    ``rank_plays``, ``score_plays``, ``describe_plays`` and ``position_id``."""
    scored = score_plays(agent.rank_plays(board, dice), cube_state)
    described = describe_plays(board, scored.afterstates, dice)
    return {
        "moves": [
            {
                "play": [{"from": a, "to": b} for a, b in steps],
                "notation": notation,
                "probabilities": dict(
                    zip(["win", "winG", "winBg", "loseG", "loseBg"], map(float, p), strict=True)
                ),
                "equity": float(e),
                "mwc": None if scored.mwc is None else float(scored.mwc[j]),
                "position_id": position_id(swap_sides(a_)),
            }
            for j, ((steps, notation), p, e, a_) in enumerate(
                zip(described, scored.probs, scored.equity, scored.afterstates, strict=True)
            )
        ],
        "ranked_by": scored.ranked_by,
        "dice": list(dice),
        "ply": agent.ply,
        "position_id": position_id(board),
    }


def test_the_move_answer_reads_back_to_the_values_of_one_position_at_a_time(app, client):
    """The hand-written JSON is compact JSON whose every number reads back (``json.loads``) to the
    same double the slow one-position path gives: for money over HTTP, and for a match (MWC) by the
    engine's batch function directly, in batches of 12 (a number below 1e-4, which orjson writes
    as ``1e-7`` where ``json.dumps`` writes ``1e-07``, is checked by the next test)."""
    agent = app.state.engine.agents[0]
    positions = _positions(48, seed=29)
    for board, dice in positions[:24]:
        body = client.get(f"/move?{urlencode(_query(board, dice))}").content
        assert b"\n" not in body and b": " not in body and b", " not in body  # compact
        assert json.loads(body) == _reference_move(agent, board, dice, _MONEY)
    match = CubeState(value=2, owner="opponent", match_length=7, score=(2, 4))
    for k in range(24, 48, 12):
        batch = [(board, dice, match) for board, dice in positions[k : k + 12]]
        for body, (board, dice, cube_state) in zip(_move_answers(agent, batch), batch, strict=True):
            assert json.loads(body) == _reference_move(agent, board, dice, cube_state)


def test_a_nan_in_an_answer_is_refused_not_written_as_null():
    """orjson writes NaN as ``null``; the answers' floats are checked first, as ``json.dumps(allow_nan=False)``."""
    tiny = np.array([[0.5, 1e-7, -0.0, 0.0001802845363272354, 2.5e-05]])
    assert [float(t) for t in _float_texts(tiny)] == tiny.ravel().tolist()  # the same doubles
    assert _float_texts(tiny)[:3] == ["0.5", "1e-7", "-0.0"]
    with pytest.raises(ValueError, match="not JSON compliant: nan"):
        _float_texts(np.array([[0.5, np.nan]]))
    with pytest.raises(ValueError, match="not JSON compliant: inf"):
        _float_texts(np.array([[np.inf, 0.5]]))


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


@pytest.mark.parametrize("path, query", [("/move", "&die1=3&die2=1"), ("/eval", "")])
def test_an_id_whose_game_is_over_is_fastapis_400_not_the_fast_paths(app, client, path, query):
    # an id is never the fast path's (it reads pips only): FastAPI's route refuses a Match ID whose game
    # state is over (gnubg_id(starting_board(), MatchState(game_state=OVER))) with the state named
    target = f"{path}?id=4HPwATDgc/ABMA:cAoAAAAAAAAE{query}"
    assert _PlainQueries(None, app.state.engine)._job(path.strip("/"), target.split("?")[1].encode()) is None
    answer = client.get(target)
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("id: the ID's game state is over, not playing")


def test_an_id_of_a_match_longer_than_the_table_is_refused_by_what_values_the_score(client):
    # gnubg's Match ID cInFAwAAAAAE: a 30-point match (gnubg_id(starting_board(), MatchState(match_length=30,
    # dice=(3, 1)))); gnubg's IDs hold up to 64 points, the match equity table 1..25. /move (match
    # equities), /eval (its cube advice) and /cube refuse it in the same words, naming the ID; /web/plays,
    # which values nothing, lists the roll's plays
    match30 = "4HPwATDgc/ABMA:cInFAwAAAAAE"
    refusal = "id: the match state cannot be used: match_length must be 0 (money) or 1..25, got 30"
    for path in ("/move", "/eval", "/cube"):
        answer = client.post(path, json={"id": match30})
        assert (answer.status_code, answer.json()["detail"]) == (400, refusal), path
    # a cube field of the request, not the ID, is named as the cube's
    answer = client.post("/cube", json={"id": "4HPwATDgc/ABMA", "match_length": 30})
    assert answer.status_code == 400 and answer.json()["detail"].startswith("cube: ")
    answer = client.post("/web/plays", json={"id": match30, "dice": [3, 1]})
    assert answer.status_code == 200 and len(answer.json()["plays"]) == 16  # the opening 3-1's 16 plays


def test_the_batched_cube_advice_of_eval_is_the_scalar_decisions(app):
    """``/eval``'s cube advice is decided for a whole batch (one efficiency call, one decision per cube
    state); each answer's ``{"double", "accept"}`` is what ``cube_decision_from_probs`` gives that
    position alone, for money (centred, owned either way, Jacoby with beavers) and match play (scores,
    Crawford, a cube the side on roll owns), and a state no decision takes is that request's 400."""
    from fastapi import HTTPException

    from nard_ai.cube import cube_decision_from_probs, cube_efficiency
    from nard_ai.formats.match_id import MatchState
    from nard_ai.interfaces.http.engine import _advice, _advice_batch

    agent = app.state.engine.agents[0]
    rng = np.random.default_rng(37)
    races = []  # races of every lead: the side on roll's 15 checkers on its points 1..6, the opponent's on 1..12
    for _ in range(120):
        mine = np.bincount(rng.integers(1, 7, 15), minlength=7)
        theirs = np.bincount(rng.integers(1, int(rng.integers(4, 13)), 15), minlength=13)
        races.append(
            pos(
                {p: int(c) for p, c in enumerate(mine) if c and p},
                {p: int(c) for p, c in enumerate(theirs) if c and p},
            )
        )
    boards = np.stack([b for b, _ in _positions(120, seed=31)] + races)
    probs, _ = agent.value(boards)
    probs = np.asarray(probs, dtype=np.float64)
    kinds = [
        None,
        MatchState(cube_value=2, cube_owner=1, player_on_roll=1),  # the side on roll owns a 2-cube
        MatchState(cube_value=2, cube_owner=0, player_on_roll=1),  # its opponent does
        MatchState(jacoby=True, beavers=True),
        MatchState(match_length=5, score=(1, 3)),
        MatchState(match_length=5, score=(4, 2), crawford=True),
        MatchState(match_length=7, score=(2, 5), cube_value=2, cube_owner=1),
    ]
    states = [kinds[i % len(kinds)] for i in range(len(boards))]
    got = _advice_batch(boards, probs, states, 0)
    for board, p, state, advice in zip(boards, probs, states, got, strict=True):
        cube = cube_state_from_match(state)
        want = _advice(cube_decision_from_probs(p, cube, cube_efficiency(board), ply=0)).model_dump()
        assert advice == want
    assert (
        sum(a["double"] for a in got) >= 20 and sum(not a["accept"] for a in got) >= 20
    )  # both answers occur
    bad = probs[:2].copy()
    bad[0, 1] = 0.9  # more gammons than wins: inconsistent
    out = _advice_batch(boards[:2], bad, [None, None], 0)
    assert isinstance(out[0], HTTPException) and out[0].status_code == 400 and "cube:" in out[0].detail
    assert (
        out[1]
        == _advice(
            cube_decision_from_probs(bad[1], cube_state_from_match(None), cube_efficiency(boards[1]))
        ).model_dump()
    )
