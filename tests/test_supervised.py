"""Supervised training on labelled positions (nard_ai.training.supervised): a few seconds."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from nard_ai.agents import load_agent
from nard_ai.eval.evaluator import NetworkEvaluator
from nard_ai.formats.position_id import position_id
from nard_ai.model.network import Network, NetworkConfig, default_checkpoint_path, load_checkpoint
from nard_ai.training.positions import generate_positions
from nard_ai.training.store import atomic_write_bytes, file_sha256, format_labels_csv
from nard_ai.training.supervised import (
    SupervisedConfig,
    evaluate_loss,
    load_labelled,
    run_supervised,
    train_supervised,
    validation_mask,
)


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    """400 self-play positions of the shipped network labelled by its 0-ply values, in two shards."""
    evaluator = NetworkEvaluator(load_checkpoint(default_checkpoint_path()).network)
    boards = generate_positions(evaluator, 400, 5, pool=64).boards
    probs = evaluator.evaluate(boards)
    folder = tmp_path_factory.mktemp("labels")
    for k, part in enumerate(np.array_split(np.arange(len(boards)), 2)):
        csv = folder / f"labels-{k:05d}.csv"
        atomic_write_bytes(csv, format_labels_csv([position_id(b) for b in boards[part]], probs[part]))
        (folder / f"labels-{k:05d}.json").write_text(json.dumps({"csv_sha256": file_sha256(csv)}))
    return folder


def _small_network(seed=0):
    torch.manual_seed(seed)
    return Network(NetworkConfig(encoder="td198", hidden=(16,)))


def test_labels_load_as_boards_and_exclusive_targets(labels):
    data = load_labelled(labels)
    assert len(data) == 400 and data.boards.shape == (400, 26) and data.targets.shape == (400, 6)
    np.testing.assert_allclose(data.targets.sum(axis=1), 1.0, atol=1e-6)
    assert (data.targets >= 0).all()
    assert position_id(data.boards[7]) == data.ids[7]


def test_the_split_is_a_seeded_function_of_the_position_only(labels):
    ids = load_labelled(labels).ids
    mask = validation_mask(ids, 0.25, seed=3)
    assert (mask == validation_mask(ids, 0.25, seed=3)).all()
    assert (validation_mask(ids[::-1], 0.25, seed=3) == mask[::-1]).all()  # not the row order
    assert 50 < mask.sum() < 150
    assert (mask != validation_mask(ids, 0.25, seed=4)).any()


def test_training_lowers_the_validation_loss_and_is_reproducible(labels):
    data = load_labelled(labels)
    held = validation_mask(data.ids, 0.25)
    train, val = data.subset(~held), data.subset(held)
    config = SupervisedConfig(lr=3e-3, batch_size=32, epochs=4, patience=2)
    results = []
    for _ in range(2):
        net = _small_network()
        history = train_supervised(net, train, val, config)
        x = torch.from_numpy(net.encoder.encode(val.boards))
        results.append((history, evaluate_loss(net, x, torch.from_numpy(val.targets))[0]))
    (history, final), (history2, final2) = results
    assert history.best_epoch >= 1
    assert final < history.initial_val_loss - 0.05
    assert final == pytest.approx(history.best_val_loss, abs=1e-6)  # the best epoch's weights are kept
    assert final == final2 and [e.train_loss for e in history.epochs] == [
        e.train_loss for e in history2.epochs
    ]


def test_a_run_writes_a_checkpoint_that_loads_and_plays(labels, tmp_path):
    path = tmp_path / "sup.pt"
    config = SupervisedConfig(lr=3e-3, batch_size=64, epochs=2, val_fraction=0.25)
    history = run_supervised(labels, path, config, network=_small_network())
    ckpt = load_checkpoint(path)
    assert ckpt.extra["supervised"][-1]["best_epoch"] == history.best_epoch >= 1
    assert ckpt.optimizer_state is None
    agent = load_agent(path)
    assert agent is not None
    # continuing it: the source checkpoint's record is kept and a second run appended
    run_supervised(labels, path, SupervisedConfig(lr=1e-3, batch_size=64, epochs=1, val_fraction=0.25))
    runs = load_checkpoint(path).extra["supervised"]
    assert len(runs) in (1, 2) and runs[0]["source"] is None


def test_a_widened_network_computes_what_its_source_computes(labels):
    """``widened`` copies the source's weights for the shared inputs and zeros the new ones, so the
    wider network's outputs equal the source's on every board (here td198 -> rich, whose first 198
    inputs are td198's; and ``nard-rich.pt`` -> expert, whose first 221 are rich's)."""
    from nard_ai.model.encoding import ENCODERS
    from nard_ai.training.supervised import widened

    boards = load_labelled(labels).boards
    torch.manual_seed(3)
    small = Network(NetworkConfig(encoder="td198", hidden=(16,), race_net=False))
    wide = widened(small, "rich", boards[:64])
    assert wide.encoder.key == "rich@1" and wide.config.hidden == (16,) and wide.race_mlp is None
    np.testing.assert_allclose(
        NetworkEvaluator(wide).evaluate(boards), NetworkEvaluator(small).evaluate(boards), atol=1e-6
    )
    if "expert" in ENCODERS:
        shipped = load_checkpoint(default_checkpoint_path().with_name("nard-rich.pt")).network
        wide = widened(shipped, "expert", boards[:64])
        assert wide.race_mlp is not None and wide.encoder.key.startswith("expert@")
        np.testing.assert_allclose(
            NetworkEvaluator(wide).evaluate(boards), NetworkEvaluator(shipped).evaluate(boards), atol=1e-5
        )


def test_widening_refuses_an_encoder_that_does_not_extend_the_source(labels):
    from nard_ai.training.supervised import widened

    boards = load_labelled(labels).boards[:64]
    rich = Network(NetworkConfig(encoder="rich", hidden=(8,)))
    with pytest.raises(ValueError, match="is not wider"):
        widened(rich, "td198", boards)


def test_run_supervised_can_start_from_a_widened_checkpoint(labels, tmp_path):
    """``init_from``: training starts at the source's loss (the widened copy is the same function) and the
    run records its source."""
    from nard_ai.model.network import save_checkpoint

    torch.manual_seed(4)
    src = Network(NetworkConfig(encoder="td198", hidden=(16,), race_net=False))
    save_checkpoint(tmp_path / "src.pt", src, games_trained=0)
    target = Network(NetworkConfig(encoder="rich", hidden=(4,)))  # names the encoder only
    history = run_supervised(
        labels, tmp_path / "wide.pt", SupervisedConfig(epochs=1, patience=1, seed=1), network=target,
        init_from=tmp_path / "src.pt",
    )  # fmt: skip
    data = load_labelled(labels)
    held = validation_mask(data.ids, SupervisedConfig().val_fraction, SupervisedConfig().split_seed)
    val = data.subset(held)
    src_loss, _ = evaluate_loss(
        src, torch.from_numpy(src.encoder.encode(val.boards)), torch.from_numpy(val.targets)
    )
    assert history.initial_val_loss == pytest.approx(src_loss, abs=1e-5)
    ckpt = load_checkpoint(tmp_path / "wide.pt")
    assert ckpt.network.encoder.key == "rich@1" and ckpt.network.config.hidden == (16,)
    assert ckpt.extra["supervised"][-1]["source"]["widened_to"] == "rich@1"


def test_run_supervised_can_give_a_checkpoint_a_crashed_net(labels, tmp_path):
    """``init_from`` with a network that has a crashed net, on the checkpoint's own encoder: training
    starts at the source's loss (the crashed net a copy of its contact net) and the checkpoint has
    three nets."""
    from nard_ai.model.network import save_checkpoint

    torch.manual_seed(5)
    src = Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True))
    save_checkpoint(tmp_path / "src.pt", src, games_trained=0)
    target = Network(NetworkConfig(encoder="rich", hidden=(4,), race_net=True, crashed_net=True))
    history = run_supervised(
        labels, tmp_path / "three.pt", SupervisedConfig(epochs=1, patience=1, seed=1), network=target,
        init_from=tmp_path / "src.pt",
    )  # fmt: skip
    data = load_labelled(labels)
    val = data.subset(
        validation_mask(data.ids, SupervisedConfig().val_fraction, SupervisedConfig().split_seed)
    )
    src_loss, _ = evaluate_loss(
        src, torch.from_numpy(src.encoder.encode(val.boards)), torch.from_numpy(val.targets)
    )
    assert history.initial_val_loss == pytest.approx(src_loss, abs=1e-5)
    ckpt = load_checkpoint(tmp_path / "three.pt")
    assert ckpt.network.config.crashed_net and ckpt.network.config.hidden == (16,)
    assert ckpt.extra["supervised"][-1]["source"]["crashed_net"] is True


def test_the_cosine_schedule_falls_from_lr_to_zero():
    from nard_ai.training.supervised import scheduled_lr

    cosine = SupervisedConfig(lr=1e-3, lr_schedule="cosine")
    assert scheduled_lr(cosine, 0, 100) == pytest.approx(1e-3)
    assert scheduled_lr(cosine, 50, 100) == pytest.approx(0.5e-3)  # (1 + cos(pi / 2)) / 2
    assert scheduled_lr(cosine, 100, 100) == pytest.approx(0.0, abs=1e-12)
    assert scheduled_lr(SupervisedConfig(lr=1e-3), 50, 100) == 1e-3  # constant
    with pytest.raises(ValueError, match="lr_schedule must be one of constant, cosine"):
        SupervisedConfig(lr_schedule="step").validate()


def test_a_cosine_run_sets_the_rate_of_every_step(labels, monkeypatch):
    """The optimizer's rate follows the schedule step by step (recorded at each AdamW step): lr at the
    first, falling, about 1e-3 of lr at the last of the last epoch; a constant run keeps lr."""
    from nard_ai.training.supervised import scheduled_lr

    data = load_labelled(labels)
    held = validation_mask(data.ids, 0.25)
    train, val = data.subset(~held), data.subset(held)
    seen = []
    step = torch.optim.AdamW.step

    def recording_step(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    rates = {}
    for schedule in ("constant", "cosine"):
        seen.clear()
        config = SupervisedConfig(lr=3e-3, batch_size=32, epochs=3, patience=3, lr_schedule=schedule)
        train_supervised(_small_network(), train, val, config)
        rates[schedule] = list(seen)
    steps = 3 * -(-len(train) // 32)
    assert len(rates["cosine"]) == len(rates["constant"]) == steps
    assert set(rates["constant"]) == {3e-3}
    assert rates["cosine"][0] == pytest.approx(3e-3)
    assert all(a > b for a, b in zip(rates["cosine"][:-1], rates["cosine"][1:], strict=True))
    assert (
        rates["cosine"][-1] == pytest.approx(scheduled_lr(config, steps - 1, steps))
        and rates["cosine"][-1] < 1e-5
    )


def test_fresh_nets_start_anew_and_the_others_are_kept(labels, tmp_path):
    """``fresh=("race",)``: the widened network's contact and crashed nets are the checkpoint's (same
    outputs on contact boards), its race net new random weights (other outputs on races)."""
    from nard_ai.core.classes import race_flags
    from nard_ai.model.network import save_checkpoint
    from nard_ai.training.supervised import widened

    torch.manual_seed(6)
    src = Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True, crashed_net=True))
    boards = load_labelled(labels).boards
    race = np.asarray(race_flags(boards), dtype=bool)
    assert race.any() and (~race).any()
    wide = widened(src, "expert_race", boards[:64], fresh=("race",))
    np.testing.assert_allclose(wide.probs6(boards[~race]), src.probs6(boards[~race]), atol=1e-6)
    assert np.abs(wide.probs6(boards[race]) - src.probs6(boards[race])).max() > 1e-3
    same = widened(src, "rich", boards[:64], fresh=("race",))  # the same encoder: only a new race net
    np.testing.assert_allclose(same.probs6(boards[~race]), src.probs6(boards[~race]), atol=1e-6)
    with pytest.raises(ValueError, match="fresh net 'bar'"):
        widened(src, "expert", boards[:64], fresh=("bar",))
    two = Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=False))
    with pytest.raises(ValueError, match="the new network's nets are contact"):
        widened(two, "expert", boards[:64], fresh=("race",))
    # through run_supervised: recorded in the run's source; without init_from an error
    save_checkpoint(tmp_path / "src.pt", src, games_trained=0)
    target = Network(NetworkConfig(encoder="expert_race", hidden=(4,), race_net=True, crashed_net=True))
    run_supervised(
        labels, tmp_path / "fresh.pt", SupervisedConfig(epochs=1, patience=1), network=target,
        init_from=tmp_path / "src.pt", fresh=("race",),
    )  # fmt: skip
    assert load_checkpoint(tmp_path / "fresh.pt").extra["supervised"][-1]["source"]["fresh"] == ["race"]
    # a fresh net the labels have no rows for would stay random: an error, before any file is written
    contact_only = tmp_path / "contact"
    contact_only.mkdir()
    data = load_labelled(labels)
    rows = np.flatnonzero(~race)
    csv = contact_only / "labels-00000.csv"
    atomic_write_bytes(csv, format_labels_csv([data.ids[i] for i in rows], data_probs(labels)[rows]))
    (contact_only / "labels-00000.json").write_text(json.dumps({"csv_sha256": file_sha256(csv)}))
    with pytest.raises(ValueError, match="fresh net 'race' would stay untrained"):
        run_supervised(
            contact_only, tmp_path / "none.pt", SupervisedConfig(epochs=1), network=target,
            init_from=tmp_path / "src.pt", fresh=("race",),
        )  # fmt: skip
    assert not (tmp_path / "none.pt").exists()
    with pytest.raises(ValueError, match="fresh nets need init_from"):
        run_supervised(labels, tmp_path / "x.pt", SupervisedConfig(epochs=1), network=target, fresh=("race",))


def data_probs(folder):
    """The gnubg cumulative probabilities of a labels folder, in its row order."""
    from nard_ai.training.store import read_labels

    return read_labels(folder)[1]


def test_a_new_network_is_written_even_when_no_epoch_beats_its_start(labels, tmp_path):
    """A new (here widened) network whose run scores no epoch (stopped at once) is still written, as it
    started, with the run's record: the run asked for a checkpoint."""
    from nard_ai.model.network import save_checkpoint

    torch.manual_seed(7)
    src = Network(NetworkConfig(encoder="td198", hidden=(8,), race_net=False))
    save_checkpoint(tmp_path / "src.pt", src, games_trained=0)
    target = Network(NetworkConfig(encoder="rich", hidden=(4,)))
    history = run_supervised(
        labels, tmp_path / "w.pt", SupervisedConfig(epochs=1, patience=1), network=target,
        init_from=tmp_path / "src.pt", should_stop=lambda: True,
    )  # fmt: skip
    assert history.best_epoch == 0
    ckpt = load_checkpoint(tmp_path / "w.pt")
    assert ckpt.extra["supervised"][-1]["best_epoch"] == 0
    assert ckpt.network.encoder.key == "rich@1"
    boards = load_labelled(labels).boards[:50]
    np.testing.assert_allclose(ckpt.network.probs6(boards), src.probs6(boards), atol=1e-6)


def test_train_py_refuses_a_damaged_shard_and_leaves_out_an_unfinished_one(tmp_path):
    """``train.py --supervised FOLDER`` on a two-shard folder the label command wrote: one shard truncated
    (``head -c 500``) or with a row replaced no longer matches its sidecar's SHA-256, a one-line error
    naming it (exit 2, no traceback, no checkpoint) rather than training on the other shard alone; a shard
    without a sidecar (a labelling run killed mid-shard) is still left out."""
    import re
    import shutil

    from conftest import run_train_py

    from nard_ai.training.labels import make_plan, run_labels
    from nard_ai.training.positions import write_position_set

    evaluator = NetworkEvaluator(load_checkpoint(default_checkpoint_path()).network)
    positions = tmp_path / "pos"
    write_position_set(
        positions, generate_positions(evaluator, 40, 3, pool=32), shard_size=20,
        extra={"network": {"path": str(default_checkpoint_path())}},
    )  # fmt: skip
    whole = tmp_path / "whole"
    run_labels(positions, whole, make_plan("0ply"), workers=1, progress=False)
    assert len(load_labelled(whole)) == 40
    good = (whole / "labels-00001.csv").read_bytes()
    lines = good.decode().splitlines(keepends=True)
    edited = "".join([*lines[:5], "garbage,row\n", *lines[6:]]).encode()
    for k, damage in enumerate((good[:500], edited)):
        lab = tmp_path / f"lab{k}"
        shutil.copytree(whole, lab)
        (lab / "labels-00001.csv").write_bytes(damage)
        message = (
            f"{lab / 'labels-00001.csv'}: its SHA-256 does not match labels-00001.json (damaged or edited "
            "since it was written); rerun the label command with the same settings (its resume relabels "
            "this shard) or remove both files"
        )
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            load_labelled(lab)
        ckpt = tmp_path / f"n{k}.pt"
        argv = ["--supervised", str(lab), "--checkpoint", str(ckpt), "--encoder", "td198", "--no-race-net",
                "--hidden", "8", "--epochs", "1", "--no-progress", "--threads", "1"]  # fmt: skip
        r = run_train_py(argv, tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.strip().splitlines()[-1] == f"train.py: error: {message}"
        assert not ckpt.exists()
    (lab / "labels-00001.json").unlink()  # unfinished: a CSV without its sidecar
    assert load_labelled(lab).ids == load_labelled(whole).ids[:20]
    r = run_train_py(argv, tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"{lab}: 20 positions" in r.stderr and ckpt.exists()


def _relu_network(seed=0):
    torch.manual_seed(seed)
    return Network(NetworkConfig(encoder="td198", hidden=(16,), activation="relu"))


def test_a_diverging_run_stops_and_never_writes_non_finite_weights(labels, tmp_path):
    """Defect D1: at lr 1e30 AdamW's first step moves every weight by about 1e30, so a relu net's next
    logits overflow float32 (about 1e30 x 1e30) and the loss is NaN; the run went on, printing "val loss
    nan" each epoch, and exited 0. Now :class:`TrainingDiverged` stops it in epoch 1; the network comes back
    with its best (here: its starting) weights, and a resumed checkpoint is left byte for byte as it was."""
    import re

    from nard_ai.model.learn import TrainingDiverged
    from nard_ai.model.network import save_checkpoint

    data = load_labelled(labels)
    held = validation_mask(data.ids, 0.25)
    net = _relu_network()
    start = {k: v.clone() for k, v in net.state_dict().items()}
    config = SupervisedConfig(lr=1e30, batch_size=32, epochs=3, val_fraction=0.25)
    with pytest.raises(
        TrainingDiverged, match=r"^non-finite training loss \((nan|inf)\) in epoch 1, minibatch \d+$"
    ):
        train_supervised(net, data.subset(~held), data.subset(held), config)
    for name, value in net.state_dict().items():
        assert torch.equal(value, start[name]), name
    path = save_checkpoint(tmp_path / "start.pt", _relu_network(), games_trained=5)
    before = path.read_bytes()
    with pytest.raises(
        TrainingDiverged, match=rf"in epoch 1, minibatch \d+; {re.escape(str(path))} left as it was$"
    ):
        run_supervised(labels, path, config)
    assert path.read_bytes() == before
    new = tmp_path / "new.pt"
    with pytest.raises(TrainingDiverged, match=rf"; nothing written to {re.escape(str(new))}$"):
        run_supervised(labels, new, config, network=_relu_network())
    assert not new.exists()


def test_an_interrupted_run_is_recorded_as_such(labels, tmp_path):
    """``should_stop`` in the middle of epoch 2: epoch 1's weights are written (the best so far) and the
    run's record says ``"interrupted": true``; a run that ends by itself has no such key."""
    calls = []

    def stop_in_epoch_two() -> bool:  # polled before each of the 10 minibatches of an epoch (300 rows / 32)
        calls.append(1)
        return len(calls) > 12

    path = tmp_path / "sup.pt"
    config = SupervisedConfig(lr=3e-3, batch_size=32, epochs=5, patience=5, val_fraction=0.25)
    history = run_supervised(labels, path, config, network=_small_network(), should_stop=stop_in_epoch_two)
    assert history.interrupted and [e.epoch for e in history.epochs] == [1]
    record = load_checkpoint(path).extra["supervised"][-1]
    assert record["interrupted"] is True and record["best_epoch"] == 1
    run_supervised(labels, path, SupervisedConfig(lr=1e-3, batch_size=64, epochs=1, val_fraction=0.25))
    assert "interrupted" not in load_checkpoint(path).extra["supervised"][-1]
