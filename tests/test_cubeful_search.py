"""Cube decisions at 1 and 2 ply carry cubeful values through the search (nard_ai.cube.lookahead).

The expected values are worked by hand from nard_ai.cube.decision's 0-ply model
(``cubeful_equity``, itself tested against gnubg's formulas) one level up, as
gnubg's ``EvaluatePositionCubeful`` does: after each of the 21 rolls the
opponent is on roll and acts on the cube optimally, ``max(ND, min(DT, DP))``.
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na
from nard_ai.cube import CubeState, cube_decision, cubeful_equity
from nard_ai.search.lookahead import Agent

# any consistent numbers (as float32, what an evaluator returns); no board is a race below
P = np.array([0.62, 0.18, 0.01, 0.09, 0.005], dtype=np.float32).astype(np.float64)


class ConstantEvaluator:
    """Every position is worth the same probabilities ``P`` to its side on roll."""

    def evaluate(self, boards):
        return np.tile(P.astype(np.float32), (len(boards), 1))


def _optimal(probs, cube, x):
    """The side on roll's 0-ply value acting optimally on the cube, in points (money) or MWC (match)."""
    scale = cube.value if cube.is_money else 1.0
    nd = scale * float(cubeful_equity(probs, cube, x))
    if not cube.can_double:
        return nd
    dt = (
        scale * 2.0 * float(cubeful_equity(probs, cube.doubled(), x))
        if cube.is_money
        else float(cubeful_equity(probs, cube.doubled(), x))
    )
    dp = (
        float(cube.value)
        if cube.is_money
        else na.cube.mwc_at_score(cube.away, cube.opp_away, cube.value, cube.crawford)
    )
    return max(nd, min(dt, dp))


@pytest.mark.parametrize(
    "cube",
    [CubeState(), CubeState(value=2, owner="on_roll"), CubeState.from_away(5, 3), CubeState.from_away(2, 4)],
)
def test_one_ply_values_are_the_opponents_optimal_zero_ply_values_turned_over(cube):
    """Every position after the root's rolls has the same probabilities P for the opponent (contact,
    efficiency 0.68), so the 1-ply no double is minus (money) or one minus (match) the opponent's
    optimal 0-ply value with the cube swapped, and double/take the same with the doubled cube."""
    x = 0.68
    board = na.starting_board()
    d = cube_decision(board, cube, ply=1, agent=Agent(ConstantEvaluator(), ply=1), efficiency=x)
    theirs_nd = _optimal(P, cube.swapped(), x)
    if cube.is_money:
        assert d.no_double == pytest.approx(-theirs_nd / cube.value, abs=1e-7)
    else:
        assert d.no_double_mwc == pytest.approx(1.0 - theirs_nd, abs=1e-7)
    if cube.can_double:
        theirs_dt = _optimal(P, cube.doubled().swapped(), x)
        if cube.is_money:
            assert d.double_take == pytest.approx(-theirs_dt / cube.value, abs=1e-7)
            assert d.double_pass == 1.0
        else:
            assert d.double_take_mwc == pytest.approx(1.0 - theirs_dt, abs=1e-7)
    # the reported cubeless probabilities are the 1-ply ones: P turned over
    np.testing.assert_allclose(d.probs, [1 - P[0], P[3], P[4], P[1], P[2]], atol=1e-6)


def test_the_last_roll_is_exact_at_every_ply():
    """X wins only by bearing off now (23 of 36 rolls); O surely bears off next: ND = 2p - 1,
    D/T = 2 (2p - 1) (gnubg: +0.278, +0.556), whatever the depth."""
    board = na.board_from_position_id("AQAAhAAAAAAAAA")
    p = 23 / 36
    for ply in (0, 1, 2):
        d = cube_decision(board, ply=ply)
        assert d.no_double == pytest.approx(2 * p - 1, abs=1e-6)
        assert d.double_take == pytest.approx(2 * (2 * p - 1), abs=1e-6)
        assert d.action == "double_take"


def test_the_reported_probabilities_are_the_agents_own():
    from nard_ai.agents import load_agent

    board = na.board_from_position_id("bDeDISBsO8jIAA")
    for ply in (1, 2):
        agent = load_agent(ply=ply)
        d = cube_decision(board, CubeState(value=2, owner="on_roll"), agent=agent)
        np.testing.assert_allclose(d.probs, agent.value(board[None])[0][0], atol=1e-6)
        assert d.ply == ply


def test_gnubg_2_ply_no_redouble_take():
    """bDeDISBsO8jIAA:UQmgACAAEAAE (money, X owns a 2-cube): gnubg 1.07 at 2-ply says "No redouble,
    take" with ND +0.719 (from its cubeful lookahead); putting Janowski's formula on ``nard-rich.pt``'s
    2-ply cubeless probabilities instead said redouble (ND +0.686). The lookahead agrees with gnubg,
    on that network (ND +0.715) and on generation 11 (``nard-expert-gen11.pt``, the default 2026-12-05 to
    2026-12-06, and generation 10 alike: ND +0.740 against DT +0.737). For generation 14 (the default on
    2026-12-06) the position was as close the other way (DT +0.746 against ND +0.742: a marginal redouble); for
    generation 16, the default since 2026-12-07, it is no redouble again (ND +0.730 against DT +0.726);
    one knife-edge position does not judge a network's cube play, the 550-position cube benchmark does
    (README, "Strength benchmarks by position class"), so the test asks the named networks for gnubg's action
    and the default only for gnubg's equity and a take within 0.01 of the boundary."""
    from pathlib import Path

    from nard_ai.agents import load_agent
    from nard_ai.cube.state import cube_state_from_match
    from nard_ai.formats.position import parse_position

    board, state = parse_position("bDeDISBsO8jIAA:UQmgACAAEAAE")
    checkpoints = Path(__file__).resolve().parents[1] / "checkpoints"
    rich = load_agent(checkpoints / "nard-rich.pt", ply=2)
    gen11 = load_agent(checkpoints / "nard-expert-gen11.pt", ply=2)
    for agent, tol in ((rich, 0.02), (gen11, 0.03)):
        d = cube_decision(board, cube_state_from_match(state), ply=2, agent=agent)
        assert d.action == "no_double"
        assert d.double_take < 1.0  # take: the pass would be worth the full 1.0
        assert d.no_double == pytest.approx(0.719, abs=tol)
    # the default network (generation 16): gnubg's no-double equity within the same tolerance, the take within
    # 0.01 of it either way (ND +0.730 against DT +0.726 on 2026-12-07; generation 14's DT +0.746 against ND +0.742)
    d = cube_decision(board, cube_state_from_match(state), ply=2)
    assert d.no_double == pytest.approx(0.719, abs=0.03)
    assert abs(d.double_take - d.no_double) < 0.01 and d.double_take < 1.0
