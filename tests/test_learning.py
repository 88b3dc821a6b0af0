"""Tests of the learning half: encoding, network and checkpoints, evaluators, search, TD(lambda), arena, scripts.

Boards follow :mod:`nard_ai.core.board` (``(26,)`` int8, side on roll's view).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from nard_ai.agents import agent_from_spec, checkpoint_of_spec
from nard_ai.core.board import BAR, LAYOUT_VERSION, pos, starting_board, swap_sides
from nard_ai.core.movegen import legal_plays
from nard_ai.eval.evaluator import Evaluator, NetworkEvaluator, PubevalEvaluator, RandomEvaluator, has_contact
from nard_ai.model.encoding import TD198, get_encoder
from nard_ai.model.learn import Learner, TrainingDiverged, check_finite_weights, lambda_returns, td_loss
from nard_ai.model.network import (
    Network,
    NetworkConfig,
    _digest,
    _metadata,
    cubeless_equity,
    default_checkpoint_path,
    exclusive_to_gnubg,
    gnubg_to_exclusive,
    invert_exclusive,
    invert_probs,
    load_checkpoint,
    result_probs,
    save_checkpoint,
)
from nard_ai.play.arena import play_match
from nard_ai.search.lookahead import Agent, afterstate_probs, choose_plays, rank_plays, select_plays

REPO = Path(__file__).resolve().parent.parent
START_ID = "4HPwATDgc/ABMA"


def random_boards(rng: np.random.Generator, n: int) -> np.ndarray:
    """Valid boards with each side's checkers dropped on random points, its bar, or off (none shared)."""
    out = np.zeros((n, 26), dtype=np.int8)
    for i in range(n):
        for side in (1, -1):
            for _ in range(15):
                spot = int(rng.integers(0, 27))  # 0..23 points, 24 bar, 25..26 off
                if spot >= 25:
                    continue
                if spot == 24:
                    idx = BAR if side == 1 else 0
                else:
                    idx = spot + 1
                if out[i, idx] * side < 0:
                    continue  # the other side holds it: leave this checker off
                out[i, idx] += side
        if not (out[i] > 0).any():
            out[i, 6] = 1
        if not (out[i] < 0).any():
            out[i, 19] = -1
    return out


def td198_reference(board: np.ndarray) -> np.ndarray:
    """Obviously correct td198 v1 (layout in :mod:`nard_ai.model.encoding`)."""
    x = np.zeros(198, dtype=np.float32)

    def units(n: int) -> list[float]:
        return [n >= 1, n >= 2, n >= 3, (n - 3) / 2 if n > 3 else 0.0]

    for p in range(1, 25):
        x[4 * (p - 1) : 4 * p] = units(max(int(board[p]), 0))
        x[96 + 4 * (p - 1) : 96 + 4 * p] = units(max(-int(board[25 - p]), 0))
    x[192] = board[25] / 2
    x[193] = -board[0] / 2
    x[194] = (15 - board[board > 0].sum()) / 15
    x[195] = (15 + board[board < 0].sum()) / 15
    x[196] = 1.0
    return x


# ---------------------------------------------------------------- encoding


def test_td198_of_the_starting_position_has_the_published_units():
    """Each side: 2 on its 24, 5 on 13, 3 on 8, 5 on 6; nothing on the bar or off."""
    x = TD198.encode(starting_board())
    assert x.shape == (1, 198) and x.dtype == np.float32
    x = x[0]
    for half in (0, 96):
        assert list(x[half + 4 * 5 : half + 4 * 6]) == [1, 1, 1, 1.0]  # point 6: 5 checkers
        assert list(x[half + 4 * 7 : half + 4 * 8]) == [1, 1, 1, 0]  # point 8: 3
        assert list(x[half + 4 * 12 : half + 4 * 13]) == [1, 1, 1, 1.0]  # point 13: 5
        assert list(x[half + 4 * 23 : half + 4 * 24]) == [1, 1, 0, 0]  # point 24: 2
    assert list(x[192:198]) == [0, 0, 0, 0, 1, 0]
    assert x.sum() == pytest.approx(2 * 13 + 1)


def test_td198_matches_a_slow_reference_on_random_boards():
    boards = random_boards(np.random.default_rng(1), 500)
    fast = TD198.encode(boards)
    slow = np.stack([td198_reference(b) for b in boards])
    np.testing.assert_allclose(fast, slow, atol=1e-6)


def test_td198_is_symmetric_under_swap_sides():
    boards = random_boards(np.random.default_rng(2), 200)
    x, y = TD198.encode(boards), TD198.encode(swap_sides(boards))
    np.testing.assert_array_equal(x[:, :96], y[:, 96:192])
    np.testing.assert_array_equal(x[:, 192:196], y[:, [193, 192, 195, 194]])
    np.testing.assert_array_equal(x[:, 196:], y[:, 196:])


def test_unknown_encoder_or_version_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown encoder"):
        get_encoder("nope")
    with pytest.raises(ValueError, match="version"):
        get_encoder("td198", 99)


# ---------------------------------------------------------------- probabilities and equity


def test_cubeless_equity_is_gnubgs_utility_and_the_expected_points():
    """equity = 2w - 1 + wg + wb - lg - lb; on a certain result it is that result's points."""
    for points in (1, 2, 3, -1, -2, -3):
        assert cubeless_equity(result_probs(np.array([points]))[0]) == pytest.approx(points)
    p = np.array([0.6, 0.2, 0.05, 0.1, 0.01])
    assert cubeless_equity(p) == pytest.approx(2 * 0.6 - 1 + 0.2 + 0.05 - 0.1 - 0.01)
    p6 = gnubg_to_exclusive(p)
    assert float(p6 @ np.array([1, 2, 3, -1, -2, -3])) == pytest.approx(cubeless_equity(p))


def test_probability_views_round_trip_and_invert():
    p6 = np.random.default_rng(3).dirichlet(np.ones(6), size=50)
    p5 = exclusive_to_gnubg(p6)
    np.testing.assert_allclose(gnubg_to_exclusive(p5), p6, atol=1e-12)
    np.testing.assert_allclose(invert_probs(invert_probs(p5)), p5)
    np.testing.assert_allclose(invert_probs(p5), exclusive_to_gnubg(invert_exclusive(p6)), atol=1e-12)
    np.testing.assert_allclose(cubeless_equity(invert_probs(p5)), -cubeless_equity(p5), atol=1e-12)


# ---------------------------------------------------------------- network and checkpoints


def small_network(seed: int = 0) -> Network:
    torch.manual_seed(seed)
    return Network(NetworkConfig(hidden=(16,)))


def test_network_evaluator_returns_consistent_probabilities():
    ev = NetworkEvaluator(small_network())
    assert isinstance(ev, Evaluator)
    p = ev.evaluate(random_boards(np.random.default_rng(4), 64))
    assert p.shape == (64, 5) and p.dtype == np.float32
    assert (p >= 0).all() and (p[:, 0] <= 1 + 1e-6).all()
    assert (p[:, 1] <= p[:, 0] + 1e-6).all() and (p[:, 2] <= p[:, 1] + 1e-6).all()
    assert (p[:, 4] <= p[:, 3] + 1e-6).all() and (p[:, 3] <= 1 - p[:, 0] + 1e-6).all()


def test_checkpoint_round_trip_keeps_weights_and_contract(tmp_path):
    net = small_network(1)
    learner = Learner(net)
    boards = random_boards(np.random.default_rng(5), 32)
    learner.update(boards, np.full((32, 6), 1 / 6, dtype=np.float32))
    path = save_checkpoint(
        tmp_path / "sub" / "n.pt",
        net,
        games_trained=123,
        args={"lr": 1e-3},
        optimizer=learner.optimizer,
        rng_state={"numpy": "{}"},
        extra={"note": "x"},
    )
    assert not list(path.parent.glob("*.tmp"))
    ckpt = load_checkpoint(path)
    assert ckpt.games_trained == 123 and ckpt.args == {"lr": 1e-3} and ckpt.extra == {"note": "x"}
    assert ckpt.rng_state == {"numpy": "{}"} and ckpt.optimizer_state is not None
    assert ckpt.network.config == net.config
    np.testing.assert_array_equal(
        NetworkEvaluator(ckpt.network).evaluate(boards), NetworkEvaluator(net).evaluate(boards)
    )
    raw = torch.load(path, weights_only=True)
    assert raw["layout_version"] == LAYOUT_VERSION
    assert raw["encoder"] == {"name": "td198", "version": 1, "size": 198}


def test_corrupt_or_mismatched_checkpoint_raises_value_error(tmp_path):
    good = save_checkpoint(tmp_path / "good.pt", small_network())
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ValueError, match="truncated.pt"):
        load_checkpoint(truncated)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="not a readable"):
        load_checkpoint(garbage)
    for key, value, message in (
        ("layout_version", LAYOUT_VERSION + 1, "layout version"),
        ("encoder", {"name": "td198", "version": 7, "size": 198}, "version"),
        ("format", "something else", "not a nard_ai checkpoint"),
    ):
        payload = torch.load(good, weights_only=True)
        payload[key] = value
        payload["digest"]["metadata"] = _digest(
            _metadata(payload)
        )  # as a file written by other code would carry
        bad = tmp_path / f"bad_{key}.pt"
        torch.save(payload, bad)
        with pytest.raises(ValueError, match=message):
            load_checkpoint(bad)
    payload = torch.load(good, weights_only=True)
    payload["state_dict"]["mlp.0.weight"] = torch.zeros(3, 3)
    del payload["digest"]  # else the digest check fires first
    torch.save(payload, tmp_path / "bad_weights.pt")
    with pytest.raises(ValueError, match="does not match"):
        load_checkpoint(tmp_path / "bad_weights.pt")
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.pt")


def test_the_digest_covers_the_network_description_and_metadata(tmp_path):
    """An edited activation would load with different outputs: the digest's metadata hash catches it,
    as it catches an edited game count; a file whose digest predates the metadata hash still loads."""
    good = save_checkpoint(tmp_path / "good.pt", small_network(), games_trained=7)
    for key, edit in (("network", lambda p: p["network"].update(activation="relu")), ("games_trained", None)):
        payload = torch.load(good, weights_only=True)
        if edit is None:
            payload["games_trained"] = 8
        else:
            edit(payload)
        torch.save(payload, tmp_path / f"edited_{key}.pt")
        with pytest.raises(ValueError, match="digest mismatch \\(metadata"):
            load_checkpoint(tmp_path / f"edited_{key}.pt")
    payload = torch.load(good, weights_only=True)
    del payload["digest"]["metadata"]
    torch.save(payload, tmp_path / "older.pt")
    assert load_checkpoint(tmp_path / "older.pt").games_trained == 7
    for count in ("abc", -5, 1.9, True):
        payload["games_trained"] = count
        torch.save(payload, tmp_path / "bad_count.pt")
        with pytest.raises(ValueError, match="bad_count.pt: checkpoint does not match"):
            load_checkpoint(tmp_path / "bad_count.pt")


def test_shipped_checkpoints_carry_the_full_digest():
    for name in ("nard-rich.pt", "nard-td198.pt"):
        payload = torch.load(default_checkpoint_path().with_name(name), weights_only=True)
        assert payload["digest"]["metadata"] == _digest(_metadata(payload)), name


# ---------------------------------------------------------------- TD(lambda)


def test_td_update_decreases_the_loss_on_a_fixed_target():
    net = small_network(2)
    learner = Learner(net, lr=1e-2)
    boards = random_boards(np.random.default_rng(6), 64)
    targets = np.random.default_rng(7).dirichlet(np.ones(6), size=64).astype(np.float32)
    losses = [learner.update(boards, targets) for _ in range(50)]
    assert losses[-1] < losses[0] - 0.05
    with torch.no_grad():
        final = td_loss(net(torch.from_numpy(TD198.encode(boards))), torch.from_numpy(targets))
    assert float(final) < losses[0]


def test_a_non_finite_loss_stops_the_learner_before_its_step():
    """A diverged network (here an infinite output bias: every logit of its output unit infinite, so
    log_softmax is inf - inf = NaN) raised nothing and kept stepping; now :class:`TrainingDiverged` names the
    step, and neither the weights nor the step count move. check_finite_weights names the tensor."""
    net = small_network(2)
    learner = Learner(net, lr=1e-2)
    boards = random_boards(np.random.default_rng(6), 64)
    targets = np.random.default_rng(7).dirichlet(np.ones(6), size=64).astype(np.float32)
    assert np.isfinite(learner.update(boards, targets))
    check_finite_weights(net, "after one step")  # finite: nothing raised
    with torch.no_grad():
        net.mlp[2].bias[0] = float("inf")
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with pytest.raises(TrainingDiverged, match=r"^non-finite loss \(nan\) at gradient step 2 of this run$"):
        learner.update(boards, targets)
    assert learner.steps == 1
    for name, value in net.state_dict().items():
        torch.testing.assert_close(value, before[name], rtol=0, atol=0, equal_nan=True)
    with pytest.raises(TrainingDiverged, match=r"^non-finite weights in mlp\.2\.bias after 9 games$"):
        check_finite_weights(net, "after 9 games")


def test_lambda_returns_flip_perspective_every_ply():
    """Three plies; the last is a gammon win for its mover (one-hot outcome 1)."""
    y = np.zeros((1, 3, 6), dtype=np.float32)
    y[0, 0] = [0.1, 0.1, 0.1, 0.3, 0.2, 0.2]
    y[0, 1] = [0.5, 0.1, 0.0, 0.3, 0.1, 0.0]
    y[0, 2] = [0, 1, 0, 0, 0, 0]
    np.testing.assert_allclose(lambda_returns(y, np.array([3]), 0.0), y)
    mc = lambda_returns(y, np.array([3]), 1.0)[0]
    np.testing.assert_allclose(mc[2], y[0, 2])
    np.testing.assert_allclose(mc[1], [0, 0, 0, 0, 1, 0])  # the previous mover lost a gammon
    np.testing.assert_allclose(mc[0], [0, 1, 0, 0, 0, 0])
    lam = 0.5
    g2 = y[0, 2]
    g1 = (1 - lam) * y[0, 1] + lam * invert_exclusive(g2)
    g0 = (1 - lam) * y[0, 0] + lam * invert_exclusive(g1)
    np.testing.assert_allclose(lambda_returns(y, np.array([3]), lam)[0], np.stack([g0, g1, g2]), atol=1e-6)


# ---------------------------------------------------------------- evaluators and search


class PipEvaluator:
    """A fake evaluator: the side on roll's win probability rises with its pip lead."""

    def evaluate(self, boards):
        from nard_ai.core.board import pip_count

        pips = pip_count(boards).astype(np.float64)
        p = np.zeros((len(boards), 5), dtype=np.float32)
        p[:, 0] = 1 / (1 + np.exp(-(pips[:, 1] - pips[:, 0]) / 10))
        return p


def test_search_takes_the_play_the_evaluator_likes_best():
    """With a pip-lead evaluator every play of a non-hitting roll is equal; hitting gains the most."""
    board = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 13: 4, 8: 3, 6: 5, 20: 1})  # opp blot on my 5
    ranked = rank_plays(PipEvaluator(), board, (3, 1))
    assert len(ranked) == len(legal_plays(board, (3, 1)))
    assert ranked.afterstates[0][0] == -1  # the blot was hit: it is on the opponent's bar
    assert np.all(np.diff(ranked.equity) <= 1e-6)
    chosen = choose_plays(PipEvaluator(), board[None], np.array([[3, 1]]))
    np.testing.assert_array_equal(chosen[0], ranked.afterstates[0])


def test_bearing_off_the_last_checker_is_valued_exactly():
    # my last checker on my 2; the opponent has borne off none and has one on its 24 (my 1): a backgammon
    board = pos(me={2: 1}, opp={24: 1, 6: 14})
    after = legal_plays(board, (2, 1))
    probs = afterstate_probs(RandomEvaluator(0), after)
    np.testing.assert_array_equal(probs, np.tile([1, 1, 1, 0, 0], (len(after), 1)))  # 2/off or 2/1*/off
    sel = select_plays(NetworkEvaluator(small_network()), board[None], np.array([[2, 1]]))
    assert sel.finished[0] and sel.equity[0] == pytest.approx(3.0)


def test_pubeval_scores_and_contact():
    ev = PubevalEvaluator()
    race = pos(me={6: 5, 5: 5, 4: 5}, opp={6: 5, 5: 5, 4: 5})
    assert not has_contact(race[None])[0] and has_contact(starting_board()[None])[0]
    p = ev.evaluate(starting_board()[None])
    assert p.shape == (1, 5) and 0 < p[0, 0] < 1
    ranked = Agent(ev).rank_plays(starting_board(), (3, 1))
    assert ranked.afterstates[0][5] == 2  # pubeval makes the 5-point with 3-1 (8/5 6/5)


def test_duplicate_dice_make_a_mirror_match_exactly_even():
    res = play_match(agent_from_spec("pubeval"), agent_from_spec("pubeval"), 40, seed=3)
    assert res.games == 40 and (res.points.reshape(-1, 2).sum(axis=1) == 0).all()


def test_a_match_of_one_duplicate_pair_has_no_confidence_interval():
    res = play_match(agent_from_spec("pubeval"), agent_from_spec("random", seed=1), 1, seed=3)
    assert res.games == 2 and "no 95% CI from one duplicate pair" in res.summary()


def test_pubeval_crushes_random():
    res = play_match(agent_from_spec("pubeval"), agent_from_spec("random", seed=1), 100, seed=4, batch=64)
    assert res.ppg > 1.5
    assert set(np.unique(np.abs(res.points))) <= {1, 2, 3}


# ---------------------------------------------------------------- scripts (subprocess smoke runs)


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def run_at_once(calls: list[dict]) -> list[subprocess.CompletedProcess]:
    """``conftest.run_at_once``, imported on use: a subprocess imports this module from outside tests/."""
    from conftest import run_at_once

    return run_at_once(calls)


def _run_kwargs(args: list[str], cwd: Path) -> dict:
    """The ``subprocess.run`` arguments of :func:`run` (for ``conftest.run_at_once``)."""
    return {"args": [sys.executable, *args], "cwd": cwd, "env": {**os.environ, "PYTHONPATH": str(REPO)}}


def _folder(tmp_path: Path) -> Path:
    """A new empty folder under ``tmp_path``: the working folder of one run started beside another."""
    n = sum(1 for p in tmp_path.iterdir() if p.name.startswith("cwd-"))
    folder = tmp_path / f"cwd-{n}"
    folder.mkdir()
    return folder


def test_train_script_smoke_resume_is_exact_and_evaluate_runs(tmp_path):
    tiny = [
        "--hidden",
        "8",
        "--pool",
        "8",
        "--batch-size",
        "32",
        "--checkpoint-every",
        "20",
        "--eval-every",
        "0",
        "--no-progress",
        "--seed",
        "5",
    ]
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    # independent runs go at once (conftest.run_at_once), each in a working folder of its own
    r, fresh = run_at_once(
        [
            _run_kwargs([str(REPO / "train.py"), "--games", "20", "--checkpoint", str(a), *tiny], tmp_path),
            _run_kwargs(
                [str(REPO / "train.py"), "--games", "40", "--checkpoint", str(b), *tiny], _folder(tmp_path)
            ),
        ]
    )
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(a).games_trained == 20
    assert list((tmp_path / "runs").iterdir()), "no TensorBoard run written"
    assert fresh.returncode == 0, fresh.stderr
    r, again = run_at_once(
        [
            _run_kwargs(
                [str(REPO / "train.py"), "--games", "40", "--checkpoint", str(a), "--resume", *tiny], tmp_path
            ),
            _run_kwargs(
                [str(REPO / "train.py"), "--games", "40", "--checkpoint", str(b), *tiny], _folder(tmp_path)
            ),
        ]
    )
    assert r.returncode == 0, r.stderr
    wa, wb = load_checkpoint(a), load_checkpoint(b)
    assert wa.games_trained == wb.games_trained == 40
    for k, v in wa.network.state_dict().items():
        assert torch.equal(v, wb.network.state_dict()[k]), k
    r = again  # b.pt exists
    assert r.returncode != 0 and "exists" in r.stderr
    r = run(
        [
            str(REPO / "evaluate.py"),
            "--agent-a",
            str(a),
            "--agent-b",
            "random",
            "--games",
            "20",
            "--no-progress",
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "ppg" in r.stdout and "95% CI" in r.stdout and "games/s" in r.stdout


@pytest.mark.skipif(not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing")
def test_nard_hint_ranks_the_opening_3_1_with_the_shipped_network(tmp_path):
    r = run(["-m", "nard_ai.interfaces.cli", "hint", START_ID, "--dice", "3", "1"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    first = next(line for line in lines if line.strip().startswith("1 "))
    assert "8/5 6/5" in first  # every decent player makes the 5-point with an opening 3-1
    assert "equity" in r.stdout and "win" in r.stdout


@pytest.mark.parametrize(
    "argv", [["hint", "not-an-id", "--dice", "3", "1"], ["hint", START_ID, "--dice", "3", "7"]]
)
def test_nard_hint_rejects_bad_input_without_a_traceback(tmp_path, argv):
    r = run(["-m", "nard_ai.interfaces.cli", *argv], tmp_path)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "error" in r.stderr


def test_agent_specs(tmp_path):
    path = save_checkpoint(tmp_path / "n.pt", small_network())
    assert agent_from_spec(f"{path}:0").ply == 0
    assert agent_from_spec("pubeval").name == "pubeval" and agent_from_spec("random").name == "random"
    assert agent_from_spec(f"{path}:2").ply == 2
    with pytest.raises(ValueError, match="ply"):
        agent_from_spec(f"{path}:3")
    with pytest.raises(FileNotFoundError):
        agent_from_spec(str(tmp_path / "missing.pt"))


# ---------------------------------------------------------------- review fixes: digest, defaults, argument checks


def flip_bytes(src: Path, dst: Path, start: int = 5000, stop: int = 5200) -> Path:
    data = bytearray(src.read_bytes())
    for i in range(start, stop):
        data[i] ^= 0xFF
    dst.write_bytes(bytes(data))
    return dst


def test_damaged_tensor_bytes_fail_the_digest_check(tmp_path):
    net = small_network(3)
    learner = Learner(net)
    learner.update(random_boards(np.random.default_rng(8), 16), np.full((16, 6), 1 / 6, dtype=np.float32))
    good = save_checkpoint(tmp_path / "good.pt", net, optimizer=learner.optimizer)
    digest = torch.load(good, weights_only=True)["digest"]
    assert digest["algorithm"] == "sha256" and len(digest["state_dict"]) == 64 and digest["optimizer"]
    with pytest.raises(ValueError, match=r"corrupt checkpoint .*bad\.pt: digest mismatch"):
        load_checkpoint(flip_bytes(good, tmp_path / "bad.pt"))
    # a damaged optimizer tensor is caught too
    payload = torch.load(good, weights_only=True)
    next(iter(payload["optimizer"]["state"].values()))["exp_avg"].add_(1.0)
    torch.save(payload, tmp_path / "bad_opt.pt")
    with pytest.raises(ValueError, match=r"digest mismatch \(optimizer"):
        load_checkpoint(tmp_path / "bad_opt.pt")
    # files from before the digest (no entry) still load
    payload = torch.load(good, weights_only=True)
    del payload["digest"]
    torch.save(payload, tmp_path / "old.pt")
    assert load_checkpoint(tmp_path / "old.pt").network.config == net.config


def test_unreadable_checkpoint_message_is_our_own(tmp_path):
    good = save_checkpoint(tmp_path / "good.pt", small_network())
    bad = tmp_path / "bad.pt"
    bad.write_bytes(good.read_bytes()[:300] + b"\x00" * 50 + good.read_bytes()[350:])
    for path in (bad, tmp_path / "garbage.pt"):
        if path.name == "garbage.pt":
            path.write_bytes(b"\x80\x02 garbage")
        try:
            load_checkpoint(path)
        except ValueError as exc:
            assert "weights_only" not in str(exc) and path.name in str(exc)
        else:  # the damage missed everything torch reads; then the digest must catch it
            pytest.fail(f"{path.name} loaded")


TINY = ["--hidden", "8", "--pool", "8", "--batch-size", "32", "--checkpoint-every", "10", "--eval-every", "0",
        "--no-progress"]  # fmt: skip


def test_train_defaults_write_a_new_file_not_the_shipped_one(tmp_path):
    r = run([str(REPO / "train.py"), "--games", "10", *TINY], tmp_path)
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(tmp_path / "checkpoints" / "nard-rich__1.pt").games_trained == 10
    assert not (tmp_path / "checkpoints" / "nard-rich.pt").exists()


def test_train_resume_errors_and_nothing_to_do(tmp_path):
    missing = tmp_path / "missing.pt"
    good = tmp_path / "good.pt"
    # independent runs go at once (conftest.run_at_once), the refused ones in working folders of their own
    r, trained = run_at_once(
        [
            _run_kwargs([str(REPO / "train.py"), "--resume", "--checkpoint", str(missing), "--games", "10", *TINY],
                        _folder(tmp_path)),
            _run_kwargs([str(REPO / "train.py"), "--checkpoint", str(good), "--games", "10", *TINY], tmp_path),
        ]
    )  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "missing.pt" in r.stderr
    r = trained
    assert r.returncode == 0, r.stderr
    corrupt = flip_bytes(good, tmp_path / "corrupt.pt", 3000, 3200)
    before, mtime = good.read_bytes(), good.stat().st_mtime_ns
    runs_before = len(list((tmp_path / "runs").iterdir()))
    r, nothing = run_at_once(
        [
            _run_kwargs([str(REPO / "train.py"), "--resume", "--checkpoint", str(corrupt), "--games", "20", *TINY],
                        _folder(tmp_path)),
            _run_kwargs([str(REPO / "train.py"), "--resume", "--checkpoint", str(good), "--games", "10", *TINY],
                        tmp_path),
        ]
    )  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "corrupt" in r.stderr
    r = nothing
    assert r.returncode == 0, r.stderr
    assert "already has 10 games" in r.stdout and len(r.stdout.strip().splitlines()) == 1
    assert good.read_bytes() == before and good.stat().st_mtime_ns == mtime
    assert len(list((tmp_path / "runs").iterdir())) == runs_before


SCRIPT_ARGUMENT_CASES = [
    ("evaluate.py", ["--batch", "0"]),
    ("evaluate.py", ["--games", "0"]),
    ("evaluate.py", ["--games", "-5"]),
    ("evaluate.py", ["--threads", "-1"]),
    ("evaluate.py", ["--positions", "tests/data/positions.txt", "--match-length", "5"]),
    ("evaluate.py", ["--positions", "tests/data/positions.txt", "--cube", "--beavers"]),
    ("train.py", ["--checkpoint-every", "0"]),
    ("train.py", ["--pool", "0"]),
    ("train.py", ["--batch-size", "0"]),
    ("train.py", ["--games", "-3"]),
    ("train.py", ["--threads", "-1"]),
    ("train.py", ["--lr", "0"]),
    ("train.py", ["--lr", "-1e-3"]),
    ("train.py", ["--lam", "1.5"]),
    ("train.py", ["--lam", "-0.1"]),
    ("train.py", ["--workers", "0"]),
    ("train.py", ["--seed", "-3"]),
    ("evaluate.py", ["--seed", "-5"]),
]


@pytest.fixture(scope="module")
def script_argument_runs(request, tmp_path_factory) -> dict:
    """The script runs of :func:`test_script_argument_checks`, all started at once (independent processes,
    each in an empty folder of its own; ``conftest.run_at_once``): ``{(script, argv): (folder, result)}``
    for the cases this session runs."""
    cases = []
    for item in request.session.items:
        if getattr(item, "originalname", None) == "test_script_argument_checks" and item.path == request.path:
            case = (item.callspec.params["script"], tuple(item.callspec.params["argv"]))
            if case not in cases:
                cases.append(case)
    folders = [tmp_path_factory.mktemp("argument-check") for _ in cases]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    results = run_at_once(
        [
            {"args": [sys.executable, str(REPO / script), *argv, "--no-progress"], "cwd": folder, "env": env}
            for (script, argv), folder in zip(cases, folders, strict=True)
        ]
    )
    return {case: (folder, r) for case, folder, r in zip(cases, folders, results, strict=True)}


@pytest.mark.parametrize("script, argv", SCRIPT_ARGUMENT_CASES)
def test_script_argument_checks(script_argument_runs, script, argv):
    folder, r = script_argument_runs[(script, tuple(argv))]  # run in `folder`, empty before it
    assert r.returncode == 2 and "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and argv[0] in errors[0], r.stderr
    assert not any(folder.iterdir()), "a file was written before the argument check"


def test_nard_hint_rejects_negative_top(tmp_path):
    r = run(["-m", "nard_ai.interfaces.cli", "hint", START_ID, "--dice", "3", "1", "--top", "-2"], tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--top" in r.stderr


def test_cli_uses_the_ascii_board_without_a_shim():
    # every command that draws a board (show, hint, eval, cube: one module each) imports the formats
    # layer's render_board itself, with no local copy or shim
    import inspect

    import nard_ai.interfaces.cli as cli
    from nard_ai.interfaces.commands import cube, eval, hint, show

    assert "SHIM" not in inspect.getsource(cli) and "_render_board" not in inspect.getsource(cli)
    for module in (show, hint, eval, cube):
        source = inspect.getsource(module)
        assert "SHIM" not in source and "_render_board" not in source
        assert "from nard_ai.formats.ascii import render_board" in source, module.__name__


def test_one_ply_self_play_trains_on_lookahead_targets_deterministically():
    """``ply=1`` self-play finishes its games, is seeded, and learns from other targets than 0-ply."""
    from nard_ai.play.selfplay import play_round

    def run(ply: int) -> tuple[Learner, object]:
        learner = Learner(small_network(5), lr=1e-2)
        stats = play_round(learner, 2, np.random.default_rng(3), pool=2, batch_size=32, ply=ply)
        return learner, stats

    (a, sa), (b, _), (c, _) = run(1), run(1), run(0)
    assert sa.games == 2 and sa.plies > 0 and sa.updates > 0
    for pa, pb in zip(a.network.parameters(), b.network.parameters(), strict=True):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    assert any(
        not torch.equal(pa, pc) for pa, pc in zip(a.network.parameters(), c.network.parameters(), strict=True)
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("pubeval:1", "pubeval has no lookahead"),
        ("random:2", "random has no lookahead"),
        # one message for every bad ply (nard_ai.core.ply.check_ply)
        ("default:-1", r"agent spec 'default:-1': ply must be an integer 0\.\.2 \(gnubg numbering\), got -1"),
        ("default:3", r"agent spec 'default:3': ply must be an integer 0\.\.2 \(gnubg numbering\), got 3"),
        ("default:x", r"agent spec 'default:x': ply must be an integer 0\.\.2 \(gnubg numbering\), got 'x'"),
        ("", "an agent spec must be"),
    ],
)
def test_agent_spec_errors_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        agent_from_spec(spec)
    with pytest.raises(ValueError, match=message):  # the same parse, the same errors
        checkpoint_of_spec(spec)


def test_checkpoint_of_spec_names_the_file_a_network_spec_loads():
    """``default[:PLY]`` is the default network's file (model.network.default_checkpoint_path), a
    ``PATH[:PLY]`` its path (a colon before a non-numeric tail is part of the path, as
    agent_from_spec reads it); pubeval, random and gnubg have no checkpoint."""
    from nard_ai.model.network import default_checkpoint_path

    assert checkpoint_of_spec("default") == checkpoint_of_spec("default:2") == Path(default_checkpoint_path())
    assert checkpoint_of_spec("runs/a.pt:1") == Path("runs/a.pt")
    assert checkpoint_of_spec("c:/nets/a.pt") == Path("c:/nets/a.pt")
    assert [checkpoint_of_spec(s) for s in ("pubeval", "random", "gnubg", "gnubg:2")] == [None] * 4


# ---------------------------------------------------------------- issue 15: truncated files, stale temporaries


def _small_checkpoint(tmp_path: Path) -> Path:
    torch.manual_seed(4)
    net = Network(NetworkConfig(hidden=(1,)))  # 8.5 kB with its optimizer state
    learner = Learner(net)
    learner.update(random_boards(np.random.default_rng(9), 16), np.full((16, 6), 1 / 6, dtype=np.float32))
    return save_checkpoint(tmp_path / "good.pt", net, optimizer=learner.optimizer, games_trained=5)


def test_a_truncated_checkpoint_always_says_corrupt_or_truncated(tmp_path):
    """Issue 15: about a third of the truncation points of a checkpoint made torch raise
    ``OSError: Invalid argument`` (a zip directory pointing past the end), reported as "cannot read
    the checkpoint: Invalid argument". The file is now read first and any failure of torch.load on
    its bytes is "corrupt or truncated": checked at every 11th cut of the file and its last 64."""
    good = _small_checkpoint(tmp_path)
    data = good.read_bytes()
    cut = tmp_path / "cut.pt"
    offsets = sorted({*range(0, len(data), 11), *range(len(data) - 64, len(data))})
    for offset in offsets:
        cut.write_bytes(data[:offset])
        with pytest.raises(ValueError) as info:
            load_checkpoint(cut)
        assert f"{cut}: not a readable nard_ai checkpoint (corrupt or truncated;" in str(info.value), offset


def test_a_missing_path_and_a_directory_are_told_apart(tmp_path):
    """A review found ``--checkpoint DIR`` reported as "no checkpoint at DIR": a directory is now named
    as one, a path that does not exist as before; both stay FileNotFoundError (one error line in the CLIs)."""
    folder = tmp_path / "dir.pt"
    folder.mkdir()
    with pytest.raises(FileNotFoundError, match=r"dir\.pt is a directory, not a checkpoint file$"):
        load_checkpoint(folder)
    with pytest.raises(FileNotFoundError, match=r"^no checkpoint at .*none\.pt$"):
        load_checkpoint(tmp_path / "none.pt")


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # torch's, on some damaged bytes
def test_damaged_bytes_give_a_value_error_or_the_same_weights(tmp_path):
    """A seeded fuzz of 300 damaged copies (1 to 8 random bytes overwritten): each is a ValueError
    naming the file, or, where the damage hit bytes torch never reads, loads the very same
    tensors (the digest checks them): never another exception, never other weights."""
    good = _small_checkpoint(tmp_path)
    data = good.read_bytes()
    expected = load_checkpoint(good).network.state_dict()
    rng = np.random.default_rng(15)
    bad = tmp_path / "bad.pt"
    for _ in range(300):
        damaged = bytearray(data)
        for at in rng.integers(0, len(data), size=int(rng.integers(1, 9))):
            damaged[at] = int(rng.integers(0, 256))
        bad.write_bytes(bytes(damaged))
        try:
            loaded = load_checkpoint(bad)
        except ValueError as exc:
            assert str(bad) in str(exc)
        else:
            state = loaded.network.state_dict()
            assert all(torch.equal(v, state[k]) for k, v in expected.items())


def _old(path: Path, seconds: float = 120.0) -> Path:
    stamp = path.stat().st_mtime - seconds
    os.utime(path, (stamp, stamp), follow_symlinks=False)
    return path


def test_stale_temporaries_of_the_same_checkpoint_are_removed_and_nothing_else(tmp_path):
    """Issue 15: a write killed by SIGKILL leaves ``.NAME.XXXXXXXX.tmp``. remove_stale_temporaries
    removes such a file of this checkpoint when it is unlocked and older than STALE_AFTER_S; it
    keeps a fresh one (a writer may not have locked it yet), one a live process holds locked,
    another checkpoint's, names that only look alike, a link and a folder."""
    from nard_ai.model.network import STALE_AFTER_S, remove_stale_temporaries

    path = tmp_path / "a.pt"
    stale = tmp_path / ".a.pt.k3j_9QzX.tmp"
    stale.write_bytes(b"half a checkpoint")
    _old(stale)
    fresh = tmp_path / ".a.pt.fresh123.tmp"
    fresh.write_bytes(b"x")
    kept = [fresh]
    for name in (".b.pt.k3j_9QzX.tmp", ".a.pt.short.tmp", "a.pt.k3j_9QzX.tmp", ".a.pt.k3j_9QzX.tmp.bak"):
        (tmp_path / name).write_bytes(b"not ours")
        kept.append(_old(tmp_path / name))
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    link = tmp_path / ".a.pt.linklink.tmp"
    link.symlink_to(target)
    kept.append(_old(link))
    folder = tmp_path / ".a.pt.folder00.tmp"
    folder.mkdir()
    kept.append(folder)
    locked = tmp_path / ".a.pt.lockedXX.tmp"
    locked.write_bytes(b"a live writer's")
    _old(locked)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'rb'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)", str(locked)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert remove_stale_temporaries(path) == [stale]
        assert not stale.exists() and locked.exists()
        assert all(p.exists() or p.is_symlink() for p in kept) and target.read_bytes() == b"keep me"
    finally:
        holder.kill()  # SIGKILL: the system drops its lock
        holder.wait()
    assert remove_stale_temporaries(path) == [locked]
    assert STALE_AFTER_S <= 60 and fresh.exists()
    _old(fresh)
    save_checkpoint(path, small_network())  # every save removes the stale ones too
    assert not fresh.exists() and load_checkpoint(path).games_trained == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".a.pt.")) == [
        ".a.pt.folder00.tmp", ".a.pt.k3j_9QzX.tmp.bak", ".a.pt.linklink.tmp", ".a.pt.short.tmp"
    ]  # fmt: skip


def test_a_write_killed_by_sigkill_leaves_an_unlocked_temporary_that_is_then_removed(tmp_path):
    """A process killed in the middle of save_checkpoint (torch.save stopped half-way) leaves its
    temporary file and the previous checkpoint whole; the killed writer's lock is gone, so once
    the file is older than STALE_AFTER_S the next cleanup removes it."""
    from nard_ai.model.network import remove_stale_temporaries

    path = save_checkpoint(tmp_path / "a.pt", small_network(), games_trained=1)
    script = (
        "import sys, time, torch\n"
        "from nard_ai.model.network import save_checkpoint\n"
        "from tests.test_learning import small_network\n"
        "def half(obj, f, *a, **k):\n"
        "    f.write(b'PK' + bytes(1000)); f.flush(); print('writing', flush=True); time.sleep(60)\n"
        "torch.save = half\n"
        "save_checkpoint(sys.argv[1], small_network(), games_trained=2)\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        assert writer.stdout.readline().strip() == "writing"
        (tmp,) = tmp_path.glob(".a.pt.*.tmp")
        _old(tmp)
        assert remove_stale_temporaries(path) == []  # the writer is alive and holds its lock
    finally:
        writer.kill()
        writer.wait()
    assert tmp.exists() and load_checkpoint(path).games_trained == 1
    assert remove_stale_temporaries(path) == [tmp] and not tmp.exists()
