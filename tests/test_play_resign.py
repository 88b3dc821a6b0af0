"""``nard play``'s ``resign`` command (:mod:`nard_ai.interfaces.terminal`) and ``load_agent``'s shipped names.

The rule under test is gnubg's (``ComputerTurn`` in gnubg's ``play.c``): the engine accepts a resignation
when accepting loses it nothing in equity, i.e. when the points the resignation gives it (1, 2 or 3 times
the cube, scored as a finished game) are at least its own equity playing on, at the ply it plays at
(cubeless without the cube in play, cubeful with it). Each test names the value it expects and where the
value comes from: an exact one where the game's result is certain, else the equity the code computes
(``nard hint``'s ``rank_plays``, ``nard cube``'s ``cube_decision``) with an independent bound.
"""

from __future__ import annotations

import io
import re
import sys

import numpy as np
import pytest
from conftest import run_cli

from nard_ai.core.board import pos, starting_board, swap_sides
from nard_ai.cube import CubeState, cube_decision
from nard_ai.formats.notation import parse_play
from nard_ai.formats.position_id import position_id
from nard_ai.interfaces.terminal import parse_resign, play_session, resignation_to_offer
from nard_ai.model.network import default_checkpoint_path, shipped_checkpoints
from nard_ai.search.loading import load_agent

pytestmark = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)

#: You (X) on roll, 14 checkers home and one borne off; the engine's last checker on its 1-point. You
#: cannot bear off 14 checkers in one roll and the engine bears off its last one with any roll: it wins
#: a single game for certain (no gammon: you have borne one off). Its equity is exactly +1 per cube.
SURE_SINGLE = pos(me={6: 5, 5: 5, 4: 4}, opp={1: 1})
#: All 15 of yours on your 12-point (outside both home boards), the engine's last checker on its
#: 1-point: no roll brings all 15 home, so the engine wins a gammon (not a backgammon) for certain: +2.
SURE_GAMMON = pos(me={12: 15}, opp={1: 1})
#: All 15 of yours on your 22-point, in the engine's home board: a backgammon for certain: +3.
SURE_BACKGAMMON = pos(me={22: 15}, opp={1: 1})
#: The engine on roll far ahead in a race (tests/test_cli.py's RACE_FAR_AHEAD): it doubles at 0 ply.
RACE_FAR_AHEAD = pos(me={6: 4, 5: 4, 4: 3, 3: 2, 2: 2}, opp={8: 3, 7: 3, 6: 3, 5: 2, 4: 2, 3: 2})

EQUITY = re.compile(r"nard's (cubeful|cubeless) equity playing on: ([+-]\d+\.\d{3})")


def _session(lines, ply: int = 0, **kwargs):
    """Play with scripted lines (as tests/test_cli_user_pass.py's ``_session``); end of script: end of input."""
    output: list[str] = []
    prompts: list[str] = []
    script = list(lines)

    def read(prompt: str) -> str:
        prompts.append(prompt)
        if not script:
            raise EOFError
        return script.pop(0)

    agent = load_agent(ply=ply)
    result = play_session(agent, np.random.default_rng(0), read, output.append, **kwargs)
    return result, output, prompts


def _offers(output):
    return [line for line in output if line.startswith("  You offer to resign")]


# --------------------------------------------------------------------------- the words


@pytest.mark.parametrize(
    "text, result",
    [
        ("resign", 1),
        ("RESIGN", 1),
        ("resign single", 1),
        ("resign s", 1),
        ("resign normal", 1),  # gnubg's word for a single game
        ("resign n", 1),
        ("resign gammon", 2),
        ("resign g", 2),
        ("resign  Backgammon", 3),
        ("resign b", 3),
        ("hint", None),
        ("13/7 8/7", None),
        ("r", None),  # r rolls at the cube prompt: never a resignation
    ],
)
def test_resign_words(text, result):
    assert parse_resign(text) == result


@pytest.mark.parametrize(
    "text, word", [("resign triple", "triple"), ("resign 7", "7"), ("resign g b", "g b")]
)
def test_resign_words_refused(text, word):
    with pytest.raises(ValueError) as info:
        parse_resign(text)
    assert str(info.value) == (
        f"cannot resign {word!r}: type resign (a single game), resign gammon or resign backgammon "
        "(or resign s, g, b)"
    )


@pytest.mark.parametrize("cube", [False, True])
def test_bad_resign_input_says_so_and_asks_again(cube):
    # at the move prompt (no cube) or the roll/double prompt (cube): the message, the same prompt, no crash
    lines = ["resign triple", "resign 7", "quit"]
    if cube:
        result, output, prompts = _session(lines, cube=True, start=SURE_SINGLE)
    else:
        result, output, prompts = _session(lines, start=SURE_SINGLE, start_dice=(2, 1))
    expected = "Roll or double? [r/d] " if cube else "Your move (2-1): "
    assert prompts == [expected] * 3
    for word in ("triple", "7"):
        assert (
            f"  Cannot resign {word!r}: type resign (a single game), resign gammon or resign backgammon "
            "(or resign s, g, b)."
        ) in output
    assert result.ended == "quit" and result.points == (0, 0) and not _offers(output)


# --------------------------------------------------------------------------- certain results: exact values


def test_a_sure_single_win_accepts_a_single_resignation():
    # value: +1 exactly (SURE_SINGLE); a single game gives 1 point: 1 >= 1, accepted
    result, output, _ = _session(["resign"], start=SURE_SINGLE, start_dice=(2, 1), max_games=1)
    assert _offers(output) == [
        "  You offer to resign a single game (1 point); nard's cubeless equity playing on: +1.000. nard accepts."
    ]
    assert "nard wins 1 point (you resigned)." in output
    assert "Session: you 0, nard 1 after 1 game." in output
    assert result.points == (0, 1) and result.games == 1 and result.ended == "done"


def test_a_sure_gammon_declines_a_single_and_accepts_a_gammon():
    # value: +2 exactly (SURE_GAMMON); a single (1) is less: declined, play goes on; a gammon (2): accepted
    result, output, prompts = _session(
        ["resign", "resign gammon"], start=SURE_GAMMON, start_dice=(6, 5), max_games=1
    )
    assert _offers(output) == [
        "  You offer to resign a single game (1 point); nard's cubeless equity playing on: +2.000, more than "
        "1 point: nard declines. Play on.",
        "  You offer to resign a gammon (2 points); nard's cubeless equity playing on: +2.000. nard accepts.",
    ]
    assert prompts == ["Your move (6-5): "] * 2  # declined: the same prompt again
    assert result.points == (0, 2)


def test_a_sure_backgammon_accepts_only_a_backgammon():
    # value: +3 exactly (SURE_BACKGAMMON): 1 and 2 points are declined, 3 accepted
    result, output, _ = _session(
        ["resign s", "resign g", "resign b"], start=SURE_BACKGAMMON, start_dice=(6, 5), max_games=1
    )
    offers = _offers(output)
    assert [EQUITY.search(line).group(2) for line in offers] == ["+3.000"] * 3
    assert [line.endswith("nard declines. Play on.") for line in offers] == [True, True, False]
    assert offers[-1].endswith("nard accepts.") and result.points == (0, 3)


@pytest.mark.parametrize(
    "jacoby, single",
    [
        (False, "declines"),  # a gammon counts 2 with the cube centred: +2 > 1
        (True, "accepts"),  # the Jacoby rule: a gammon counts single while the cube is centred: +1
    ],
)
def test_with_the_cube_the_rule_reads_the_cubeful_equity_before_the_roll(jacoby, single):
    # resigning at the roll/double prompt (no roll yet): the engine's equity is minus your cube_decision's
    # optimal equity; SURE_GAMMON's is -2 without the Jacoby rule and -1 with it (the engine bears off
    # next turn, a gammon counted single with the cube centred; doubling you out is 1 point too)
    result, output, prompts = _session(
        ["resign", "resign gammon"], cube=True, jacoby=jacoby, start=SURE_GAMMON, max_games=1
    )
    offers = _offers(output)
    assert prompts[0] == "Roll or double? [r/d] "
    assert EQUITY.search(offers[0]).groups() == ("cubeful", "+1.000" if jacoby else "+2.000")
    assert f"nard {single}" in offers[0]
    assert result.points == (0, 1 if jacoby else 2)


def test_a_turned_cube_multiplies_the_points_and_the_equity():
    # the engine owns a 2-cube: SURE_GAMMON is worth 2 x 2 = 4 to it (cubeful, your move prompt); a single
    # resignation is 2 points (declined), a gammon 4 (accepted)
    result, output, _ = _session(
        ["resign", "resign gammon"],
        cube=True,
        start=SURE_GAMMON,
        start_dice=(6, 5),
        start_cube=CubeState(value=2, owner="opponent"),
        max_games=1,
    )
    offers = _offers(output)
    assert offers[0].startswith(
        "  You offer to resign a single game (2 points); nard's cubeful equity playing on: +4.000"
    )
    assert offers[0].endswith("nard declines. Play on.")
    assert offers[1].startswith("  You offer to resign a gammon (4 points)") and offers[1].endswith(
        "nard accepts."
    )
    assert "nard wins 4 points (you resigned)." in output and result.points == (0, 4)


def test_resigning_a_single_game_when_doubled_is_accepted():
    # at the take/pass prompt the engine weighs min(double/take, double/pass) x cube; a pass is +1 per
    # cube, so a single game (1 point at cube 1) is never less: accepted, the same points as a pass
    result, output, prompts = _session(
        ["resign"], first="engine", cube=True, start=RACE_FAR_AHEAD, max_games=1
    )
    assert "nard doubles to 2." in output and prompts == ["Take or pass? [t/p] "]
    equity = float(EQUITY.search(_offers(output)[0]).group(2))
    assert equity <= 1.0 and _offers(output)[0].endswith("nard accepts.")
    assert result.points == (0, 1)


# --------------------------------------------------------------------------- the opening: the computed equity


@pytest.mark.parametrize("ply", [0, 1])
def test_at_the_opening_a_single_resignation_is_accepted_at_the_engines_ply(ply):
    """The engine's equity after your opening roll is minus your best play's equity at its own ply
    (``rank_plays``, ``nard hint``'s ranking): far below the 1 point a single game gives it, so it accepts.
    Sanity bound, independent of the network: no opening roll is worth half a game to either side (the
    best, 6-6 for the roller, is about +0.4 in gnubg's and this network's figures), so |equity| < 0.6."""
    agent = load_agent(ply=ply)
    dice = (4, 3)  # the opening roll of first="human" with np.random.default_rng(0) (asserted below)
    expected = -float(agent.rank_plays(starting_board(), dice).equity[0])
    assert abs(expected) < 0.6
    result, output, prompts = _session(["resign", "y", "resign"], ply=ply, first="human", max_games=2)
    assert prompts[0] == "Your move (4-3): "
    offers = _offers(output)
    kind, shown = EQUITY.search(offers[0]).groups()
    assert kind == "cubeless" and shown == f"{expected:+.3f}" and offers[0].endswith("nard accepts.")
    # the session's totals count a resigned game as any other: two games, 1 point each
    assert (
        "Session: you 0, nard 1 after 1 game." in output and "Session: you 0, nard 2 after 2 games." in output
    )
    assert result.points == (0, 2) and result.games == 2


def test_at_the_opening_with_the_cube_the_equity_is_cubeful_after_your_best_play():
    # cubeful: the engine's cube_decision optimal equity on roll after your best 4-3 (nard cube's figure)
    agent = load_agent()
    best = agent.rank_plays(starting_board(), (4, 3)).afterstates[0]
    expected = cube_decision(swap_sides(best), CubeState(), agent=agent).optimal
    assert abs(expected) < 0.6  # the same sanity bound as the cubeless test
    _, output, _ = _session(["resign", "quit"], first="human", cube=True)
    assert EQUITY.search(_offers(output)[0]).groups() == ("cubeful", f"{expected:+.3f}")


def test_a_declined_resignation_leaves_the_game_as_it_was():
    # after a decline the same roll is still yours to play, and a play goes through
    result, output, prompts = _session(
        ["resign", "12/6 12/7"], start=SURE_GAMMON, start_dice=(6, 5), max_games=1
    )
    assert "nard declines" in _offers(output)[0]
    assert parse_play(SURE_GAMMON, "12/6 12/7", (6, 5)) is not None
    assert prompts[:2] == ["Your move (6-5): "] * 2 and "nard rolls" in "\n".join(output)
    assert result.points == (0, 2)  # the engine then bears off its last checker: the gammon


# --------------------------------------------------------------------------- the command line


def test_nard_play_resigns_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("resign\nresign gammon\n"))
    # with --cube you are asked before your roll (without it this roll could leave no prompt: all 15
    # checkers on one point give a single play for some rolls)
    argv = ["play", "--position", position_id(SURE_GAMMON), "--cube", "--seed", "1", "--games", "1"]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err
    assert "Roll or double? [r/d] " in out
    assert "nard's cubeful equity playing on: +2.000, more than 1 point: nard declines. Play on." in out
    assert (
        "You offer to resign a gammon (2 points); nard's cubeful equity playing on: +2.000. nard accepts."
        in out
    )
    assert "Session: you 0, nard 2 after 1 game." in out
    status, out, _ = run_cli(["play", "--help"], capsys)
    assert status == 0 and "resign [single|gammon|backgammon]" in " ".join(out.split())


# --------------------------------------------------------------------------- the engine offers to resign
#
# gnubg's rule (getResignation in eval.c, from ComputerTurn in play.c): at its turn, before its cube decision
# and roll, the engine offers the smallest resignation whose points equal its equity playing on within 1e-6
# (resigning loses it nothing, accepting loses you nothing). The positions below are the sure results above
# seen from the engine's side: with first="engine" the start position is the engine's view, so in SURE_SINGLE
# the engine is the side with 14 checkers home and one off, and loses a single game for certain.

ACCEPT = "Accept? [y/n] "


def _engine_offers(output):
    return [line for line in output if line.startswith("nard offers to resign")]


@pytest.mark.parametrize(
    "equity, points, expected",
    [
        (-1.0, (1, 2, 3), 1),  # a single game lost for certain: 1 point
        (-2.0, (1, 2, 3), 2),  # a gammon: not 1 (you would lose a point accepting), 2
        (-3.0, (1, 2, 3), 3),
        (-2.9999990463, (1, 2, 3), 3),  # within 1e-6: the 0-ply network's SURE_BACKGAMMON, measured
        (-0.99999, (1, 2, 3), None),  # 1e-5 of a chance to win: resigning would cost the engine
        (-1.5, (1, 2, 3), None),  # a single or a gammon: worth playing on to escape the gammon
        (-0.3, (1, 2, 3), None),
        (-1.0, (1, 1, 1), 1),  # the Jacoby rule, cube centred: all count 1, the smallest (gnubg returns 1)
        (-4.0, (2, 4, 6), 2),  # a 2-cube: a gammon is 4 points
        (-2.0, (2, 4, 6), 1),
    ],
)
def test_the_resignation_to_offer(equity, points, expected):
    assert resignation_to_offer(equity, lambda r: points[r - 1]) == expected


def test_a_sure_single_loss_offers_one_point_and_accepting_scores_it():
    # value: the engine's equity is -1 exactly (the bear-off database: it cannot bear off 14 checkers in one
    # roll, you bear off your last with any roll; it has one off, so no gammon): it offers a single game
    result, output, prompts = _session(["y"], first="engine", start=SURE_SINGLE, max_games=1)
    assert prompts == [ACCEPT]
    assert _engine_offers(output) == [
        "nard offers to resign a single game (1 point); its cubeless equity playing on: -1.000."
    ]
    assert "You win 1 point (nard resigned)." in output
    assert "Session: you 1, nard 0 after 1 game." in output
    assert result.points == (1, 0) and result.games == 1 and result.ended == "done"
    assert not any(line.startswith("nard rolls") for line in output)  # the offer comes before its roll


def test_a_declined_offer_plays_on_to_the_game_the_rules_give():
    # declined (after an answer that is neither y nor n, asked again): the engine rolls and plays, your last
    # checker comes off (a forced play), and you win the single game by the rules: 1 point
    result, output, prompts = _session(["maybe", "n"], first="engine", start=SURE_SINGLE, max_games=1)
    assert prompts == [ACCEPT, ACCEPT]
    assert "  'maybe': type y to accept (1 point to you) or n to play on." in output
    assert "You decline a single game: play on." in output
    assert any(line.startswith("nard rolls") for line in output)
    assert "You win a single game: 1 point." in output and result.points == (1, 0)


def test_a_declined_offer_is_not_made_again_in_the_game():
    # 14 of the engine's checkers home (one off), 4 of yours on your 1-point: you finish in two rolls at
    # most, it needs four: a single game lost for certain (the bear-off database: -1 exactly) on each of
    # its turns; declined on the first, not offered on the second (gnubg offers again each turn)
    start = pos(me={6: 5, 5: 5, 4: 4}, opp={1: 4})
    result, output, prompts = _session(["n"], first="engine", start=start, max_games=1)
    assert sum(line.startswith("nard rolls") for line in output) == 2  # two turns of the engine
    assert prompts == [ACCEPT] and len(_engine_offers(output)) == 1
    assert "You win a single game: 1 point." in output and result.points == (1, 0)


@pytest.mark.parametrize(
    "start, what, points, equity",
    [
        # SURE_GAMMON from the engine's side: 15 on its 12-point, outside its home board; you bear off your
        # last checker next roll: a gammon for certain (not a backgammon: none in your home board). The 0-ply
        # network says -1.99999999994 (the sanity rules zero the backgammon), within 1e-6 of -2
        (SURE_GAMMON, "a gammon", 2, "-2.000"),
        # SURE_BACKGAMMON: 15 in your home board: a backgammon for certain; 0-ply: -2.9999990, within 1e-6
        (SURE_BACKGAMMON, "a backgammon", 3, "-3.000"),
    ],
)
def test_a_sure_gammon_or_backgammon_offers_its_points(start, what, points, equity):
    result, output, _ = _session(["y"], first="engine", start=start, max_games=1)
    assert _engine_offers(output) == [
        f"nard offers to resign {what} ({points} points); its cubeless equity playing on: {equity}."
    ]
    assert result.points == (points, 0)


@pytest.mark.parametrize("first, lines", [("engine", ["quit"]), ("human", ["24/20 13/10", "quit"])])
def test_the_opening_never_offers(first, lines):
    # value: the engine's equity before its first roll is far from -1, -2, -3: at the starting position
    # (first="engine", valued before the roll as gnubg does) it is the 0-ply network's, checked here; after
    # your opening 4-3, within the bound of the opening tests above (|equity| < 0.6). No resignation's points
    # are within 1e-6 of minus it: no offer, and the game goes on to your next move prompt
    assert abs(float(load_agent().value(starting_board()[None]).equity[0])) < 0.6
    result, output, prompts = _session(lines, first=first)
    assert len(prompts) == len(lines) and all(p.startswith("Your move (") for p in prompts)
    assert ACCEPT not in prompts and not _engine_offers(output)
    assert any(line.startswith("nard rolls") for line in output) and result.ended == "quit"


@pytest.mark.parametrize(
    "start, owner, what, points",
    [
        # you own a 2-cube: the engine's cubeful equity is 2 x -1 = -2 (SURE_SINGLE), a single game 2 points
        (SURE_SINGLE, "opponent", "a single game", 2),
        # the engine owns a 2-cube: SURE_GAMMON is 2 x -2 = -4, a gammon 4 points
        (SURE_GAMMON, "on_roll", "a gammon", 4),
    ],
)
def test_with_the_cube_the_offer_scales_by_the_cube_value(start, owner, what, points):
    result, output, _ = _session(
        ["y"],
        first="engine",
        cube=True,
        start=start,
        start_cube=CubeState(value=2, owner=owner),
        max_games=1,
    )
    assert _engine_offers(output) == [
        f"nard offers to resign {what} ({points} points); its cubeful equity playing on: {-points:+.3f}."
    ]
    assert f"You win {points} points (nard resigned)." in output and result.points == (points, 0)


def test_under_the_jacoby_rule_a_sure_gammon_offers_a_single_game():
    # the Jacoby rule with the cube centred: the gammon counts single, the engine's cubeful equity is -1
    # (as at your roll/double prompt above), and every resignation is 1 point: the smallest, a single
    # game, as gnubg's getResignation returns 1 there
    result, output, _ = _session(
        ["y"], first="engine", cube=True, jacoby=True, start=SURE_GAMMON, max_games=1
    )
    assert _engine_offers(output) == [
        "nard offers to resign a single game (1 point); its cubeful equity playing on: -1.000."
    ]
    assert result.points == (1, 0)


def test_nard_play_offers_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    argv = ["play", "--position", position_id(SURE_SINGLE), "--first", "engine", "--games", "1"]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err
    assert "nard offers to resign a single game (1 point); its cubeless equity playing on: -1.000." in out
    assert "Accept? [y/n] You win 1 point (nard resigned)." in out
    assert "Session: you 1, nard 0 after 1 game." in out
    status, out, _ = run_cli(["play", "--help"], capsys)
    assert status == 0 and "The engine offers to resign" in " ".join(out.split())


# --------------------------------------------------------------------------- load_agent: shipped names


def test_load_agent_resolves_a_shipped_name_from_any_folder(monkeypatch, tmp_path):
    # the library call resolves bare shipped names as the command lines do (model.network.resolve_checkpoint)
    monkeypatch.chdir(tmp_path)
    folder, names = shipped_checkpoints()
    assert "nard-td198.pt" in names
    agent = load_agent("nard-td198.pt", ply=0)
    assert agent.name == "nard-td198.pt:0"
    same = load_agent(folder / "nard-td198.pt", ply=0)
    board = starting_board()[None]
    np.testing.assert_array_equal(agent.value(board).probs, same.value(board).probs)
    # a name that is not shipped is still a missing file
    with pytest.raises(FileNotFoundError):
        load_agent("nard-none.pt")


def test_the_engines_turn_searches_its_cube_decision_once(monkeypatch):
    # at its turn with the cube the engine weighs resigning (its cubeful equity on roll, cube_decision's
    # optimal) and then doubling (cube_decision's action): the same board and cube, so one search serves
    # both (_Session.decide_cube); RACE_FAR_AHEAD: it doubles at 0 ply (above) and you pass
    import nard_ai.interfaces.terminal as terminal

    calls = []

    def counted(board, state, agent):
        calls.append(position_id(board))
        return cube_decision(board, state, agent=agent)

    monkeypatch.setattr(terminal, "cube_decision", counted)
    result, output, _ = _session(["p"], first="engine", cube=True, start=RACE_FAR_AHEAD, max_games=1)
    assert "nard doubles to 2." in output and result.points == (0, 1)  # (you, the engine)
    assert calls == [position_id(RACE_FAR_AHEAD)]
