"""The Gymnasium environment with the doubling cube (``cube=True``, RULES.md §8).

Rules from docs/RULES.md §8: "On their own turn, before rolling,
a player who owns the cube (or anyone while it is centred) may double. The
opponent either takes — the game value doubles and the taker now owns the
cube, and only they may redouble — or passes and loses the current value at
once." "The final score is result points (1/2/3) × cube value."

Boards are in the layout of :mod:`nard_ai.core.board` (the mover's view); ``pos``
takes each side's checkers in its own numbering.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import env  # noqa: F401  (registers the ids)
from env import BackgammonEnv, BackgammonVectorEnv
from env.spaces import (
    CHECKER_OBS_SIZE,
    CUBE_OBS_UNITS,
    MAX_PLAYS,
    PHASE_DOUBLE,
    PHASE_MOVE,
    PHASE_TAKE,
    PLAY_OBS_SIZE,
    ROLL_HIGH_UNITS,
    ROLL_LOW_UNITS,
)
from nard_ai.core.board import pos, starting_board, swap_sides
from nard_ai.core.checker_moves import NUM_CHECKER_ACTIONS
from nard_ai.core.movegen import legal_plays

MODES = ("play", "checker")
ROLL, DOUBLE, TAKE, PASS = MAX_PLAYS, MAX_PLAYS + 1, MAX_PLAYS + 2, MAX_PLAYS + 3  # play mode


def cube_obs(obs: np.ndarray) -> np.ndarray:
    """The six cube units at the end of an observation."""
    return obs[-CUBE_OBS_UNITS:]


def masked_random_action(info: dict, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(info["action_mask"])))


def first_move(info: dict) -> int:
    """The lowest legal action (a move: cube actions come after the moves)."""
    return int(np.flatnonzero(info["action_mask"])[0])


def cube_self_env(**kwargs) -> BackgammonEnv:
    return BackgammonEnv(action_mode="play", opponent="self", cube=True, **kwargs)


# --------------------------------------------------------------------------
# Spaces, the env checker, arguments
# --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_the_cube_adds_four_actions_and_six_observation_units(mode):
    e = BackgammonEnv(action_mode=mode, cube=True)
    moves = MAX_PLAYS if mode == "play" else NUM_CHECKER_ACTIONS
    assert e.action_space == gym.spaces.Discrete(moves + 4)
    assert e.cube_actions == {"roll": moves, "double": moves + 1, "take": moves + 2, "pass": moves + 3}
    size = (PLAY_OBS_SIZE if mode == "play" else CHECKER_OBS_SIZE) + CUBE_OBS_UNITS
    assert e.observation_space.shape == (size,)
    # cube=False keeps the v0 spaces
    plain = BackgammonEnv(action_mode=mode)
    assert plain.action_space == gym.spaces.Discrete(moves) and plain.cube_actions == {}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("opponent", ["random", "self"])
def test_env_checker_passes_with_the_cube(mode, opponent):
    check_env(BackgammonEnv(action_mode=mode, opponent=opponent, cube=True), skip_render_check=True)
    check_env(gym.make("nard/Backgammon-v0", action_mode=mode, opponent=opponent, cube=True).unwrapped)


@pytest.mark.parametrize(
    "kwargs, options, message",
    [
        ({"jacoby": True}, None, "jacoby=True needs cube=True"),
        ({"cube": 1}, None, "cube must be True or False"),
        ({}, {"cube_value": 2, "cube_owner": 0}, "need an env made with cube=True"),
        ({"cube": True}, {"cube_value": 3, "cube_owner": 0}, "power of two"),
        ({"cube": True}, {"cube_value": 8192, "cube_owner": 0}, "above the largest cube 4096"),
        ({"cube": True}, {"cube_value": 1, "cube_owner": 0}, "an owned cube is 2 or more"),
        ({"cube": True}, {"cube_owner": 2}, "must be -1"),
    ],
)
def test_bad_cube_arguments_are_rejected_with_a_clear_error(kwargs, options, message):
    with pytest.raises(ValueError, match=message):
        BackgammonEnv(**kwargs).reset(seed=0, options=options)


# --------------------------------------------------------------------------
# The cube phases, step by step
# --------------------------------------------------------------------------


def test_the_opening_turn_has_no_cube_phase_and_the_next_turn_starts_with_one():
    """RULES.md §2: the opening roll is thrown at once, so the first cube decision is the second turn's."""
    e = cube_self_env()
    obs, info = e.reset(seed=0)
    assert info["phase"] == PHASE_MOVE and info["dice"].all()
    assert not info["action_mask"][ROLL:].any()
    starter = info["player"]
    obs, reward, terminated, _, info = e.step(first_move(info))
    # The other side, before rolling: it may roll or double; the dice are not shown.
    assert info["player"] == 1 - starter and info["phase"] == PHASE_DOUBLE
    assert np.flatnonzero(info["action_mask"]).tolist() == [ROLL, DOUBLE]
    assert (info["dice"] == 0).all() and not obs[ROLL_HIGH_UNITS].any() and not obs[ROLL_LOW_UNITS].any()
    assert len(e.legal_afterstates()) == 0
    # cube 1 (log2 = 0), centred, the double phase
    np.testing.assert_array_equal(cube_obs(obs), [0, 1, 0, 0, 1, 0])
    assert (reward, terminated) == (0.0, False)


def test_a_take_doubles_the_cube_and_gives_it_to_the_taker():
    """Double -> the other side answers from its own view; take -> cube 2 owned by the taker, the roll is shown."""
    e = cube_self_env()
    _, info = e.reset(seed=0)
    starter = info["player"]
    _, _, _, _, info = e.step(first_move(info))
    doubler = info["player"]
    board_before = info["board"].copy()
    obs, _, _, _, info = e.step(DOUBLE)
    assert info["player"] == starter and info["phase"] == PHASE_TAKE
    assert np.flatnonzero(info["action_mask"]).tolist() == [TAKE, PASS]
    np.testing.assert_array_equal(info["board"], swap_sides(board_before))  # the taker's view
    np.testing.assert_array_equal(cube_obs(obs), [0, 1, 0, 0, 0, 1])
    obs, _, _, _, info = e.step(TAKE)
    assert info["player"] == doubler and info["phase"] == PHASE_MOVE and info["dice"].all()
    assert info["cube_value"] == 2 and info["cube_owner"] == starter
    assert not info["action_mask"][ROLL:].any() and info["action_mask"][:ROLL].any()
    # log2(2) / 12, owned by the other side (the doubler observes), move phase
    np.testing.assert_allclose(cube_obs(obs), [1 / 12, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(e.legal_afterstates(), legal_plays(info["board"], tuple(info["dice"])))
    # The taker, next on roll, owns the cube: it gets a cube phase.
    _, _, _, _, info = e.step(first_move(info))
    assert info["player"] == starter and info["phase"] == PHASE_DOUBLE
    _, _, _, _, info = e.step(ROLL)
    assert info["phase"] == PHASE_MOVE and info["dice"].all()
    # The doubler no longer has access: its next turn starts with the roll.
    _, _, _, _, info = e.step(first_move(info))
    assert info["player"] == doubler and info["phase"] == PHASE_MOVE and info["dice"].all()


def test_a_pass_ends_the_game_and_loses_the_current_cube_value():
    """Cube on 2, owned by player 0, who redoubles; player 1 passes and loses 2 points (not 4).

    With ``opponent="self"`` the reward is for the side that acted last: the passer, -2.
    """
    e = cube_self_env()
    board = starting_board()
    _, info = e.reset(seed=1, options={"board": board, "player": 0, "cube_value": 2, "cube_owner": 0})
    assert info["player"] == 0 and info["phase"] == PHASE_DOUBLE and info["cube_value"] == 2
    _, _, _, _, info = e.step(DOUBLE)
    assert info["player"] == 1 and info["phase"] == PHASE_TAKE
    _, reward, terminated, truncated, info = e.step(PASS)
    assert terminated and not truncated and reward == -2.0
    assert info["player"] == 1 and not info["action_mask"].any()
    np.testing.assert_array_equal(info["board"], swap_sides(board))  # the passer's view


def test_against_an_opponent_a_pass_by_the_opponent_pays_the_agent_the_cube():
    """The agent (player 0) doubles a callable opponent that passes every double: reward +1 (cube 1 centred)."""
    seen = []

    def passer(obs, info):
        seen.append(int(info["phase"]))
        if info["phase"] == PHASE_TAKE:
            return PASS
        return first_move(info) if info["phase"] == PHASE_MOVE else ROLL

    e = BackgammonEnv(opponent=passer, cube=True)
    _, info = e.reset(seed=2, options={"board": starting_board(), "player": 0})
    assert info["phase"] == PHASE_DOUBLE and info["player"] == 0
    _, reward, terminated, _, info = e.step(DOUBLE)
    assert terminated and reward == 1.0 and seen == [PHASE_TAKE]


def test_no_cube_phase_without_access_or_at_the_largest_cube():
    """The opponent owns the cube: player 0 just rolls. A cube of 4096 cannot be doubled again."""
    e = cube_self_env()
    _, info = e.reset(
        seed=3, options={"board": starting_board(), "player": 0, "cube_value": 2, "cube_owner": 1}
    )
    assert info["phase"] == PHASE_MOVE and info["dice"].all()
    _, info = e.reset(
        seed=3, options={"board": starting_board(), "player": 0, "cube_value": 4096, "cube_owner": 0}
    )
    assert info["phase"] == PHASE_MOVE


def bearing_off_last_checker() -> np.ndarray:
    """X bears off its last checker with any roll; O has all 15 on its own 6-point (X's 19): a gammon.

    RULES.md §6: the loser "has borne off none, and has no checker on the bar or
    in the winner's home board" -> gammon, 2 points (times the cube).
    """
    return pos(me={1: 1}, opp={6: 15})


def test_the_reward_is_the_result_times_the_cube():
    """A gammon (2) with the cube on 4 owned by the opponent gives 8 (RULES.md §6 and §8)."""
    e = BackgammonEnv(opponent="random", cube=True)
    options = {
        "board": bearing_off_last_checker(),
        "dice": (2, 1),
        "player": 0,
        "cube_value": 4,
        "cube_owner": 1,
    }
    _, info = e.reset(seed=0, options=options)
    _, reward, terminated, _, _ = e.step(first_move(info))
    assert terminated and reward == 8.0


def test_the_jacoby_rule_counts_a_gammon_as_one_while_the_cube_is_centred():
    """RULES.md §8: with the Jacoby rule "gammons count only once the cube has been turned"."""
    board, dice = bearing_off_last_checker(), (2, 1)
    # a centred cube above 1 (a start position's, README) keeps its value: the rule only drops the gammon
    cases = (
        (True, -1, 1, 1.0),
        (False, -1, 1, 2.0),
        (True, 1, 2, 4.0),
        (True, -1, 4, 4.0),
        (False, -1, 4, 8.0),
    )
    for jacoby, owner, value, expected in cases:
        e = BackgammonEnv(opponent="random", cube=True, jacoby=jacoby)
        options = {"board": board, "dice": dice, "player": 0, "cube_value": value, "cube_owner": owner}
        _, info = e.reset(seed=0, options=options)
        _, reward, terminated, _, _ = e.step(first_move(info))
        assert terminated and reward == expected, (jacoby, owner)


def test_an_illegal_action_in_a_cube_phase_loses_a_single_game_times_the_cube():
    e = cube_self_env()
    _, info = e.reset(
        seed=1, options={"board": starting_board(), "player": 0, "cube_value": 2, "cube_owner": 0}
    )
    assert info["phase"] == PHASE_DOUBLE
    _, reward, terminated, _, info = e.step(0)  # a move action before the roll
    assert terminated and reward == -2.0 and info["illegal_action"]
    e = BackgammonEnv(cube=True, opponent="self", illegal_action="raise")
    e.reset(seed=1, options={"board": starting_board(), "player": 0})
    with pytest.raises(ValueError, match="not legal"):
        e.step(TAKE)


def test_a_callable_opponent_gets_the_cube_phases_with_their_masks():
    """An opponent that doubles whenever it may and takes every double; the agent does the same (random plays)."""
    seen: dict[int, set] = {PHASE_MOVE: set(), PHASE_DOUBLE: set(), PHASE_TAKE: set()}

    def doubler(obs, info):
        phase = int(info["phase"])
        seen[phase].add(tuple(np.flatnonzero(info["action_mask"][ROLL:]).tolist()))
        assert info["player"] == 1 and cube_obs(obs)[4 if phase == PHASE_DOUBLE else 5] == (
            phase != PHASE_MOVE
        )
        return {PHASE_DOUBLE: DOUBLE, PHASE_TAKE: TAKE}.get(phase, first_move(info))

    e = BackgammonEnv(opponent=doubler, cube=True)
    _, info = e.reset(seed=4)
    rng = np.random.default_rng(4)
    cubes = []
    for _ in range(2000):
        phase = int(info["phase"])
        action = {PHASE_DOUBLE: DOUBLE, PHASE_TAKE: TAKE}.get(phase) or masked_random_action(info, rng)
        _, reward, terminated, _, info = e.step(action)
        cubes.append(int(info["cube_value"]))
        if terminated:
            break
    assert terminated and reward != 0
    # double phase: roll or double; take phase: take or pass; move phase: no cube action
    assert seen[PHASE_DOUBLE] == {(0, 1)} and seen[PHASE_TAKE] == {(2, 3)} and seen[PHASE_MOVE] == {()}
    # each side doubles whenever it owns the cube and the other takes: it doubles every turn,
    # up to the largest cube (4096); the result is points times the final cube
    assert cubes == sorted(cubes) and 4 <= cubes[-1] <= 4096 and abs(reward) % cubes[-1] == 0


def test_rolling_every_time_plays_the_same_game_as_without_the_cube():
    """The turn's dice are drawn as without the cube and only hidden during the cube phase.

    Both sides (``opponent="self"``) always roll and make the same random
    plays in both envs: the cubeful env plays the very games of the cubeless one.
    """
    rng = np.random.default_rng(5)
    plain, cubeful = BackgammonEnv(opponent="self"), BackgammonEnv(opponent="self", cube=True)
    cube_phases = 0
    for seed in range(3):
        obs_p, info_p = plain.reset(seed=seed)
        obs_c, info_c = cubeful.reset(seed=seed)
        while True:
            while info_c["phase"] == PHASE_DOUBLE:
                cube_phases += 1
                obs_c, _, _, _, info_c = cubeful.step(ROLL)
            np.testing.assert_array_equal(obs_c[:PLAY_OBS_SIZE], obs_p)
            np.testing.assert_array_equal(info_c["dice"], info_p["dice"])
            action = masked_random_action(info_p, rng)
            obs_p, r_p, t_p, _, info_p = plain.step(action)
            obs_c, r_c, t_c, _, info_c = cubeful.step(action)
            assert (r_c, t_c) == (r_p, t_p)
            if t_p:
                break
    assert cube_phases > 0


# --------------------------------------------------------------------------
# The vector env
# --------------------------------------------------------------------------


def always_double_and_take(obs, info) -> int:
    mask = info["action_mask"]
    if mask[-3]:  # double allowed
        return len(mask) - 3
    if mask[-2]:  # take allowed
        return len(mask) - 2
    return first_move(info)


@pytest.mark.parametrize(
    "mode, opponent, steps",
    [
        ("play", "random", 200),
        ("play", "self", 200),
        ("checker", "random", 200),
        ("checker", always_double_and_take, 150),
    ],
)
def test_vector_env_with_the_cube_matches_single_envs_step_for_step(mode, opponent, steps):
    n, seed = 4, 31
    vector = gym.make_vec(
        "nard/Backgammon-v0",
        num_envs=n,
        vectorization_mode="vector_entry_point",
        action_mode=mode,
        opponent=opponent,
        cube=True,
    )
    assert isinstance(vector.unwrapped, BackgammonVectorEnv)
    singles = [BackgammonEnv(action_mode=mode, opponent=opponent, cube=True) for _ in range(n)]
    obs, infos = vector.reset(seed=seed)
    single = [s.reset(seed=seed + i) for i, s in enumerate(singles)]
    finished = [False] * n
    rng = np.random.default_rng(seed)
    resets, phases = 0, set()
    for _ in range(steps):
        for i, (o, info) in enumerate(single):
            np.testing.assert_array_equal(obs[i], o)
            for key, value in info.items():
                np.testing.assert_array_equal(infos[key][i], value, err_msg=key)
            phases.add(int(info["phase"]))
        actions = np.array(
            [masked_random_action(info, rng) if info["action_mask"].any() else 0 for _, info in single]
        )
        obs, rewards, terminations, truncations, infos = vector.step(actions)
        assert vector.observation_space.contains(obs)
        for i, s in enumerate(singles):
            if finished[i]:
                single[i] = s.reset()
                assert rewards[i] == 0 and not terminations[i]
                finished[i] = False
                resets += 1
                continue
            o, r, terminated, truncated, info = s.step(actions[i])
            single[i] = (o, info)
            assert (r, terminated, truncated) == (rewards[i], terminations[i], truncations[i])
            finished[i] = terminated
    assert resets > 0 and phases == {PHASE_MOVE, PHASE_DOUBLE, PHASE_TAKE}
    vector.close()


def test_vector_reset_accepts_the_cube_options():
    envs = BackgammonVectorEnv(num_envs=2, opponent="self", cube=True)
    _, infos = envs.reset(
        seed=0, options={"board": starting_board(), "player": 0, "cube_value": 8, "cube_owner": 0}
    )
    assert infos["cube_value"].tolist() == [8, 8] and infos["phase"].tolist() == [PHASE_DOUBLE] * 2
    assert envs.cube_actions["double"] == MAX_PLAYS + 1


def test_render_shows_the_cube_and_the_decision():
    e = BackgammonEnv(opponent="self", cube=True, render_mode="ansi")
    e.reset(seed=1, options={"board": starting_board(), "player": 0, "cube_value": 2, "cube_owner": 0})
    text = e.render()
    assert "player 0 (X) to double or roll" in text and "cube 2 owned by player 0" in text
    e.step(DOUBLE)
    assert "player 1 (X) is doubled: take or pass" in e.render()


def test_a_centred_cube_of_4_money_automatic_doubles_is_accepted_and_a_passed_double_scores_4():
    # RULES.md §8: a passed double scores the cube value before the double; a centred 4-cube comes from
    # automatic doubles (money play), and either side may double it
    e = BackgammonEnv(cube=True, opponent="self")
    _, info = e.reset(seed=0, options={"board": starting_board(), "player": 0, "cube_value": 4})
    assert info["phase"] == PHASE_DOUBLE and (info["cube_value"], info["cube_owner"]) == (4, -1)
    _, _, _, _, info = e.step(e.cube_actions["double"])
    assert info["phase"] == PHASE_TAKE
    _, reward, terminated, _, _ = e.step(e.cube_actions["pass"])
    assert terminated and reward == -4.0  # the passer, who took the final action, loses the 4-cube
