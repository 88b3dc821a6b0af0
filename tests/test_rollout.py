"""Monte Carlo rollouts (nard_ai.rollout): stratified dice, luck adjustment, truncation, cube, CIs.

Positions use ``pos(me=..., opp=...)``, each side in its own numbering
(RULES.md §1); the side ``me`` is on roll and has not rolled yet.
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na
from nard_ai.arena import pubeval_agent
from nard_ai.board import pip_count, pos
from nard_ai.cube import CubeState, cube_decision_from_probs
from nard_ai.met import match_equity_after
from nard_ai.rollout import ROLL_WEIGHTS, ROLLS_21, ROLLS_36, _Dice, rollout
from nard_ai.search import Agent

#: The side on roll has one checker on its 6-point, the opponent one on its 1-point:
#:
#:   O: one checker on O's 1-point (X's 24), 14 off
#:   X: one checker on X's 6-point, 14 off, on roll
#:
#: X wins iff it bears off now: any 6, any sum >= 6 except 1-1... i.e. 27 of 36 rolls.
LAST_ROLL = pos(me={6: 1}, opp={1: 1})


class LastRollEvaluator:
    """Exact for the positions reachable from :data:`LAST_ROLL`: the side on roll
    wins for sure with a checker on its 1-point, with 75% from its 6-point or below."""

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, boards):
        self.calls += 1
        pips = pip_count(np.asarray(boards))[:, 0]
        out = np.zeros((len(boards), 5), dtype=np.float32)
        out[:, 0] = np.where(pips <= 1, 1.0, 0.75)
        return out


class PipEvaluator:
    """A cheap, deterministic race heuristic: winning chances from the pip difference."""

    def evaluate(self, boards):
        pips = pip_count(np.asarray(boards)).astype(np.float64)
        win = 1.0 / (1.0 + np.exp(-(pips[:, 1] - pips[:, 0] + 4.0) / 10.0))
        out = np.zeros((len(boards), 5), dtype=np.float32)
        out[:, 0] = win
        return out


def test_the_first_two_rolls_are_stratified_over_the_36_rolls():
    """Game i opens with the (i mod 36)-th ordered roll and answers with the (i div 36 mod 36)-th."""
    ids = np.arange(1296)
    dice = _Dice(5, ids)
    first = dice.roll(ids, np.zeros(1296, dtype=np.int64))
    second = dice.roll(ids, np.ones(1296, dtype=np.int64))
    assert (first == ROLLS_36[ids % 36]).all()
    assert (second == ROLLS_36[ids // 36]).all()
    pairs = {(tuple(a), tuple(b)) for a, b in zip(first, second, strict=True)}
    assert len(pairs) == 1296
    assert ROLL_WEIGHTS.sum() == pytest.approx(1.0) and len(ROLLS_21) == 21


def test_36_stratified_games_give_the_exact_last_roll_chances():
    """27 of the 36 rolls bear the last checker off from the 6-point (all but 1-1 and sums below 6
    without a 6: 1-2, 1-3, 1-4, 2-1, 2-3, 3-1, 3-2, 4-1)."""
    agent = Agent(LastRollEvaluator())
    for vr in (False, True):
        r = rollout(LAST_ROLL, 36, agent=agent, variance_reduction=vr)
        assert r.probs[0] == pytest.approx(0.75, abs=1e-12)
        assert r.equity == pytest.approx(0.5, abs=1e-12)
        assert r.variance_reduction is vr and r.cubeful is None
    # The evaluator is exact here, so luck adjustment leaves no variance at all.
    assert rollout(LAST_ROLL, 36, agent=agent).probs_ci[0] == pytest.approx(0.0, abs=1e-12)


def test_a_rollout_is_reproducible_and_independent_of_the_batch_size():
    agent = Agent(PipEvaluator())
    board = pos(me={6: 3, 5: 3, 4: 3, 8: 2}, opp={6: 3, 5: 3, 4: 2, 9: 3})
    a = rollout(board, 40, agent=agent, seed=3, batch=40)
    b = rollout(board, 40, agent=agent, seed=3, batch=7)
    c = rollout(board, 40, agent=agent, seed=4, batch=40)
    np.testing.assert_array_equal(a.probs, b.probs)
    assert a.equity == b.equity and a.mean_plies == b.mean_plies
    assert not np.array_equal(a.probs, c.probs)


def test_luck_adjustment_is_unbiased_and_narrows_the_interval():
    agent = Agent(PipEvaluator())
    board = pos(me={6: 3, 5: 3, 4: 3, 8: 2}, opp={6: 3, 5: 3, 4: 2, 9: 3})
    plain = rollout(board, 216, agent=agent, variance_reduction=False)
    luck = rollout(board, 216, agent=agent, variance_reduction=True)
    assert luck.probs_ci[0] < 0.7 * plain.probs_ci[0]
    assert abs(luck.probs[0] - plain.probs[0]) < 1.5 * (plain.probs_ci[0] + luck.probs_ci[0])


def test_the_confidence_interval_narrows_as_one_over_the_square_root_of_games():
    agent = pubeval_agent()
    board = pos(me={6: 3, 5: 3, 4: 2, 3: 2}, opp={6: 3, 5: 3, 4: 2, 3: 2})
    small = rollout(board, 72, agent=agent, variance_reduction=False, seed=1)
    large = rollout(board, 288, agent=agent, variance_reduction=False, seed=1)
    ratio = small.equity_ci / large.equity_ci
    assert 1.4 < ratio < 2.8  # sqrt(288 / 72) = 2


def test_truncation_scores_running_games_with_the_agents_evaluation():
    evaluator = LastRollEvaluator()
    r = rollout(LAST_ROLL, 36, agent=Agent(evaluator), truncate=1, variance_reduction=False)
    # After one ply the 9 games that missed are scored by evaluation (the opponent is sure to win).
    assert r.truncated == 9 and r.mean_plies == 1.0
    assert r.probs[0] == pytest.approx(0.75)


def test_a_cubeful_money_rollout_doubles_and_counts_the_cube():
    """From LAST_ROLL (75%, no gammons, bear-off efficiency 0.6) Janowski's model says double/take;
    the taker's last roll is a sure win it cashes by redoubling. Stratified: 27 x 2 - 9 x 2 = +1 ppg."""
    decision = cube_decision_from_probs([0.75, 0, 0, 0, 0], CubeState(), efficiency=0.6)
    assert decision.action == "double_take"
    r = rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator()), cube=CubeState())
    assert r.cubeful == pytest.approx(1.0, abs=1e-12)
    assert r.probs[0] == pytest.approx(0.75)  # the cubeless view of the same games


def test_a_cubeful_match_rollout_reports_match_winning_chances():
    """5-away/5-away from LAST_ROLL: the model doubles and the opponent takes, so each game is
    played for 2 points: 27/36 x MWC(3-away, 5-away) + 9/36 x MWC(5-away, 3-away)."""
    cube = CubeState.from_away(5, 5)
    assert cube_decision_from_probs([0.75, 0, 0, 0, 0], cube, efficiency=0.6).action == "double_take"
    expected = 0.75 * match_equity_after(5, 5, 2) + 0.25 * match_equity_after(5, 5, -2)
    r = rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator()), cube=cube)
    assert r.cubeful == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.75 * 0.64795 + 0.25 * 0.35205)  # Kazaross-XG2 3-away 5-away


def test_the_crawford_game_is_played_without_the_cube():
    cube = CubeState.from_away(1, 3, crawford=True)
    r = rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator()), cube=cube)
    expected = 0.75 * 1.0 + 0.25 * match_equity_after(1, 3, -1, crawford=True)
    assert r.cubeful == pytest.approx(expected, abs=1e-9)


def test_rollout_rejects_bad_arguments():
    agent = Agent(LastRollEvaluator())
    with pytest.raises(ValueError, match="games"):
        rollout(LAST_ROLL, 0, agent=agent)
    with pytest.raises(ValueError, match="truncate"):
        rollout(LAST_ROLL, 36, agent=agent, truncate=0)
    with pytest.raises(ValueError, match="over"):
        rollout(pos(me={}, opp={1: 1}), 36, agent=agent)


def test_rollout_is_exported_from_the_package():
    assert na.rollout is rollout
