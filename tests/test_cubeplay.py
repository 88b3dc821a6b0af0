"""Games with the doubling cube between agents: money sessions and matches (nard_ai.play.sessions).

Rules from docs/RULES.md §8. Cube decisions come from
nard_ai.cube.decision's model (Janowski's cubeful equity, cube efficiency 0.68 in
contact); the hand-worked numbers below are that model's, checked against
:func:`nard_ai.cube.cube_decision_from_probs`. With no gammons and
``x = 0.68`` the taker's take point is 21.4% (Janowski 1993,
``(W - 1/2) / (W + L + x/2)`` with ``W = L = 1``) and the doubler's cash
point 80% (``(L + 1) / (W + L + 1/2)``).

Probability vectors are gnubg's five numbers for the side on roll.
"""

from __future__ import annotations

import numpy as np
import pytest

from nard_ai.agents import load_agent, pubeval_agent, random_agent
from nard_ai.cube import MAX_CUBE, CubeState, cube_decision_from_probs
from nard_ai.model.network import cubeless_equity
from nard_ai.play.arena import dice_chunk, play_match
from nard_ai.play.sessions import (
    MODEL_POLICY,
    PASSIVE_POLICY,
    CubePolicy,
    default_cube_policy,
    model_doubles,
    model_takes,
    play_matches,
    play_money_session,
)


def probs(win, win_gammon=0.0, win_backgammon=0.0, lose_gammon=0.0, lose_backgammon=0.0) -> np.ndarray:
    return np.array([win, win_gammon, win_backgammon, lose_gammon, lose_backgammon], dtype=np.float64)


class FixedBeliefAgent:
    """Believes the side on roll has hand-set probabilities in every position; plays like pubeval.

    Counts its ``value`` calls and the boards in each.
    """

    def __init__(self, p) -> None:
        self.p = np.asarray(p, dtype=np.float32)
        self.player = pubeval_agent()
        self.calls: list[int] = []

    def value(self, boards):
        self.calls.append(len(boards))
        p = np.tile(self.p, (len(boards), 1))
        return p, cubeless_equity(p)

    def choose_plays(self, boards, dice):
        return self.player.choose_plays(boards, dice)


def starter_seat(seed: int, pair: int, game: int | None = None) -> int:
    """The seat that opens a game (the opening roll of its dice)."""
    key = (seed, pair) if game is None else (seed, pair, game)
    return dice_chunk(key, 0)[0]


@pytest.fixture(scope="module")
def pubeval_model():
    """Pubeval with the model policy: pseudo-probabilities without gammons, but cube action all the same."""
    return pubeval_agent()


# --------------------------------------------------------------------------- hand-worked money games


def test_ninety_percent_without_gammons_doubles_and_the_opponent_passes_at_the_first_chance():
    """0.9 with no gammons: past the 80% cash point, and the taker's 10% is under its 21.4% take point.

    Both sides believe the side on roll wins 90%. The first cube decision is
    the second ply's (the opening roll is thrown at once, RULES.md §2): the
    side that did not open doubles and the opener passes, losing the cube
    value 1 "at once". All 64 first decisions go in one ``evaluate`` call, and
    all 64 answers in another.
    """
    assert cube_decision_from_probs(probs(0.9)).action == "double_pass"
    agent = FixedBeliefAgent(probs(0.9))
    r = play_money_session(agent, agent, 64, seed=3, batch=64)
    log = r.log
    assert agent.calls == [64, 64]
    assert log.passed.all() and (log.plies == 1).all() and (log.cube_value == 1).all()
    for unit, a_seat, points in zip(log.unit, log.a_seat, log.points, strict=True):
        opener = starter_seat(3, int(unit) // 2)
        assert points == (1 if a_seat != opener else -1)
    assert r.stats_a.doubles + r.stats_b.doubles == 64 and r.stats_a.passes + r.stats_b.passes == 64
    assert r.stats_a.takes == r.stats_b.takes == 0
    assert r.ppg == 0.0 and r.ci95 == 0.0  # each pair: the same seat wins, A sits there once


def test_a_pass_loses_the_current_cube_value_after_an_earlier_take():
    """A believes the roller wins 74%, B 85%: A's pass costs 1 or B's pass costs 2, exactly.

    Hand-worked with nard_ai.cube.decision (money, x = 0.68, no gammons):
    * A on roll, centred, 74%: no double 0.698 < double/take 0.783 -> double.
      B, believing the doubler has 85% (its own 15% < 21.4%), passes: A +1.
    * B on roll, centred, 85%: past the 80% cash point -> double. A, believing
      the doubler has 74% (its own 26% > 21.4%), takes: cube 2, A owns it.
    * A on roll with the cube, 74%: no double 0.732 < double/take 0.783 ->
      redouble; B passes and loses the current value, 2.
    If B opens, A's first decision is the second ply: A +1. If A opens, B
    doubles at the second ply, A takes, A redoubles at the third: A +2. Every
    duplicate pair has one game of each (the opener's seat is shared), so the
    ppg is exactly (1 + 2) / 2 = 1.5.
    """
    centred, owned = CubeState(), CubeState(value=2, owner="on_roll")
    assert cube_decision_from_probs(probs(0.74), centred).action == "double_take"
    assert cube_decision_from_probs(probs(0.74), owned).action == "double_take"
    assert cube_decision_from_probs(probs(0.85), centred).action == "double_pass"
    a, b = FixedBeliefAgent(probs(0.74)), FixedBeliefAgent(probs(0.85))
    r = play_money_session(a, b, 40, seed=5)
    log = r.log
    opener_is_a = np.array(
        [starter_seat(5, int(u) // 2) == s for u, s in zip(log.unit, log.a_seat, strict=True)]
    )
    assert log.passed.all()
    np.testing.assert_array_equal(log.points, np.where(opener_is_a, 2, 1))
    np.testing.assert_array_equal(log.cube_value, np.where(opener_is_a, 2, 1))
    np.testing.assert_array_equal(log.plies, np.where(opener_is_a, 2, 1))
    np.testing.assert_array_equal(log.cube_owner, np.where(opener_is_a, 0, -1))  # A owned the 2-cube it lost
    assert opener_is_a.sum() == 20
    assert r.ppg == 1.5 and r.ci95 == 0.0 and r.average_cube == 1.5
    assert (r.stats_a.doubles, r.stats_a.takes, r.stats_a.passes) == (40, 20, 0)
    assert (r.stats_b.doubles, r.stats_b.takes, r.stats_b.passes) == (20, 0, 40)


def test_a_beaver_redoubles_at_once_and_keeps_the_cube():
    """A (74%) doubles; B believes A has only 40%: its take is worth more than nothing, so it beavers.

    nard_ai.cube.decision: at 40% for the doubler, double/take = -0.808 < 0, so the
    doubled side beavers (money, beavers on). The cube goes to 4, owned by B;
    B (believing the roller has 40%) never redoubles and A has no access, so
    every game is played out for 4 × the result (RULES.md §8). Without beavers
    the same games end on a cube of 2.
    """
    assert cube_decision_from_probs(probs(0.4), CubeState(beavers=True)).beaver
    a, b = FixedBeliefAgent(probs(0.74)), FixedBeliefAgent(probs(0.4))
    r = play_money_session(a, b, 20, seed=6, beavers=True)
    assert (r.log.cube_value == 4).all() and (r.log.cube_owner == 1).all() and not r.log.passed.any()
    assert set(np.abs(r.points).tolist()) <= {4, 8, 12}
    assert r.stats_b.beavers == r.stats_b.takes == r.stats_a.doubles == 20 and r.stats_b.doubles == 0
    plain = play_money_session(a, b, 20, seed=6)
    assert (plain.log.cube_value == 2).all() and plain.stats_b.beavers == 0
    np.testing.assert_array_equal(plain.points * 2, r.points)  # the same games, half the stake


def test_the_jacoby_rule_counts_gammons_as_single_games_while_the_cube_is_centred():
    """Nobody doubles (pubeval and random: never double, always take), so every cube stays centred."""
    pub, rnd = pubeval_agent(), random_agent(7)
    plain = play_money_session(pub, rnd, 40, seed=7)
    rnd = random_agent(7)
    jacoby = play_money_session(pub, rnd, 40, seed=7, jacoby=True)
    assert (np.abs(plain.points) >= 2).any()  # pubeval gammons the random player
    np.testing.assert_array_equal(jacoby.points, np.sign(plain.points))


def test_a_threshold_policy_doubles_and_takes_on_its_own_numbers():
    """A doubles at 80% or more (believes 85%); B never doubles and takes at 20% or more (believes 15%: passes).

    A wins the cube value 1 at its first decision of every game: exactly +1 ppg.
    """
    a, b = FixedBeliefAgent(probs(0.85)), FixedBeliefAgent(probs(0.85))
    pa = CubePolicy("threshold", double_at=0.8)
    pb = CubePolicy("threshold", double_at=None, take_at=0.2)
    r = play_money_session(a, b, 20, seed=8, policy_a=pa, policy_b=pb)
    assert (r.points == 1).all() and r.log.passed.all() and r.stats_b.doubles == 0


def test_a_session_where_nobody_doubles_is_the_cubeless_arena_match():
    """Pubeval and the random player get the passive policy; the dice are nard_ai.play.arena's."""
    assert default_cube_policy(pubeval_agent()) == PASSIVE_POLICY
    assert default_cube_policy(random_agent(0)) == PASSIVE_POLICY
    cubeless = play_match(pubeval_agent(), random_agent(11), 60, seed=11, batch=16)
    cubeful = play_money_session(pubeval_agent(), random_agent(11), 60, seed=11, batch=16)
    np.testing.assert_array_equal(cubeful.points, cubeless.points)
    assert cubeful.stats_a == cubeful.stats_b and cubeful.stats_a.doubles == 0


# --------------------------------------------------------------------------- duplicate dice, CIs


def test_an_agent_against_itself_on_duplicate_dice_scores_exactly_zero(pubeval_model):
    """Each dice sequence is played twice with the seats swapped: a deterministic agent's pair sums to 0."""
    r = play_money_session(
        pubeval_model, pubeval_model, 40, seed=12, policy_a=MODEL_POLICY, policy_b=MODEL_POLICY
    )
    pairs = r.points.reshape(-1, 2)
    assert (pairs.sum(axis=1) == 0).all() and r.ppg == 0.0
    assert r.stats_a.doubles + r.stats_b.doubles > 0 and r.log.passed.any()  # cube action happened
    # two separate but identical agents (no merged calls) play the same games
    twin = play_money_session(
        pubeval_model, pubeval_agent(), 40, seed=12, policy_a=MODEL_POLICY, policy_b=MODEL_POLICY
    )
    np.testing.assert_array_equal(twin.points, r.points)
    m = play_matches(
        pubeval_model, pubeval_model, 12, 3, seed=12, policy_a=MODEL_POLICY, policy_b=MODEL_POLICY
    )
    assert m.win_rate == 0.5 and (m.won.reshape(-1, 2).sum(axis=1) == 1).all()
    assert m.points_won == m.points_lost


def test_the_shipped_network_against_itself_scores_exactly_zero_on_duplicate_dice():
    net = load_agent()
    r = play_money_session(net, net, 16, seed=13)
    assert (r.points.reshape(-1, 2).sum(axis=1) == 0).all() and r.ppg == 0.0
    assert r.stats_a.doubles + r.stats_b.doubles > 0 and r.stats_a.takes + r.stats_b.takes > 0


def test_the_ppg_interval_is_over_duplicate_pairs_and_shrinks_with_games(pubeval_model):
    """95% CI = 1.96 × std(pair means) / sqrt(pairs); four times the games, about half the width."""
    small, large = (
        play_money_session(pubeval_model, random_agent(14), n, seed=14, policy_a=MODEL_POLICY)
        for n in (64, 256)
    )
    for r in (small, large):
        pairs = r.points.reshape(-1, 2).mean(axis=1)
        assert r.ci95 == pytest.approx(1.96 * pairs.std(ddof=1) / np.sqrt(len(pairs)))
    assert large.ci95 < small.ci95 and 0.3 < large.ci95 / small.ci95 < 0.8
    assert large.ppg > 0  # pubeval with a cube beats a random player


# --------------------------------------------------------------------------- matches


def replay_scores(m, length):
    """Per match: games in order, checked for score bookkeeping; returns the logs grouped by match."""
    log = m.log
    for match in range(m.matches):
        rows = np.flatnonzero(log.unit == match)
        rows = rows[np.argsort(log.game[rows])]
        assert log.game[rows].tolist() == list(range(len(rows)))
        score = np.zeros(2, dtype=np.int64)
        crawford_seen = False
        for k, r in enumerate(rows):
            np.testing.assert_array_equal(log.score[r], score)
            assert score.max() < length  # a game is only played while the match runs
            # RULES.md §8: the Crawford game is the first game after a side first reaches length - 1
            previous = log.score[rows[k - 1]] if k else None
            expected = (
                previous is not None
                and score.max() == length - 1
                and previous.max() < length - 1
                and not crawford_seen
            )
            assert bool(log.crawford[r]) == expected, (match, k)
            crawford_seen |= bool(log.crawford[r])
            points = int(log.points[r])
            score[0 if points > 0 else 1] += abs(points)
        # the match ends with the game in which a side reaches the length
        assert score.max() >= length and score.min() < length
        np.testing.assert_array_equal(m.score[match], score)
        assert m.won[match] == (score[0] >= length)


def test_matches_end_at_the_length_and_the_score_adds_up(pubeval_model):
    m = play_matches(pubeval_model, pubeval_agent(), 20, 5, seed=15, policy_a=MODEL_POLICY)
    replay_scores(m, 5)
    assert m.points_won == m.score[:, 0].sum() and m.games == len(m.log)
    assert 0.0 <= m.win_rate <= 1.0 and m.log.crawford.any()
    # A double is offered only while the doubler needs more than the cube: a cube never reaches
    # twice what the side needing the most still needs.
    away = 5 - m.log.score
    assert (m.log.cube_value < 2 * away.max(axis=1)).all()


def test_no_double_in_the_crawford_game_and_the_trailer_doubles_after_it():
    """Both sides believe the roller wins 90%: pre-Crawford every first decision is a double.

    RULES.md §8: "in the first game after either player first reaches one
    point short of the match length, nobody may double". After it, the
    trailer may double (the leader never does: winning a 1-cube already wins
    it the match, nard_ai.cube.decision's ``can_double``); at double match point
    (both 1-away) no cube turns.
    """
    agent = FixedBeliefAgent(probs(0.9))
    m = play_matches(agent, agent, 24, 3, seed=16)
    replay_scores(m, 3)
    log = m.log
    crawford = log.crawford
    post = ~crawford & (log.score.max(axis=1) == 2) & (log.score.min(axis=1) < 2)
    dmp = (log.score == 2).all(axis=1)
    assert crawford.any() and post.any()
    assert (log.doubles[crawford] == 0).all() and not log.passed[crawford].any()
    trailer = np.argmin(log.score, axis=1)
    for r in np.flatnonzero(post):
        assert log.doubles[r, trailer[r]] == 1 and log.doubles[r, 1 - trailer[r]] == 0
    assert (log.doubles[dmp] == 0).all()


def test_the_match_result_reports_the_win_rate_with_its_interval(pubeval_model):
    m = play_matches(pubeval_model, random_agent(17), 16, 3, seed=17, policy_a=MODEL_POLICY)
    pairs = m.won.reshape(-1, 2).mean(axis=1)
    assert m.win_rate == m.won.mean() and m.ci95 == pytest.approx(1.96 * pairs.std(ddof=1) / np.sqrt(8))
    text = m.summary("pubeval", "random")
    assert "3-point matches" in text and "95% CI" in text


# --------------------------------------------------------------------------- the batched model


def test_batched_decisions_agree_with_the_scalar_cube_decision():
    """model_doubles / model_takes against cube_decision_from_probs on random probabilities and cube states."""
    rng = np.random.default_rng(18)
    n = 300
    w = rng.uniform(0.0, 1.0, n)
    wg = w * rng.uniform(0.0, 0.5, n)
    wg[: n // 4] = 0.0  # some without gammons ("too good" needs one)
    lg = (1.0 - w) * rng.uniform(0.0, 0.5, n)
    p = np.stack([w, wg, wg * 0.1, lg, lg * 0.1], axis=1)
    x = rng.uniform(0.55, 0.75, n)
    states = [
        CubeState(),
        CubeState(value=4, owner="on_roll"),
        CubeState(jacoby=True),
        CubeState(beavers=True),
        CubeState.for_match(7, (2, 4)),
        CubeState.for_match(5, (0, 4)),  # post-Crawford trailer
        CubeState.for_match(9, (3, 1), value=2, owner="on_roll"),
    ]
    for cube in states:
        doubles = model_doubles(p, cube, x)
        take, beaver = model_takes(p, cube, x)
        for i in range(n):
            d = cube_decision_from_probs(p[i], cube, x[i])
            assert doubles[i] == (d.action in ("double_take", "double_pass")), (cube, p[i], d.action)
            assert take[i] == (d.double_take < d.double_pass), (cube, p[i])
            assert beaver[i] == d.beaver, (cube, p[i])


def test_the_cube_stops_at_its_largest_value():
    """Two sides that always believe they are 74% double and take every turn; no cube goes past 4096."""
    agent = FixedBeliefAgent(probs(0.74))
    r = play_money_session(agent, agent, 4, seed=19)
    assert (r.log.cube_value == MAX_CUBE).all()


# --------------------------------------------------------------------------- input checks


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda a: play_money_session(a, a, 0), "games must be an integer >= 1"),
        (lambda a: play_money_session(a, a, 2, batch=0), "batch must be an integer >= 1"),
        (lambda a: play_money_session(a, object(), 2), "agent_b must have value"),
        (lambda a: play_money_session(a, a, 2, policy_a="model"), "policy_a must be a CubePolicy"),
        (lambda a: play_matches(a, a, 2, 0), "match_length must be 1..25"),
        (lambda a: play_matches(a, a, 2, 26), "match_length must be 1..25"),
        (lambda a: CubePolicy("always"), "cube policy kind"),
        (lambda a: CubePolicy("threshold", double_at=1.5), "double_at must be within"),
    ],
)
def test_bad_arguments_raise_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call(FixedBeliefAgent(probs(0.5)))
