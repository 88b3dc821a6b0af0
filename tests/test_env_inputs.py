"""Arguments, seeds and errors of the environments (``env/``): a new-user review's findings.

1. A masked vector ``reset(seed=...)`` seeds only the games it resets, as
   gymnasium's ``SyncVectorEnv`` (gymnasium 1.x: ``SyncVectorEnv.reset`` turns
   ``seed=s`` into ``[s, s + 1, ...]`` and passes ``seed[i]`` only to the
   ``reset`` of each game ``i`` its ``reset_mask`` selects).
2. Integer arguments (``max_plays``, ``num_envs``) and seeds are ints (NumPy
   integers too), never a bool, float or str coerced; else a ``TypeError`` or
   ``ValueError`` naming the argument.
3. A callable opponent's error in ``step`` interrupts the game mid-turn: the
   next ``step`` says so (it did not finish) and asks for a reset.
4. Error messages print actions as plain numbers (``3000``, not ``np.int64(3000)``).
5. ``options["reset_mask"]`` is what ``SyncVectorEnv`` takes (a NumPy bool array of shape
   ``(num_envs,)`` with one True at least), never converted; anything else is refused with
   ``SyncVectorEnv``'s exception class and one line saying what was given and what is needed.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import env  # noqa: F401  (registers the ids)
from env import BackgammonEnv, BackgammonVectorEnv
from env.spaces import MAX_PLAYS, PHASE_TAKE
from nard_ai.core.board import starting_board


def raw_aec_env(**kwargs):
    """The PettingZoo env (``env.aec`` needs pettingzoo; skipped without it)."""
    return pytest.importorskip("env.aec").raw_env(**kwargs)


def first_legal(mask) -> int:
    return int(np.flatnonzero(mask)[0])


def legal_actions(infos) -> np.ndarray:
    """The lowest legal action of every game (0 for a game with an empty mask: finished, its action ignored)."""
    return np.array([first_legal(m) if m.any() else 0 for m in infos["action_mask"]])


# --------------------------------------------------------------------------
# 1. A masked reset seeds only the games it resets
# --------------------------------------------------------------------------


def test_a_masked_vector_reset_seeds_only_the_reset_games_step_for_step_as_sync_vector_env():
    n, mask = 3, np.array([True, False, True])
    native = BackgammonVectorEnv(num_envs=n)
    sync = SyncVectorEnv([BackgammonEnv] * n, autoreset_mode=AutoresetMode.NEXT_STEP)
    control = BackgammonVectorEnv(num_envs=n)  # the same games without the masked reset
    obs, infos = native.reset(seed=0)
    sync_obs, _ = sync.reset(seed=0)
    control.reset(seed=0)
    np.testing.assert_array_equal(obs, sync_obs)
    for _ in range(3):
        actions = legal_actions(infos)
        obs, *_, infos = native.step(actions)
        sync_obs, *_ = sync.step(actions)
        control.step(actions)
        np.testing.assert_array_equal(obs, sync_obs)
    # game 1 is not reset: its generator must not be replaced (the bug seeded it 99 + 1 = 100)
    obs, infos = native.reset(seed=99, options={"reset_mask": mask.copy()})
    sync_obs, _ = sync.reset(seed=99, options={"reset_mask": mask.copy()})
    np.testing.assert_array_equal(obs, sync_obs)
    assert infos["_action_mask"].tolist() == mask.tolist()
    # the games reset get SyncVectorEnv's seeds: game i gets 99 + i (game 2: 101, not 100)
    for i in (0, 2):
        single_obs, _ = BackgammonEnv().reset(seed=99 + i)
        np.testing.assert_array_equal(obs[i], single_obs)
    control_obs, control_infos = control._games.observe(control._all)
    np.testing.assert_array_equal(obs[1], control_obs[1])
    for _ in range(40):
        actions = legal_actions(infos)
        obs, rewards, terminated, truncated, infos = native.step(actions)
        sync_obs, sync_rewards, sync_terminated, sync_truncated, _ = sync.step(actions)
        np.testing.assert_array_equal(obs, sync_obs)
        np.testing.assert_array_equal(rewards, sync_rewards)
        np.testing.assert_array_equal(terminated, sync_terminated)
        np.testing.assert_array_equal(truncated, sync_truncated)
        # game 1 plays on with the dice of its seed (0 + 1), as in the vector env never masked-reset
        control_actions = legal_actions(control_infos)
        control_actions[1] = actions[1]
        control_obs, *_, control_infos = control.step(control_actions)
        np.testing.assert_array_equal(obs[1], control_obs[1])
    sync.close()


def test_a_game_a_masked_first_reset_left_out_cannot_step_before_it_is_reset():
    v = BackgammonVectorEnv(num_envs=2)
    _, infos = v.reset(seed=0, options={"reset_mask": np.array([True, False])})
    with pytest.raises(RuntimeError, match=r"^step\(\) called on game 1 before it was ever reset"):
        v.step(np.array([first_legal(infos["action_mask"][0]), 0]))


# --------------------------------------------------------------------------
# 2. Integer arguments and seeds
# --------------------------------------------------------------------------

NOT_INTS = [1.5, 10.0, "10", True, None]


@pytest.mark.parametrize("bad", NOT_INTS)
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: gym.make("nard/Backgammon-v0", **kw),
        lambda **kw: BackgammonEnv(**kw),
        lambda **kw: BackgammonVectorEnv(num_envs=2, **kw),
        lambda **kw: raw_aec_env(**kw),
    ],
    ids=["gym.make", "BackgammonEnv", "BackgammonVectorEnv", "aec.raw_env"],
)
def test_max_plays_must_be_an_int(make, bad):
    # the review: max_plays=1.5 gave Discrete(1) and "10" was parsed; True was 1
    with pytest.raises(TypeError, match=r"max_plays must be an int \(a Python or NumPy integer"):
        make(max_plays=bad)


@pytest.mark.parametrize("bad", [0, -1, MAX_PLAYS + 1])
def test_max_plays_outside_1_to_max_plays_is_a_value_error(bad):
    with pytest.raises(ValueError, match=rf"^max_plays must be 1\.\.3060, got {bad}$"):
        BackgammonEnv(max_plays=bad)


def test_numpy_integers_are_accepted_as_ints():
    # "numpy integers are fine": the same space and number of games as the Python int
    assert BackgammonEnv(max_plays=np.int64(10)).action_space == gym.spaces.Discrete(10)
    v = BackgammonVectorEnv(num_envs=np.int32(2))
    assert v.num_envs == 2 and type(v.num_envs) is int


@pytest.mark.parametrize("bad", NOT_INTS[:-1])
def test_num_envs_must_be_an_int(bad):
    # the review: num_envs=1.5 made 1 game, "3" made 3 and True made 1
    with pytest.raises(TypeError, match=r"num_envs must be an int \(a Python or NumPy integer"):
        BackgammonVectorEnv(num_envs=bad)
    with pytest.raises(TypeError, match="num_envs must be an int"):
        gym.make_vec("nard/Backgammon-v0", num_envs=bad, vectorization_mode="vector_entry_point")


@pytest.mark.parametrize("bad", [0, -3])
def test_num_envs_below_one_is_a_value_error(bad):
    with pytest.raises(ValueError, match=rf"^num_envs must be >= 1, got {bad}$"):
        BackgammonVectorEnv(num_envs=bad)


@pytest.mark.parametrize("bad", [1.5, "ab", True, [1]])
def test_a_single_env_or_aec_seed_that_is_not_an_int_is_a_type_error_naming_seed(bad):
    # gymnasium raised its own gymnasium.error.Error ("Seed must be a python integer") and took True as 1
    with pytest.raises(TypeError, match=r"^seed must be None or an int >= 0, got "):
        BackgammonEnv().reset(seed=bad)
    with pytest.raises(TypeError, match=r"^seed must be None or an int >= 0, got "):
        raw_aec_env().reset(seed=bad)


def test_a_negative_seed_is_a_value_error():
    with pytest.raises(ValueError, match=r"^seed must be >= 0, got -1$"):
        BackgammonEnv().reset(seed=-1)
    with pytest.raises(ValueError, match=r"^seed must be >= 0, got -1$"):
        BackgammonVectorEnv(num_envs=2).reset(seed=-1)
    with pytest.raises(ValueError, match=r"^seed\[1\] must be >= 0, got -5$"):
        BackgammonVectorEnv(num_envs=2).reset(seed=[1, -5])


@pytest.mark.parametrize("bad", [1.5, "ab", True, {"a": 1}])
def test_a_vector_seed_that_is_neither_an_int_nor_a_sequence_is_a_type_error_naming_seed(bad):
    # the review: 1.5 gave "'float' object is not iterable", "ab" "got 2 seeds for 3 games"
    with pytest.raises(
        TypeError,
        match=r"^seed must be None or an int >= 0, or a sequence of 3 such values \(one per game, num_envs=3\)",
    ):
        BackgammonVectorEnv(num_envs=3).reset(seed=bad)


def test_a_vector_seed_sequence_needs_one_int_or_none_per_game():
    v = BackgammonVectorEnv(num_envs=3)
    with pytest.raises(TypeError, match=r"^seed\[1\] must be None or an int >= 0, got 2\.5 \(float\)$"):
        v.reset(seed=[1, 2.5, 3])
    with pytest.raises(ValueError, match=r"^seed must have one entry per game: got 2 seeds for num_envs=3$"):
        v.reset(seed=[1, 2])


def test_numpy_integer_seeds_play_as_the_same_python_ints():
    # gymnasium's own seeding refuses np.int64; the envs take it as the int it is
    a, _ = BackgammonEnv().reset(seed=np.int64(7))
    b, _ = BackgammonEnv().reset(seed=7)
    np.testing.assert_array_equal(a, b)
    a, _ = BackgammonVectorEnv(num_envs=3).reset(seed=np.array([4, 5, 6]))
    b, _ = BackgammonVectorEnv(num_envs=3).reset(seed=4)  # 4, 4 + 1, 4 + 2
    np.testing.assert_array_equal(a, b)


def test_a_refused_seed_changes_nothing():
    a, b = BackgammonVectorEnv(num_envs=2), BackgammonVectorEnv(num_envs=2)
    _, infos = a.reset(seed=3)
    b.reset(seed=3)
    with pytest.raises(TypeError, match="seed"):
        b.reset(seed=1.5)
    actions = legal_actions(infos)
    np.testing.assert_array_equal(a.step(actions)[0], b.step(actions)[0])


# --------------------------------------------------------------------------
# 3. A callable opponent's error interrupts the game
# --------------------------------------------------------------------------


class FailingOpponent:
    """Plays its lowest legal action, or, while ``fail`` is set, returns ``np.int64(3059)``
    (inside ``Discrete(3060)`` but never legal: no position has 3060 plays)."""

    def __init__(self) -> None:
        self.fail = False

    def __call__(self, obs, info):
        return np.int64(3059) if self.fail else first_legal(info["action_mask"])


def test_after_an_opponent_error_in_step_the_game_says_it_was_interrupted_not_finished():
    opponent = FailingOpponent()
    e = BackgammonEnv(opponent=opponent, render_mode="ansi")
    _, info = e.reset(seed=1)  # seed 1: the agent (player 0) has the opening roll, the opponent is not asked
    opponent.fail = True
    with pytest.raises(
        ValueError, match=r"^the opponent chose action 3059, outside its action_mask"
    ) as caught:
        e.step(first_legal(info["action_mask"]))
    assert "reset()" in caught.value.__notes__[0]
    with pytest.raises(RuntimeError) as caught:
        e.step(0)
    message = str(caught.value)
    assert message.startswith(
        "step() called on the game after the opponent's error (ValueError: the opponent"
    )
    assert "interrupted it in the middle of a turn" in message and "call reset()" in message
    assert "finished game" not in message
    # inert until reset: no legal plays, and the picture says what happened (not "game over")
    assert e.legal_afterstates().shape == (0, 26)
    assert e.render().startswith("game interrupted in the middle of a turn by the opponent's error")
    opponent.fail = False
    _, info = e.reset(seed=1)  # a reset makes it playable again
    e.step(first_legal(info["action_mask"]))


def test_an_opponent_error_in_its_take_decision_interrupts_the_game():
    # before: the game stayed "waiting for the agent" in the opponent's take phase, so the agent's next
    # step(take) was applied as the opponent's answer
    def opponent(obs, info):
        if info["phase"] == PHASE_TAKE:
            raise KeyError("no take policy")
        return first_legal(info["action_mask"])

    e = BackgammonEnv(opponent=opponent, cube=True)
    # a board and no dice with the cube: the agent's cube phase comes first (roll or double)
    e.reset(seed=0, options={"board": starting_board(), "player": 0})
    with pytest.raises(KeyError, match="no take policy"):
        e.step(e.cube_actions["double"])
    with pytest.raises(RuntimeError, match=r"after the opponent's error \(KeyError: 'no take policy'\)"):
        e.step(e.cube_actions["take"])


def test_an_opponent_error_in_reset_leaves_the_env_as_it_was():
    opponent = FailingOpponent()
    a, b = BackgammonEnv(opponent=FailingOpponent()), BackgammonEnv(opponent=opponent)
    _, ia = a.reset(seed=1)
    _, ib = b.reset(seed=1)
    opponent.fail = True
    with pytest.raises(ValueError, match="the opponent chose action 3059"):
        b.reset(seed=0)  # seed 0: the opponent has the opening roll and is asked at once
    opponent.fail = False
    # the game of seed 1 goes on with seed 1's dice, as in the env never asked to reset
    np.testing.assert_array_equal(
        a.step(first_legal(ia["action_mask"]))[0], b.step(first_legal(ib["action_mask"]))[0]
    )


def test_an_opponent_error_in_a_vector_step_interrupts_the_games_it_stepped_until_each_is_reset():
    opponent = FailingOpponent()
    v = BackgammonVectorEnv(num_envs=2, opponent=opponent)
    _, infos = v.reset(seed=[1, 1])  # both games: the agent has the opening roll (as the single env's seed 1)
    opponent.fail = True
    with pytest.raises(ValueError, match="the opponent chose action 3059") as caught:
        v.step(legal_actions(infos))
    assert caught.value.__notes__ == [
        "game 0, 1 stopped in the middle of a step (not finished): call reset() before stepping it again"
    ]
    with pytest.raises(
        RuntimeError,
        match=r"^step\(\) called on game 0 after the opponent's error \(ValueError: the opponent chose action "
        r"3059, .*\) interrupted it in the middle of a step: it did not finish and cannot go on; call reset\(\)",
    ):
        v.step(np.zeros(2, dtype=np.int64))
    opponent.fail = False
    _, infos = v.reset(seed=[1, None], options={"reset_mask": np.array([True, False])})
    with pytest.raises(RuntimeError, match=r"^step\(\) called on game 1 after the opponent's error"):
        v.step(legal_actions(infos))
    _, infos = v.reset(seed=[1, 1])
    v.step(legal_actions(infos))


# --------------------------------------------------------------------------
# 4. Plain numbers in the error messages
# --------------------------------------------------------------------------


def test_an_illegal_numpy_action_is_named_as_a_plain_number():
    # 3000 is inside Discrete(3060) and outside the mask of the opening position (at most 18 plays)
    e = BackgammonEnv(illegal_action="raise")
    e.reset(seed=0)
    with pytest.raises(ValueError, match=r"^action 3000 is not legal in game 0 \(legal: \[0, "):
        e.step(np.int64(3000))
    v = BackgammonVectorEnv(num_envs=2, illegal_action="raise")
    v.reset(seed=0)
    with pytest.raises(ValueError, match=r"^action 3000 is not legal in game 0 \(legal: \[0, "):
        v.step(np.array([3000, 3000]))
    game = raw_aec_env(illegal_action="raise")
    game.reset(seed=0)
    with pytest.raises(ValueError, match=r"^action 3000 is not legal in game 0 \(legal: \[0, "):
        game.step(np.int64(3000))


# --------------------------------------------------------------------------
# 5. reset_mask as gymnasium's SyncVectorEnv takes it
# --------------------------------------------------------------------------

_NEED_3 = "options['reset_mask'] must be a NumPy bool array of shape (3,), one entry per game, got "

BAD_RESET_MASKS = [
    # (mask, exception class, the exact message); gymnasium checks type, shape, dtype, one True, in that order
    (np.array([0, 2, 1]), TypeError, _NEED_3 + "dtype int64"),
    (np.array([1.0, 0.0, 1.0]), TypeError, _NEED_3 + "dtype float64"),
    (np.ones(2, dtype=bool), ValueError, _NEED_3 + "shape (2,)"),
    (np.ones((3, 1), dtype=bool), ValueError, _NEED_3 + "shape (3, 1)"),
    (np.array(True), ValueError, _NEED_3 + "shape ()"),
    (np.array([0, 2]), ValueError, _NEED_3 + "shape (2,)"),  # shape is checked before dtype, as gymnasium
    (
        np.zeros(3, dtype=bool),
        ValueError,
        "options['reset_mask'] must be True for at least one game, got all 3 False",
    ),
    ([True, False, True], TypeError, _NEED_3 + "[True, False, True] (list)"),
    (None, TypeError, _NEED_3 + "None (NoneType)"),
]
BAD_IDS = ["int-dtype", "float-dtype", "short", "2-d", "0-d", "short-int", "all-false", "list", "none"]


@pytest.mark.parametrize(("mask", "error", "message"), BAD_RESET_MASKS, ids=BAD_IDS)
def test_a_bad_reset_mask_is_refused_with_what_was_given_and_what_is_needed(mask, error, message):
    """Issue: ``reset_mask`` went through ``np.asarray(mask, dtype=bool)``, so ``[0, 2, 1]`` read as
    ``[False, True, True]`` and an all-False mask reset nothing, where gymnasium's SyncVectorEnv refuses
    both. Now each is one line naming what was given and what is needed, and the refused reset leaves
    every game and generator as it was."""
    v, control = BackgammonVectorEnv(num_envs=3), BackgammonVectorEnv(num_envs=3)
    obs, _ = v.reset(seed=4)
    control.reset(seed=4)
    with pytest.raises(error) as caught:
        v.reset(seed=9, options={"reset_mask": mask})
    assert str(caught.value) == message and "\n" not in message
    np.testing.assert_array_equal(v._games.observe(v._all)[0], obs)
    _, infos = v.reset(options={"reset_mask": np.array([False, True, False])})  # no seed: game 1 plays on
    _, control_infos = control.reset(options={"reset_mask": np.array([False, True, False])})
    np.testing.assert_array_equal(infos["action_mask"], control_infos["action_mask"])
    for _ in range(5):
        actions = legal_actions(infos)
        obs, *_, infos = v.step(actions)
        control_obs, *_, control_infos = control.step(actions)
        np.testing.assert_array_equal(obs, control_obs)


@pytest.mark.parametrize(("mask", "error", "message"), BAD_RESET_MASKS, ids=BAD_IDS)
def test_sync_vector_env_refuses_the_same_reset_masks_with_the_same_exception_class(mask, error, message):
    """The rule is gymnasium's (``SyncVectorEnv.reset``, gymnasium 1.x): every mask refused above is
    refused there too, with the same exception class."""
    sync = SyncVectorEnv([BackgammonEnv] * 3, autoreset_mode=AutoresetMode.NEXT_STEP)
    sync.reset(seed=4)
    with pytest.raises(error, match="reset_mask"):
        sync.reset(seed=9, options={"reset_mask": mask})
    sync.close()


def test_a_python_list_of_bools_is_refused_as_gymnasium_refuses_it():
    """Decision: a Python list of bools is refused (``TypeError``), not converted. Gymnasium's
    SyncVectorEnv and AsyncVectorEnv refuse anything that is not a ``np.ndarray`` (``TypeError: `options
    ['reset_mask']` must be a numpy array``), so code written against this env must run unchanged on
    theirs; and converting a list is what read ``[0, 2]`` as ``[False, True]``. The same mask as an array
    is taken."""
    v = BackgammonVectorEnv(num_envs=2)
    v.reset(seed=0)
    with pytest.raises(TypeError) as caught:
        v.reset(seed=1, options={"reset_mask": [True, False]})
    assert str(caught.value) == (
        "options['reset_mask'] must be a NumPy bool array of shape (2,), one entry per game, "
        "got [True, False] (list)"
    )
    sync = SyncVectorEnv([BackgammonEnv] * 2, autoreset_mode=AutoresetMode.NEXT_STEP)
    sync.reset(seed=0)
    with pytest.raises(TypeError, match="must be a numpy array"):
        sync.reset(seed=1, options={"reset_mask": [True, False]})
    sync.close()
    _, infos = v.reset(seed=1, options={"reset_mask": np.array([True, False])})
    assert infos["_action_mask"].tolist() == [True, False]


def test_a_valid_reset_mask_is_not_changed_and_a_reset_without_one_resets_every_game():
    """The check converts nothing: the caller's mask (and options dict) come back as given; no
    ``reset_mask`` key resets all games, as SyncVectorEnv."""
    v = BackgammonVectorEnv(num_envs=3)
    v.reset(seed=0)
    mask = np.array([True, False, True])
    options = {"reset_mask": mask}
    _, infos = v.reset(seed=1, options=options)
    assert options == {"reset_mask": mask} and mask.tolist() == [True, False, True]
    assert infos["_action_mask"].tolist() == [True, False, True]
    _, infos = v.reset(seed=1)
    assert infos["_action_mask"].tolist() == [True, True, True]
