"""Golden outputs: seeded results of the public entry points, one function per item.

Each ``case_*`` function computes one item from fixed seeds and small sizes and
returns plain JSON data (dicts, lists, ints, floats, strings, bools). The
recorder (``tests/golden/record.py``) writes each to ``tests/golden/<name>.json``;
``tests/test_golden.py`` calls the same function and compares with
:func:`compare`. Integers, strings, choices and hashes of integer arrays must
match exactly; floats within a tolerance the test gives per item.

Every name of the package is imported in the block below, and only there, so
that moving a module means editing one block.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numba
import numpy as np
import torch

# --- the project's names, by their module paths at commit 200a2c2 (the pre-restructuring main) ---
from env import ENV_ID, BackgammonEnv, BackgammonVectorEnv  # importing env registers the Gymnasium id
from nard_ai import legal_plays_batch, random_games
from nard_ai.agents import load_agent, pubeval_agent
from nard_ai.core.board import pos, starting_board, swap_sides
from nard_ai.core.movegen import count_plays_batch
from nard_ai.core.rules import Rules
from nard_ai.cube import CubeState, cube_decision, cube_decision_from_probs
from nard_ai.formats import position_id
from nard_ai.model.learn import Learner
from nard_ai.model.network import Network, NetworkConfig
from nard_ai.play.arena import play_match
from nard_ai.play.rollout import rollout, rollout_plays
from nard_ai.play.selfplay import play_round
from nard_ai.play.sessions import MODEL_POLICY, play_matches, play_money_session
from nard_ai.search import choose_plays, position_probs, rank_plays

# ---------------------------------------------------------------------------------------------------

GOLDEN_DIR = Path(__file__).resolve().parent

#: Positions of the search, cube and rollout items (mover's view, before the roll).
START = starting_board()
MIDDLE_GAME = pos(me={24: 2, 13: 4, 8: 3, 7: 1, 6: 4, 4: 1}, opp={24: 2, 13: 4, 9: 1, 8: 3, 6: 4, 5: 1})
RACE = pos(me={10: 2, 8: 3, 6: 4, 5: 3, 3: 2, 2: 1}, opp={11: 1, 9: 2, 7: 3, 6: 3, 4: 3, 1: 3})
BEAROFF = pos(me={6: 2, 5: 2, 4: 3, 2: 1, 1: 2}, opp={5: 3, 4: 2, 3: 2, 1: 1})
BEAROFF_CONTACT = pos(me={6: 2, 5: 2, 3: 1, 1: 2}, opp={23: 1, 6: 3, 4: 2, 2: 2, 1: 1})
BLITZ = pos(me={25: 1, 13: 4, 8: 2, 6: 4, 5: 2, 4: 2}, opp={24: 2, 13: 3, 8: 3, 6: 3, 5: 2, 4: 2})


# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with numba and torch on one thread each, then restore both counts.

    The network's float32 outputs depend on torch's intra-op thread count at the last bit (about
    6e-8 on probabilities, for a batch of 16 boards too). Setting torch's count alone does not hold:
    numba and torch share one OpenMP runtime, and every parallel numba kernel sets the calling
    thread's OpenMP thread count back to numba's (``torch.get_num_threads()`` is 2 again after
    ``random_games(300)``; ``NUMBA_NUM_THREADS=1`` likewise puts torch on one thread). With numba on
    one thread too no parallel kernel runs, so torch stays on one: the items that evaluate the
    network run under this (decorator :func:`single_threaded`), so their floats do not depend on
    the machine's cores or on ``NUMBA_NUM_THREADS``. The items without the network (random games,
    legal plays, the env) keep numba's threads, whose results must not depend on the count.
    """
    saved = numba.get_num_threads(), torch.get_num_threads()
    numba.set_num_threads(1)
    torch.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(saved[0])
        torch.set_num_threads(saved[1])


def single_threaded(fn):
    """``fn`` run inside :func:`one_thread`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with one_thread():
            return fn(*args, **kwargs)

    return wrapper


def sha256(array: np.ndarray, dtype) -> str:
    """sha256 of an integer array's C-order bytes as ``dtype``, with its shape (so reshapes differ)."""
    a = np.ascontiguousarray(np.asarray(array), dtype=dtype)
    h = hashlib.sha256(str(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()


def floats(values) -> list:
    """A float array (any shape) as nested lists of Python floats (float32 values exactly)."""
    return np.asarray(values, dtype=np.float64).tolist()


def ints(values) -> list:
    return np.asarray(values, dtype=np.int64).tolist()


def pid(board) -> str:
    """GNU Backgammon Position ID of a board (mover's view)."""
    return position_id(np.asarray(board, dtype=np.int8))


def plain(value):
    """``value`` as it reads back from JSON (tuples -> lists)."""
    return json.loads(json.dumps(value))


def dumps(value, indent: int = 0) -> str:
    """JSON text: dicts and lists of containers one entry a line, lists of scalars on one line."""
    pad = " " * (indent + 1)
    if isinstance(value, dict) and value:
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return "[\n" + ",\n".join(pad + dumps(v, indent + 1) for v in value) + "\n" + " " * indent + "]"
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return "[\n" + ",\n".join(pad + json.dumps(v) for v in value) + "\n" + " " * indent + "]"
    return json.dumps(value)


def load(name: str):
    """The recorded data of item ``name``."""
    return json.loads((GOLDEN_DIR / f"{name}.json").read_text())


def compare(expected, actual, tol: float, path: str = "") -> list[str]:
    """Differences between recorded ``expected`` and recomputed ``actual`` data, as readable lines.

    Integers, strings, bools and ``None`` must be equal; a float (on either side) must be within
    ``tol`` (absolute), NaN matching NaN. Lists stop after 20 differences.
    """
    out = []
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or expected.keys() != actual.keys():
            keys = sorted(set(expected) ^ set(actual)) if isinstance(actual, dict) else type(actual).__name__
            return [f"{path or '.'}: keys differ: {keys}"]
        for key in expected:
            out += compare(expected[key], actual[key], tol, f"{path}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(expected) != len(actual):
            n = len(actual) if isinstance(actual, list) else type(actual).__name__
            return [f"{path}: length {len(expected)} recorded, {n} now"]
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            out += compare(e, a, tol, f"{path}[{i}]")
            if len(out) > 20:
                break
        return out
    if isinstance(expected, float) or isinstance(actual, float):
        if isinstance(expected, bool) or isinstance(actual, bool) or expected is None or actual is None:
            return [f"{path}: {expected!r} recorded, {actual!r} now"]
        e, a = float(expected), float(actual)
        if math.isnan(e) and math.isnan(a):
            return []
        if not abs(e - a) <= tol:
            return [f"{path}: {e!r} recorded, {a!r} now (diff {a - e:.3g}, tolerance {tol:g})"]
        return []
    if type(expected) is not type(actual) or expected != actual:
        return [f"{path}: {expected!r} recorded, {actual!r} now"]
    return []


@functools.lru_cache(maxsize=4)
def network_agent(ply: int = 0):
    """``checkpoints/nard-rich.pt`` at ``ply``, loaded once: the default network when these outputs were
    recorded; they pin the engine's behaviour on it, so they name it rather than the default."""
    return load_agent(Path(__file__).resolve().parents[2] / "checkpoints" / "nard-rich.pt", ply=ply)


@functools.lru_cache(maxsize=1)
def pubeval():
    return pubeval_agent()


# --------------------------------------------------------------------------- 1. random games


def case_random_games() -> dict:
    """Compiled random games (``nard_ai.random_games``) for fixed seeds, batch sizes and rule variants."""
    out = {}
    for label, n, seed, rules in (
        ("standard_1", 1, 11, Rules()),
        ("standard_7", 7, 12, Rules()),
        ("standard_300", 300, 13, Rules()),
        ("iranian000_40", 40, 14, Rules.iranian("000")),
        ("iranian002_40", 40, 15, Rules.iranian("002")),
    ):
        points, plies = random_games(n, np.random.default_rng(seed), rules)
        out[label] = {
            "points": ints(points),
            "plies": ints(plies),
            "sum_points": int(points.sum()),
            "sum_plies": int(plies.sum()),
        }
    return out


# --------------------------------------------------------------------------- 2. legal plays


def _scattered_board(rng: np.random.Generator) -> np.ndarray:
    """A random valid board in play: each side's checkers on free points, some on the bar or off."""
    board = np.zeros(26, dtype=np.int64)
    for side in (1, -1):
        off = int(rng.integers(0, 6)) if rng.random() < 0.3 else 0
        on_bar = int(rng.integers(1, 4)) if rng.random() < 0.3 else 0
        board[25 if side == 1 else 0] = side * on_bar
        left = 15 - off - on_bar
        while left:
            point = int(rng.integers(1, 25))
            if board[point] * side >= 0:
                board[point] += side
                left -= 1
    return board.astype(np.int8)


def _home_board(rng: np.random.Generator) -> np.ndarray:
    """Mover mostly on points 1..12 with opponent blots in its home board (where the Iranian rule acts)."""
    board = np.zeros(26, dtype=np.int64)
    for p in rng.integers(1, 13, size=int(rng.integers(3, 15))):
        board[p] += 1
    free = [p for p in range(1, 10) if board[p] == 0]
    rng.shuffle(free)
    opp = 15
    for p in free[: int(rng.integers(1, 5))]:
        board[p] = -1
        opp -= 1
    far = [p for p in range(13, 25) if board[p] == 0]
    for _ in range(opp):
        if rng.random() < 0.2:
            continue  # borne off
        board[int(rng.choice(far))] -= 1
    if not (board < 0).any():
        board[24] = -1
    return board.astype(np.int8)


def _played_boards(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` positions from random play from the start (via the move generator, random legal plays)."""
    out = []
    boards = np.tile(starting_board(), (16, 1))
    while len(out) < n:
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        plays, owner = legal_plays_batch(boards, dice)
        pick = [int(rng.choice(np.flatnonzero(owner == i))) for i in range(len(boards))]
        chosen = plays[pick]
        alive = (chosen > 0).any(axis=1)
        boards = swap_sides(chosen[alive])
        out.extend(boards[rng.random(len(boards)) < 0.3])
        if len(boards) < 4:
            boards = np.tile(starting_board(), (16, 1))
    return np.array(out[:n], dtype=np.int8)


def legal_play_inputs(n: int = 300, seed: int = 2024) -> tuple[np.ndarray, np.ndarray]:
    """``n`` seeded positions (played, scattered, home-board hits) and a roll for each."""
    rng = np.random.default_rng(seed)
    n_played = n // 2
    n_home = n // 4
    boards = np.concatenate(
        [
            _played_boards(rng, n_played),
            np.array([_home_board(rng) for _ in range(n_home)]),
            np.array([_scattered_board(rng) for _ in range(n - n_played - n_home)]),
        ]
    )
    dice = rng.integers(1, 7, size=(n, 2)).astype(np.int8)
    return np.ascontiguousarray(boards, dtype=np.int8), dice


def case_legal_plays() -> dict:
    """``legal_plays_batch`` (sorted and generator order) and ``count_plays_batch`` on 300 positions x
    rolls, plus all 21 rolls of 12 of them, for the three rule settings."""
    boards, dice = legal_play_inputs()
    out = {"inputs": {"boards": sha256(boards, np.int8), "dice": sha256(dice, np.int8)}}
    # every roll of a few positions too (doubles included on every board)
    rolls21 = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int8)
    few = boards[::25]
    all_boards = np.ascontiguousarray(np.repeat(few, len(rolls21), axis=0))
    all_dice = np.ascontiguousarray(np.tile(rolls21, (len(few), 1)))
    for label, rules in (
        ("standard", Rules()),
        ("iranian000", Rules.iranian("000")),
        ("iranian002", Rules.iranian("002")),
    ):
        item = {}
        for part, (b, d) in (("random", (boards, dice)), ("all_rolls", (all_boards, all_dice))):
            plays, owner = legal_plays_batch(b, d, rules)
            unsorted, owner_u = legal_plays_batch(b, d, rules, sort=False)
            counts = np.bincount(owner, minlength=len(b))
            item[part] = {
                "rows": len(plays),
                "counts": ints(counts),
                "plays_sha256": sha256(plays, np.int8),
                "owner_sha256": sha256(owner, np.int64),
                "unsorted_sha256": sha256(unsorted, np.int8),
                "unsorted_owner_sha256": sha256(owner_u, np.int64),
                "count_plays_equal": bool(np.array_equal(count_plays_batch(b, d, rules), counts)),
            }
        out[label] = item
    return out


# --------------------------------------------------------------------------- 3. cubeless match


def _match_summary(r) -> dict:
    return {
        "points": ints(r.points),
        "plies": int(r.plies),
        "games": r.games,
        "ppg": r.ppg,
        "ci95": r.ci95,
        "rates": r.rates(),
    }


@single_threaded
def case_arena_match() -> dict:
    """A duplicate-dice cubeless match (``arena.play_match``): shipped network 0-ply vs pubeval."""
    r = play_match(network_agent(0), pubeval(), 48, seed=7, batch=16)
    return {"net0_vs_pubeval": _match_summary(r)}


# --------------------------------------------------------------------------- 4. cube play


def _log(log) -> dict:
    return {
        field: np.asarray(getattr(log, field)).astype(np.int64).tolist()
        for field in (
            "unit",
            "game",
            "a_seat",
            "score",
            "crawford",
            "points",
            "cube_value",
            "cube_owner",
            "passed",
            "doubles",
            "plies",
        )
    }


def _stats(s) -> dict:
    return {"doubles": s.doubles, "takes": s.takes, "passes": s.passes, "beavers": s.beavers}


@single_threaded
def case_cubeplay() -> dict:
    """Money sessions and matches with the cube (``cubeplay.play_money_session``, ``play_matches``)."""
    net = network_agent(0)
    out = {}
    for label, a, b, games, seed, kwargs in (
        ("money_net_vs_pubeval", net, pubeval(), 16, 21, {}),
        ("money_net_vs_net_jacoby_beavers", net, net, 12, 22, {"jacoby": True, "beavers": True}),
        ("money_net_vs_pubeval_model", net, pubeval(), 12, 23, {"policy_b": MODEL_POLICY}),
    ):
        r = play_money_session(a, b, games, seed=seed, batch=8, **kwargs)
        out[label] = {
            "points": ints(r.points),
            "plies": int(r.plies),
            "ppg": r.ppg,
            "ci95": r.ci95,
            "average_cube": r.average_cube,
            "pass_rate": r.pass_rate,
            "stats_a": _stats(r.stats_a),
            "stats_b": _stats(r.stats_b),
            "log": _log(r.log),
        }
    for label, a, b, matches, length, seed in (
        ("match5_net_vs_pubeval", net, pubeval(), 4, 5, 24),
        ("match3_net_vs_net", net, net, 4, 3, 25),
    ):
        m = play_matches(a, b, matches, length, seed=seed, batch=4)
        out[label] = {
            "won": [bool(w) for w in m.won],
            "score": ints(m.score),
            "plies": int(m.plies),
            "games": m.games,
            "win_rate": m.win_rate,
            "ci95": m.ci95,
            "points_won": m.points_won,
            "points_lost": m.points_lost,
            "stats_a": _stats(m.stats_a),
            "stats_b": _stats(m.stats_b),
            "log": _log(m.log),
        }
    return out


# --------------------------------------------------------------------------- 5. rollouts


def _rollout_fields(r) -> dict:
    return {
        "probs": floats(r.probs),
        "probs_ci": floats(r.probs_ci),
        "equity": r.equity,
        "equity_ci": r.equity_ci,
        "cubeful": r.cubeful,
        "cubeful_ci": r.cubeful_ci,
        "games": r.games,
        "truncated": r.truncated,
        "mean_plies": r.mean_plies,
        "variance_reduction": r.variance_reduction,
        "ply": r.ply,
        "passes": r.passes,
    }


@single_threaded
def case_rollout() -> dict:
    """Rollouts (``rollout.rollout``, ``rollout_plays``) with the shipped network, cubeless and cubeful."""
    net = network_agent(0)
    out = {
        "middle_cubeless": rollout(MIDDLE_GAME, 36, agent=net, seed=5, batch=36),
        "middle_cubeless_truncated_vr": rollout(
            MIDDLE_GAME, 12, agent=net, seed=6, truncate=3, variance_reduction=True, batch=12
        ),
        "race_cubeless_vr_default": rollout(RACE, 24, agent=net, seed=7, batch=24),
        "blitz_money_cubeful": rollout(BLITZ, 36, agent=net, cube=CubeState(), seed=8, batch=36),
        "middle_match_cubeful": rollout(
            MIDDLE_GAME, 24, agent=net, cube=CubeState.from_away(3, 5), seed=9, batch=24
        ),
        "blitz_double_take": rollout(
            BLITZ, 24, agent=net, cube=CubeState(), seed=10, batch=24, root_action="double_take"
        ),
    }
    out = {k: _rollout_fields(v) for k, v in out.items()}
    for label, cube in (("plays_start31_cubeless", None), ("plays_start31_money", CubeState())):
        plays = rollout_plays(START, (3, 1), 12, cube=cube, seed=11, agent=net, candidates=3, batch=12)
        out[label] = [
            {"afterstate": pid(p.afterstate), "search_equity": p.search_equity, **_rollout_fields(p.result)}
            for p in plays
        ]
    return out


# --------------------------------------------------------------------------- 6. self-play


def _tiny_learner() -> Learner:
    torch.manual_seed(0)
    return Learner(Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True)), lr=1e-2)


def _weights_summary(network) -> dict:
    """Per parameter tensor: its shape, mean, mean absolute value, RMS and 16 evenly spaced entries.

    Means rather than sums, so that the tolerance on the recorded numbers does not grow with the size.
    """
    out = {}
    for name, p in network.named_parameters():
        w = p.detach().to(torch.float64).reshape(-1).numpy()
        out[name] = {
            "shape": list(p.shape),
            "mean": float(w.mean()),
            "mean_abs": float(np.abs(w).mean()),
            "rms": float(np.sqrt((w * w).mean())),
            "sample": floats(w[np.linspace(0, len(w) - 1, 16).astype(np.int64)]),
        }
    return out


@single_threaded
def selfplay_round(workers: int) -> dict:
    """One self-play round of a tiny network (``selfplay.play_round``) with ``workers`` workers."""
    learner = _tiny_learner()
    s = play_round(learner, 8, np.random.default_rng(4), pool=6, batch_size=32, workers=workers)
    stats = {
        "games": s.games,
        "plies": s.plies,
        "results": ints(s.results),
        "first_player_points": int(s.first_player_points),
        "samples": s.samples,
        "updates": s.updates,
        "positions": s.positions,
        "interrupted": s.interrupted,
    }
    return {"stats": stats, "loss_sum": float(s.loss_sum), "weights": _weights_summary(learner.network)}


def case_selfplay() -> dict:
    """Self-play rounds with 1 and 2 workers: statistics and a summary of the trained weights."""
    return {"workers_1": selfplay_round(1), "workers_2": selfplay_round(2)}


# --------------------------------------------------------------------------- 7. search


SEARCH_CASES = (
    ("start_31", START, (3, 1)),
    ("start_64", START, (6, 4)),
    ("middle_game_66", MIDDLE_GAME, (6, 6)),
    ("race_52", RACE, (5, 2)),
    ("bearoff_41", BEAROFF, (4, 1)),
    ("bearoff_contact_63", BEAROFF_CONTACT, (6, 3)),
    ("blitz_21", BLITZ, (2, 1)),
)


def _ranked(r, top: int) -> dict:
    k = min(top, len(r))
    return {
        "plays": len(r),
        "afterstates": [pid(b) for b in r.afterstates[:k]],
        "equity": floats(r.equity[:k]),
        "probs": floats(r.probs[:k]),
        "plies": ints(r.plies[:k]),
    }


@single_threaded
def case_search() -> dict:
    """``rank_plays``, ``choose_plays`` and ``position_probs`` at 0, 1 and 2 ply with the shipped network."""
    evaluator = network_agent(0).evaluator
    boards = np.array([b for _, b, _ in SEARCH_CASES], dtype=np.int8)
    dice = np.array([d for _, _, d in SEARCH_CASES], dtype=np.int8)
    out = {}
    for ply, top in ((0, 8), (1, 5), (2, 3)):
        level = {}
        for label, board, roll in SEARCH_CASES:
            level[label] = _ranked(rank_plays(evaluator, board, roll, ply=ply), top)
        chosen = choose_plays(evaluator, boards, dice, ply=ply)
        level["choose_plays"] = [pid(b) for b in chosen]
        level["position_probs"] = floats(position_probs(evaluator, boards, ply=ply))
        out[f"ply{ply}"] = level
    return out


# --------------------------------------------------------------------------- 8. Gymnasium env


def _pick(mask: np.ndarray, step: int, game: int = 0) -> int:
    """The fixed action rule: legal action number ``hash(step, game) mod count`` (by index).

    A multiplicative hash of the step (Knuth's 2654435761) rather than always the first or middle
    action, so that the cube phases meet both answers (roll and double, take and pass).
    """
    legal = np.flatnonzero(mask)
    return int(legal[((step * 2654435761 + game * 40503) % 2**32) % len(legal)])


def _obs_sum(obs: np.ndarray) -> float:
    return float(np.asarray(obs, dtype=np.float64).sum())


def _episode(environment, seed: int, max_steps: int = 3000) -> dict:
    obs, info = environment.reset(seed=seed)
    actions, rewards, players, boards, obs_sums = [], [], [], [info["board"]], [_obs_sum(obs)]
    cube = "cube_value" in info
    cube_values, phases = [int(info["cube_value"])] if cube else [], [int(info["phase"])] if cube else []
    for step in range(max_steps):
        action = _pick(info["action_mask"], step)
        obs, reward, terminated, truncated, info = environment.step(action)
        actions.append(action)
        rewards.append(float(reward))
        players.append(int(info["player"]))
        boards.append(info["board"])
        obs_sums.append(_obs_sum(obs))
        if cube:
            cube_values.append(int(info["cube_value"]))
            phases.append(int(info["phase"]))
        if terminated or truncated:
            break
    out = {
        "steps": len(actions),
        "actions": actions,
        "rewards": rewards,
        "players": players,
        "final_reward": rewards[-1],
        "terminated": bool(terminated),
        "boards_sha256": sha256(np.array(boards), np.int8),
        "obs_sums": obs_sums,
    }
    if cube:
        out.update(cube_values=cube_values, phases=phases)
    return out


def _vector_run(envs, seed: int, steps: int) -> dict:
    obs, infos = envs.reset(seed=seed)
    actions, rewards, terminations, boards, obs_sums = [], [], [], [infos["board"]], []
    cube = "cube_value" in infos
    cube_values = []
    for step in range(steps):
        step_actions = np.array(
            [_pick(m, step, i) if m.any() else 0 for i, m in enumerate(infos["action_mask"])]
        )
        obs, reward, terminated, truncated, infos = envs.step(step_actions)
        actions.append(ints(step_actions))
        rewards.append(floats(reward))
        terminations.append([bool(t) for t in terminated])
        boards.append(infos["board"])
        obs_sums.append(floats(np.asarray(obs, dtype=np.float64).sum(axis=1)))
        if cube:
            cube_values.append(ints(infos["cube_value"]))
    envs.close()
    out = {
        "actions": actions,
        "rewards": rewards,
        "terminations": terminations,
        "boards_sha256": sha256(np.array(boards), np.int8),
        "obs_sums": obs_sums,
    }
    if cube:
        out["cube_values"] = cube_values
    return out


def case_env() -> dict:
    """One seeded episode per setting of the single env, and a vector env run, with a fixed action rule."""
    out = {
        "play_random": _episode(gym.make(ENV_ID, action_mode="play", opponent="random"), seed=31),
        "checker_random": _episode(BackgammonEnv(action_mode="checker", opponent="random"), seed=32),
        "play_self_cube": _episode(BackgammonEnv(opponent="self", cube=True), seed=33),
        "checker_self_cube_jacoby": _episode(
            BackgammonEnv(action_mode="checker", opponent="self", cube=True, jacoby=True), seed=37
        ),
        "play_random_iranian": _episode(
            BackgammonEnv(opponent="random", rules=Rules.iranian("000")), seed=34
        ),
        "vector_play_random": _vector_run(
            gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point"), seed=35, steps=150
        ),
        "vector_checker_cube": _vector_run(
            BackgammonVectorEnv(num_envs=2, action_mode="checker", opponent="random", cube=True),
            seed=36,
            steps=150,
        ),
    }
    return out


# --------------------------------------------------------------------------- 9. cube decisions


def _decision(d) -> dict:
    return {
        "action": d.action,
        "no_double": d.no_double,
        "double_take": d.double_take,
        "double_pass": d.double_pass,
        "probs": floats(d.probs),
        "cubeless_equity": d.cubeless_equity,
        "take_point": d.take_point,
        "efficiency": d.efficiency,
        "cube_available": d.cube_available,
        "beaver": d.beaver,
        "no_double_mwc": d.no_double_mwc,
        "double_take_mwc": d.double_take_mwc,
        "double_pass_mwc": d.double_pass_mwc,
        "ply": d.ply,
        "optimal": d.optimal,
        "errors": d.errors,
    }


CUBES = (
    ("money", CubeState()),
    ("money_owned", CubeState(value=2, owner="on_roll")),
    ("money_jacoby_beavers", CubeState(jacoby=True, beavers=True)),
    ("match_5a5a", CubeState.from_away(5, 5)),
    ("match_2a4a_cube2_opp", CubeState.from_away(2, 4, value=2, owner="opponent")),
    ("match_1a3a_crawford", CubeState.from_away(1, 3, crawford=True)),
    ("match_4a2a", CubeState.from_away(4, 2)),
)


@single_threaded
def case_cube_decisions() -> dict:
    """``cube.cube_decision`` with the shipped network (0-ply, and 1-ply on two positions), money and
    match, and ``cube_decision_from_probs`` on hand-set probabilities."""
    out = {}
    for board_label, board in (("blitz", BLITZ), ("race", RACE), ("middle", MIDDLE_GAME), ("start", START)):
        for cube_label, cube in CUBES:
            d = cube_decision(board, cube, ply=0, agent=network_agent(0))
            out[f"{board_label}_{cube_label}_ply0"] = _decision(d)
    for board_label, board in (("blitz", BLITZ), ("race", RACE)):
        for cube_label, cube in CUBES[:1] + CUBES[3:4]:
            d = cube_decision(board, cube, ply=1, agent=network_agent(1))
            out[f"{board_label}_{cube_label}_ply1"] = _decision(d)
    hand = np.array([0.72, 0.25, 0.02, 0.06, 0.004])
    for cube_label, cube in CUBES:
        out[f"probs_{cube_label}"] = _decision(cube_decision_from_probs(hand, cube, 0.68))
    return out


#: Every item: name -> function. The recorder writes ``<name>.json`` for each.
CASES = {
    "random_games": case_random_games,
    "legal_plays": case_legal_plays,
    "arena_match": case_arena_match,
    "cubeplay": case_cubeplay,
    "rollout": case_rollout,
    "selfplay": case_selfplay,
    "search": case_search,
    "env": case_env,
    "cube_decisions": case_cube_decisions,
}
