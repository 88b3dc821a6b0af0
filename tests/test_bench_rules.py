"""``python -m nard_ai.bench --part rules``: the rules-core benchmark's figures and their keys.

The issue's interface (rules-core issue, section 6): ``--json`` prints one
JSON object with ``afterstates_per_s``, ``random_games_per_s`` and
``gnubg_afterstates_per_s``; figures at batch sizes 1, 256 and 4096. The
figures themselves are machine-dependent and not asserted, only that each is
a measured positive rate and that the games counted were really played.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nard_ai import bench


def test_compiled_games_per_s_plays_whole_calls_of_batch_games(monkeypatch):
    """``compiled_games_per_s(batch, n)`` calls ``random_games(batch)`` once untimed (the warm-up, at the
    same batch size), then ceil(n / batch) times per run, and divides the games played by the time."""
    calls = []
    real = bench.random_games

    def counting(n, rng, *args):
        calls.append(n)
        return real(n, rng, *args)

    monkeypatch.setattr(bench, "random_games", counting)
    rate = bench.compiled_games_per_s(batch=5, n_games=12, seed=0, repeats=2)
    assert calls == [5] + [5, 5, 5] * 2  # the warm-up, then 3 calls of 5 games (15 >= 12) in each of 2 runs
    assert rate > 0


def test_rules_part_prints_the_issue_keys_as_json(capsys):
    """Tiny sizes: every batch size has a positive afterstates/s and random games/s figure (compiled and
    lockstep); the gnubg figure is a rate when gnubg-nn is installed, else null."""
    assert (
        bench.main(["--json", "--part", "rules", "--positions", "600", "--games", "16", "--repeats", "1"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    for key in (
        "afterstates_per_s",
        "afterstates_per_s_unsorted",
        "random_games_per_s",
        "random_games_per_s_lockstep",
    ):
        assert set(result[key]) == {"1", "256", "4096"}, key
        assert all(np.isfinite(v) and v > 0 for v in result[key].values()), key
    gnubg = result["gnubg_afterstates_per_s"]
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        assert gnubg is None
    else:
        assert gnubg > 0
        assert result["ratio_vs_gnubg"]["256"] == pytest.approx(result["afterstates_per_s"]["256"] / gnubg)
    assert result["cold_start_s"] > 0


def test_rules_table_names_both_random_game_columns():
    """The plain-text table shows the compiled and the lockstep random-games figures side by side."""
    figures = {"1": 1.0, "256": 2.0, "4096": 3.0}
    result = {
        "machine": {"threads": 2},
        "afterstates_per_s": figures,
        "afterstates_per_s_unsorted": figures,
        "random_games_per_s": {"1": 10.0, "256": 12_345.0, "4096": 23_456.0},
        "random_games_per_s_lockstep": {"1": 5.0, "256": 1_111.0, "4096": 2_222.0},
        "gnubg_afterstates_per_s": None,
        "cold_start_s": 0.4,
        "cold_start_scipy_loaded": False,
    }
    table = bench.format_table(result)
    assert "lockstep API" in table
    row = next(line for line in table.splitlines() if line.split()[:1] == ["256"])
    assert "12,345" in row and "1,111" in row


def test_the_networks_part_compares_a_checkpoint_with_the_shipped_network(capsys):
    """``--part networks --network PATH``: the default network is the baseline (ratio 1.00x) and the
    given checkpoint (the shipped td198 network: 198 inputs, 80 hidden) gets its three figures
    (evaluation, 1-ply move, self-play) and its shape."""
    from nard_ai.model.network import default_checkpoint_path

    small = default_checkpoint_path().with_name("nard-td198.pt")
    assert bench.main(["--part", "networks", "--network", str(small), "--repeats", "1",
                       "--search-positions", "2", "--json"]) == 0  # fmt: skip
    nets = json.loads(capsys.readouterr().out)["networks"]
    assert nets["baseline"] == str(default_checkpoint_path())
    assert set(nets["figures"]) == {str(default_checkpoint_path()), str(small)}
    f = nets["figures"][str(small)]
    assert f["hidden"] == [80] and f["encoder"] == "td198@1"
    assert all(f[k] > 0 for k in ("eval_boards_per_s", "ply1_ms", "selfplay_games_per_s"))
    assert "1.00x" in bench.format_table({"networks": nets})


# --------------------------------------------------------------------------- bad input


def _refusal(argv, monkeypatch, capsys) -> str:
    """The one error line ``main(argv)`` exits with (status 2), checked to come before any benchmark runs."""
    ran = []
    monkeypatch.setattr(bench, "run_benchmarks", lambda *a, **k: ran.append(a) or {})
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and not ran
    assert err[-1].startswith("python -m nard_ai.bench: error: ") and "Traceback" not in "".join(err)
    return err[-1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # numpy refuses a negative seed and one >= 2**64; rollouts take seed + round < 2**64: 0 .. 2**63 - 1
        (["--seed", "-1"], "argument --seed: must be >= 0, got -1"),
        (["--seed", str(2**64)], f"argument --seed: must be <= {2**63 - 1}, got {2**64}"),
        (["--seed", str(2**63)], f"argument --seed: must be <= {2**63 - 1}, got {2**63}"),
        (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
        (["--positions", "0"], "argument --positions: must be >= 1, got 0"),
        (["--positions", "1000001"], "argument --positions: must be <= 1000000, got 1000001"),
        (["--games", "-3"], "argument --games: must be >= 1, got -3"),
        (["--games", str(10**20)], f"argument --games: must be <= 1000000, got {10**20}"),
        (["--repeats", "0"], "argument --repeats: must be >= 1, got 0"),
        (["--repeats", "101"], "argument --repeats: must be <= 100, got 101"),
        (["--search-positions", "0"], "argument --search-positions: must be >= 1, got 0"),
        (["--search-positions", "10001"], "argument --search-positions: must be <= 10000, got 10001"),
        (["--positions", "1.5"], "argument --positions: invalid int value: '1.5'"),
    ],
)
def test_bad_numbers_are_one_error_line_and_status_2_before_any_work(argv, message, monkeypatch, capsys):
    """Issue: ``--seed -1`` ended in numpy's traceback (status 1). Every number is checked by argparse
    against its range (``--help``) before any benchmark starts."""
    assert _refusal(["--part", "rules", *argv], monkeypatch, capsys).endswith(message)


@pytest.mark.parametrize("part", ["networks", "rollout"])
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_an_unreadable_network_is_one_error_line_and_status_2_before_any_work(
    part, damage, tmp_path, monkeypatch, capsys
):
    """Issue: a --network file of garbage, or a checkpoint cut short, ended in a traceback of
    ``load_checkpoint``'s ValueError (status 1); now that message, which names the file, is the error line."""
    from nard_ai.model.network import default_checkpoint_path

    bad = tmp_path / "bad.pt"
    whole = default_checkpoint_path().with_name("nard-td198.pt").read_bytes()
    bad.write_bytes(b"garbage\n" if damage == "garbage" else whole[: len(whole) // 2])
    line = _refusal(["--part", part, "--network", str(bad)], monkeypatch, capsys)
    assert f"--network: {bad}: not a readable nard_ai checkpoint (corrupt or truncated" in line


def test_a_network_given_twice_is_refused(monkeypatch, capsys):
    """The figures are keyed by network: a second copy of one (the same file by another path) would
    silently replace the first. The default network given twice is refused alike."""
    from nard_ai.model.network import default_checkpoint_path

    small = default_checkpoint_path().with_name("nard-td198.pt")
    again = small.parent / ".." / small.parent.name / small.name
    line = _refusal(
        ["--part", "rollout", "--network", str(small), "--network", str(again)], monkeypatch, capsys
    )
    assert line.endswith(f"--network {again}: given twice")
    default = default_checkpoint_path()
    line = _refusal(
        ["--part", "networks", "--network", str(default), "--network", str(default)], monkeypatch, capsys
    )
    assert line == f"python -m nard_ai.bench: error: --network {default}: given twice"


# --------------------------------------------------------------------------- the default network again


def test_the_default_network_named_by_network_is_measured_again_as_the_noise_floor(monkeypatch, capsys):
    """Issue: ``--network checkpoints/nard-expert.pt`` was refused (the default is always the baseline), which
    ruled out measuring the machine's noise floor, the default against itself. Now ``--part networks`` loads
    the file a second time and measures it as another network, named by its path and "the default again:
    noise floor" (even given as the very path string of the baseline, the two stay apart). Timing is faked
    (each evaluation pass 1 s for 3,000 boards, 2 ms a move, 500 self-play games in 2 s), so the lines are
    exact; both figures are the default's, so every ratio is 1.00x."""
    from types import SimpleNamespace

    import nard_ai.model.network
    import nard_ai.play.selfplay
    from nard_ai.model.network import default_checkpoint_path

    default = default_checkpoint_path()
    loads = []
    real_load = nard_ai.model.network.load_checkpoint

    def recording_load(path):
        loads.append((Path(path).resolve(), real_load(path)))
        return loads[-1][1]

    ticks = iter(range(10**6))
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    monkeypatch.setattr(bench, "search_ms_per_move", lambda agent, boards, dice, repeats: [2.0] * len(boards))
    monkeypatch.setattr(
        nard_ai.play.selfplay, "play_round", lambda *a, **k: SimpleNamespace(games=500, seconds=2.0)
    )
    monkeypatch.setattr(nard_ai.model.network, "load_checkpoint", recording_load)
    argv = ["--part", "networks", "--network", str(default), "--repeats", "1", "--search-positions", "2"]
    assert bench.main(argv) == 0
    again = f"{default}, the default again: noise floor"
    assert capsys.readouterr().out.splitlines() == [
        f"what a network costs (one thread; medians; ratios to {default}): 0-ply evaluation at batch 30 "
        "(boards/s), 1-ply move choice (ms/move), self-play (games/s, one worker)",
        f"{str(default):>40}      3,000 (1.00x)    2.00 ms (1.00x)     250 (1.00x)",
        f"{again:>40}      3,000 (1.00x)    2.00 ms (1.00x)     250 (1.00x)",
    ]
    # the first two loads are the two networks measured: the default's file twice, two separate networks
    assert [path for path, _ in loads[:2]] == [default.resolve()] * 2
    assert loads[0][1].network is not loads[1][1].network


def test_the_default_network_named_by_network_is_rolled_out_again_as_the_noise_floor(monkeypatch, capsys):
    """``--part rollout --network checkpoints/nard-expert.pt``: the default network is loaded a second time
    and rolled out taking turns with the baseline, its table headed "the default again: noise floor" and its
    games/s as ratios to the baseline's. Rollouts are faked (100 games/s each), so every ratio is 1.00x."""
    from types import SimpleNamespace

    import nard_ai.agents
    import nard_ai.play.rollout
    from nard_ai.model.network import default_checkpoint_path

    default = default_checkpoint_path()
    agents = []
    real_agent = nard_ai.agents.load_agent

    def recording_agent(spec=None, ply=0):
        agents.append((spec, ply, real_agent(spec, ply=ply)))
        return agents[-1][2]

    def fake_rollout(board, games, agent=None, seed=0, variance_reduction=None, threads=None):
        return SimpleNamespace(games=games, games_per_s=100.0, equity=0.0, equity_ci=0.1, mean_plies=40.0)

    monkeypatch.setattr(nard_ai.play.rollout, "rollout", fake_rollout)
    monkeypatch.setattr(nard_ai.agents, "load_agent", recording_agent)
    assert bench.main(["--part", "rollout", "--network", str(default), "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    name = f"{default.name}:0"
    columns = (
        f"{'position':>10} {'ply':>4} {'luck adj.':>10} {'threads':>8} {'games/s':>9} {'CI/1296 g':>10} "
        f"{'CI/1 s':>8} {'plies':>6}"
    )
    rows = 3 * 2 + 1 + 2  # three positions with and without luck adjustment, one thread, 1-ply both ways
    assert len(lines) == 2 * (2 + rows + 1)
    assert lines[:2] == [
        f"rollouts of {name} (medians): games/s, equity 95% CI per 1,296 games and per second",
        columns,
    ]
    compared = lines[2 + rows + 1 :]
    assert compared[:2] == [
        f"rollouts of {name}, the default again: noise floor (medians): games/s, equity 95% CI per 1,296 "
        "games and per second",
        f"{columns} x {name}",
    ]
    assert all(row.endswith(f" {'1.00':>15}x") for row in compared[2 : 2 + rows])
    # two 0-ply agents loaded: the baseline (None: the default) and the default's file again, two networks
    zero_ply = [(spec, agent) for spec, ply, agent in agents if ply == 0]
    assert [spec for spec, _ in zero_ply] == [None, str(default)]
    assert zero_ply[0][1].evaluator.network is not zero_ply[1][1].evaluator.network


def test_a_rollout_baseline_named_again_is_labelled_the_baseline_again(monkeypatch):
    """With ``checkpoint`` (another network than the default) as the first network, ``compare`` naming its
    file again gives "the baseline again: noise floor"; another file keeps its own name."""
    from types import SimpleNamespace

    import nard_ai.agents
    import nard_ai.play.rollout

    def fake_rollout(board, games, agent=None, seed=0, variance_reduction=None, threads=None):
        return SimpleNamespace(games=games, games_per_s=100.0, equity=0.0, equity_ci=0.1, mean_plies=40.0)

    def fake_agent(spec=None, ply=0):
        return SimpleNamespace(spec=spec, ply=ply, name=f"{Path(spec).name}:{ply}")

    monkeypatch.setattr(nard_ai.play.rollout, "rollout", fake_rollout)
    monkeypatch.setattr(nard_ai.agents, "load_agent", fake_agent)
    result = bench.run_rollout_benchmark(
        games=36, vr_games=36, repeats=1, ply1_games=0, checkpoint="a.pt", compare=("./a.pt", "b.pt")
    )
    assert result["network"] == "a.pt:0"
    assert {k: v["network"] for k, v in result["compared"].items()} == {
        "./a.pt": "a.pt:0, the baseline again: noise floor",
        "b.pt": "b.pt:0",
    }


# --------------------------------------------------------------------------- warm-up before timing


class _FirstCallClock:
    """A stand-in for ``bench.time``: a machine where the wrapped kernel's first call takes ``first``
    seconds (numba compiling or loading it) and every later call 1 s, so figures are exact."""

    def __init__(self, first: float):
        self.now = 0.0
        self.first = first
        self.calls = 0

    def perf_counter(self) -> float:
        return self.now

    def wrap(self, fn):
        def timed(*args, **kwargs):
            self.now += self.first if self.calls == 0 else 1.0
            self.calls += 1
            return fn(*args, **kwargs)

        return timed


def _clocked(monkeypatch, name: str, first: float) -> _FirstCallClock:
    """Install a :class:`_FirstCallClock` as bench's clock, its kernel ``bench.<name>``."""
    from types import SimpleNamespace

    clock = _FirstCallClock(first)
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    monkeypatch.setattr(bench, name, clock.wrap(getattr(bench, name)))
    return clock


@pytest.mark.parametrize("repeats", [1, 2])
def test_compiled_games_per_s_does_not_time_the_first_call(repeats, monkeypatch):
    """Issue: ``--repeats 1`` reported random_games' first-call load as the speed (41 games/s against
    9,841). With the first call costing 1000 s and each later one 1 s, a run of 2 calls of 2 games takes
    2 s: 4 / 2 = 2.0 games/s (4 / 1001 if the first call were timed), after one untimed warm-up call."""
    clock = _clocked(monkeypatch, "random_games", first=1000.0)
    assert bench.compiled_games_per_s(batch=2, n_games=4, seed=0, repeats=repeats) == 2.0
    assert clock.calls == 1 + 2 * repeats


def test_afterstates_per_s_does_not_time_the_first_call(monkeypatch):
    """50 positions in chunks of 20: 3 calls of 1 s per run, so the rate is the afterstates of the 50
    positions (legal_plays_batch on all of them at once, before the clock is installed) over 3 s."""
    boards, dice = bench.random_play_positions(50, np.random.default_rng(3))
    total = len(bench.legal_plays_batch(boards, dice, sort=False)[0])
    _clocked(monkeypatch, "legal_plays_batch", first=1000.0)
    assert bench.afterstates_per_s(boards, dice, batch=20, repeats=1, sort=False) == total / 3


def test_lockstep_games_per_s_does_not_time_the_first_call(monkeypatch):
    """A run replays the same seeded games, so its figure on a machine whose first legal_plays_batch call
    takes 1000 s is the figure where that call takes 1 s like the others."""
    figures = []
    for first in (1000.0, 1.0):
        with monkeypatch.context() as m:
            _clocked(m, "legal_plays_batch", first)
            figures.append(bench.lockstep_games_per_s(batch=4, n_games=4, seed=5, repeats=1))
    assert figures[0] == figures[1] > 0


def test_search_and_cube_times_do_not_time_the_first_call(monkeypatch):
    """Per-position times in ms: each position's call takes 1 s = 1000 ms once the first call (1000 s) is
    out of the way, untimed."""
    from types import SimpleNamespace

    import nard_ai.cube

    boards = np.zeros((3, 26), np.int8)
    dice = np.ones((3, 2), np.int8)
    clock = _FirstCallClock(1000.0)
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    agent = SimpleNamespace(choose_plays=clock.wrap(lambda b, d: None))
    assert bench.search_ms_per_move(agent, boards, dice, repeats=1) == [1000.0] * 3
    clock = _FirstCallClock(1000.0)
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    monkeypatch.setattr(nard_ai.cube, "cube_decision", clock.wrap(lambda b, agent: None))
    assert bench.cube_ms_per_position(agent, boards) == [1000.0] * 3


def test_every_kind_of_rollout_is_warmed_up_before_it_is_timed(monkeypatch):
    """The rollout benchmark times plain, luck-adjusted and one-thread 0-ply rollouts and 1-ply ones, of
    two networks. A fake rollout reports 1 game/s at the first call of each kind (network, ply, luck
    adjustment, threads: numba loading its kernels) and 100 after: every figure must be 100."""
    from types import SimpleNamespace

    import nard_ai.agents
    import nard_ai.play.rollout

    seen = set()

    def fake_rollout(board, games, agent=None, seed=0, variance_reduction=None, threads=None):
        kind = (agent.spec, agent.ply, variance_reduction, threads)
        rate = 100.0 if kind in seen else 1.0
        seen.add(kind)
        return SimpleNamespace(games=games, games_per_s=rate, equity=0.0, equity_ci=0.1, mean_plies=40.0)

    def fake_agent(spec=None, ply=0):
        return SimpleNamespace(spec=spec, ply=ply, name=f"{spec}:{ply}")

    monkeypatch.setattr(nard_ai.play.rollout, "rollout", fake_rollout)
    monkeypatch.setattr(nard_ai.agents, "load_agent", fake_agent)
    result = bench.run_rollout_benchmark(games=36, vr_games=36, repeats=1, ply1_games=36, compare=("b.pt",))
    rates = []
    for r in (result, result["compared"]["b.pt"]):
        for figures in [*r["positions"].values(), r["one_thread"], r["ply1"]]:
            rates += [f["games_per_s"] for f in figures.values()]
    assert len(rates) == 2 * (3 * 2 + 1 + 2) and set(rates) == {100.0}
