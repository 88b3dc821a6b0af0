"""``evaluate.py --positions``: a byte order mark, JSON when no line is good, cube errors, rollout intervals;
``evaluate.py --match-length`` outside the match equity table.

Sources: the UTF-8 byte order mark is ``EF BB BF`` (Unicode 15, section 23.8),
which Windows editors write at the start of a file; gnubg 1.07's 0-ply
analysis of ``bDeDISBsO8jIAA:cAkAAAAAAAAE`` (quoted in
``tests/data/positions.txt``): Double, take, ND +0.661, D/T +0.727, D/P
+1, so not doubling costs 0.066 and passing 0.273; :mod:`nard_ai.cube.decision`'s
Janowski model with efficiency ``x = 0``, where the cubeful equity of a
centred cube is the cubeless equity ``2w - 1 + wg + wb - lg - lb`` and the
double/take equity twice that (a dead cube); the Kazaross-XG2 match equity
table covers matches of 1..25 points (:data:`nard_ai.cube.met.MAX_AWAY`).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import load_evaluate_script

from nard_ai.cube import CubeState, cube_decision_from_probs, cube_efficiency
from nard_ai.gnubg.agent import gnubg_available
from nard_ai.interfaces.cli import format_cube, parse_dataclass_args
from nard_ai.model.network import default_checkpoint_path
from nard_ai.reports.position import (
    _consistent,
    cube_errors_text,
    cubeful_ci_bound,
    read_positions,
    read_text_file,
    run_positions,
)

REPO = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
DOUBLE_TAKE_ID = "bDeDISBsO8jIAA:cAkAAAAAAAAE"  # gnubg 0-ply: Double, take, ND +0.661, D/T +0.727
BOM = b"\xef\xbb\xbf"

needs_network = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)
needs_gnubg = pytest.mark.skipif(
    not gnubg_available(), reason="the optional gnubg package is not installed (pip install gnubg)"
)


def report(path: Path, **kwargs) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_positions(str(path), out=out, err=err, **kwargs)
    return status, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- (a) byte order mark


def test_a_byte_order_mark_does_not_spoil_line_one(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(BOM + f"{START_XGID}\r\n{START_ID}\r\n".encode())
    text = read_text_file(str(path), io.StringIO())
    assert text is not None and not text.startswith("\ufeff")
    positions, errors = read_positions(text)
    assert errors == [] and [p.line for p in positions] == [1, 2]
    assert positions[0].text == START_XGID


@needs_network
def test_a_file_with_a_byte_order_mark_is_analysed_from_line_one(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(BOM + f"{START_XGID}\n".encode())
    status, out, err = report(path, as_json=True)
    assert status == 0 and err == ""
    data = json.loads(out)
    assert data["errors"] == [] and [p["line"] for p in data["positions"]] == [1]


# --------------------------------------------------------------------------- (b) JSON without a good line


def test_json_is_printed_when_every_line_is_bad(tmp_path):
    """The per-line errors go into the JSON object; the exit status stays 1; stderr keeps its lines."""
    path = tmp_path / "bad.txt"
    path.write_text("not-an-id\n# comment\nXGID=bad\n")
    status, out, err = report(path, as_json=True, agent_spec="default:0")
    assert status == 1
    data = json.loads(out)
    assert data["positions"] == [] and data["comparison"] is None and data["agent"] == "default:0"
    assert [e["line"] for e in data["errors"]] == [1, 3]
    assert "Position ID" in data["errors"][0]["message"]
    assert f"{path}:1: " in err and "holds no position" in err
    # an empty file: the same object, no errors in it
    path.write_text("# nothing\n")
    status, out, _ = report(path, as_json=True)
    assert status == 1 and json.loads(out)["positions"] == [] and json.loads(out)["errors"] == []
    # text mode prints nothing on stdout, as before
    status, out, _ = report(path)
    assert status == 1 and out == ""


def test_evaluate_py_prints_json_for_an_all_bad_file(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("zzz\n")
    r = subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), "--positions", str(path), "--json", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert json.loads(r.stdout)["errors"][0]["line"] == 1


# --------------------------------------------------------------------------- (c) how wrong each action is


@needs_gnubg
def test_the_report_gives_the_error_of_each_cube_choice(tmp_path):
    """gnubg 0-ply probabilities: D/T +0.727 is right; not doubling costs 0.727 - 0.661 = 0.066,
    passing 1 - 0.727 = 0.273, doubling and taking nothing."""
    path = tmp_path / "dt.txt"
    path.write_text(DOUBLE_TAKE_ID + "\n")
    status, out, err = report(path, agent_spec="gnubg", ply=0, as_json=True)
    assert status == 0, err
    d = json.loads(out)["positions"][0]["decision"]
    assert d["errors"]["no_double"] == pytest.approx(0.066, abs=0.015)
    assert d["errors"]["pass"] == pytest.approx(0.273, abs=0.015)
    assert d["errors"]["double"] == 0.0 and d["errors"]["take"] == 0.0
    assert d["proper_action"] == "Double, take" and d["beaver"] is False
    status, out, _ = report(path, agent_spec="gnubg", ply=0)
    (line,) = [x for x in out.splitlines() if x.startswith("  errors: ")]
    e = d["errors"]
    assert line == (
        f"  errors: not doubling {e['no_double']:.3f}, doubling 0.000; "
        f"opponent taking 0.000, opponent passing {e['pass']:.3f}"
    )


def test_the_report_and_nard_cube_print_the_same_errors():
    """One formatter: nard cube's "Errors:" line is cube_errors_text of the same decision."""
    cube = CubeState(beavers=True)
    d = cube_decision_from_probs([0.515, 0.132, 0.005, 0.121, 0.005], cube, 0.68)
    assert d.beaver  # D/T < 0 at the opening's probabilities
    text = format_cube(d, cube)
    assert f"Errors: {cube_errors_text(d)}" in text
    assert cube_errors_text(d).startswith(
        f"not doubling 0.000, doubling {d.errors['double']:.3f}; O beavering"
    )
    # no double available: nothing to print
    owned = cube_decision_from_probs(
        [0.515, 0.132, 0.005, 0.121, 0.005], CubeState(value=2, owner="opponent"), 0.68
    )
    assert cube_errors_text(owned) == ""


# --------------------------------------------------------------------------- (d) the rollout decision's interval


def test_the_interval_of_a_dead_cube_decision_is_the_hand_worked_sum():
    """x = 0: ND = E = 2w - 1 + wg + wb - lg - lb = 0.03, D/T = 2E = 0.06 (double, take). Over the box of
    the intervals E moves by at most 2(0.01) + 0.005 + 0.002 + 0.004 + 0.001 = 0.032, D/T by 0.064; the
    right action's equity max(E, min(2E, 1)) moves by 0.064 upwards and by 0.062 downwards."""
    p = [0.5, 0.15, 0.01, 0.12, 0.01]
    ci = [0.01, 0.005, 0.002, 0.004, 0.001]
    d = cube_decision_from_probs(p, CubeState(), 0.0)
    assert (d.no_double, d.double_take, d.action) == (pytest.approx(0.03), pytest.approx(0.06), "double_take")
    bound = cubeful_ci_bound(p, ci, CubeState(), 0.0)
    assert bound == pytest.approx({"no_double": 0.032, "double_take": 0.064, "optimal": 0.064})
    assert cubeful_ci_bound(p, [0.0] * 5, CubeState(), 0.0) == {
        "no_double": 0,
        "double_take": 0,
        "optimal": 0,
    }
    assert all(np.isnan(v) for v in cubeful_ci_bound(p, [np.nan] * 5, CubeState(), 0.0).values())
    with pytest.raises(ValueError, match="shape"):
        cubeful_ci_bound(p, ci[:4], CubeState(), 0.0)


def test_the_interval_covers_the_true_cubeful_equity_at_least_95_percent_of_the_time():
    """Simulated rollouts of 500 games from known outcome rates (the opening's, 0-ply): the bound, built
    from the five per-probability intervals as a rollout reports them, holds the true cubeful equity
    in at least 95% of 200 seeded repeats (measured: 99.5%; the bound is conservative by design)."""
    rng = np.random.default_rng(1)
    # exclusive outcomes: win single / gammon / backgammon, lose single / gammon / backgammon
    rates = np.array([0.515 - 0.132, 0.132 - 0.005, 0.005, 0.485 - 0.121, 0.121 - 0.005, 0.005])
    to_probs = np.array(
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 0, 0, 0, 0],
            [0, 0, 0, 1, 0],
            [0, 0, 0, 1, 1],
        ],
        dtype=np.float64,
    )
    cube, x, games = CubeState(), 0.68, 500
    truth = cube_decision_from_probs(rates @ to_probs, cube, x).optimal
    covered = 0
    for _ in range(200):
        values = to_probs[rng.choice(6, size=games, p=rates)]
        mean = values.mean(axis=0)
        ci = 1.959964 * values.std(axis=0, ddof=1) / np.sqrt(games)
        estimate = cube_decision_from_probs(_consistent(mean), cube, x).optimal
        covered += abs(estimate - truth) <= cubeful_ci_bound(mean, ci, cube, x)["optimal"]
    assert covered >= 190


@needs_network
def test_the_rollout_cube_line_gives_its_interval(tmp_path):
    from nard_ai.agents import load_agent
    from nard_ai.core.board import starting_board
    from nard_ai.play.rollout import rollout

    path = tmp_path / "start.txt"
    path.write_text(START_ID + "\n")
    status, out, err = report(path, rollout_games=36, seed=5, as_json=True)
    assert status == 0, err
    item = json.loads(out)["positions"][0]
    r = rollout(starting_board(), 36, agent=load_agent(ply=0), seed=5)
    expected = cubeful_ci_bound(r.probs, r.probs_ci, CubeState(), cube_efficiency(starting_board()))
    bound = item["rollout_decision"]["ci95_bound"]
    assert bound == pytest.approx(expected, abs=1e-9) and bound["optimal"] > 0
    assert "errors" in item["rollout_decision"]
    status, out, _ = report(path, rollout_games=36, seed=5)
    cubeful = item["rollout_decision"]["cubeful_equity"]
    assert f"cubeful {cubeful:+.3f} ± {bound['optimal']:.3f} (conservative 95% CI)" in out
    assert "  rollout errors: not doubling " in out


def test_a_one_game_rollout_has_no_interval_null_in_json_and_n_a_in_text(tmp_path):
    """One game gives no interval (the rollout's ``probs_ci`` are NaN): JSON says null, not the ``NaN``
    that JSON parsers other than Python's refuse, and the text ``± n/a`` as the cube line does."""
    path = tmp_path / "start.txt"
    path.write_text(START_ID + "\n")
    status, out, err = report(path, rollout_games=1, seed=5, as_json=True)
    assert status == 0, err
    assert "NaN" not in out
    rollout = json.loads(out)["positions"][0]["rollout"]
    assert (
        rollout["games"] == 1
        and rollout["probabilities_ci95"] == [None] * 5
        and rollout["equity_ci95"] is None
    )
    status, out, _ = report(path, rollout_games=1, seed=5)
    line = next(x for x in out.splitlines() if x.startswith("  rollout ("))
    assert line.startswith("  rollout (1 game, plain): win ") and line.count("± n/a") == 2, line


# --------------------------------------------------------------------------- --match-length


load_evaluate = load_evaluate_script


def test_a_match_longer_than_the_table_is_an_argument_error(capsys, monkeypatch):
    script = load_evaluate(monkeypatch)
    with pytest.raises(SystemExit) as info:
        parse_dataclass_args(script.Args, ["--match-length", "30", "--games", "4"])
    assert info.value.code == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "error:" in x]
    assert "argument --match-length: must be 1..25" in line and "got 30" in line
    assert parse_dataclass_args(script.Args, ["--match-length", "25"]).match_length == 25


def test_evaluate_py_match_length_30_exits_2_without_a_traceback(tmp_path):
    r = subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), "--match-length", "30", "--games", "4", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "argument --match-length: must be 1..25" in r.stderr
