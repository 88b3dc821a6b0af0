"""Beavers from the XGID to the cube decision, ``evaluate.py --beavers``, and ``nard rollout --cubeful --luck``.

Sources:

* eXtreme Gammon's XGID description: in money play (match length 0) the
  8th field after the position is the Jacoby field, ``0`` neither rule,
  ``1`` Jacoby, ``2`` beavers, ``3`` both (bit 0 Jacoby, bit 1 beavers).
* gnubg 1.07's 0-ply cube analysis of the opening position with ``set
  beavers 1`` (run through :func:`nard_ai.gnubg.agent.gnubg_cube_analysis`):
  "No double, beaver (23.8%)", D/T -0.190, ND +0.093: doubling the opening
  leaves the doubler below zero, so the taker beavers. Without beavers gnubg
  says "No double, take" for the same numbers.
* :mod:`nard_ai.cube.decision`: with beavers (money) an opponent facing ``DT < 0``
  beavers, and the decision counts ``2 * DT``.
* RULES.md 8 and :func:`nard_ai.play.rollout.rollout`: cubeful rollouts are not
  luck-adjusted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_evaluate_script, run_cli

from nard_ai.core.board import starting_board
from nard_ai.cube import CubeState
from nard_ai.cube.state import cube_state_from_match
from nard_ai.formats.match_id import MatchState, from_match_id, match_id
from nard_ai.formats.position import parse_position
from nard_ai.formats.xgid import from_xgid, to_xgid
from nard_ai.gnubg.agent import gnubg_available
from nard_ai.interfaces import cli
from nard_ai.model.network import default_checkpoint_path

REPO = Path(__file__).resolve().parents[1]
START = "-b----E-C---eE---c-e----B-"


def start_xgid(jacoby_field: int) -> str:
    """The opening position, X on roll before rolling, money, cube centred, with this Jacoby field."""
    return f"XGID={START}:0:0:1:00:0:0:{jacoby_field}:0:10"


needs_network = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)
needs_gnubg = pytest.mark.skipif(
    not gnubg_available(), reason="the optional gnubg package is not installed (pip install gnubg)"
)


run_main = run_cli


# --------------------------------------------------------------------------- the XGID's Jacoby field


@pytest.mark.parametrize(
    ("field", "jacoby", "beavers"), [(0, False, False), (1, True, False), (2, False, True), (3, True, True)]
)
def test_the_xgid_jacoby_field_holds_jacoby_in_bit_0_and_beavers_in_bit_1(field, jacoby, beavers):
    """XG: 0 = neither, 1 = Jacoby, 2 = beavers, 3 = both (money play)."""
    text = start_xgid(field)
    board, state = from_xgid(text)
    assert (state.jacoby, state.beavers) == (jacoby, beavers)
    assert cube_state_from_match(state) == CubeState(jacoby=jacoby, beavers=beavers)
    assert to_xgid(board, state) == text  # the round trip keeps both bits


def test_to_xgid_writes_the_beaver_bit():
    assert to_xgid(starting_board(), MatchState(beavers=True)) == start_xgid(2)
    assert to_xgid(starting_board(), MatchState(jacoby=True, beavers=True)) == start_xgid(3)


def test_parse_position_carries_beavers_into_the_cube_state():
    """The one entry point shared by the CLI, evaluate.py and the server."""
    _, state = parse_position(start_xgid(2).removeprefix("XGID="))  # the prefix is optional
    assert cube_state_from_match(state).beavers
    # overrides still win, and a bare Position ID is money without beavers
    assert not cube_state_from_match(state, beavers=False).beavers
    assert cube_state_from_match(None) == CubeState()


def test_beavers_are_a_money_play_option():
    """In match play the field is the Crawford flag (XG), and MatchState refuses beavers there."""
    _, state = from_xgid(f"XGID={START}:0:0:1:00:0:0:0:5:10")
    assert not state.beavers
    with pytest.raises(ValueError, match="beavers.*money-play"):
        MatchState(match_length=5, beavers=True)
    with pytest.raises(ValueError, match="beavers must be a bool"):
        MatchState(beavers="yes")


def test_a_match_id_does_not_hold_beavers():
    """gnubg keeps beavers as a session setting (``set beavers``), not in the Match ID's 67 bits."""
    assert match_id(MatchState(beavers=True)) == match_id(MatchState()) == "cAkAAAAAAAAE"
    assert from_match_id("cAkAAAAAAAAE").beavers is False


# --------------------------------------------------------------------------- nard cube / nard show


@needs_network
def test_nard_cube_shows_no_double_beaver_at_the_opening_with_beavers(capsys):
    """gnubg 0-ply, beavers on: "No double, beaver" (D/T -0.190 < 0); ours has D/T < 0 there too."""
    from nard_ai.agents import load_agent
    from nard_ai.cube import cube_decision

    d = cube_decision(starting_board(), CubeState(beavers=True), agent=load_agent(ply=0))
    assert d.double_take < 0 and d.beaver and d.action == "no_double"  # the premise, as gnubg's
    status, out, err = run_main(["cube", start_xgid(2), "--json"], capsys)
    assert status == 0, err
    data = json.loads(out)
    assert data["beaver"] is True and data["proper_action"] == "No double, beaver"
    assert data["cube"]["beavers"] is True and data["cube"]["jacoby"] is False
    assert data["errors"]["take"] == pytest.approx(d.errors["take"], abs=1e-6)
    status, out, _ = run_main(["cube", start_xgid(2)], capsys)
    assert status == 0 and "Proper cube action: No double, beaver" in out
    assert f"X's equity after double, beaver {2 * d.double_take:+.3f}" in out
    # a plain take is the wrong answer: it costs O what the beaver would have won, -DT
    assert f"O beavering 0.000, O taking without a beaver {-d.double_take:.3f}" in out


@needs_network
@pytest.mark.parametrize(("field", "beaver"), [(0, False), (1, False), (2, True), (3, True)])
def test_nard_cube_beavers_only_when_the_field_has_bit_1(field, beaver, capsys):
    """Field 3 (Jacoby and beavers) beavers as 2 does; 1 (Jacoby only) and 0 do not."""
    status, out, err = run_main(["cube", start_xgid(field), "--json"], capsys)
    assert status == 0, err
    data = json.loads(out)
    assert data["beaver"] is beaver and data["cube"]["beavers"] is beaver
    assert data["cube"]["jacoby"] is bool(field & 1)
    assert data["proper_action"] == ("No double, beaver" if beaver else "No double, take")


@needs_gnubg
@needs_network
def test_the_beaver_answer_is_worded_as_gnubg_words_it(capsys):
    """gnubg's own analysis of the same XGID with beavers, at 0-ply: the words before its take point."""
    from nard_ai.gnubg.agent import gnubg_cube_analysis

    board, state = from_xgid(start_xgid(2))
    (theirs,) = gnubg_cube_analysis([(board, cube_state_from_match(state))], 0)
    assert theirs.double_take < 0  # measured: -0.190
    words = theirs.gnubg_action.split(" (")[0]
    assert words == "No double, beaver"
    status, out, _ = run_main(["cube", start_xgid(2), "--json"], capsys)
    assert json.loads(out)["proper_action"] == words


@needs_network
def test_nard_show_names_the_beaver_rule(capsys):
    status, out, _ = run_main(["show", start_xgid(3)], capsys)
    assert status == 0 and "Money game, Jacoby rule, beavers allowed" in out


# --------------------------------------------------------------------------- nard rollout --cubeful --luck


def test_a_cubeful_rollout_with_luck_adjustment_is_a_clean_error(capsys):
    """Cubeful rollouts are never luck-adjusted: asking for it is an argument error, not silently dropped."""
    status, out, err = run_main(["rollout", start_xgid(0), "--cubeful", "--luck", "--games", "4"], capsys)
    assert status == 2 and out == ""
    assert "--luck is not available with --cubeful: cubeful rollouts are not luck-adjusted" in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- evaluate.py --beavers


load_evaluate = load_evaluate_script


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--beavers"], "argument --beavers: goes with --cube"),
        (["--cube", "--beavers", "--match-length", "5"], "argument --beavers: a money-play option"),
        (["--cube", "--jacoby", "--match-length", "5"], "argument --jacoby: a money-play option"),
    ],
)
def test_beavers_go_with_money_play_with_the_cube(argv, message, capsys, monkeypatch):
    script = load_evaluate(monkeypatch)
    with pytest.raises(SystemExit) as info:
        cli.parse_dataclass_args(script.Args, argv)
    assert info.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and message in errors[0]


def test_beavers_reach_the_money_session(monkeypatch):
    """``--cube --beavers`` calls play_money_session with beavers=True (and jacoby as given)."""
    script = load_evaluate(monkeypatch)
    seen = {}

    class Result:
        def summary(self, a, b):
            return "done"

    def fake_session(agent_a, agent_b, games, **kwargs):
        seen.update(kwargs)
        return Result()

    monkeypatch.setattr(script, "play_money_session", fake_session)
    args = cli.parse_dataclass_args(
        script.Args, ["--agent-a", "pubeval", "--agent-b", "random", "--games", "2", "--cube", "--beavers"]
    )
    args.progress = False
    assert script.main(args) == 0
    assert seen["beavers"] is True and seen["jacoby"] is False


def test_money_play_with_beavers_from_the_command_line(tmp_path):
    """The summary names the option (cubeplay.MoneySessionResult.summary)."""
    r = subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), "--agent-a", "pubeval", "--agent-b", "random"]
        + ["--games", "4", "--cube", "--jacoby", "--beavers", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "money with the cube (Jacoby, beavers)" in r.stdout and "beavers 0" in r.stdout
