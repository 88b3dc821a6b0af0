"""train.py's input checks (issue: a new user's review of training): options that conflict or that the run
would ignore, a checkpoint path that cannot be written, --exp-name, --seed on --resume, non-finite weights,
and the README's training examples run in order. Each bad input is one ``train.py: error:`` line and exit
status 2 before anything is written (README, "Training and evaluation")."""

from __future__ import annotations

import shlex
import signal
import sys
from pathlib import Path

import pytest
import torch
from conftest import load_script, run_train_py

from nard_ai.model.atomic import check_writable
from nard_ai.model.network import (
    Network,
    NetworkConfig,
    _digest,
    _metadata,
    load_checkpoint,
    save_checkpoint,
)

REPO = Path(__file__).resolve().parents[1]
TINY = ["--hidden", "8", "--pool", "4", "--batch-size", "32", "--checkpoint-every", "4", "--eval-every", "0",
        "--no-progress"]  # fmt: skip


def _main(train, argv: list[str] | None, args=None) -> None:
    """train.py as its ``__main__`` runs it on ``argv``, or ``train.main(args)`` (no ``given``), in this
    process (its SIGINT and SIGTERM handlers put back after)."""
    from nard_ai.interfaces.cli import given_fields, parse_dataclass_args

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if argv is None:
            train.main(args)
        else:
            train.main(parse_dataclass_args(train.Args, argv), given_fields(train.Args, argv))
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _refused(train, argv: list[str], capsys) -> str:
    """The one error line of a refused ``argv`` (status 2), after its ``PROG: error:`` (in this process
    argparse names the program ``sys.argv[0]``, pytest's; main's own errors say train.py)."""
    with pytest.raises(SystemExit) as info:
        _main(train, argv)
    assert info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0], lines
    return lines[0].split(": error: ", 1)[1]


@pytest.mark.parametrize(
    "argv, message",
    [
        # --resume continues the file, --force starts a new network over it: one of the two
        (["--resume", "--force"], "argument --force: not with --resume"),
        # TD self-play runs to --games: the supervised stopping rules would be ignored
        (["--epochs", "3"], "argument --epochs: only with --supervised"),
        (["--patience", "2"], "argument --patience: only with --supervised"),
        # --supervised fits --epochs passes over the labels: the self-play settings would be ignored
        (["--supervised", "lab", "--games", "5"], "argument --games: not with --supervised"),
        (["--supervised", "lab", "--eval-every", "10"], "argument --eval-every: not with --supervised"),
        (["--supervised", "lab", "--pool", "8"], "argument --pool: not with --supervised"),
        # as "a net named twice" in --train-nets
        (
            ["--supervised", "lab", "--init-from", "x.pt", "--fresh-nets", "race,race"],
            "argument --fresh-nets: a net named twice in 'race,race'",
        ),  # fmt: skip
        # play_match plays duplicate-dice pairs and rounds an odd count up (5 would play 6)
        (["--eval-games", "5"], "argument --eval-games: must be even"),
        # a plain name: runs/NAME__SEED__TIME and checkpoints/NAME__SEED.pt stay in their folders
        (["--exp-name", "a/../../x"], "argument --exp-name: must be a plain name"),
        (["--exp-name", ""], "argument --exp-name: must be a plain name"),
        (["--exp-name", ".."], "argument --exp-name: must be a plain name"),
        (["--exp-name", "a\\b"], "argument --exp-name: must be a plain name"),
    ],
)
def test_conflicting_or_ignored_options_are_one_error_line_before_anything_is_written(
    argv, message, monkeypatch, tmp_path, capsys
):
    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)
    assert _refused(train, [*argv, "--no-progress"], capsys).startswith(message)
    assert not any(tmp_path.iterdir())


def test_only_an_option_given_counts_as_given(monkeypatch, tmp_path, capsys):
    """The checks of options the run would ignore look at the command line (``given``): --epochs' default
    20 is in every TD run's Args, and a TD run with --eval-games 1000 (its default, an even number) trains."""
    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)
    _main(train, ["--games", "4", "--checkpoint", "a.pt", "--eval-games", "1000", *TINY])
    assert load_checkpoint(tmp_path / "a.pt").games_trained == 4
    assert train.Args().epochs == 20  # in the TD run's Args, not on its command line
    # main(args) without ``given``: the values other than the defaults count as given
    with pytest.raises(SystemExit) as info:
        _main(train, None, train.Args(epochs=3, checkpoint="b.pt"))
    assert info.value.code == 2 and not (tmp_path / "b.pt").exists()
    assert "argument --epochs: only with --supervised" in capsys.readouterr().err


@pytest.mark.parametrize("mode", [[], ["--supervised", "lab"]], ids=["td", "supervised"])
def test_a_checkpoint_that_cannot_be_written_is_refused_before_training(mode, monkeypatch, tmp_path, capsys):
    """A checkpoint path found unwritable only at the first save lost the whole run (or ended in a
    traceback); it is checked first now, for TD and supervised runs alike (the labels folder ``lab``
    does not even exist: the checkpoint's check comes before it is read)."""
    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "dirck").mkdir()
    cases = [
        (["--checkpoint", "afile/x.pt"], "argument --checkpoint: cannot write afile/x.pt: afile is not a directory"),
        (["--checkpoint", "afile/a/b.pt"], "argument --checkpoint: cannot write afile/a/b.pt: afile is not a directory"),
        (["--checkpoint", "dirck", "--force"], "argument --checkpoint: dirck is a directory, not a file"),
    ]  # fmt: skip
    if sys.platform.startswith("linux") and Path("/proc/self").is_dir():  # no file can be created in /proc
        cases.append((["--checkpoint", "/proc/x.pt"], "argument --checkpoint: cannot write /proc/x.pt: cannot "
                       "create a file in /proc"))  # fmt: skip
    for argv, message in cases:
        assert _refused(train, [*mode, *argv, "--no-progress"], capsys).startswith(message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "dirck"]  # no runs/, no checkpoints/
    assert (tmp_path / "afile").read_text() == "x" and not any((tmp_path / "dirck").iterdir())


def test_check_writable_leaves_nothing_behind_and_makes_no_folder(tmp_path):
    assert check_writable(tmp_path / "new" / "deeper" / "x.pt") == tmp_path / "new" / "deeper" / "x.pt"
    assert check_writable(tmp_path / "x.pt") == tmp_path / "x.pt"
    assert not any(tmp_path.iterdir())  # the probe file is gone, and the missing folders were not made
    with pytest.raises(ValueError, match="is a directory, not a file"):
        check_writable(tmp_path)


def test_a_real_process_refuses_an_unwritable_checkpoint_without_a_traceback(tmp_path):
    (tmp_path / "afile").write_text("x")
    r = run_train_py(["--checkpoint", "afile/x.pt", "--no-progress"], tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "train.py: error: argument --checkpoint: cannot write afile/x.pt: afile is not a directory"
    ]


def test_seed_on_a_td_resume_is_ignored_with_a_warning_and_the_checkpoint_keeps_its_own(
    monkeypatch, tmp_path, caplog
):
    """The resumed run's dice and sample order come from the generator state saved in the checkpoint, so
    --seed 99 changes nothing: the weights equal those of the same resume without it, and the checkpoint
    and the TensorBoard run keep the seed that made the run (7), where they used to say 99."""
    train = load_script(monkeypatch, "train.py")
    monkeypatch.chdir(tmp_path)
    _main(train, ["--games", "4", "--seed", "7", "--checkpoint", "a.pt", *TINY])
    (tmp_path / "b.pt").write_bytes((tmp_path / "a.pt").read_bytes())
    with caplog.at_level("WARNING"):
        _main(
            train,
            ["--games", "8", "--resume", "--checkpoint", "a.pt", "--seed", "99", "--encoder", "td198", *TINY],
        )
    assert (
        "ignoring --seed 99 on --resume: the checkpoint's generator state continues (its seed: 7)"
        in caplog.text
    )
    assert "ignoring --encoder, --hidden on --resume: the checkpoint's network is used" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        _main(train, ["--games", "8", "--resume", "--checkpoint", "b.pt", "--seed", "7", *TINY])
    assert "--seed" not in caplog.text  # the checkpoint's own seed: nothing ignored
    a, b = load_checkpoint(tmp_path / "a.pt"), load_checkpoint(tmp_path / "b.pt")
    assert a.args["seed"] == b.args["seed"] == 7 and a.games_trained == 8
    for name, value in a.network.state_dict().items():
        assert torch.equal(value, b.network.state_dict()[name]), name
    assert {p.name.split("__")[1] for p in (tmp_path / "runs").iterdir()} == {"7"}


def _with_nonfinite_weights(src: Path, dst: Path) -> Path:
    """``src`` with one NaN weight, its digest recomputed: the file the old train.py wrote after a run
    diverged (a whole, undamaged checkpoint whose weights are not finite)."""
    payload = torch.load(src, weights_only=True)
    name = next(iter(payload["state_dict"]))
    payload["state_dict"][name].view(-1)[0] = float("nan")
    payload["digest"]["state_dict"] = _digest(payload["state_dict"])
    payload["digest"]["metadata"] = _digest(_metadata(payload))
    torch.save(payload, dst)
    return dst


def test_a_checkpoint_with_non_finite_weights_is_refused_by_every_command(tmp_path):
    """load_checkpoint refuses it (a ValueError naming the file), so train.py --resume (TD and supervised)
    and evaluate.py give one error line, status 2; save_checkpoint never writes such weights."""
    good = save_checkpoint(tmp_path / "good.pt", Network(NetworkConfig(encoder="rich", hidden=(8,))))
    bad = _with_nonfinite_weights(good, tmp_path / "bad.pt")
    with pytest.raises(
        ValueError, match=r"bad\.pt: non-finite weights \(NaN or infinity\) in mlp\.0\.weight"
    ):
        load_checkpoint(bad)
    for argv in (
        [str(REPO / "train.py"), "--resume", "--checkpoint", "bad.pt", "--games", "8", "--no-progress"],
        [
            str(REPO / "train.py"),
            "--supervised",
            "lab",
            "--resume",
            "--checkpoint",
            "bad.pt",
            "--no-progress",
        ],
        [
            str(REPO / "evaluate.py"),
            "--agent-a",
            "bad.pt",
            "--agent-b",
            "random",
            "--games",
            "2",
            "--no-progress",
        ],
    ):
        r = run_train_py(argv[1:], tmp_path) if argv[0].endswith("train.py") else _run_script(argv, tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        errors = [line for line in r.stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and "bad.pt: non-finite weights" in errors[0], r.stderr
    network = load_checkpoint(good).network
    with torch.no_grad():
        network.mlp[0].bias[0] = float("inf")
    before = good.read_bytes()
    with pytest.raises(ValueError, match=r"good\.pt: not written: non-finite weights .* in mlp\.0\.bias"):
        save_checkpoint(good, network)
    with pytest.raises(ValueError, match="not written: non-finite weights"):
        save_checkpoint(tmp_path / "new" / "x.pt", network)
    assert good.read_bytes() == before and not (tmp_path / "new").exists()


def _run_script(argv: list[str], cwd: Path):
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _readme_training_commands() -> list[str]:
    """The commands of the first bash block of README's "Training and evaluation" section, in order (each
    line's ``&&`` chain split, comments dropped)."""
    text = (REPO / "README.md").read_text().split("\n## Training and evaluation\n", 1)[1]
    block = text.split("```bash\n", 1)[1].split("\n```", 1)[0]
    return [
        part.strip() for line in block.splitlines() for part in line.split("#")[0].split("&&") if part.strip()
    ]


def test_the_readme_training_examples_run_in_order_as_written(monkeypatch, capsys):
    """Issue D16: ``python train.py --ply 1 --games 2000`` came right after ``python train.py``, into the
    same default checkpoints/nard-rich__1.pt: "exists: pass --resume or --force". Walked in order on a fresh
    clone (the shipped checkpoints only), every train.py line passes its argument checks, writes a file no
    earlier line made unless it resumes it, and resumes only a file that exists by then."""
    train = load_script(monkeypatch, "train.py")
    from nard_ai.interfaces.cli import given_fields, parse_dataclass_args

    files = {f"checkpoints/{p.name}" for p in (REPO / "checkpoints").glob("*.pt") if "__" not in p.name}
    trained = 0
    for command in _readme_training_commands():
        argv = shlex.split(command)
        if argv[0] == "cp":
            assert argv[1] in files, command
            files.add(argv[2])
        elif argv[:2] == ["python", "train.py"]:
            args = parse_dataclass_args(train.Args, argv[2:])
            train.check_given(args, given_fields(train.Args, argv[2:]))
            path = args.checkpoint_path.as_posix()
            assert (path in files) == args.resume or args.force, f"{command}: {path} exists: {path in files}"
            files.add(path)
            trained += 1
    assert trained == 4 and capsys.readouterr().err == ""
