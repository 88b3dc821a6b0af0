"""The ``nard`` command line (:mod:`nard_ai.interfaces.cli`) and the interactive game (:mod:`nard_ai.interfaces.terminal`).

Commands run in-process through ``main([...])`` (stdout/stderr from capsys);
two bad inputs also run as real subprocesses. Expected values come from the
formats' specs (XGID seats, Match ID fields), the rules (RULES.md), opening
theory (3-1 makes the 5-point), or the engine's own library calls that the
command must only print (``cube_decision``, ``Agent.evaluate``).
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from nard_ai.core.board import game_result, pos, starting_board, swap_sides
from nard_ai.core.movegen import legal_plays
from nard_ai.cube import CubeState
from nard_ai.formats.mat import read_mat
from nard_ai.formats.match_id import MatchState, Resignation, gnubg_id
from nard_ai.formats.notation import play_notation
from nard_ai.formats.position_id import board_from_position_id, position_id
from nard_ai.formats.xgid import from_xgid, to_xgid
from nard_ai.interfaces import cli
from nard_ai.interfaces.terminal import ENGINE, HUMAN, play_session
from nard_ai.model.network import default_checkpoint_path
from nard_ai.reports.analysis import count_records
from tests.test_analysis import GammonChaser

REPO = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
START_52 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
FIVE_POINT_XGID = cli.CUBE_XGID  # X has made its 4- and 5-points; money, cube centred
O_ON_ROLL_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:-1:00:1:3:0:5:10"  # O on roll, 5-point match, X 1 O 3
FINISHED_ID = position_id(pos(opp={6: 15}))  # the side on roll has borne off all 15
#: Both sides: 3 checkers on the bar against a closed home board (2 on each of points 1-6); neither can move.
DEAD_ID = "27YBAHDbtgEAcA"
DEAD_XGID = "XGID=cBBBBBB------------bbbbbbC:0:0:1:31:0:0:0:0:10"
#: A race the side on roll wins about 95% of the time: double, pass (its 55 pips against 75).
RACE_FAR_AHEAD = pos(me={6: 4, 5: 4, 4: 3, 3: 2, 2: 2}, opp={8: 3, 7: 3, 6: 3, 5: 2, 4: 2, 3: 2})
#: The starting position (money) in gnubg Match IDs whose game is no live turn for X, each
#: gnubg_id(starting_board(), MatchState(...)) of the fields named (formats/match_id.py's layout):
OVER_ID = "4HPwATDgc/ABMA:cAoAAAAAAAAE"  # game_state=OVER
DROPPED_ID = "4HPwATDgc/ABMA:cAwAAAAAAAAE"  # game_state=DROPPED (a passed double ended it)
RESIGNED_ID = "4HPwATDgc/ABMA:cCsAAAAAAAAE"  # game_state=RESIGNED, resignation=SINGLE
RESIGN_OFFER_ID = "4HPwATDgc/ABMA:cCEAAAAAAAAE"  # PLAYING, resignation=SINGLE, turn=0: O must answer
#: An XGID's dice field "D": X has doubled and O must take or pass (XG's format).
DOUBLED_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:0:0:10"

needs_network = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)
pytestmark = needs_network


run_main = run_cli


def json_of(argv, capsys) -> dict:
    status, out, err = run_main(argv, capsys)
    assert status == 0, err
    return json.loads(out)


def _agent(ply: int = 0):
    from nard_ai.agents import load_agent

    try:
        return load_agent(ply=ply)
    except ValueError as exc:  # a ply the engine cannot search yet
        pytest.skip(str(exc))


# --------------------------------------------------------------------------- --help examples


COMMANDS = ("show", "hint", "eval", "cube", "rollout", "play", "analyze", "serve")


def examples_of(command: str, capsys) -> list[str]:
    status, out, _ = run_main([command, "--help"], capsys)
    assert status == 0
    assert "examples:" in out, f"nard {command} --help has no examples"
    lines = out.split("examples:", 1)[1].splitlines()
    return [line.strip() for line in lines if line.strip().startswith("nard ")]


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "serve"])
def test_every_help_example_runs_as_written(command, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # from any directory: the analyze examples name the sample by its full path
    examples = examples_of(command, capsys)
    assert examples
    for example in examples:
        argv = shlex.split(example)[1:]
        if command == "play":
            monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
        status, out, err = run_main(argv, capsys)
        assert status == 0, f"{example!r} failed: {err}"
        assert out.strip(), example
        if "--json" in argv:
            json.loads(out)
        assert "Traceback" not in err


def test_serve_help_examples_parse(capsys):
    # `nard serve` runs until interrupted, so its examples are only parsed here
    examples = examples_of("serve", capsys)
    for example in examples:
        args = cli.build_parser().parse_args(shlex.split(example)[1:])
        assert args.command == "serve"


# --------------------------------------------------------------------------- bad input: one line, status 2


def _corrupt_mat(tmp_path: Path) -> Path:
    text = (REPO / "tests/data/match_3pt.mat").read_text().replace("24/21 24/20", "24/21 24/18")
    path = tmp_path / "corrupt.mat"
    path.write_text(text)
    return path


#: The one wording of a bad --ply (nard_ai.interfaces.commands.common.PLY_RANGE_TEXT).
PLY_RANGE = "must be an integer 0..2 (the search depth in gnubg's numbering: 0 = static evaluation)"

BAD_INPUTS = [
    (["show", "nonsense"], "bad position 'nonsense'"),
    (["show", f"{START_ID}:zzzz"], "Match ID"),
    (["show", "XGID=-b----E-C:0:0"], "XGID"),
    (["hint", START_ID, "--dice", "37"], "each die must be 1..6, got 7"),
    (["hint", START_ID, "--dice", "3", "1", "5"], "not two dice"),
    (["hint", START_ID, "--dice", "x1"], "each die must be 1..6, got 'x'"),
    # issue 15: "unrecognized arguments: 1" before; the bad die is named, wherever --dice stands
    (["hint", START_ID, "--dice", "a", "1"], "bad dice: each die must be 1..6, got 'a'"),
    (["hint", "--dice", "3", "z", START_ID], "bad dice: each die must be 1..6, got 'z'"),
    (["hint", START_ID, "--dice=3", "x"], "bad dice: each die must be 1..6, got 'x'"),
    (["hint", START_ID, "--dice", "-1", "3"], "bad dice"),
    # issue 15: a position where neither side can ever move (both on the bar against closed boards)
    (["show", DEAD_ID], "neither side can ever move"),
    (["hint", DEAD_ID, "--dice", "31"], "neither side can ever move"),
    (["rollout", DEAD_ID, "--games", "2"], "neither side can ever move"),
    (["play", "--position", DEAD_ID], "neither side can ever move"),
    (["play", "--position", DEAD_XGID], "neither side can ever move"),
    # issue 15: numpy's "expected non-negative integer" traceback before
    (["play", "--seed", "-1"], "argument --seed: must be >= 0, got -1"),
    (["hint", START_ID], "--dice"),
    (["hint", START_ID, "--dice", "31", "--ply", "7"], "ply"),
    (["hint", START_ID, "--dice", "31", "--top", "-2"], "--top"),
    (["hint", FINISHED_ID, "--dice", "31"], "already over"),
    (["eval", START_ID, "--ply", "-1"], "--ply"),
    # the value given, not the first ply the loop failed at ("got 3" before the fix); one wording for every
    # command, argparse's (tests/test_cli_user_pass.py)
    (["eval", START_ID, "--ply", "4"], f"nard eval: error: argument --ply: {PLY_RANGE}, got 4"),
    (["eval", START_ID, "--ply", "100"], f"nard eval: error: argument --ply: {PLY_RANGE}, got 100"),
    (["hint", "--dice", "3", START_ID], "not two dice"),
    (["cube", START_ID, "--checkpoint", "missing.pt"], "missing.pt"),
    (["cube", FINISHED_ID], "already over"),
    # UBGI's bad_state answers (nard_ai/interfaces/ubgi.py, README "UBGI"): no play, evaluation, cube
    # decision or rollout of an ID whose game is over, resigned or dropped, or whose resignation awaits
    # its answer; the same first words as UBGI's "the ID's game state is over, not playing"
    *[
        ([*argv, position], words)
        for argv in (["hint", "--dice", "31"], ["eval"], ["cube"], ["rollout", "--games", "2"])
        for position, words in (
            (OVER_ID, "the ID's game state is over, not playing"),
            (DROPPED_ID, "the ID's game state is dropped, not playing"),
            (RESIGNED_ID, "the ID's game state is resigned, not playing"),
            (RESIGN_OFFER_ID, "a resignation awaits its answer"),
        )
    ],
    # a double awaiting its answer: O takes or passes before X rolls (UBGI: "a double awaits its answer:
    # no play now"); nard cube answers it (test_cube_answers_a_pending_double_as_ubgi_does)
    (["hint", DOUBLED_XGID, "--dice", "31"], "a double awaits its answer"),
    (["eval", DOUBLED_XGID], "a double awaits its answer"),
    (["rollout", DOUBLED_XGID, "--games", "2"], "a double awaits its answer"),
    # the roll given twice and different: HTTP /move's 400 (README, "Serving the engine": "dice that
    # differ from the roll the ID holds"), not --dice silently winning over the ID's 5-2
    (
        ["hint", START_52, "--dice", "31"],
        "the ID holds the roll 5-2, and --dice gives 3-1: give the dice one way",
    ),
    (["rollout", START_ID, "--games", "0"], "--games"),
    (["analyze", "missing.mat"], "cannot read missing.mat"),
    (["analyze", "tests/data/match_3pt.mat", "--thresholds", "0.1,0.05,0.2"], "rise"),
    (["analyze", "tests/data/match_3pt.mat", "--thresholds", "0.1"], "three numbers"),
    (["play", "--position", "bad"], "bad position"),
    # a Match ID whose game is over (game state 2): nothing to play from (not_playing, as nard hint)
    (["play", "--position", f"{START_ID}:cAoAAAAAAAAE"], "the ID's game state is over, not playing"),
    # argparse named only "nard" for an argument no command takes; the line names the command
    (["eval", START_ID, "--dice", "3", "1"], "nard eval: error: unrecognized arguments: --dice 3 1"),
    (["hint", START_ID, "--dice", "31", "--bogus"], "nard hint: error: unrecognized arguments: --bogus"),
    # checked before the server says it listens (the log line came first, then the error)
    (["serve", "--ply", "3", "--port", "0"], f"nard serve: error: argument --ply: {PLY_RANGE}, got 3"),
    (["serve", "--checkpoint", "missing.pt", "--port", "0"], "missing.pt"),
    (["play", "--first", "nobody"], "invalid choice"),
    ([], "required"),
    (["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize("argv, fragment", BAD_INPUTS)
def test_bad_input_is_one_error_line_and_status_2(argv, fragment, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    status, out, err = run_main(argv, capsys)
    assert status == 2
    assert "Traceback" not in err and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and fragment in lines[0], err


def test_corrupt_and_binary_match_files_are_one_line_errors(tmp_path, capsys):
    status, _, err = run_main(["analyze", str(_corrupt_mat(tmp_path))], capsys)
    # line 13 is game 1's first move: bob's 34 written as 24/21 24/18, and no die moves 6 pips
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert re.search(r"corrupt\.mat: line 13: 'bob' \(player 1\) rolls 34: 24/18: 24/18 moves 6 pips", err), (
        err
    )
    binary = tmp_path / "weights.mat"
    binary.write_bytes(b"\x80\x02\xff\xfe" * 10)
    status, _, err = run_main(["analyze", str(binary)], capsys)
    assert status == 2 and "not a text .mat record" in err and len(err.strip().splitlines()) == 1


def _subprocess(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "nard_ai.interfaces.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_real_processes_exit_2_with_one_line_and_0_on_success(tmp_path):
    for argv in (["show", "4HPwATDgc/ABMX!"], ["analyze", str(_corrupt_mat(tmp_path))]):
        r = _subprocess(argv, tmp_path)
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert r.stderr.startswith(f"nard {argv[0]}: error: ")
    r = _subprocess(["show", START_ID], tmp_path)
    assert r.returncode == 0 and "Pip count  X: 167  O: 167" in r.stdout and r.stderr == ""


# --------------------------------------------------------------------------- show


def test_show_draws_the_board_with_pips_and_ids(capsys):
    status, out, _ = run_main(["show", START_52], capsys)
    assert status == 0
    assert "Pip count  X: 167  O: 167" in out  # RULES.md 1: the starting position has 167 pips each
    assert "Rolled 52" in out and "X has rolled 5-2" in out
    assert f" {START_52}" in out and "GNU Backgammon ID: 4HPwATDgc/ABMA:" in out
    assert "Money game" in out and "Cube 1, centred" in out


def test_show_reads_the_score_from_the_side_on_roll(capsys):
    # XGID: turn -1 = O on roll, so the board is O's view; score field 1 (X) = 1, field 2 (O) = 3.
    # The printed X is the side on roll (XG's O), so it leads 3 to 1.
    status, out, _ = run_main(["show", O_ON_ROLL_XGID], capsys)
    assert status == 0
    assert "5-point match, score X 3, O 1 (X 2-away, O 4-away)" in out
    board, _ = from_xgid(O_ON_ROLL_XGID)
    assert f"Position ID: {position_id(board)}" in out
    status, out, _ = run_main(["show", cli.MATCH_GNUBG_ID], capsys)
    assert "5-point match, score X 2, O 3" in out and "Cube 2, owned by O" in out


def test_show_accepts_a_finished_game(capsys):
    status, out, _ = run_main(["show", FINISHED_ID], capsys)
    assert status == 0 and "X: on roll, 15 off" in out


# --------------------------------------------------------------------------- hint


def test_hint_ranks_the_opening_31_with_the_five_point_first(capsys):
    data = json_of(["hint", START_ID, "--dice", "31", "--json"], capsys)
    assert data["dice"] == [3, 1] and data["legal_plays"] == 16  # 16 plays of the opening 3-1 (README)
    plays = data["plays"]
    assert plays[0]["play"] == "8/5 6/5" and plays[0]["diff"] == 0.0  # opening theory: make the 5-point
    assert data["ranked_by"] == "cubeless equity" and data["match"] is None
    diffs = [p["diff"] for p in plays]
    assert diffs == sorted(diffs, reverse=True) and len(plays) == 16 and max(diffs) == 0.0
    for p in plays:  # gnubg's sign: the play's equity minus the best play's, <= 0
        assert p["diff"] == pytest.approx(p["equity"] - plays[0]["equity"], abs=2e-6)
        probs = p["probabilities"]
        assert 0 <= probs["win_backgammon"] <= probs["win_gammon"] <= probs["win"] <= 1


def test_hint_takes_the_dice_from_the_id_and_accepts_every_spelling(capsys):
    from_id = json_of(["hint", START_52, "--json"], capsys)
    for spelling in (["52"], ["5", "2"], ["2-5"], ["5,2"]):
        assert json_of(["hint", START_ID, "--json", "--dice", *spelling], capsys)["plays"] == from_id["plays"]
    assert from_id["dice"] == [5, 2]


def test_hint_takes_the_ids_roll_given_again_with_dice_in_either_order(capsys):
    # the same dice both ways is one roll (as HTTP /move: "the same dice (either order) accepted")
    from_id = json_of(["hint", START_52, "--json"], capsys)
    for spelling in ("52", "25", "2-5"):
        assert json_of(["hint", START_52, "--json", "--dice", spelling], capsys)["plays"] == from_id["plays"]


def test_hint_text_has_the_diff_column_and_top(capsys):
    status, out, _ = run_main(["hint", START_ID, "--dice", "31", "--top", "3"], capsys)
    assert status == 0
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\s", line)]
    assert len(rows) == 3 and "8/5 6/5" in rows[0] and "... 13 more" in out
    assert re.search(r"equity\s+diff", out)


def test_hint_text_and_json_give_the_same_signed_diff(capsys):
    # one convention (gnubg's): the difference from the best play, negative, in text and JSON alike
    data = json_of(["hint", START_ID, "--dice", "31", "--json"], capsys)
    status, out, _ = run_main(["hint", START_ID, "--dice", "31"], capsys)
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\s", line)]
    for row, play in zip(rows[1:], data["plays"][1:], strict=True):
        equity, diff = re.search(r"([+-]\d\.\d{3})\s+([+-]\d\.\d{3})\s", row).groups()
        assert float(diff) == pytest.approx(play["diff"], abs=5e-4) and float(diff) < 0


@pytest.mark.parametrize(
    "argv",
    [
        ["hint", "--dice", "3", "1", START_ID],  # the order of the usage line
        ["hint", "--dice", "31", START_ID],
        ["hint", "--dice", "3-1", START_ID],
        ["hint", START_ID, "--dice", "3", "1"],
        ["hint", "--json", "--dice", "3", "1", START_ID, "--top", "2"],
    ],
)
def test_dice_before_or_after_the_id_as_one_or_two_tokens(argv, capsys):
    """Before the fix --dice took every token after it, the ID included ("arguments are required: ID")."""
    expected = json_of(["hint", START_ID, "--dice", "31", "--json"], capsys)["plays"]
    argv = argv if "--json" in argv else [*argv, "--json"]
    data = json_of(argv, capsys)
    assert data["dice"] == [3, 1] and data["position_id"] == START_ID
    assert data["plays"] == expected[: len(data["plays"])]


def test_two_token_dice_are_joined_before_parsing_and_nothing_after_a_double_dash():
    join = cli._join_dice_tokens
    assert join(["hint", "--dice", "3", "1", START_ID]) == ["hint", "--dice", "3 1", START_ID]
    assert join(["hint", "--dice", "31", START_ID]) == ["hint", "--dice", "31", START_ID]
    assert join(["hint", "--dice", "3", "1", "5"]) == ["hint", "--dice", "3 1 5"]  # refused by parse_dice
    assert join(["show", "--", "--dice", "3", "1"]) == ["show", "--", "--dice", "3", "1"]
    # any one-character token joins, so that parse_dice names a bad die (issue 15: "--dice a 1")
    assert join(["hint", START_ID, "--dice", "a", "1"]) == ["hint", START_ID, "--dice", "a 1"]
    assert join(["hint", "--dice=3", "1", START_ID]) == ["hint", "--dice", "3 1", START_ID]
    assert join(["hint", "--dice", "-1", "3", "--top", "2"]) == ["hint", "--dice", "-1 3", "--top", "2"]
    assert cli.parse_dice(["3 1"]) == (3, 1) and cli.parse_dice(["1", "3"]) == (3, 1)


def test_hint_at_a_match_score_ranks_by_mwc(capsys):
    """5-point match at 4-4 (double match point): a win is the match, so each play's MWC is its win chance."""
    data = json_of(["hint", cli.DMP_XGID, "--json"], capsys)
    assert data["ranked_by"] == "cubeless MWC at the score" and data["diff_unit"] == "mwc"
    assert data["match"] == {
        "length": 5,
        "score": [4, 4],
        "crawford": False,
        "cube_value": 1,
        "cube_owner": "centred",
    }
    mwc = [p["mwc"] for p in data["plays"]]
    assert mwc == sorted(mwc, reverse=True)
    for p in data["plays"]:
        assert p["mwc"] == pytest.approx(p["probabilities"]["win"], abs=2e-6)
        assert p["emg"] == pytest.approx(2 * p["mwc"] - 1, abs=2e-6)  # W = 1, L = 0 at DMP
        assert p["diff"] == pytest.approx(p["mwc"] - mwc[0], abs=2e-6)
    status, out, _ = run_main(["hint", cli.DMP_XGID, "--top", "3"], capsys)
    assert "ranked by 0-ply cubeless MWC at the score (5-point match, X 4, O 4, cube 1 centred" in out
    assert re.search(r"mwc\s+diff\s+emg", out)


def test_hint_orders_differently_for_money_and_at_dmp(capsys, monkeypatch):
    """GammonChaser: its gammonish play leads for money, its safer play at 4-4 of 5 (the old code ranked both as money)."""
    monkeypatch.setattr("nard_ai.agents.load_agent", lambda checkpoint=None, ply=0: GammonChaser())
    board, _ = from_xgid(cli.DMP_XGID)
    plays = legal_plays(board, (6, 4))
    gammonish, safe = (play_notation(board, plays[k], (6, 4)) for k in (0, 1))
    money_xgid = cli.DMP_XGID.replace(":4:4:0:5:10", ":0:0:0:0:10")
    money = json_of(["hint", money_xgid, "--json"], capsys)
    dmp = json_of(["hint", cli.DMP_XGID, "--json"], capsys)
    assert [p["play"] for p in money["plays"][:2]] == [gammonish, safe]
    assert [p["play"] for p in dmp["plays"][:2]] == [safe, gammonish]
    assert dmp["plays"][1]["diff"] == pytest.approx(-0.05)  # MWC 0.60 against 0.65


def test_hint_at_one_ply_ranks_by_the_deeper_search(capsys):
    agent = _agent(1)
    data = json_of(["hint", START_ID, "--dice", "31", "--ply", "1", "--json"], capsys)
    assert data["ply"] == 1
    ranked = agent.rank_plays(starting_board(), (3, 1))
    best = play_notation(starting_board(), ranked.afterstates[0], (3, 1))
    assert data["plays"][0]["play"] == best
    assert data["plays"][0]["equity"] == pytest.approx(float(ranked.equity[0]), abs=1e-6)


def test_hint_text_shows_each_plays_depth_when_a_filter_decides_the_play(capsys):
    # X to play 6-5 with an O checker alone on X's 1-point and X's 2- to 6-points made: 7/1* 6/1 closes the board
    # on a checker on the bar (a close-out with many gammons, the textbook play), and the default network puts the
    # next play, 13/7 6/1*, 0.27 behind it at 0-ply (`nard hint uHsGAyC27QoGAA --dice 65 --ply 0`). gnubg's normal
    # filter keeps at 0-ply only the plays within 0.16 of the best, so the play is decided and, as gnubg does, valued
    # at 0-ply. The table must say so in its ply column and a note, not pass the 0-ply numbers off as 1-ply.
    board = pos({13: 2, 8: 1, 7: 1, 6: 3, 5: 2, 4: 2, 3: 2, 2: 2}, {24: 1, 13: 2, 8: 2, 6: 4, 5: 3, 4: 3})
    status, out, err = run_main(
        ["hint", position_id(board), "--dice", "65", "--ply", "1", "--top", "2"], capsys
    )
    assert status == 0, err
    rows = [line.split() for line in out.splitlines() if line.lstrip().startswith(("1 ", "2 "))]
    assert out.count(" ply ") == 1 and rows[0][:4] == ["1", "7/1*", "6/1", "0"]
    assert rows[1][:4] == ["2", "13/7", "6/1*", "0"]
    assert "valued at less than 1-ply, as in gnubg" in out


# --------------------------------------------------------------------------- eval


def test_eval_prints_each_ply_as_the_agent_evaluates_it(capsys):
    board = board_from_position_id(START_ID)
    data = json_of(["eval", START_ID, "--ply", "0", "--json"], capsys)
    assert [e["ply"] for e in data["evaluations"]] == [0]
    probs, equity = _agent(0).value(board[None])
    row = data["evaluations"][0]
    assert row["equity"] == pytest.approx(float(equity[0]), abs=1e-5)
    assert list(row["probabilities"].values()) == pytest.approx(probs[0].tolist(), abs=1e-5)


def test_eval_goes_to_two_ply_by_default(capsys):
    agents = [_agent(ply) for ply in (0, 1, 2)]  # skips while 1- and 2-ply do not exist
    data = json_of(["eval", FIVE_POINT_XGID, "--json"], capsys)
    board, _ = from_xgid(FIVE_POINT_XGID)
    assert [e["ply"] for e in data["evaluations"]] == [0, 1, 2]
    for row, agent in zip(data["evaluations"], agents, strict=True):
        assert row["equity"] == pytest.approx(float(agent.value(board[None])[1][0]), abs=1e-5)
    status, out, _ = run_main(["eval", START_ID], capsys)
    table = out.split("equity in points per game:")[1].splitlines()
    assert [line.split()[0] for line in table[2:]] == ["0", "1", "2"]


# --------------------------------------------------------------------------- cube


def test_cube_prints_what_cube_decision_says(capsys):
    from nard_ai.cube import CubeState, cube_decision

    board, _ = from_xgid(FIVE_POINT_XGID)
    d = cube_decision(board, CubeState(), agent=_agent(0))
    data = json_of(["cube", FIVE_POINT_XGID, "--json"], capsys)
    assert data["action"] == d.action and data["cube_available"]
    for key, value in d.equities.items():
        assert data["equities"][key] == pytest.approx(value, abs=1e-6)
    assert data["equities"]["double_pass"] == 1.0  # money: double/pass is +1 cube by construction
    assert data["errors"]["take"] == pytest.approx(d.errors["take"], abs=1e-6)
    status, out, _ = run_main(["cube", FIVE_POINT_XGID], capsys)
    assert "1. " in out and "2. " in out and "3. " in out and "Proper cube action: " in out
    first = re.search(r"1\. (No double|Double, take|Double, pass)", out).group(1)
    assert first == {
        "no_double": "No double",
        "double_take": "Double, take",
        "double_pass": "Double, pass",
    }.get(d.action, "No double")  # gnubg lists the right action first; "too good" plays on: no double


def test_cube_in_a_match_uses_the_ids_score_and_owner(capsys):
    data = json_of(["cube", cli.CUBE_MATCH_ID, "--json"], capsys)
    # Match ID: 7-point match, player 1 (on roll) has 2, player 0 has 4, cube centred
    assert data["cube"] == {
        "value": 1,
        "owner": "centred",
        "match_length": 7,
        "score": [2, 4],
        "crawford": False,
        "jacoby": False,
        "beavers": False,
    }
    assert all(0.0 <= v <= 1.0 for v in data["mwc"].values())
    status, out, _ = run_main(["cube", cli.MATCH_GNUBG_ID], capsys)
    assert status == 0 and "X cannot double: O owns the cube." in out


# --------------------------------------------------------------------------- rollout


def test_rollout_is_reproducible_and_reports_intervals(capsys):
    argv = ["rollout", START_ID, "--games", "36", "--no-luck", "--json"]
    first = json_of([*argv, "--seed", "3"], capsys)
    again = json_of([*argv, "--seed", "3"], capsys)
    other = json_of([*argv, "--seed", "4"], capsys)
    assert first["probabilities"] == again["probabilities"] and first["equity"] == again["equity"]
    assert first["probabilities"] != other["probabilities"]
    assert first["games"] == 36 and not first["variance_reduction"] and first["cubeful"] is None
    # without luck adjustment each probability is a mean of 0/1 results: a multiple of 1/36
    for value in first["probabilities"].values():
        assert value * 36 == pytest.approx(round(value * 36), abs=1e-4)  # JSON keeps 6 decimals
    assert first["equity_ci95"] > 0


def test_cubeful_rollout_reports_the_cubeful_equity(capsys):
    data = json_of(["rollout", FIVE_POINT_XGID, "--games", "36", "--cubeful", "--json"], capsys)
    assert data["cubeful"] is not None and data["cubeful_ci95"] > 0
    assert data["cubeful_unit"] == "points per unit cube"
    status, out, _ = run_main(["rollout", START_ID, "--games", "36", "--no-luck"], capsys)
    assert "95% CI" in out and "36 games" in out


def test_a_one_game_rollout_reports_no_interval_instead_of_a_traceback(capsys):
    """A 95% CI needs >= 2 games: null in JSON, n/a in text (before: NaN, a traceback from json.dumps)."""
    data = json_of(["rollout", START_ID, "--games", "1", "--json"], capsys)
    assert data["games"] == 1 and data["probabilities_ci95"] is None and data["equity_ci95"] is None
    assert "at least 2 games" in data["ci95_note"]
    status, out, err = run_main(["rollout", START_ID, "--games", "1"], capsys)
    assert status == 0 and "nan" not in out and err == ""
    assert re.search(r"95% CI\s+(n/a\s+){6}\(a confidence interval needs at least 2 games\)", out), out
    data = json_of(["rollout", FIVE_POINT_XGID, "--games", "1", "--cubeful", "--json"], capsys)
    assert data["cubeful"] is not None and data["cubeful_ci95"] is None
    status, out, _ = run_main(["rollout", FIVE_POINT_XGID, "--games", "1", "--cubeful"], capsys)
    assert status == 0 and "± n/a (points per unit of the starting cube)" in out


# --------------------------------------------------------------------------- analyze


def test_analyze_json_and_text(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    data = json_of(["analyze", "tests/data/match_3pt.mat", "--json", "--no-progress"], capsys)
    assert data["match_length"] == 3 and data["players"] == ["alice", "bob"] and data["ply"] == 0
    assert data["thresholds"] == {"doubtful": 0.03, "bad": 0.06, "very_bad": 0.12}
    kinds = {d["kind"] for d in data["decisions"]}
    assert kinds == {"checker", "double", "take", "pass", "no_double"}
    assert all(d["loss"] >= 0 and d["loss_mwc"] is not None for d in data["decisions"])
    status, out, _ = run_main(
        ["analyze", "tests/data/match_3pt.mat", "--thresholds", "0.04,0.08,0.16", "--errors-only"], capsys
    )
    assert status == 0 and "?! doubtful > 0.040" in out and "overall error rate" in out


def test_analyze_reads_a_latin_1_match_record(capsys, tmp_path):
    """Older exports are Latin-1 (formats.mat.decode_mat falls back to it): the names come through intact."""
    text = (REPO / "tests/data/match_3pt.mat").read_text().replace("alice", "M\u00fcller")
    path = tmp_path / "latin1.mat"
    path.write_bytes(text.encode("latin-1"))
    data = json_of(["analyze", str(path), "--json", "--no-progress"], capsys)
    assert data["players"] == ["M\u00fcller", "bob"]


def test_analyze_errors_only_applies_to_json(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    full = json_of(["analyze", "tests/data/match_3pt.mat", "--json"], capsys)
    only = json_of(["analyze", "tests/data/match_3pt.mat", "--json", "--errors-only"], capsys)
    marked = [d for d in full["decisions"] if d["skill"]]
    assert 0 < len(only["decisions"]) == len(marked) < len(full["decisions"])
    assert only["decisions"] == marked and only["errors_only"] is True
    assert only["stats"] == full["stats"]  # the totals stay complete


def test_analyze_shows_a_progress_bar_on_stderr_when_asked(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    with open("tests/data/match_3pt.mat") as f:
        total = count_records(read_mat(f.read()))
    status, out, err = run_main(["analyze", "tests/data/match_3pt.mat", "--progress"], capsys)
    assert status == 0 and "overall error rate" in out
    assert "analysing" in err and f"{total}/{total}" in err and "100%" in err  # tqdm's final state
    status, _, err = run_main(["analyze", "tests/data/match_3pt.mat", "--no-progress"], capsys)
    assert status == 0 and err == ""
    # by default only on a terminal: capsys's stderr is none
    status, _, err = run_main(["analyze", "tests/data/match_3pt.mat"], capsys)
    assert status == 0 and err == ""


def test_bar_size_falls_back_to_80_columns_on_a_terminal_without_a_size():
    # a pty that reports 0 x 0 (script, some CI runners) made tqdm draw an empty bar
    class ZeroTerminal:
        def fileno(self):
            raise OSError("no size")

    assert cli._bar_size(ZeroTerminal()) == {"ncols": 80, "nrows": 24}


def test_eval_help_says_what_a_too_deep_ply_does(capsys):
    status, out, _ = run_main(["eval", "--help"], capsys)
    assert status == 0 and "A --ply beyond 2 is an error" in " ".join(out.split())


# --------------------------------------------------------------------------- show


def test_show_mentions_a_resignation_offer():
    state = MatchState(
        cube_value=2, cube_owner=0, player_on_roll=1, turn=0, resignation=Resignation.GAMMON,
        match_length=5, score=(1, 2),
    )  # fmt: skip
    lines = cli.describe_state(state)
    # the Match ID's resigner is its player on roll (X): a gammon at cube 2 is 4 points
    assert "X offers to resign a gammon (4 points at cube 2); O must accept or reject" in lines


def test_show_prints_the_resignation_of_a_match_id(capsys):
    state = MatchState(player_on_roll=1, turn=0, resignation=Resignation.SINGLE, match_length=5, score=(1, 2))
    status, out, _ = run_main(["show", gnubg_id(starting_board(), state)], capsys)
    assert status == 0 and "X offers to resign a single game (1 point at cube 1)" in out


# --------------------------------------------------------------------------- serve


def test_serve_on_a_busy_port_is_one_error_line_and_status_2(capsys):
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        for argv in (["serve", "--port", str(port)], ["serve", "--external", str(port)]):
            status, out, err = run_main(argv, capsys)
            assert status == 2 and out == ""
            assert (
                err.strip() == f"nard serve: error: cannot listen on 127.0.0.1:{port}: Address already in use"
            )
    finally:
        taken.close()
    status, _, err = run_main(["serve", "--host", "256.1.1.1"], capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("nard serve: error: cannot listen on 256.1.1.1:8080: ")


# --------------------------------------------------------------------------- play


class Script:
    """A scripted player: answers prompts from a list, then plays the first legal play of each roll."""

    def __init__(self, lines=(), cube_answer: str | None = None) -> None:
        self.lines = list(lines)
        self.output: list[str] = []
        self.cube_answer = cube_answer
        self.prompts: list[str] = []

    def write(self, text: str) -> None:
        self.output.append(text)

    def text(self) -> str:
        return "\n".join(self.output)

    def read(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.lines:
            line = self.lines.pop(0)
            if isinstance(line, BaseException):
                raise line
            return line
        if prompt.startswith("Your move"):
            pid = re.findall(r"Position ID: (\S+)", self.text())[-1]
            dice = tuple(int(d) for d in re.search(r"\((\d)-(\d)\)", prompt).groups())
            board = board_from_position_id(pid)
            return play_notation(board, legal_plays(board, dice)[0], dice)
        if prompt.startswith(("Take or pass", "Roll or double")) and self.cube_answer:
            return self.cube_answer
        if prompt.startswith("Play another game"):
            return "n"
        raise EOFError


def test_an_illegal_play_is_refused_with_the_reason_then_quit(capsys):
    script = Script(["24/18 13/10", "hint", "quit"])
    result = play_session(_agent(0), np.random.default_rng(7), script.read, script.write, first="human")
    text = script.text()
    assert result.ended == "quit" and result.games == 0
    # seed 7 opens with 4-2 for you: 13/10 moves 3 pips, which neither die gives (parse_play's reason)
    assert "You play first with 4-2" in text
    assert "Not legal: 13/10: 13/10 moves 3 pips, but with 4-2 one checker moves 2, 4, 6 pips" in text
    assert "1. 8/4 6/4" in text  # hint: the engine's best opening 4-2 makes the 4-point
    assert "Pip count  X: 167  O: 167" in text and text.rstrip().endswith("Bye.")


@pytest.mark.parametrize("ending, reason", [(EOFError(), "eof"), (KeyboardInterrupt(), "interrupt")])
def test_end_of_input_and_ctrl_c_end_the_session_cleanly(ending, reason):
    script = Script([ending])
    result = play_session(_agent(0), np.random.default_rng(7), script.read, script.write, first="human")
    assert result.ended == reason and result.points == (0, 0)


def test_a_whole_game_through_the_text_interface():
    script = Script()
    result = play_session(
        _agent(0), np.random.default_rng(11), script.read, script.write, first="roll", max_games=1
    )
    text = script.text()
    assert result.ended == "done" and result.games == 1
    won = max(result.points)
    assert min(result.points) == 0 and won in (1, 2, 3)  # RULES.md 6: single, gammon, backgammon at cube 1
    assert re.search(r"(You win|nard wins) (a single game|a gammon|a backgammon): \d points?\.", text)
    assert f"Session: you {result.points[HUMAN]}, nard {result.points[ENGINE]} after 1 game." in text
    engine_moves = re.findall(r"nard rolls (\d)-(\d) and (?:plays (.+)|cannot move)\.", text)
    your_moves = [p for p in script.prompts if p.startswith("Your move")]
    assert engine_moves and your_moves


def test_the_engine_doubles_a_won_race_and_a_pass_loses_the_cube_value():
    engine_view = RACE_FAR_AHEAD  # the engine is on roll in this board
    script = Script(cube_answer="p")
    result = play_session(
        _agent(0), np.random.default_rng(1), script.read, script.write,
        first="engine", cube=True, start=engine_view, max_games=1,
    )  # fmt: skip
    assert "nard doubles to 2." in script.text()
    assert result.points == (0, 1) and result.games == 1


def test_the_engine_passes_your_double_in_its_lost_race_and_takes_at_the_start():
    script = Script(cube_answer="d")
    result = play_session(
        _agent(0), np.random.default_rng(1), script.read, script.write,
        first="human", cube=True, start=RACE_FAR_AHEAD, max_games=1,
    )  # fmt: skip
    assert "nard passes." in script.text() and result.points == (1, 0)
    script = Script(["d"])  # double before the first roll from the starting position, then scripted plays
    play_session(
        _agent(0), np.random.default_rng(1), script.read, script.write,
        first="human", cube=True, start=starting_board(), max_games=1,
    )  # fmt: skip
    # the start is worth about 0 for either side: far below any take point, so the engine takes
    assert "nard takes. The cube is on 2, owned by nard." in script.text()


def test_play_session_refuses_a_start_where_neither_side_can_ever_move():
    """Issue 15: from 27YBAHDbtgEAcA the session printed "cannot move" for both sides forever; now the start
    board is refused before any output, with validate_board's reason."""
    dead = np.array([-3] + [2] * 6 + [0] * 12 + [-2] * 6 + [3], dtype=np.int8)
    script = Script(["quit"])
    with pytest.raises(ValueError, match="neither side can ever move"):
        play_session(_agent(0), np.random.default_rng(1), script.read, script.write, start=dead, max_games=1)
    assert script.output == []


def test_nard_play_exits_0_on_quit_and_130_on_ctrl_c(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    status, out, _ = run_main(["play", "--seed", "7", "--first", "human"], capsys)
    assert status == 0 and "Seed 7" in out and "Bye." in out

    def interrupted(prompt=""):
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupted)
    status, out, _ = run_main(["play", "--seed", "7", "--first", "human"], capsys)
    assert status == 130 and "Bye." in out


#: The starting position, X on roll with 5-2 and a 2-cube X owns (XGID cube field 1 = 2^1, position 1 = X).
START_52_CUBE_2_X = "XGID=-b----E-C---eE---c-e----B-:1:1:1:52:0:0:0:0:10"


def test_play_from_an_id_keeps_its_cube_and_dice(capsys, monkeypatch):
    """Before the fix the game began with "Cube: 1, centred" and a fresh roll."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    status, out, _ = run_main(["play", "--position", START_52_CUBE_2_X, "--cube", "--seed", "1"], capsys)
    assert status == 0
    assert "You are on roll with 5-2." in out and "Cube: 2, owned by you" in out
    assert "Cube: 1, centred" not in out and "Roll or double" not in out  # rolled already: no cube decision
    # the engine on roll (--first engine) owns the same cube: the ID's owner is its side on roll
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    status, out, _ = run_main(
        ["play", "--position", START_52_CUBE_2_X, "--cube", "--seed", "1", "--first", "engine"], capsys
    )
    assert re.search(r"nard is on roll with 5-2\.\nnard rolls 5-2 and plays", out) and "owned by nard" in out


def test_play_session_start_cube_counts_for_the_points():
    # the engine doubles its won race (see below) and you pass: with a 4-cube it wins 4 points
    script = Script(cube_answer="p")
    result = play_session(
        _agent(0), np.random.default_rng(1), script.read, script.write,
        first="engine", cube=True, start=RACE_FAR_AHEAD, max_games=1,
        start_cube=CubeState(value=4, owner="on_roll"),
    )  # fmt: skip
    assert "nard doubles to 8." in script.text() and result.points == (0, 4)
    with pytest.raises(ValueError, match="need a start position"):
        play_session(_agent(0), np.random.default_rng(0), Script().read, Script().write, start_dice=(5, 2))
    with pytest.raises(ValueError, match="money"):
        play_session(
            _agent(0), np.random.default_rng(0), Script().read, Script().write,
            start=starting_board(), start_cube=CubeState.for_match(5, (0, 0)),
        )  # fmt: skip


def test_hint_at_the_roll_or_double_prompt_gives_the_cube_advice():
    from nard_ai.cube import cube_decision
    from nard_ai.reports.analysis import cube_action_text

    script = Script(["hint", "quit"])
    play_session(
        _agent(0), np.random.default_rng(1), script.read, script.write,
        first="human", cube=True, start=starting_board(),
    )  # fmt: skip
    d = cube_decision(starting_board(), CubeState(), agent=_agent(0))
    assert f"Hint: {cube_action_text(d)}. Your cubeful equity: no double {d.no_double:+.3f}" in script.text()
    assert "type r to roll" not in script.text()  # before the fix: "'hint': type r to roll or d to double"


def test_hint_at_the_take_or_pass_prompt_gives_the_take_advice():
    from nard_ai.cube import cube_decision

    script = Script(["hint", "p"])
    play_session(
        _agent(0), np.random.default_rng(1), script.read, script.write,
        first="engine", cube=True, start=RACE_FAR_AHEAD, max_games=1,
    )  # fmt: skip
    d = cube_decision(RACE_FAR_AHEAD, CubeState(), agent=_agent(0))
    advice = "take" if d.double_take <= d.double_pass else "pass"
    assert advice == "pass"  # a 95% race: far past the take point
    assert f"Hint: pass. Your cubeful equity: take {-d.double_take:+.3f}, pass -1.000" in script.text()


def test_play_rejects_a_finished_start_position():
    finished = pos(opp={6: 15})
    assert game_result(finished) != 0
    with pytest.raises(ValueError, match="not yet over"):
        play_session(_agent(0), np.random.default_rng(0), Script().read, Script().write, start=finished)
    with pytest.raises(ValueError, match="first"):
        play_session(_agent(0), np.random.default_rng(0), Script().read, Script().write, first="nobody")


def test_the_board_is_always_drawn_from_your_side():
    # after the engine's opening play it is your turn: the drawn Position ID is the board from your view,
    # i.e. the engine's afterstate turned around (swap_sides)
    script = Script(["quit"])
    play_session(_agent(0), np.random.default_rng(3), script.read, script.write, first="engine")
    text = script.text()
    played = re.search(r"nard plays first with (\d)-(\d)", text)
    assert played, text
    pid = re.findall(r"Position ID: (\S+)", text)[-1]
    dice = (int(played.group(1)), int(played.group(2)))
    candidates = {position_id(swap_sides(after)) for after in legal_plays(starting_board(), dice)}
    assert pid in candidates
    assert to_xgid(board_from_position_id(pid))  # a valid board


def test_analyze_never_cuts_player_names(capsys, tmp_path):
    """Two players sharing a 16-character prefix stay told apart in the text report."""
    text = (REPO / "tests/data/match_3pt.mat").read_text()
    path = tmp_path / "long.mat"
    path.write_text(text.replace("alice", "Alexander Smith-Jones").replace("bob", "Alexander Smith-Brown"))
    status, out, _ = run_main(["analyze", str(path), "--errors-only", "--no-progress"], capsys)
    assert status == 0
    assert "Alexander Smith-Jones  Alexander Smith-Brown" in out
    assert "  3) line 15 Alexander Smith-Jones    Double" in out  # the record's move 3), on its line 15


def test_show_says_why_a_state_has_no_xgid(capsys):
    # cCEAAAAAAAAE: a money game with a single-game resignation on offer (match_id(MatchState(
    # game_state=PLAYING, resignation=SINGLE, turn=0, player_on_roll=1))); an XGID has no field for
    # a resignation, so show names the reason instead of dropping the line silently (review of issue 15)
    status, out, err = run_main(["show", "4HPwATDgc/ABMA:cCEAAAAAAAAE"], capsys)
    assert status == 0, err
    assert " XGID: none (an XGID cannot express a resignation on offer (SINGLE))" in out.splitlines()


def test_an_error_quoting_a_huge_argument_is_cut_short(capsys):
    # a 100,000-character ID used to come back twice in the error line (200 KB, found in review);
    # the message keeps its first and last 300 characters (cli.MAX_ERROR_CHARS = 600)
    status, out, err = run_main(["hint", "A" * 100_000, "--dice", "31"], capsys)
    assert status == 2 and err.startswith("nard hint: error: ")
    assert len(err) < 800 and "characters]..." in err


def test_play_from_an_xgid_with_jacoby_and_beavers_says_the_terminal_game_does_not_use_them(
    capsys, monkeypatch
):
    """An XGID's money rule field 3 is the Jacoby rule and beavers (XG's format, as formats.xgid reads it); the
    terminal game has no beavers, so it says so instead of dropping them silently (a reviewer's finding). The
    Jacoby rule it plays with --cube, as nard cube reads it from the ID; without the cube it says that too."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    xgid = START_52_CUBE_2_X.replace(":52:0:0:0:0:10", ":52:0:0:3:0:10")
    status, out, err = run_main(["play", "--position", xgid, "--cube", "--seed", "1"], capsys)
    assert status == 0
    assert err == "nard play: note: the terminal game plays without beavers; the ID's setting is not used\n"
    assert out.splitlines()[1].startswith("Money game with the doubling cube, the Jacoby rule")
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    status, out, err = run_main(["play", "--position", xgid, "--seed", "1"], capsys)
    assert status == 0
    assert err == (
        "nard play: note: the terminal game plays without the Jacoby rule and beavers; the ID's setting is "
        "not used (the Jacoby rule plays only with --cube)\n"
    )


# --------------------------------------------------------------------------- an ID's game state and roll


@pytest.mark.parametrize(
    "position, state_line",
    [
        (OVER_ID, "Game state OVER: the game has ended; no one is on roll"),
        (DROPPED_ID, "Game state DROPPED: the game ended by a passed double; no one is on roll"),
        (RESIGNED_ID, "Game state RESIGNED: the game ended by a resignation; no one is on roll"),
    ],
)
def test_show_prints_a_finished_games_state_instead_of_a_turn(position, state_line, capsys):
    # gnubg's game state (formats/match_id.py, GameStatus): over, resigned or dropped is no game in play,
    # so no one is on roll and no resignation is on offer any more
    status, out, err = run_main(["show", position], capsys)
    assert status == 0, err
    lines = [line.strip() for line in out.splitlines()]
    assert state_line in lines
    assert not any(line.startswith(("X is on roll", "X has rolled", "X offers to resign")) for line in lines)


def test_show_of_a_resignation_on_offer_does_not_say_x_is_about_to_roll(capsys):
    # the Match ID's turn is O's (it must accept or reject: formats/match_id.py), as with a double on offer
    status, out, _ = run_main(["show", RESIGN_OFFER_ID], capsys)
    assert (
        status == 0 and "X offers to resign a single game (1 point at cube 1); O must accept or reject" in out
    )
    assert "X is on roll" not in out


@pytest.mark.parametrize(
    "xgid", [DOUBLED_XGID, to_xgid(RACE_FAR_AHEAD, MatchState(double_offered=True, turn=0))]
)
def test_cube_answers_a_pending_double_as_ubgi_does(xgid, capsys):
    """A double awaiting its answer is nard cube's question (its take/pass equities); the answer line
    says what UBGI's ``go cube`` answers there (``bestcube take|pass``, nard_ai/interfaces/ubgi.py)."""
    from nard_ai.interfaces.ubgi import UbgiEngine

    ubgi = UbgiEngine()  # engine.ply 1 = nard's 0-ply, nard cube's default
    ubgi.handle(f"position xgid {xgid}")
    (bestcube,) = ubgi.handle("go cube")
    expected = bestcube.removeprefix("bestcube ")
    assert expected in ("take", "pass")
    data = json_of(["cube", xgid, "--json"], capsys)
    assert data["answer_to_double"] == expected
    status, out, err = run_main(["cube", xgid], capsys)
    assert status == 0 and err == ""
    assert out.splitlines()[-1] == f"X has doubled to 2: O's proper answer is {expected}"
    # no double pending: no answer
    assert json_of(["cube", FIVE_POINT_XGID, "--json"], capsys)["answer_to_double"] is None


# the 4- and 5-points made, X on roll before rolling / X having rolled 6-4 (money)
ROLLED_64 = "XGID=-b--BBC-B---eD---c-e----B-:0:0:1:64:0:0:0:0:10"


@pytest.mark.parametrize(
    "argv, why",
    [
        (["eval", "--ply", "0", "--json"], "eval values the position before X rolls"),
        (["cube", "--json"], "a cube decision is made before rolling"),
        (["rollout", "--games", "4", "--json"], "a rollout starts before X rolls"),
    ],
)
def test_eval_cube_and_rollout_say_the_ids_roll_is_not_used(argv, why, capsys):
    """eval, cube and rollout answer for X before its roll (as HTTP /eval and /cube, and UBGI's go cube:
    "a cube decision before the roll, so it does not use the dice"); an ID's roll is named as unused on
    stderr, and the answer is the one of the same ID before the roll."""
    status, out, err = run_main([argv[0], ROLLED_64, *argv[1:]], capsys)
    assert status == 0
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"nard {argv[0]}: note: the ID's roll 6-4 is not used: {why}"
    )
    rolled = json.loads(out)
    status, out, err = run_main([argv[0], FIVE_POINT_XGID, *argv[1:]], capsys)
    assert status == 0 and "note" not in err
    before = json.loads(out)
    for data in (rolled, before):
        data.pop("seconds", None)
        for row in data.get("evaluations", []):
            row.pop("seconds")
    assert rolled == before


def test_nard_cube_answers_a_pending_double_with_beaver_or_refuses_one_the_cube_does_not_allow(
    capsys, monkeypatch
):
    """A new user's report (2026-12-07). The XGID's fields: cube 0 (1), D (X has doubled), score 0-0, match
    length 0 with Jacoby 0 and beavers 2 (XGID's money field: 2 = beavers). nard cube found "No double,
    beaver" there, and its answer line must say beaver, not take; a Match ID at 4-0 in a 5-point match
    with X's double offered (the cube dead for X) has no take or pass to give: refused."""
    monkeypatch.chdir(REPO)
    status, out, _ = run_main(["cube", "XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:2:0:10"], capsys)
    assert status == 0 and "beaver" in out and out.strip().endswith("O's proper answer is beaver")
    status, out, err = run_main(["cube", "4HPwATDgc/ABMA:cBGgACAAIAAE"], capsys)
    assert status == 2 and out == "" and "the ID says X has doubled, but X cannot double here" in err
