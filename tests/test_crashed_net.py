"""The crashed net (issue 14, section 3): gnubg's third network, for crashed contact positions.

A network with ``NetworkConfig(crashed_net=True)`` sends each board to its contact, crashed or race
MLP by gnubg's ``ClassifyPosition`` (``nard_ai.core.classes``), whether it reads the board (search's
fast path), the encoded row (training, ``forward``) or the ONNX graph; a few seconds.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import random_play_positions, random_scattered_positions

from nard_ai.core.board import validate_board
from nard_ai.core.classes import CONTACT, CRASHED, classify_positions
from nard_ai.eval.aligned import BatchInvariantEvaluator
from nard_ai.eval.evaluator import NetworkEvaluator
from nard_ai.model.network import (
    CONTACT_ROUTE,
    CRASHED_ROUTE,
    RACE_ROUTE,
    Network,
    NetworkConfig,
    load_checkpoint,
    route_boards,
    route_rows,
    save_checkpoint,
)


def _crash(board: np.ndarray, keep: int, side: int) -> np.ndarray:
    """``board`` with only ``keep`` checkers of ``side`` (+1 mover, -1 opponent) left, its rearmost
    kept (so contact often stays), the others borne off."""
    out = board.copy()
    idx = range(25, -1, -1) if side > 0 else range(26)  # rearmost first in that side's direction
    left = keep
    for i in idx:
        n = max(0, int(out[i]) * side)
        take = min(n, left)
        out[i] = side * take if n else out[i]
        left -= take
    return out


@pytest.fixture(scope="module")
def boards():
    """3,000 distinct valid boards of every class, a third of them crashed by construction, the
    deep-point cases of gnubg's rule (2+ checkers on the 1- and 2-points) among them."""
    rng = np.random.default_rng(23)
    base = np.concatenate([random_play_positions(rng, 1500), random_scattered_positions(rng, 1500)])
    crashed = []
    for b in base[::2]:
        side = 1 if rng.random() < 0.5 else -1
        c = _crash(b, int(rng.integers(1, 10)), side)
        if rng.random() < 0.5:  # a deep point: 2 or 3 checkers moved onto that side's 1-point
            point = 1 if side > 0 else 24
            src = [i for i in range(26) if i != point and c[i] * side > 0]
            for i in src[:2]:
                c[i] -= side
                c[point] += side
        crashed.append(c)
    out = np.unique(np.concatenate([base, np.array(crashed)]).astype(np.int8), axis=0)
    validate_board(out)
    return out


def _network(encoder="expert", seed=0):
    torch.manual_seed(seed)
    return Network(NetworkConfig(encoder=encoder, hidden=(24,), race_net=True, crashed_net=True)).eval()


@pytest.mark.parametrize("encoder", ["rich", "expert"])
def test_routes_from_the_encoded_rows_are_gnubgs_classes(boards, encoder):
    """route_rows reads gnubg's crashed rule from TD-Gammon's units; the expected class of each board
    is ``classify_positions`` (gnubg eval.c ClassifyPosition), computed on the board itself."""
    classes = classify_positions(boards)
    assert (classes == CRASHED).sum() >= 300 and (classes == CONTACT).sum() >= 300
    want = np.where(
        classes == CRASHED, CRASHED_ROUTE, np.where(classes == CONTACT, CONTACT_ROUTE, RACE_ROUTE)
    )
    net = _network(encoder)
    x = torch.from_numpy(net.encoder.encode(boards))
    assert np.array_equal(route_rows(x, net.encoder.race_unit, True).numpy(), want)
    assert np.array_equal(net.routes(boards), want)
    # route_boards takes race flags of any dtype as a mask (0/1 integers are not indices)
    race = (want == RACE_ROUTE).astype(np.int8)
    assert np.array_equal(route_boards(boards, race, True), want)
    # without a crashed net the crashed boards stay with the contact net
    two = route_rows(x, net.encoder.race_unit, False).numpy()
    assert np.array_equal(two, np.where(want == CRASHED_ROUTE, CONTACT_ROUTE, want))


def test_the_compiled_crashed_test_is_the_array_one(boards):
    """``crashed_any`` (search's routing kernel) = ``crashed_sides(...).any(axis=1)``, whatever the contact."""
    from nard_ai.core.classes import crashed_any, crashed_sides

    want = crashed_sides(boards).any(axis=1)
    assert 500 < want.sum() < len(boards) - 500
    assert np.array_equal(crashed_any(boards), want)


def test_every_path_of_a_three_net_network_agrees(boards):
    """forward (training), predict, probs6 (search's embedding fast path) and the batch-invariant
    evaluator (the server's) give the same outcomes, and a crashed row is the crashed MLP's."""
    net = _network()
    x = torch.from_numpy(net.encoder.encode(boards))
    with torch.no_grad():
        want = torch.softmax(net(x), -1).numpy()
    np.testing.assert_allclose(net.predict(x).numpy(), want, atol=1e-6)
    np.testing.assert_allclose(net.probs6(boards), want, atol=1e-6)
    routes = net.routes(boards)
    crashed = routes == CRASHED_ROUTE
    with torch.no_grad():
        own = torch.softmax(net.crashed_mlp(x[crashed]), -1).numpy()
        contact = torch.softmax(net.mlp(x[crashed]), -1).numpy()
    np.testing.assert_allclose(want[crashed], own, atol=1e-6)
    assert np.abs(own - contact).max() > 1e-3  # the nets differ, so the routing is seen
    # batches with no crashed board take the two-net grouping: the same outcomes
    calm = routes != CRASHED_ROUTE
    np.testing.assert_allclose(net.probs6(boards[calm]), want[calm], atol=1e-6)
    plain = NetworkEvaluator(net).evaluate(boards)
    np.testing.assert_allclose(
        BatchInvariantEvaluator(NetworkEvaluator(net)).evaluate(boards), plain, atol=1e-6
    )


def test_a_crashed_net_needs_a_race_net_and_point_units():
    with pytest.raises(ValueError, match="crashed_net needs race_net"):
        NetworkConfig(encoder="rich", race_net=False, crashed_net=True)
    with pytest.raises(ValueError, match="no race unit"):
        Network(NetworkConfig(encoder="td198", race_net=True, crashed_net=True))


def test_the_checkpoint_keeps_the_crashed_net_and_older_ones_read_as_before(tmp_path, boards):
    net = _network(seed=4)
    path = save_checkpoint(tmp_path / "three.pt", net)
    loaded = load_checkpoint(path).network
    assert loaded.config.crashed_net and loaded.crashed_mlp is not None
    np.testing.assert_array_equal(loaded.probs6(boards), net.probs6(boards))
    two = Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=True))
    payload = torch.load(save_checkpoint(tmp_path / "two.pt", two), weights_only=False)
    assert "crashed_net" not in payload["network"]  # described as before crashed nets existed
    assert load_checkpoint(tmp_path / "two.pt").network.crashed_mlp is None


def test_widening_adds_a_crashed_net_that_starts_as_the_contact_net(boards):
    """``widened(..., crashed_net=True)``: the same function at the start (the crashed MLP a copy of
    the contact MLP), rich -> expert at once or on the same encoder."""
    from nard_ai.training.supervised import widened

    torch.manual_seed(5)
    rich = Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True)).eval()
    for encoder in ("rich", "expert"):
        three = widened(rich, encoder, boards[:64], crashed_net=True)
        assert three.crashed_mlp is not None and three.encoder.name == encoder
        np.testing.assert_allclose(three.probs6(boards), rich.probs6(boards), atol=1e-6)
    with pytest.raises(ValueError, match=r"no crashed net is added, .* \[16\] are its own.*nothing to widen"):
        widened(rich, "rich", boards[:64])
    with pytest.raises(ValueError, match=r"has a crashed net, .* \[16\] are its own .*: nothing to widen"):
        widened(three, "expert", boards[:64], crashed_net=True)
    single = Network(NetworkConfig(encoder="td198", hidden=(8,)))
    with pytest.raises(ValueError, match="the checkpoint has no race net"):
        widened(single, "rich", boards[:64], crashed_net=True)


def test_supervised_training_moves_only_the_crashed_net_on_crashed_labels(tmp_path, boards):
    """Labels on crashed positions only: the gradient reaches the crashed MLP alone (contact and race
    MLPs keep their weights), as gnubg trains its crashed net on its own class."""
    from nard_ai.training.supervised import LabelledSet, SupervisedConfig, train_supervised

    net = _network(seed=6).train()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    crashed = boards[net.routes(boards) == CRASHED_ROUTE]
    assert len(crashed) >= 300
    targets = np.tile(np.array([[0.5, 0.1, 0.0, 0.3, 0.1, 0.0]], dtype=np.float32), (len(crashed), 1))
    ids = [str(i) for i in range(len(crashed))]
    data = LabelledSet(ids=ids, boards=crashed, targets=targets)
    half = np.arange(len(crashed)) % 4 == 0
    train_supervised(
        net, data.subset(~half), data.subset(half), SupervisedConfig(lr=1e-2, epochs=2, patience=2)
    )
    after = net.state_dict()
    moved = {k.split(".")[0] for k in after if not torch.equal(after[k], before[k])}
    assert moved == {"crashed_mlp"}


def test_the_onnx_export_routes_crashed_rows_to_the_crashed_net(tmp_path, boards):
    ort = pytest.importorskip("onnxruntime")
    from nard_ai.model import onnx_export

    net = _network(seed=7)
    ckpt = save_checkpoint(tmp_path / "three.pt", net)
    result = onnx_export.export_onnx(tmp_path / "three.onnx", ckpt)
    assert result.phase_nets == ("contact", "crashed", "race")
    assert result.metadata["phase_nets"] == "contact,crashed,race"
    session = ort.InferenceSession(str(result.path), providers=["CPUExecutionProvider"])
    inputs = net.encoder.encode(boards)
    (outcomes,) = session.run(["outcomes"], {onnx_export.INPUT_NAME: inputs})
    np.testing.assert_allclose(outcomes, net.probs6(boards), atol=1e-5)


def test_the_shipped_expert_network_has_three_nets_and_plays_the_openings_best_plays():
    """``checkpoints/nard-expert.pt`` (README, "The default network"; docs/GENERATIONS.md, "Generation 16"): expert_race inputs,
    contact and crashed nets of one layer of 1,024 units trained afresh on nard_ai's own 1-ply labels (2,318,000
    rows), generation 11's race net of two layers of 512 kept as it was, and at 0-ply the opening plays every
    opening book and gnubg's rollouts rank first: 3-1 8/5 6/5, 4-2 8/4 6/4, 6-1 13/7 8/7 (gnubg rollout tables,
    e.g. bkgm.com's opening moves)."""
    import dataclasses
    from pathlib import Path

    from nard_ai.agents import agent_from_spec
    from nard_ai.core.board import starting_board
    from nard_ai.formats.notation import play_notation
    from nard_ai.model.ensemble import ENSEMBLE_RULE

    path = Path(__file__).resolve().parent.parent / "checkpoints" / "nard-expert.pt"
    checkpoint = load_checkpoint(path)
    network = checkpoint.network
    assert network.config == NetworkConfig(
        encoder="expert_race",
        hidden=(1024,),
        race_net=True,
        crashed_net=True,
        activation="sigmoid",
        race_hidden=(512, 512),
    )
    supervised = checkpoint.extra["supervised"][-1]
    assert supervised["train_nets"] == ["contact", "crashed"] and supervised["source"]["fresh"] == [
        "contact",
        "crashed",
    ]
    assert supervised["rows"]["train"] + supervised["rows"]["val"] == 2_318_000
    # generation 15, the default before it, ships beside it for comparison: the logit ensemble of three nets
    # (2,048 units: generation 14's 512 first) with the same race net
    previous = load_checkpoint(path.with_name("nard-expert-gen15.pt"))
    assert previous.network.config == dataclasses.replace(network.config, hidden=(2048,))
    assert (
        previous.extra["ensemble"]["rule"] == ENSEMBLE_RULE
        and len(previous.extra["ensemble"]["members"]) == 3
    )
    gen14 = load_checkpoint(path.with_name("nard-expert-gen14.pt")).network
    assert gen14.config == dataclasses.replace(network.config, hidden=(512,))
    torch.testing.assert_close(previous.network.mlp[0].weight[:512], gen14.mlp[0].weight, rtol=0, atol=0)
    for other in (previous.network, gen14):
        for a, b in zip(network.race_mlp.parameters(), other.race_mlp.parameters(), strict=True):
            assert torch.equal(a, b)
    # generation 11, the default before generation 14, still ships: the same race net
    gen11 = load_checkpoint(path.with_name("nard-expert-gen11.pt")).network
    assert gen11.config == dataclasses.replace(network.config, hidden=(256,))
    agent = agent_from_spec(str(path))
    start = starting_board()
    for dice, best in (((3, 1), "8/5 6/5"), ((4, 2), "8/4 6/4"), ((6, 1), "13/7 8/7")):
        ranked = agent.rank_plays(start, dice)
        assert play_notation(start, ranked.afterstates[0], dice) == best


def test_init_from_with_a_narrower_encoder_says_how_to_fine_tune_instead():
    """--init-from widens a network: an encoder narrower than the checkpoint's (train.py's default rich
    against the shipped network's expert_race) is refused with the checkpoint's encoder named as a flag
    value and --resume named as the way to fine-tune it as it is (a new user's trial, 2026-12-07)."""
    from nard_ai.core.board import starting_board
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.training.supervised import widened

    shipped = load_checkpoint(default_checkpoint_path()).network
    with pytest.raises(ValueError) as info:
        widened(shipped, "rich", np.stack([starting_board()]))
    text = str(info.value)
    assert text.startswith(
        "encoder rich@1 (221 inputs) is not wider than expert_race@1 (312), the checkpoint's"
    )
    assert "give --encoder expert_race or a wider one" in text and "--supervised --resume" in text
