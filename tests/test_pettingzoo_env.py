"""The PettingZoo AEC environment (``env/aec.py``): PettingZoo's own API, seed and render tests, and the game.

Skipped as a whole when pettingzoo is not installed (``pip install -e ".[pettingzoo]"``;
the ``dev`` extra has it).
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

pettingzoo = pytest.importorskip(
    "pettingzoo", reason='pettingzoo is not installed (pip install -e ".[pettingzoo]")'
)
from pettingzoo.test import api_test, render_test, seed_test  # noqa: E402

from env import BackgammonEnv, aec  # noqa: E402
from env.spaces import MAX_PLAYS, PHASE_DOUBLE, PHASE_MOVE, PHASE_TAKE  # noqa: E402
from nard_ai.core.board import game_result, starting_board, swap_sides  # noqa: E402
from nard_ai.core.checker_moves import NUM_CHECKER_ACTIONS  # noqa: E402

CONFIGS = [
    {},
    {"cube": True},
    {"action_mode": "checker"},
    {"action_mode": "checker", "cube": True},
]
CONFIG_IDS = ["play", "play-cube", "checker", "checker-cube"]


def random_action(game, observation: dict, rng: np.random.Generator) -> int:
    """A random legal action; with the cube, one that mostly rolls and takes (uniform cube actions end
    most games at the first double, 50% double then 50% pass)."""
    legal = np.flatnonzero(observation["action_mask"])
    ids = game.unwrapped.cube_actions
    if ids and legal[0] >= ids["roll"]:
        patient = ids["roll"] if ids["roll"] in legal else ids["take"]
        return int(patient if rng.random() < 0.9 else rng.choice(legal))
    return int(rng.choice(legal))


def play_game(game, rng: np.random.Generator, seed: int | None = None, options=None):
    """One whole game of random masked agents; returns the final rewards, the infos at the end and the actors."""
    game.reset(seed=seed, options=options)
    final, infos, actors = {}, {}, []
    for agent in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        if termination or truncation:
            final[agent], infos[agent] = reward, info
            action = None
        else:
            assert info["player"] == int(agent[-1])
            actors.append(agent)
            action = random_action(game, observation, rng)
        game.step(action)
    assert game.agents == []
    return final, infos, actors


# --------------------------------------------------------------------------
# PettingZoo's tests
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", CONFIGS, ids=CONFIG_IDS)
def test_pettingzoo_api_test_passes(kwargs):
    with warnings.catch_warnings():
        # api_test's warnings for dict observations are silenced for PettingZoo's own classic games by
        # name only; the unused reset option is the one api_test passes to check reset takes options.
        warnings.filterwarnings("ignore", "Observation is not a NumPy array")
        warnings.filterwarnings("ignore", "Observation space for each agent probably should be")
        warnings.filterwarnings("ignore", "Action mask numpy array is all zeros")
        warnings.filterwarnings("ignore", ".*reset options \\['options'\\] are not used")
        api_test(aec.env(**kwargs), num_cycles=1000)
        api_test(aec.raw_env(**kwargs), num_cycles=1000)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=CONFIG_IDS)
def test_pettingzoo_seed_test_passes(kwargs):
    seed_test(lambda: aec.env(**kwargs), num_cycles=500)


def test_pettingzoo_render_test_passes(capsys):
    render_test(aec.env, custom_tests={"ansi": lambda text: "to act" in text or "game over" in text})
    assert "Pip count" in capsys.readouterr().out  # human mode prints the board


def test_metadata_spaces_and_agents():
    game = aec.env()
    assert game.metadata["name"] == "nard_backgammon_v0"
    assert game.metadata["is_parallelizable"] is False
    assert game.possible_agents == ["player_0", "player_1"]
    for agent in game.possible_agents:
        space = game.observation_space(agent)
        assert space["observation"].shape == (210,) and space["action_mask"].shape == (MAX_PLAYS,)
        assert game.action_space(agent).n == MAX_PLAYS
    checker = aec.env(action_mode="checker", cube=True)
    assert checker.action_space("player_1").n == NUM_CHECKER_ACTIONS + 4
    assert checker.observation_space("player_1")["observation"].shape == (222,)
    assert checker.unwrapped.cube_actions["roll"] == NUM_CHECKER_ACTIONS


def test_importing_env_does_not_import_pettingzoo():
    code = "import sys, env; assert 'pettingzoo' not in sys.modules and 'env.aec' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------
# Whole games, rewards, seeding
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("mode", ["play", "checker"])
def test_a_random_game_is_zero_sum_and_the_winner_gets_the_game_result(seed, mode):
    final, infos, actors = play_game(aec.env(action_mode=mode), np.random.default_rng(seed), seed=seed)
    assert set(final) == {"player_0", "player_1"}
    assert final["player_0"] + final["player_1"] == 0
    winner = max(final, key=final.get)
    assert final[winner] == game_result(infos[winner]["board"]) in (1, 2, 3)
    assert game_result(infos[min(final, key=final.get)]["board"]) == -final[winner]
    assert winner == actors[-1]  # the winner bore off last
    assert not any(info["illegal_action"] for info in infos.values())


def test_random_games_with_the_cube_score_the_result_times_the_cube():
    seen, cubes = set(), set()
    for seed in range(12):
        final, infos, _ = play_game(aec.env(cube=True), np.random.default_rng(seed), seed=seed)
        assert final["player_0"] + final["player_1"] == 0
        winner = max(final, key=final.get)
        result = game_result(infos[winner]["board"])
        cube = infos[winner]["cube_value"]
        cubes.add(cube)
        if result == 0:  # a passed double: the cube value before the double
            seen.add("pass")
            assert final[winner] == cube
        else:
            seen.add("finished")
            assert final[winner] == result * cube
    assert seen == {"pass", "finished"} and len(cubes) > 1


@pytest.mark.parametrize("kwargs", CONFIGS, ids=CONFIG_IDS)
def test_the_same_seed_plays_the_same_game_and_another_seed_another(kwargs):
    runs = [play_game(aec.env(**kwargs), np.random.default_rng(7), seed=s) for s in (3, 3, 4)]
    assert runs[0][0] == runs[1][0] and runs[0][2] == runs[1][2]
    np.testing.assert_array_equal(runs[0][1]["player_0"]["board"], runs[1][1]["player_0"]["board"])
    assert (runs[0][0], runs[0][2]) != (runs[2][0], runs[2][2])


@pytest.mark.parametrize("mode", ["play", "checker"])
def test_the_aec_game_is_the_gymnasium_self_play_game(mode):
    """One rules engine: with the same seed and actions, each observation equals the Gymnasium env's in self-play."""
    game = aec.env(action_mode=mode, cube=True)
    gym_env = BackgammonEnv(action_mode=mode, opponent="self", cube=True)
    game.reset(seed=11)
    gym_obs, gym_info = gym_env.reset(seed=11)
    rng = np.random.default_rng(0)
    steps = 0
    while True:
        agent = game.agent_selection
        observation, reward, termination, _, info = game.last()
        if termination:
            break
        assert int(agent[-1]) == gym_info["player"]
        np.testing.assert_array_equal(observation["observation"], gym_obs)
        np.testing.assert_array_equal(observation["action_mask"], gym_info["action_mask"])
        np.testing.assert_array_equal(info["board"], gym_info["board"])
        action = random_action(game, observation, rng)
        game.step(action)
        gym_obs, gym_reward, terminated, _, gym_info = gym_env.step(action)
        steps += 1
    assert terminated and steps > 10
    # the Gymnasium env rewards the last actor; the AEC env rewards both sides
    last_actor = f"player_{gym_info['player']}"
    assert game.rewards[last_actor] == gym_reward == -game.rewards[f"player_{1 - gym_info['player']}"]


def test_reset_without_a_seed_goes_on_with_the_generator():
    game = aec.env()
    game.reset(seed=5)
    first = game.infos["player_0"]["dice"].copy(), game.agent_selection
    game.reset(seed=5)
    assert (game.infos["player_0"]["dice"].tolist(), game.agent_selection) == (first[0].tolist(), first[1])
    starts = set()
    for _ in range(20):
        game.reset()
        starts.add((tuple(game.infos["player_0"]["dice"].tolist()), game.agent_selection))
    assert len(starts) > 1


# --------------------------------------------------------------------------
# Observations and turns
# --------------------------------------------------------------------------


def test_each_agent_observes_from_its_own_side_and_only_the_agent_to_act_has_a_mask():
    game = aec.env()
    game.reset(seed=0)
    np.testing.assert_array_equal(game.infos[game.agent_selection]["board"], starting_board())
    game.step(0)  # the first of the sorted legal plays: the board is no longer symmetric
    me = game.agent_selection
    other = "player_1" if me == "player_0" else "player_0"
    mine, theirs = game.observe(me), game.observe(other)
    assert mine["action_mask"].sum() == len(game.unwrapped.legal_afterstates()) > 0
    assert not theirs["action_mask"].any()
    np.testing.assert_array_equal(game.infos[other]["board"], swap_sides(game.infos[me]["board"]))
    assert game.infos[me]["dice"].tolist() == game.infos[other]["dice"].tolist()  # the roll is public
    assert not np.array_equal(mine["observation"][:198], theirs["observation"][:198])
    np.testing.assert_array_equal(mine["observation"][198:], theirs["observation"][198:])


def test_in_checker_mode_the_agent_acts_once_per_checker_and_then_the_turn_passes():
    game = aec.env(action_mode="checker")
    game.reset(seed=0, options={"board": starting_board(), "dice": [3, 1], "player": 1})
    assert game.agent_selection == "player_1"
    game.step(int(np.flatnonzero(game.observe("player_1")["action_mask"])[0]))
    assert game.agent_selection == "player_1" and (game.infos["player_1"]["dice_left"] > 0).sum() == 1
    game.step(int(np.flatnonzero(game.observe("player_1")["action_mask"])[0]))
    assert game.agent_selection == "player_0"


def test_the_cube_double_take_and_pass_switch_the_agent_to_act():
    game = aec.env(cube=True)
    ids = game.unwrapped.cube_actions
    game.reset(seed=1, options={"board": starting_board(), "player": 0})  # before the roll: a cube phase
    assert game.agent_selection == "player_0" and game.infos["player_0"]["phase"] == PHASE_DOUBLE
    assert np.flatnonzero(game.observe("player_0")["action_mask"]).tolist() == [ids["roll"], ids["double"]]
    assert game.infos["player_1"]["phase"] == PHASE_MOVE  # not its decision
    game.step(ids["double"])
    assert game.agent_selection == "player_1" and game.infos["player_1"]["phase"] == PHASE_TAKE
    game.step(ids["take"])
    assert game.agent_selection == "player_0" and game.infos["player_0"]["dice"].all()
    assert (game.infos["player_0"]["cube_value"], game.infos["player_0"]["cube_owner"]) == (2, 1)
    # player 1 owns the cube at 2: on its turn it redoubles, and player 0 passes (loses 2)
    game.step(int(np.flatnonzero(game.observe("player_0")["action_mask"])[0]))
    assert game.agent_selection == "player_1" and game.infos["player_1"]["phase"] == PHASE_DOUBLE
    game.step(ids["double"])
    game.step(ids["pass"])
    assert game.terminations == {"player_0": True, "player_1": True}
    assert game.rewards == {"player_0": -2.0, "player_1": 2.0}


# --------------------------------------------------------------------------
# Illegal actions and the wrappers
# --------------------------------------------------------------------------


def test_a_masked_out_action_loses_a_single_game_times_the_cube_for_its_agent():
    game = aec.env(cube=True)
    game.reset(seed=1, options={"board": starting_board(), "player": 0, "cube_value": 2, "cube_owner": 0})
    game.step(0)  # a move action in the cube phase: inside the space, outside the mask
    assert game.terminations == {"player_0": True, "player_1": True}
    assert game.truncations == {"player_0": False, "player_1": False}
    assert game.rewards == {"player_0": -2.0, "player_1": 2.0}
    assert game.infos["player_0"]["illegal_action"] and game.infos["player_1"]["illegal_action"]
    assert game.agent_selection == "player_1"  # the other side steps out first
    _, reward, *_ = game.last()
    assert reward == 2.0
    with pytest.raises(ValueError, match="only valid action is None"):
        game.step(0)
    game.step(None)
    _, reward, *_ = game.last()
    assert game.agent_selection == "player_0" and reward == -2.0
    game.step(None)
    assert game.agents == []


def test_illegal_action_raise_changes_nothing():
    game = aec.env(illegal_action="raise")
    game.reset(seed=0)
    agent, before = game.agent_selection, game.infos[game.agent_selection]["board"].copy()
    with pytest.raises(ValueError, match="not legal"):
        game.step(MAX_PLAYS - 1)
    assert game.agent_selection == agent and not any(game.terminations.values())
    np.testing.assert_array_equal(game.infos[agent]["board"], before)


def test_the_wrappers_reject_out_of_space_actions_and_use_before_reset():
    game = aec.env()
    with pytest.raises(AttributeError, match="before reset"):
        game.agent_selection  # noqa: B018
    game.reset(seed=0)
    with pytest.raises(AssertionError, match="action space"):
        game.step(MAX_PLAYS)
    with pytest.raises(AssertionError, match="action space"):
        game.step(0.5)
    with pytest.raises(ValueError, match="one integer"):
        raw = aec.raw_env()
        raw.reset(seed=0)
        raw.step([0])


def test_reset_options_start_from_a_position_and_unknown_ones_only_warn():
    game = aec.env()
    board = starting_board()
    game.reset(seed=0, options={"board": board, "dice": [6, 5], "player": 1})
    assert game.agent_selection == "player_1"
    assert game.infos["player_1"]["dice"].tolist() == [6, 5]
    with pytest.warns(UserWarning, match="not used"):
        game.reset(seed=0, options={"bord": board})
    with pytest.raises(ValueError, match="power of two"):
        aec.env(cube=True).reset(seed=0, options={"cube_value": 3, "cube_owner": 0})


# --------------------------------------------------------------------------
# The README's examples
# --------------------------------------------------------------------------


def readme_examples() -> list[str]:
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("## PettingZoo environment") : readme.index("## Training and evaluation")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_random_agents_example_runs_as_written(capsys):
    exec(compile(readme_examples()[0], "README.md", "exec"), {})
    assert capsys.readouterr().out.split() == ["player_0", "-2.0", "player_1", "2.0"]  # as the README says


def test_the_readme_network_example_beats_the_random_agent_in_a_shorter_run(capsys):
    code = readme_examples()[1]
    assert "range(100)" in code and "'player_0': 270.0" in code  # the full run: tests/test_readme.py
    exec(compile(code.replace("range(100)", "range(3)"), "README.md", "exec"), {})
    points = ast.literal_eval(capsys.readouterr().out.strip())
    assert points["player_0"] == -points["player_1"] > 0


# --- issue 15 follow-ups: refused resets and actions outside the space


def test_aec_refused_reset_leaves_the_game_and_generator_as_they_were():
    a, b = aec.env(), aec.env()
    a.reset(seed=4)
    b.reset(seed=4)
    with pytest.raises(ValueError, match="die"):
        b.reset(seed=50, options={"dice": (7, 1)})
    for _ in range(10):
        for g in (a, b):
            mask = g.observe(g.agent_selection)["action_mask"]
            g.step(int(np.flatnonzero(mask)[0]))
        np.testing.assert_array_equal(
            a.observe("player_0")["observation"], b.observe("player_0")["observation"]
        )
        if a.terminations["player_0"]:
            break


@pytest.mark.parametrize("bad", [-1, 3060, 99999])
def test_aec_action_outside_the_space(bad):
    # PettingZoo's convention: env() asserts with AssertOutOfBoundsWrapper; raw_env() raises ValueError
    game = aec.env()
    game.reset(seed=0)
    with pytest.raises(AssertionError, match="action space"):
        game.step(bad)
    raw = aec.raw_env()
    raw.reset(seed=0)
    agent = raw.agent_selection
    with pytest.raises(ValueError, match=rf"action {bad} is outside the action space Discrete\(3060\)"):
        raw.step(bad)
    assert raw.agent_selection == agent and not raw.terminations[agent]  # nothing changed


@pytest.mark.parametrize("method", ["observe", "observation_space", "action_space"])
def test_an_unknown_agent_is_a_value_error_naming_the_agents(method):
    """``observe("player_9")`` raised ``tuple.index(x): x not in tuple`` and the spaces a bare KeyError
    (a new user's report, 2026-12-07): the error names the agent and the two there are (aec.AGENTS)."""
    game = aec.raw_env()
    game.reset(seed=0)
    with pytest.raises(ValueError, match=r"^unknown agent 'player_9': the agents are player_0, player_1$"):
        getattr(game, method)("player_9")
    assert getattr(game, method)("player_1") is not None
