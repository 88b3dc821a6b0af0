"""``python -m nard_ai.bench --part rules``: the rules-core benchmark's figures and their keys.

The issue's interface (rules-core issue, section 6): ``--json`` prints one
JSON object with ``afterstates_per_s``, ``random_games_per_s`` and
``gnubg_afterstates_per_s``; figures at batch sizes 1, 256 and 4096. The
figures themselves are machine-dependent and not asserted, only that each is
a measured positive rate and that the games counted were really played.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from nard_ai import bench


def test_compiled_games_per_s_plays_whole_calls_of_batch_games(monkeypatch):
    """``compiled_games_per_s(batch, n)`` calls ``random_games(batch)`` ceil(n / batch) times per run and
    divides the games played by the time."""
    calls = []
    real = bench.random_games

    def counting(n, rng, *args):
        calls.append(n)
        return real(n, rng, *args)

    monkeypatch.setattr(bench, "random_games", counting)
    rate = bench.compiled_games_per_s(batch=5, n_games=12, seed=0, repeats=2)
    assert calls == [5, 5, 5] * 2  # 3 calls of 5 games (15 >= 12) in each of the 2 runs
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
