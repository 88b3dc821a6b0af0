"""evaluate.py's position analysis (nard_ai.reports.position) and error rates (nard_ai.reports.error_rate).

Reference values: gnubg's own 0-ply cube analysis of the sample positions
(quoted in ``tests/data/positions.txt``), exact arithmetic for the last roll
of a race, and the definition of the error rate (an agent judged by itself
loses nothing). The command line is run as a subprocess where the exit
status and streams matter; the library functions are called directly
elsewhere.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import load_evaluate_script, run_at_once

import nard_ai as na
from nard_ai.agents import agent_from_spec
from nard_ai.core.board import pos
from nard_ai.cube import CENTRED, OPPONENT, CubeState
from nard_ai.gnubg.agent import gnubg_available
from nard_ai.interfaces.cli import parse_dataclass_args
from nard_ai.model.network import default_checkpoint_path
from nard_ai.reports.error_rate import error_rate, format_cases, parse_case, read_cases, sample_cases
from nard_ai.reports.position import (
    analysis_agent,
    cube_state_from_match,
    parse_position,
    read_positions,
    run_positions,
)

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "tests" / "data" / "positions.txt"
START_ID = "4HPwATDgc/ABMA"
#: gnubg 0-ply: Double, take, ND +0.661, D/T +0.727 (see tests/data/positions.txt)
DOUBLE_TAKE_ID = "bDeDISBsO8jIAA:cAkAAAAAAAAE"
#: the last roll of a race: the side on roll wins 25 of 36 rolls, the opponent is off next turn
LAST_ROLL_ID = "AQAAKAAAAAAAAA:cAkAAAAAAAAE"

needs_network = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)
needs_gnubg = pytest.mark.skipif(
    not gnubg_available(), reason="the optional gnubg package is not installed (pip install gnubg)"
)


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), *argv, "--no-progress"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _run_kwargs(argv: list[str], cwd: Path) -> dict:
    """The ``subprocess.run`` arguments of :func:`run` (for ``conftest.run_at_once``)."""
    return {"args": [sys.executable, str(REPO / "evaluate.py"), *argv, "--no-progress"], "cwd": cwd}


def report(path: Path, **kwargs) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_positions(str(path), out=out, err=err, **kwargs)
    return status, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- position input


def test_position_ids_read_as_board_and_cube_state_of_the_side_on_roll():
    board, state = parse_position("XGID=-a-B-AC-C-a-eD---c-e----B-:1:1:-1:00:0:2:0:5:10")
    cube = cube_state_from_match(state)
    # O (gnubg's player 0) is on roll with 2 points of 5; X owns the cube at 2
    assert cube == CubeState(value=2, owner=OPPONENT, match_length=5, score=(2, 0))
    board, state = parse_position(START_ID)
    assert state is None and cube_state_from_match(state) == CubeState()
    assert np.array_equal(board, na.starting_board())
    _, state = parse_position("YdfBAyBsbuADQA:cAkAAAAAAAAA")  # Match ID bit 66 clear: Jacoby on
    assert cube_state_from_match(state) == CubeState(jacoby=True)


def test_bad_position_lines_are_named_by_line_number_and_the_rest_is_read():
    text = (
        "# header\n\n4HPwATDgc/ABMA:cAkAAAAAAAAA\nnot-an-id\n4HPwATDgc/ABMA:cAkAAAAAAAAA  # again\nXGID=bad\n"
    )
    positions, errors = read_positions(text)
    assert [p.line for p in positions] == [3, 5]
    assert [line for line, _ in errors] == [4, 6]
    assert "not-an-id" in errors[0][1] and "Position ID" in errors[0][1]
    assert "XGID" in errors[1][1] or "ID" in errors[1][1]
    _, errors = read_positions(na.position_id(pos(me={}, opp={6: 2})) + "\n")
    assert errors and "over" in errors[0][1]


def test_position_lines_with_no_turn_to_analyse_are_bad_lines_and_a_pending_double_is_analysed():
    """Match IDs of the starting position: game over (cAoAAAAAAAAE), a resignation awaiting its answer
    (cCEAAAAAAAAE): bad lines in nard cube's words (formats.match_id.not_playing; a new user's report,
    2026-12-07, found them analysed). A double awaiting its answer is the doubler's position (module docstring)."""
    text = f"{START_ID}:cAoAAAAAAAAE\n{START_ID}:cCEAAAAAAAAE\nXGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:0:0:10\n"
    positions, errors = read_positions(text)
    assert [p.line for p in positions] == [3]
    assert [line for line, _ in errors] == [1, 2]
    assert "the ID's game state is over, not playing" in errors[0][1]
    assert "a resignation awaits its answer" in errors[1][1]


def test_pubeval_cannot_analyse_positions_and_the_ply_is_given_once():
    with pytest.raises(ValueError, match="no real probabilities"):
        analysis_agent("pubeval")
    with pytest.raises(ValueError, match="contradicts"):
        analysis_agent("default:1", 0)


# --------------------------------------------------------------------------- --positions


@needs_network
def test_the_starting_position_is_no_double_at_money(tmp_path):
    """Every sensible evaluator says no double at the start (gnubg 0-ply: ND +0.093)."""
    path = tmp_path / "start.txt"
    path.write_text(f"{START_ID}:cAkAAAAAAAAA\n")
    status, out, err = report(path, as_json=True)
    assert status == 0, err
    (item,) = json.loads(out)["positions"]
    d = item["decision"]
    assert item["cube"]["owner"] == CENTRED and item["cube"]["match_length"] == 0
    assert d["action"] == "no_double" and d["cube_available"]
    assert abs(d["no_double"] - 0.093) < 0.1 and d["double_pass"] == 1.0 and d["double_take"] < d["no_double"]
    assert 0.45 < d["probabilities"][0] < 0.55


@needs_gnubg
def test_a_known_double_take_position(tmp_path):
    """gnubg's 0-ply analysis: Double, take, ND +0.661, D/T +0.727, D/P +1.

    Reported with gnubg's own 0-ply probabilities (``gnubg:0``), so what is checked is the report and our
    cube model, which must land on gnubg's numbers (the model is compared with gnubg's over many positions
    in test_cube.py). Our network's view of this borderline position moves with training (the shipped
    one says no double by 0.004), so it is not the referee here.
    """
    path = tmp_path / "dt.txt"
    path.write_text(DOUBLE_TAKE_ID + "\n")
    status, out, err = report(path, agent_spec="gnubg", ply=0)
    assert status == 0, err
    assert "cube: Double, take" in out
    status, out, err = report(path, agent_spec="gnubg", ply=0, as_json=True)
    d = json.loads(out)["positions"][0]["decision"]
    assert d["action"] == "double_take"
    assert d["no_double"] == pytest.approx(0.661, abs=0.01) and d["double_take"] == pytest.approx(
        0.727, abs=0.01
    )
    assert d["no_double"] < d["double_take"] < d["double_pass"] == 1.0


@needs_gnubg
def test_the_last_roll_of_a_race_is_double_take_with_gnubg_probabilities(tmp_path):
    """p = 25/36 (gnubg's bear-off database at 0-ply): the opponent's 30.6% is above any take point
    near 25%, and doubling gains: double, take."""
    path = tmp_path / "last.txt"
    path.write_text(LAST_ROLL_ID + "\n")
    status, out, err = report(path, agent_spec="gnubg", ply=0, as_json=True)
    assert status == 0, err
    d = json.loads(out)["positions"][0]["decision"]
    assert d["action"] == "double_take" and d["probabilities"][0] == pytest.approx(25 / 36, abs=2e-5)
    assert d["cubeless_equity"] == pytest.approx(2 * 25 / 36 - 1, abs=4e-5)


@needs_network
def test_json_output_of_the_sample_parses_with_one_object_per_position(tmp_path):
    r = run(["--positions", str(SAMPLE), "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    ids = [
        line.split("#")[0].strip() for line in SAMPLE.read_text().splitlines() if line.split("#")[0].strip()
    ]
    assert [p["id"] for p in data["positions"]] == ids and data["errors"] == [] and data["comparison"] is None
    by_id = {p["id"]: p for p in data["positions"]}
    crawford = by_id["5pwdADC4HRcBAw:8AmgAEAAEAAE"]
    assert crawford["cube"]["crawford"] and not crawford["decision"]["cube_available"]
    assert crawford["decision"]["double_take"] is None  # NaN is written as null
    match = by_id["mGfDADLYHeEBAw:cAngABAAGAAE"]
    assert match["cube"]["score"] == [3, 1] and 0 < match["decision"]["mwc"]["no_double"] < 1
    # both spellings of the starting position give the same analysis
    assert (
        by_id["4HPwATDgc/ABMA:MAEAAAAAAAAE"]["decision"]
        == by_id["XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"]["decision"]
    )


@needs_network
def test_a_rollout_is_reported_with_its_cube_decision(tmp_path):
    """The rollout's means, their 95% intervals, and the cube decision made from those means."""
    path = tmp_path / "start.txt"
    path.write_text(START_ID + "\n")
    status, out, err = report(path, rollout_games=72, as_json=True, seed=3)
    assert status == 0, err
    item = json.loads(out)["positions"][0]
    rolled, decided = item["rollout"], item["rollout_decision"]
    assert rolled["games"] == 72 and rolled["equity_ci95"] > 0
    assert decided["probabilities"] == pytest.approx(np.clip(rolled["probabilities"], 0, 1), abs=1e-9)
    assert decided["cubeless_equity"] == pytest.approx(rolled["equity"], abs=1e-9)
    status, out, err = report(path, rollout_games=72, seed=3)
    assert "rollout (72 games" in out and "rollout cube:" in out


@needs_network
@needs_gnubg
def test_compare_gnubg_runs_on_the_sample(tmp_path):
    """At 0-ply gnubg and the shipped network agree on the opening (no double) and on the
    double/take of bDeDISBsO8jIAA; the summary counts the agreements."""
    # the JSON and the text run are independent: at once (conftest.run_at_once)
    r, text = run_at_once(
        [
            _run_kwargs(["--positions", str(SAMPLE), "--compare", "gnubg", "--json"], tmp_path),
            _run_kwargs(["--positions", str(SAMPLE), "--compare", "gnubg"], tmp_path),
        ]
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    comparison = data["comparison"]
    assert comparison["positions"] == len(data["positions"]) == 11 and comparison["ply"] == 0
    assert comparison["agree"] == sum(
        p["decision"]["action"] == p["gnubg"]["action"] for p in data["positions"]
    )
    assert 0 < comparison["mean_abs_cubeful"] < 0.5
    by_id = {p["id"]: p for p in data["positions"]}
    assert by_id[DOUBLE_TAKE_ID]["gnubg"]["action"] == "double_take"
    assert by_id["4HPwATDgc/ABMA:MAEAAAAAAAAE"]["gnubg"]["action"] == "no_double"
    assert by_id["2u4AADzubjMAAA:QQkAAAAAAAAE"]["gnubg"]["gnubg_action"] == ""  # the opponent owns the cube
    r = text
    assert r.returncode == 0 and "gnubg comparison at 0-ply: cube actions agree on" in r.stdout


@needs_gnubg
def test_compare_gnubg_with_gnubgs_own_probabilities_differs_only_by_the_cube_model(tmp_path):
    """With gnubg:0 as the agent both sides use the same 0-ply probabilities: the cubeless equities
    are equal (gnubg prints 5 decimals), and only the cube model can differ (Janowski's with gnubg's
    efficiencies here; gnubg's own, with exact bear-off databases, there)."""
    status, out, err = report(SAMPLE, agent_spec="gnubg", ply=0, compare="gnubg", as_json=True)
    assert status == 0, err
    comparison = json.loads(out)["comparison"]
    assert comparison["mean_abs_cubeless"] < 1e-4
    assert comparison["agree"] == comparison["positions"] == 11  # measured: 11 of 11
    assert comparison["mean_abs_cubeful"] < 0.05  # measured: 0.017


@needs_network
def test_bad_lines_give_an_error_naming_the_line_and_a_nonzero_status(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text(f"{START_ID}\n# comment\n4HPwATDgc/ABMA:zzzz\n{DOUBLE_TAKE_ID}\n")
    r = run(["--positions", str(path)], tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"{path}:3: ") and "Match ID" in line
    assert "line 1:" in r.stdout and "line 4:" in r.stdout  # the good lines are still analysed


def test_a_file_without_positions_or_missing_is_an_error(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("# nothing\n\n")
    status, _, err = report(path)
    assert status == 1 and "holds no position" in err
    status, _, err = report(tmp_path / "missing.txt")
    assert status == 2 and "cannot read" in err


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["--positions", "x.txt", "--compare", "xg"], "--compare"),
        (["--positions", "x.txt", "--ply", "3"], "--ply"),
        (["--positions", "x.txt", "--rollout", "-1"], "--rollout"),
        (["--positions", "x.txt", "--error-rate", "y.txt"], "--positions: not with --error-rate"),
        (["--make-cases", "c.txt", "--error-rate", "y.txt"], "--error-rate: not with --make-cases"),
        (["--make-cases", "c.txt", "--cases", "0"], "--cases"),
        (["--jacoby"], "--jacoby"),
        (["--match-length", "-3"], "--match-length"),
        # beyond evaluate.LIMITS: a traceback (an array of 10**20 games; 74.5 GiB for 10**10) and a
        # segmentation fault (100,000 torch threads) before these bounds
        (["--games", "99999999999999999999"], "--games: must be at most 10,000,000"),
        (["--games", "10000000001"], "--games: must be at most 10,000,000"),
        (["--threads", "100000"], "--threads: must be at most 256"),
        (["--batch", "1000000"], "--batch: must be at most 65,536"),
        (["--shard-games", "0"], "--shard-games: must be >= 1"),
        (["--seed", str(2**64)], "--seed: must be 0 .. 2**64 - 1"),
        # an option the run would ignore (a 0-ply match for --ply 2; text for --json) is refused
        (["--ply", "2"], "--ply: goes with --positions (a match's or --error-rate's agents take their ply"),
        (["--json"], "--json: goes with --positions or --error-rate, not with a match"),
        (["--referee", "gnubg:2"], "--referee: goes with --error-rate, not with a match"),
        (["--cases", "7"], "--cases: goes with --make-cases, not with a match"),
        (
            ["--positions", "x.txt", "--agent-b", "random"],
            "--agent-b: the opponent of a match, not with --positions",
        ),
        (["--positions", "x.txt", "--games", "10"], "--games: the games of a match, not with --positions"),
        (["--error-rate", "y.txt", "--cube"], "--cube: a match's option, not with --error-rate"),
        (["--make-cases", "c.txt", "--ply", "1"], "--ply: goes with --positions"),
        (
            ["--make-cases", "c.txt", "--batch", "8"],
            "--batch: games or cases in flight, for a match or --error-rate",
        ),
        (
            ["--positions", "x.txt", "--ray", "local"],
            "--ray: --positions without --rollout does not run on Ray",
        ),
    ],
)
def test_argument_errors_exit_2_with_one_line(capsys, monkeypatch, argv, flag):
    """Checked before anything runs (evaluate.Args.validate through parse_dataclass_args): the whole of
    stderr is one ``evaluate.py: error:`` line, without argparse's usage text (cli.OneLineErrorParser)."""
    script = load_evaluate_script(monkeypatch)
    with pytest.raises(SystemExit) as info:
        parse_dataclass_args(script.Args, argv)
    assert info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "error: argument " in lines[0] and flag in lines[0], lines


@needs_network
def test_the_match_mode_still_plays_duplicate_dice_games(tmp_path):
    r = run(["--agent-a", "random", "--agent-b", "pubeval", "--games", "20"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "random vs pubeval" in r.stdout and "ppg" in r.stdout and "20 games" in r.stdout


def test_money_play_with_the_cube_from_the_command_line(tmp_path):
    """--cube: pubeval never doubles and takes every double (cubeplay.PASSIVE_POLICY), so it takes and never passes."""
    r = run(["--agent-a", "pubeval", "--agent-b", "random", "--games", "8", "--cube"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pubeval vs random, money with the cube" in r.stdout and "over 8 games" in r.stdout
    assert "pubeval: doubles 0" in r.stdout


def test_matches_to_n_points_from_the_command_line(tmp_path):
    r = run(["--agent-a", "pubeval", "--agent-b", "random", "--games", "2", "--match-length", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "3-point matches" in r.stdout and "over 2 matches (1 duplicate pair)" in r.stdout


# --------------------------------------------------------------------------- case files


@pytest.mark.parametrize(
    "line, dice",
    [
        (f"{START_ID} 31", (3, 1)),
        (f"{START_ID} 1 3", (3, 1)),
        (f"{START_ID} 6-5", (6, 5)),
        (f"{START_ID}:cAkAAAAAAAAA 4,2", (4, 2)),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10", (5, 2)),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10 25", (5, 2)),
    ],
)
def test_case_lines_give_the_board_and_the_dice(line, dice):
    board, roll = parse_case(line)
    assert np.array_equal(board, na.starting_board()) and tuple(roll) == dice


@pytest.mark.parametrize(
    "line, message",
    [
        (START_ID, "no dice"),
        (f"{START_ID} 37", "dice"),
        (f"{START_ID} 3 1 2", "fields"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10 31", "differ"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:0:0:10", "double is pending"),
        ("nonsense 31", "Position ID"),
    ],
)
def test_bad_case_lines_say_what_is_wrong(line, message):
    with pytest.raises(ValueError, match=message):
        parse_case(line)


def test_read_cases_names_every_bad_line():
    text = f"# cases\n{START_ID} 31\n{START_ID} 77\n\n{START_ID}\n{START_ID} 64 # fine\n"
    with pytest.raises(ValueError) as info:
        read_cases(text)
    assert str(info.value).startswith("line 3: dice '77'") and "; line 5: no dice" in str(info.value)
    boards, dice, lines = read_cases(f"{START_ID} 31\n{START_ID} 64 # fine\n")
    assert lines.tolist() == [1, 2] and dice.tolist() == [[3, 1], [6, 4]]
    with pytest.raises(ValueError, match="no case"):
        read_cases("# only a comment\n")


def test_sampled_cases_round_trip_through_a_case_file():
    agent = agent_from_spec("random", seed=1)
    boards, dice = sample_cases(40, agent, seed=2)
    assert boards.shape == (40, 26) and dice.shape == (40, 2)
    assert all(len(na.legal_plays(b, d)) >= 2 for b, d in zip(boards, dice, strict=True))  # unforced only
    back, back_dice, _ = read_cases(format_cases(boards, dice, "sampled"))
    assert np.array_equal(back, boards) and np.array_equal(np.sort(back_dice, 1), np.sort(dice, 1))
    again, _ = sample_cases(40, agent_from_spec("random", seed=1), seed=2)
    assert np.array_equal(again, boards)  # seeded: the same cases again


class _Recording:
    """An agent that plays as ``inner`` and records the boards of each ``choose_plays`` call."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def choose_plays(self, boards, dice):
        self.calls.append(boards.copy())
        return self.inner.choose_plays(boards, dice)


def test_cases_from_games_against_an_opponent_give_each_agent_its_own_seat():
    """``sample_cases(..., opponent=B)``: agent A holds seat 0, B seat 1, and the games started open
    A, B, A, ... So with two games in flight, the first ply of game 0 is A's and of game 1 is B's
    (one board each, the starting position), and the two then take turns in each game."""
    a, b = _Recording(agent_from_spec("pubeval")), _Recording(agent_from_spec("random", seed=1))
    boards, dice = sample_cases(30, a, seed=7, batch=2, opponent=b)
    assert boards.shape == (30, 26) and dice.shape == (30, 2)
    start = na.starting_board()
    assert [len(c) for c in a.calls[:3]] == [1, 1, 1] and [len(c) for c in b.calls[:3]] == [1, 1, 1]
    assert np.array_equal(a.calls[0][0], start) and np.array_equal(b.calls[0][0], start)
    assert not np.array_equal(a.calls[1][0], start)  # A's second ply: game 1, after B's opening play
    again, again_dice = sample_cases(
        30, agent_from_spec("pubeval"), seed=7, batch=2, opponent=agent_from_spec("random", seed=1)
    )
    assert np.array_equal(again, boards) and np.array_equal(again_dice, dice)  # seeded


def test_an_agent_against_itself_as_opponent_samples_its_self_play_cases():
    """The seats change who is asked, not the dice or the sampling: an agent that is also its own
    opponent meets exactly the cases of its self-play (pubeval's choice of a board's play does not
    depend on the other boards of the call)."""
    agent = agent_from_spec("pubeval")
    alone = sample_cases(50, agent, seed=9, batch=8)
    paired = sample_cases(50, agent, seed=9, batch=8, opponent=agent)
    assert np.array_equal(alone[0], paired[0]) and np.array_equal(alone[1], paired[1])


# --------------------------------------------------------------------------- error rates


@needs_network
def test_an_agent_judged_by_itself_loses_exactly_nothing():
    """The referee's best play is the one the agent picks from the very same values."""
    agent = agent_from_spec("default:0")
    boards, dice = sample_cases(150, agent, seed=4)
    result = error_rate(agent, agent_from_spec("default:0"), boards, dice, batch=64)
    assert result.cases == 150 and result.millipoints_per_move == 0.0 and (result.lost == 0).all()


@needs_gnubg
def test_gnubg_judged_by_itself_loses_exactly_nothing():
    boards, dice = sample_cases(60, agent_from_spec("random", seed=1), seed=5)
    result = error_rate(agent_from_spec("gnubg:0"), agent_from_spec("gnubg:0"), boards, dice)
    assert result.millipoints_per_move == 0.0


@needs_network
def test_random_play_loses_equity_against_our_0_ply_referee():
    """A random play is rarely the best: over 100 unforced cases it must lose clearly more than
    nothing (measured: about 210 millipoints per move over 200 cases)."""
    referee = agent_from_spec("default:0")
    boards, dice = sample_cases(100, referee, seed=6)
    result = error_rate(agent_from_spec("random", seed=3), referee, boards, dice)
    assert result.millipoints_per_move > 50 and (result.lost >= 0).all()
    assert result.lost.max() >= 0.16 and result.counts()["very_bad"] >= 1
    assert result.millipoints_per_unforced_move == pytest.approx(result.millipoints_per_move)


def test_pubeval_cannot_referee():
    boards = na.starting_board()[None]
    with pytest.raises(ValueError, match="cannot referee"):
        error_rate(agent_from_spec("random"), agent_from_spec("pubeval"), boards, np.array([[3, 1]]))


@needs_network
def test_error_rate_and_make_cases_from_the_command_line(tmp_path):
    cases = tmp_path / "cases.txt"
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{START_ID} 31\n{START_ID} 9\n")
    # independent runs go at once (conftest.run_at_once): making the cases, the bad case file and (with the
    # progress bar on) the missing one; then the two runs on the cases made
    r, on_bad, missing = run_at_once(
        [
            _run_kwargs(["--make-cases", str(cases), "--cases", "30", "--agent-a", "random", "--seed", "1"], tmp_path),
            _run_kwargs(["--error-rate", str(bad)], tmp_path),
            {"args": [sys.executable, str(REPO / "evaluate.py"), "--error-rate", str(tmp_path / "missing.txt"),
                      "--progress"], "cwd": tmp_path},
        ]
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    boards, _, _ = read_cases(cases.read_text())
    assert len(boards) == 30
    r, rated = run_at_once(
        [
            _run_kwargs(["--make-cases", str(cases), "--cases", "30"], tmp_path),
            _run_kwargs(["--error-rate", str(cases), "--agent-a", "random", "--referee", "default:0", "--json"],
                        tmp_path),
        ]
    )  # fmt: skip
    assert r.returncode == 2 and "exists" in r.stderr  # never overwrites
    r = rated
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["cases"] == 30 and data["millipoints_per_move"] > 0 and data["referee"] == "nard-expert.pt:0"
    r = on_bad
    assert r.returncode == 2 and "line 2:" in r.stderr and "Traceback" not in r.stderr
    # with the progress bar on, an unreadable file is one error line: the bar starts with the first case
    # judged (it once printed an empty bar around the error)
    r = missing
    assert r.returncode == 2 and r.stderr.splitlines() == [
        f"evaluate.py: error: cannot read {tmp_path / 'missing.txt'}: [Errno 2] No such file or directory: "
        f"'{tmp_path / 'missing.txt'}'"
    ]


def test_ray_address_is_read_only_by_runs_with_shards(monkeypatch, tmp_path):
    """RAY_ADDRESS (Ray's own variable) names the cluster for the runs that have shards (matches,
    --error-rate, --positions --rollout); --make-cases and --positions alone do not read it (they
    once failed naming an --ray the user never gave)."""
    script = load_evaluate_script(monkeypatch)
    monkeypatch.setenv("RAY_ADDRESS", "nowhere:1")
    for argv, address in (
        (["--make-cases", "c.txt"], ""),
        (["--positions", "x.txt"], ""),
        (["--positions", "x.txt", "--rollout", "36"], "nowhere:1"),
        (["--error-rate", "y.txt"], "nowhere:1"),
        ([], "nowhere:1"),
    ):
        assert parse_dataclass_args(script.Args, argv).ray_address() == address, argv


def test_summaries_say_n_a_where_one_pair_or_case_gives_no_interval():
    """One duplicate pair, one case or no unforced case has no interval or mean: the text says so (it
    printed ``± nan`` and ``1 duplicate pairs``); JSON gives null (tests/test_evaluate_positions_extra.py)."""
    import numpy as np

    from nard_ai.play.results import ci95_text
    from nard_ai.reports.error_rate import ErrorRateResult

    assert ci95_text(float("nan"), 2) == "(no 95% CI from one duplicate pair) over 2 games (1 duplicate pair)"
    assert ci95_text(0.0123, 2000) == "± 0.012 (95% CI) over 2000 games (1000 duplicate pairs)"
    assert ci95_text(0.05, 4, "match", percent=True) == "± 5.0% (95% CI) over 4 matches (2 duplicate pairs)"
    # one case, forced (one legal play): no interval, no unforced mean
    one = ErrorRateResult(
        lost=np.zeros(1), best=np.zeros(1), chosen=np.zeros(1), plays=np.ones(1, np.int64),
        agent="a", referee="r", seconds=0.1,
    )  # fmt: skip
    lines = one.summary().splitlines()
    assert lines[:2] == [
        "a judged by r: 0.0 ± n/a millipoints per move (95% CI) over 1 case",
        "  per unforced move: n/a (0 unforced)",
    ]
    assert one.to_dict()["ci95"] is None and one.to_dict()["millipoints_per_unforced_move"] is None
