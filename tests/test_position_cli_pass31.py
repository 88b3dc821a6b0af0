"""An analyst's pass over ``nard show / eval / hint / cube / rollout`` (gnubg as the reference).

1. ``nard eval --checkpoint BAD``: a checkpoint that is not a readable nard_ai checkpoint is named in the
   words of every other command (``nard cube: error: PATH: not a readable nard_ai checkpoint ...``,
   tests/test_cli_user_pass.py), not blamed on ``--ply`` (it said ``--ply 0: PATH: ...``, and
   ``--ply 2: PATH: ...`` with ``--ply 2``, though every checkpoint searches 0-ply and 2-ply is fine).
2. ``nard cube`` at the last roll (the opponent bears off next roll whatever it throws): the numbers gnubg
   1.07's ``eval`` prints for the same XGID (exact probabilities on both sides: 27 of 36 rolls bear the
   one checker off from the 6-point).
3. ``nard cube`` of a money game whose cube is at nard_ai's (and gnubg's) largest, 4096: "X cannot double"
   gave a match's reason ("winning the current cube already wins X the match"); it names the cube's size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import one_error_line, run_cli

from nard_ai.model.network import default_checkpoint_path

START_ID = "4HPwATDgc/ABMA"
LAST_ROLL = "------A-----------------a-"  # X: one checker on its 6-point; O: one on its 1-point

pytestmark = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)


@pytest.mark.parametrize("ply", [[], ["--ply", "0"], ["--ply", "2"]])
def test_eval_names_a_corrupt_checkpoint_not_the_ply(capsys, tmp_path, ply):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    line = one_error_line(["eval", START_ID, "--checkpoint", str(bad), *ply], capsys)
    # the words of nard cube / hint / rollout for the same file (common.agent_arg)
    assert line.startswith(f"nard eval: error: {bad}: not a readable nard_ai checkpoint"), line
    status, out, err = run_cli(["cube", START_ID, "--checkpoint", str(bad)], capsys)
    assert status == 2 and err.rstrip("\n").split(": error: ", 1)[1] == line.split(": error: ", 1)[1]


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        # gnubg 1.07, `set xgid XGID=------A-----------------a-:...` then `eval` (0-ply):
        # money: Double, take +1.000 / Double, pass +1.000 / No double +0.500 (2p - 1, p = 27/36)
        ("0:0:1:00:0:0:0:0:10", {"no_double": 0.5, "double_take": 1.0, "double_pass": 1.0}),
        # 5-point match at 0-0: No double +0.500, Double, take +0.957, Double, pass +1.000
        ("0:0:1:00:0:0:0:5:10", {"no_double": 0.5, "double_take": 0.957, "double_pass": 1.0}),
        # 5-point match, X 3, O 2: No double +0.500, Double, take +1.637, Double, pass +1.000
        ("0:0:1:00:3:2:0:5:10", {"no_double": 0.5, "double_take": 1.637, "double_pass": 1.0}),
    ],
)
def test_cube_at_the_last_roll_is_gnubgs(capsys, state, expected):
    status, out, err = run_cli(["cube", f"XGID={LAST_ROLL}:{state}", "--json"], capsys)
    assert status == 0, err
    got = json.loads(out)
    assert got["probabilities"]["win"] == pytest.approx(0.75, abs=1e-6)
    assert got["efficiency"] == 0.0  # the cube is dead on the last roll (README)
    for key, value in expected.items():
        assert got["equities"][key] == pytest.approx(value, abs=6e-4), key


@pytest.mark.parametrize("owner", ["1", "0"])  # the cube X owns, or a centred one (automatic doubles)
def test_cube_at_the_largest_money_cube_speaks_of_no_match(capsys, owner):
    # 3. money play, a 4096-cube (nard_ai.cube.MAX_CUBE, gnubg's MAX_CUBE 1 << 12 too): X cannot double,
    # and the reason is the cube's size; there is no match that winning the cube would win (it said so)
    xgid = f"XGID=-b--BBC-B---eD---c-e----B-:12:{owner}:1:00:0:0:0:0:15"
    status, out, err = run_cli(["cube", xgid], capsys)
    assert status == 0, err
    assert "X cannot double: the cube is at 4096, and 4096 is the largest cube nard_ai plays." in out
    assert "match" not in out.split("Cube analysis", 1)[1]
    status, out, err = run_cli(["cube", xgid, "--json"], capsys)
    assert status == 0 and json.loads(out)["cube_available"] is False


def test_cube_of_a_dead_match_cube_keeps_its_words(capsys):
    # the match wording stays where it is right: 5-point match, X 3 (2-away) owning a 4-cube
    status, out, err = run_cli(["cube", "XGID=-b--BBC-B---eD---c-e----B-:2:1:1:00:3:0:0:5:10"], capsys)
    assert status == 0, err
    assert (
        "X cannot double: the cube is dead for X (winning the current cube already wins X the match)." in out
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("argv", [["hint", "4HPwATDgc/ABMA", "--dice", "31"], ["show", "4HPwATDgc/ABMA"]])
def test_output_that_cannot_be_written_is_one_error_line(argv):
    # `> /dev/full` fails every write with ENOSPC; found: a traceback (a large output) or Python's
    # "Exception ignored ... OSError" at exit (a small one). Right: one line naming the error, status 1
    # (as a closed pipe's status), no traceback
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "nard_ai.interfaces.cli", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"nard {argv[0]}: error: [Errno 28] No space left on device"]


# --------------------------------------------------------------------------- nard cube --jacoby / --beavers


@pytest.mark.parametrize(
    "position, flags, jacoby, beavers",
    [
        (START_ID, ["--jacoby"], True, False),
        (START_ID, ["--beavers"], False, True),
        (START_ID, ["--jacoby", "--beavers"], True, True),
        (f"{START_ID}:cAkAAAAAAAAA", ["--jacoby"], True, False),  # a money Match ID holds no such rules
    ],
)
def test_cube_takes_the_money_rules_of_a_bare_id_from_its_flags(capsys, position, flags, jacoby, beavers):
    # gnubg takes the Jacoby rule and beavers from its settings ('set jacoby on', its money default;
    # 'set beavers'): the flags are those settings, and the answer is the library's cube_decision at
    # CubeState(jacoby=..., beavers=...) by the same agent, to the printed digit
    from nard_ai.cube import CubeState, cube_decision
    from nard_ai.formats.position_id import board_from_position_id
    from nard_ai.search.loading import load_agent

    status, out, err = run_cli(["cube", position, "--json", *flags], capsys)
    assert status == 0, err
    got = json.loads(out)
    assert (got["cube"]["jacoby"], got["cube"]["beavers"]) == (jacoby, beavers)
    d = cube_decision(
        board_from_position_id(START_ID), CubeState(jacoby=jacoby, beavers=beavers), agent=load_agent(ply=0)
    )
    assert got["action"] == d.action and got["beaver"] == d.beaver
    assert got["equities"] == pytest.approx({k: float(v) for k, v in d.equities.items()}, abs=1e-6)
    status, out, _ = run_cli(["cube", position, *flags], capsys)
    rules = (
        f"{'Jacoby rule' if jacoby else 'no Jacoby rule'}, {'beavers allowed' if beavers else 'no beavers'}"
    )
    assert status == 0 and f"money game ({rules}), cube 1 centred" in out


def test_cube_refuses_the_money_flags_where_the_id_gives_the_rules_or_a_match(capsys):
    # an XGID gives them in its Jacoby field; a match has none (docs/RULES.md §8)
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
    assert one_error_line(["cube", xgid, "--jacoby"], capsys) == (
        "nard cube: error: --jacoby: the XGID gives the money rules itself (its Jacoby field); give them there"
    )
    assert one_error_line(["cube", "4HPwATDgc/ABMA:QQmgADAAEAAE", "--jacoby", "--beavers"], capsys) == (
        "nard cube: error: --jacoby and --beavers: money-play rules, and the ID is a 5-point match "
        "(docs/RULES.md §8: the Jacoby rule and beavers do not apply to matches)"
    )
