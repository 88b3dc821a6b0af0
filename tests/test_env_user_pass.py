"""A researcher's pass over the Gymnasium and PettingZoo environments (``env/``): the findings, fixed.

1. ``reset(options=...)`` that is not a dict (a string, a list of pairs) is a
   ``TypeError`` naming ``options`` (gymnasium types it ``dict | None``); it was
   read key by key (``"board"`` as the unknown keys ``b, o, a, r, d``) or
   failed inside ``dict()``.
2. The integer options ``player`` and ``cube_owner`` take ints only: ``1.0``
   was accepted as player 1 and an array failed inside NumPy; ``dice`` of shape
   ``(N, 2)`` was read as its first row. Board and dice errors name their option.
3. A Python int past int64 (``2**70``) is an action outside the space, not "not an integer".
4. The vector env's ``np_random_seed`` and ``np_random`` are the games' (per-game
   tuples, as gymnasium's ``SyncVectorEnv``); they were the base class's own
   generator, used by nothing, with a random seed whatever ``reset(seed=...)`` said.
5. The vector env's infos match ``SyncVectorEnv`` over ``gym.make`` envs, dtypes
   included (``phase`` and ``cube_owner`` were int8 where ``SyncVectorEnv`` gives int64).
   README's masked sample of the vector action space (a tuple of masks) picks legal actions.
6. ``render()`` without a render mode warns, as gymnasium's own envs (CartPole's words).
7. The raw PettingZoo env before ``reset`` refuses ``step``, ``observe``,
   ``last`` and ``render`` with a ``RuntimeError`` (an ``AttributeError`` or a
   ``TypeError`` from inside before).
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_match import check_environments_match

import env  # noqa: F401  (registers the ids)
from env import BackgammonEnv, BackgammonVectorEnv
from nard_ai.core.board import starting_board

ID = "nard/Backgammon-v0"


def aec():
    return pytest.importorskip("env.aec")


def masked_random(rng, masks) -> np.ndarray:
    """One random legal action per game (0 for an empty mask: a finished game, its action ignored)."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])


# --------------------------------------------------------------------------
# 1. options is a dict or None
# --------------------------------------------------------------------------


@pytest.mark.parametrize("options", ["board", [("board", None)], 3])
def test_reset_options_that_are_not_a_dict_are_a_type_error_naming_options(options):
    single = BackgammonEnv()
    obs, _ = single.reset(seed=1)
    vector = BackgammonVectorEnv(num_envs=2)
    vector.reset(seed=1)
    game = aec().raw_env()
    game.reset(seed=1)
    for reset in (single.reset, vector.reset, game.reset):
        with pytest.raises(TypeError, match=r"options must be a dict \(or None\)"):
            reset(options=options)
    # refused before anything changed: the single game goes on as seeded
    assert np.array_equal(single._games.observe_one(0)[0], obs)


# --------------------------------------------------------------------------
# 2. Integer options are ints; one roll is (2,); errors name the option
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"player": 1.0}, r"options\['player'\] must be 0 or 1 \(an int\), got 1.0 \(float\)"),
        ({"player": np.array([1])}, r"options\['player'\] must be 0 or 1 \(an int\), got array"),
        (
            {"cube_value": 2, "cube_owner": 0.0},
            r"options\['cube_owner'\] must be -1 \(centred\), 0 or 1 \(an int\), got 0.0",
        ),
        ({"cube_value": 2, "cube_owner": np.array([1, 0])}, r"options\['cube_owner'\] must be"),
        (
            {"dice": [[3, 1], [6, 6]]},
            r"options\['dice'\] must be one roll of shape \(2,\), got shape \(2, 2\)",
        ),
        ({"dice": (3.0, 1.0)}, r"options\['dice'\]: dice must be integers"),
        ({"board": np.zeros(26)}, r"options\['board'\]: a board must hold integer checker counts"),
    ],
)
def test_bad_reset_option_values_are_value_errors_naming_the_option(options, message):
    """README, Gymnasium environment: ``player`` and ``cube_owner`` are ints, ``dice`` one roll of shape ``(2,)``."""
    for make in (BackgammonEnv, aec().raw_env):
        game = make(cube=True)
        with pytest.raises(ValueError, match=message):
            game.reset(seed=0, options=options)


def test_integer_options_still_take_numpy_integers():
    single = BackgammonEnv(cube=True)
    _, info = single.reset(
        seed=0, options={"player": np.int8(1), "cube_value": np.int64(2), "cube_owner": np.int8(0)}
    )
    assert (info["cube_value"], info["cube_owner"]) == (2, 0)


# --------------------------------------------------------------------------
# 3. A huge Python int is an action outside the space
# --------------------------------------------------------------------------


def test_a_python_int_past_int64_is_an_action_outside_the_space():
    single = BackgammonEnv()
    single.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"action 1180591620717411303424 is outside the action space Discrete\(3060\)"
    ):
        single.step(2**70)
    vector = BackgammonVectorEnv(num_envs=2)
    vector.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 1180591620717411303424 \(game 1\) is outside"):
        vector.step([0, 2**70])
    single.step(0)  # nothing changed: the game takes its action


# --------------------------------------------------------------------------
# 4 and 5. The vector env against gymnasium's SyncVectorEnv
# --------------------------------------------------------------------------


def test_vector_np_random_seed_and_np_random_are_the_games_as_sync_vector_env():
    """``SyncVectorEnv.np_random_seed`` is its envs' seeds, ``(s, s + 1, ...)`` after ``reset(seed=s)``."""
    native = gym.make_vec(ID, num_envs=3, vectorization_mode="vector_entry_point")
    sync = gym.make_vec(ID, num_envs=3, vectorization_mode="sync")
    native.reset(seed=4)
    sync.reset(seed=4)
    assert native.np_random_seed == sync.np_random_seed == (4, 5, 6)
    assert [r.bit_generator.state for r in native.np_random] == [
        r.bit_generator.state for r in sync.np_random
    ]
    native.reset(seed=[1, None, 3])
    assert native.np_random_seed == (1, 5, 3)  # None keeps game 1's generator
    assert native.np_random[0] is native.unwrapped._games.rngs[0]  # the generator the dice come from
    with pytest.raises(ValueError):
        native.reset(seed=-1)
    assert native.np_random_seed == (1, 5, 3)  # a refused reset changes no seed


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"action_mode": "checker", "cube": True}, {"opponent": "self", "cube": True, "jacoby": True}],
)
def test_vector_env_matches_sync_vector_env_step_for_step_infos_and_dtypes_included(kwargs):
    native = gym.make_vec(ID, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    sync = gym.make_vec(ID, num_envs=3, vectorization_mode="sync", **kwargs)
    rng = np.random.default_rng(0)
    obs_a, info_a = native.reset(seed=7)
    obs_b, info_b = sync.reset(seed=7)
    for _ in range(150):
        assert np.array_equal(obs_a, obs_b)
        assert info_a.keys() == info_b.keys()
        for key in info_a:
            assert info_a[key].dtype == info_b[key].dtype, key
            assert np.array_equal(info_a[key], info_b[key]), key
        actions = masked_random(rng, info_a["action_mask"])
        obs_a, rew_a, term_a, trunc_a, info_a = native.step(actions)
        obs_b, rew_b, term_b, trunc_b, info_b = sync.step(actions)
        assert rew_a.dtype == rew_b.dtype and np.array_equal(rew_a, rew_b)
        assert np.array_equal(term_a, term_b) and np.array_equal(trunc_a, trunc_b)


def test_the_readme_masked_sample_of_the_vector_action_space_picks_only_legal_actions():
    """README: ``vec.action_space.sample(mask=tuple(infos["action_mask"]))`` (``MultiDiscrete`` takes a tuple)."""
    vec = gym.make_vec(ID, num_envs=4, vectorization_mode="vector_entry_point", cube=True)
    vec.action_space.seed(0)
    _, infos = vec.reset(seed=0)
    ends = 0
    for _ in range(300):
        _, _, terminated, _, infos = vec.step(vec.action_space.sample(mask=tuple(infos["action_mask"])))
        assert not infos["illegal_action"].any()
        ends += int(terminated.sum())
    assert ends > 0  # finished games' all-zero masks were sampled (0) and their autoreset ignored it


def test_gym_make_and_the_bare_env_match_by_gymnasiums_own_check():
    check_environments_match(
        gym.make(ID, cube=True, render_mode="ansi"),
        BackgammonEnv(cube=True, render_mode="ansi"),
        num_steps=100,
    )


# --------------------------------------------------------------------------
# 6. render() without a render mode warns
# --------------------------------------------------------------------------


def test_render_without_a_render_mode_warns_as_gymnasiums_envs():
    single = gym.make(ID)
    single.reset(seed=0)
    vector = gym.make_vec(ID, num_envs=2, vectorization_mode="vector_entry_point")
    vector.reset(seed=0)
    for made, render in (("gym.make", single.render), ("gym.make_vec", vector.render)):
        with pytest.warns(
            UserWarning, match="You are calling render method without specifying any render mode"
        ):
            assert render() is None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            render()
        assert f'{made}("nard/Backgammon-v0", render_mode="ansi")' in str(caught[0].message)
    ansi = gym.make(ID, render_mode="ansi")
    ansi.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ansi.render().startswith("player ")


# --------------------------------------------------------------------------
# 7. The raw PettingZoo env before reset
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "args"), [("step", (0,)), ("observe", ("player_0",)), ("last", ()), ("render", ())]
)
def test_the_raw_aec_env_before_reset_says_to_reset(method, args):
    game = aec().raw_env(render_mode="ansi")
    with pytest.raises(RuntimeError, match=rf"{method}\(\) called before reset\(\): call reset\(\) first"):
        getattr(game, method)(*args)
    game.reset(seed=0, options={"board": starting_board(), "dice": (3, 1), "player": 0})
    assert game.agent_selection == "player_0"
