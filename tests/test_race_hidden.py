"""A race net of its own shape (``NetworkConfig.race_hidden``, ``train.py --race-hidden``; issue 14, section 3:
"larger networks where they pay"): the race net of the default network is two hidden layers of 512 while the
contact and crashed nets keep a single layer of their own (1,024 units in generation 16). Every path that
evaluates a network (training's ``forward``, ``predict``, search's embedding fast path, the batch-invariant
evaluator, the ONNX graph) must take each net's own layers;
the checkpoint describes the shape, and older checkpoints read as before. A few seconds.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import run_train_py_at_once, write_label_shard

from nard_ai.core.classes import race_flags
from nard_ai.eval.aligned import BatchInvariantEvaluator
from nard_ai.eval.evaluator import NetworkEvaluator
from nard_ai.model.network import (
    RACE_ROUTE,
    Network,
    NetworkConfig,
    config_dict,
    load_checkpoint,
    save_checkpoint,
)
from nard_ai.training.supervised import widened


def _network(seed=0, race_hidden=(12, 10)):
    torch.manual_seed(seed)
    config = NetworkConfig(
        encoder="expert_race", hidden=(8,), race_net=True, crashed_net=True, race_hidden=race_hidden
    )
    return Network(config).eval()


def test_the_race_net_has_its_own_layers_and_the_others_the_common_ones():
    net = _network()
    race = [m.out_features for m in net.race_mlp if isinstance(m, torch.nn.Linear)]
    contact = [m.out_features for m in net.mlp if isinstance(m, torch.nn.Linear)]
    crashed = [m.out_features for m in net.crashed_mlp if isinstance(m, torch.nn.Linear)]
    assert race == [12, 10, 6] and contact == crashed == [8, 6]
    assert net.config.net_hidden("race_mlp") == (12, 10) and net.config.net_hidden("mlp") == (8,)
    assert NetworkConfig(hidden=(8,), race_net=True).net_hidden("race_mlp") == (8,)
    # the common shape given as race_hidden is the same network, described the same way
    assert NetworkConfig(hidden=(8,), race_net=True, race_hidden=[8]).race_hidden is None


def test_a_race_shape_needs_a_race_net_and_positive_sizes():
    with pytest.raises(ValueError, match="race_hidden needs race_net"):
        NetworkConfig(encoder="rich", race_net=False, race_hidden=(16,))
    with pytest.raises(ValueError, match="race_hidden must be one or more positive sizes"):
        NetworkConfig(encoder="rich", race_net=True, race_hidden=(16, 0))
    with pytest.raises(ValueError, match="race_hidden must be one or more positive sizes"):
        NetworkConfig(encoder="rich", race_net=True, race_hidden=())


def test_every_path_takes_each_nets_own_layers(mixed_boards):
    """forward (training), predict, probs6 (search's fast path, per-net first-layer tables of different
    widths) and the batch-invariant evaluator give the same outcomes; a race row is the race MLP's."""
    net = _network(seed=1)
    x = torch.from_numpy(net.encoder.encode(mixed_boards))
    with torch.no_grad():
        want = torch.softmax(net(x), -1).numpy()
    np.testing.assert_allclose(net.predict(x).numpy(), want, atol=1e-6)
    np.testing.assert_allclose(net.probs6(mixed_boards), want, atol=1e-6)
    race = net.routes(mixed_boards) == RACE_ROUTE
    with torch.no_grad():
        own = torch.softmax(net.race_mlp(x[race]), -1).numpy()
    np.testing.assert_allclose(want[race], own, atol=1e-6)
    np.testing.assert_allclose(net.probs6(mixed_boards[race]), own, atol=1e-6)  # a batch of races only
    plain = NetworkEvaluator(net).evaluate(mixed_boards)
    np.testing.assert_allclose(
        BatchInvariantEvaluator(NetworkEvaluator(net)).evaluate(mixed_boards), plain, atol=1e-6
    )


def test_the_checkpoint_keeps_the_race_shape_and_others_read_as_before(tmp_path, mixed_boards):
    net = _network(seed=2)
    path = save_checkpoint(tmp_path / "wide.pt", net)
    payload = torch.load(path, weights_only=False)
    assert payload["network"]["race_hidden"] == [12, 10]
    loaded = load_checkpoint(path).network
    assert loaded.config == net.config and loaded.config.race_hidden == (12, 10)
    np.testing.assert_array_equal(loaded.probs6(mixed_boards), net.probs6(mixed_boards))
    same = Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=True))
    assert "race_hidden" not in config_dict(same.config)  # described as before race_hidden existed
    payload = torch.load(save_checkpoint(tmp_path / "same.pt", same), weights_only=False)
    assert "race_hidden" not in payload["network"]
    assert load_checkpoint(tmp_path / "same.pt").network.config.race_hidden is None


def test_the_onnx_graph_takes_each_nets_own_layers(tmp_path, mixed_boards):
    ort = pytest.importorskip("onnxruntime")
    from nard_ai.model import onnx_export

    net = _network(seed=3)
    result = onnx_export.export_onnx(tmp_path / "wide.onnx", save_checkpoint(tmp_path / "wide.pt", net))
    assert json.loads(result.metadata["network"])["race_hidden"] == [12, 10]
    session = ort.InferenceSession(str(result.path), providers=["CPUExecutionProvider"])
    (outcomes,) = session.run(["outcomes"], {onnx_export.INPUT_NAME: net.encoder.encode(mixed_boards)})
    np.testing.assert_allclose(outcomes, net.probs6(mixed_boards), atol=1e-5)


def test_widening_to_a_new_race_shape_needs_a_fresh_race_net(mixed_boards):
    """The contact and crashed nets are copied (the same outputs on contact mixed_boards), the race net of the new
    shape starts from random weights; a new shape without ``fresh=("race",)`` cannot be copied: an error."""
    torch.manual_seed(5)
    src = Network(NetworkConfig(encoder="expert_race", hidden=(8,), race_net=True, crashed_net=True))
    race = np.asarray(race_flags(mixed_boards), dtype=bool)
    wide = widened(src, "expert_race", mixed_boards[:64], fresh=("race",), race_hidden=(16, 16))
    assert wide.config.race_hidden == (16, 16) and wide.race_mlp[0].out_features == 16
    np.testing.assert_allclose(wide.probs6(mixed_boards[~race]), src.probs6(mixed_boards[~race]), atol=1e-6)
    with pytest.raises(ValueError, match="name it in fresh"):
        widened(src, "expert_race", mixed_boards[:64], fresh=("crashed",), race_hidden=(16, 16))
    # the race shape of the source is kept when none is given (and the common shape reads as None)
    again = widened(wide, "expert_race", mixed_boards[:64], fresh=("crashed",))
    assert again.config.race_hidden == (16, 16)
    np.testing.assert_allclose(again.probs6(mixed_boards[race]), wide.probs6(mixed_boards[race]), atol=1e-6)
    back = widened(wide, "expert_race", mixed_boards[:64], fresh=("race",), race_hidden=(8,))
    assert back.config.race_hidden is None
    no_race = Network(NetworkConfig(encoder="rich", hidden=(8,)))
    with pytest.raises(ValueError, match="no race net to reshape"):
        widened(no_race, "expert", mixed_boards[:64], race_hidden=(16,))


#: --race-hidden values refused in the parsing, with the words of their error
BAD_RACE_HIDDEN = (("12,x", "comma-separated hidden layer sizes"), ("0", "1 .. 4 layers"),
                   ("8,8,8,8,8", "1 .. 4 layers"), ("5000", "1 .. 4 layers"))  # fmt: skip


def test_train_py_gives_a_fresh_race_net_the_shape_of_race_hidden(tmp_path, mixed_boards):
    """``--supervised L --init-from C --fresh-nets race --race-hidden 12,10``: the race net of that shape is
    trained, the contact net kept; without ``--fresh-nets race`` a one-line error (exit 2), as for a bad list."""
    folder = tmp_path / "labels"
    write_label_shard(
        folder, "00000", mixed_boards, np.tile([[0.6, 0.2, 0.01, 0.1, 0.005]], (len(mixed_boards), 1))
    )
    torch.manual_seed(4)
    src = Network(NetworkConfig(encoder="expert_race", hidden=(8,), race_net=True, crashed_net=True))
    save_checkpoint(tmp_path / "src.pt", src)
    base = ["--supervised", str(folder), "--init-from", str(tmp_path / "src.pt"), "--encoder", "expert_race",
            "--crashed-net", "--epochs", "1", "--no-progress", "--threads", "1"]  # fmt: skip
    # a.pt's run and the refused runs that name neither a.pt nor b.pt, at once (conftest.run_at_once); the
    # refused ones in a folder of their own, so that runs/ here is a.pt's alone
    elsewhere = tmp_path / "refused"
    elsewhere.mkdir()
    a_run, too_wide, *refused = run_train_py_at_once(
        [
            ([*base, "--checkpoint", str(tmp_path / "a.pt"), "--fresh-nets", "race", "--race-hidden", "12,10"],
             tmp_path),
            ([*base, "--checkpoint", str(tmp_path / "c.pt"), "--fresh-nets", "race", "--race-hidden", "4096",
              "--batch-size", "65536"], elsewhere),
            *[([*base, "--checkpoint", str(tmp_path / "c.pt"), "--fresh-nets", "race", "--race-hidden", bad],
               elsewhere) for bad, _ in BAD_RACE_HIDDEN],
            (["--games", "4", "--pool", "4", "--no-race-net", "--race-hidden", "16", "--checkpoint",
              str(tmp_path / "d.pt"), "--no-progress"], elsewhere),
        ]
    )  # fmt: skip
    r = a_run
    assert r.returncode == 0, r.stderr
    ckpt = load_checkpoint(tmp_path / "a.pt")
    assert ckpt.network.config.race_hidden == (12, 10) and ckpt.network.config.hidden == (8,)
    assert ckpt.extra["supervised"][-1]["source"]["race_hidden"] == [12, 10]
    runs = sorted((tmp_path / "runs").iterdir())  # the TensorBoard run of a.pt
    # b.pt's refused run (it must leave no new run) and the --resume of a.pt, at once: the resumed run
    # writes its TensorBoard run in a folder of its own, so that runs/ here holds b.pt's alone
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    r, resume = run_train_py_at_once(
        [
            ([*base, "--checkpoint", str(tmp_path / "b.pt"), "--race-hidden", "12,10"], tmp_path),
            ([*base[:2], "--checkpoint", str(tmp_path / "a.pt"), "--resume", "--race-hidden", "16", "--epochs",
              "1", "--no-progress", "--threads", "1"], resumed),
        ]
    )  # fmt: skip
    assert (
        r.returncode == 2
        and "name it in fresh (--fresh-nets race)" in r.stderr
        and "Traceback" not in r.stderr
    )
    assert "--race-hidden" in r.stderr.strip().splitlines()[-1]
    assert (
        not (tmp_path / "b.pt").exists() and sorted((tmp_path / "runs").iterdir()) == runs
    )  # no new run left
    # on --resume the checkpoint's shape is kept, and the flag is said to be ignored
    r = resume
    assert r.returncode == 0, r.stderr
    assert "ignoring --race-hidden on --resume" in r.stderr
    assert load_checkpoint(tmp_path / "a.pt").network.config.race_hidden == (12, 10)
    # a race width beyond the size limits is named as --race-hidden's, not --hidden's
    r = too_wide
    assert r.returncode == 2 and "--batch-size x --race-hidden (its widest layer) must be at most" in r.stderr
    for (bad, message), r in zip(BAD_RACE_HIDDEN, refused[:-1], strict=True):
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (bad, r.stderr)
    r = refused[-1]
    assert r.returncode == 2 and "--race-hidden: needs --race-net" in r.stderr
    assert not (tmp_path / "c.pt").exists() and not (tmp_path / "d.pt").exists()
