"""The HTTP backend (nard_ai.interfaces.http) through FastAPI's TestClient: ok paths, 4xx paths, the schema."""

from __future__ import annotations

import socket
import time
import urllib.request
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from nard_ai.core.board import starting_board, swap_sides
from nard_ai.core.movegen import legal_plays
from nard_ai.formats.notation import play_notation
from nard_ai.formats.position_id import board_from_position_id
from nard_ai.formats.xgid import from_xgid
from nard_ai.interfaces.http import bind_socket, create_app
from tests.conftest import cli_server
from tests.test_analysis import GammonChaser

REPO = Path(__file__).resolve().parents[1]

START_ID = "4HPwATDgc/ABMA"
START_GNUBG_ID = "4HPwATDgc/ABMA:cAkAAAAAAAAE"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
# wildbg's p0..p25 of the starting position (the mover's view)
START_PIPS = {"p24": 2, "p13": 5, "p8": 3, "p6": 5, "p1": -2, "p12": -5, "p17": -3, "p19": -5}
# X has made its 4- and 5-points and rolled 6-4: money, then a 5-point match at 4-4 (double match point)
MONEY_64 = "XGID=-b--BBC-B---eD---c-e----B-:0:0:1:64:0:0:0:0:10"
DMP_64 = "XGID=-b--BBC-B---eD---c-e----B-:0:0:1:64:4:4:0:5:10"


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_move_by_pips_ranks_the_opening_31_with_8_5_6_5_first(client):
    r = client.get("/move", params={"die1": 3, "die2": 1, **START_PIPS})
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["moves"]) == 16
    best = body["moves"][0]
    assert best["notation"] == "8/5 6/5"
    assert best["play"] == [{"from": 8, "to": 5}, {"from": 6, "to": 5}]
    equities = [m["equity"] for m in body["moves"]]
    assert equities == sorted(equities, reverse=True)
    assert set(best["probabilities"]) == {"win", "winG", "winBg", "loseG", "loseBg"}


@pytest.mark.parametrize("position", [START_ID, START_GNUBG_ID, START_XGID])
def test_move_by_each_id_form_gives_the_same_ranking(client, position):
    by_pips = client.get("/move", params={"die1": 3, "die2": 1, **START_PIPS}).json()
    by_id = client.get("/move", params={"id": position, "die1": 3, "die2": 1}).json()
    assert [m["notation"] for m in by_id["moves"]] == [m["notation"] for m in by_pips["moves"]]


def test_move_takes_its_dice_from_a_match_id_that_has_them(client):
    r = client.post("/move", json={"id": "4HPwATDgc/ABMA:cAkRAAAAAAAE"})  # player 1 rolled 5-2 (per bits)
    if r.status_code == 400:
        pytest.skip(f"Match ID vector not accepted: {r.json()['detail']}")
    assert r.status_code == 200
    assert sorted(r.json()["dice"]) != [0, 0]


def test_post_move_with_board_list_and_the_afterstate_id_is_the_opponents_view(client):
    r = client.post("/move", json={"board": starting_board().tolist(), "dice": [6, 5]})
    assert r.status_code == 200, r.text
    best = r.json()["moves"][0]
    assert best["notation"] == "24/13"
    after = board_from_position_id(best["position_id"])
    assert np.array_equal(swap_sides(after)[[24, 13]], [1, 6])


def test_a_blocked_roll_gives_exactly_one_empty_play(client):
    # the mover has a checker on the bar and the opponent holds all six home points
    board = np.zeros(26, dtype=int)
    board[25], board[1] = 1, 14
    board[19:25] = -2
    board[0] = -3
    r = client.post("/move", json={"board": board.tolist(), "dice": [6, 6]})
    assert r.status_code == 200, r.text
    moves = r.json()["moves"]
    assert len(moves) == 1 and moves[0]["play"] == [] and moves[0]["notation"] == "-"


def test_eval_returns_probabilities_equity_and_cube_advice(client):
    r = client.get("/eval", params=START_PIPS)
    assert r.status_code == 200, r.text
    body = r.json()
    p = body["probabilities"]
    assert 0 < p["win"] < 1 and p["winG"] <= p["win"] and p["winBg"] <= p["winG"]
    assert abs(body["equity"]) < 0.5
    assert body["cube"] in (None, {"double": False, "accept": True})
    same = client.post("/eval", json={"id": START_XGID}).json()
    assert same["equity"] == pytest.approx(body["equity"])


def test_cube_decision_of_the_opening_is_no_double(client):
    r = client.get("/cube", params={"id": START_GNUBG_ID})
    if r.status_code == 501:
        pytest.skip("nard_ai.cube.decision not available")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["action"] == "no_double" and not body["double"] and body["accept"]
    assert body["double_pass"] == pytest.approx(1.0)


def test_cube_in_match_play_reports_mwc(client):
    r = client.post("/cube", json={"id": START_ID, "match_length": 7, "score": [2, 4]})
    if r.status_code == 501:
        pytest.skip("nard_ai.cube.decision not available")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["match_length"] == 7 and body["score"] == [2, 4]
    assert 0 < body["mwc"]["no_double"] < 1


@pytest.mark.parametrize(
    ("method", "path", "payload", "needle"),
    [
        ("get", "/move", {"id": "garbage", "die1": 3, "die2": 1}, "id:"),
        ("get", "/move", {"id": START_ID, "die1": 7, "die2": 1}, "die1 must be 1..6, got 7"),
        ("get", "/move", {"id": START_ID}, "dice"),
        ("get", "/move", {"die1": 3, "die2": 1}, "give a position"),
        ("get", "/move", {"die1": 3, "die2": 1, "p24": 16}, "board"),
        ("get", "/move", {"die1": 3, "die2": 1, "p25": -1, "p24": 2, "p1": -2}, "board"),
        ("get", "/move", {"id": START_ID, "die1": 3, "die2": 1, "ply": 7}, "ply"),
        ("get", "/eval", {"id": "XGID=nonsense"}, "id:"),
        ("post", "/move", {"board": [1] * 25, "dice": [3, 1]}, "board"),
        ("post", "/cube", {"id": START_ID, "cube_value": 3}, "cube"),
        ("post", "/cube", {"id": START_ID, "cube_owner": "nobody", "cube_value": 2}, "cube"),
        # the position given twice
        ("get", "/move", {"id": START_ID, "die1": 3, "die2": 1, **START_PIPS}, "give the position one way"),
        ("get", "/eval", {"id": START_ID, "p24": 2}, "id=... or p0..p25, not both"),
        ("post", "/move", {"id": START_ID, "board": [0] * 26, "dice": [3, 1]}, "id or board, not both"),
        # unknown query parameters are named, with the spelling meant
        ("get", "/move", {"id": START_ID, "die1": 3, "die2": 1, "p99": 1, "score0": 2}, "p99, score0"),
        ("get", "/eval", {"id": START_ID, "dice": 31}, "unknown query parameter dice (give the roll as die1"),
        ("get", "/cube", {"id": START_ID, "score": 2}, "give score_on_roll and score_opponent"),
        # a body with die1/die2 names the field it needs
        ("post", "/move", {"id": START_ID, "die1": 3, "die2": 1}, 'the roll is "dice": [die1, die2]'),
        ("post", "/cube", {"id": START_ID, "cube": 2}, "unknown field cube; the body takes id, board"),
        # a short board names its length, before "give a position" (all zeros)
        ("post", "/move", {"board": [0] * 25, "dice": [3, 1]}, "got a list of length 25"),
        # a die too large for int64 is range-checked first
        ("get", "/move", {"id": START_ID, "die1": 10**20, "die2": 1}, f"die1 must be 1..6, got {10**20}"),
        ("post", "/move", {"id": START_ID, "dice": [3, 10**20]}, f"dice[1] must be 1..6, got {10**20}"),
        # issue 15: both sides on the bar against closed boards, where neither can ever move
        ("get", "/move", {"id": "27YBAHDbtgEAcA", "die1": 3, "die2": 1}, "neither side can ever move"),
        (
            "post",
            "/eval",
            {"board": [-3] + [2] * 6 + [0] * 12 + [-2] * 6 + [3]},
            "neither side can ever move",
        ),
    ],
)
def test_bad_requests_get_400_with_a_message(client, method, path, payload, needle):
    if method == "get":
        r = client.get(path, params=payload)
    else:
        r = client.post(path, json=payload)
    if path == "/cube" and r.status_code == 501:
        pytest.skip("nard_ai.cube.decision not available")
    assert r.status_code == 400, r.text
    assert needle in r.json()["detail"]


def test_a_repeated_query_parameter_is_a_400_naming_it(client):
    r = client.get(f"/move?id={START_ID}&die1=3&die1=4&die2=1")
    assert r.status_code == 400 and r.json()["detail"] == "query parameter die1 given more than once"


def test_move_ranks_by_mwc_when_the_id_holds_a_match_score():
    """GammonChaser: the gammonish play leads for money, the safe play at 4-4 of 5 (double match point)."""
    app = TestClient(create_app(agent_factory=lambda ply: GammonChaser()))
    money = app.get("/move", params={"id": MONEY_64}).json()
    dmp = app.get("/move", params={"id": DMP_64}).json()
    board, _ = from_xgid(DMP_64)
    plays = legal_plays(board, (6, 4))
    gammonish, safe = (play_notation(board, plays[k], (6, 4)) for k in (0, 1))
    assert money["ranked_by"] == "cubeless equity" and money["moves"][0]["notation"] == gammonish
    assert all(m["mwc"] is None for m in money["moves"])
    assert dmp["ranked_by"] == "cubeless MWC at the score"
    assert [m["notation"] for m in dmp["moves"][:2]] == [safe, gammonish]
    # at DMP the MWC is the win chance (every win wins the match)
    assert [m["mwc"] for m in dmp["moves"][:2]] == pytest.approx([0.65, 0.60])
    assert dmp["moves"][0]["equity"] == pytest.approx(0.3)  # money equity still given, per play


def test_a_finished_game_is_a_400(client):
    board = np.zeros(26, dtype=int)
    board[1] = -15  # the mover has borne everything off
    r = client.post("/move", json={"board": board.tolist(), "dice": [3, 1]})
    assert r.status_code == 400


def test_schema_violations_get_422_and_the_server_keeps_answering(client):
    assert client.get("/move", params={"die1": "x", "die2": 1, **START_PIPS}).status_code == 422
    assert client.post("/move", content=b"{not json").status_code == 422
    assert client.get("/health").json()["status"] == "ok"


def test_openapi_schema_lists_every_endpoint(client):
    schema = client.get("/openapi.json").json()
    assert schema["info"]["title"] == "nard_ai"
    for path in ("/move", "/eval", "/cube", "/health"):
        assert path in schema["paths"]
    params = {p["name"] for p in schema["paths"]["/move"]["get"]["parameters"]}
    assert {"die1", "die2", "id", "ply", "p0", "p24", "p25"} <= params
    # every endpoint documents its 400 answer with the {"detail": ...} body
    for path in ("/move", "/eval", "/cube"):
        for method in ("get", "post"):
            response = schema["paths"][path][method]["responses"]["400"]
            assert response["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorResponse")
    assert "mwc" in schema["components"]["schemas"]["MoveInfo"]["properties"]


def test_bind_socket_refuses_a_busy_port_and_a_bad_host():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{port}: Address already in use"):
            bind_socket("127.0.0.1", port)
    finally:
        taken.close()
    with pytest.raises(ValueError, match="cannot listen on 256.1.1.1:8080"):
        bind_socket("256.1.1.1", 8080)
    sock = bind_socket("127.0.0.1", 0)
    assert sock.getsockname()[1] > 0
    sock.close()


def test_nard_serve_port_0_reports_the_port_and_answers_there():
    with cli_server(["serve", "--port", "0"], r"nard_ai HTTP server on http://127\.0\.0\.1:(\d+)") as port:
        for _ in range(100):  # uvicorn starts serving on the bound socket a moment after the log line
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10).read()
                break
            except OSError:
                time.sleep(0.1)
        assert b'"status":"ok"' in body


@pytest.mark.parametrize(
    "path, body",
    [
        ("/move", '{"dice": [3, 1], "id": "4HPwATDgc/ABMA", "ply": NaN}'),
        ("/move", '{"dice": [NaN, 1], "id": "4HPwATDgc/ABMA"}'),
        ("/eval", '{"id": "4HPwATDgc/ABMA", "ply": Infinity}'),
        ("/cube", '{"id": "4HPwATDgc/ABMA", "cube_value": 1e400}'),
    ],
)
def test_non_finite_numbers_in_a_json_body_are_a_400_not_a_500(client, path, body):
    """Python's JSON reader accepts NaN/Infinity; FastAPI's 422 cannot echo them back, so we answer 400 ourselves."""
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not a finite number" in r.json()["detail"]


def test_an_enormous_bad_id_is_not_echoed_whole(client):
    r = client.get("/move", params={"id": "A" * 10_000, "die1": 3, "die2": 1})
    assert r.status_code == 400 and len(r.json()["detail"]) < 700
