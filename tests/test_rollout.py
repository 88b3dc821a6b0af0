"""Monte Carlo rollouts (nard_ai.play.rollout): stratified dice, luck adjustment, truncation, cube, CIs.

Positions use ``pos(me=..., opp=...)``, each side in its own numbering
(RULES.md §1); the side ``me`` is on roll and has not rolled yet.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

import nard_ai as na
from nard_ai.agents import pubeval_agent
from nard_ai.core.board import pip_count, pos, starting_board
from nard_ai.cube import CubeState, cube_decision_from_probs
from nard_ai.cube.met import match_equity_after
from nard_ai.model.network import default_checkpoint_path, invert_probs
from nard_ai.play import rollout_games
from nard_ai.play.rollout import (
    MAX_GAMES,
    ROLL_WEIGHTS,
    ROLLS_21,
    ROLLS_36,
    rollout,
    rollout_dice,
    rollout_plays,
)
from nard_ai.search.lookahead import Agent, position_probs

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
    """36 games open with every roll once; 1296 games cover every (first roll, reply) pair once;
    144 games reply with every roll 4 times (a fixed order would reply 1-1..1-4 only)."""
    ids = np.arange(1296)
    first = rollout_dice(5, ids, np.zeros(1296, dtype=np.int64))
    second = rollout_dice(5, ids, np.ones(1296, dtype=np.int64))
    assert len({tuple(r) for r in first[:36]}) == 36
    pairs = {(tuple(a), tuple(b)) for a, b in zip(first, second, strict=True)}
    assert len(pairs) == 1296
    replies = np.unique((second[:144, 0] - 1) * 6 + second[:144, 1] - 1, return_counts=True)[1]
    assert len(replies) == 36 and (replies == 4).all()
    assert ROLL_WEIGHTS.sum() == pytest.approx(1.0) and len(ROLLS_21) == 21


def test_the_stratification_order_is_random_per_seed():
    """Each game's first two rolls are uniform over the seeds (so any game count gives an unbiased
    estimate): over 2,000 seeds game 7's 1296 (first, reply) pairs get 1.54 each on average, and
    Pearson's chi-square against that stays below 1,422, the 99.9% quantile with 1,295 degrees of
    freedom (1295 + 3.09 * sqrt(2 * 1295))."""
    counts = np.zeros(1296)
    for seed in range(2000):
        f = rollout_dice(seed, np.array([7]), np.array([0]))[0].astype(int)
        r = rollout_dice(seed, np.array([7]), np.array([1]))[0].astype(int)
        counts[((f[0] - 1) * 6 + f[1] - 1) * 36 + (r[0] - 1) * 6 + r[1] - 1] += 1
    expected = 2000 / 1296
    assert ((counts - expected) ** 2 / expected).sum() < 1295 + 3.09 * (2 * 1295) ** 0.5


def test_a_small_rollout_of_a_short_race_is_unbiased():
    """X (one checker on its 2-point and one on its 5-point) against O's last checker on its
    1-point: X wins only by bearing both off now (RULES.md §5). Rolls that do it: the doubles 2-2 to
    6-6 (5; 1-1 moves only 4 pips), or a pair whose larger die is >= 5 and smaller >= 2 (5-2, 5-3,
    5-4, 6-2, 6-3, 6-4, 6-5, each in both orders: 14): 19 of 36, equity 2 * 19/36 - 1 = +0.056 for
    X. Ten 36-game rollouts (different seeds) give it exactly, each a full stratification of the
    first roll."""
    agent = Agent(PipEvaluator())
    board = pos(me={2: 1, 5: 1}, opp={1: 1})
    values = [rollout(board, 36, agent=agent, seed=s, variance_reduction=False).equity for s in range(10)]
    assert np.allclose(values, 2 * 19 / 36 - 1, atol=1e-12)


def test_later_rolls_are_splitmix64_outputs():
    """Game g's roll at ply t >= 2 is SplitMix64 output number g * 2**20 + t + 1, mod 36.

    SplitMix64 seeded with 1234567 starts 6457827717110365317, 3203168211198807973,
    9817491932198370423, 4593380528125082431, 16408922859458223821 (the reference sequence of
    Rosetta Code's "Pseudo-random numbers/Splitmix64" task).
    """
    outputs = [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]
    got = rollout_dice(1234567, np.zeros(3, dtype=np.int64), np.array([2, 3, 4]))
    np.testing.assert_array_equal(got, ROLLS_36[[z % 36 for z in outputs[2:]]])
    # 9817491932198370423 % 36 = 27 = 6 * (5 - 1) + (4 - 1): the third roll of game 0 is 5-4
    assert tuple(got[0]) == (5, 4)
    # game 1 starts its own stretch of the stream, 2**20 outputs further on
    mask = (1 << 64) - 1
    z = (1234567 + ((1 << 20) + 3) * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    assert tuple(rollout_dice(1234567, np.array([1]), np.array([2]))[0]) == tuple(ROLLS_36[z % 36])


def test_later_rolls_are_uniform_over_the_36_rolls():
    """Pearson's chi-square of 36,000 rolls (games 0..1199, plies 2..31) against 1000 per roll stays
    below 66.6, the 99.9% quantile of chi-square with 35 degrees of freedom."""
    games, plies = np.meshgrid(np.arange(1200), np.arange(2, 32), indexing="ij")
    dice = rollout_dice(0, games.ravel(), plies.ravel())
    counts = np.bincount((dice[:, 0] - 1) * 6 + dice[:, 1] - 1, minlength=36)
    assert counts.sum() == 36_000
    assert ((counts - 1000.0) ** 2 / 1000.0).sum() < 66.6


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
    exact = rollout(LAST_ROLL, 36, agent=agent, variance_reduction=True)
    assert exact.probs_ci[0] == pytest.approx(0.0, abs=1e-12)


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


def test_luck_adjusted_games_truncated_after_one_ply_all_score_the_1_ply_value():
    """Truncated after the root side's play, a game scores V0 of its afterstate minus its luck,
    V0(afterstate) - (V0(afterstate) - mean over the 21 rolls), which is the 1-ply value of the root
    position whatever the dice: every game gives the same number, with no variance."""
    evaluator = PipEvaluator()
    board = pos(me={6: 3, 5: 3, 4: 3, 8: 2, 20: 1}, opp={6: 3, 4: 3, 3: 2, 9: 3, 18: 1})
    r = rollout(board, 72, agent=Agent(evaluator), truncate=1, variance_reduction=True)
    expected = position_probs(evaluator, board, ply=1)[0]
    np.testing.assert_allclose(r.probs, expected, atol=2e-6)
    assert r.probs_ci[0] < 1e-6 and r.truncated == 72


def test_the_opponents_luck_is_counted_from_the_root_sides_view():
    """X (on roll) is closed out: it dances with every roll, so its own roll has no luck. The
    opponent's roll then decides; truncated after it, every game scores the opponent's 1-ply value
    of its position, turned to X's view (wins and losses exchanged)."""
    evaluator = PipEvaluator()
    board = pos(me={25: 1, 6: 5, 5: 5, 4: 4}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 9: 3})
    r = rollout(board, 72, agent=Agent(evaluator), truncate=2, variance_reduction=True)
    opponent = position_probs(evaluator, na.swap_sides(board), ply=1)[0]
    np.testing.assert_allclose(r.probs, invert_probs(opponent), atol=2e-6)
    assert r.probs_ci[0] < 1e-6


def test_an_agent_without_an_evaluator_gets_the_same_luck_adjustment():
    """Any object with choose_plays and value can roll out; at 0-ply its luck values (the 21 rolls'
    chosen plays, valued by its own value) equal the search agent's."""
    agent = Agent(PipEvaluator())

    class Plain:
        def choose_plays(self, boards, dice):
            return agent.choose_plays(boards, dice)

        def value(self, boards):
            return agent.value(boards)

    board = pos(me={6: 3, 5: 3, 4: 3, 8: 2}, opp={6: 3, 5: 3, 4: 2, 9: 3})
    a = rollout(board, 40, agent=agent, seed=2, variance_reduction=True)
    b = rollout(board, 40, agent=Plain(), seed=2, variance_reduction=True)
    assert a.variance_reduction and b.variance_reduction
    np.testing.assert_allclose(a.probs, b.probs, atol=1e-9)
    assert a.mean_plies == b.mean_plies


def test_1_and_2_ply_rollouts_play_on_and_stay_exact():
    """With a k-ply agent the luck values come from the 21 rolls' best 0-ply plays valued at k - 1 ply
    (gnubg) and the play from the k-ply search; the exact evaluator keeps the 27/36 answer, and
    luck adjustment leaves no variance."""
    for ply in (1, 2):
        agent = Agent(LastRollEvaluator(), ply=ply)
        for vr in (False, True):
            r = rollout(LAST_ROLL, 36, agent=agent, variance_reduction=vr)
            assert r.probs[0] == pytest.approx(0.75, abs=1e-12) and r.ply == ply
        assert r.probs_ci[0] == pytest.approx(0.0, abs=1e-9)


def test_luck_adjustment_is_on_by_default_from_1_ply_and_in_races():
    """At 0-ply the 21-roll expansion costs about 30 times the plays themselves, at 1-ply less than
    they do: the default adjusts for luck from 1-ply on, and at 0-ply only in races (where it pays
    15-40 times per second, README); cubeful rollouts never do."""
    contact = na.starting_board()
    assert not rollout(contact, 4, agent=Agent(PipEvaluator()), truncate=2).variance_reduction
    assert rollout(contact, 4, agent=Agent(PipEvaluator(), ply=1), truncate=2).variance_reduction
    assert rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator())).variance_reduction  # a race
    assert not rollout(
        LAST_ROLL, 36, agent=Agent(LastRollEvaluator()), variance_reduction=False
    ).variance_reduction
    cube = rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator(), ply=1), cube=CubeState())
    assert not cube.variance_reduction
    with pytest.raises(ValueError, match="not luck-adjusted"):  # asked for explicitly: an error, not ignored
        rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator()), cube=CubeState(), variance_reduction=True)


def test_a_cubeful_rollout_is_independent_of_the_batch_size():
    """A slot that takes a new game starts it with the root cube again."""
    agent = Agent(PipEvaluator())
    board = pos(me={6: 3, 5: 3, 4: 3, 8: 2}, opp={6: 3, 5: 3, 4: 2, 9: 3})
    a = rollout(board, 40, agent=agent, cube=CubeState(), seed=3, batch=40)
    b = rollout(board, 40, agent=agent, cube=CubeState(), seed=3, batch=6)
    assert a.cubeful == b.cubeful and a.mean_plies == b.mean_plies
    np.testing.assert_array_equal(a.probs, b.probs)


def test_cube_play_takes_each_games_cube_decision():
    """The cube play of a rollout step, taken per group of games sharing a cube state, does for every
    game what nard_ai.cube.cube_decision_from_probs says in its cube state: double/take turns the cube
    to the taker, double/pass ends the game for the cube's value, no double and too good play on."""
    from nard_ai.bench import random_play_positions
    from nard_ai.cube import DEFAULT_EFFICIENCY, cube_efficiency
    from nard_ai.model.network import exclusive_to_gnubg
    from nard_ai.play.rollout_games import _Cubes

    rng = np.random.default_rng(7)
    boards, _ = random_play_positions(600, rng)
    _, first = np.unique(boards.view(np.dtype((np.void, 26))).ravel(), return_index=True)
    boards = boards[np.sort(first)]
    n = len(boards)
    probs = exclusive_to_gnubg(rng.dirichlet([3, 1, 0.3, 3, 1, 0.3], size=n)).astype(np.float32)
    table = {b.tobytes(): p for b, p in zip(boards, probs, strict=True)}

    class TableAgent:
        def value(self, rows):
            return np.array([table[r.tobytes()] for r in rows]), None

    mover = rng.integers(0, 2, n)
    x = cube_efficiency(boards, DEFAULT_EFFICIENCY)
    actions = set()
    for root in (
        CubeState(),
        CubeState(value=2, owner="opponent"),
        CubeState.from_away(5, 5),
        CubeState.from_away(3, 7, value=2, owner="on_roll"),
    ):
        cubes = _Cubes(root, n, DEFAULT_EFFICIENCY)
        before_value, before_owner = cubes.value.copy(), cubes.owner.copy()
        passed, points = cubes.act(np.arange(n), mover, boards, TableAgent())
        ended = dict(zip(passed.tolist(), points.tolist(), strict=True))
        for i in range(n):
            view = root if mover[i] == 0 else root.swapped()
            action = cube_decision_from_probs(probs[i], view, efficiency=x[i]).action
            actions.add(action)
            sign = 1 if mover[i] == 0 else -1
            if action == "double_pass":
                assert ended.get(i) == sign * root.value and cubes.value[i] == before_value[i]
            elif action == "double_take":
                assert i not in ended and cubes.value[i] == 2 * root.value and cubes.owner[i] == 1 - mover[i]
            else:
                assert i not in ended and cubes.value[i] == before_value[i]
                assert cubes.owner[i] == before_owner[i]
    assert {"double_take", "double_pass", "no_double"} <= actions


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
    """From LAST_ROLL (75%, no gammons) with a fixed efficiency of 0.6, Janowski's model says
    double/take; the taker's last roll is a sure win it cashes by redoubling. Stratified:
    27 x 2 - 9 x 2 = +1 ppg. With the default efficiencies the last roll's cube is dead (x = 0):
    the take point is exactly 25%, so at p = 75% taking and passing are worth the same, the
    opponent passes (ties go to the pass) and every game ends at the root, also +1 ppg."""
    decision = cube_decision_from_probs([0.75, 0, 0, 0, 0], CubeState(), efficiency=0.6)
    assert decision.action == "double_take"
    r = rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator()), cube=CubeState(), efficiency=0.6)
    assert r.cubeful == pytest.approx(1.0, abs=1e-12)
    assert r.probs[0] == pytest.approx(0.75)  # the cubeless view of the same games
    dead = rollout(LAST_ROLL, 36, agent=Agent(LastRollEvaluator()), cube=CubeState())
    assert dead.cubeful == pytest.approx(1.0, abs=1e-12)
    assert dead.probs[0] == pytest.approx(1.0)  # a passed double counts as a single game won


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


def test_rollout_threads_apply_during_the_rollout_only():
    """threads=None (the default) leaves torch and numba as they are; threads=1 sets both to one thread
    while the rollout runs and restores them afterwards."""
    import numba
    import torch

    seen = []
    agent = Agent(PipEvaluator())

    class Watching:
        ply = 0

        def choose_plays(self, boards, dice):
            seen.append((torch.get_num_threads(), numba.get_num_threads()))
            return agent.choose_plays(boards, dice)

        def value(self, boards):
            return agent.value(boards)

    before = (torch.get_num_threads(), numba.get_num_threads())
    rollout(LAST_ROLL, 36, agent=Watching(), threads=1)
    assert set(seen) == {(1, 1)}
    assert (torch.get_num_threads(), numba.get_num_threads()) == before
    seen.clear()
    rollout(LAST_ROLL, 36, agent=Watching())
    assert set(seen) == {before}


def test_rollout_rejects_bad_arguments():
    agent = Agent(LastRollEvaluator())
    with pytest.raises(ValueError, match="games"):
        rollout(LAST_ROLL, 0, agent=agent)
    with pytest.raises(ValueError, match="truncate"):
        rollout(LAST_ROLL, 36, agent=agent, truncate=0)
    with pytest.raises(ValueError, match="over"):
        rollout(pos(me={}, opp={1: 1}), 36, agent=agent)
    with pytest.raises(ValueError, match="seed"):
        rollout(LAST_ROLL, 36, agent=agent, seed=-1)
    with pytest.raises(ValueError, match="batch"):
        rollout(LAST_ROLL, 36, agent=agent, batch=0)
    with pytest.raises(ValueError, match="threads"):
        rollout(LAST_ROLL, 36, agent=agent, threads=0)


def test_rollout_is_exported_from_the_package():
    assert na.rollout is rollout


@pytest.mark.skipif(not default_checkpoint_path().is_file(), reason="no shipped network")
def test_the_rollout_benchmark_scales_its_intervals_to_1296_games_and_one_second():
    """``python -m nard_ai.bench --part rollout``: a CI over n games is worth ci * sqrt(n / 1296) at
    1,296 games (the CI shrinks as 1/sqrt(games)) and ci * sqrt(n / rate) after one second."""
    from nard_ai.bench import format_rollout_table, run_rollout_benchmark

    r = run_rollout_benchmark(games=36, vr_games=36, repeats=1, ply1_games=0)
    assert set(r["positions"]) == {"opening", "race", "bearoff"} and r["ply1"] is None
    for both in r["positions"].values():
        for mode in ("plain", "vr"):
            f = both[mode]
            assert f["games"] == 36 and f["games_per_s"] > 0
            assert f["ci_1296"] == pytest.approx(f["ci"] / 6.0)
            assert f["ci_per_s"] == pytest.approx(f["ci"] * (36 / f["games_per_s"]) ** 0.5)
        # luck adjustment narrows the interval of the same games
        assert both["vr"]["ci"] < both["plain"]["ci"]
    lines = format_rollout_table(r)
    assert len(lines) == 2 + 3 * 2 + 1 + 1


@pytest.mark.skipif(not default_checkpoint_path().is_file(), reason="no shipped network")
def test_the_rollout_benchmark_compares_networks_taking_turns_on_the_same_seeds():
    """``--part rollout --network PATH``: the compared network's rollouts, interleaved with the
    default's, are the rollouts it plays alone on the same seeds (a seed fixes a rollout, whatever ran
    between), and its table gives each row's games/s as a ratio to the default's same row."""
    from nard_ai.bench import format_rollout_table, run_rollout_benchmark

    small = str(default_checkpoint_path().with_name("nard-td198.pt"))
    both = run_rollout_benchmark(games=36, vr_games=36, repeats=1, ply1_games=0, compare=(small,))
    alone = run_rollout_benchmark(games=36, vr_games=36, repeats=1, ply1_games=0, checkpoint=small)
    other = both["compared"][small]
    assert both["network"] == "nard-expert.pt:0" and other["network"] == "nard-td198.pt:0"
    for name in ("opening", "race", "bearoff"):
        for mode in ("plain", "vr"):
            assert other["positions"][name][mode]["equity"] == alone["positions"][name][mode]["equity"]
            assert (
                other["positions"][name][mode]["mean_plies"] == alone["positions"][name][mode]["mean_plies"]
            )
    lines = format_rollout_table(both)
    assert len(lines) == 2 * (2 + 3 * 2 + 1 + 1)
    row = lines[10 + 2]  # the compared table's first row: the opening, 0-ply, no luck adjustment
    ratio = (
        other["positions"]["opening"]["plain"]["games_per_s"]
        / both["positions"]["opening"]["plain"]["games_per_s"]
    )
    assert row.startswith("   opening") and row.endswith(f"{ratio:.2f}x")
    assert "x nard-expert.pt:0" in lines[11]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--part", "search", "--network", "checkpoints/nard-td198.pt"],
            "--network needs --part networks or",
        ),
        (["--part", "rollout", "--network", "no/such.pt"], "--network no/such.pt: no such checkpoint file"),
    ],
)
def test_the_benchmark_refuses_a_network_it_cannot_use(argv, message, capsys):
    from nard_ai.bench import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("beavers", [False, True])
def test_rollout_cube_actions_match_cube_decision(beavers):
    """The rollout's doubler and taker act as nard_ai.cube.cube_decision_from_probs says (money play,
    cube centred), beavers included: double when the decision is one of the doubles, pass when it is
    double/pass; a take doubles the cube (a beaver would quadruple it, but the model never offers a
    double the taker should beaver: 2 x DT < 0 <= ND for such positions)."""
    from nard_ai.cube import DEFAULT_EFFICIENCY, cube_efficiency
    from nard_ai.play.rollout_games import _Cubes

    rng = np.random.default_rng(7)
    n = 400
    w = rng.random(n)
    wg = rng.random(n) * w
    lg = rng.random(n) * (1 - w)
    probs = np.stack([w, wg, rng.random(n) * wg, lg, rng.random(n) * lg], axis=1).astype(np.float32)
    boards = np.tile(na.starting_board(), (n, 1))

    class Fixed:
        def value(self, b):
            return probs, None

    root = CubeState(beavers=beavers)
    cubes = _Cubes(root, n, DEFAULT_EFFICIENCY)
    slots = np.arange(n)
    passed, points = cubes.act(slots, np.zeros(n, dtype=np.int64), boards, Fixed())
    x = cube_efficiency(boards, cubes.efficiency)
    actions = [
        cube_decision_from_probs(probs[i].astype(np.float64), root, efficiency=x[i]).action for i in range(n)
    ]
    want_pass = [i for i, a in enumerate(actions) if a == "double_pass"]
    want_take = [i for i, a in enumerate(actions) if a == "double_take"]
    assert sorted(passed.tolist()) == want_pass and (points == 1).all()
    assert (cubes.value[want_take] == 2).all() and (cubes.owner[want_take] == 1).all()
    rest = sorted(set(range(n)) - set(want_pass) - set(want_take))
    assert (cubes.value[rest] == 1).all() and (cubes.owner[rest] == -1).all()
    assert len(want_take) > 20 and len(want_pass) > 20  # both branches are exercised


def test_rollout_plays_agrees_with_the_2_ply_ranking_on_clear_cut_openings():
    """Issue 4 section 2: a rollout of a position's best plays ranks them as the 2-ply search on
    clear-cut positions. Opening 3-1 (8/5 6/5) and 4-2 (8/4 6/4), where the 2-ply search puts the
    best play 0.08-0.18 ahead of the next, come out best in a 648-game rollout of the 0-ply
    network's top three plays (every candidate meets the same dice)."""
    from nard_ai.agents import load_agent
    from nard_ai.play.rollout import rollout_plays

    two_ply = load_agent(ply=2)
    for dice in ((3, 1), (4, 2)):
        best = two_ply.rank_plays(na.starting_board(), dice).afterstates[0]
        ranked = rollout_plays(na.starting_board(), dice, 648, candidates=3, seed=1)
        assert len(ranked) == 3
        np.testing.assert_array_equal(ranked[0].afterstate, best)
        equities = [p.result.equity for p in ranked]
        assert equities == sorted(equities, reverse=True)


def test_rollout_plays_reports_each_play_from_the_movers_side():
    """A candidate's result is the rollout of the position after the play (opponent on roll) with
    the same seed, turned over: equity negated, win and loss columns exchanged; cubeful money
    values negated; a play that bears off the last checker gets its exact result (RULES.md §6)."""
    from nard_ai.play.rollout import rollout_plays

    agent = Agent(PipEvaluator())
    board = pos(me={1: 1, 4: 1}, opp={1: 2, 2: 1})
    ranked = rollout_plays(board, (4, 1), 36, agent=agent, candidates=5, seed=9)
    finished = [p for p in ranked if not (p.afterstate > 0).any()]
    assert len(finished) == 1  # 4/off 1/off; the other plays leave a checker (4/3/off, ...)
    assert finished[0].result.equity == 1.0 and finished[0].result.probs[0] == 1.0
    others = [p for p in ranked if (p.afterstate > 0).any()]
    for p in others:
        direct = rollout(na.swap_sides(p.afterstate), 36, seed=9, agent=agent)
        assert p.result.equity == pytest.approx(-direct.equity, abs=1e-12)
        assert p.result.probs[0] == pytest.approx(1.0 - direct.probs[0], abs=1e-12)
        np.testing.assert_allclose(p.result.probs[[1, 3]], direct.probs[[3, 1]], atol=1e-12)
    cubeful = rollout_plays(board, (4, 1), 36, agent=agent, cube=CubeState(), candidates=5, seed=9)
    for p in cubeful:
        if (p.afterstate > 0).any():
            direct = rollout(na.swap_sides(p.afterstate), 36, seed=9, agent=agent, cube=CubeState())
            assert p.result.cubeful == pytest.approx(-direct.cubeful, abs=1e-12)


def test_rollout_plays_rejects_bad_arguments():
    from nard_ai.play.rollout import rollout_plays

    agent = Agent(PipEvaluator())
    with pytest.raises(ValueError, match="candidates"):
        rollout_plays(LAST_ROLL, (6, 5), 36, agent=agent, candidates=0)
    with pytest.raises(ValueError, match="cube"):
        rollout_plays(LAST_ROLL, (6, 5), 36, agent=agent, cube={"value": 2})
    with pytest.raises(ValueError, match="rank_plays"):
        rollout_plays(LAST_ROLL, (6, 5), 36, agent=object())
    with pytest.raises(ValueError):
        rollout_plays(LAST_ROLL, (7, 5), 36, agent=agent)


def test_rollout_rejects_wrong_types():
    agent = Agent(LastRollEvaluator())
    for kwargs, match in [
        ({"cube": {"value": 2}}, "CubeState"),
        ({"cube": True}, "CubeState"),
        ({"ply": 1.7}, "ply"),
        ({"ply": "1"}, "ply"),
        ({"variance_reduction": "no"}, "variance_reduction"),
        ({"efficiency": "high", "cube": CubeState()}, "efficiency"),
        ({"efficiency": 1.5, "cube": CubeState()}, "efficiency"),
        ({"root_action": "double_take"}, "needs a cube"),
        ({"root_action": "beaver", "cube": CubeState()}, "root_action"),
    ]:
        with pytest.raises(ValueError, match=match):
            rollout(LAST_ROLL, 36, agent=agent, **kwargs)
    with pytest.raises(ValueError, match="choose_plays"):
        rollout(LAST_ROLL, 36, agent=object())
    with pytest.raises(ValueError, match="ply=2 but the agent searches at ply 1"):
        rollout(LAST_ROLL, 36, ply=2, agent=Agent(LastRollEvaluator(), ply=1))
    with pytest.raises(ValueError, match="no real probabilities"):
        rollout(LAST_ROLL, 36, agent=pubeval_agent(), cube=CubeState())
    with pytest.raises(ValueError, match="may not double"):
        rollout(
            LAST_ROLL, 36, agent=agent, cube=CubeState(value=2, owner="opponent"), root_action="double_take"
        )


def test_root_actions_check_a_cube_decision_by_rollout():
    """The last roll (X wins 27/36 by bearing off now, else O surely wins next): with the cube
    dead, no double is worth 2p - 1 = 0.5 and double/take 2 (2p - 1) = 1.0 per unit of the root
    cube (money); with a fixed efficiency of 0.5 the rollout's numbers are exact whatever x is,
    because the cube is never turned again."""
    agent = Agent(LastRollEvaluator())
    nd = rollout(LAST_ROLL, 36, agent=agent, cube=CubeState(), root_action="no_double")
    dt = rollout(LAST_ROLL, 36, agent=agent, cube=CubeState(), root_action="double_take", efficiency=0.5)
    assert nd.cubeful == pytest.approx(0.5, abs=1e-12) and dt.cubeful == pytest.approx(1.0, abs=1e-12)
    match = CubeState.from_away(3, 3)
    dt_match = rollout(LAST_ROLL, 36, agent=agent, cube=match, root_action="double_take")
    expected = 0.75 * match_equity_after(3, 3, 2) + 0.25 * match_equity_after(3, 3, -2)
    assert dt_match.cubeful == pytest.approx(expected, abs=1e-9)


def test_rollout_caps_the_number_of_games_and_rollout_plays_takes_no_root_action():
    from nard_ai.play.rollout import MAX_GAMES, rollout_plays

    agent = Agent(LastRollEvaluator())
    with pytest.raises(ValueError, match="games must be an integer 1..10,000,000"):
        rollout(LAST_ROLL, MAX_GAMES + 1, agent=agent)
    with pytest.raises(ValueError, match="root_action"):
        rollout_plays(LAST_ROLL, (6, 5), 36, agent=agent, cube=CubeState(), root_action="no_double")


def test_a_cubeful_rollout_counts_the_games_ended_by_a_pass():
    """From LAST_ROLL the dead last-roll cube puts the take point at exactly 25%: at p = 75% the
    opponent passes the double at once (ties go to the pass), so all 36 games end at the root with a
    pass, and RolloutResult.passes says so; a cubeless rollout has none."""
    agent = Agent(LastRollEvaluator())
    r = rollout(LAST_ROLL, 36, agent=agent, cube=CubeState())
    assert r.passes == 36
    assert rollout(LAST_ROLL, 36, agent=agent).passes == 0  # cubeless: no cube, no pass


# ---------------------------------------------------------------- issue 15: memory, progress and a bound


class PipGammonEvaluator:
    """:class:`PipEvaluator` with gammons (a tenth of the wins and of the losses), so all five
    probabilities and the cube have something to average."""

    def evaluate(self, boards):
        pips = pip_count(np.asarray(boards)).astype(np.float64)
        win = 1.0 / (1.0 + np.exp(-(pips[:, 1] - pips[:, 0] + 4.0) / 10.0))
        out = np.zeros((len(boards), 5), dtype=np.float32)
        out[:, 0] = win
        out[:, 1] = 0.1 * win
        out[:, 3] = 0.1 * (1 - win)
        return out


RACE = pos(me={6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, opp={6: 4, 5: 3, 4: 3, 3: 2, 2: 2, 1: 1})
CONTACT = pos(me={24: 1, 13: 5, 8: 3, 6: 5, 5: 1}, opp={24: 2, 13: 5, 8: 3, 6: 4, 4: 1})


def before_blocks_cases():
    """Rollouts covering each path: luck adjustment (1 game: no interval), refilled slots, pubeval,
    money and match cubes, beavers and Jacoby, truncation, a 1-ply agent."""
    pip, pip1 = Agent(PipGammonEvaluator()), Agent(PipGammonEvaluator(), ply=1)
    start = starting_board()
    return {
        "race_vr_1": lambda: rollout(RACE, 1, agent=pip, seed=0),
        "race_vr_2": lambda: rollout(RACE, 2, agent=pip, seed=0),
        "race_vr_37": lambda: rollout(RACE, 37, agent=pip, seed=3),
        "race_novr_300_batch50": lambda: rollout(
            RACE, 300, agent=pip, seed=4, variance_reduction=False, batch=50
        ),
        "start_pubeval_50": lambda: rollout(start, 50, agent=pubeval_agent(), seed=1),
        "start_money_100": lambda: rollout(start, 100, agent=pip, seed=2, cube=CubeState()),
        "contact_match_80_trunc7": lambda: rollout(
            CONTACT, 80, agent=pip, seed=5, truncate=7, cube=CubeState(match_length=5, score=(2, 3))
        ),
        "start_beaver_60": lambda: rollout(
            start, 60, agent=pip, seed=6, cube=CubeState(beavers=True, jacoby=True)
        ),
        "contact_ply1_12": lambda: rollout(CONTACT, 12, agent=pip1, seed=7, truncate=6),
        "start_pip_vr_trunc_40": lambda: rollout(
            start, 40, agent=pip, seed=8, truncate=5, variance_reduction=True
        ),
    }


BEFORE_BLOCKS = json.loads((Path(__file__).parent / "data" / "rollout_before_blocks.json").read_text())
FLOAT_FIELDS = ("probs", "probs_ci", "equity", "equity_ci", "cubeful", "cubeful_ci", "mean_plies")
COUNT_FIELDS = ("games", "truncated", "passes", "variance_reduction", "ply")


def _recorded(r) -> dict:
    def num(x):
        return None if x is None else [float(v) for v in np.atleast_1d(x)]

    return {k: num(getattr(r, k)) for k in FLOAT_FIELDS} | {k: getattr(r, k) for k in COUNT_FIELDS}


def _expected(name: str) -> dict:
    saved = BEFORE_BLOCKS[name]

    def num(x):
        return None if x is None else [float.fromhex(v) for v in (x if isinstance(x, list) else [x])]

    return {k: num(saved[k]) for k in FLOAT_FIELDS} | {k: saved[k] for k in COUNT_FIELDS}


@pytest.mark.parametrize("name", sorted(k for k in BEFORE_BLOCKS if not k.startswith("_")))
def test_results_are_bit_for_bit_those_of_the_code_before_the_blocks(name):
    """Issue 15: the per-game results now live in blocks of CHUNK_GAMES games; a rollout of up to one
    block is the same numbers, to the last bit (NaN where an interval needs 2 games), as the code
    before that change printed for the same seed (tests/data/rollout_before_blocks.json, recorded
    at commit 6e859cf)."""
    got, expected = _recorded(before_blocks_cases()[name]()), _expected(name)
    for key in COUNT_FIELDS:
        assert got[key] == expected[key], key
    for key in FLOAT_FIELDS:
        if expected[key] is None:
            assert got[key] is None, key
        else:
            np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


@pytest.mark.parametrize("chunk", [1, 7, 32])
def test_splitting_the_games_into_small_blocks_changes_nothing_but_rounding(monkeypatch, chunk):
    """Blocks of 1, 7 or 32 games (so 2 to 300 blocks, some finishing out of order) give the same
    counts and the same means and intervals as one block, to 1e-14: the same games are played, and
    Chan, Golub and LeVeque's merge of means and squared deviations is exact up to rounding."""
    cases = before_blocks_cases()
    monkeypatch.setattr(rollout_games, "CHUNK_GAMES", chunk)
    for name, run in cases.items():
        got, expected = _recorded(run()), _expected(name)
        for key in COUNT_FIELDS:
            assert got[key] == expected[key], (name, key)
        for key in FLOAT_FIELDS:
            if expected[key] is not None:
                np.testing.assert_allclose(got[key], expected[key], rtol=0, atol=1e-14, err_msg=name)


def _peak_bytes(games: int) -> int:
    agent = Agent(LastRollEvaluator())
    tracemalloc.start()
    try:
        rollout(LAST_ROLL, games, agent=agent, batch=64, seed=1)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_number_of_games(monkeypatch):
    """Issue 15: 100,000,000 games took 9.7 GB (five float64 results and more per game, kept to
    the end). With blocks of 256 games the peak of the traced allocations for 40,000 games is
    that of 2,000 within 256 kB (numpy keeps a small cache of freed buffers, a few tens of kB);
    the per-game arrays of the code before the blocks alone added 38,000 x 56 bytes = 2.1 MB
    (measured there: 0.29 MB for 2,000 games, 2.2 MB for 20,000)."""
    monkeypatch.setattr(rollout_games, "CHUNK_GAMES", 256)
    _peak_bytes(300)  # warm-up: caches and compiled code
    small, large = _peak_bytes(2_000), _peak_bytes(40_000)
    assert large < small + 256_000, (small, large)


def test_on_games_is_told_every_finished_game():
    """The progress callback's counts add up to the games, in steps of at most one batch."""
    seen = []
    r = rollout(RACE, 300, agent=Agent(PipGammonEvaluator()), seed=4, batch=50, on_games=seen.append)
    assert sum(seen) == r.games == 300 and max(seen) <= 50 and min(seen) >= 1
    with pytest.raises(ValueError, match="on_games must be a callable"):
        rollout(RACE, 3, agent=Agent(PipGammonEvaluator()), on_games=5)


def test_nard_rollout_bounds_the_games_before_loading_anything(capsys, monkeypatch):
    """--games above MAX_GAMES (10,000,000) is one error line and status 2, found by argparse before the network
    loads; MAX_GAMES itself is accepted by the parser. The message gives no time: that depends on the network and
    the machine (MAX_GAMES's docstring and the README give today's)."""
    from nard_ai.interfaces.commands import rollout as rollout_command

    def no_agent(*args, **kwargs):
        raise AssertionError("the agent was loaded before the check")

    monkeypatch.setattr(rollout_command, "agent_arg", no_agent)
    status, out, err = run_cli(["rollout", "4HPwATDgc/ABMA", "--games", str(MAX_GAMES + 1)], capsys)
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        f"nard rollout: error: argument --games: at most {MAX_GAMES:,} games in one rollout "
        f"(run several seeds for more), got {MAX_GAMES + 1:,}"
    ]
    assert rollout_command.games_arg(str(MAX_GAMES)) == MAX_GAMES
    status, out, _ = run_cli(["rollout", "--help"], capsys)
    assert f"{MAX_GAMES:,}" in " ".join(out.split())


@pytest.mark.skipif(not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing")
def test_nard_rollout_draws_a_progress_bar_on_stderr_and_prints_the_same_numbers(capsys):
    """--progress draws tqdm's bar on stderr ("rolling out", up to 36/36 games); stdout is what
    --no-progress prints, but for the timing."""
    argv = ["rollout", "4HPwATDgc/ABMA", "--games", "36", "--seed", "2", "--json"]
    status, with_bar, err = run_cli([*argv, "--progress"], capsys)
    assert status == 0 and "rolling out" in err and "36/36" in err
    status, without, err = run_cli([*argv, "--no-progress"], capsys)
    assert status == 0 and err == ""
    a, b = json.loads(with_bar), json.loads(without)
    a.pop("seconds"), b.pop("seconds")
    assert a == b and a["games"] == 36


def test_cubeful_rollouts_count_a_gammon_once_under_the_jacoby_rule_while_the_cube_is_centred():
    """A fresh reviewer's case (issue 13): the mover bears off its last checker against 15 opposing
    checkers far from home, a certain gammon. With the Jacoby rule and the cube centred it is worth
    one point (RULES.md, "Jacoby rule"), as the lookahead and sessions score it; without it, two."""
    from nard_ai.cube.lookahead import lookahead_cube_decision

    board = np.zeros(26, dtype=np.int8)
    board[1], board[15], board[16] = 1, -8, -7
    agent = Agent(PipGammonEvaluator())
    for jacoby, points in ((True, 1.0), (False, 2.0)):
        cube = CubeState(jacoby=jacoby)
        r = rollout(board, 36, cube=cube, root_action="no_double", variance_reduction=False, agent=agent)
        assert r.cubeful == pytest.approx(points)
        (play,) = rollout_plays(board, (3, 1), 10, cube=cube, candidates=1, agent=agent)
        assert play.result.cubeful == pytest.approx(points)
        assert lookahead_cube_decision(board, cube, agent, ply=1).no_double == pytest.approx(points)
