"""A new user's pass over ``nard`` (2026-12): each finding with the exact output it now gives.

1. a shipped network by its file name from any folder, and a missing checkpoint's error naming where the
   shipped ones are; 2. a bare XGID starting with '-'; 3. ``show`` of a finished board; 4. ``cube``'s
   header naming the money rules; 5. one ``--ply`` wording, one seed bound, ``--dice 6-6-6``; 6. ``hint``
   with no legal play, ``rollout --truncate 1``; 7. ``play --cube`` and the Jacoby rule, an unknown command.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import one_error_line, run_cli

from nard_ai.agents import agent_from_spec, checkpoint_of_spec, load_agent
from nard_ai.core.board import pos
from nard_ai.formats.position_id import position_id
from nard_ai.interfaces.terminal import play_session
from nard_ai.model.network import default_checkpoint_path, resolve_checkpoint, shipped_checkpoints

REPO = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
START_52_BARE = "-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"  # START_52 of test_cli.py without XGID=

pytestmark = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)


def shipped_note() -> str:
    folder = REPO / "checkpoints"  # a checkout: the shipped networks are the source tree's
    return (
        f"the shipped networks are in {folder}: nard-expert.pt (the default), nard-expert-gen15.pt, "
        "nard-expert-gen14.pt, nard-expert-gen11.pt, nard-expert-gen10.pt, nard-rich.pt, nard-sup256.pt, "
        "nard-td198.pt; give one by its file name alone from any folder, e.g. nard-td198.pt"
    )


needs_checkout = pytest.mark.skipif(
    shipped_checkpoints()[0] != REPO / "checkpoints", reason="the networks are not the checkout's"
)


# --------------------------------------------------------------------------- 1. shipped networks by name


@needs_checkout
@pytest.mark.parametrize(
    "argv",
    [
        ["hint", START_ID, "--dice", "31"],
        ["eval", START_ID],
        ["cube", START_ID],
        ["rollout", START_ID, "--games", "2"],
        ["analyze", str(REPO / "tests/data/match_3pt.mat")],
        ["play"],
        ["serve", "--port", "0"],
        ["export", "--onnx", "x.onnx"],
    ],
)
def test_a_missing_checkpoint_says_where_the_shipped_networks_are(argv, capsys, monkeypatch, tmp_path):
    """``--checkpoint checkpoints/nard-td198.pt`` (the export example before) from another folder than the
    checkout: the error names the shipped networks' absolute folder and their file names."""
    monkeypatch.chdir(tmp_path)
    line = one_error_line([*argv, "--checkpoint", "checkpoints/nard-td198.pt"], capsys)
    assert line == f"nard {argv[0]}: error: no checkpoint at checkpoints/nard-td198.pt; {shipped_note()}"


@needs_checkout
def test_ubgi_names_the_shipped_networks_too(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    line = one_error_line(["ubgi", "--checkpoint", "nowhere.pt"], capsys)
    assert line == (
        f"nard ubgi: error: no checkpoint file 'nowhere.pt' (the path does not exist); {shipped_note()}"
    )


def test_a_shipped_networks_file_name_loads_from_any_folder(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["hint", START_ID, "--dice", "31", "--checkpoint", "nard-td198.pt"], capsys)
    assert status == 0, err
    assert (
        "16 legal plays for 3-1, ranked by 0-ply cubeless equity (nard-td198.pt:0); diff: against the best; "
        "probabilities for the side on roll:"
    ) in out.splitlines()
    # the export --help example, as written, from a folder that is not the checkout
    status, out, err = run_cli(["export", "--onnx", "td198.onnx", "--checkpoint", "nard-td198.pt"], capsys)
    if status == 2 and "pip install" in err:
        pytest.skip("the onnx extra is not installed")
    assert status == 0, err
    assert out.startswith("wrote td198.onnx: nard-td198.pt (one net), inputs (N, 198)")


def test_a_file_of_the_current_folder_wins_over_the_shipped_one(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nard-td198.pt").write_bytes(b"not a checkpoint")
    line = one_error_line(["cube", START_ID, "--checkpoint", "nard-td198.pt"], capsys)
    assert line.startswith("nard cube: error: nard-td198.pt: not a readable nard_ai checkpoint")
    assert resolve_checkpoint("nard-td198.pt") == Path("nard-td198.pt")


def test_only_a_bare_shipped_name_is_resolved(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    folder, names = shipped_checkpoints()
    assert folder.is_absolute() and names[0] == "nard-expert.pt" and "nard-td198.pt" in names
    assert resolve_checkpoint("nard-td198.pt") == folder / "nard-td198.pt"
    for path in ("./nard-td198.pt", "checkpoints/nard-td198.pt", "mine.pt"):
        assert resolve_checkpoint(path) == Path(path)


def test_agent_specs_resolve_the_same_names(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    folder, _ = shipped_checkpoints()
    assert agent_from_spec("nard-td198.pt:1").name == "nard-td198.pt:1"
    assert checkpoint_of_spec("nard-td198.pt:1") == folder / "nard-td198.pt"
    with pytest.raises(FileNotFoundError) as info:
        agent_from_spec("missing.pt:1")
    assert str(info.value).startswith("no checkpoint at missing.pt; the shipped networks are in ")


# --------------------------------------------------------------------------- 2. a bare XGID starting with '-'


@pytest.mark.parametrize("command", ["show", "hint", "eval", "cube", "rollout"])
def test_a_bare_xgid_starting_with_a_dash_says_how_to_write_it(command, capsys):
    line = one_error_line([command, START_52_BARE], capsys)
    assert line == (
        f"nard {command}: error: '{START_52_BARE}' starts with '-' and reads as an option: write the XGID "
        f"with its prefix, XGID={START_52_BARE}, or put -- before it"
    )


def test_a_bare_xgid_as_an_option_value_and_after_a_double_dash(capsys):
    line = one_error_line(["play", "--position", START_52_BARE], capsys)
    assert line == (
        f"nard play: error: '{START_52_BARE}' starts with '-' and reads as an option: write the XGID "
        f"with its prefix, XGID={START_52_BARE}"
    )
    status, out, err = run_cli(["hint", "--json", "--", START_52_BARE], capsys)  # as the message says
    assert status == 0 and json.loads(out)["dice"] == [5, 2], err
    status, out, _ = run_cli(["hint", START_52_BARE, "--help"], capsys)
    assert status == 0 and out.startswith("usage: nard hint")


# --------------------------------------------------------------------------- 3. show of a finished board


@pytest.mark.parametrize(
    "position, lines",
    [
        (  # X, on roll, has borne off all 15; O has 10 off: a single game
            "HwAAAAAAAAAAAA",
            [
                "No match state: a money game, cube 1 centred (a Match ID or XGID sets them).",
                "The game is over: X has borne off all 15 checkers and won a single game; no one is on roll",
            ],
        ),
        (  # O has borne off all 15, X none: a gammon; a Match ID (money, Jacoby) still playing
            position_id(pos(me={6: 15})) + ":cAkAAAAAAAAA",
            [
                "Money game, Jacoby rule",
                "Cube 1, centred",
                "The game is over: O has borne off all 15 checkers and won a gammon; no one is on roll",
            ],
        ),
    ],
)
def test_show_says_a_finished_boards_game_is_over_and_who_won(position, lines, capsys):
    status, out, err = run_cli(["show", position], capsys)
    assert status == 0, err
    shown = [line.strip() for line in out.splitlines()]
    assert shown[-len(lines) :] == lines
    assert not any("is on roll in a money game" in line for line in shown)
    assert "Pip count" in out  # the board is drawn as for any ID


# --------------------------------------------------------------------------- 4. cube's header


@pytest.mark.parametrize(
    "position, rules",
    [
        ("4HPwATDYzuABMA", "no Jacoby rule, no beavers"),  # no match state: CubeState's defaults
        ("4HPwATDYzuABMA:cAkAAAAAAAAA", "Jacoby rule, no beavers"),  # a money Match ID with Jacoby
        ("XGID=-b--BBC-B---eD---c-e----B-:0:0:1:00:0:0:3:0:10", "Jacoby rule, beavers allowed"),
    ],
)
def test_the_cube_header_names_the_money_rules_its_equities_apply(position, rules, capsys):
    status, out, err = run_cli(["cube", position], capsys)
    assert status == 0, err
    assert (
        f"Cube analysis, 0-ply (nard-expert.pt:0): money game ({rules}), cube 1 centred" in out.splitlines()
    )
    data = json.loads(run_cli(["cube", position, "--json"], capsys)[1])["cube"]
    assert (data["jacoby"], data["beavers"]) == ("no Jacoby" not in rules, "no beavers" not in rules)


# --------------------------------------------------------------------------- 5. --ply, --seed, --dice


PLY_WORDS = "must be an integer 0..2 (the search depth in gnubg's numbering: 0 = static evaluation)"


@pytest.mark.parametrize(
    "argv",
    [
        ["hint", START_ID, "--dice", "31"],
        ["eval", START_ID],
        ["cube", START_ID],
        ["rollout", START_ID],
        ["play"],
        ["analyze", "tests/data/match_3pt.mat"],
        ["serve"],
        ["ubgi"],
    ],
)
@pytest.mark.parametrize("ply, got", [("3", "3"), ("-1", "-1"), ("x", "'x'")])
def test_one_wording_of_a_bad_ply_for_every_command(argv, ply, got, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    line = one_error_line([*argv, f"--ply={ply}"], capsys)
    assert line == f"nard {argv[0]}: error: argument --ply: {PLY_WORDS}, got {got}"


@pytest.mark.parametrize("argv", [["play"], ["rollout", START_ID]])
def test_one_seed_bound_for_play_and_rollout(argv, capsys):
    too_big = str(2**64)
    line = one_error_line([*argv, "--seed", too_big], capsys)
    assert line == f"nard {argv[0]}: error: argument --seed: must be <= {2**64 - 1}, got {too_big}"
    line = one_error_line([*argv, "--seed", "-1"], capsys)
    assert line == f"nard {argv[0]}: error: argument --seed: must be >= 0, got -1"


def test_the_largest_seed_is_taken(capsys):
    status, out, err = run_cli(
        ["rollout", START_ID, "--games", "2", "--seed", str(2**64 - 1), "--json"], capsys
    )
    assert status == 0 and json.loads(out)["seed"] == 2**64 - 1, err


@pytest.mark.parametrize("dice", ["6-6-6", "6,6,6", "1-2-3"])
def test_three_dice_are_not_two_dice(dice, capsys):
    line = one_error_line(["hint", START_ID, "--dice", dice], capsys)
    assert line == f"nard hint: error: bad dice: '{dice}' is not two dice (write 31, 3-1 or 3 1)"


# --------------------------------------------------------------------------- 6. no legal play, one ply

#: X has two checkers on the bar against O's closed home board: no 6-6 (or any roll) enters.
SHUT_OUT = position_id(pos(me={25: 2, 6: 13}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 24: 3}))


def test_hint_says_there_is_no_legal_play(capsys):
    assert SHUT_OUT == "27YBADjg/wMAYA"
    status, out, err = run_cli(["hint", SHUT_OUT, "--dice", "66"], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[-3] == (
        "No legal play for 6-6: X cannot move and the board stays as it is; its cubeless equity "
        "(nard-expert.pt:0) and probabilities for the side on roll:"
    )
    assert lines[-1].startswith("  1  (no move)  ")
    assert "legal play for" not in out.replace("No legal play for", "")
    data = json.loads(run_cli(["hint", SHUT_OUT, "--dice", "66", "--json"], capsys)[1])
    assert data["legal_plays"] == 0 and [p["play"] for p in data["plays"]] == ["-"]  # "-" as HTTP /move


def test_rollout_says_one_ply_and_one_game(capsys):
    status, out, err = run_cli(["rollout", START_ID, "--games", "2", "--truncate", "1"], capsys)
    assert status == 0, err
    assert out.splitlines()[-1] == "2 games truncated after 1 ply and scored by evaluation"
    status, out, err = run_cli(["rollout", START_ID, "--games", "1", "--truncate", "2"], capsys)
    assert out.splitlines()[-1] == "1 game truncated after 2 plies and scored by evaluation"


# --------------------------------------------------------------------------- 7. play: the Jacoby rule, commands


def _session(lines, **kwargs):
    output: list[str] = []
    script = list(lines)

    def read(prompt: str) -> str:
        if not script:
            raise EOFError
        return script.pop(0)

    result = play_session(load_agent(), np.random.default_rng(0), read, output.append, **kwargs)
    return result, output


#: You, on roll with 2-1, bear off your last checker; the engine has all 15 on its 6-point: a gammon.
LAST_CHECKER = pos(me={1: 1}, opp={6: 15})


@pytest.mark.parametrize(
    "jacoby, rules, won",
    [
        (
            True,
            "Money game with the doubling cube, the Jacoby rule (a gammon or backgammon counts as a single "
            "game until the cube is turned) and no beavers.",
            "You win a gammon: 1 point (the Jacoby rule: the cube was not turned).",
        ),
        (
            False,
            "Money game with the doubling cube, without the Jacoby rule (a gammon or backgammon counts in "
            "full with the cube centred too) and without beavers.",
            "You win a gammon: 2 points.",
        ),
    ],
)
def test_play_with_the_cube_says_its_rules_and_scores_by_them(jacoby, rules, won):
    result, output = _session(
        [], cube=True, jacoby=jacoby, start=LAST_CHECKER, start_dice=(2, 1), max_games=1
    )
    assert output[0] == rules
    assert won in output and result.points == (1 if jacoby else 2, 0)


def test_nard_play_jacoby_flag(capsys, monkeypatch):
    assert one_error_line(["play", "--jacoby"], capsys) == (
        "nard play: error: --jacoby needs --cube: without the cube gammons count in full"
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    status, out, _ = run_cli(["play", "--cube", "--jacoby", "--seed", "7"], capsys)
    assert status == 0 and out.splitlines()[1].startswith(
        "Money game with the doubling cube, the Jacoby rule"
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    status, out, _ = run_cli(["play", "--cube", "--seed", "7"], capsys)
    assert status == 0 and out.splitlines()[1].startswith(
        "Money game with the doubling cube, without the Jacoby"
    )
    with pytest.raises(ValueError, match="the Jacoby rule needs the cube"):
        _session([], jacoby=True)


def test_an_unknown_word_lists_the_commands():
    # resign is a command now (tests/test_play_resign.py); an unknown word lists it with the others
    _, output = _session(["undo", "quit"], first="human")
    assert (
        "  Unknown command 'undo': the commands are hint, board, resign, help and quit; type a play as "
        "13/7 8/7."
    ) in output
    assert output[-1] == "Bye."


def test_the_shipped_list_is_pyprojects_data_files_and_the_checkpoints_folder():
    """SHIPPED_CHECKPOINTS (the names found from any folder) must be the files pyproject.toml installs in
    share/nard_ai/checkpoints and the *.pt files the repository's checkpoints/ holds: a generation added to
    one and not the others would load by path only, or a name would point at no installed file."""
    import tomllib
    from pathlib import Path

    from nard_ai.model.network import SHIPPED_CHECKPOINTS

    root = Path(__file__).resolve().parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    installed = [Path(p).name for p in data["share/nard_ai/checkpoints"]]
    assert list(SHIPPED_CHECKPOINTS) == installed
    import subprocess

    try:  # the tracked files (a test run may leave other .pt files in a working copy)
        out = subprocess.run(
            ["git", "ls-files", "checkpoints"], cwd=root, capture_output=True, text=True, check=True
        )
        tracked = {Path(p).name for p in out.stdout.split() if p.endswith(".pt")}
    except (OSError, subprocess.CalledProcessError):  # no git: the folder as it is
        tracked = {p.name for p in (root / "checkpoints").glob("*.pt")}
    assert set(SHIPPED_CHECKPOINTS) == tracked
