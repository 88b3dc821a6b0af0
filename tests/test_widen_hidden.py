"""Wider contact and crashed nets from a trained network (``widened(..., hidden=)``, ``train.py --init-from C
--hidden N``; issue 14, section 3: "larger networks where they pay"). A copied net may only get wider layers, as
many as it had: the old units keep their weights, the new ones start from random input weights and zero weights
to the layer above, so the widened network computes exactly what its source computes (Net2Net's function-
preserving widening) and training starts where the source is. Another depth, or a narrower layer, needs the net
in ``fresh``. A few seconds.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import run_train_py_at_once, write_label_shard

from nard_ai.core.classes import race_flags
from nard_ai.model.network import Network, NetworkConfig, load_checkpoint, save_checkpoint
from nard_ai.training.supervised import widened


def _folder(tmp_path, name):
    """A new empty folder ``tmp_path/run-NAME``: the working folder of one train.py run."""
    folder = tmp_path / f"run-{name}"
    folder.mkdir()
    return folder


def _source(hidden=(8,), race_hidden=None, seed=3):
    torch.manual_seed(seed)
    return Network(
        NetworkConfig(
            encoder="expert_race", hidden=hidden, race_net=True, crashed_net=True, race_hidden=race_hidden
        )
    ).eval()


@pytest.mark.parametrize(("old", "new"), [((8,), (12,)), ((8, 6), (12, 10)), ((8, 6), (8, 9))])
def test_wider_layers_compute_what_the_source_computes(mixed_boards, old, new):
    """Every board (contact, crashed, race) gets the source's six probabilities to float precision; the race
    net keeps the source's shape (stored, since it differs from the new ``hidden``); the new units are not
    all alike (random input weights) and reach the layer above only through zero weights."""
    src = _source(old)
    wide = widened(src, "expert_race", mixed_boards[:64], hidden=new)
    assert wide.config.hidden == new and wide.config.net_hidden("race_mlp") == old
    assert wide.config.race_hidden == old  # differs from the new hidden: stored
    np.testing.assert_allclose(wide.probs6(mixed_boards), src.probs6(mixed_boards), atol=1e-6)
    for mlp, src_mlp in ((wide.mlp, src.mlp), (wide.crashed_mlp, src.crashed_mlp)):
        linears = [m for m in mlp if isinstance(m, torch.nn.Linear)]
        olds = [m for m in src_mlp if isinstance(m, torch.nn.Linear)]
        for k, (layer, before) in enumerate(zip(linears, olds, strict=True)):
            units, inputs = before.weight.shape
            assert torch.equal(layer.weight[:units, :inputs], before.weight)
            assert not layer.weight[:units, inputs:].any()  # old units ignore new inputs and new units
            if layer.out_features > units:  # new units: random, so they differ from each other
                fresh_rows = layer.weight[units:]
                assert fresh_rows.abs().sum() > 0 and not torch.equal(fresh_rows[0], fresh_rows[-1])
            assert k < len(linears) - 1 or layer.out_features == 6


def test_another_depth_or_a_narrower_layer_needs_fresh_nets(mixed_boards):
    """Weights of another depth or a narrower layer cannot be copied: a ValueError that names the nets to put
    in fresh (train.py's --fresh-nets); with them fresh, the race net is still the source's, exactly."""
    src = _source((8,))
    race = np.asarray(race_flags(mixed_boards), dtype=bool)
    for hidden in ((8, 8), (6,)):
        with pytest.raises(ValueError, match=r"--fresh-nets contact,crashed\)"):
            widened(src, "expert_race", mixed_boards[:64], hidden=hidden)
    with pytest.raises(ValueError, match=r"the checkpoint's crashed net has \[8\].*--fresh-nets crashed\)"):
        widened(src, "expert_race", mixed_boards[:64], hidden=(8, 8), fresh=("contact",))
    deep = widened(src, "expert_race", mixed_boards[:64], hidden=(16, 16), fresh=("contact", "crashed"))
    assert deep.config.hidden == (16, 16) and deep.config.race_hidden == (8,)
    np.testing.assert_allclose(deep.probs6(mixed_boards[race]), src.probs6(mixed_boards[race]), atol=1e-6)


def test_a_race_net_of_its_own_shape_is_kept(mixed_boards):
    """Generation 11's layout (contact 256, race 2 x 512), in small: widening the contact and crashed nets to
    the race net's width keeps the race net's two layers; a race shape equal to the new hidden is stored as
    None (NetworkConfig's convention) and still copied."""
    src = _source((8,), race_hidden=(16, 16))
    wide = widened(src, "expert_race", mixed_boards[:64], hidden=(16,))
    assert wide.config.race_hidden == (16, 16)
    np.testing.assert_allclose(wide.probs6(mixed_boards), src.probs6(mixed_boards), atol=1e-6)
    same = widened(_source((8,), race_hidden=(16,)), "expert_race", mixed_boards[:64], hidden=(16,))
    assert same.config.race_hidden is None and same.config.net_hidden("race_mlp") == (16,)


def test_train_py_widens_the_contact_and_crashed_nets(tmp_path, mixed_boards):
    """``--init-from C --hidden 12``: the trained network has one layer of 12 in its contact and crashed nets
    and C's race net shape; it starts where C is (the run's initial validation loss is C's own, as a
    ``--resume`` of a copy of C measures it on the same split), the source record names the new layers, and
    no "ignoring --hidden" warning. ``--hidden 8`` (C's own) with a fresh crashed net records no new layers.
    ``--layers 2`` without fresh nets: a one-line error (exit 2) naming --fresh-nets; with
    ``--fresh-nets contact,crashed`` it trains."""
    folder = tmp_path / "labels"
    write_label_shard(
        folder, "00000", mixed_boards, np.tile([[0.6, 0.2, 0.01, 0.1, 0.005]], (len(mixed_boards), 1))
    )
    save_checkpoint(tmp_path / "src.pt", _source((8,), race_hidden=(10,)))
    save_checkpoint(tmp_path / "copy.pt", _source((8,), race_hidden=(10,)))
    base = ["--supervised", str(folder), "--init-from", str(tmp_path / "src.pt"), "--encoder", "expert_race",
            "--crashed-net", "--epochs", "1", "--no-progress", "--threads", "1"]  # fmt: skip
    # the five runs are independent: all at once (conftest.run_at_once), each in a working folder of its own
    a_run, copy_run, b_run, c_run, d_run = run_train_py_at_once(
        [
            ([*base, "--checkpoint", str(tmp_path / "a.pt"), "--hidden", "12"], _folder(tmp_path, "a")),
            (["--supervised", str(folder), "--resume", "--checkpoint", str(tmp_path / "copy.pt"), "--epochs", "1",
              "--no-progress", "--threads", "1"], _folder(tmp_path, "copy")),
            ([*base, "--checkpoint", str(tmp_path / "b.pt"), "--hidden", "8", "--fresh-nets", "crashed"],
             _folder(tmp_path, "b")),
            ([*base, "--checkpoint", str(tmp_path / "c.pt"), "--hidden", "12", "--layers", "2"],
             _folder(tmp_path, "c")),
            ([*base, "--checkpoint", str(tmp_path / "d.pt"), "--hidden", "12", "--layers", "2", "--fresh-nets",
              "contact,crashed"], _folder(tmp_path, "d")),
        ]
    )  # fmt: skip
    r = a_run
    assert r.returncode == 0, r.stderr
    assert "ignoring --hidden" not in r.stderr
    ckpt = load_checkpoint(tmp_path / "a.pt")
    assert ckpt.network.config.hidden == (12,) and ckpt.network.config.race_hidden == (10,)
    run = ckpt.extra["supervised"][-1]
    assert run["source"]["hidden"] == [12]
    r = copy_run
    assert r.returncode == 0, r.stderr
    as_is = load_checkpoint(tmp_path / "copy.pt").extra["supervised"][-1]
    assert run["initial_val_loss"] == pytest.approx(as_is["initial_val_loss"], abs=1e-6)
    r = b_run
    assert r.returncode == 0, r.stderr
    assert "hidden" not in load_checkpoint(tmp_path / "b.pt").extra["supervised"][-1]["source"]
    r = c_run
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--fresh-nets contact,crashed)" in r.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "c.pt").exists()
    r = d_run
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(tmp_path / "d.pt").network.config.hidden == (12, 12)


def test_train_py_takes_the_flag_not_given_from_the_checkpoint(tmp_path, mixed_boards):
    """With --init-from, --hidden gives the width and --layers the depth, each only when given; the other is the
    checkpoint's, never train.py's default (128, 1): --hidden 24 on a checkpoint of 2 x 16 widens it to
    2 x 24; --layers 2 alone with fresh nets on a checkpoint of one layer of 16 gives 2 x 16; --layers 1 alone
    on it is its own shape (nothing to widen, said with the layers); a checkpoint whose layers differ in width
    needs --hidden with --layers (one line, exit 2). The size limit takes the widest layer the run trains:
    --batch-size 65536 is refused for a race net of 512 copied from the checkpoint although --hidden's
    default is 128 (65,536 x 512 > 16,777,216)."""
    folder = tmp_path / "labels"
    write_label_shard(
        folder, "00000", mixed_boards, np.tile([[0.6, 0.2, 0.01, 0.1, 0.005]], (len(mixed_boards), 1))
    )
    save_checkpoint(tmp_path / "two16.pt", _source((16, 16)))
    save_checkpoint(tmp_path / "one16.pt", _source((16,)))
    save_checkpoint(tmp_path / "uneven.pt", _source((16, 8)))
    save_checkpoint(tmp_path / "race512.pt", _source((8,), race_hidden=(512,)))
    common = ["--supervised", str(folder), "--encoder", "expert_race", "--crashed-net", "--epochs", "1",
              "--no-progress", "--threads", "1"]  # fmt: skip

    def run(src, out, *flags):
        return [*common, "--init-from", str(tmp_path / src), "--checkpoint", str(tmp_path / out), *flags]

    # the runs are independent: all at once (conftest.run_at_once), each in a working folder of its own
    # but the last, whose folder must stay empty
    empty = tmp_path / "empty"
    empty.mkdir()
    a_run, b_run, c_run, d_run, e_run, resume_run, f_run = run_train_py_at_once(
        [
            (run("two16.pt", "a.pt", "--hidden", "24"), _folder(tmp_path, "a")),
            (run("one16.pt", "b.pt", "--layers", "2", "--fresh-nets", "contact,crashed"), _folder(tmp_path, "b")),
            (run("one16.pt", "c.pt", "--layers", "1"), _folder(tmp_path, "c")),
            (run("uneven.pt", "d.pt", "--layers", "3", "--fresh-nets", "contact,crashed"), _folder(tmp_path, "d")),
            (run("race512.pt", "e.pt", "--batch-size", "65536"), _folder(tmp_path, "e")),
            ([*common[:2], "--resume", "--checkpoint", str(tmp_path / "race512.pt"), "--batch-size", "65536",
              "--epochs", "1", "--no-progress"], _folder(tmp_path, "resume")),
            ([*common, "--init-from", str(tmp_path / "one16.pt"), "--checkpoint", str(empty / "f.pt"), "--layers",
              "3"], empty),
        ]
    )  # fmt: skip
    r = a_run
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(tmp_path / "a.pt").network.config.hidden == (24, 24)
    r = b_run
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(tmp_path / "b.pt").network.config.hidden == (16, 16)
    r = c_run
    assert r.returncode == 2 and "hidden layers [16] are its own" in r.stderr and "Traceback" not in r.stderr
    r = d_run
    assert r.returncode == 2 and "differ in width: give --hidden too" in r.stderr.strip().splitlines()[-1]
    r = e_run
    assert r.returncode == 2 and "--batch-size x the network's widest layer must be at most" in r.stderr
    assert "65,536 x 512" in r.stderr
    r = resume_run
    assert r.returncode == 2 and "65,536 x 512" in r.stderr
    assert not any((tmp_path / f).exists() for f in ("c.pt", "d.pt", "e.pt"))
    # a run refused inside training's setup (here: another depth without fresh nets) leaves no runs/ folder
    # in a directory that had none
    r = f_run
    assert r.returncode == 2 and "--fresh-nets contact,crashed" in r.stderr
    assert list(empty.iterdir()) == []
