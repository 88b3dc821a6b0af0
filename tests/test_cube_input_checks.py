"""Bad input to the public cube and match-equity API gets a clear ValueError.

The project rule (preamble, STYLE.md): a wrong *type* or an impossible value
is refused with a ValueError that says what is wrong, never an
AttributeError/TypeError traceback and never silently coerced to another
value (``bool("no") is True``; ``int(1.5) == 1``; ``tuple("12") == ("1", "2")``).

The cube cap: a side may double only while winning the current cube would not
already win it the match (gnubg 1.07 ``play.c`` ``CommandDouble``: "The cube
is dead; you can't double any more"; ``GetDPEq``; :attr:`CubeState.can_double`).
:func:`reachable_cubes` is the slow, obviously correct reference for the cube
values that rule lets a match reach.
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na
from nard_ai.agents import agent_from_spec
from nard_ai.cube import (
    CENTRED,
    ON_ROLL,
    OPPONENT,
    CubeEfficiency,
    CubeState,
    cube_decision,
    cube_decision_from_probs,
    cubeful_equity,
    gammon_values,
    highest_cube_value,
)
from nard_ai.cube.met import MAX_AWAY, match_equity, match_equity_after, met_tables

BOARD = na.starting_board()
P = np.array([0.72, 0.20, 0.01, 0.10, 0.005])  # gnubg order, side on roll


class FixedAgent:
    """An agent whose ``value`` returns fixed probabilities (the search seam)."""

    def __init__(self, p=P, ply=None):
        self.p = np.asarray(p, dtype=np.float32)
        if ply is not None:
            self.ply = ply

    def value(self, boards):
        out = np.tile(self.p, (len(np.asarray(boards)), 1))
        return out, 2 * out[:, 0] - 1 + out[:, 1] + out[:, 2] - out[:, 3] - out[:, 4]


def reachable_cubes(away: int, opp_away: int) -> set[tuple[int, str]]:
    """Every (value, owner) a non-Crawford game reaches from a centred cube, every double live.

    A side may double when it owns the cube or the cube is centred and its
    away count is above the cube value; the taker then owns twice the value.
    """
    needs = {ON_ROLL: away, OPPONENT: opp_away}
    seen = {(1, CENTRED)}
    frontier = [(1, CENTRED)]
    while frontier:
        value, owner = frontier.pop()
        for doubler, taker in ((ON_ROLL, OPPONENT), (OPPONENT, ON_ROLL)):
            if owner in (CENTRED, doubler) and needs[doubler] > value:
                state = (2 * value, taker)
                if state not in seen:
                    seen.add(state)
                    frontier.append(state)
    return seen


# --------------------------------------------------------------------------- the cube argument


@pytest.mark.parametrize("cube", [{"value": 2}, None, "money", True, 2])
def test_cube_decision_refuses_a_cube_that_is_not_a_cube_state(cube):
    with pytest.raises(ValueError, match="cube must be a CubeState"):
        cube_decision(BOARD, cube=cube, agent=FixedAgent())


@pytest.mark.parametrize("cube", [{"value": 2}, None, "money"])
def test_the_model_functions_refuse_a_cube_that_is_not_a_cube_state(cube):
    with pytest.raises(ValueError, match="cube must be a CubeState"):
        cube_decision_from_probs(P, cube)
    with pytest.raises(ValueError, match="cube must be a CubeState"):
        cubeful_equity(P, cube)
    with pytest.raises(ValueError, match="cube must be a CubeState"):
        gammon_values(cube)


# --------------------------------------------------------------------------- ply


@pytest.mark.parametrize("ply", [None, "2", 1.5, True, False, 3, -1, np.float64(1.0)])
def test_cube_decision_refuses_a_ply_that_is_not_an_integer_0_to_2(ply):
    """Checked before the shipped network would be loaded for ``agent=None``."""
    with pytest.raises(ValueError, match=r"ply must be an integer 0\.\.2"):
        cube_decision(BOARD, ply=ply)
    with pytest.raises(ValueError, match=r"ply must be an integer 0\.\.2"):
        cube_decision(BOARD, ply=ply, agent=FixedAgent())


def test_a_numpy_integer_ply_is_an_integer_ply():
    d = cube_decision(BOARD, ply=np.int64(1), agent=FixedAgent(ply=1))
    assert d.ply == 1 and type(d.ply) is int
    # An agent without a ply attribute: the ply given is recorded, as a Python int.
    d = cube_decision(BOARD, ply=np.int32(2), agent=FixedAgent())
    assert d.ply == 2 and type(d.ply) is int


@pytest.mark.parametrize("ply", ["2", 1.5, True, 3])
def test_cube_decision_from_probs_refuses_a_ply_that_is_not_none_or_0_to_2(ply):
    with pytest.raises(ValueError, match="ply must be an integer"):
        cube_decision_from_probs(P, CubeState(), 0.68, ply=ply)
    assert cube_decision_from_probs(P, CubeState(), 0.68, ply=None).ply is None


# --------------------------------------------------------------------------- agent


@pytest.mark.parametrize("agent", [object(), "pubeval", 42])
def test_cube_decision_refuses_an_agent_without_evaluate(agent):
    with pytest.raises(ValueError, match=r"agent needs value\(boards\)"):
        cube_decision(BOARD, agent=agent)


@pytest.mark.parametrize("spec", ["pubeval", "random"])
def test_cube_decision_refuses_agents_without_real_probabilities(spec):
    """pubeval and the random agent rank plays by ``score_plays`` (as nard_ai.reports.error_rate refuses a referee)."""
    with pytest.raises(ValueError, match="has no real probabilities"):
        cube_decision(BOARD, agent=agent_from_spec(spec))


def test_cube_decision_refuses_an_evaluate_that_does_not_return_probs_and_equity():
    class ProbsOnly:
        def evaluate(self, boards):
            return np.tile(P, (len(boards), 1))  # an Evaluator's shape, not an agent's

    with pytest.raises(ValueError, match=r"must return \(probs"):
        cube_decision(BOARD, agent=ProbsOnly())


# --------------------------------------------------------------------------- efficiency


@pytest.mark.parametrize("efficiency", [True, "0.5", [0.5], np.array([0.5])])
def test_a_fixed_efficiency_must_be_a_number(efficiency):
    with pytest.raises(ValueError, match="cube efficiency must be a number"):
        cube_decision(BOARD, agent=FixedAgent(), efficiency=efficiency)
    with pytest.raises(ValueError, match="cube efficiency must be a number"):
        cube_decision_from_probs(P, CubeState(), efficiency)


@pytest.mark.parametrize("efficiency", [True, "x", np.array([True])])
def test_cubeful_equity_refuses_an_efficiency_that_is_not_numeric(efficiency):
    with pytest.raises(ValueError, match="cube efficiency must be a number"):
        cubeful_equity(P, CubeState(), efficiency)


@pytest.mark.parametrize("efficiency", [1.5, -0.1, float("nan"), np.array([0.5, 2.0])])
def test_cubeful_equity_refuses_an_efficiency_outside_0_1(efficiency):
    with pytest.raises(ValueError, match=r"within \[0, 1\]"):
        cubeful_equity(np.tile(P, (2, 1)), CubeState(), efficiency)


def test_numpy_efficiencies_give_the_same_numbers_as_python_floats():
    d = cube_decision_from_probs(P, CubeState(), 0.6)
    for x in (np.float64(0.6), np.array(0.6)):
        e = cube_decision_from_probs(P, CubeState(), x)
        assert (e.no_double, e.double_take, e.action) == (d.no_double, d.double_take, d.action)
    assert float(cubeful_equity(P, CubeState(), np.array([0.6]))[0]) == float(
        cubeful_equity(P, CubeState(), 0.6)
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(contact="0.5"),
        dict(contact=True),
        dict(bearoff=None),
        dict(race_factor="a"),
        dict(race_coefficient=np.nan),
    ],
)
def test_cube_efficiency_fields_must_be_finite_real_numbers(kwargs):
    with pytest.raises(ValueError, match="must be a finite real number"):
        CubeEfficiency(**kwargs)


# --------------------------------------------------------------------------- CubeState field types


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(match_length=5, score="12"), "score must be a pair of integers"),
        (dict(match_length=5, score=(1.5, 2)), "score must be a pair of integers"),
        (dict(match_length=5, score=(1, "2")), "score must be a pair of integers"),
        (dict(match_length=5, score=(True, 0)), "score must be a pair of integers"),
        (dict(match_length=5, score=None), "score must be a pair of integers"),
        (dict(match_length=5, score={1, 2}), "score must be a pair of integers"),
        (dict(match_length=5, score=(1, 2, 3)), "score must be a pair of integers"),
        (dict(jacoby="yes"), "jacoby must be True or False"),
        (dict(jacoby=1), "jacoby must be True or False"),
        (dict(beavers="no"), "beavers must be True or False"),
        (dict(match_length=5, score=(4, 1), crawford="no"), "crawford must be True or False"),
        (dict(match_length=5, score=(4, 1), crawford=None), "crawford must be True or False"),
        (dict(value=2.0, owner=ON_ROLL), "power of two"),
        (dict(value="2", owner=ON_ROLL), "power of two"),
        (dict(value=True), "power of two"),
        (dict(match_length=5.0), "match_length"),
        (dict(match_length="5"), "match_length"),
        (dict(match_length=True), "match_length"),
        (dict(owner=None), "owner"),
        (dict(owner=["on_roll"]), "owner"),
        (dict(value=2, owner="ON_ROLL"), "owner"),
        (dict(value=2, owner="me"), "owner"),
    ],
)
def test_cube_state_refuses_fields_of_the_wrong_type(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CubeState(**kwargs)


def test_cube_state_takes_numpy_integers_and_bools_and_stores_python_values():
    cube = CubeState(
        value=np.int64(2),
        owner=np.str_(ON_ROLL),
        match_length=np.int32(7),
        score=np.array([3, 1]),
        crawford=np.bool_(False),
    )
    assert cube == CubeState(value=2, owner=ON_ROLL, match_length=7, score=(3, 1))
    assert type(cube.value) is int and type(cube.match_length) is int and type(cube.crawford) is bool
    assert cube.score == (3, 1) and all(type(s) is int for s in cube.score)
    assert CubeState(match_length=5, score=[1, 2]).score == (1, 2)
    assert CubeState(jacoby=np.bool_(True)).jacoby is True
    # The same numbers as with Python values (the checks change no result).
    a = cube_decision_from_probs(P, cube, 0.68)
    b = cube_decision_from_probs(P, CubeState(value=2, owner=ON_ROLL, match_length=7, score=(3, 1)), 0.68)
    assert (a.no_double, a.double_take, a.double_pass, a.action) == (
        b.no_double,
        b.double_take,
        b.double_pass,
        b.action,
    )


@pytest.mark.parametrize(
    "args",
    [("3", 4), (3.0, 4), (True, 3), (0, 3), (3, 26)],
)
def test_cube_state_from_away_refuses_counts_that_are_not_integers_1_to_25(args):
    with pytest.raises(ValueError, match=r"integer number of points 1\.\.25"):
        CubeState.from_away(*args)


# --------------------------------------------------------------------------- cube values that cannot occur


@pytest.mark.parametrize("match_length", [0, 7])
@pytest.mark.parametrize("owner", [ON_ROLL, OPPONENT])
def test_an_owned_cube_of_1_is_refused_a_turned_cube_is_at_least_2(owner, match_length):
    """Mirrors "a centred cube has value 1": the first double makes the cube 2 and gives it an owner."""
    with pytest.raises(ValueError, match="a cube of 1 is centred"):
        CubeState(value=1, owner=owner, match_length=match_length)


def test_a_cube_of_64_cannot_occur_in_a_3_point_match():
    """3-point match at 0-0: one side doubles to 2 (needs 3 > 1), the other redoubles to 4 (3 > 2);
    a redouble to 8 would need 3 > 4. So 4 is the top, for either owner."""
    for owner in (ON_ROLL, OPPONENT):
        assert CubeState(match_length=3, value=4, owner=owner).value == 4
        for value in (8, 64):
            with pytest.raises(ValueError, match="the highest cube .* can own here is 4"):
                CubeState(match_length=3, value=value, owner=owner)


def test_post_crawford_only_the_trailer_can_have_doubled_and_only_to_2():
    """5-point match, 4-0 after the Crawford game: the leader (1-away) never doubles (winning 1 wins
    the match), so the leader can own at most the 2 the trailer gave it, and the trailer owns no cube."""
    leader_on_roll = dict(match_length=5, score=(4, 0))
    assert CubeState(value=2, owner=ON_ROLL, **leader_on_roll).post_crawford
    with pytest.raises(ValueError, match="highest cube"):
        CubeState(value=4, owner=ON_ROLL, **leader_on_roll)
    with pytest.raises(ValueError, match="1-away, can never have doubled"):
        CubeState(value=2, owner=OPPONENT, **leader_on_roll)


@pytest.mark.parametrize(
    "owner_away, doubler_away, top",
    [
        (3, 3, 4),  # 3-point match at 0-0: 2, then 4
        (1, 5, 2),  # the post-Crawford leader owns the trailer's 2
        (5, 1, 1),  # a 1-away side never doubles: no turned cube for the other side
        (2, 7, 4),  # owner doubled 1 -> 2 (2 > 1), doubler 2 -> 4 (7 > 2); 4 -> 8 needs the owner's 2 > 2
        (9, 9, 16),  # 8 -> 16 by the doubler (9 > 8); 16 -> 32 would need 9 > 16
        (25, 25, 32),  # the largest match the table covers
    ],
)
def test_highest_cube_value_by_hand(owner_away, doubler_away, top):
    assert highest_cube_value(owner_away, doubler_away) == top


@pytest.mark.parametrize("args", [(0, 3), (3, 26), ("3", 3), (3, 2.0), (True, 3)])
def test_highest_cube_value_refuses_counts_that_are_not_integers_1_to_25(args):
    with pytest.raises(ValueError, match=r"integer number of points 1\.\.25"):
        highest_cube_value(*args)


def test_cube_state_accepts_exactly_the_cubes_reachable_by_live_doubles():
    """Every score of every match length 1..25 (not the Crawford game): CubeState accepts a
    (value, owner) if and only if :func:`reachable_cubes` reaches it, and a double from a
    reachable state (when :attr:`CubeState.can_double`) lands on a reachable state."""
    values = [1 << k for k in range(1, 7)]  # 2 .. 64
    for length in range(1, MAX_AWAY + 1):
        for s0 in range(length):
            for s1 in range(length):
                away, opp_away = length - s0, length - s1
                reachable = reachable_cubes(away, opp_away)
                for owner in (ON_ROLL, OPPONENT):
                    for value in values:
                        try:
                            cube = CubeState(value=value, owner=owner, match_length=length, score=(s0, s1))
                        except ValueError:
                            assert (value, owner) not in reachable, (length, s0, s1, value, owner)
                            continue
                        assert (value, owner) in reachable, (length, s0, s1, value, owner)
                        top = highest_cube_value(
                            *((away, opp_away) if owner == ON_ROLL else (opp_away, away))
                        )
                        assert value <= top
                        if cube.can_double:
                            doubled = cube.doubled()
                            assert (doubled.value, doubled.owner) in reachable
                        swapped = cube.swapped()  # the same state from the other side stays valid
                        assert swapped.swapped() == cube
                for value, owner in reachable:
                    if owner != CENTRED:
                        CubeState(value=value, owner=owner, match_length=length, score=(s0, s1))


def test_money_cubes_keep_their_range_up_to_the_supported_maximum():
    """No match, no cap from the score: only powers of two, owned when above 1, up to MAX_CUBE."""
    from nard_ai.cube import MAX_CUBE

    assert CubeState(value=MAX_CUBE, owner=OPPONENT).value == MAX_CUBE
    with pytest.raises(ValueError, match="above the supported"):
        CubeState(value=2 * MAX_CUBE, owner=OPPONENT)


# --------------------------------------------------------------------------- met.py


@pytest.mark.parametrize("flag", ["no", "yes", None, 1, 0, 1.0])
def test_match_equity_refuses_a_post_crawford_flag_that_is_not_a_bool(flag):
    """``match_equity(1, 2, 'no')`` used to return the post-Crawford value (bool('no') is True)."""
    with pytest.raises(ValueError, match="post_crawford must be True or False"):
        match_equity(1, 2, flag)


def test_match_equity_takes_numpy_bools_and_integers_with_the_same_values():
    """Kazaross-XG2 (the shipped table): 2-away vs 4-away = 0.6687; post-Crawford 2-away vs 1 = 0.48803."""
    assert match_equity(np.int64(2), np.int32(4)) == match_equity(2, 4) == 0.6687
    assert match_equity(2, 1, np.bool_(True)) == match_equity(2, 1, True) == 0.48803
    _, post = met_tables()
    assert match_equity(2, 1, post_crawford=True) == post[1]


@pytest.mark.parametrize("points", [1.5, "1", True, None, 2.0])
def test_match_equity_after_refuses_points_that_are_not_integers(points):
    with pytest.raises(ValueError, match="points must be an integer"):
        match_equity_after(2, 4, points)


@pytest.mark.parametrize("flag", ["no", 1, None])
def test_match_equity_after_refuses_a_crawford_flag_that_is_not_a_bool(flag):
    """``match_equity_after(2, 4, 1, 'no')`` used to treat the next game as post-Crawford."""
    with pytest.raises(ValueError, match="crawford must be True or False"):
        match_equity_after(2, 4, 1, flag)


@pytest.mark.parametrize("away, opp_away", [(3, 5), (1, 1), (2, 2)])
def test_match_equity_after_refuses_a_crawford_game_without_exactly_one_side_1_away(away, opp_away):
    """RULES.md §8: the Crawford game is the one after a side first reaches match length minus one.
    At 3-away/5-away a Crawford flag used to make the next game post-Crawford after a win of 2."""
    with pytest.raises(ValueError, match="exactly one side 1-away"):
        match_equity_after(away, opp_away, 2, crawford=True)


def test_match_equity_after_takes_numpy_integers_with_the_same_values():
    pre, post = met_tables()
    # 3-away vs 5-away, win 2: 1-away vs 5-away in the Crawford game (pre-table row 1).
    assert match_equity_after(np.int64(3), 5, np.int64(2)) == match_equity_after(3, 5, 2) == pre[0, 4]
    # The Crawford game at 1-away vs 5-away, lose 1: post-Crawford 1-away vs 4-away.
    assert match_equity_after(1, 5, -1, crawford=np.bool_(True)) == pytest.approx(1.0 - post[3])


def test_the_ply_bound_is_the_searchs():
    """One ply check for every layer: the cube's and the rollouts' check_ply is nard_ai.core.ply's, and
    the search's MAX_PLY is its bound (2: the deepest search implemented, gnubg numbering)."""
    import importlib

    from nard_ai import cube
    from nard_ai.core import ply
    from nard_ai.search.lookahead import MAX_PLY

    rollout = importlib.import_module("nard_ai.play.rollout")  # the module, not the function
    assert cube.check_ply is rollout.check_ply is ply.check_ply
    assert MAX_PLY == ply.MAX_PLY == 2


def test_the_largest_money_cube_cannot_be_redoubled():
    """nard_ai represents cubes up to MAX_CUBE = 4096 (gnubg's Match ID holds the log2 in 4 bits):
    a money cube at 4096 has no double, so cube_decision answers no double instead of failing."""
    from nard_ai import starting_board
    from nard_ai.cube import MAX_CUBE, CubeState, cube_decision

    cube = CubeState(value=MAX_CUBE, owner="on_roll")
    assert not cube.can_double
    d = cube_decision(starting_board(), cube)
    assert d.action == "no_double" and not d.cube_available
    assert CubeState(value=MAX_CUBE // 2, owner="on_roll").can_double
