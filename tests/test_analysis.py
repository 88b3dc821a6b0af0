"""Match analysis (:mod:`nard_ai.reports.analysis`): units, skill marks, which decisions count, error rates.

Most tests use a fake agent with hand-set probabilities, so every expected
loss is worked out by hand from the cube model's formulas (Janowski's
interpolation, ``nard_ai/cube.py``'s module docstring) or from the ranking the
fake imposes. One test runs the shipped network over ``tests/data/match_3pt.mat``
and checks what the rules fix whatever the network: which decisions exist,
which are forced, and the Crawford game's lack of cube decisions (RULES.md 8).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from nard_ai.core.board import starting_board
from nard_ai.core.movegen import legal_plays
from nard_ai.cube import CENTRED, ON_ROLL, OPPONENT, CubeState
from nard_ai.cube.met import match_equity_after
from nard_ai.formats.mat import ActionKind, read_mat
from nard_ai.formats.match_id import MatchState
from nard_ai.model.network import default_checkpoint_path
from nard_ai.reports.analysis import (
    GNUBG_LEGACY_SKILL,
    GNUBG_SKILL,
    Decision,
    MatchAnalysis,
    PlayerStats,
    SkillThresholds,
    analyze_match,
    checker_mwc,
    checker_values,
    count_records,
    cube_state_of,
    format_analysis,
    mwc_to_emg,
    read_position,
    score_plays,
)
from nard_ai.search.lookahead import RankedPlays

START_ID = "4HPwATDgc/ABMA"
REPO_MAT = "tests/data/match_3pt.mat"


def _gnubg_executable() -> str | None:
    """The GNU Backgammon program (Debian installs it as /usr/games/gnubg), or None."""
    return shutil.which("gnubg") or shutil.which("/usr/games/gnubg")


# --------------------------------------------------------------------------- a fake agent


class FakeAgent:
    """Values plays by their index in ``legal_plays`` order and every position the same.

    The ``k``-th legal play (generator order) gets win chance ``0.40 + 0.01 k`` and no
    gammons, so its cubeless equity is ``2 (0.40 + 0.01 k) - 1`` and the last play is best.
    ``evaluate`` returns ``position_probs`` for every board.
    """

    ply = 0
    name = "fake"

    def __init__(self, position_probs=(0.5, 0.0, 0.0, 0.0, 0.0)) -> None:
        self.position_probs = np.asarray(position_probs, dtype=np.float32)

    def play_probs(self, n: int) -> np.ndarray:
        probs = np.zeros((n, 5), dtype=np.float32)
        probs[:, 0] = 0.40 + 0.01 * np.arange(n)
        return probs

    def rank_plays(self, board, dice) -> RankedPlays:
        plays = legal_plays(board, dice)
        probs = self.play_probs(len(plays))
        equity = 2.0 * probs[:, 0] - 1.0
        order = np.argsort(-equity, kind="stable")
        return RankedPlays(afterstates=plays[order], probs=probs[order], equity=equity[order])

    def value(self, boards):
        probs = np.tile(self.position_probs, (len(boards), 1))
        return probs, 2.0 * probs[:, 0] - 1.0 + probs[:, 1] + probs[:, 2] - probs[:, 3] - probs[:, 4]


class GammonChaser:
    """Ranks plays for money with a gammonish play first and a safer play second (hand-set numbers).

    In ``legal_plays`` order: play 0 wins 60% with 30% gammons (cubeless equity
    2 x 0.6 - 1 + 0.3 = +0.5), play 1 wins 65% without gammons (+0.3), every
    other play wins 30% (-0.4). For money play 0 is best; at double match
    point, where only winning counts (MWC = win chance), play 1 is.
    Needs a roll with at least two legal plays.
    """

    ply = 0
    name = "gammon-chaser"

    def rank_plays(self, board, dice) -> RankedPlays:
        plays = legal_plays(board, dice)
        probs = np.zeros((len(plays), 5), dtype=np.float32)
        probs[:, 0] = 0.30
        probs[0] = (0.60, 0.30, 0.0, 0.0, 0.0)
        probs[1] = (0.65, 0.0, 0.0, 0.0, 0.0)
        equity = 2.0 * probs[:, 0] - 1.0 + probs[:, 1] + probs[:, 2] - probs[:, 3] - probs[:, 4]
        order = np.argsort(-equity, kind="stable")
        return RankedPlays(afterstates=plays[order], probs=probs[order], equity=equity[order])


#: A money session: alice opens 31, bob doubles, alice takes, bob rolls 52, alice redoubles, bob drops.
CUBE_SESSION = """ 0 point match

 Game 1
 alice : 0                      bob : 0
  1) 31: 8/5 6/5                 Doubles => 2
  2)  Takes                      52: 13/11 13/8
  3)  Doubles => 4               Drops
      Wins 2 points
"""


# --------------------------------------------------------------------------- skill thresholds


@pytest.mark.parametrize(
    "loss, mark",
    [
        (0.0, ""),
        (0.03, ""),  # gnubg Skill(): a mark needs r < -threshold, so exactly 0.03 is unmarked
        (0.0301, "doubtful"),
        (0.06, "doubtful"),
        (0.0601, "bad"),
        (0.12, "bad"),
        (0.1201, "very bad"),
        (2.0, "very bad"),
    ],
)
def test_skill_marks_follow_gnubgs_strict_thresholds(loss, mark):
    assert GNUBG_SKILL.classify(loss) == mark


def test_skill_threshold_presets_are_gnubgs():
    # gnubg 1.07.001 `show analysis`: -0.030 doubtful, -0.060 bad, -0.120 very bad;
    # gnubg.c arSkillLevel before 1.07: 0.16 very bad, 0.08 bad, 0.04 doubtful.
    assert (GNUBG_SKILL.doubtful, GNUBG_SKILL.bad, GNUBG_SKILL.very_bad) == (0.03, 0.06, 0.12)
    assert (GNUBG_LEGACY_SKILL.doubtful, GNUBG_LEGACY_SKILL.bad, GNUBG_LEGACY_SKILL.very_bad) == (
        0.04,
        0.08,
        0.16,
    )
    with pytest.raises(ValueError, match="rise"):
        SkillThresholds(0.1, 0.05, 0.2)
    with pytest.raises(ValueError, match=">= 0"):
        SkillThresholds(-0.01, 0.05, 0.2)


@pytest.mark.skipif(_gnubg_executable() is None, reason="the gnubg program is not installed")
def test_default_thresholds_match_the_installed_gnubg():
    exe = _gnubg_executable()
    out = subprocess.run(
        [exe, "-t", "-q", "-r"], input="show analysis\nquit\n", capture_output=True, text=True, timeout=120
    ).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-1] in ("doubtful", "bad") and parts[0].startswith("-"):
            found[parts[-1] if parts[-2] != "very" else "very bad"] = -float(parts[0])
        if len(parts) == 3 and parts[1:] == ["very", "bad"]:
            found["very bad"] = -float(parts[0])
    if not found:
        pytest.skip("this gnubg prints no analysis thresholds")
    assert found == {
        "doubtful": GNUBG_SKILL.doubtful,
        "bad": GNUBG_SKILL.bad,
        "very bad": GNUBG_SKILL.very_bad,
    }


# --------------------------------------------------------------------------- positions and cube states


def test_read_position_takes_all_three_id_forms():
    start = starting_board()
    board, state = read_position(START_ID)
    assert (board == start).all() and state is None
    board, state = read_position(f"  {START_ID}:cAkAAAAAAAAE ")
    assert (board == start).all() and state == MatchState()
    board, state = read_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10")
    assert (board == start).all() and state.dice == (5, 2)
    # the XGID= prefix is optional when all ten fields are there
    board, state = read_position("-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    assert (board == start).all() and state == MatchState()


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty"),
        ("4HPwATDgc", "14 characters"),
        (f"{START_ID}:nope", "Match ID"),
        ("XGID=-b----E-C:0:0", "10 ':'-separated fields"),
    ],
)
def test_read_position_rejects_malformed_ids(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        read_position(text)


def test_cube_state_is_seen_from_the_player_on_roll():
    # gnubg seats: score is (player 0, player 1); player 1 on roll owns nothing, player 0 owns a 2-cube.
    state = MatchState(cube_value=2, cube_owner=0, player_on_roll=1, turn=1, match_length=5, score=(3, 2))
    cube = cube_state_of(state)
    assert (cube.value, cube.owner, cube.match_length, cube.score) == (2, OPPONENT, 5, (2, 3))
    assert (cube.away, cube.opp_away) == (3, 2)
    mine = MatchState(cube_value=4, cube_owner=1, player_on_roll=1, turn=1)
    assert cube_state_of(mine).owner == ON_ROLL and cube_state_of(mine).is_money
    assert cube_state_of(None) == CubeState() and cube_state_of(MatchState()).owner == CENTRED
    with pytest.raises(ValueError, match="match_length"):
        cube_state_of(MatchState(match_length=31))  # the MET stops at 25


# --------------------------------------------------------------------------- checker values


def test_money_checker_value_is_cubeless_equity():
    # gnubg Utility(): 2 win - 1 + win_g + win_bg - lose_g - lose_bg = 1.2 - 1 + 0.2 + 0.01 - 0.1 - 0.005
    probs = np.array([[0.6, 0.2, 0.01, 0.1, 0.005]])
    assert checker_values(probs) == pytest.approx([0.305])
    # the cube value does not scale it: losses are per unit cube (EMG)
    assert checker_values(probs, CubeState(value=4, owner=ON_ROLL)) == pytest.approx([0.305])


def test_match_checker_value_ignores_gammons_at_double_match_point():
    # 3-point match at 2-2: whoever wins the game wins the match, so MWC = win chance
    # and the normalised equity 2 (mwc - 0) / (1 - 0) - 1 = 2 win - 1, gammons or not.
    dmp = CubeState.for_match(3, (2, 2))
    probs = np.array([[0.6, 0.0, 0.0, 0.0, 0.0], [0.6, 0.5, 0.2, 0.3, 0.1]])
    assert checker_values(probs, dmp) == pytest.approx([0.2, 0.2])


def test_match_checker_value_is_plus_minus_one_for_a_sure_single_game():
    cube = CubeState.for_match(7, (2, 4))
    assert checker_values(np.array([[1.0, 0, 0, 0, 0], [0.0, 0, 0, 0, 0]]), cube) == pytest.approx(
        [1.0, -1.0]
    )
    # a sure gammon is worth more than +1: the MWC of winning 2 points (5-away -> 3-away against 3-away)
    win = match_equity_after(5, 3, 1)
    lose = match_equity_after(5, 3, -1)
    gammon = match_equity_after(5, 3, 2)
    expected = 2 * (gammon - lose) / (win - lose) - 1
    assert checker_values(np.array([[1.0, 1.0, 0, 0, 0]]), cube) == pytest.approx([expected])
    assert expected > 1.0
    with pytest.raises(ValueError, match=r"\(M, 5\)"):
        checker_values(np.zeros(5), cube)


def test_checker_mwc_at_dmp_is_the_win_chance_and_emg_is_two_win_minus_one():
    # 5-point match at 4-4 (double match point): every win wins the match (MWC 1), every loss loses it
    dmp = CubeState.for_match(5, (4, 4))
    probs = np.array([[0.6, 0.3, 0.0, 0.0, 0.0], [0.65, 0.0, 0.0, 0.0, 0.0]])
    assert checker_mwc(probs, dmp) == pytest.approx([0.6, 0.65])
    assert mwc_to_emg(np.array([0.6, 0.65]), dmp) == pytest.approx([0.2, 0.3])  # W = 1, L = 0
    with pytest.raises(ValueError, match="match-play"):
        checker_mwc(probs, CubeState())


def test_score_plays_ranks_by_mwc_in_a_match_and_keeps_the_money_order():
    """GammonChaser: for money the gammonish play (+0.5) beats the safe one (+0.3); at DMP the safe one wins."""
    board = starting_board()
    ranked = GammonChaser().rank_plays(board, (3, 1))
    plays = legal_plays(board, (3, 1))
    money = score_plays(ranked, None)
    assert not money.by_mwc and money.ranked_by == "cubeless equity" and money.mwc is None
    assert np.array_equal(money.afterstates[0], plays[0]) and money.equity[0] == pytest.approx(0.5)
    assert money.diff[1] == pytest.approx(0.3 - 0.5)  # gnubg's sign: the difference from the best, < 0
    assert np.array_equal(
        score_plays(ranked, CubeState(value=2, owner=ON_ROLL)).afterstates, money.afterstates
    )

    dmp = score_plays(ranked, CubeState.for_match(5, (4, 4)))
    assert dmp.by_mwc and dmp.ranked_by == "cubeless MWC at the score"
    assert np.array_equal(dmp.afterstates[0], plays[1]) and np.array_equal(dmp.afterstates[1], plays[0])
    assert dmp.mwc[:2] == pytest.approx([0.65, 0.60])
    assert dmp.emg[:2] == pytest.approx([0.3, 0.2])
    assert dmp.diff[1] == pytest.approx(-0.05)
    assert dmp.equity[0] == pytest.approx(0.3)  # the money equity travels with its play
    # 0-0 in a 5-point match a gammon is worth 2 points of 5: the gammonish play is best again,
    # by its MWC from the Kazaross-XG2 table (5-away vs 5-away)
    cube = CubeState.for_match(5, (0, 0))
    expected = [
        0.3 * match_equity_after(5, 5, 1)
        + 0.3 * match_equity_after(5, 5, 2)
        + 0.4 * match_equity_after(5, 5, -1),
        0.65 * match_equity_after(5, 5, 1) + 0.35 * match_equity_after(5, 5, -1),
    ]
    early = score_plays(ranked, cube)
    assert np.array_equal(early.afterstates[0], plays[0]) and early.mwc[:2] == pytest.approx(expected)


def test_score_plays_keeps_deeper_plays_first():
    # a 1-ply search ranks the plays its filter valued at 1-ply above those left at 0-ply (gnubg's hint order)
    afterstates = legal_plays(starting_board(), (3, 1))[:3]
    probs = np.array([[0.5, 0, 0, 0, 0], [0.55, 0, 0, 0, 0], [0.9, 0, 0, 0, 0]], dtype=np.float32)
    ranked = RankedPlays(afterstates, probs, 2 * probs[:, 0] - 1, plies=np.array([1, 1, 0]))
    scored = score_plays(ranked, CubeState.for_match(3, (2, 2)))
    assert scored.plies.tolist() == [1, 1, 0] and scored.mwc == pytest.approx([0.55, 0.5, 0.9])


# --------------------------------------------------------------------------- the analysis, by hand


def test_cube_session_losses_are_the_hand_worked_janowski_numbers():
    """Every position valued 50% with no gammons, contact cube efficiency x = 0.68.

    Money, centred cube, p = 0.5, W = L = 1: Janowski's take point 0.5 / 2.5 = 0.2 and
    cash point 2 / 2.5 = 0.8. No double: dead 0, live 0 -> 0. Double/take: the opponent owns
    the cube, live = -1 + 2 (0.5 - 0.2) / 0.8 = -0.25, so 2 x 0.68 x -0.25 = -0.34; double/pass
    +1. Right: no double, take; doubling costs 0 - (-0.34) = 0.34, taking costs 0, passing
    1 - (-0.34) = 1.34. With the cube owned by the side on roll (alice's redouble) live =
    -1 + 2 x 0.5 / 0.8 = 0.25, no double = 0.68 x 0.25 = 0.17, so the redouble costs 0.51 and
    bob's drop 1.34.
    """
    match = read_mat(CUBE_SESSION)
    agent = FakeAgent()
    seen = []
    result = analyze_match(match, agent, progress=seen.append)
    assert seen == list(range(1, count_records(match) + 1)) and count_records(match) == 6
    kinds = [(d.player, d.kind) for d in result.decisions]
    # bob has no missed-double decision before his 52: alice owns the cube then
    assert kinds == [(0, "checker"), (1, "double"), (0, "take"), (1, "checker"), (0, "double"), (1, "pass")]
    by_kind = {(d.player, d.kind): d for d in result.decisions}
    assert by_kind[1, "double"].loss == pytest.approx(0.34, abs=1e-6)
    assert by_kind[1, "double"].skill == "very bad" and by_kind[1, "double"].best == "No double, take"
    assert by_kind[0, "take"].loss == pytest.approx(0.0, abs=1e-9) and by_kind[0, "take"].skill == ""
    assert by_kind[0, "double"].loss == pytest.approx(0.51, abs=1e-6)
    assert by_kind[1, "pass"].loss == pytest.approx(1.34, abs=1e-6)
    assert all(d.counted for d in result.decisions if d.kind != "checker")  # doubles, takes, passes are close
    assert all(d.loss_mwc is None for d in result.decisions)  # money play

    # the fake's best is the last legal play; a play made k places before it loses 2 x 0.01 x k
    alice_checker, bob_checker = by_kind[0, "checker"], by_kind[1, "checker"]
    for decision, action in (
        (alice_checker, match.games[0].actions[0]),
        (bob_checker, match.games[0].actions[3]),
    ):
        plays = legal_plays(action.board, action.dice)
        k = int(np.flatnonzero((plays == action.afterstate).all(axis=1))[0])
        assert decision.loss == pytest.approx(0.02 * (len(plays) - 1 - k), abs=1e-6)
        assert decision.plays == len(plays) and decision.counted
    assert alice_checker.plays == 16  # the opening 3-1 (README)

    alice, bob = result.stats
    assert (alice.moves, alice.unforced, alice.cube_decisions, alice.close_cube) == (1, 1, 2, 2)
    assert alice.checker_rate == pytest.approx(1000 * alice_checker.loss)
    assert alice.cube_rate == pytest.approx(1000 * 0.51 / 2, abs=1e-3)
    assert alice.error_rate == pytest.approx(1000 * (alice_checker.loss + 0.51) / 3, abs=1e-3)
    assert bob.cube_loss == pytest.approx(0.34 + 1.34, abs=1e-6)
    assert bob.marks["very bad"] == 2 + (bob_checker.loss > 0.12)


def test_a_missed_double_is_a_no_double_decision_and_a_forced_roll_is_not_counted():
    """Every position valued 95% with no gammons: double/pass is right, so each roll not doubled loses.

    Money, centred cube, p = 0.95, W = L = 1: above the cash point 0.8 the live value is the
    cash, +1, and the dead value is 2 x 0.95 - 1 = 0.9, so no double = (1 - x) 0.9 + x < 1 =
    double/pass, while double/take = 2 ((1 - x) 0.9 + x 0.875) > 1 (live -1 + 2 x 0.75 / 0.8
    with the opponent owning the cube): the opponent passes. Not doubling costs 1 - ND = 0.1 (1 - x).
    """
    text = """ 0 point match

 Game 1
 alice : 0                      bob : 0
  1) 31: 8/5 6/5                 52: 24/22 13/8
  2) 64: 24/14                   66: 24/18 22/16 13/7(2)
      Wins 1 point
"""
    match = read_mat(text)
    agent = FakeAgent(position_probs=(0.95, 0.0, 0.0, 0.0, 0.0))
    result = analyze_match(match, agent)
    missed = [d for d in result.decisions if d.kind == "no_double"]
    # bob's 52, alice's 64 and bob's 66 come after the opening roll with a centred cube
    assert [(d.player, d.turn) for d in missed] == [(1, 2), (0, 3), (1, 4)]
    for d in missed:
        x = d.cube.efficiency
        assert d.loss == pytest.approx(0.1 * (1 - x), abs=1e-6)
        assert d.best == "Double, pass"
    assert "no_double" not in [d.kind for d in result.decisions if d.turn == 1]  # not before the opening roll


def test_analysis_json_and_text_carry_every_decision():
    match = read_mat(CUBE_SESSION)
    result = analyze_match(match, FakeAgent())
    data = result.to_dict()
    assert data["match_length"] == 0 and data["players"] == ["alice", "bob"]
    assert [d["kind"] for d in data["decisions"]] == [
        "checker",
        "double",
        "take",
        "checker",
        "double",
        "pass",
    ]
    assert data["decisions"][1]["equities"]["double_pass"] == 1.0
    assert data["stats"][1]["cube_loss"] == pytest.approx(1.68, abs=1e-5)
    text = format_analysis(result)
    assert "Double" in text and "??" in text and "right: No double, take" in text
    assert "overall error rate" in text
    only = format_analysis(result, errors_only=True)
    assert " Take " in text and " Take " not in only  # alice's right take has no mark


def test_errors_only_json_lists_only_marked_decisions_with_complete_totals():
    result = analyze_match(read_mat(CUBE_SESSION), FakeAgent())
    full, only = result.to_dict(), result.to_dict(errors_only=True)
    marked = [d for d in full["decisions"] if d["skill"]]
    assert marked and len(marked) < len(full["decisions"])  # the session has right and wrong decisions
    assert only["decisions"] == marked and only["errors_only"] and not full["errors_only"]
    assert only["stats"] == full["stats"]


def _one_decision_analysis(loss: float) -> MatchAnalysis:
    decision = Decision(
        game=1, turn=3, player=0, kind="checker", dice=(5, 1), played="13/7", best="13/8 7/6",
        loss=loss, loss_mwc=None, skill="", plays=9, counted=True, position=START_ID,
    )  # fmt: skip
    stats = PlayerStats("alice", 1, 1, loss, 0, 0, 0.0, {"doubtful": 0, "bad": 0, "very bad": 0}, None)
    empty = PlayerStats("bob", 0, 0, 0.0, 0, 0, 0.0, {"doubtful": 0, "bad": 0, "very bad": 0}, None)
    return MatchAnalysis(0, ("alice", "bob"), 1, 0, "fake", GNUBG_SKILL, (decision,), (stats, empty))


def test_a_loss_that_rounds_to_zero_prints_0_000_not_minus_0_000():
    line = next(x for x in format_analysis(_one_decision_analysis(0.0004)).splitlines() if "13/7" in x)
    assert " 0.000" in line and "-0.000" not in line
    # a loss that shows keeps gnubg's sign: the difference from the best, negative
    line = next(x for x in format_analysis(_one_decision_analysis(0.004)).splitlines() if "13/7" in x)
    assert "-0.004" in line and "best: 13/8 7/6" in line


# --------------------------------------------------------------------------- the sample match, shipped network


@pytest.mark.skipif(not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing")
def test_sample_match_decisions_follow_the_rules():
    from nard_ai.agents import load_agent

    with open(REPO_MAT) as f:
        match = read_mat(f.read())
    result = analyze_match(match, load_agent())
    assert result.length == 3 and result.players == ("alice", "bob") and result.games == 3
    rolls = [
        (g, a) for g, game in enumerate(match.games, 1) for a in game.actions if a.kind == ActionKind.ROLL
    ]
    checker = [d for d in result.decisions if d.kind == "checker"]
    assert len(checker) == len(rolls)  # no roll in this record is left unplayed
    for d, (g, action) in zip(checker, rolls, strict=True):
        n = len(legal_plays(action.board, action.dice))
        assert d.game == g and d.plays == n and d.counted == (n > 1)
        assert d.loss >= 0 and d.skill == result.thresholds.classify(d.loss)
        assert d.loss_mwc == pytest.approx(d.loss * _half_swing(action.state), abs=1e-9)
    # Game 2 is the Crawford game (bob reached 2 of 3 in game 1): nobody may double (RULES.md 8)
    assert not [d for d in result.decisions if d.game == 2 and d.kind != "checker"]
    # Game 3 is post-Crawford: bob, 1-away, never has a useful double; alice's double and bob's take are there
    game3 = [(d.player, d.kind) for d in result.decisions if d.game == 3 and d.kind != "checker"]
    assert (0, "double") in game3 and (1, "take") in game3 and (1, "no_double") not in game3
    # per-player counts add up
    for seat, stats in enumerate(result.stats):
        mine = [d for d in checker if d.player == seat]
        assert stats.moves == len(mine) and stats.unforced == sum(d.counted for d in mine)
        assert stats.checker_loss == pytest.approx(sum(d.loss for d in mine if d.counted))


def _half_swing(state: MatchState) -> float:
    """(W - L) / 2 at the state's score and cube, for the player on roll (MWC per unit of EMG)."""
    cube = cube_state_of(state)
    win = match_equity_after(cube.away, cube.opp_away, cube.value, cube.crawford)
    lose = match_equity_after(cube.away, cube.opp_away, -cube.value, cube.crawford)
    return (win - lose) / 2


@pytest.mark.skipif(_gnubg_executable() is None, reason="the gnubg program is not installed")
@pytest.mark.skipif(not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing")
def test_sample_match_counts_the_same_decisions_as_gnubg():
    """gnubg's `analyse match` + `show statistics match` on the same file counts the same decisions.

    Total and unforced moves and the cube decisions met follow from the rules and the cube's
    availability, not from the evaluator, so they must agree exactly (gnubg 1.07.001, 0-ply:
    alice 32 moves, 29 unforced, 4 cube decisions; bob 30, 27, 6).
    """
    from nard_ai.agents import load_agent

    commands = (
        "set analysis chequerplay evaluation plies 0\n"
        "set analysis cubedecision evaluation plies 0\n"
        f"import mat {Path(REPO_MAT).resolve()}\n"
        "analyse match\n"
        "show statistics match\n"
    )
    out = subprocess.run(
        [_gnubg_executable(), "-t", "-q", "-r"], input=commands, capture_output=True, text=True, timeout=300
    ).stdout

    def row(label: str) -> tuple[int, int]:
        found = re.search(rf"^{re.escape(label)}\s+(\d+)\s+(\d+)", out, re.MULTILINE)
        if not found:
            pytest.skip(f"gnubg printed no {label!r} row")
        return int(found.group(1)), int(found.group(2))

    with open(REPO_MAT) as f:
        result = analyze_match(read_mat(f.read()), load_agent())
    alice, bob = result.stats
    assert row("Total moves") == (alice.moves, bob.moves)
    assert row("Unforced moves") == (alice.unforced, bob.unforced)
    assert row("Total cube decisions") == (alice.cube_decisions, bob.cube_decisions)


@pytest.mark.parametrize(
    "length, message",
    [
        # the record format takes up to 64 points (gnubg's MAXSCORE); the analysis's cube decisions need the
        # match equity table, which covers 1..25 (nard_ai.cube.met.MAX_AWAY)
        (30, "a 30-point match: the analysis takes money play or matches of 1..25 points"),
        (99, "line 1: a 99-point match is longer than 64"),
    ],
)
def test_nard_analyze_names_a_match_too_long_to_analyse_in_one_line(length, message, tmp_path, capsys):
    from conftest import run_cli

    record = tmp_path / "long.mat"
    record.write_text(
        f" {length} point match\n\n Game 1\n alice : 0                        bob : 0\n  1) 31: 8/5 6/5\n"
    )
    status, out, err = run_cli(["analyze", str(record)], capsys)
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"nard analyze: error: {record}: {message}")
