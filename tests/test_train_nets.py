"""Supervised training on several labels folders, and of chosen nets only (``train_nets``, train.py
``--train-nets``): a network's contact and crashed nets fitted to labels while its race net keeps its
weights bit for bit and the rows routed to it are left out. A few seconds."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import run_train_py, write_label_shard

from nard_ai.core.classes import crashed_any, race_flags
from nard_ai.formats.position_id import position_id
from nard_ai.model.network import Network, NetworkConfig, load_checkpoint, save_checkpoint
from nard_ai.training.supervised import SupervisedConfig, load_labelled, run_supervised

PROBS = [0.6, 0.2, 0.01, 0.1, 0.005]  # gnubg's cumulative win, win g, win bg, lose g, lose bg
OTHER = [0.3, 0.05, 0.0, 0.2, 0.01]


@pytest.fixture()
def two_folders(tmp_path, mixed_boards):
    """The mixed boards (contact, crashed and race) split between two labels folders, each with its
    own constant label, so a row's label says which folder it came from."""
    half = len(mixed_boards) // 2
    a, b = tmp_path / "a", tmp_path / "b"
    write_label_shard(a, "00000", mixed_boards[:half], np.tile([PROBS], (half, 1)))
    write_label_shard(b, "00000", mixed_boards[half:], np.tile([OTHER], (len(mixed_boards) - half, 1)))
    return a, b


def _three_nets(seed: int = 3) -> Network:
    torch.manual_seed(seed)
    return Network(NetworkConfig(encoder="expert_race", hidden=(8,), race_net=True, crashed_net=True))


def test_several_folders_load_in_the_order_given(two_folders, mixed_boards):
    a, b = two_folders
    both = load_labelled([a, b])
    assert both.ids == [position_id(x) for x in mixed_boards]  # a's rows, then b's
    np.testing.assert_array_equal(both.boards, mixed_boards)
    first, second = load_labelled(a), load_labelled(b)
    np.testing.assert_array_equal(both.targets, np.concatenate([first.targets, second.targets]))
    assert load_labelled([b, a]).ids == second.ids + first.ids
    with pytest.raises(ValueError, match="named twice"):
        load_labelled([a, b, a.parent / "a"])
    with pytest.raises(ValueError, match="no labels folder given"):
        load_labelled([])
    (a.parent / "empty").mkdir()
    with pytest.raises(ValueError, match="empty: no complete label shards"):
        load_labelled([a, a.parent / "empty"])
    with pytest.raises(FileNotFoundError, match="no labels folder"):
        load_labelled([a, a.parent / "missing"])


def test_train_nets_freezes_the_others_and_leaves_their_rows_out(two_folders, mixed_boards, tmp_path):
    """Contact and crashed nets trained: the race net comes out bit for bit, the other two change; the
    run's record counts the race rows left out (the boards' own race flags, :mod:`nard_ai.core.classes`)."""
    a, b = two_folders
    net = _three_nets()
    path = tmp_path / "t.pt"
    save_checkpoint(path, net)  # continued (resume): every net starts trained, as the checkpoint's
    config = SupervisedConfig(lr=3e-3, batch_size=64, epochs=2, patience=2)
    history = run_supervised([a, b], path, config, train_nets=("contact", "crashed"))
    assert history.best_epoch >= 1
    trained = load_checkpoint(path).network
    for k, v in trained.race_mlp.state_dict().items():
        assert torch.equal(v, net.race_mlp.state_dict()[k]), k
    assert any(not torch.equal(v, net.mlp.state_dict()[k]) for k, v in trained.mlp.state_dict().items())
    assert any(
        not torch.equal(v, net.crashed_mlp.state_dict()[k])
        for k, v in trained.crashed_mlp.state_dict().items()
    )
    record = load_checkpoint(path).extra["supervised"][-1]
    race = int(np.asarray(race_flags(mixed_boards), dtype=bool).sum())
    assert record["train_nets"] == ["contact", "crashed"]
    assert record["labels"] == [str(a), str(b)]
    assert record["rows"]["left_out"] == race
    assert record["rows"]["train"] + record["rows"]["val"] == len(mixed_boards) - race
    # only the crashed net, on a network given in memory and widened from a checkpoint (init_from, a new
    # encoder): contact and race rows out, the contact net frozen too; the freeze ends with the run
    src = tmp_path / "src.pt"
    torch.manual_seed(5)
    save_checkpoint(src, Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=True, crashed_net=True)))
    target = _three_nets()
    race_rows = np.asarray(race_flags(mixed_boards), dtype=bool)
    crashed = int((crashed_any(mixed_boards) & ~race_rows).sum())  # gnubg's crashed class, not a race
    assert 0 < crashed < len(mixed_boards) - race
    run_supervised([a, b], tmp_path / "c.pt", config, network=target, init_from=src, train_nets=("crashed",))
    assert all(q.requires_grad for q in target.parameters())
    record = load_checkpoint(tmp_path / "c.pt").extra["supervised"][-1]
    assert record["rows"]["train"] + record["rows"]["val"] == crashed
    assert record["rows"]["left_out"] == len(mixed_boards) - crashed
    probe = mixed_boards[~race_rows & ~crashed_any(mixed_boards)]  # contact boards: the frozen contact net
    np.testing.assert_allclose(
        load_checkpoint(tmp_path / "c.pt").network.probs6(probe), load_checkpoint(src).network.probs6(probe),
        atol=1e-6,
    )  # fmt: skip


def test_train_nets_errors(two_folders, mixed_boards, tmp_path):
    a, _ = two_folders
    config = SupervisedConfig(epochs=1)
    torch.manual_seed(2)
    two = Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=True))
    save_checkpoint(tmp_path / "two.pt", two)
    with pytest.raises(ValueError, match="train net 'crashed': the network's nets are contact, race"):
        run_supervised(a, tmp_path / "two.pt", config, train_nets=("crashed",))
    # a new network (neither resumed nor init_from): the nets left out would stay random
    with pytest.raises(ValueError, match="a new network's crashed, race would stay random"):
        run_supervised(a, tmp_path / "x.pt", config, network=_three_nets(), train_nets=("contact",))
    # naming every net of a new network is training it all
    run_supervised(
        a, tmp_path / "all.pt", config, network=_three_nets(), train_nets=("contact", "crashed", "race")
    )
    assert load_checkpoint(tmp_path / "all.pt").extra["supervised"][-1]["train_nets"] == [
        "contact",
        "crashed",
        "race",
    ]
    save_checkpoint(tmp_path / "src.pt", _three_nets())
    with pytest.raises(ValueError, match="fresh net 'race' is not among the trained nets"):
        run_supervised(
            a, tmp_path / "x.pt", config, network=_three_nets(), init_from=tmp_path / "src.pt",
            fresh=("race",), train_nets=("contact",),
        )  # fmt: skip
    races = tmp_path / "races"
    race = np.asarray(race_flags(mixed_boards), dtype=bool)
    write_label_shard(races, "00000", mixed_boards[race], np.tile([PROBS], (int(race.sum()), 1)))
    with pytest.raises(ValueError, match="races: 0 training and 0 held-out rows of the nets contact"):
        run_supervised(races, tmp_path / "src.pt", config, train_nets=("contact",))
    assert not (tmp_path / "x.pt").exists()


def test_train_py_takes_several_folders_and_train_nets(two_folders, tmp_path):
    """``train.py --supervised A,B --resume --train-nets contact,crashed``, as a user runs it."""
    a, b = two_folders
    ckpt = tmp_path / "n.pt"
    save_checkpoint(ckpt, _three_nets())
    race_before = load_checkpoint(ckpt).network.race_mlp.state_dict()
    r = run_train_py(
        ["--supervised", f"{a},{b}", "--checkpoint", str(ckpt), "--resume", "--train-nets", "contact,crashed",
         "--epochs", "1", "--no-progress", "--threads", "1"], tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "of other nets left out" in r.stderr
    saved = load_checkpoint(ckpt)
    assert saved.extra["supervised"][-1]["train_nets"] == ["contact", "crashed"]
    for k, v in saved.network.race_mlp.state_dict().items():
        assert torch.equal(v, race_before[k]), k
    r = run_train_py(
        ["--supervised", f"{a},{tmp_path / 'missing'}", "--checkpoint", str(ckpt), "--resume", "--no-progress"],
        tmp_path,
    )  # fmt: skip
    assert r.returncode == 2 and "no labels folder" in r.stderr and "Traceback" not in r.stderr


def test_train_py_supervised_on_a_new_network_and_one_line_errors(two_folders, mixed_boards, tmp_path):
    """A new network fitted by train.py --supervised (neither --resume nor --init-from; this crashed with a
    TypeError in the size check before 2026-12-05); --train-nets on a new network, and a folder without
    rows of the trained nets, are one line naming the folder as given (not a Python list)."""
    a, _ = two_folders
    r = run_train_py(
        ["--supervised", str(a), "--checkpoint", str(tmp_path / "new.pt"), "--encoder", "expert_race",
         "--crashed-net", "--hidden", "8", "--epochs", "1", "--no-progress", "--threads", "1"], tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(tmp_path / "new.pt").network.config.hidden == (8,)
    r = run_train_py(
        ["--supervised", str(a), "--checkpoint", str(tmp_path / "new2.pt"), "--encoder", "expert_race",
         "--crashed-net", "--hidden", "8", "--train-nets", "contact", "--no-progress"], tmp_path,
    )  # fmt: skip
    assert r.returncode == 2 and "a new network's crashed, race would stay random" in r.stderr
    assert not (tmp_path / "new2.pt").exists()
    races = tmp_path / "races"
    race = np.asarray(race_flags(mixed_boards), dtype=bool)
    write_label_shard(races, "00000", mixed_boards[race], np.tile([PROBS], (int(race.sum()), 1)))
    r = run_train_py(
        ["--supervised", str(races), "--checkpoint", str(tmp_path / "new.pt"), "--resume", "--train-nets",
         "contact", "--no-progress"], tmp_path,
    )  # fmt: skip
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and err[-1] == (
        f"train.py: error: {races}: 0 training and 0 held-out rows of the nets contact: need both"
    )
