"""Regression tests of a user's pass over evaluate.py and ``python -m nard_ai.bench`` (pass 31)."""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na
from nard_ai import bench
from nard_ai.agents import agent_from_spec
from nard_ai.reports.error_rate import read_cases, run_make_cases, sample_cases


def _share_from_whole_games(boards: np.ndarray) -> tuple[float, float]:
    """The share of cases at the starting position, and of cases with a checker borne off."""
    return float((boards == na.starting_board()).all(1).mean()), float((np.abs(boards).sum(1) < 30).mean())


def test_make_cases_takes_cases_from_whole_games(tmp_path):
    """Issue: ``evaluate.py --make-cases cases.txt --cases 500`` (README) kept the first 500 cases met by
    256 games in lockstep, about 25 a ply: all from the games' first 20 plies, none with a checker borne
    off, and with ``--cases 50`` 26 of the 50 were the starting position (measured before the fix, seed 0,
    pubeval). In a long run (20,000 cases, where the games cycle many times) about 2% of pubeval's cases are
    the starting position and about 26% have a checker off (measured); the cases of whole games give
    those shares at any size."""
    path = tmp_path / "cases.txt"
    assert run_make_cases(str(path), 50, "pubeval", seed=0) == 0
    boards, _, _ = read_cases(path.read_text())
    start, off = _share_from_whole_games(boards)
    assert len(boards) == 50 and start < 0.2 and off > 0.1  # measured: 0.06 and 0.36 (before: 0.52 and 0.0)
    boards, _ = sample_cases(500, agent_from_spec("pubeval"), seed=0, batch=25, whole_games=True)
    start, off = _share_from_whole_games(boards)
    assert boards.shape == (500, 26) and start < 0.06 and 0.15 < off < 0.4  # measured: 0.018 and 0.254


def test_whole_game_cases_are_seeded_and_the_default_keeps_the_old_cases():
    """``whole_games=True`` is a pure function of the seed; the default (the benchmarks' sampler) still returns
    the first ``n`` cases met, so their figures do not move."""
    agent = agent_from_spec("pubeval")
    a = sample_cases(40, agent, seed=3, batch=2, whole_games=True)
    b = sample_cases(40, agent, seed=3, batch=2, whole_games=True)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    first = sample_cases(40, agent, seed=3, batch=8)
    more = sample_cases(80, agent, seed=3, batch=8)
    assert np.array_equal(first[0], more[0][:40])  # the default: the first n cases met, a prefix of more


def test_bench_bad_argument_is_one_error_line(capsys):
    """README, "Benchmarks": bad arguments are refused "with one ``python -m nard_ai.bench: error:`` line
    and status 2"; argparse printed its usage (5 lines) before it."""
    with pytest.raises(SystemExit) as exc:
        bench.main(["--part", "bogus"])
    err = capsys.readouterr().err.splitlines()
    assert exc.value.code == 2 and len(err) == 1
    assert err[0].startswith("python -m nard_ai.bench: error: argument --part: invalid choice: 'bogus'")


def test_afterstates_per_s_measures_at_the_batch_size_it_reports(monkeypatch):
    """Issue: with ``--positions 300`` the row "4096" was measured on one call of 300 positions. Fewer
    positions than the batch are now repeated to fill it: every call gets 4096 boards."""
    boards, dice = bench.random_play_positions(30, np.random.default_rng(1))
    sizes = []
    real = bench.legal_plays_batch
    monkeypatch.setattr(
        bench, "legal_plays_batch", lambda b, d, sort: sizes.append(len(b)) or real(b, d, sort=sort)
    )
    assert bench.afterstates_per_s(boards, dice, batch=4096, repeats=1, sort=False) > 0
    assert sizes and set(sizes) == {4096}
