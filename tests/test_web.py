"""The web board's page and JSON endpoints (nard_ai.interfaces.web), through FastAPI's TestClient.

Expected values come from the engine itself, called directly (legal_plays, the 0-ply agent's
rank_plays, rollout with the same seed, analyze_match), from the README's examples (16 plays of the
opening 3-1, pip count 167) or from the formats' own docstrings (the starting XGID).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from conftest import RENAMED_MAT
from fastapi.testclient import TestClient

import nard_ai as na
from nard_ai.agents import load_agent
from nard_ai.formats.mat import read_mat
from nard_ai.formats.position import parse_position
from nard_ai.interfaces import web
from nard_ai.interfaces.http import create_app
from nard_ai.interfaces.web import MAX_ROLLOUT_GAMES, game_dice
from nard_ai.play.rollout import rollout
from nard_ai.reports.analysis import analyze_match

START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"  # nard_ai.formats.xgid.to_xgid's docstring
MATCH = Path(__file__).parent / "data" / "match_3pt.mat"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


@pytest.fixture(scope="module")
def agent():
    return load_agent(None, ply=0)  # what create_app() builds for ply 0


def pos(me: dict[int, int], opp: dict[int, int]) -> list[int]:
    """A board from the side on roll: ``me`` its points (25 = bar), ``opp`` the opponent's in our numbering."""
    b = [0] * 26
    for p, n in me.items():
        b[p] = n
    for p, n in opp.items():
        b[p] = -n
    return b


def apply_moves(board: list[int], moves: list[dict]) -> list[int]:
    """Single checker moves from ``board`` (25 = bar, 0 = off), a hit blot going to the opponent's bar."""
    b = list(board)
    for m in moves:
        b[m["from"]] -= 1
        if m["to"]:
            if b[m["to"]] == -1:
                b[m["to"]] = 0
                b[0] -= 1
            b[m["to"]] += 1
    return b


# --------------------------------------------------------------------------- page and static files


def test_the_page_and_its_files_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="/static/board.js">' in page.text and "/static/board.css" in page.text
    assert "http://" not in page.text and "https://" not in page.text  # nothing from a CDN
    js = client.get("/static/board.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/board.css").headers["content-type"].startswith("text/css")
    assert client.get("/static/favicon.svg").headers["content-type"].startswith("image/svg+xml")


@pytest.mark.parametrize("name", ["nope.js", "..%2Fweb.py", "index.html"])
def test_a_file_outside_the_static_list_is_a_404(client, name):
    r = client.get(f"/static/{name}")
    assert r.status_code == 404 and "detail" in r.json()


def test_the_page_is_left_out_of_the_openapi_schema_and_the_endpoints_are_in_it(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert "/" not in paths
    for path in ("/web/position", "/web/plays", "/web/roll", "/web/reply", "/web/rollout", "/web/analysis"):
        assert path in paths


# --------------------------------------------------------------------------- /web/position


def test_a_position_id_is_decoded_with_its_xgid_and_pips(client):
    r = client.post("/web/position", json={"id": START_ID})
    assert r.status_code == 200
    info = r.json()
    assert info["board"] == na.starting_board().tolist()
    assert info["position_id"] == START_ID and info["xgid"] == START_XGID
    assert info["pips"] == [167, 167] and info["off"] == [0, 0]  # README: pip count 167 each
    assert info["match_id"] is None and info["match_length"] == 0 and not info["game_over"]


def test_an_xgid_brings_its_dice_and_match_state(client):
    # XGID fields: dice 52, match length 5 (XG's format, nard_ai.formats.xgid)
    r = client.post("/web/position", json={"id": "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:5:10"})
    info = r.json()
    assert r.status_code == 200 and info["dice"] == [5, 2] and info["match_length"] == 5
    assert info["match_id"] is not None
    board, state = parse_position(f"{info['position_id']}:{info['match_id']}")
    assert board.tolist() == info["board"] and state.match_length == 5


def test_a_board_of_counts_is_decoded_and_a_finished_game_is_marked(client):
    board = pos({1: 1}, {24: 1})
    info = client.post("/web/position", json={"board": board}).json()
    assert info["board"] == board and info["off"] == [14, 14] and info["pips"] == [1, 1]
    # the opponent has no checker left: that game is over (the side on roll lost it)
    over = client.post("/web/position", json={"board": pos({1: 1}, {})}).json()
    assert over["game_over"]


@pytest.mark.parametrize(
    "match_id, words",
    [
        # Match ID game states (gnubg's MatchID fields): over, dropped, resigned; a resignation on offer
        ("cAoAAAAAAAAE", "id: the ID's game state is over, not playing"),
        ("cAwAAAAAAAAE", "id: the ID's game state is dropped, not playing"),
        ("cCsAAAAAAAAE", "id: the ID's game state is resigned, not playing"),
        ("cCEAAAAAAAAE", "id: a resignation awaits its answer"),
    ],
)
def test_an_id_whose_game_is_not_being_played_is_a_400_not_a_500(client, match_id, words):
    """A new user's report (2026-12-07): /web/position answered such an ID with a 500 (to_xgid raised).
    The board shows games being played: the 400 of /move, in UBGI's words; /web/plays and the rest too."""
    for path, extra in (
        ("/web/position", {}),
        ("/web/plays", {"dice": [3, 1]}),
        ("/web/reply", {"dice": [3, 1]}),
        ("/web/rollout", {}),
    ):
        r = client.post(path, json={"id": f"{START_ID}:{match_id}", **extra})
        assert r.status_code == 400 and r.json()["detail"].startswith(words), (path, r.text)


@pytest.mark.parametrize(
    "match_id, words",
    [
        # a 5-point match won 5-2 (its game state over: the state check answers first); a 30-point match
        # (the match equity table covers 1..25)
        ("cAqgAFAAEAAE", "id: the ID's game state is over, not playing"),
        ("cAnAAwAAAAAE", "id: the match state cannot be shown: match_length must be 0 (money) or 1..25"),
    ],
)
def test_a_match_state_the_page_cannot_show_is_a_400(client, match_id, words):
    r = client.post("/web/position", json={"id": f"{START_ID}:{match_id}"})
    assert r.status_code == 400 and r.json()["detail"].startswith(words), r.text


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"id": "not an id"}, 400, "id:"),
        ({"board": pos({6: 16}, {19: 1})}, 400, "board"),  # 16 checkers
        ({"board": [0] * 26}, 400, "give a position"),
        ({"board": ["1"] + [0] * 25}, 422, "board"),  # strict: a string is no integer
        ({"id": START_ID, "board": na.starting_board().tolist()}, 400, "one way"),
        ({"id": START_ID, "dice": [3, 1]}, 400, "unknown field dice; the body takes id, board"),
    ],
)
def test_bad_positions_are_refused_naming_the_field(client, body, status, words):
    r = client.post("/web/position", json=body)
    assert r.status_code == status
    assert words in str(r.json()["detail"])


# --------------------------------------------------------------------------- /web/plays


def test_the_legal_plays_are_the_engines_each_with_moves_that_reach_it(client):
    r = client.post("/web/plays", json={"id": START_ID, "dice": [3, 1]})
    assert r.status_code == 200
    plays = r.json()["plays"]
    expected = na.legal_plays(na.starting_board(), (3, 1))  # README: (16, 26)
    assert len(plays) == 16
    assert sorted(tuple(p["board_after"]) for p in plays) == sorted(tuple(a) for a in expected.tolist())
    start = na.starting_board().tolist()
    for p in plays:
        assert apply_moves(start, p["play"]) == p["board_after"]
        for way in p["sequences"]:  # every way of playing it reaches the same board
            assert apply_moves(start, way) == p["board_after"]
        after = np.asarray(p["board_after"], dtype=np.int8)
        assert p["position_id"] == na.position_id(na.swap_sides(after))
    assert "8/5 6/5" in {p["notation"] for p in plays}


def test_a_roll_with_no_legal_move_is_one_empty_play(client):
    # on the bar against a closed board (the opponent holds our points 19..24): 6-6 cannot enter
    board = pos({25: 1, 6: 14}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 12: 3})
    plays = client.post("/web/plays", json={"board": board, "dice": [6, 6]}).json()["plays"]
    assert plays == [
        {
            "play": [],
            "sequences": [[]],
            "notation": "-",
            "board_after": board,
            "position_id": plays[0]["position_id"],
        }
    ]


def test_every_order_of_the_dice_that_gives_a_play_is_listed(client):
    # a lone back checker with 19 and 18 both open: 24/13 is 24/18/13 or 24/19/13 (two ways); at the
    # start the opponent holds our 19, so the opening 6-5's 24/13 has the one way 24/18/13
    board = pos({24: 1, 6: 14}, {1: 15})
    plays = client.post("/web/plays", json={"board": board, "dice": [6, 5]}).json()["plays"]
    run = next(p for p in plays if p["notation"] == "24/13")
    ways = sorted(sorted((m["from"], m["to"]) for m in w) for w in run["sequences"])
    assert ways == [[(18, 13), (24, 18)], [(19, 13), (24, 19)]]
    opening = client.post("/web/plays", json={"id": START_ID, "dice": [6, 5]}).json()["plays"]
    run = next(p for p in opening if p["notation"] == "24/13")
    assert [sorted((m["from"], m["to"]) for m in w) for w in run["sequences"]] == [[(18, 13), (24, 18)]]


def test_the_dice_come_from_an_xgid_when_not_given(client):
    r = client.post("/web/plays", json={"id": "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"})
    assert r.status_code == 200 and r.json()["dice"] == [5, 2]


@pytest.mark.parametrize(
    "body, words",
    [
        ({"id": START_ID}, 'dice: give "dice": [die1, die2] (1..6), or an ID whose dice are rolled'),
        ({"id": START_ID, "dice": [7, 1]}, "dice[0] must be 1..6"),
        ({"board": pos({1: 1}, {}), "dice": [3, 1]}, "already over"),
    ],
)
def test_bad_plays_requests_are_400s(client, body, words):
    r = client.post("/web/plays", json=body)
    assert r.status_code == 400 and words in r.json()["detail"]


# --------------------------------------------------------------------------- /web/roll and game_dice


def test_game_dice_are_a_pure_function_of_seed_and_turn():
    assert game_dice(1, 0) == (3, 6)  # pinned: tests/test_browser.py's game opens with it
    assert [game_dice(7, t) for t in range(20)] == [game_dice(7, t) for t in range(20)]
    openings = {game_dice(s, 0) for s in range(2000)}
    # the opening roll is never a double, and all 30 non-doubles occur (2000 draws: P(miss) < 1e-25)
    assert len(openings) == 30 and all(a != b for a, b in openings)
    later = {game_dice(s, 1) for s in range(2000)}
    assert len(later) == 36


@pytest.mark.parametrize("seed, turn", [(-1, 0), (2**63, 0), (0, -1), (0, web.MAX_TURN + 1), (True, 0)])
def test_game_dice_refuse_bad_seeds_and_turns(seed, turn):
    with pytest.raises(ValueError, match="seed|turn"):
        game_dice(seed, turn)


def test_the_roll_endpoint_gives_game_dice_and_checks_its_fields(client):
    assert client.post("/web/roll", json={"seed": 9, "turn": 4}).json()["dice"] == list(game_dice(9, 4))
    assert client.post("/web/roll", json={"seed": -1}).status_code == 422
    assert client.post("/web/roll", json={"seed": "1"}).status_code == 422
    r = client.post("/web/roll", json={"seed": 1, "turns": 2})
    assert r.status_code == 400 and "the body takes seed, turn" in r.json()["detail"]


# --------------------------------------------------------------------------- /web/reply


def test_the_engines_reply_is_the_best_play_of_move_for_its_seeded_roll(client, agent):
    board = na.starting_board()
    r = client.post("/web/reply", json={"board": board.tolist(), "seed": 5, "turn": 1})
    assert r.status_code == 200
    reply = r.json()
    assert tuple(reply["dice"]) == game_dice(5, 1)
    ranked = agent.rank_plays(board, tuple(reply["dice"]))
    best = ranked.afterstates[0]
    assert reply["board_after"] == na.swap_sides(best).tolist()
    assert reply["position_id"] == na.position_id(na.swap_sides(best))
    assert reply["equity"] == pytest.approx(float(ranked.equity[0]))
    assert apply_moves(board.tolist(), reply["play"]) == best.tolist()
    move = client.post("/move", json={"board": board.tolist(), "dice": reply["dice"]}).json()
    assert move["moves"][0]["notation"] == reply["notation"]  # the same ranking as /move
    assert reply["result"] == 0 and reply["ply"] == 0
    again = client.post("/web/reply", json={"board": board.tolist(), "seed": 5, "turn": 1}).json()
    assert again == reply


def test_the_engine_bearing_off_its_last_checker_wins_a_gammon(client):
    # the engine's last checker on its 1-point; the opponent has all 15 on its own 1-point (our 24):
    # none borne off, none in our home board -> a gammon (docs/RULES.md §6), result 2
    board = pos({1: 1}, {24: 15})
    reply = client.post("/web/reply", json={"board": board, "dice": [6, 5]}).json()
    assert reply["result"] == 2 and reply["notation"] == "1/off"


def test_a_reply_checks_its_dice_and_ply(client):
    r = client.post("/web/reply", json={"id": START_ID, "dice": [0, 3]})
    assert r.status_code == 400 and "dice[0]" in r.json()["detail"]
    r = client.post("/web/reply", json={"id": START_ID, "ply": 3})
    assert r.status_code == 400 and "ply" in r.json()["detail"]
    # dice and a seed or turn to draw them: which roll was meant is not known, so neither is used
    for extra in ({"seed": 5}, {"turn": 2}, {"seed": 0, "turn": 1}):
        r = client.post("/web/reply", json={"id": START_ID, "dice": [3, 1], **extra})
        assert (
            r.status_code == 400
            and r.json()["detail"] == "give dice, or seed and turn to draw them, not both"
        )


# --------------------------------------------------------------------------- /web/rollout


def _finish(client, job: str, seconds: float = 300) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        status = client.get(f"/web/rollout/{job}").json()
        if status["state"] != "running":
            return status
        assert time.monotonic() < deadline, "the rollout did not finish"
        time.sleep(0.1)


def test_a_rollout_job_reports_progress_and_the_result_of_rollout_with_its_seed(client, agent):
    r = client.post("/web/rollout", json={"id": START_ID, "games": 36, "seed": 11, "truncate": 10})
    assert r.status_code == 202
    job = r.json()["job"]
    status = _finish(client, job)
    assert status["state"] == "done" and status["games_done"] == 36 == status["games"]
    direct = rollout(na.starting_board(), 36, seed=11, agent=agent, truncate=10)
    result = status["result"]
    assert result["probs"] == pytest.approx(direct.probs.tolist(), abs=1e-6)
    assert result["equity"] == pytest.approx(direct.equity, abs=1e-6)
    assert result["games"] == 36 and result["truncated"] == direct.truncated and result["cubeful"] is None
    # the same seed again: the same numbers (determinism through the endpoint)
    again = _finish(client, client.post("/web/rollout", json={"id": START_ID, "games": 36, "seed": 11,
                                                                "truncate": 10}).json()["job"])  # fmt: skip
    assert again["result"]["probs"] == result["probs"]


def test_a_cubeful_rollout_reports_cubeful_equity(client):
    job = client.post(
        "/web/rollout", json={"id": START_ID, "games": 36, "cubeful": True, "truncate": 6}
    ).json()
    status = _finish(client, job["job"])
    assert status["state"] == "done" and status["result"]["cubeful"] is not None


def test_one_rollout_runs_at_a_time_and_a_running_one_can_be_cancelled(client):
    job = client.post("/web/rollout", json={"id": START_ID, "games": MAX_ROLLOUT_GAMES}).json()["job"]
    busy = client.post("/web/rollout", json={"id": START_ID, "games": 36})
    assert busy.status_code == 429 and "already running" in busy.json()["detail"]
    assert client.delete(f"/web/rollout/{job}").status_code == 200
    status = _finish(client, job)
    assert status["state"] == "cancelled" and status["games_done"] < MAX_ROLLOUT_GAMES


@pytest.mark.parametrize(
    "body, status",
    [
        ({"id": START_ID, "games": 0}, 422),
        ({"id": START_ID, "games": MAX_ROLLOUT_GAMES + 1}, 422),
        (
            {"id": START_ID, "ply": 2},
            400,
        ),  # web rollouts: ply 0..1; a ply out of range is a 400, as everywhere
        ({"id": START_ID, "ply": -1}, 400),
        ({"id": START_ID, "ply": True}, 422),  # strict: a bool is no integer
        ({"id": START_ID, "seed": -1}, 422),
        ({"id": START_ID, "truncate": 0}, 422),
        ({"id": START_ID, "games": 36.0}, 422),  # strict: a float is no integer
        ({"board": pos({1: 1}, {})}, 400),  # game over
        ({"id": START_ID, "game": 36}, 400),  # unknown field
    ],
)
def test_bad_rollout_requests_are_refused(client, body, status):
    r = client.post("/web/rollout", json=body)
    assert r.status_code == status
    if status == 400 and "game" in body:
        assert "the body takes id, board, games, ply, seed, truncate, cubeful" in r.json()["detail"]
    if status == 400 and "ply" in body:
        assert r.json() == {"detail": f"ply must be 0..1 for a rollout over HTTP, got {body['ply']}"}


def test_a_rollout_past_its_time_limit_stops_as_timed_out(client, monkeypatch):
    monkeypatch.setattr(web, "MAX_ROLLOUT_SECONDS", 0.0)  # read at each progress report
    job = client.post("/web/rollout", json={"id": START_ID, "games": 72, "truncate": 4}).json()["job"]
    status = _finish(client, job)
    assert status["state"] == "timed_out" and status["result"] is None


def test_an_unknown_rollout_job_is_a_404(client):
    assert client.get("/web/rollout/nosuchjob").status_code == 404
    assert client.delete("/web/rollout/nosuchjob").status_code == 404
    assert client.get("/web/rollout/..%2F..%2Fetc%2Fpasswd").status_code == 404  # not a job id: no file read


def _wait_for(client, job: str, ready, seconds: float = 120) -> dict:
    deadline = time.monotonic() + seconds
    while not ready(status := client.get(f"/web/rollout/{job}").json()):
        assert time.monotonic() < deadline, f"no such state in {seconds} s: {status}"
        time.sleep(0.05)
    return status


def test_a_one_ply_rollout_shows_progress_early_and_stops_within_a_ply_when_cancelled(client):
    """Review of issue 17: at 1-ply every game used to be in flight at once, so none finished (and
    the progress stayed 0) until near the end, and a cancel was only seen when games finished. Web
    rollouts at 1-ply now play 36 games at a time, and a cancel is seen after the next ply."""
    r = client.post(
        "/web/rollout", json={"id": START_ID, "games": MAX_ROLLOUT_GAMES, "ply": 1, "truncate": 3}
    )
    job = r.json()["job"]
    running = _wait_for(client, job, lambda s: s["games_done"] > 0)
    assert running["state"] == "running" and running["games_done"] < MAX_ROLLOUT_GAMES
    asked = time.monotonic()
    assert client.delete(f"/web/rollout/{job}").status_code == 200
    stopped = _wait_for(client, job, lambda s: s["state"] != "running", seconds=30)
    assert stopped["state"] == "cancelled" and time.monotonic() - asked < 30
    assert stopped["games_done"] < MAX_ROLLOUT_GAMES


def test_worker_processes_sharing_the_jobs_folder_see_each_others_rollouts(tmp_path):
    """``nard serve --workers N``: a client's next request may reach another process. Two apps on one
    jobs folder stand for two workers: B answers the progress of A's job, B's cancel stops it on A,
    and B refuses a second rollout while A's runs."""
    a = TestClient(create_app(jobs_folder=tmp_path))
    b = TestClient(create_app(jobs_folder=tmp_path))
    job = a.post("/web/rollout", json={"id": START_ID, "games": MAX_ROLLOUT_GAMES}).json()["job"]
    seen = _wait_for(b, job, lambda s: s["games_done"] > 0)
    assert seen["state"] == "running" and seen["games"] == MAX_ROLLOUT_GAMES
    busy = b.post("/web/rollout", json={"id": START_ID, "games": 36})
    assert busy.status_code == 429 and "already running" in busy.json()["detail"]
    assert b.delete(f"/web/rollout/{job}").status_code == 200
    assert _wait_for(a, job, lambda s: s["state"] != "running", seconds=30)["state"] == "cancelled"
    done = _finish(b, b.post("/web/rollout", json={"id": START_ID, "games": 36, "truncate": 4}).json()["job"])
    assert done["state"] == "done" and a.get(f"/web/rollout/{done['job']}").json() == done


def test_a_job_whose_worker_died_is_failed_and_blocks_nothing(tmp_path):
    """A worker killed mid-rollout leaves its job "running" on disk; the process is gone, so the job
    reads as failed and a new rollout starts."""
    import json
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    record = {
        "job": "0" * 32, "state": "running", "games_done": 5, "games": 36, "started": time.time(),
        "finished": None, "error": None, "result": None, "pid": int(dead.stdout),
    }  # fmt: skip
    (tmp_path / f"{record['job']}.json").write_text(json.dumps(record))
    client = TestClient(create_app(jobs_folder=tmp_path))
    status = client.get(f"/web/rollout/{record['job']}").json()
    assert status["state"] == "failed" and "stopped" in status["error"]
    time.sleep(0.05)
    assert client.get(f"/web/rollout/{record['job']}").json()["seconds"] == status["seconds"]  # it stopped
    started = client.post("/web/rollout", json={"id": START_ID, "games": 36, "truncate": 4})
    assert started.status_code == 202
    assert _finish(client, started.json()["job"])["state"] == "done"  # (and no thread left running at exit)


# --------------------------------------------------------------------------- /web/analysis


def test_a_match_is_analysed_as_analyze_match_does_with_a_swing_point_per_decision(client, agent):
    data = MATCH.read_bytes()
    r = client.post("/web/analysis", content=data, headers={"content-type": "text/plain"})
    assert r.status_code == 200
    body = r.json()
    expected = analyze_match(read_mat(data), agent)
    assert body["analysis"] == expected.to_dict()
    swing = body["swing"]
    assert len(swing) == len(expected.decisions) > 0
    boards = np.stack([parse_position(d.position)[0] for d in expected.decisions])
    probs, equity = agent.value(boards)
    for point, d, p, e in zip(swing, expected.decisions, probs, equity, strict=True):
        assert (point["game"], point["turn"], point["player"]) == (d.game, d.turn, d.player)
        assert point["loss"] == pytest.approx(d.loss)
        # seat 0's view: the decider's equity as it is for seat 0, negated for seat 1
        assert point["equity"] == pytest.approx(float(e) if d.player == 0 else -float(e), abs=1e-6)
        assert point["win"] == pytest.approx(float(p[0]) if d.player == 0 else 1 - float(p[0]), abs=1e-6)


# A 3-point match whose game 2 names other players (the lines counted from 1 in the comments):
# read_mat keeps game 1's names and warns, naming the line.
RENAMED = RENAMED_MAT  # conftest: game 2 names carol and dave on line 10


def test_the_records_warnings_are_in_the_answer_and_the_decisions_name_their_mat_lines(client):
    r = client.post("/web/analysis", content=RENAMED.encode())
    assert r.status_code == 200
    body = r.json()
    assert body["warnings"] == [
        "line 10: game 2 names the players 'carol' and 'dave', but game 1 named them 'alice' and 'bob'; "
        "game 1's names are kept"
    ]
    assert body["warnings"] == list(read_mat(RENAMED).warnings)  # read_mat's own words
    analysis = body["analysis"]
    assert analysis["players"] == ["alice", "bob"]
    # every record's roll, double and answer, by (game, .mat move, player, line) as the comments count them
    where = [(d["game"], d["mat_move"], d["player"], d["line"]) for d in analysis["decisions"]]
    assert (1, 1, 0, 5) in where and (1, 1, 1, 5) in where  # alice's 31 and bob's 52, both on line 5
    assert (1, 2, 0, 6) in where and (1, 2, 1, 6) in where  # alice's double and bob's drop, on line 6
    assert (2, 1, 1, 11) in where  # game 2's 42 of the right column
    assert all(d["mat_move"] and d["line"] for d in analysis["decisions"])


def test_a_record_without_warnings_answers_an_empty_list_and_every_decision_has_its_line(client):
    data = MATCH.read_bytes()
    r = client.post("/web/analysis?errors_only=true", content=data)
    assert r.status_code == 200 and r.json()["warnings"] == []
    decisions = r.json()["analysis"]["decisions"]
    lines = data.decode().split("\n")
    for d in decisions:  # the record is on its line, under its move number
        assert lines[d["line"] - 1].lstrip().startswith(f"{d['mat_move']})")
    # the first error of the README's `nard analyze tests/data/match_3pt.mat --errors-only`: "1) line 13 bob"
    assert (decisions[0]["mat_move"], decisions[0]["line"], decisions[0]["player"]) == (1, 13, 1)


def test_the_response_documents_the_warnings(client):
    schema = client.get("/openapi.json").json()["components"]["schemas"]["AnalysisResponse"]
    assert "warnings" in schema["required"] and schema["properties"]["warnings"]["type"] == "array"
    assert "read_mat" in schema["properties"]["warnings"]["description"]


def test_errors_only_lists_the_marked_decisions(client):
    r = client.post("/web/analysis?errors_only=true", content=MATCH.read_bytes())
    decisions = r.json()["analysis"]["decisions"]
    assert r.status_code == 200 and decisions and all(d["skill"] for d in decisions)


@pytest.mark.parametrize(
    "query, content, status, words",
    [
        ("", b"", 400, "empty"),
        ("", b"this is not a match\n", 400, "body: not a readable .mat match"),
        ("?ply=2", b"x", 400, "ply must be 0..1 for an analysis over HTTP, got 2"),
        ("?depth=1", b"x", 400, "unknown query parameter depth; this endpoint takes ply and errors_only"),
        ("?ply=0&ply=1", b"x", 400, "query parameter ply given more than once"),
    ],
)
def test_bad_analysis_requests_are_400s(client, query, content, status, words):
    r = client.post("/web/analysis" + query, content=content)
    assert r.status_code == status and words in r.json()["detail"]


@pytest.mark.parametrize(
    "query, error",
    [
        # the README's table: a query integer only digits, a query flag only true or false: 422, as /cube's
        ("?ply=1.0", {"type": "int_parsing", "loc": ["query", "ply"],
                      "msg": "Input should be an integer written in digits, e.g. 3", "input": "1.0"}),
        ("?errors_only=yes", {"type": "bool_parsing", "loc": ["query", "errors_only"],
                              "msg": "Input should be true or false", "input": "yes"}),
        ("?errors_only=1", {"type": "bool_parsing", "loc": ["query", "errors_only"],
                            "msg": "Input should be true or false", "input": "1"}),
    ],
)  # fmt: skip
def test_analysis_query_values_of_the_wrong_type_are_422s_as_the_backends(client, query, error):
    r = client.post("/web/analysis" + query, content=b"x")
    assert r.status_code == 422 and r.json() == {"detail": [error]}


def test_an_upload_over_the_mat_limit_is_a_413():
    # the app's own body limit raised, so the .mat limit of the web router is the one met
    app = TestClient(create_app(max_body_bytes=10 * web.MAX_MAT_BYTES))
    r = app.post("/web/analysis", content=b" " * (web.MAX_MAT_BYTES + 1))
    assert r.status_code == 413 and f"at most {web.MAX_MAT_BYTES} bytes" in r.json()["detail"]


def test_a_match_over_the_record_limit_is_a_413(client, monkeypatch):
    monkeypatch.setattr(web, "MAX_MAT_RECORDS", 10)
    r = client.post("/web/analysis", content=MATCH.read_bytes())
    assert r.status_code == 413 and "at most 10 are analysed" in r.json()["detail"]


def test_the_router_refuses_a_bad_mat_limit():
    with pytest.raises(ValueError, match="max_mat_bytes"):
        web.web_router(None, None, None, None, None, None, max_mat_bytes=0)


def test_an_app_that_includes_the_router_itself_gets_its_state_and_limit(tmp_path):
    from fastapi import FastAPI

    app = FastAPI()
    app.include_router(
        web.web_router(None, None, None, None, None, None, max_mat_bytes=5, jobs_folder=tmp_path)
    )
    c = TestClient(app)
    r = c.get("/web/rollout/nope")  # the handler reaches the job store through app.state
    assert r.status_code == 404 and "no rollout job 'nope'" in r.json()["detail"]
    assert isinstance(app.state.web_board, web.WebBoard) and app.state.web_board.max_mat_bytes == 5
    assert c.post("/web/analysis", content=b"x" * 6).status_code == 413
    spec = c.get("/openapi.json").json()
    assert spec["paths"]["/web/analysis"]["post"]["responses"]["413"]["description"].startswith(
        "over 5 bytes"
    )


def test_the_static_files_exist_and_go_into_the_package_data():
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "interfaces/static/*" in pyproject["tool"]["setuptools"]["package-data"]["nard_ai"]
    for name in ["index.html", *web.STATIC_FILES]:
        assert (web.STATIC_DIR / name).is_file(), name


def test_the_engine_turn_plays_the_roll_the_id_holds(client):
    """/web/reply of an XGID holding 5-2 (a new user's report, 2026-12-07: it played a roll drawn from the seed,
    where /web/plays takes the ID's 5-2): the ID's roll, as /move; with seed and turn as well, a 400."""
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
    r = client.post("/web/reply", json={"id": xgid})
    assert r.status_code == 200 and r.json()["dice"] == [5, 2], r.text
    r = client.post("/web/reply", json={"id": xgid, "seed": 1, "turn": 0})
    assert r.status_code == 400 and "holds the roll 5-2" in r.json()["detail"], r.text
