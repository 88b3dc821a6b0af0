"""train.py as a user runs it: resuming with the saved settings, signals, SIGKILL, argument checks."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import (
    load_script,
    random_play_positions,
    run_train_py,
    run_train_py_at_once,
    train_py_args,
    write_label_shard,
)

import nard_ai.interfaces.train as train_run  # the module behind train.py: main looks its names up there
from nard_ai.model.network import load_checkpoint

SMALL = ["--hidden", "8", "--batch-size", "32", "--eval-every", "0", "--no-progress", "--seed", "3"]


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        **train_py_args(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
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
    r = run_train_py(["--games", "10", "--checkpoint", str(ckpt), *first, *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_train_py(
        ["--games", "20", "--checkpoint", str(ckpt), "--resume", "--lam", "0.6", *SMALL], tmp_path
    )
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
    r = run_train_py(
        ["--games", "8", "--pool", "4", "--checkpoint-every", "8", "--checkpoint", str(ckpt), *SMALL],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    # td198 has no race unit: an error for a new network, ignored on resume (the checkpoint's network is used)
    r = run_train_py(
        ["--games", "16", "--checkpoint", str(ckpt), "--resume", "--encoder", "td198", *SMALL], tmp_path
    )
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
    r = run_train_py(["--games", "8", "--checkpoint", str(ckpt), *first, *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_train_py(
        ["--games", "16", "--checkpoint", str(ckpt), "--resume", "--pool", "1", *SMALL], tmp_path
    )
    assert r.returncode == 0, r.stderr  # the checkpoint's one worker fits a pool of 1
    r = run_train_py(
        ["--games", "24", "--checkpoint", str(ckpt), "--resume", "--workers", "3", *SMALL], tmp_path
    )
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
    r = run_train_py(["--games", str(target), "--checkpoint", str(ckpt), "--resume", *SMALL], tmp_path)
    assert r.returncode == 0, r.stderr
    resumed = load_checkpoint(ckpt)
    assert resumed.games_trained == target
    assert any(
        not torch.equal(v, resumed.network.state_dict()[k]) for k, v in saved.network.state_dict().items()
    )


TRAIN_ARGUMENT_CASES = [
    (["--workers", "9", "--pool", "8"], "argument --workers: at most --pool"),
    (["--eval-games", "1"], "argument --eval-games: at least 4"),
    (["--layers", "5"], "argument --layers: must be 1 .. 4, got 5"),
    (["--init-from", "x.pt"], "argument --init-from: only with --supervised"),
    (["--lr-schedule", "step"], "argument --lr-schedule: must be one of constant, cosine, got 'step'"),
    (["--lr-schedule", "cosine"], "argument --lr-schedule: only with --supervised"),
    (
        ["--supervised", "x", "--init-from", "y.pt", "--fresh-nets", ","],
        "argument --fresh-nets: an empty name",
    ),
    (["--supervised", "x", "--fresh-nets", "race"], "argument --fresh-nets: only with --init-from"),
    (
        ["--supervised", "x", "--init-from", "y.pt", "--fresh-nets", "race,bar"],
        "argument --fresh-nets: 'bar' is not one of contact, crashed, race",
    ),
    (
        ["--crashed-net", "--no-race-net"],
        "argument --crashed-net: needs --race-net and --encoder rich or expert",
    ),
    (["--train-nets", "contact"], "argument --train-nets: only with --supervised"),
    (["--supervised", "x", "--train-nets", "contact,"], "argument --train-nets: an empty name"),
    (
        ["--supervised", "x", "--train-nets", "contact,bar"],
        "argument --train-nets: 'bar' is not one of contact, crashed, race",
    ),
    (["--supervised", "a,,b"], "argument --supervised: an empty folder name in 'a,,b'"),
    (
        ["--supervised", "x", "--train-nets", "contact, contact"],
        "argument --train-nets: a net named twice in 'contact, contact'",
    ),
]


@pytest.fixture(scope="module")
def train_argument_runs(request, tmp_path_factory) -> dict:
    """The train.py runs of :func:`test_train_argument_checks`, all started at once (independent processes,
    each in an empty folder of its own; ``conftest.run_train_py_at_once``): ``{argv: (folder, result)}``
    for the cases this session runs."""
    cases = []
    for item in request.session.items:
        if getattr(item, "originalname", None) == "test_train_argument_checks" and item.path == request.path:
            case = tuple(item.callspec.params["argv"])
            if case not in cases:
                cases.append(case)
    folders = [tmp_path_factory.mktemp("train-argument-check") for _ in cases]
    results = run_train_py_at_once(
        [([*argv, "--no-progress"], folder) for argv, folder in zip(cases, folders, strict=True)]
    )
    return {case: (folder, r) for case, folder, r in zip(cases, folders, results, strict=True)}


@pytest.mark.parametrize("argv, message", TRAIN_ARGUMENT_CASES)
def test_train_argument_checks(train_argument_runs, argv, message):
    folder, r = train_argument_runs[tuple(argv)]  # run in `folder`, empty before it
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert not any(folder.iterdir())


# ---------------------------------------------------------------- issue 15: bounds, errors mid-round, stale files

TINY = ["--hidden", "8", "--pool", "4", "--batch-size", "32", "--checkpoint-every", "4", "--eval-every", "0"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--hidden", "2000000"], "argument --hidden: must be at most 4,096, got 2,000,000"),
        (["--pool", "100000"], "argument --pool: must be at most 16,384, got 100,000"),
        (["--batch-size", "65537"], "argument --batch-size: must be at most 65,536, got 65,537"),
        (["--workers", "65", "--pool", "100"], "argument --workers: must be at most 64, got 65"),
        (["--eval-games", "1000001"], "argument --eval-games: must be at most 1,000,000, got 1,000,001"),
        (["--threads", "257"], "argument --threads: must be at most 256, got 257"),
        (["--seed", str(2**64)], f"argument --seed: must be 0 .. 2**64 - 1, got {2**64}"),
        (
            ["--pool", "16384", "--hidden", "257"],
            "argument --pool: --pool x --hidden must be at most 4,194,304 (each ply evaluates about 30 "
            "afterstates per game with that many activations), got 16,384 x 257",
        ),
        (
            ["--batch-size", "65536", "--hidden", "257"],
            "argument --batch-size: --batch-size x --hidden must be at most 16,777,216, got 65,536 x 257",
        ),
    ],
)
def test_sizes_beyond_the_limits_are_one_error_line_before_anything_is_written(
    argv, message, monkeypatch, tmp_path, capsys
):
    """Issue 15: ``--hidden 2000000`` and a huge ``--pool`` ended in tracebacks (out of memory) and
    left a 0-game checkpoint. The limits of train.LIMITS, MAX_POOL_X_HIDDEN and MAX_BATCH_X_HIDDEN
    are argparse errors: exit status 2, one error line, before any file is written."""
    from nard_ai.interfaces.cli import parse_dataclass_args

    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        parse_dataclass_args(train.Args, argv)
    assert info.value.code == 2
    errors = capsys.readouterr().err.strip().splitlines()  # one line: no usage text before it
    assert len(errors) == 1 and errors[0].endswith(f"error: {message}")
    assert not any(tmp_path.iterdir())
    limits = {"hidden": 4096, "pool": 16384, "batch_size": 65536, "workers": 64, "eval_games": 10**6}
    assert {k: train.LIMITS[k] for k in limits} == limits


def test_the_hidden_size_limit_as_a_real_process_without_a_traceback(tmp_path):
    r = run_train_py(["--hidden", "2000000", "--no-progress"], tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        "train.py: error: argument --hidden: must be at most 4,096, got 2,000,000"
    )
    assert not any(tmp_path.iterdir())


def test_resume_checks_the_pool_against_the_checkpoints_hidden_size(tmp_path):
    """On --resume the hidden size is the checkpoint's: 16,384 x 512 is above MAX_POOL_X_HIDDEN, one
    error line, and the checkpoint stays as it was."""
    from nard_ai.model.network import Network, NetworkConfig, save_checkpoint

    ckpt = save_checkpoint(tmp_path / "big.pt", Network(NetworkConfig(encoder="rich", hidden=(512,))))
    before = ckpt.read_bytes()
    r = run_train_py(["--games", "10", "--checkpoint", str(ckpt), "--resume", "--pool", "16384"], tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        "train.py: error: argument --pool: --pool x --hidden must be at most 4,194,304 (each ply evaluates "
        "about 30 afterstates per game with that many activations), got 16,384 x 512 (the checkpoint's network)"
    )
    assert len([line for line in r.stderr.splitlines() if "error" in line]) == 1
    assert ckpt.read_bytes() == before


def _main(train, argv: list[str]) -> None:
    """train.py's main in this process (its SIGINT and SIGTERM handlers are put back after)."""
    from nard_ai.interfaces.cli import given_fields, parse_dataclass_args

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        train.main(parse_dataclass_args(train.Args, argv), given_fields(train.Args, argv))
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def test_an_error_inside_a_round_keeps_the_last_checkpoint_and_writes_none(monkeypatch, tmp_path, capsys):
    """Issue 15: an error in a round (here out of memory on the second round) used to save at exit:
    weights with part of the failed round under the previous game count, or a 0-game checkpoint when
    the first round failed. Now it is one error line, exit status 2, and the checkpoint is the last
    finished round's, byte for byte (none at all when no round finished)."""
    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)
    real = train_run.play_round

    def out_of_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 1.24 GiB for an array with shape (50000, 1024, 26)")

    monkeypatch.setattr(train_run, "play_round", out_of_memory)
    with pytest.raises(SystemExit) as info:
        _main(train, ["--games", "8", "--checkpoint", "a.pt", "--no-progress", *TINY])
    assert info.value.code == 2 and not (tmp_path / "a.pt").exists()
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "train.py: error: out of memory (Unable to allocate 1.24 GiB for an array with shape (50000, 1024, 26)); "
        "the checkpoint keeps the last finished round: try a smaller --pool or --hidden"
    )
    monkeypatch.setattr(train_run, "play_round", real)
    _main(train, ["--games", "4", "--checkpoint", "a.pt", "--no-progress", *TINY])
    before = (tmp_path / "a.pt").read_bytes()
    calls = []

    def fail_in_round_two(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError(
                "[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory"
            )
        return real(*args, **kwargs)

    monkeypatch.setattr(train_run, "play_round", fail_in_round_two)
    with pytest.raises(SystemExit) as info:
        _main(train, ["--games", "12", "--checkpoint", "a.pt", "--resume", "--no-progress", *TINY])
    assert info.value.code == 2
    assert "out of memory ([enforce fail" in capsys.readouterr().err
    assert load_checkpoint(tmp_path / "a.pt").games_trained == 8  # round one of this run, saved when it ended
    after_round_one = (tmp_path / "a.pt").read_bytes()
    assert after_round_one != before
    monkeypatch.setattr(train_run, "play_round", lambda *a, **k: (_ for _ in ()).throw(ValueError("a bug")))
    with pytest.raises(ValueError, match="a bug"):  # other errors keep their traceback, and write nothing
        _main(train, ["--games", "12", "--checkpoint", "a.pt", "--resume", "--no-progress", *TINY])
    assert (tmp_path / "a.pt").read_bytes() == after_round_one


def test_an_error_after_a_finished_round_still_saves_that_round(monkeypatch, tmp_path, capsys):
    """The benchmark match runs after its round: the weights are then those of the games counted, so
    an error there (out of memory, with no message) saves that round before the one error line."""
    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(train_run, "play_match", out_of_memory)
    argv = ["--games", "8", "--checkpoint", "a.pt", "--no-progress", *TINY, "--eval-every", "4"]
    with pytest.raises(SystemExit) as info:
        _main(train, argv)
    assert info.value.code == 2 and load_checkpoint(tmp_path / "a.pt").games_trained == 4
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "train.py: error: out of memory (MemoryError); the checkpoint keeps the last finished round: "
        "try a smaller --pool or --hidden"
    )


def test_a_run_removes_the_stale_temporaries_of_its_checkpoint_at_start(monkeypatch, tmp_path, caplog):
    """Issue 15: a SIGKILL during a checkpoint write leaves ``.a.pt.XXXXXXXX.tmp``, which no later run
    removed. train.py now removes such files of its own checkpoint at start (unlocked, older than
    STALE_AFTER_S; nard_ai.model.network.remove_stale_temporaries) and logs each; another
    checkpoint's stays."""
    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)
    stale, other = tmp_path / ".a.pt.Xy12_abc.tmp", tmp_path / ".b.pt.Xy12_abc.tmp"
    for tmp in (stale, other):
        tmp.write_bytes(b"PK" + bytes(100))
        os.utime(tmp, (time.time() - 600, time.time() - 600))
    with caplog.at_level("INFO"):
        _main(train, ["--games", "4", "--checkpoint", "a.pt", "--no-progress", *TINY])
    assert not stale.exists() and other.exists()
    assert (
        f"removed {stale.name}, left by an interrupted checkpoint write" in caplog.text
    )  # --checkpoint a.pt
    assert load_checkpoint(tmp_path / "a.pt").games_trained == 4


def test_layers_gives_a_network_of_that_many_hidden_layers(tmp_path):
    """``--layers 2 --hidden 8``: two hidden layers of 8 units, recorded in the checkpoint's network."""
    ckpt = tmp_path / "two.pt"
    r = run_train_py(
        ["--games", "8", "--checkpoint", str(ckpt), "--layers", "2", *TINY, "--no-progress"], tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(ckpt).network.config.hidden == (8, 8)


def test_crashed_net_trains_a_three_net_network_by_self_play(tmp_path):
    """``--crashed-net``: TD self-play on contact, crashed and race nets, recorded in the checkpoint."""
    ckpt = tmp_path / "three.pt"
    r = run_train_py(
        ["--games", "8", "--checkpoint", str(ckpt), "--crashed-net", *TINY, "--no-progress"], tmp_path
    )
    assert r.returncode == 0, r.stderr
    network = load_checkpoint(ckpt).network
    assert network.config.crashed_net and network.crashed_mlp is not None


def test_init_from_with_a_crashed_net_says_which_shape_flags_it_ignores(tmp_path):
    """``--supervised --init-from CKPT --crashed-net --hidden 32 --activation tanh``: the network gains a
    crashed net, its contact and crashed nets are widened to 32 (tests/test_widen_hidden.py), and it keeps
    the checkpoint's activation (a warning names --activation, and no longer --hidden)."""
    from nard_ai.model.network import Network, NetworkConfig, save_checkpoint

    rng = np.random.default_rng(3)
    boards = random_play_positions(rng, 200)
    folder = tmp_path / "labels"
    write_label_shard(folder, "00000", boards, np.tile([[0.6, 0.2, 0.01, 0.1, 0.005]], (len(boards), 1)))
    save_checkpoint(tmp_path / "src.pt", Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=True)))
    argv = ["--supervised", str(folder), "--checkpoint", str(tmp_path / "three.pt"), "--init-from",
            str(tmp_path / "src.pt"), "--crashed-net", "--hidden", "32", "--activation", "tanh", "--epochs", "1", "--no-progress"]  # fmt: skip
    r = run_train_py(argv, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ignoring --activation with --init-from" in r.stderr and "--hidden" not in r.stderr
    network = load_checkpoint(tmp_path / "three.pt").network
    assert (
        network.config.hidden == (32,)
        and network.config.crashed_net
        and network.config.activation == "sigmoid"
    )


# ---------------------------------------------------------------- divergence, interrupted supervised runs


def test_a_td_run_that_diverges_stops_with_one_error_line_and_keeps_the_last_good_checkpoint(tmp_path):
    """Defect D1: ``--lr 1e30`` moves every weight by about 1e30 in Adam's first step, so a relu net's
    outputs overflow float32 and the loss is NaN at the next step; the run printed "loss nan", overwrote
    the checkpoint with those weights and exited 0. Now it stops there: one error line, status 1 (the run
    failed; its arguments parsed), and the checkpoint is byte for byte the last good one (a new run
    writes none)."""
    ckpt = tmp_path / "good.pt"
    base = ["--activation", "relu", "--pool", "8", "--checkpoint-every", "8", *SMALL]
    new = tmp_path / "new.pt"
    # the first run and the new network's run are independent: at once (conftest.run_train_py_at_once), the
    # second in a working folder of its own (TensorBoard runs/)
    alone = tmp_path / "new-run"
    alone.mkdir()
    r, fresh = run_train_py_at_once(
        [
            (["--games", "8", "--checkpoint", str(ckpt), *base], tmp_path),
            (["--games", "8", "--checkpoint", str(new), "--lr", "1e30", *base], alone),
        ]
    )
    assert r.returncode == 0, r.stderr
    before = ckpt.read_bytes()
    r = run_train_py(
        ["--games", "16", "--checkpoint", str(ckpt), "--resume", "--lr", "1e30", *SMALL], tmp_path
    )
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith(
        "train.py: error: training diverged: non-finite loss (nan) at gradient step "
    )
    assert errors[0].endswith(f"; {ckpt} keeps its save at 8 games (try a smaller --lr)")
    assert ckpt.read_bytes() == before
    r = fresh
    assert r.returncode == 1 and r.stderr.strip().splitlines()[-1].endswith(
        f"; {new} not written (try a smaller --lr)"
    )
    assert not new.exists()


def _labels(tmp_path: Path, n: int = 400) -> Path:
    folder = tmp_path / "lab"
    boards = random_play_positions(np.random.default_rng(3), n)
    write_label_shard(folder, "00000", boards, np.tile([[0.6, 0.2, 0.01, 0.1, 0.005]], (len(boards), 1)))
    return folder


def test_a_supervised_run_that_diverges_exits_1_and_writes_nothing(tmp_path):
    """Defect D1 with --supervised: a NaN validation loss every epoch and exit 0 before; now status 1 at once."""
    folder, ckpt = _labels(tmp_path), tmp_path / "s.pt"
    argv = ["--supervised", str(folder), "--checkpoint", str(ckpt), "--hidden", "8", "--activation", "relu",
            "--lr", "1e30", "--epochs", "3", "--no-progress", "--threads", "1"]  # fmt: skip
    r = run_train_py(argv, tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    # the 400 rows, less the ~5% held out, are one minibatch of --batch-size 512: epoch 1 is one step, and
    # the first loss computed after it is the validation loss
    assert r.stderr.strip().splitlines()[-1] == (
        "train.py: error: training diverged: non-finite validation loss (nan) after epoch 1; nothing written "
        f"to {ckpt} (try a smaller --lr)"
    )
    assert not ckpt.exists()


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_a_supervised_run_with_the_signal_status_and_resume_continues_it(
    tmp_path, sig, status
):
    """Defect D3: an interrupted supervised run exited 0, as if it had finished. Now, as a TD run: it
    saves what it saves (the best epoch so far, its record marked interrupted) and exits 128 + the signal;
    --resume on the checkpoint then starts a new run from those weights, appended to its records."""
    folder, ckpt = _labels(tmp_path), tmp_path / "s.pt"
    argv = ["--supervised", str(folder), "--checkpoint", str(ckpt), "--hidden", "8", "--epochs", "100000",
            "--patience", "100000", "--no-progress", "--threads", "1"]  # fmt: skip
    proc = _start(argv, tmp_path)
    try:
        deadline = time.monotonic() + 300
        while not ckpt.exists():  # written at the first new best epoch
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == status, err
    assert f"stopped by a signal: --resume on {ckpt} starts a new run from its weights" in err
    records = load_checkpoint(ckpt).extra["supervised"]
    assert len(records) == 1 and records[0]["interrupted"] is True and records[0]["best_epoch"] >= 1
    r = run_train_py(["--supervised", str(folder), "--checkpoint", str(ckpt), "--resume", "--epochs", "1",
                      "--no-progress", "--threads", "1"], tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    # it starts from the saved weights: its starting validation loss (the same held-out rows: a hash of each
    # position) is the interrupted run's best; a new best epoch would append a second record
    assert f"start: val loss {records[0]['val_loss']:.5f}" in r.stderr
    after = load_checkpoint(ckpt).extra["supervised"]
    assert after[:1] == records and all(rec["source"]["path"] == str(ckpt) for rec in after[1:])
