"""The HTTP backend's inputs, a new user's pass: a POST's query string, the cube state given twice, the
status codes of the README's table on every endpoint, a JSON body's wording, the least body limit.

Each test states the exact status and message the README's table of bad requests promises.
"""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from nard_ai.interfaces.commands import serve as serve_command
from nard_ai.interfaces.http import create_app, limits
from tests.conftest import run_cli
from tests.test_analysis import GammonChaser

START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
# the brief's Match ID: a 5-point match, the side on roll at 2, its opponent at 3, the opponent owning a 2-cube
MATCH_ID = "4HPwATDgc/ABMA:QQmgADAAEAAE"
BODY_POSITION = (
    'give a position in the JSON body: "id" (a Position ID, PositionID:MatchID or XGID) '
    'or "board" (26 counts [p0, ..., p25])'
)


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())  # the default network: /cube decides with it


def detail(r) -> str:
    return r.json()["detail"]


# --------------------------------------------------------------------------- 1. a POST's query string


@pytest.mark.parametrize(
    ("path", "query", "body", "message"),
    [
        (
            "/eval", "?ply=2&foo=bar", {"id": START_ID},
            "query parameters ply, foo: POST /eval takes its fields in the JSON body, not in the query "
            'string (send "ply" in the body); the body takes id, board, ply',
        ),
        (
            "/move", "?die1=3&p3=1", {"id": START_ID, "dice": [3, 1]},
            "query parameters die1, p3: POST /move takes its fields in the JSON body, not in the query "
            'string (the roll is "dice": [die1, die2]; the position is "id" or "board": [p0, ..., p25]); '
            "the body takes id, board, ply, dice",
        ),
        (
            "/cube", "?match_length=7", {"id": START_ID},
            "query parameter match_length: POST /cube takes its fields in the JSON body, not in the query "
            'string (send "match_length" in the body); the body takes id, board, ply, cube_value, '
            "cube_owner, match_length, score, crawford, jacoby",
        ),
        (
            "/web/roll", "?seed=3", {},
            "query parameter seed: POST /web/roll takes its fields in the JSON body, not in the query "
            'string (send "seed" in the body); the body takes seed, turn',
        ),
        (
            "/web/position", "?x", {"id": START_ID},
            "query parameter x: POST /web/position takes its fields in the JSON body, not in the query "
            "string; the body takes id, board",
        ),
    ],
)  # fmt: skip
def test_a_post_with_a_query_parameter_is_a_400_saying_its_fields_go_in_the_body(
    client, path, query, body, message
):
    r = client.post(path + query, json=body)
    assert r.status_code == 400 and r.json() == {"detail": message}
    assert client.post(path, json=body).status_code == 200  # the same body without the query is answered


def test_an_empty_query_string_of_a_post_is_no_parameter(client):
    assert client.post("/eval?", json={"id": START_ID}).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("get", "/health?x=1", "unknown query parameter x; GET /health takes no query parameters"),
        ("get", "/web/rollout/nojob?a=1&b=2", "unknown query parameters a, b; GET /web/rollout/{job} takes no query parameters"),
        ("delete", "/web/rollout/nojob?a=1", "unknown query parameter a; DELETE /web/rollout/{job} takes no query parameters"),
    ],
)  # fmt: skip
def test_an_endpoint_that_takes_no_query_refuses_one_with_a_400(client, method, path, message):
    r = client.request(method.upper(), path)
    assert r.status_code == 400 and r.json() == {"detail": message}


def test_the_raw_body_analysis_keeps_its_query_and_the_page_ignores_a_cache_buster(client):
    r = client.post("/web/analysis?ply=0", content=b"")  # its own query is read: the empty body is the error
    assert r.status_code == 400 and detail(r) == "body: empty; send the .mat file as the request body"
    assert client.get("/?v=2").status_code == 200
    assert client.get("/static/board.css?v=2").status_code == 200


# --------------------------------------------------------------------------- 2. the cube state given twice


def _twice(kind: str, where: str, names: str, pips: str) -> str:
    them = "these" if "," in names else "it"
    return (
        f"give the cube and match state one way, not both: the ID's {kind} holds it (cube, score, match "
        f"length, Crawford, Jacoby) and the {where} also gives {names}; give {them} with a bare Position "
        f"ID or {pips}, or the ID alone"
    )


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("&score_on_roll=0", "score_on_roll"),  # answered score [0, 0] before: the ID's 3 wiped out
        ("&match_length=7", "match_length"),  # answered a 7-point match at the ID's score before
        ("&score_opponent=1&cube_value=4", "cube_value, score_opponent"),
        ("&cube_owner=centred&crawford=false&jacoby=false", "cube_owner, crawford, jacoby"),
    ],
)
def test_get_cube_refuses_cube_parameters_with_a_match_id(client, query, names):
    r = client.get(f"/cube?id={MATCH_ID}{query}")
    assert r.status_code == 400 and r.json() == {"detail": _twice("Match ID", "query", names, "p0..p25")}


def test_post_cube_refuses_cube_fields_with_a_match_id_or_an_xgid(client):
    r = client.post("/cube", json={"id": MATCH_ID, "score": [0, 0]})
    assert r.status_code == 400 and r.json() == {"detail": _twice("Match ID", "body", "score", '"board"')}
    r = client.post("/cube", json={"id": START_XGID, "cube_value": 2, "cube_owner": "on_roll"})
    assert r.status_code == 400
    assert r.json() == {"detail": _twice("XGID", "body", "cube_value, cube_owner", '"board"')}


def test_a_match_id_alone_gives_its_own_cube_and_score(client):
    for r in (client.get(f"/cube?id={MATCH_ID}"), client.post("/cube", json={"id": MATCH_ID})):
        assert r.status_code == 200, r.text
        body = r.json()
        assert (body["match_length"], body["score"], body["cube_value"], body["cube_owner"]) == (
            5, [2, 3], 2, "opponent",
        )  # fmt: skip


@pytest.mark.parametrize(
    ("query", "score"),
    [
        ("&score_opponent=3", [0, 3]),
        ("&score_on_roll=2", [2, 0]),
        ("&score_on_roll=2&score_opponent=3", [2, 3]),
    ],
)
def test_with_a_bare_position_id_a_score_left_out_is_0_and_the_other_kept(client, query, score):
    r = client.get(f"/cube?id={START_ID}&match_length=7{query}")
    assert r.status_code == 200, r.text
    assert r.json()["match_length"] == 7 and r.json()["score"] == score


def test_the_cube_parameters_are_described_in_the_openapi_schema(client):
    schema = client.get("/openapi.json").json()
    params = {p["name"]: p for p in schema["paths"]["/cube"]["get"]["parameters"]}
    body = schema["components"]["schemas"]["CubeBody"]["properties"]
    for name in (
        "cube_value",
        "cube_owner",
        "match_length",
        "score_on_roll",
        "score_opponent",
        "crawford",
        "jacoby",
    ):
        text = params[name]["description"]
        assert "only with a bare Position ID or p0..p25" in text, (name, text)
    for name in ("cube_value", "cube_owner", "match_length", "score", "crawford", "jacoby"):
        assert "only with a bare Position ID or a board" in body[name]["description"], name
    assert params["score_on_roll"]["description"].startswith(
        "the match score of the side on roll (default 0)"
    )


# --------------------------------------------------------------------------- 3. the README's status codes


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", f"/move?id={START_ID}&die1=3&die2=1&ply=3", None),
        ("get", f"/eval?id={START_ID}&ply=3", None),
        ("get", f"/cube?id={START_ID}&ply=3", None),
        ("post", "/move", {"id": START_ID, "dice": [3, 1], "ply": 3}),
        ("post", "/eval", {"id": START_ID, "ply": -1}),
        ("post", "/cube", {"id": START_ID, "ply": 3}),
        ("post", "/web/reply", {"id": START_ID, "dice": [3, 1], "ply": 3}),
        ("post", "/web/rollout", {"id": START_ID, "ply": 2}),
        ("post", "/web/analysis?ply=2", None),
    ],
)
def test_a_ply_out_of_range_is_a_400_on_every_endpoint(client, method, path, body):
    r = (
        client.post(path, json=body)
        if method == "post" and body is not None
        else client.request(method.upper(), path)
    )
    assert r.status_code == 400, r.text
    assert detail(r).startswith("ply must be "), detail(r)


@pytest.mark.parametrize(
    ("method", "path", "body", "loc"),
    [
        ("get", f"/cube?id={START_ID}&jacoby=1", None, ["query", "jacoby"]),
        ("post", "/web/analysis?errors_only=1", None, ["query", "errors_only"]),
        ("post", "/cube", {"id": START_ID, "crawford": 1}, ["body", "crawford"]),
        ("post", "/web/rollout", {"id": START_ID, "cubeful": 1}, ["body", "cubeful"]),
    ],
)
def test_a_flag_that_is_not_a_bool_is_a_422_on_every_endpoint(client, method, path, body, loc):
    r = client.post(path, json=body) if body is not None else client.request(method.upper(), path)
    assert r.status_code == 422, r.text
    assert [e["loc"] for e in r.json()["detail"]] == [loc]


# --------------------------------------------------------------------------- 4. a JSON body's wording


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/move", {}, BODY_POSITION),
        ("/move", {"board": [0] * 26, "dice": [3, 1]}, "board: all 26 counts are 0, no checkers; " + BODY_POSITION),
        ("/eval", {}, BODY_POSITION),
        ("/cube", {"board": [0] * 26}, "board: all 26 counts are 0, no checkers; " + BODY_POSITION),
        ("/web/position", {}, BODY_POSITION),
        ("/web/plays", {"dice": [3, 1]}, BODY_POSITION),
        ("/move", {"id": START_ID}, 'dice: give "dice": [die1, die2] (1..6), or an ID whose dice are rolled'),
    ],
)  # fmt: skip
def test_a_json_body_without_a_position_is_told_its_fields(client, path, body, message):
    r = client.post(path, json=body)
    assert r.status_code == 400 and r.json() == {"detail": message}


def test_a_query_without_a_position_keeps_the_query_wording(client):
    r = client.get("/eval?p1=0")
    assert r.status_code == 400
    assert detail(r) == "give a position: id=<Position ID, PositionID:MatchID or XGID> or p0..p25"


# --------------------------------------------------------------------------- 5. the least body limit


def test_the_least_body_limit_is_the_smallest_post_move_body_and_it_is_answered():
    assert limits.MIN_BODY_BYTES == len(limits.SMALLEST_BODY) == 36
    # nard serve states the same numbers without importing the web stack
    assert (serve_command.MIN_BODY_BYTES, serve_command.SMALLEST_BODY) == (
        limits.MIN_BODY_BYTES, limits.SMALLEST_BODY,
    )  # fmt: skip
    app = TestClient(create_app(agent_factory=lambda ply: GammonChaser(), max_body_bytes=36))
    headers = {"content-type": "application/json"}
    r = app.post("/move", content=limits.SMALLEST_BODY, headers=headers)
    assert r.status_code == 200 and len(r.json()["moves"]) == 16
    r = app.post("/move", content=limits.SMALLEST_BODY + " ", headers=headers)
    assert r.status_code == 413 and detail(r) == "request body too large: the limit is 36 bytes"


@pytest.mark.parametrize("value", ["0", "35"])
def test_nard_serve_refuses_a_body_limit_below_36_with_one_error_line(capsys, value):
    status, out, err = run_cli(["serve", "--port", "0", "--max-body-bytes", value], capsys)
    last = err.strip().splitlines()[-1]
    assert status == 2 and out == ""
    assert last == (
        "nard serve: error: argument --max-body-bytes: must be at least 36 bytes (the smallest POST /move "
        f'body, {{"id":"4HPwATDgc/ABMA","dice":[3,1]}}, is 36 bytes), got {value}'
    )
