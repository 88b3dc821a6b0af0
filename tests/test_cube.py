"""Match equity (nard_ai.cube.met), cubeful equity and cube decisions (nard_ai.cube.decision).

Rules from docs/RULES.md §8. Published values and their sources
are named in each test. Probability vectors are gnubg's five numbers for the
side on roll: (win, win-gammon, win-backgammon, lose-gammon, lose-backgammon).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nard_ai as na
from nard_ai.core.board import pos
from nard_ai.cube import (
    ACTIONS,
    CENTRED,
    DEFAULT_EFFICIENCY,
    GNUBG_SHALLOW_EFFICIENCY,
    ON_ROLL,
    OPPONENT,
    CubeEfficiency,
    CubeState,
    cube_decision,
    cube_decision_from_probs,
    cube_efficiency,
    cubeful_equity,
    gammon_values,
    highest_cube_value,
)
from nard_ai.cube.decision import CUBE_ACTIONS, cube_action, cube_actions
from nard_ai.cube.met import MAX_AWAY, match_equity, match_equity_after, met_tables

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def probs(win, win_gammon=0.0, win_backgammon=0.0, lose_gammon=0.0, lose_backgammon=0.0) -> np.ndarray:
    """gnubg-order probabilities for the side on roll."""
    return np.array([win, win_gammon, win_backgammon, lose_gammon, lose_backgammon], dtype=np.float64)


def random_probs(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` consistent random probability vectors."""
    w = rng.uniform(0.0, 1.0, n)
    wg = w * rng.uniform(0.0, 0.6, n)
    wb = wg * rng.uniform(0.0, 0.2, n)
    lg = (1.0 - w) * rng.uniform(0.0, 0.6, n)
    lb = lg * rng.uniform(0.0, 0.2, n)
    return np.stack([w, wg, wb, lg, lb], axis=1)


def janowski_take_point(p: np.ndarray, x: float) -> float:
    """Janowski (1993), "Take-points in money games": TP = (W - 1/2) / (W + L + x/2).

    W and L are the doubler's average win and loss in points (the taker loses
    W on average when it loses); TP is in the taker's winning chances.
    """
    w, wg, wb, lg, lb = p
    win_w = 1.0 + (wg + wb) / w
    lose_l = 1.0 + (lg + lb) / (1.0 - w)
    return (win_w - 0.5) / (win_w + lose_l + 0.5 * x)


# --------------------------------------------------------------------------- MET


def test_shipped_met_equals_the_shared_csv_files_entry_by_entry():
    """nard_ai/data/ ships the Kazaross-XG2 files with their notice (nard_ai/data/README.md); equal to the team's reference copy where that is at hand."""
    pre, post = met_tables()
    assert pre.shape == (MAX_AWAY, MAX_AWAY) and post.shape == (MAX_AWAY,)
    shipped = Path(na.__file__).resolve().parent / "data"
    for name in ("met_kazaross_xg2.csv", "met_kazaross_xg2_post_crawford.csv"):
        text = (shipped / name).read_text()
        assert "Kazaross" in text and "permission notice" in text or "same source and notice" in text
        if (SHARED_DATA / name).is_file():
            assert text == (SHARED_DATA / name).read_text()
    for i in range(1, MAX_AWAY + 1):
        for j in range(1, MAX_AWAY + 1):
            assert match_equity(i, j) == pre[i - 1, j - 1]


def test_two_away_against_four_away_is_0_6687():
    """Issue 4 / Kazaross-XG2 row 2, column 4: the side 2-away leads 4-away with 66.87%."""
    assert match_equity(2, 4) == pytest.approx(0.6687, abs=1e-9)
    assert match_equity(4, 2) == pytest.approx(0.3313, abs=1e-9)


def test_post_crawford_two_away_against_one_away_is_0_48803():
    """Kazaross-XG2 post-Crawford row: the 2-away trailer has 48.803% (the free drop)."""
    assert match_equity(2, 1, post_crawford=True) == pytest.approx(0.48803, abs=1e-9)
    assert match_equity(1, 2, post_crawford=True) == pytest.approx(0.51197, abs=1e-9)
    # Pre-Crawford the 1-away row is the Crawford game: Kazaross-XG2 1-away 2-away = 67.736%.
    assert match_equity(1, 2) == pytest.approx(0.67736, abs=1e-9)


def test_match_equity_is_symmetric_and_falls_with_the_points_needed():
    for a in range(1, MAX_AWAY + 1):
        assert match_equity(a, a) == pytest.approx(0.5, abs=1e-9)
        for b in range(1, MAX_AWAY + 1):
            assert match_equity(a, b) + match_equity(b, a) == pytest.approx(1.0, abs=2e-6)
            if a < MAX_AWAY:
                assert match_equity(a + 1, b) < match_equity(a, b)
        if a > 1:
            pc = match_equity(a, 1, post_crawford=True) + match_equity(1, a, post_crawford=True)
            assert pc == pytest.approx(1.0, abs=1e-12)
    assert match_equity(1, 1, post_crawford=True) == 0.5


def test_zero_away_means_the_match_is_won_or_lost():
    assert match_equity(0, 3) == 1.0
    assert match_equity(3, 0) == 0.0
    assert match_equity(0, 1, post_crawford=True) == 1.0


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 0), "both sides"),
        ((-1, 3), ">= 0"),
        ((3, 26), "at most 25"),
        ((2.5, 3), "integer"),
        ((True, 3), "integer"),
        ((3, 4, True), "post-Crawford"),
    ],
)
def test_match_equity_rejects_impossible_scores(args, message):
    with pytest.raises(ValueError, match=message):
        match_equity(*args)


def test_match_equity_after_a_game_follows_the_crawford_rule():
    """RULES.md §8: the game after a side first reaches match length minus one is the Crawford game."""
    pre, post = met_tables()
    # 3-away vs 5-away, the side on roll wins 2: the next game is the Crawford game (pre-table row 1).
    assert match_equity_after(3, 5, 2) == pre[0, 4]
    # In the Crawford game at 1-away vs 5-away, losing 1 leads to post-Crawford 1-away vs 4-away.
    assert match_equity_after(1, 5, -1, crawford=True) == pytest.approx(1.0 - post[3])
    # Post-Crawford (no flag, a side 1-away) stays post-Crawford.
    assert match_equity_after(4, 1, 2) == post[1]
    # Overshooting wins the match; a gammon that ends it is worth the same as a single.
    assert match_equity_after(2, 4, 3) == 1.0
    assert match_equity_after(2, 4, -4) == 0.0
    with pytest.raises(ValueError):
        match_equity_after(2, 4, 0)


# --------------------------------------------------------------------------- cube state


def test_the_default_cube_state_is_money_with_cube_1_centred_and_no_jacoby_or_beavers():
    cube = CubeState()
    assert (cube.value, cube.owner, cube.match_length, cube.score) == (1, CENTRED, 0, (0, 0))
    assert not (cube.crawford or cube.jacoby or cube.beavers)
    assert cube.is_money and cube.can_double


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(value=3, owner=ON_ROLL), "power of two"),
        (dict(value=0), "power of two"),
        (dict(owner="me"), "owner"),
        # a centred 2-cube is money play with automatic doubles (accepted); in a match it cannot occur
        (dict(value=2, match_length=5), "centred in a 5-point match"),
        (dict(match_length=26), "match_length"),
        (dict(match_length=5, score=(5, 0)), "score"),
        (dict(match_length=5, score=(2, 2), crawford=True), "Crawford"),
        (dict(match_length=5, score=(4, 4), crawford=True), "Crawford"),
        (dict(match_length=5, score=(4, 2), crawford=True, value=2, owner=OPPONENT), "nobody may double"),
        (dict(match_length=5, jacoby=True), "money-play options"),
        (dict(score=(1, 0)), "money play has no score"),
        (dict(crawford=True), "match play only"),
    ],
)
def test_cube_state_rejects_impossible_states(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CubeState(**kwargs)


def test_cube_state_away_counts_crawford_and_access():
    cube = CubeState.for_match(7, score=(3, 6))
    assert (cube.away, cube.opp_away, cube.post_crawford) == (4, 1, True)
    assert CubeState.from_away(4, 1, crawford=True).post_crawford is False
    assert CubeState.from_away(2, 5) == CubeState(match_length=5, score=(3, 0))
    # The post-Crawford leader never doubles: winning 1 already wins the match.
    assert not CubeState.from_away(1, 4).can_double
    assert CubeState.from_away(4, 1).can_double
    # Nobody doubles in the Crawford game (RULES.md §8).
    assert not CubeState.from_away(1, 4, crawford=True).can_double
    assert not CubeState.from_away(4, 1, crawford=True).can_double
    # Only the owner may redouble.
    assert not CubeState(value=2, owner=OPPONENT).can_double
    assert CubeState(value=2, owner=ON_ROLL).can_double
    doubled = CubeState.from_away(5, 3).doubled()
    assert (doubled.value, doubled.owner) == (2, OPPONENT)
    cube = CubeState.for_match(9, score=(2, 5), value=4, owner=ON_ROLL)
    assert cube.swapped().swapped() == cube
    assert (cube.swapped().owner, cube.swapped().score) == (OPPONENT, (5, 2))


# --------------------------------------------------------------------------- money play


def test_dead_cube_take_point_without_gammons_is_25_percent():
    """nard_ai/data/README.md and every primer: risk 1 to gain 3 -> 25% with a dead cube."""
    for win in (0.3, 0.6, 0.9):
        d = cube_decision_from_probs(probs(win), CubeState(), efficiency=0.0)
        assert d.take_point == pytest.approx(0.25, abs=1e-9)


def test_the_taker_takes_above_its_take_point_and_passes_below_it():
    """CubeDecision.taker_takes, the answer nard cube, UBGI's bestcube and HTTP /cube's accept give: with a dead
    cube and no gammons the take point is 25% (above), so the taker takes at 30% (the doubler's 70%) and
    passes at 20% (the doubler's 80%); a cube the side on roll cannot turn leaves nothing to refuse."""
    take = cube_decision_from_probs(probs(0.7), CubeState(), efficiency=0.0)
    assert take.double_take <= take.double_pass and take.taker_takes
    drop = cube_decision_from_probs(probs(0.8), CubeState(), efficiency=0.0)
    assert drop.double_take > drop.double_pass and not drop.taker_takes
    dead = cube_decision_from_probs(probs(0.8), CubeState(value=2, owner="opponent"), efficiency=0.0)
    assert not dead.cube_available and dead.taker_takes


def test_live_cube_take_point_follows_janowski_21_4_percent_without_gammons():
    """Janowski (1993): TP = (L - 1/2) / (W + L + x/2); W = L = 1, x = 0.68 -> 0.5 / 2.34 = 21.4%."""
    d = cube_decision_from_probs(probs(0.7), CubeState(), efficiency=0.68)
    assert d.take_point == pytest.approx(0.5 / 2.34, abs=1e-9)
    assert round(d.take_point, 3) == 0.214
    # Fully live cube (x = 1): 20%, the classic live-cube money take point.
    assert cube_decision_from_probs(probs(0.7), efficiency=1.0).take_point == pytest.approx(0.2, abs=1e-9)


def test_live_cube_take_point_with_gammons_matches_janowskis_formula():
    """Janowski (1993) with gammons: the doubler's gammons (W > 1) raise the take point."""
    p = probs(0.6, 0.12)  # 20% of the doubler's wins are gammons: W = 1.2, L = 1
    d = cube_decision_from_probs(p, efficiency=0.68)
    assert d.take_point == pytest.approx(0.7 / 2.54, abs=1e-9)
    rng = np.random.default_rng(7)
    for p in random_probs(rng, 200):
        if not 0.05 < p[0] < 0.95:
            continue
        x = rng.uniform(0.0, 1.0)
        d = cube_decision_from_probs(p, efficiency=x)
        assert d.take_point == pytest.approx(janowski_take_point(p, x), abs=1e-7)


@pytest.mark.parametrize(
    "p, action",
    [
        (probs(0.50), "no_double"),
        (probs(0.72), "double_take"),
        (probs(0.80), "double_pass"),
        (probs(0.90, 0.60), "too_good_pass"),  # very high gammon chances: play on
        (probs(0.99, 0.00), "double_pass"),  # no gammon to play for: never "too good"
    ],
)
def test_money_decisions_on_hand_set_probabilities(p, action):
    """Money, cube 1 centred, contact (x = 0.68), Janowski's model (values checked by hand)."""
    d = cube_decision_from_probs(p, CubeState(), efficiency=0.68)
    assert d.action == action
    assert d.double_pass == 1.0
    assert d.cube_available


def test_money_equities_by_hand_at_72_percent():
    """W = L = 1, x = 0.68, p = 0.72: TP = 0.2, CP = 0.8 (x = 1 points), dead = 2p - 1 = 0.44.

    ND = 0.32 * 0.44 + 0.68 * (-1 + 2 * 0.52 / 0.6); DT = 2 * (p * 2.34 - 1.34).
    """
    d = cube_decision_from_probs(probs(0.72), efficiency=0.68)
    assert d.no_double == pytest.approx(0.32 * 0.44 + 0.68 * (-1 + 2 * 0.52 / 0.6))
    assert d.double_take == pytest.approx(2 * (0.72 * 2.34 - 1.34))
    assert d.cubeless_equity == pytest.approx(0.44)
    assert d.optimal == d.double_take
    assert d.errors["double"] == 0.0 and d.errors["take"] == 0.0
    assert d.errors["no_double"] == pytest.approx(d.double_take - d.no_double)
    assert d.errors["pass"] == pytest.approx(1.0 - d.double_take)


def test_no_efficiency_means_the_cubeless_equity_and_ownership_is_worth_something():
    rng = np.random.default_rng(3)
    p = random_probs(rng, 500)
    cubeless = 2 * p[:, 0] - 1 + p[:, 1] + p[:, 2] - p[:, 3] - p[:, 4]
    for owner, value in ((CENTRED, 1), (ON_ROLL, 2), (OPPONENT, 2)):
        assert np.allclose(cubeful_equity(p, CubeState(value, owner), 0.0), cubeless)
    # Access to the cube never hurts: owned >= centred >= opponent's (Janowski's model).
    for x in (0.5, 0.68, 1.0):
        owned = cubeful_equity(p, CubeState(2, ON_ROLL), x)
        centred = cubeful_equity(p, CubeState(), x)
        theirs = cubeful_equity(p, CubeState(2, OPPONENT), x)
        assert (owned >= centred - 1e-12).all() and (centred >= theirs - 1e-12).all()


def test_jacoby_rule_removes_gammons_from_a_centred_cube():
    """Jacoby rule (RULES.md §8, optional): gammons count only once the cube is turned."""
    p = probs(0.90, 0.60)
    plain = cube_decision_from_probs(p, CubeState())
    jacoby = cube_decision_from_probs(p, CubeState(jacoby=True))
    assert plain.action == "too_good_pass"
    assert jacoby.action == "double_pass"  # must turn the cube to play for the gammon
    assert jacoby.no_double < 1.0 < plain.no_double
    assert jacoby.double_take == plain.double_take  # after the double gammons count again
    assert gammon_values(CubeState(jacoby=True)) == (0.0, 0.0, 0.0, 0.0)
    assert gammon_values(CubeState()) == (1.0, 1.0, 1.0, 1.0)


def test_a_beaver_doubles_the_stake_when_the_take_is_for_less_than_nothing():
    p = probs(0.45, 0.10, 0.0, 0.10)
    plain = cube_decision_from_probs(p, CubeState())
    beaver = cube_decision_from_probs(p, CubeState(beavers=True))
    assert plain.double_take < 0 and not plain.beaver
    assert beaver.beaver and beaver.action == "no_double"
    assert beaver.errors["double"] == pytest.approx(beaver.no_double - 2 * beaver.double_take)
    assert beaver.errors["double"] > plain.errors["double"]


def test_redoubles_and_a_cube_the_opponent_owns():
    owned = cube_decision_from_probs(probs(0.80), CubeState(2, ON_ROLL))
    assert owned.action == "double_pass" and owned.double_pass == 1.0
    theirs = cube_decision_from_probs(probs(0.80), CubeState(2, OPPONENT))
    assert theirs.action == "no_double" and not theirs.cube_available
    assert np.isnan(theirs.double_take) and np.isnan(theirs.take_point)
    assert theirs.errors == {"no_double": 0.0}


@pytest.mark.parametrize(
    "nd, dt, dp, gammon, action",
    [
        (0.5, 0.6, 1.0, True, "double_take"),  # DP > DT >= ND
        (0.5, 1.2, 1.0, True, "double_pass"),  # DT >= DP >= ND
        (0.5, 0.3, 1.0, True, "no_double"),  # DP > ND > DT
        (1.2, 0.9, 1.0, True, "too_good_take"),  # ND > DP > DT
        (1.2, 1.1, 1.0, True, "too_good_pass"),  # ND > DT > DP
        (1.05, 1.5, 1.0, True, "too_good_pass"),  # DT >= ND > DP
        (1.05, 1.5, 1.0, False, "double_pass"),  # gnubg: not "too good" without gammons
        (1.2, 0.9, 1.0, False, "no_double"),
    ],
)
def test_the_five_actions_follow_gnubgs_ordering_of_the_three_equities(nd, dt, dp, gammon, action):
    """gnubg ``FindBestCubeDecision``: the cases 1-6 of its comment."""
    assert cube_action(nd, dt, dp, CubeState(), gammon) == (action, False)
    assert action in ACTIONS
    codes, beaver = cube_actions(
        np.array([nd, nd]), np.array([dt, dt]), np.array([dp, dp]), CubeState(), gammon
    )
    assert [CUBE_ACTIONS[c] for c in codes] == [action, action] and not beaver.any()


def _gnubg_rule(nd: float, dt: float, dp: float, gammon: bool, beavers: bool) -> tuple[str, bool]:
    """gnubg's ``FindBestCubeDecision`` for one position, written out case by case (the reference)."""
    beaver = beavers and dt < 0.0
    taken = 2.0 * dt if beaver else dt
    answer = min(taken, dp)
    if answer >= nd:
        return ("double_take" if taken < dp else "double_pass"), beaver
    if dp >= nd:
        return "no_double", beaver
    if not gammon:  # never "too good" without a gammon to play for
        return ("double_pass" if taken >= dp else "no_double"), beaver
    return ("too_good_take" if taken < dp else "too_good_pass"), beaver


def test_the_batched_rule_is_gnubgs_rule_position_by_position():
    """``cube_actions`` over 4,000 random equity triples (ties included, on a 0.05 grid) and gammon flags
    gives each row what gnubg's rule written out for one position gives (and so does
    ``cube_action``), in money (with beavers, and with a cube whose beaver would pass MAX_CUBE: no
    beaver then) and match play (no beavers)."""
    rng = np.random.default_rng(5)
    nd, dt, dp = (np.round(rng.uniform(-1.2, 1.4, 4000) / 0.05) * 0.05 for _ in range(3))
    gammon = rng.random(4000) < 0.7
    for cube in (
        CubeState(),
        CubeState(jacoby=True, beavers=True),
        CubeState(2048, ON_ROLL, beavers=True),
        CubeState.from_away(3, 5),
    ):
        codes, beaver = cube_actions(nd, dt, dp, cube, gammon)
        allowed = cube.is_money and cube.beavers and cube.value <= 1024
        want = [_gnubg_rule(a, b, c, g, allowed) for a, b, c, g in zip(nd, dt, dp, gammon, strict=True)]
        assert [(CUBE_ACTIONS[k], bool(v)) for k, v in zip(codes, beaver, strict=True)] == want
        assert [cube_action(a, b, c, cube, g) for a, b, c, g in zip(nd, dt, dp, gammon, strict=True)] == want
    assert cube_actions(nd, dt, dp, CubeState(2048, ON_ROLL, beavers=True), gammon)[1].sum() == 0
    assert cube_actions(nd, dt, dp, CubeState(beavers=True), gammon)[1].sum() == (dt < 0).sum()


def test_inconsistent_probabilities_and_efficiencies_are_rejected():
    with pytest.raises(ValueError, match="inconsistent"):
        cube_decision_from_probs(probs(0.3, 0.5))
    with pytest.raises(ValueError, match="shape"):
        cube_decision_from_probs(np.ones(4))
    with pytest.raises(ValueError, match="efficiency"):
        cube_decision_from_probs(probs(0.5), efficiency=1.5)
    with pytest.raises(ValueError, match="race_min"):
        CubeEfficiency(race_min=0.8, race_max=0.7)


# --------------------------------------------------------------------------- match play


def test_match_equities_are_mwc_with_their_money_equivalents():
    cube = CubeState.from_away(5, 5)
    d = cube_decision_from_probs(probs(0.80), cube)
    assert d.double_pass_mwc == pytest.approx(match_equity(4, 5))
    assert d.double_pass == 1.0
    win, lose = match_equity(4, 5), match_equity(5, 4)
    for eq, mwc in ((d.no_double, d.no_double_mwc), (d.double_take, d.double_take_mwc)):
        assert eq == pytest.approx(2 * (mwc - lose) / (win - lose) - 1)
    assert d.errors_mwc["no_double"] == pytest.approx(d.errors["no_double"] * (win - lose) / 2)
    money = cube_decision_from_probs(probs(0.80))
    assert money.no_double_mwc is None and money.errors_mwc is None


def test_the_crawford_game_has_no_cube_and_a_cubeless_match_equity():
    """RULES.md §8: "in the first game after either player first reaches one point short of the
    match length, nobody may double"."""
    p = probs(0.6, 0.2, 0.01, 0.1, 0.0)
    for away, opp_away in ((1, 4), (4, 1)):
        cube = CubeState.from_away(away, opp_away, crawford=True)
        d = cube_decision_from_probs(p, cube)
        assert d.action == "no_double" and not d.cube_available
        w, wg, wb, lg, lb = p
        expected = (
            (w - wg) * match_equity_after(away, opp_away, 1, True)
            + (wg - wb) * match_equity_after(away, opp_away, 2, True)
            + wb * match_equity_after(away, opp_away, 3, True)
            + (1 - w - lg) * match_equity_after(away, opp_away, -1, True)
            + (lg - lb) * match_equity_after(away, opp_away, -2, True)
            + lb * match_equity_after(away, opp_away, -3, True)
        )
        assert d.no_double_mwc == pytest.approx(expected)


def test_the_post_crawford_trailer_doubles_at_once_and_the_leader_never_does():
    """Post-Crawford the leader's cube is dead; the 2-away trailer loses nothing by doubling."""
    rng = np.random.default_rng(11)
    for p in random_probs(rng, 100):
        trailer = cube_decision_from_probs(p, CubeState.from_away(2, 1))
        # Doubling costs nothing (losing 1 or 2 points both lose the match): never a plain no double,
        # though with gammons it can be too good when the leader would pass.
        assert trailer.double_take_mwc >= trailer.no_double_mwc - 1e-12
        assert trailer.action != "no_double"
        assert trailer.double_take_mwc == pytest.approx(p[0])  # a 2-cube decides the match
        leader = cube_decision_from_probs(p, CubeState.from_away(1, 2))
        assert leader.action == "no_double" and not leader.cube_available


def test_two_away_two_away_take_point_is_one_minus_the_crawford_equity():
    """At 2-away/2-away a double kills the cube: the taker needs 1 - MET(1-away, 2-away Crawford)
    = 1 - 0.67736 = 32.26% (Kazaross-XG2); gammons do not matter to the taker."""
    for p in (probs(0.6), probs(0.7, 0.2, 0.0, 0.1)):
        d = cube_decision_from_probs(p, CubeState.from_away(2, 2))
        assert d.take_point == pytest.approx(1 - 0.67736, abs=1e-7)
    assert cube_decision_from_probs(probs(0.55), CubeState.from_away(2, 2)).action == "double_take"
    assert cube_decision_from_probs(probs(0.45), CubeState.from_away(2, 2)).action == "no_double"


def test_a_double_is_offered_only_while_the_cube_is_below_what_the_doubler_needs():
    """Cube values never exceed what the match needs: no double once winning the current cube
    already wins the match (a dead cube); and a double that risks nothing is always taken up."""
    rng = np.random.default_rng(5)
    p_all = random_probs(rng, 6)
    for length in range(1, 8):
        for s0 in range(length):
            for s1 in range(length):
                for value, owner in ((1, CENTRED), (2, ON_ROLL), (4, ON_ROLL), (2, OPPONENT)):
                    crawford = False
                    away, opp_away = length - s0, length - s1
                    owner_away, doubler_away = (away, opp_away) if owner == ON_ROLL else (opp_away, away)
                    if owner != CENTRED and value > highest_cube_value(owner_away, doubler_away):
                        continue  # no live double reaches this cube: CubeState refuses it
                    cube = CubeState.for_match(length, (s0, s1), value, owner, crawford)
                    for p in p_all:
                        d = cube_decision_from_probs(p, cube)
                        assert d.action in ACTIONS
                        if d.action != "no_double":
                            assert cube.away > cube.value and owner != OPPONENT
                        if cube.can_double:
                            assert 0.0 <= d.take_point <= 1.0
                            if cube.opp_away <= cube.value:  # the opponent wins the match anyway
                                assert d.double_take >= d.no_double - 1e-9
                        else:
                            assert d.action == "no_double" and np.isnan(d.double_take)


def test_match_cubeful_equity_lies_between_losing_and_winning_everything():
    rng = np.random.default_rng(9)
    p = random_probs(rng, 300)
    for cube in (
        CubeState.from_away(7, 5),
        CubeState.from_away(3, 9, value=2, owner=OPPONENT),
        CubeState.from_away(4, 4, value=2, owner=ON_ROLL),
    ):
        mwc = cubeful_equity(p, cube, 0.68)
        assert ((mwc >= 0) & (mwc <= 1)).all()
        dead = cubeful_equity(p, cube, 0.0)
        live = cubeful_equity(p, cube, 1.0)
        assert np.allclose(mwc, 0.32 * dead + 0.68 * live)


def test_gammon_values_at_the_score_reproduce_the_dead_cube_match_equity():
    """gnubg's gammon prices: the expected MWC equals eq2mwc of the gammon-weighted equity."""
    rng = np.random.default_rng(4)
    for away, opp_away in ((2, 4), (5, 3), (7, 7), (3, 1), (1, 1)):
        cube = CubeState.from_away(away, opp_away)
        gv = gammon_values(cube)
        win, lose = match_equity_after(away, opp_away, 1), match_equity_after(away, opp_away, -1)
        for p in random_probs(rng, 20):
            equity = 2 * p[0] - 1 + gv[0] * p[1] - gv[1] * p[3] + gv[2] * p[2] - gv[3] * p[4]
            mwc = (win + lose) / 2 + equity * (win - lose) / 2
            assert cubeful_equity(p, cube, 0.0) == pytest.approx(mwc, abs=1e-9)
    assert gammon_values(CubeState.from_away(1, 1)) == (0.0, 0.0, 0.0, 0.0)
    # The 2-away post-Crawford trailer's gammon wins the match; the leader's gammon is worth nothing extra.
    assert gammon_values(CubeState.from_away(2, 1)) == pytest.approx((2.0, 0.0, 0.0, 0.0))


def test_a_too_good_take_at_two_away_four_away():
    """A gammonish position: better to play on than to cash, though the opponent could take."""
    d = cube_decision_from_probs(probs(0.78, 0.76, 0.03, 0.08, 0.01), CubeState.from_away(2, 4))
    assert d.action == "too_good_take"
    assert d.no_double > d.double_pass > d.double_take
    assert d.errors["no_double"] == 0.0 and d.errors["double"] > 0


# --------------------------------------------------------------------------- boards and agents


class FakeAgent:
    """An agent whose ``value`` returns fixed probabilities (the search seam)."""

    def __init__(self, p, ply=0):
        self.p = np.asarray(p, dtype=np.float32)
        self.ply = ply
        self.calls = 0

    def value(self, boards):
        self.calls += 1
        boards = np.asarray(boards)
        out = np.tile(self.p, (len(boards), 1))
        return out, 2 * out[:, 0] - 1 + out[:, 1] + out[:, 2] - out[:, 3] - out[:, 4]


def test_cube_efficiency_follows_gnubgs_position_classes():
    """gnubg EvalEfficiency: contact 0.68; race 0.55 + 0.00125 * pips in [0.6, 0.7]; bearoff 0.6."""
    assert cube_efficiency(na.starting_board()) == 0.68
    race = pos(me={8: 5, 7: 5, 6: 5}, opp={8: 5, 7: 5, 6: 5})  # 105 pips each, no contact
    assert cube_efficiency(race) == pytest.approx(0.55 + 0.00125 * 105)
    long_race = pos(me={13: 15}, opp={6: 15})  # 195 pips: clamped to 0.7
    assert cube_efficiency(long_race) == 0.7
    bearoff = pos(me={6: 5, 5: 5}, opp={6: 5, 4: 5})
    assert cube_efficiency(bearoff) == 0.6
    assert cube_efficiency(bearoff, GNUBG_SHALLOW_EFFICIENCY) == 0.6
    assert cube_efficiency(na.starting_board(), GNUBG_SHALLOW_EFFICIENCY) == 0.76
    assert DEFAULT_EFFICIENCY == CubeEfficiency()


def test_cube_decision_takes_its_probabilities_from_the_agent_it_is_given():
    """The evaluation at a ply is the agent's own ``evaluate`` (1-ply and 2-ply search plug in here)."""
    p = probs(0.72)
    agent = FakeAgent(p, ply=2)
    d = cube_decision(na.starting_board(), agent=agent)
    assert agent.calls == 1 and d.ply == 2
    assert d.action == "double_take" and d.efficiency == 0.68
    np.testing.assert_allclose(d.probs, p, atol=1e-6)
    race = pos(me={8: 5, 7: 5, 6: 5}, opp={8: 5, 7: 5, 6: 5})
    assert cube_decision(race, agent=agent).efficiency == pytest.approx(0.55 + 0.00125 * 105)
    assert cube_decision(race, agent=agent, efficiency=0.5).efficiency == 0.5
    with pytest.raises(ValueError, match="ply"):
        cube_decision(na.starting_board(), ply=1, agent=agent)
    finished = pos(me={}, opp={6: 3})
    with pytest.raises(ValueError, match="over"):
        cube_decision(finished, agent=agent)


def test_the_shipped_network_does_not_double_the_opening_position():
    """The opening position is no double for any sensible evaluator (gnubg: ND +0.09 money)."""
    pytest.importorskip("torch")
    from nard_ai.model.network import default_checkpoint_path

    if not default_checkpoint_path().is_file():
        pytest.skip("no shipped checkpoint")
    d = cube_decision(na.starting_board())
    assert d.action == "no_double"
    assert 0.35 < d.probs[0] < 0.65 and abs(d.no_double) < 0.3
    m = cube_decision(na.starting_board(), CubeState.from_away(5, 5))
    assert m.action == "no_double" and 0.4 < m.no_double_mwc < 0.6


# --------------------------------------------------------------------------- gnubg agreement

_GNUBG_DRIVER = r"""
import json, sys
import gnubg
settings = json.loads(sys.argv[1])
for c in ["set player 0 human", "set player 1 human", "set threads 1",
          "set evaluation cubedecision evaluation plies 0", "new session"]:
    gnubg.command(c)
for t in json.loads(sys.argv[2]):
    board = gnubg.position_from_id(t["pid"])
    ci = gnubg.cube_info(t["cube"], t["owner"], 0, t["length"], tuple(t["score"]), t["crawford"])
    gnubg.set_gnubg_id(gnubg.gnubg_id(board, ci, gnubg.pos_info(0, 0, 0, 1, (0, 0))))
    for c in settings:
        gnubg.command(c)
    print("BEGIN", t["key"], flush=True)
    gnubg.command("eval")
    print("PROBS", json.dumps(gnubg.evaluate(board, ci, gnubg.eval_context(0, 0))[:5]), flush=True)
"""

#: gnubg's documented efficiencies for its 0- and 1-ply evaluations too (our defaults).
_GNUBG_CLASSIC = [
    "set jacoby off",
    "set beavers 0",
    "set output mwc off",
    "set cubeefficiency contact 0.68",
    "set cubeefficiency crashed 0.68",
    "set cubeefficiency race factor 0.00125",
    "set cubeefficiency race coefficient 0.55",
    "set cubeefficiency race max 0.7",
    "set cubeefficiency race min 0.6",
]

#: Positions from pubeval self-play, chosen to cover every action at money play.
_GNUBG_POSITIONS = [
    "4HPwATDgc/ABMA",
    "mJsMFgye3Q4ACA",
    "4HPwCBjYnokLAA",
    "5pwdADC4HRcBAw",
    "mGfDADLYHeEBAw",
    "TOfgATDgc/AJIA",
    "2u4AADzubjMAAA",
    "YdfBAyBsbuADQA",
    "bDeDISBsO8jIAA",
    "zP2AYEBtuxkBAA",
    "xs4xgwBjN2MGAA",
    "nz8AACjbbQBDAQ",
    "5nYXAAKYDTyARw",
]

#: (cube value, owner as gnubg's player index, -1 centred / 0 on roll / 1 opponent, length, score, Crawford)
_GNUBG_CUBES = [
    (1, -1, 0, (0, 0), 0),
    (2, 0, 0, (0, 0), 0),
    (1, -1, 5, (0, 0), 0),
    (1, -1, 7, (3, 1), 0),
    (2, 0, 7, (1, 3), 0),
    (1, -1, 5, (4, 2), 0),
    (1, -1, 5, (2, 4), 0),
    (1, -1, 3, (1, 1), 0),
]

_GNUBG_ACTIONS = {
    "Double, take": "double_take",
    "Redouble, take": "double_take",
    "Double, pass": "double_pass",
    "Redouble, pass": "double_pass",
    "Too good to double, take": "too_good_take",
    "Too good to redouble, take": "too_good_take",
    "Too good to double, pass": "too_good_pass",
    "Too good to redouble, pass": "too_good_pass",
    "No double": "no_double",
    "No redouble": "no_double",
    "Never double": "no_double",
    "Never redouble": "no_double",
}


def _gnubg_cube_analysis(settings, tasks):
    import re

    try:
        out = subprocess.run(
            [sys.executable, "-c", _GNUBG_DRIVER, json.dumps(settings), json.dumps(tasks)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    except subprocess.TimeoutExpired:
        pytest.skip("gnubg did not answer in time")
    results = {}
    for block in out.split("BEGIN ")[1:]:
        key = block.split()[0]
        r = {"probs": json.loads(re.search(r"PROBS (\[.*\])", block).group(1))}
        for name, pattern in (
            ("nd", r"No (?:re)?double"),
            ("dp", r"[Dd]ouble, pass"),
            ("dt", r"[Dd]ouble, take"),
        ):
            m = re.search(pattern + r"\s+([+-]\d+\.\d+)", block)
            r[name] = float(m.group(1)) if m else None
        m = re.search(r"^static:.*\s([+-]\d+\.\d+)\s*$", block, re.M)  # the cubeful equity column
        r["cubeful"] = float(m.group(1)) if m else None
        m = re.search(r"Proper cube action: (.*)", block)
        text = m.group(1) if m else ""
        r["action"] = next(
            (v for k, v in sorted(_GNUBG_ACTIONS.items(), key=lambda kv: -len(kv[0])) if text.startswith(k)),
            None,
        )
        results[key] = r
    return results


@pytest.mark.skipif(
    importlib.util.find_spec("gnubg") is None, reason="the gnubg Python module is not installed"
)
@pytest.mark.parametrize(
    "settings, params",
    [(_GNUBG_CLASSIC, DEFAULT_EFFICIENCY), (_GNUBG_CLASSIC[:3], GNUBG_SHALLOW_EFFICIENCY)],
    ids=["documented-efficiency", "gnubg-shallow-efficiency"],
)
def test_cube_decisions_agree_with_gnubg_0_ply_given_its_probabilities(settings, params):
    """gnubg's own 0-ply cube analysis (``eval``) on the same cubeless probabilities.

    gnubg uses exact two-sided bearoff databases where we use the model, so a
    few hundredths of difference is allowed; the actions must agree.
    """
    tasks = []
    for i, pid in enumerate(_GNUBG_POSITIONS):
        for j, (value, owner, length, score, crawford) in enumerate(_GNUBG_CUBES):
            tasks.append(
                dict(
                    key=f"{i}:{j}",
                    pid=pid,
                    cube=value,
                    owner=owner,
                    length=length,
                    score=score,
                    crawford=crawford,
                )
            )
    results = _gnubg_cube_analysis(settings, tasks)
    if not results:
        pytest.skip("gnubg produced no cube analysis")
    owners = {-1: CENTRED, 0: ON_ROLL, 1: OPPONENT}
    agree = 0
    for key, r in results.items():
        i, j = map(int, key.split(":"))
        value, owner, length, score, crawford = _GNUBG_CUBES[j]
        cube = CubeState(value, owners[owner], length, score, bool(crawford))
        board = na.board_from_position_id(_GNUBG_POSITIONS[i])
        d = cube_decision_from_probs(np.array(r["probs"]), cube, cube_efficiency(board, params))
        if r["action"] is None:  # gnubg shows no cube analysis when the cube is not available
            assert not d.cube_available
            assert d.no_double == pytest.approx(r["cubeful"], abs=0.02), (key, d, r)
            agree += d.action == "no_double"
            continue
        agree += d.action == r["action"]
        for ours, theirs in ((d.no_double, r["nd"]), (d.double_take, r["dt"]), (d.double_pass, r["dp"])):
            assert ours == pytest.approx(theirs, abs=0.02), (key, d, r)
    assert len(results) == len(tasks)
    assert agree == len(results)


def test_the_last_roll_has_a_dead_cube():
    """A bear-off where the opponent bears off next roll whatever it throws: the side on roll wins
    only by bearing off now (probability p), so no double is worth 2p - 1 and double/take
    2 (2p - 1) (the taker never gets to use the cube), the take point is 25% (dead cube), and
    the proper action is double/take for 1/2 <= p <= 3/4. gnubg 1.07 gives these numbers from
    its two-sided bear-off database: AQAAhAAAAAAAAA (p = 23/36) ND +0.278, D/T +0.556;
    AQAAKAAAAAAAAA (p = 25/36) ND +0.389, D/T +0.778; AQAAiAAAAAAAAA (p = 19/36) D/T +0.111."""
    from nard_ai import board_from_position_id, rollout
    from nard_ai.eval.bearoff import opponent_finishes_next_roll

    for pid, p in (("AQAAhAAAAAAAAA", 23 / 36), ("AQAAKAAAAAAAAA", 25 / 36), ("AQAAiAAAAAAAAA", 19 / 36)):
        board = board_from_position_id(pid)
        assert opponent_finishes_next_roll(board[None])[0]
        assert cube_efficiency(board) == 0.0
        d = cube_decision(board)
        assert d.probs[0] == pytest.approx(p, abs=1e-6)
        assert d.no_double == pytest.approx(2 * p - 1, abs=1e-6)
        assert d.double_take == pytest.approx(2 * (2 * p - 1), abs=1e-6)
        assert d.take_point == pytest.approx(0.25, abs=1e-9)
        assert d.action == "double_take"
    # a cubeful rollout with the model: the side on roll doubles, the opponent takes: 2 (2p - 1)
    r = rollout(board_from_position_id("AQAAhAAAAAAAAA"), 36, cube=CubeState())
    assert r.cubeful == pytest.approx(2 * (2 * 23 / 36 - 1), abs=1e-9)
    # not a last roll: the opponent's checker on its 6-point may miss with 2-1
    assert not opponent_finishes_next_roll(pos(me={6: 1}, opp={6: 1})[None])[0]


# --- issue 15 follow-up: a centred money cube above 1 (automatic doubles)


@pytest.mark.parametrize("jacoby", [False, True])
@pytest.mark.parametrize("value", [2, 4, 64])
def test_a_centred_money_cube_at_v_has_the_equities_of_cube_1_per_cube_unit(value, jacoby):
    # money equities are per unit of the current cube (double/pass = +1), so at a centred cube v they
    # equal those at cube 1 and are worth v times as many points (Janowski's money model has no cube
    # value in it; Jacoby applies while the cube is centred, as gnubg's fJacoby && fCubeOwner == -1)
    probs = np.array([0.68, 0.20, 0.02, 0.05, 0.005])
    one = cube_decision_from_probs(probs, CubeState(jacoby=jacoby))
    at_v = cube_decision_from_probs(probs, CubeState(value=value, jacoby=jacoby))
    for name in ("no_double", "double_take", "double_pass", "take_point", "cubeless_equity"):
        assert getattr(at_v, name) == pytest.approx(getattr(one, name)), name
    assert at_v.action == one.action and at_v.cube_available
    assert value * at_v.no_double == pytest.approx(value * one.no_double)  # points = v x cube units


def test_a_centred_cube_above_1_in_a_match_is_refused_naming_the_match():
    with pytest.raises(ValueError, match="cube value 2 with the cube centred in a 7-point match"):
        CubeState(value=2, match_length=7)


def test_finished_points_apply_the_jacoby_rule_only_while_the_cube_is_centred():
    """cube.state.finished_points, the one scoring of a finished game at a cube (RULES.md, "Jacoby rule"):
    a gammon at a centred cube 1 counts 1 under the rule, 2 without it; a turned cube counts it in full."""
    import numpy as np

    from nard_ai.cube import finished_points

    result = np.array([2, -3, 1, -2])
    value = np.array([1, 4, 2, 1])
    centred = np.array([True, False, False, True])
    assert finished_points(result, value, centred, jacoby=True).tolist() == [1, -12, 2, -1]
    assert finished_points(result, value, centred, jacoby=False).tolist() == [2, -12, 2, -2]
