"""The Gymnasium environment (``env/``) and the checker-mode move restriction (``nard_ai.core.checker_moves``).

Boards are in the layout of :mod:`nard_ai.core.board` (the mover's view); ``pos``
takes each side's checkers in its own numbering. In the ASCII boards below
``X`` is the side on roll (moving from 24 down to 1) and ``O`` the opponent,
as in :mod:`nard_ai.formats.ascii`.
"""

from __future__ import annotations

import ast
import pathlib

import gymnasium as gym
import numpy as np
import pytest
from conftest import ALL_ROLLS, mixed_positions
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import env
from env import BackgammonEnv, BackgammonVectorEnv
from env.spaces import (
    CHECKER_OBS_SIZE,
    DICE_LEFT_UNITS,
    MAX_PLAYS,
    MAX_PLAYS_OBSERVED,
    MAX_PLAYS_OBSERVED_BOARD,
    PLAY_OBS_SIZE,
    ROLL_HIGH_UNITS,
    ROLL_LOW_UNITS,
)
from nard_ai.core.board import pos, swap_sides
from nard_ai.core.checker_moves import (
    NUM_CHECKER_ACTIONS,
    allowed_moves,
    checker_action,
    checker_action_parts,
    dice_for_turn,
    legal_single_moves,
    play_checker_move,
    play_targets,
)
from nard_ai.core.movegen import count_plays_batch, legal_plays
from nard_ai.core.rules import Rules
from nard_ai.model.encoding import TD198

REPO = pathlib.Path(__file__).resolve().parents[1]
MODES = ("play", "checker")


def masked_random_action(info: dict, rng: np.random.Generator) -> int:
    """A uniformly random legal action (the mask's ones)."""
    return int(rng.choice(np.flatnonzero(info["action_mask"])))


def first_legal_action(obs: np.ndarray, info: dict) -> int:
    """A deterministic opponent policy: the lowest legal action."""
    return int(np.flatnonzero(info["action_mask"])[0])


def play_out(environment: gym.Env, seed: int, rng: np.random.Generator, max_steps: int = 5000):
    """Play one episode with masked random actions; returns (steps, final reward, final info)."""
    obs, info = environment.reset(seed=seed)
    for steps in range(1, max_steps + 1):
        obs, reward, terminated, truncated, info = environment.step(masked_random_action(info, rng))
        assert environment.observation_space.contains(obs)
        if terminated:
            return steps, reward, info
    raise AssertionError("the game did not end")


# --------------------------------------------------------------------------
# Registration, make, make_vec, the env checker
# --------------------------------------------------------------------------


def test_import_registers_the_single_and_vector_entry_points():
    spec = gym.spec("nard/Backgammon-v0")
    assert spec.entry_point == "env.backgammon:make_env"  # BackgammonEnv in RecoveringEnvChecker
    assert spec.vector_entry_point == "env.vector:BackgammonVectorEnv"
    assert env.ENV_ID == "nard/Backgammon-v0"


@pytest.mark.parametrize("mode", MODES)
def test_make_builds_the_single_env_with_its_spaces(mode):
    e = gym.make("nard/Backgammon-v0", action_mode=mode)
    assert isinstance(e.unwrapped, BackgammonEnv)
    size = PLAY_OBS_SIZE if mode == "play" else CHECKER_OBS_SIZE
    assert e.observation_space.shape == (size,) and e.observation_space.dtype == np.float32
    assert e.action_space == gym.spaces.Discrete(MAX_PLAYS if mode == "play" else NUM_CHECKER_ACTIONS)
    obs, info = e.reset(seed=0)
    assert obs.shape == (size,) and info["action_mask"].dtype == np.int8


def test_make_vec_uses_the_native_vector_env_with_next_step_autoreset():
    envs = gym.make_vec("nard/Backgammon-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(envs.unwrapped, BackgammonVectorEnv)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (4, PLAY_OBS_SIZE)
    assert infos["action_mask"].shape == (4, MAX_PLAYS) and infos["_action_mask"].all()
    rng = np.random.default_rng(0)
    actions = [masked_random_action({"action_mask": m}, rng) for m in infos["action_mask"]]
    obs, rewards, terminations, truncations, infos = envs.step(np.array(actions))
    assert rewards.shape == terminations.shape == truncations.shape == (4,)
    envs.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("opponent", ["random", "self"])
def test_env_checker_passes_unwrapped_and_through_make(mode, opponent):
    check_env(BackgammonEnv(action_mode=mode, opponent=opponent), skip_render_check=True)
    check_env(gym.make("nard/Backgammon-v0", action_mode=mode, opponent=opponent).unwrapped)


def test_ansi_render_shows_the_roll_and_the_board():
    e = BackgammonEnv(action_mode="checker", render_mode="ansi")
    _, info = e.reset(seed=4)
    text = e.render()
    hi, lo = info["dice"]
    assert f"roll {hi}-{lo}" in text and "167" in text


# --------------------------------------------------------------------------
# Observations, masks, rewards
# --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_observation_is_td198_of_the_board_plus_one_hot_dice(mode):
    e = BackgammonEnv(action_mode=mode, opponent="self")
    obs, info = e.reset(seed=7)
    rng = np.random.default_rng(7)
    for _ in range(30):
        np.testing.assert_array_equal(obs[:198], TD198.encode(info["board"])[0])
        hi, lo = info["dice"]
        assert obs[ROLL_HIGH_UNITS].sum() == 1 and obs[ROLL_HIGH_UNITS][hi - 1] == 1
        assert obs[ROLL_LOW_UNITS].sum() == 1 and obs[ROLL_LOW_UNITS][lo - 1] == 1
        if mode == "checker":
            left = info["dice_left"][info["dice_left"] > 0]
            expected = np.bincount(left, minlength=7)[1:] / 4
            np.testing.assert_allclose(obs[DICE_LEFT_UNITS], expected)
        obs, _, terminated, _, info = e.step(masked_random_action(info, rng))
        if terminated:
            obs, info = e.reset()


def test_play_actions_index_the_sorted_legal_afterstates():
    """After the opening 3-1 the mask covers exactly the legal plays, in ``legal_plays`` order."""
    e = BackgammonEnv(action_mode="play", opponent="self")
    board = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 13: 5, 8: 3, 6: 5})
    _, info = e.reset(seed=0, options={"board": board, "dice": (3, 1), "player": 0})
    plays = legal_plays(board, (3, 1))
    np.testing.assert_array_equal(e.legal_afterstates(), plays)
    assert info["action_mask"].sum() == len(plays) and info["action_mask"][: len(plays)].all()
    # 8/5 6/5 is among them; choosing it hands the other side the swapped board.
    best = np.flatnonzero(
        (plays == pos(me={24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, opp={24: 2, 13: 5, 8: 3, 6: 5})).all(1)
    )
    _, _, _, _, info = e.step(int(best[0]))
    assert info["player"] == 1
    np.testing.assert_array_equal(swap_sides(info["board"]), plays[best[0]])


def test_rewards_are_the_game_points_from_the_agent_side():
    rng = np.random.default_rng(1)
    e = BackgammonEnv(opponent="random")
    rewards = {play_out(e, seed, rng)[1] for seed in range(12)}
    assert (
        rewards <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}
        and rewards & {1.0, 2.0, 3.0}
        and rewards & {-1.0, -2.0, -3.0}
    )


def test_self_play_rewards_the_side_that_made_the_final_move():
    rng = np.random.default_rng(2)
    e = BackgammonEnv(action_mode="play", opponent="self")
    for seed in range(6):
        _, reward, info = play_out(e, seed, rng)
        assert reward in (1.0, 2.0, 3.0)
        # The final observation is the winner's: all its checkers are off.
        assert (info["board"][1:] <= 0).all() and not info["action_mask"].any()


def test_callable_opponent_sees_its_own_side_and_plays_whole_games():
    seen = []

    def opponent(obs, info):
        seen.append(info["player"])
        assert obs.shape == (CHECKER_OBS_SIZE,)
        return first_legal_action(obs, info)

    e = BackgammonEnv(action_mode="checker", opponent=opponent)
    _, reward, _ = play_out(e, 3, np.random.default_rng(3))
    assert reward != 0 and seen and set(seen) == {1}


def test_illegal_action_loses_a_single_game_or_raises():
    e = BackgammonEnv(action_mode="play", opponent="random")
    _, info = e.reset(seed=5)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, _, info = e.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]
    e = BackgammonEnv(action_mode="checker", illegal_action="raise")
    e.reset(seed=5)
    with pytest.raises(ValueError, match="not legal"):
        e.step(0)  # source 0 (the opponent's bar) is never a checker move


@pytest.mark.parametrize("action", [np.array([0]), 0.0, "0", True, [0]])
def test_an_action_that_is_not_one_integer_is_an_error_even_when_illegal_actions_lose(action):
    """A wrong type is the caller's bug: never truncated to 0 nor counted as a forfeited move."""
    e = BackgammonEnv(action_mode="play", opponent="random")
    e.reset(seed=5)
    with pytest.raises(ValueError, match="integer"):
        e.step(action)


def test_vector_env_rejects_float_actions():
    envs = BackgammonVectorEnv(num_envs=2)
    envs.reset(seed=1)
    with pytest.raises(ValueError, match="integers"):
        envs.step(np.zeros(2, dtype=np.float64))


@pytest.mark.parametrize(
    "actions", [np.zeros(3, dtype=np.int64), np.zeros((2, 1), dtype=np.int64), 0, [[0, 0]]]
)
def test_vector_env_step_with_a_wrong_shape_names_the_shape_it_takes(actions):
    """Issue 15: numpy's "cannot reshape array of size 3 into shape (2,)" before; (2, 1) was even taken."""
    envs = BackgammonVectorEnv(num_envs=2)
    envs.reset(seed=1)
    with pytest.raises(
        ValueError, match=r"actions must have shape \(2,\), one action per game of the 2, got shape"
    ):
        envs.step(actions)


#: Issue 15: both sides have 3 checkers on the bar against the other's closed home board (gnubg Position ID
#: 27YBAHDbtgEAcA): neither side can ever move, and reset(options={"board": ...}) used to loop forever.
DEAD = np.array([-3] + [2] * 6 + [0] * 12 + [-2] * 6 + [3], dtype=np.int8)


@pytest.mark.parametrize("cube", [False, True])
def test_reset_with_a_board_where_neither_side_can_ever_move_is_a_value_error(cube):
    """Single and vector env, with and without the cube, with and without dice: refused at once."""
    message = "neither side can ever move"
    with pytest.raises(ValueError, match=message):
        BackgammonEnv(cube=cube).reset(seed=0, options={"board": DEAD})
    with pytest.raises(ValueError, match=message):
        BackgammonEnv(cube=cube).reset(seed=0, options={"board": DEAD, "dice": (6, 5), "player": 0})
    with pytest.raises(ValueError, match=message):
        BackgammonVectorEnv(num_envs=2, cube=cube).reset(seed=0, options={"board": DEAD})


def test_a_turn_without_a_legal_move_passes_to_the_other_side():
    """X has a checker on the bar and O has closed its whole home board: 6-5 cannot enter.

    ::

         13  14  15  16  17  18  19  20  21  22  23  24
          .   .   .   .   .   .  O2  O2  O2  O2  O2  O2
          .   .   .   .   .  O3   .   .   .   .   . X14
         12  11  10   9   8   7   6   5   4   3   2   1
        bar X1 O0
    """
    board = pos(me={25: 1, 1: 14}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 18: 3})
    e = BackgammonEnv(action_mode="checker", opponent="self")
    _, info = e.reset(seed=0, options={"board": board, "dice": (6, 5), "player": 0})
    assert info["player"] == 1 and info["action_mask"].any()
    np.testing.assert_array_equal(info["board"], swap_sides(board))


def test_max_plays_bounds_every_position_seen():
    """MAX_PLAYS (3060) is a proven bound; the most plays seen (1492, 1-1) are well under it."""
    assert count_plays_batch(MAX_PLAYS_OBSERVED_BOARD[None], np.array([[1, 1]]))[0] == MAX_PLAYS_OBSERVED
    assert MAX_PLAYS_OBSERVED < MAX_PLAYS
    boards = mixed_positions(np.random.default_rng(4), 300)
    for dice in ALL_ROLLS:
        assert count_plays_batch(boards, np.tile(dice, (len(boards), 1))).max() <= MAX_PLAYS_OBSERVED


def test_max_plays_smaller_than_a_position_needs_raises_instead_of_truncating():
    e = BackgammonEnv(action_mode="play", opponent="self", max_plays=2)
    with pytest.raises(RuntimeError, match="max_plays"):
        e.reset(seed=0)


# --------------------------------------------------------------------------
# Determinism and the vector env
# --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_same_seed_and_actions_give_the_same_game(mode):
    def trajectory(seed):
        e = BackgammonEnv(action_mode=mode, opponent="random")
        rng = np.random.default_rng(99)
        obs, info = e.reset(seed=seed)
        out = [obs]
        for _ in range(60):
            obs, reward, terminated, _, info = e.step(masked_random_action(info, rng))
            out += [obs, reward]
            if terminated:
                obs, info = e.reset()
        return out

    a, b, c = trajectory(11), trajectory(11), trajectory(12)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


@pytest.mark.parametrize(
    "mode, opponent, steps",
    [
        ("play", "random", 150),
        ("play", "self", 150),
        ("checker", "random", 200),
        ("checker", first_legal_action, 150),
    ],
)
def test_vector_env_matches_single_envs_step_for_step(mode, opponent, steps):
    n, seed = 4, 21
    vector = gym.make_vec(
        "nard/Backgammon-v0",
        num_envs=n,
        vectorization_mode="vector_entry_point",
        action_mode=mode,
        opponent=opponent,
    )
    singles = [BackgammonEnv(action_mode=mode, opponent=opponent) for _ in range(n)]
    obs, infos = vector.reset(seed=seed)
    single = [s.reset(seed=seed + i) for i, s in enumerate(singles)]
    finished = [False] * n
    rng = np.random.default_rng(seed)
    resets = 0
    for _ in range(steps):
        for i, (o, info) in enumerate(single):
            np.testing.assert_array_equal(obs[i], o)
            for key, value in info.items():
                np.testing.assert_array_equal(infos[key][i], value, err_msg=key)
        actions = np.array(
            [masked_random_action(info, rng) if info["action_mask"].any() else 0 for _, info in single]
        )
        obs, rewards, terminations, truncations, infos = vector.step(actions)
        assert vector.observation_space.contains(obs)
        for i, s in enumerate(singles):
            if finished[i]:  # NEXT_STEP autoreset: this step resets the game and ignores its action
                single[i] = s.reset()
                assert rewards[i] == 0 and not terminations[i]
                finished[i] = False
                resets += 1
                continue
            o, r, terminated, truncated, info = s.step(actions[i])
            single[i] = (o, info)
            assert (r, terminated, truncated) == (rewards[i], terminations[i], truncations[i])
            finished[i] = terminated
    assert resets > 0  # the comparison went through at least one autoreset
    vector.close()


def test_vector_reset_mask_resets_only_the_chosen_games():
    envs = BackgammonVectorEnv(num_envs=3)
    obs, _ = envs.reset(seed=5)
    rng = np.random.default_rng(0)
    _, infos = envs.reset(seed=5)
    actions = [masked_random_action({"action_mask": m}, rng) for m in infos["action_mask"]]
    stepped, *_ = envs.step(np.array(actions))
    again, infos = envs.reset(seed=[5, None, None], options={"reset_mask": np.array([True, False, False])})
    np.testing.assert_array_equal(again[0], obs[0])
    np.testing.assert_array_equal(again[1:], stepped[1:])
    assert infos["_action_mask"].tolist() == [True, False, False]


# --------------------------------------------------------------------------
# Checker mode: the whole-turn rules in the mask
# --------------------------------------------------------------------------


def checker_env_at(board, dice, rules=None) -> tuple[BackgammonEnv, dict]:
    e = BackgammonEnv(action_mode="checker", opponent="self", rules=rules)
    _, info = e.reset(seed=0, options={"board": board, "dice": dice, "player": 0})
    return e, info


def allowed(info) -> set[tuple[int, int]]:
    return {checker_action_parts(a) for a in np.flatnonzero(info["action_mask"])}


def test_checker_mask_hides_a_die_that_would_leave_the_other_unplayable():
    """6-1: 24/23 is a legal single move, but then no 6 can be played; 24/18 13/12 uses both dice.

    O holds X's 17, 7 and 6 points; X's other checkers sit on its 1-point and cannot move.
    ::

         13  14  15  16  17  18  19  20  21  22  23  24
         X1   .   .   .  O2   .  O9   .   .   .   .  X1
          .   .   .   .   .  O2  O2   .   .   .   . X13
         12  11  10   9   8   7   6   5   4   3   2   1
    """
    board = pos(me={24: 1, 13: 1, 1: 13}, opp={8: 2, 18: 2, 19: 2, 6: 9})
    assert 24 in legal_single_moves(board, 1)  # 24/23 is open on its own
    e, info = checker_env_at(board, (6, 1))
    assert allowed(info) == {(24, 6), (13, 1)}
    _, _, _, _, info = e.step(checker_action(13, 1))
    assert allowed(info) == {(24, 6)}  # 12/6 would be blocked; only 24/18 finishes the play
    _, _, _, _, info = e.step(checker_action(24, 6))
    expected = pos(me={18: 1, 12: 1, 1: 13}, opp={8: 2, 18: 2, 19: 2, 6: 9})
    assert info["player"] == 1
    np.testing.assert_array_equal(swap_sides(info["board"]), expected)


def test_checker_mask_offers_only_the_larger_die_when_only_one_die_fits():
    """6-3 with one free checker on 13: 13/7 or 13/10, but O's 4-point blocks the second die either way.

    RULES.md §3.4: "If either die could be played but not both, the larger must be played."
    ::

         13  14  15  16  17  18  19  20  21  22  23  24
         X1   .   .   .   .   . O13   .   .   .   .   .
          .   .   .   .   .   .   .   .  O2   .   . X14
         12  11  10   9   8   7   6   5   4   3   2   1
    """
    board = pos(me={13: 1, 1: 14}, opp={21: 2, 6: 13})
    assert set(legal_single_moves(board, 3)) == {13}  # 13/10 alone is legal
    e, info = checker_env_at(board, (6, 3))
    assert allowed(info) == {(13, 6)}
    _, _, _, _, info = e.step(checker_action(13, 6))
    assert info["player"] == 1  # the 3 cannot be played after 13/7: the turn is over


def test_checker_mask_enforces_the_iranian_no_hit_and_continue_rule():
    """RULES.md §7 worked case, roll 2-1, seed 000's form: after 7/5* the hitter may not go on to 4.

    O's blot stands on X's 5-point; 7/5* 6/5 (hit and cover with another checker) stays legal.
    """
    me = {24: 2, 13: 5, 8: 1, 7: 2, 6: 3, 3: 2}
    opp = {24: 2, 20: 1, 13: 5, 8: 3, 6: 4}
    board = pos(me=me, opp=opp)
    assert len(legal_plays(board, (2, 1), Rules.iranian("000"))) == 26
    e, info = checker_env_at(board, (2, 1), Rules.iranian("000"))
    assert (7, 2) in allowed(info)
    _, _, _, _, info = e.step(checker_action(7, 2))
    assert (5, 1) not in allowed(info) and (6, 1) in allowed(info)
    e, _ = checker_env_at(board, (2, 1))  # standard rules: 7/5*/4 is a legal play
    _, _, _, _, info = e.step(checker_action(7, 2))
    assert (5, 1) in allowed(info)


def test_checker_mask_enters_from_the_bar_first():
    board = pos(me={25: 1, 13: 14}, opp={24: 2, 13: 5, 8: 3, 6: 5})
    _, info = checker_env_at(board, (5, 2))
    assert {source for source, _ in allowed(info)} == {25}


def test_checker_turns_end_exactly_on_the_legal_plays():
    """Exploring every allowed sequence reaches each legal play and nothing else (standard and Iranian)."""
    rng = np.random.default_rng(8)
    positions = mixed_positions(rng, 12)
    for rules in (Rules(), Rules.iranian("000"), Rules.iranian("002")):
        for board in positions:
            for dice in ALL_ROLLS:
                targets = play_targets(legal_plays(board, dice, rules))
                cache, ends, stack, seen = {}, set(), [(board, dice_for_turn(dice))], set()
                while stack:
                    b, left = stack.pop()
                    key = (b.tobytes(), left)
                    if key in seen:
                        continue
                    seen.add(key)
                    moves = allowed_moves(b, left, targets, cache)
                    if not moves:
                        ends.add(tuple(int(x) for x in b))
                    for source, die in moves:
                        nb, nl = play_checker_move(b, left, source, die)
                        stack.append((nb, tuple(int(d) for d in nl if d)))
                assert ends == targets, (board.tolist(), dice, rules)


def test_checker_action_round_trips():
    for source in range(1, 26):
        for die in range(1, 7):
            assert checker_action_parts(checker_action(source, die)) == (source, die)
    with pytest.raises(ValueError):
        checker_action(0, 3)


# --------------------------------------------------------------------------
# Layering
# --------------------------------------------------------------------------


def imported_modules(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_library_never_imports_env_and_checker_moves_has_no_gymnasium():
    for path in (REPO / "nard_ai").rglob("*.py"):
        assert "env" not in imported_modules(path), path
    assert imported_modules(REPO / "nard_ai" / "core" / "checker_moves.py") <= {
        "__future__",
        "numpy",
        "nard_ai",
    }


# --- issue 15 follow-ups: a refused reset leaves the env usable; actions outside the space are errors


def _first_legal(info) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def test_gym_make_env_recovers_after_a_refused_first_reset():
    # gymnasium's PassiveEnvChecker broke every later step (TypeError) after a refused first
    # reset; gym.make now wraps the env in RecoveringEnvChecker instead
    e = gym.make("nard/Backgammon-v0")
    with pytest.raises(ValueError, match="die"):
        e.reset(options={"dice": (7, 1)})
    obs, info = e.reset(seed=0)
    for _ in range(3):
        obs, reward, terminated, truncated, info = e.step(_first_legal(info))
        assert obs.shape == (210,)  # PLAY_OBS_SIZE
        if terminated:
            break


def test_a_refused_reset_changes_neither_the_game_nor_the_dice_generator():
    # same seed, same actions: a refused reset in between must not change the game that follows
    a, b = BackgammonEnv(), BackgammonEnv()
    _, ia = a.reset(seed=3)
    _, ib = b.reset(seed=3)
    for bad in ({"dice": (7, 1)}, {"player": 2}, {"board": np.zeros(26)}, {"cube_value": 2}):
        with pytest.raises(ValueError):
            b.reset(seed=99, options=bad)
    for _ in range(20):
        oa, ra, ta, _, ia = a.step(_first_legal(ia))
        ob, rb, tb, _, ib = b.step(_first_legal(ib))
        np.testing.assert_array_equal(oa, ob)
        assert (ra, ta) == (rb, tb)
        if ta:
            break


def test_vector_env_refused_reset_keeps_seeds_and_games():
    a, b = BackgammonVectorEnv(3), BackgammonVectorEnv(3)
    oa, _ = a.reset(seed=5)
    b.reset(seed=5)
    with pytest.raises(ValueError, match="die"):
        b.reset(seed=77, options={"dice": (0, 1)})
    with pytest.raises(ValueError, match="reset_mask"):
        b.reset(seed=77, options={"reset_mask": np.ones(2, dtype=bool)})
    np.testing.assert_array_equal(b._games.observe(b._all)[0], oa)


@pytest.mark.parametrize("bad", [-1, 5000, 3060, 2**40])
def test_single_env_action_outside_the_space_is_a_value_error(bad):
    # Discrete(3060) (MAX_PLAYS) holds 0..3059; outside it is the caller's bug, not an illegal move
    e = gym.make("nard/Backgammon-v0")
    e.reset(seed=0)
    with pytest.raises(ValueError, match=rf"action {bad} is outside the action space Discrete\(3060\)"):
        e.step(bad)
    # nothing changed: a legal action still plays on, no illegal_action flag
    _, info = e.unwrapped._games.observe_one(0)
    obs, reward, terminated, truncated, info = e.step(_first_legal(info))
    assert not info["illegal_action"]


@pytest.mark.parametrize("bad", [0.0, True, np.float32(1)])
def test_single_env_non_integer_action_is_a_value_error(bad):
    e = BackgammonEnv()
    e.reset(seed=0)
    with pytest.raises(ValueError, match=r"integers of the action space Discrete\(3060\)"):
        e.step(bad)


def test_single_env_action_in_the_space_outside_the_mask_still_loses():
    # README: an action inside the space but outside the mask loses a single game (-1)
    e = BackgammonEnv()
    _, info = e.reset(seed=0)
    masked_out = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, _, info = e.step(masked_out)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)


@pytest.mark.parametrize("fill", [99999, -1])
def test_vector_env_actions_outside_the_space_are_value_errors(fill):
    v = BackgammonVectorEnv(4)
    obs, _ = v.reset(seed=0)
    with pytest.raises(
        ValueError, match=rf"action {fill} \(game 0\) is outside the action space Discrete\(3060\)"
    ):
        v.step(np.full(4, fill))
    np.testing.assert_array_equal(v._games.observe(v._all)[0], obs)  # no game changed


def _ends_before_the_agent_acts() -> np.ndarray:
    # the side on roll (player 1, the random opponent) has one checker left on its 1-point: any roll bears
    # it off, so the game ends before the agent's first decision (Games.reset refuses it after the roll)
    board = np.zeros(26, dtype=np.int8)
    board[1], board[20] = 1, -15
    return board


def test_a_reset_refused_after_the_roll_restores_the_game_and_the_generator():
    a, b = BackgammonEnv(), BackgammonEnv()
    _, ia = a.reset(seed=3)
    _, ib = b.reset(seed=3)
    oa, *_ = a.step(_first_legal(ia))
    with pytest.raises(ValueError, match="ends before the agent's first decision"):
        b.reset(seed=9, options={"board": _ends_before_the_agent_acts(), "player": 1})
    ob, *_ = b.step(_first_legal(ib))  # the game of seed 3 goes on, with seed 3's dice
    np.testing.assert_array_equal(oa, ob)


def test_vector_env_reset_refused_after_the_roll_restores_the_games_and_generators():
    a, b = BackgammonVectorEnv(2), BackgammonVectorEnv(2)
    _, ia = a.reset(seed=3)
    _, ib = b.reset(seed=3)
    with pytest.raises(ValueError, match="ends before the agent's first decision"):
        b.reset(seed=9, options={"board": _ends_before_the_agent_acts(), "player": 1})
    actions = np.array([int(np.flatnonzero(m)[0]) for m in ia["action_mask"]])
    oa, ra, *_ = a.step(actions)
    ob, rb, *_ = b.step(actions)
    np.testing.assert_array_equal(oa, ob)
    np.testing.assert_array_equal(ra, rb)
