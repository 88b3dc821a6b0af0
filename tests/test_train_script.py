"""train.py as a user runs it: resuming with the saved settings, signals, SIGKILL, argument checks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from nard_ai.model.network import load_checkpoint

REPO = Path(__file__).resolve().parent.parent
SMALL = ["--hidden", "8", "--batch-size", "32", "--eval-every", "0", "--no-progress", "--seed", "3"]


def _train(argv: list[str]) -> dict:
    """Popen arguments running the repository's train.py with ``argv``."""
    return {
        "args": [sys.executable, str(REPO / "train.py"), *argv],
        "env": {**os.environ, "PYTHONPATH": str(REPO)},
    }


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(**_train(argv), cwd=cwd, capture_output=True, text=True, timeout=600)


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        **_train(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for_games(path: Path, games: int, proc: subprocess.Popen, timeout: float = 300) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if path.exists():
            done = load_checkpoint(path).games_trained
            if done >= games:
                return done
        time.sleep(0.2)
    raise AssertionError(f"no checkpoint with {games} games within {timeout} s")


def test_resume_takes_the_saved_training_settings_unless_given(tmp_path):
    ckpt = tmp_path / "a.pt"
    first = ["--lr", "3e-4", "--lam", "0.5", "--pool", "6", "--workers", "1", "--checkpoint-every", "10"]
    r = _run(["--games", "10", "--checkpoint", str(ckpt), *first, *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    r = _run(["--games", "20", "--checkpoint", str(ckpt), "--resume", "--lam", "0.6", *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    saved = load_checkpoint(ckpt).args
    assert (saved["lr"], saved["pool"], saved["workers"], saved["checkpoint_every"]) == (3e-4, 6, 1, 10)
    assert saved["lam"] == 0.6  # given on the command line: it overrides the checkpoint's 0.5
    assert (
        "resuming with the checkpoint's --lr 0.0003" in r.stderr
        and "--lam" not in r.stderr.split("resuming")[1]
    )


def test_resume_ignores_the_architecture_flags(tmp_path):
    ckpt = tmp_path / "a.pt"
    r = _run(
        ["--games", "8", "--pool", "4", "--checkpoint-every", "8", "--checkpoint", str(ckpt), *SMALL],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    # td198 has no race unit: an error for a new network, ignored on resume (the checkpoint's network is used)
    r = _run(["--games", "16", "--checkpoint", str(ckpt), "--resume", "--encoder", "td198", *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ignoring --encoder, --hidden on --resume" in r.stderr
    saved = load_checkpoint(ckpt)
    assert (
        saved.network.config.encoder == "rich"
        and saved.args["encoder"] == "rich"
        and saved.args["hidden"] == 8
    )


def test_resume_checks_workers_against_the_checkpoints_pool(tmp_path):
    ckpt = tmp_path / "a.pt"
    first = ["--pool", "4", "--workers", "1", "--checkpoint-every", "8"]
    r = _run(["--games", "8", "--checkpoint", str(ckpt), *first, *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    r = _run(["--games", "16", "--checkpoint", str(ckpt), "--resume", "--pool", "1", *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr  # the checkpoint's one worker fits a pool of 1
    r = _run(["--games", "24", "--checkpoint", str(ckpt), "--resume", "--workers", "3", *SMALL], tmp_path)
    assert r.returncode == 2 and "argument --workers: at most --pool (1)" in r.stderr


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_saves_and_exits_with_the_signal_status(tmp_path, sig, status):
    ckpt = tmp_path / "a.pt"
    proc = _start(
        ["--games", "100000", "--pool", "8", "--checkpoint-every", "20", "--checkpoint", str(ckpt), *SMALL],
        tmp_path,
    )
    try:
        first = _wait_for_games(ckpt, 20, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == status, err
    assert "stopped by a signal" in err
    assert load_checkpoint(ckpt).games_trained >= first


def test_sigkill_loses_at_most_one_round_and_the_run_resumes(tmp_path):
    """Issue 3, section 5: a run killed with SIGKILL loses at most --checkpoint-every games."""
    ckpt = tmp_path / "a.pt"
    every = 20
    proc = _start(
        [
            "--games",
            "100000",
            "--pool",
            "8",
            "--checkpoint-every",
            str(every),
            "--checkpoint",
            str(ckpt),
            *SMALL,
        ],
        tmp_path,
    )
    try:
        _wait_for_games(ckpt, 2 * every, proc)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    logged = [int(line.split()[1].rstrip(":")) for line in err.splitlines() if line.startswith("games ")]
    saved = load_checkpoint(ckpt)  # the file is whole: written atomically
    assert saved.games_trained % every == 0 and saved.games_trained >= max(logged) - every
    target = saved.games_trained + every
    r = _run(["--games", str(target), "--checkpoint", str(ckpt), "--resume", *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    resumed = load_checkpoint(ckpt)
    assert resumed.games_trained == target
    assert any(
        not torch.equal(v, resumed.network.state_dict()[k]) for k, v in saved.network.state_dict().items()
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--workers", "9", "--pool", "8"], "argument --workers: at most --pool"),
        (["--eval-games", "1"], "argument --eval-games: at least 4"),
    ],
)
def test_train_argument_checks(tmp_path, argv, message):
    r = _run([*argv, "--no-progress"], tmp_path)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert not any(tmp_path.iterdir())
