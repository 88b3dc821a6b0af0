"""Regression tests of a researcher's pass over the training pipeline (labels folders, supervised runs).

Each test states the right value and where it comes from: the label format is
:mod:`nard_ai.training.store`'s module docstring (README, "Training and evaluation"), the
sidecars are what :func:`nard_ai.training.labels.label_shard` writes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil

import numpy as np
import pytest

from nard_ai.formats.position_id import position_id
from nard_ai.training.store import (
    FORMAT_VERSION,
    LABELS_FORMAT,
    RUN_FILE,
    atomic_write_bytes,
    format_labels_csv,
    labels_provenance,
    read_labels,
)

PROBS = [0.6, 0.2, 0.01, 0.1, 0.005]


def _boards(n: int, seed: int = 0) -> np.ndarray:
    """``n`` distinct positions of random play (``tests/conftest.py``'s ``random_play_positions``)."""
    from conftest import random_play_positions

    boards = random_play_positions(np.random.default_rng(seed), 4 * n)
    _, first = np.unique([position_id(b) for b in boards], return_index=True)
    out = boards[np.sort(first)][:n]
    assert len(out) == n
    return out


def _labeller_shard(folder, k: int, boards, *, seed: int = 0, method: str = "0ply", network_sha="a" * 64):
    """Shard ``k`` as the label command writes it: the CSV and a full sidecar (format, shard, csv,
    plan, network, seed), plus the folder's ``run.json`` of the same settings."""
    folder.mkdir(parents=True, exist_ok=True)
    csv = folder / f"labels-{k:05d}.csv"
    atomic_write_bytes(
        csv, format_labels_csv([position_id(b) for b in boards], np.tile([PROBS], (len(boards), 1)))
    )
    plan = {"contact": {"method": method, "ply": int(method[0])}}
    meta = {
        "format": LABELS_FORMAT,
        "format_version": FORMAT_VERSION,
        "shard": k,
        "csv": csv.name,
        "csv_sha256": hashlib.sha256(csv.read_bytes()).hexdigest(),
        "rows": len(boards),
        "labels": plan,
        "network": {"file": "net.pt", "sha256": network_sha},
        "seed": seed,
    }
    (folder / f"labels-{k:05d}.json").write_text(json.dumps(meta))
    run = {"labels": plan, "network": {"path": "/x/net.pt", "sha256": network_sha}, "seed": seed, "shards": 2}
    if not (folder / RUN_FILE).exists():
        (folder / RUN_FILE).write_text(json.dumps(run))
    return meta


@pytest.fixture
def folder(tmp_path):
    boards = _boards(40)
    lab = tmp_path / "lab"
    _labeller_shard(lab, 0, boards[:20])
    _labeller_shard(lab, 1, boards[20:])
    return lab


def test_a_consistent_labellers_folder_reads(folder):
    """Right value: 40 rows, the labels as written (the two shards, in order)."""
    ids, probs = read_labels(folder)
    assert len(ids) == 40 and len(set(ids)) == 40
    np.testing.assert_allclose(probs, np.tile([PROBS], (40, 1)))


def test_a_sidecar_of_another_format_or_version_is_refused(folder):
    """Found: a sidecar saying ``format_version 99`` (or another ``format``) was read as version 1,
    silently. Right: the store reads ``nard_ai.labels`` version :data:`FORMAT_VERSION` (1) only."""
    side = folder / "labels-00001.json"
    meta = json.loads(side.read_text())
    side.write_text(json.dumps({**meta, "format_version": FORMAT_VERSION + 98}))
    with pytest.raises(
        ValueError, match=r"labels-00001.json: a sidecar of format 'nard_ai.labels' version 99"
    ):
        read_labels(folder)
    side.write_text(json.dumps({**meta, "format": "nard_ai.positions"}))
    with pytest.raises(ValueError, match="this code reads 'nard_ai.labels' version 1"):
        read_labels(folder)


def test_a_copied_shard_is_refused_not_read_twice(folder):
    """Found: ``labels-00000.*`` copied to ``labels-00002.*`` read its 20 rows twice (60 rows, 20 of them
    duplicates). Right: the sidecar's ``shard`` (0) is not its file's number (2), an error naming it."""
    for ext in ("csv", "json"):
        shutil.copy(folder / f"labels-00000.{ext}", folder / f"labels-00002.{ext}")
    with pytest.raises(ValueError, match=r"labels-00002.json: the sidecar of shard 0 .*copied or renamed"):
        read_labels(folder)


@pytest.mark.parametrize(
    "change, named",
    [({"seed": 7}, "seed"), ({"method": "1ply"}, "label methods"), ({"network_sha": "b" * 64}, "network")],
)
def test_shards_of_two_runs_in_one_folder_are_refused(tmp_path, change, named):
    """Found: a shard labelled by another run (another seed, method or network) copied into a folder
    trained with the others as one data set. Right: every shard of a folder shares its ``run.json``'s
    label methods, seed and network SHA-256 (``run_labels`` refuses to write such a folder)."""
    boards = _boards(40)
    lab, other = tmp_path / "lab", tmp_path / "other"
    _labeller_shard(lab, 0, boards[:20])
    _labeller_shard(other, 1, boards[20:], **change)
    for ext in ("csv", "json"):
        shutil.copy(other / f"labels-00001.{ext}", lab / f"labels-00001.{ext}")
    with pytest.raises(ValueError, match=rf"labels-00001.json: labelled with other settings \({named}"):
        read_labels(lab)
    # without run.json the first shard is the reference: the same refusal
    (lab / RUN_FILE).unlink()
    with pytest.raises(ValueError, match=r"than labels-00000.json of its folder"):
        read_labels(lab)


def test_a_repeated_position_in_one_folder_is_a_note(tmp_path, caplog):
    """A position twice in one folder (the label command never writes one, the set is deduplicated)
    reads, each row training, with a one-line note naming it."""
    boards = _boards(10)
    lab = tmp_path / "lab"
    _labeller_shard(lab, 0, np.concatenate([boards, boards[:1]]))
    with caplog.at_level(logging.WARNING, logger="nard_ai.training.store"):
        ids, _ = read_labels(lab)
    assert len(ids) == 11
    assert f"1 row repeats a position of another row (the first {position_id(boards[0])})" in caplog.text


def test_labels_provenance_names_the_exact_rows(folder, tmp_path):
    """Found: a supervised run recorded its labels as the folder name given (``"lab1"``, relative to
    a working directory nobody knows). Right: the resolved path, 2 shards, 40 rows, and a SHA-256 of
    ``NAME CSV_SHA256`` lines that stays when the folder moves and changes with any row."""
    got = labels_provenance(folder)
    lines = "".join(
        f"labels-{k:05d}.csv {json.loads((folder / f'labels-{k:05d}.json').read_text())['csv_sha256']}\n"
        for k in (0, 1)
    )
    assert got == {
        "path": str(folder.resolve()),
        "shards": 2,
        "rows": 40,
        "sha256": hashlib.sha256(lines.encode()).hexdigest(),
    }
    moved = shutil.copytree(folder, tmp_path / "moved")
    assert labels_provenance(moved)["sha256"] == got["sha256"]
    # the rows come from the sidecars (checked against the CSVs on reading); a hand-made sidecar without
    # ``rows`` is counted from its CSV: the same 40
    side = moved / "labels-00001.json"
    meta = json.loads(side.read_text())
    assert meta.pop("rows") == 20
    side.write_text(json.dumps(meta))
    assert labels_provenance(moved)["rows"] == 40


def test_a_supervised_run_records_its_label_folders(folder, tmp_path):
    """The checkpoint's ``extra["supervised"][-1]["label_folders"]`` is :func:`labels_provenance` of
    each folder read."""
    import torch

    from nard_ai.model.network import Network, NetworkConfig, load_checkpoint
    from nard_ai.training.supervised import SupervisedConfig, run_supervised

    torch.manual_seed(0)
    ckpt = tmp_path / "net.pt"
    config = SupervisedConfig(epochs=1, batch_size=16, val_fraction=0.3)
    run_supervised(folder, ckpt, config, network=Network(NetworkConfig(encoder="td198", hidden=(8,))))
    record = load_checkpoint(ckpt).extra["supervised"][-1]
    assert record["label_folders"] == [labels_provenance(folder)]
    assert record["labels"] == str(folder)  # the name as given, as before


def test_zero_validation_rows_is_one_clear_error(tmp_path):
    """Found: 3 labelled positions gave ``need training and validation rows, got 3 and 0``. Right: the
    message says why (the 5% split held out none of the 3) and what to do (about 60 positions, 3 / 5%)."""
    from nard_ai.model.network import Network, NetworkConfig
    from nard_ai.training.supervised import SupervisedConfig, run_supervised, validation_mask

    boards = _boards(3, seed=3)
    assert not validation_mask([position_id(b) for b in boards], 0.05).any()  # none held out
    lab = tmp_path / "lab"
    _labeller_shard(lab, 0, boards)
    with pytest.raises(ValueError) as info:
        run_supervised(lab, tmp_path / "n.pt", SupervisedConfig(epochs=1), network=Network(NetworkConfig()))
    msg = str(info.value)
    assert "\n" not in msg
    assert "holds out none of the 3 labelled positions" in msg and "about 60 or more" in msg
    assert not (tmp_path / "n.pt").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epochs", "0"], "argument --epochs: must be >= 1, got 0"),
        (["--patience", "0"], "argument --patience: must be >= 1, got 0"),
        (["--epochs", "100001"], "argument --epochs: must be at most 100,000, got 100,001"),
        (["--patience", "10000000"], "argument --patience: must be at most 100,000, got 10,000,000"),
    ],
)
def test_epochs_and_patience_are_bounded_arguments(argv, message, monkeypatch, tmp_path, capsys):
    """Found: ``--epochs 0`` failed late as ``epochs must be >= 1`` (no flag named) and
    ``--epochs 100000000000`` was accepted. Right: argparse errors naming the flag, status 2, with
    the limits of ``train.LIMITS`` (100,000 each; the longest run of docs/GENERATIONS.md asked for 300)."""
    from nard_ai.interfaces import train
    from nard_ai.interfaces.cli import parse_dataclass_args

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        parse_dataclass_args(train.Args, ["--supervised", "lab", *argv])
    assert info.value.code == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].endswith(f"error: {message}")
    assert train.LIMITS["epochs"] == train.LIMITS["patience"] == 100_000
    assert not any(tmp_path.iterdir())


def test_a_single_shard_beyond_the_set_is_named_as_typed(tmp_path, capsys):
    """Found: ``label --shards 5`` on a set of shards 0..4 said ``shards 5:6 select none ...``, a range
    nobody typed. Right: the refusal names shard 5 as typed (``--shards N`` reaches ``run_labels`` as the
    ``int``); the ``START:STOP`` forms keep their wording (tests/test_training_inputs.py)."""
    from nard_ai.model.network import default_checkpoint_path
    from nard_ai.training.cli import main
    from nard_ai.training.positions import PositionSet, classify_positions, write_position_set
    from nard_ai.training.store import file_provenance

    net = tmp_path / "net.pt"
    shutil.copy(default_checkpoint_path(), net)
    boards = _boards(10, seed=5)
    pset = tmp_path / "pos"
    write_position_set(
        pset, PositionSet(boards, classify_positions(boards), {"settings": {}}), shard_size=2,
        extra={"network": file_provenance(net)},
    )  # fmt: skip
    out = tmp_path / "lab"

    def label(shards: str) -> tuple[int, str]:
        code = main(["label", "--positions", str(pset), "--out", str(out), "--method", "0ply", "--workers", "1",
                     "--no-progress", "--shards", shards])  # fmt: skip
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        return code, err.strip()

    assert label("5") == (
        2,
        "python -m nard_ai.training label: error: shard 5 is not one of the position set's shards: "
        f"{pset} has shards 0..4",
    )
    assert label("5:6") == (  # the range form as before
        2,
        "python -m nard_ai.training label: error: shards 5:6 select none of the position set's shards: "
        f"{pset} has shards 0..4",
    )
    assert not out.exists()
    assert main(["label", "--positions", str(pset), "--out", str(out), "--method", "0ply", "--workers", "1",
                 "--no-progress", "--shards", "4"]) == 0  # fmt: skip
    assert sorted(p.name for p in out.glob("labels-*.json")) == ["labels-00004.json"]


@pytest.mark.parametrize(
    "value, message",
    [
        ("0", "argument --val-fraction: must be in (0, 1), got 0.0"),
        ("1", "argument --val-fraction: must be in (0, 1), got 1.0"),
        ("-0.1", "argument --val-fraction: must be in (0, 1), got -0.1"),
        ("nan", "argument --val-fraction: must be in (0, 1), got nan"),
        ("abc", "argument --val-fraction: invalid float value: 'abc'"),
    ],
)
def test_val_fraction_is_checked_up_front(value, message, monkeypatch, tmp_path, capsys):
    """``--val-fraction F`` (the share held out for validation) must lie in (0, 1): 0 holds out nothing
    and 1 trains on nothing. Refused by argparse, one line, status 2, nothing written."""
    from nard_ai.interfaces import train
    from nard_ai.interfaces.cli import parse_dataclass_args

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        parse_dataclass_args(train.Args, ["--supervised", "lab", f"--val-fraction={value}"])
    assert info.value.code == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].endswith(f"error: {message}"), errors
    assert not any(tmp_path.iterdir())


def test_val_fraction_without_supervised_is_refused(monkeypatch, tmp_path, capsys):
    """As ``--epochs``: a TD self-play run has no validation split, so the flag would be ignored."""
    from nard_ai.interfaces import train
    from nard_ai.interfaces.cli import given_fields, parse_dataclass_args

    monkeypatch.chdir(tmp_path)
    argv = ["--val-fraction", "0.2"]
    with pytest.raises(SystemExit) as info:
        train.check_given(parse_dataclass_args(train.Args, argv), given_fields(train.Args, argv))
    assert info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "train.py: error: argument --val-fraction: only with --supervised (self-play runs to --games)"
    ]
    assert train.Args().val_fraction == 0.05  # the default: every earlier run's split
    assert not any(tmp_path.iterdir())


def test_a_supervised_run_holds_out_the_val_fraction_asked(tmp_path):
    """``train.py --supervised LAB --val-fraction 0.5`` holds out the rows that
    :func:`~nard_ai.training.supervised.validation_mask` puts below 0.5 (about half), logs that count,
    and records the fraction and the rows in the checkpoint's ``extra["supervised"]``."""
    from conftest import run_train_py, write_label_shard

    from nard_ai.model.network import load_checkpoint
    from nard_ai.training.supervised import validation_mask

    boards = _boards(60, seed=7)
    lab = tmp_path / "lab"
    write_label_shard(lab, "00000", boards, np.tile([PROBS], (len(boards), 1)))
    held = int(validation_mask([position_id(b) for b in boards], 0.5).sum())
    assert 15 <= held <= 45  # about half of 60
    assert held != int(validation_mask([position_id(b) for b in boards], 0.05).sum())  # the flag matters
    ckpt = tmp_path / "n.pt"
    argv = ["--supervised", str(lab), "--checkpoint", str(ckpt), "--encoder", "td198", "--no-race-net",
            "--hidden", "8", "--epochs", "1", "--val-fraction", "0.5", "--no-progress", "--threads", "1"]  # fmt: skip
    r = run_train_py(argv, tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"{lab}: 60 positions, {60 - held} for training, {held} held out" in r.stderr
    record = load_checkpoint(ckpt).extra["supervised"][-1]
    assert record["config"]["val_fraction"] == 0.5
    assert record["rows"] == {"train": 60 - held, "val": held}
