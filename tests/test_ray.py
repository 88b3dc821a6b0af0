"""The Ray backend (nard_ai.distributed): the same numbers as one process, nothing lost or doubled.

The tests that need Ray start a local cluster of 2 CPUs themselves (module fixture) and are
skipped with the reason when the optional ``ray`` package is missing (``pip install
'nard_ai[ray]'``). The expected values come from the local path itself: a shard is a pure
function of its task, so the Ray run must give exactly (``==``, bit for bit) what
:class:`~nard_ai.distributed.LocalExecutor` or the unsharded function gives.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from nard_ai.core.board import starting_board
from nard_ai.distributed import LocalExecutor, make_executor, shard_ranges
from nard_ai.play.rollout import rollout

ROOT = Path(__file__).resolve().parent.parent
needs_ray = pytest.mark.skipif(
    find_spec("ray") is None, reason="the optional ray package is not installed (pip install 'nard_ai[ray]')"
)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster of 2 CPUs for the module; workers import this checkout's nard_ai."""
    import ray

    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([saved] if saved else []))
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    # the test module's own shard functions go to the workers by value (they cannot import tests/)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


@pytest.fixture(scope="module")
def agent():
    from nard_ai.search.loading import default_agent

    return default_agent(0)


# --------------------------------------------------------------------------- without Ray


def test_the_local_path_never_imports_ray():
    """``nard rollout`` and a sharded match without --ray load no Ray module (a fresh interpreter)."""
    code = (
        "import sys\n"
        "from nard_ai.interfaces.cli import main\n"
        "assert main(['rollout', '4HPwATDgc/ABMA', '--games', '4', '--truncate', '2', '--json']) == 0\n"
        "from nard_ai.agents import agent_from_spec\n"
        "from nard_ai.distributed import LocalExecutor\n"
        "from nard_ai.play.arena import play_match\n"
        "p = agent_from_spec('pubeval')\n"
        "play_match(p, p, 4, executor=LocalExecutor(), shard_games=2)\n"
        "bad = sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))\n"
        "assert not bad, bad\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_a_local_executor_with_the_lockstep_block_size_gives_the_rollout_bit_for_bit(agent):
    # one shard of CHUNK_GAMES (the default shard size) is the lockstep's own block
    board = starting_board()
    plain = rollout(board, 90, seed=5, agent=agent, truncate=6, threads=1)  # LocalExecutor's default threads
    sharded = rollout(board, 90, seed=5, agent=agent, truncate=6, executor=LocalExecutor())
    assert np.array_equal(plain.probs, sharded.probs) and np.array_equal(plain.probs_ci, sharded.probs_ci)
    assert (plain.equity, plain.equity_ci, plain.truncated) == (sharded.equity, sharded.equity_ci, 90)


def test_shard_ranges_cut_every_shard_and_keep_the_rest():
    assert shard_ranges(10, 4) == [(0, 4), (4, 4), (8, 2)]
    with pytest.raises(ValueError, match="multiple of 2"):
        shard_ranges(10, 3, multiple=2)
    with pytest.raises(ValueError, match="total must be"):
        shard_ranges(0, 3)


def test_bad_executor_settings_are_rejected_with_the_field_named():
    with pytest.raises(ValueError, match="threads must be"):
        LocalExecutor(threads=0)
    with pytest.raises(ValueError, match="ray address must be a string"):
        make_executor(5)
    with pytest.raises(ValueError, match="shard_games must be"):
        rollout(starting_board(), 4, shard_games=0)
    from nard_ai.agents import agent_from_spec
    from nard_ai.play.arena import play_match

    p = agent_from_spec("pubeval")
    with pytest.raises(ValueError, match="shard_games must be even"):
        play_match(p, p, 4, executor=LocalExecutor(), shard_games=3)


def test_the_cli_rejects_a_bad_shard_size_with_status_2():
    from nard_ai.interfaces.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["rollout", "4HPwATDgc/ABMA", "--shard-games", "0"])
    assert exc.value.code == 2


# --------------------------------------------------------------------------- on a local Ray cluster


@needs_ray
def test_a_rollout_gives_the_same_numbers_on_ray_and_locally(ray_cluster, agent):
    from nard_ai.distributed import RayExecutor

    board = starting_board()
    kw = dict(seed=7, agent=agent, truncate=8, shard_games=40)
    local = rollout(board, 150, executor=LocalExecutor(), **kw)  # shards 40, 40, 40, 30
    with RayExecutor() as ray_exec:
        on_ray = rollout(board, 150, executor=ray_exec, **kw)
        assert len(ray_exec.shard_seconds) == 4
    assert np.array_equal(local.probs, on_ray.probs) and np.array_equal(local.probs_ci, on_ray.probs_ci)
    assert (local.equity, local.equity_ci, local.games, local.truncated, local.mean_plies) == (
        on_ray.equity,
        on_ray.equity_ci,
        on_ray.games,
        on_ray.truncated,
        on_ray.mean_plies,
    )


@needs_ray
def test_a_match_gives_the_same_points_on_ray_as_unsharded(ray_cluster, agent):
    from nard_ai.agents import agent_from_spec
    from nard_ai.distributed import RayExecutor
    from nard_ai.play.arena import play_match

    pubeval = agent_from_spec("pubeval")
    plain = play_match(agent, pubeval, 30, seed=3, batch=8)  # no shards at all
    with RayExecutor() as ray_exec:
        on_ray = play_match(agent, pubeval, 30, seed=3, batch=8, executor=ray_exec, shard_games=8)
    assert np.array_equal(plain.points, on_ray.points) and plain.plies == on_ray.plies


def _square_or_die(marker_dir: str, task: int) -> int:
    """A shard that kills its own worker process (SIGKILL) the first time it runs task 2."""
    marker = Path(marker_dir) / f"ran-{task}-{os.getpid()}-{time.monotonic_ns()}"
    marker.write_text("")
    if task == 2 and not (Path(marker_dir) / "killed").exists():
        (Path(marker_dir) / "killed").write_text("")
        os.kill(os.getpid(), signal.SIGKILL)
    return task * task


@needs_ray
def test_a_killed_worker_loses_nothing_and_counts_nothing_twice(ray_cluster, tmp_path):
    from nard_ai.distributed import RayExecutor

    seen: list[int] = []
    with RayExecutor(max_retries=2) as ray_exec:
        out = ray_exec.map(
            _square_or_die, list(range(6)), shared=str(tmp_path), on_result=lambda i, r: seen.append(i)
        )
    assert out == [0, 1, 4, 9, 16, 25]  # every shard's own value, in task order
    assert sorted(seen) == list(range(6))  # each index reported exactly once
    runs = [p.name.split("-")[1] for p in tmp_path.glob("ran-*")]
    assert runs.count("2") == 2 and (tmp_path / "killed").exists()  # task 2 died once and was retried


def _labels(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("labels-*"))}


@pytest.fixture(scope="module")
def position_set(tmp_path_factory):
    """A 48-position set in shards of 6 (8 shards), from the shipped network (seed 11)."""
    from nard_ai.eval.evaluator import NetworkEvaluator
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.training.positions import generate_positions, write_position_set

    folder = tmp_path_factory.mktemp("positions")
    network = default_checkpoint_path()
    ps = generate_positions(NetworkEvaluator(load_checkpoint(network).network), 48, 11, pool=32)
    write_position_set(folder, ps, shard_size=6, extra={"network": {"path": str(network)}})
    return folder


@needs_ray
def test_labelling_writes_the_same_files_on_ray_and_locally(ray_cluster, position_set, tmp_path):
    from nard_ai.distributed import RayExecutor
    from nard_ai.training.labels import make_plan, run_labels

    plan = make_plan("1ply", None)
    run_labels(position_set, tmp_path / "local", plan, seed=2, workers=1, progress=False)
    with RayExecutor() as ray_exec:
        summary = run_labels(position_set, tmp_path / "ray", plan, seed=2, progress=False, executor=ray_exec)
    assert summary["done"] == 8 and summary["rows"] == 48
    local, on_ray = _labels(tmp_path / "local"), _labels(tmp_path / "ray")
    assert len(local) == 16 and local == on_ray  # 8 CSVs + 8 sidecars, byte for byte


@needs_ray
def test_a_driver_killed_with_sigkill_resumes_and_finishes_the_same_labels(
    ray_cluster, position_set, tmp_path
):
    from nard_ai.training.labels import make_plan, run_labels

    plan = make_plan("rollout", None, games=36, play_ply=0, truncate=4)
    run_labels(position_set, tmp_path / "local", plan, seed=4, workers=1, progress=False)
    out = tmp_path / "ray"
    cmd = [
        sys.executable, "-m", "nard_ai.training", "label", "--positions", str(position_set),
        "--out", str(out), "--method", "rollout", "--games", "36", "--truncate", "4", "--seed", "4",
        "--no-progress", "--ray", ray_cluster,
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    driver = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600  # a loaded 2-core machine takes minutes to start a Ray driver
    while not list(out.glob("labels-*.json")) and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.05)
    driver.send_signal(signal.SIGKILL)  # the driver dies mid-run, without a chance to clean up
    driver.wait(timeout=30)
    done_before = len(list(out.glob("labels-*.json")))
    assert 1 <= done_before < 8, (
        f"the kill must land mid-run: {done_before} of 8 shards done; driver stderr: "
        f"{driver.stderr.read().decode(errors='replace')[-2000:]}"
    )
    rerun = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    # "N shards labelled (...), M already complete, 8 in all": the rerun only does what was missing
    labelled, skipped = map(
        int, re.search(r"(\d+) shards labelled .*, (\d+) already complete", rerun.stdout).groups()
    )
    assert skipped >= done_before and labelled + skipped == 8
    assert _labels(out) == _labels(tmp_path / "local")  # the resumed run = one uninterrupted run


def test_evaluate_refuses_ray_for_a_workload_that_is_not_sharded():
    # --make-cases samples one self-play run: a usage error (exit 2) before any Ray start
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run(
        [sys.executable, "evaluate.py", "--make-cases", "x.txt", "--ray", "local"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert "argument --ray: --make-cases does not run on Ray" in run.stderr


def _session_figures(result):
    log = result.log
    return [getattr(log, f) for f in ("unit", "game", "points", "cube_value", "cube_owner", "passed", "plies")] + [
        result.stats_a, result.stats_b, result.plies
    ]  # fmt: skip


@needs_ray
def test_cube_sessions_and_matches_in_shards_are_the_same_on_ray_and_locally(ray_cluster, agent):
    from nard_ai.agents import agent_from_spec
    from nard_ai.distributed import RayExecutor
    from nard_ai.play.sessions import play_matches, play_money_session

    pubeval = agent_from_spec("pubeval")
    with RayExecutor() as ray_exec:
        for run in (
            lambda ex: play_money_session(agent, pubeval, 24, seed=3, executor=ex, shard_games=8),
            lambda ex: play_matches(agent, pubeval, 8, 3, seed=3, executor=ex, shard_matches=4),
        ):
            local, on_ray = run(LocalExecutor()), run(ray_exec)
            for a, b in zip(_session_figures(local), _session_figures(on_ray), strict=True):
                if isinstance(a, np.ndarray):
                    np.testing.assert_array_equal(a, b)
                    assert a.dtype == b.dtype
                else:
                    assert a == b  # the cube statistics and the plies
    # the money session's points by game are the unsharded session's: a game's dice depend on its number
    plain = play_money_session(pubeval, pubeval, 24, seed=3)
    sharded = play_money_session(pubeval, pubeval, 24, seed=3, executor=LocalExecutor(), shard_games=8)
    np.testing.assert_array_equal(plain.points, sharded.points)
    assert plain.plies == sharded.plies and sorted(plain.log.unit) == sorted(sharded.log.unit)


def test_a_session_shard_size_must_be_even():
    from nard_ai.agents import agent_from_spec
    from nard_ai.play.sessions import play_matches, play_money_session

    p = agent_from_spec("pubeval")
    with pytest.raises(ValueError, match="shard_games must be an even integer >= 2"):
        play_money_session(p, p, 4, executor=LocalExecutor(), shard_games=3)
    with pytest.raises(ValueError, match="shard_matches must be an even integer >= 2"):
        play_matches(p, p, 4, 3, executor=LocalExecutor(), shard_matches=0)


# --------------------------------------------------------------------------- TD self-play on Ray actors


def _td_learner():
    import torch

    from nard_ai.model.learn import Learner
    from nard_ai.model.network import Network, NetworkConfig

    torch.manual_seed(0)
    return Learner(Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True)), lr=1e-3)


def _same_weights(a, b) -> bool:
    import torch

    return all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))


TD_ROUND = {"pool": 16, "workers": 2, "batch_size": 32}  # 24 games: about a dozen epochs of 4 plies


@needs_ray
def test_a_td_round_on_ray_actors_gives_the_threads_weights_bit_for_bit(ray_cluster):
    from nard_ai.distributed import RayExecutor, RayShardRunner
    from nard_ai.play.selfplay import play_round

    threads = _td_learner()
    expected = play_round(threads, 24, np.random.default_rng(5), **TD_ROUND)
    on_ray = _td_learner()
    runner = RayShardRunner(RayExecutor())
    got = play_round(on_ray, 24, np.random.default_rng(5), runner=runner, **TD_ROUND)
    assert _same_weights(threads.network, on_ray.network)
    assert (got.games, got.plies, got.updates, got.loss_sum) == (
        expected.games, expected.plies, expected.updates, expected.loss_sum
    )  # fmt: skip
    assert got.games == 24 and len(runner.actors) == 2  # kept for the next round
    again = play_round(threads, 24, np.random.default_rng(6), **TD_ROUND)
    again_ray = play_round(on_ray, 24, np.random.default_rng(6), runner=runner, **TD_ROUND)
    assert _same_weights(threads.network, on_ray.network) and again.plies == again_ray.plies
    runner.shutdown()
    assert runner.actors == []
    # new weights go to the object store once per epoch that trained, never per actor
    assert 1 <= runner.weight_puts < got.plies


class _KillingRunner:
    """A RayShardRunner that kills its first actor before the 16th epoch of its first round (64 plies: games have finished)."""

    def __init__(self):
        from nard_ai.distributed import RayExecutor, RayShardRunner

        self.inner = RayShardRunner(RayExecutor())
        self.opens = self.epochs = 0

    def open(self, shards, network):
        self.opens += 1
        self.inner.open(shards, network)

    def epoch(self, indices, plies, train):
        import ray

        self.epochs += 1
        if self.opens == 1 and self.epochs == 16:
            ray.kill(self.inner.actors[indices[0]])
        return self.inner.epoch(indices, plies, train)

    def close(self):
        self.inner.close()

    def shutdown(self):
        self.inner.shutdown()


@needs_ray
def test_a_killed_self_play_actor_replays_the_round_losing_and_doubling_nothing(ray_cluster):
    from nard_ai.play.selfplay import play_round

    threads = _td_learner()
    expected = play_round(threads, 24, np.random.default_rng(5), **TD_ROUND)
    on_ray, runner, told = _td_learner(), _KillingRunner(), []
    got = play_round(on_ray, 24, np.random.default_rng(5), runner=runner, on_games=told.append, **TD_ROUND)
    assert runner.opens == 2  # the round was played again from its start, with fresh actors
    assert sum(told) == 24 and any(n < 0 for n in told)  # the first attempt's games were taken back
    assert got.games == expected.games == 24 and got.updates == expected.updates
    assert _same_weights(threads.network, on_ray.network)
    runner.shutdown()


def _train_cmd(checkpoint: Path, *extra: str) -> list[str]:
    return [
        sys.executable, str(ROOT / "train.py"), "--checkpoint", str(checkpoint), "--games", "60",
        "--checkpoint-every", "10", "--pool", "8", "--workers", "2", "--hidden", "8", "--batch-size", "16",
        "--eval-every", "0", "--no-progress", "--seed", "3", *extra,
    ]  # fmt: skip


@needs_ray
def test_train_py_on_ray_killed_with_sigkill_resumes_to_the_threads_weights(ray_cluster, tmp_path):
    from nard_ai.model.network import load_checkpoint

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT)
    local = subprocess.run(
        _train_cmd(tmp_path / "threads.pt"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert local.returncode == 0, local.stderr[-2000:]
    path = tmp_path / "ray.pt"
    driver = subprocess.Popen(
        _train_cmd(path, "--ray", ray_cluster), cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    while not path.exists() and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.05)
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    trained = load_checkpoint(path).games_trained if path.exists() else 0
    assert 10 <= trained < 60, (
        f"the kill must land mid-run: {trained} of 60 games saved; driver stderr: "
        f"{driver.stderr.read().decode(errors='replace')[-2000:]}"
    )
    resumed = subprocess.run(
        _train_cmd(path, "--ray", ray_cluster, "--resume"), cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    a, b = load_checkpoint(tmp_path / "threads.pt"), load_checkpoint(path)
    assert a.games_trained == b.games_trained == 60
    assert _same_weights(a.network, b.network)  # killed, resumed, on Ray = one run in threads
    # the driver wrote TensorBoard as without Ray: one run folder per start, each with its event file
    event_files = list((tmp_path / "runs").glob("*/events.out.tfevents.*"))
    assert len(event_files) == 3  # the threads run, the killed Ray run and the resumed one


def test_train_py_refuses_ray_with_one_worker_or_supervised(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT)
    from conftest import run_at_once

    # the two refused runs are independent: at once (conftest.run_at_once)
    one, sup = run_at_once(
        [
            {"args": _train_cmd(tmp_path / "x.pt", "--ray", "local", "--workers", "1"), "cwd": tmp_path, "env": env,
             "timeout": 300},
            {"args": [sys.executable, str(ROOT / "train.py"), "--supervised", str(tmp_path), "--ray", "local"],
             "cwd": tmp_path, "env": env, "timeout": 300},
        ]
    )  # fmt: skip
    assert one.returncode == 2 and "--ray: needs --workers >= 2" in one.stderr
    assert sup.returncode == 2 and "label --ray" in sup.stderr
    assert not (tmp_path / "x.pt").exists()


# --------------------------------------------------------------------------- position generation in game shards


def _sharded_set(executor):
    from nard_ai.eval.evaluator import NetworkEvaluator
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.training.positions import generate_positions

    evaluator = NetworkEvaluator(load_checkpoint(default_checkpoint_path()).network)
    return generate_positions(evaluator, 60, 11, pool=16, shard_games=6, executor=executor)


@needs_ray
def test_a_position_set_in_game_shards_is_the_same_on_ray_and_locally(ray_cluster):
    from nard_ai.distributed import RayExecutor

    local = _sharded_set(LocalExecutor())  # waves of 2 shards
    with RayExecutor() as ray_exec:
        on_ray = _sharded_set(ray_exec)  # waves of 4: the set must not depend on it
    assert len(local) == 60 and not local.info["shortfall"]
    np.testing.assert_array_equal(local.boards, on_ray.boards)
    np.testing.assert_array_equal(local.classes, on_ray.classes)
    assert local.info == on_ray.info and local.info["settings"]["shard_games"] == 6
    # only the shards up to the one that filled every class count: a multiple of 6 games
    assert local.info["games_started"] % 6 == 0


@needs_ray
def test_more_self_play_shards_than_cluster_cpus_is_refused_not_a_hang(ray_cluster):
    from nard_ai.distributed import RayExecutor, RayShardRunner
    from nard_ai.play.selfplay import play_round

    runner = RayShardRunner(RayExecutor())  # the module's cluster: 2 CPUs
    with pytest.raises(ValueError, match="3 self-play shards need as many CPUs.*has 2"):
        play_round(_td_learner(), 6, np.random.default_rng(1), pool=6, workers=3, runner=runner)


# --------------------------------------------------------------------------- error rates in case shards


@pytest.fixture(scope="module")
def cases():
    from nard_ai.agents import agent_from_spec
    from nard_ai.reports.error_rate import sample_cases

    return sample_cases(40, agent_from_spec("pubeval"), seed=3)


def _figures(result):
    return (result.lost, result.best, result.chosen, result.plays)


@needs_ray
@pytest.mark.parametrize("referee_spec", ["default", "gnubg:0"])
def test_an_error_rate_in_case_shards_is_the_unsharded_one_on_ray_and_locally(
    ray_cluster, cases, referee_spec
):
    from nard_ai.agents import agent_from_spec
    from nard_ai.distributed import RayExecutor
    from nard_ai.reports.error_rate import error_rate

    if referee_spec.startswith("gnubg") and find_spec("gnubg") is None:
        pytest.skip("the gnubg module is not installed (pip install gnubg)")
    agent, referee = agent_from_spec("pubeval"), agent_from_spec(referee_spec)
    boards, dice = cases
    plain = error_rate(agent, referee, boards, dice, batch=8)
    local = error_rate(agent, referee, boards, dice, batch=8, executor=LocalExecutor(), shard_cases=16)
    seen: list[int] = []
    with RayExecutor() as ray_exec:
        on_ray = error_rate(
            agent, referee, boards, dice, batch=8, executor=ray_exec, shard_cases=16, progress=seen.append
        )
    for a, b, c in zip(_figures(plain), _figures(local), _figures(on_ray), strict=True):
        if referee_spec == "default":
            np.testing.assert_array_equal(b, c)  # the same shards on one thread: bit for bit
        else:
            # gnubg's own evaluation differs in the last float bits from one process to another
            # (up to 7e-7 measured, the same cases, the same ply): close, not identical
            np.testing.assert_allclose(b, c, rtol=0, atol=2e-6)
        # the unsharded run used this process's threads: torch's sums may differ in the last bits
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    assert len(plain.lost) == 40 and plain.plays.dtype == on_ray.plays.dtype == np.int64
    assert seen[-1] == 40 and sorted(seen) == seen  # 16, 32, 40 cases judged, whatever the order


def test_an_illegal_play_is_named_by_its_case_number_in_a_shard(cases):
    from nard_ai.agents import agent_from_spec
    from nard_ai.reports.error_rate import error_rate

    boards, dice = cases
    pubeval, referee = agent_from_spec("pubeval"), agent_from_spec("default")

    # a case past the first shard whose position no other case has
    bad_case = next(i for i in range(9, len(boards)) if (boards == boards[i]).all(axis=1).sum() == 1)

    class OneBadPlay:
        """pubeval's plays, except that in that case's position it does not move at all."""

        name = "one-bad-play"

        def choose_plays(self, b, d):
            out = np.array(pubeval.choose_plays(b, d))
            bad = (b == boards[bad_case]).all(axis=1)
            out[bad] = b[bad]
            return out

    for executor in (None, LocalExecutor()):
        with pytest.raises(ValueError, match=f"^case {bad_case}: the agent's play is not a legal play"):
            error_rate(OneBadPlay(), referee, boards, dice, batch=8, executor=executor, shard_cases=8)


@needs_ray
def test_self_play_actors_that_cannot_start_are_a_timeout_error_not_a_hang(ray_cluster):
    import ray

    from nard_ai.distributed import RayExecutor, RayShardRunner
    from nard_ai.play.selfplay import play_round

    @ray.remote(num_cpus=1)
    class Busy:
        def ready(self):
            return True

    hogs = [Busy.remote() for _ in range(2)]  # other work holds both CPUs of the cluster
    try:
        ray.get([h.ready.remote() for h in hogs])
        runner = RayShardRunner(RayExecutor(), start_timeout=3)
        t0 = time.monotonic()
        with pytest.raises(TimeoutError, match="did not all start within 3 s.*0 of 2 free"):
            play_round(_td_learner(), 6, np.random.default_rng(1), pool=6, workers=2, runner=runner)
        assert time.monotonic() - t0 < 60 and runner.actors == []
    finally:
        for h in hogs:
            ray.kill(h)


# --------------------------------------------------------------------------- connecting: silent addresses, other code


def test_an_address_where_nothing_listens_is_an_error_in_seconds_not_a_hang():
    from nard_ai.distributed.executor import PROBE_TIMEOUT

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT)
    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        t0 = time.monotonic()
        run = subprocess.run(
            [sys.executable, "-c", "import sys; from nard_ai.interfaces.cli import main; sys.exit(main(sys.argv[1:]))",
             "rollout", "4HPwATDgc/ABMA", "--games", "4", "--ray", f"127.0.0.1:{port}", "--no-progress"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert run.returncode == 2, run.stderr[-2000:]
    assert f"no Ray cluster at 127.0.0.1:{port}: nothing answered" in run.stderr
    assert time.monotonic() - t0 < 60 + PROBE_TIMEOUT


@needs_ray
def test_a_cluster_whose_workers_import_other_nard_ai_code_is_refused(tmp_path):
    import shutil

    other = tmp_path / "other"
    shutil.copytree(ROOT / "nard_ai", other / "nard_ai", ignore=shutil.ignore_patterns("__pycache__"))
    with (other / "nard_ai" / "core" / "board.py").open("a") as f:
        f.write("\n# a stale install on one node\n")
    code = (
        "import ray\n"
        "from nard_ai.distributed import RayExecutor\n"
        f"ray.init(address='local', num_cpus=1, include_dashboard=False, log_to_driver=False,\n"
        f"         runtime_env={{'env_vars': {{'PYTHONPATH': {str(other)!r}}}}})\n"
        "try:\n"
        "    RayExecutor()\n"
        "except ValueError as exc:\n"
        "    print('REFUSED', exc)\n"
        "ray.shutdown()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert "REFUSED Ray node" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert str(other / "nard_ai") in run.stdout and "than this driver" in run.stdout


def test_evaluate_shard_sizes_are_checked_where_they_apply(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT)

    def run(*argv):
        return subprocess.run(
            [sys.executable, str(ROOT / "evaluate.py"), *argv], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    odd = run("--games", "4", "--shard-games", "7")  # a match: duplicate pairs stay in one shard
    assert odd.returncode == 2 and "--shard-games: must be even for a match or session" in odd.stderr
    stray = run("--games", "4", "--shard-cases", "100")
    assert stray.returncode == 2 and "argument --shard-cases: goes with --error-rate" in stray.stderr
    zero = run("--error-rate", "x.txt", "--shard-cases", "0")
    assert zero.returncode == 2 and "argument --shard-cases: must be >= 1" in zero.stderr


def test_an_address_where_another_program_answers_is_an_error_in_seconds(tmp_path):
    from nard_ai.distributed.executor import _probe

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # wait for it to listen
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        t0 = time.monotonic()
        with pytest.raises(
            ConnectionError, match="something answers on 127.0.0.1:.*but not as Ray's gRPC server"
        ):
            _probe(f"127.0.0.1:{port}")  # an HTTP/1 server: Ray itself would retry it without end
        assert time.monotonic() - t0 < 10
    finally:
        server.kill()
        server.wait()


@needs_ray
def test_a_real_cluster_passes_the_address_probe(ray_cluster):
    from nard_ai.distributed.executor import _probe

    _probe(ray_cluster)  # the module cluster's GCS answers HTTP/2's preface as gRPC does
