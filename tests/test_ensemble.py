"""Logit ensembles (:mod:`nard_ai.model.ensemble`, ``python -m nard_ai.training ensemble``; issue 14: the
ensembles of one-layer nets measured as candidates for generation 15). The merged network's logits must be the
mean of the members' logits, by every path that evaluates a network (training's ``forward``, search's
first-layer tables, the checkpoint loaded back); a net shared bit for bit stays one net; members that cannot be
merged are refused with a message. A few seconds.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nard_ai.core.classes import race_flags
from nard_ai.model.atomic import file_sha256
from nard_ai.model.ensemble import ENSEMBLE_RULE, ensemble_checkpoint, ensemble_network
from nard_ai.model.network import CRASHED_ROUTE, Network, NetworkConfig, load_checkpoint, save_checkpoint
from nard_ai.training.cli import main as training_main


def _net(seed, hidden=(8,), race_hidden=(6, 5), **kw):
    torch.manual_seed(seed)
    config = NetworkConfig(
        encoder="expert_race", hidden=hidden, race_net=True, crashed_net=True, race_hidden=race_hidden, **kw
    )
    return Network(config).eval()


def _logits(net, boards):
    with torch.no_grad():
        return net(torch.from_numpy(net.encoder.encode(boards))).numpy()


def _share_race(members):
    for m in members[1:]:
        m.race_mlp.load_state_dict(members[0].race_mlp.state_dict())
    return members


def test_the_ensembles_logits_are_the_members_mean_and_a_shared_race_net_stays_one(mixed_boards):
    members = _share_race([_net(1), _net(2, hidden=(5,)), _net(3)])
    ens = ensemble_network(members)
    # contact and crashed nets side by side (8 + 5 + 8 units), the shared race net kept as it is
    assert ens.config.hidden == (21,) and ens.config.race_hidden == (6, 5)
    assert all(
        torch.equal(a, b)
        for a, b in zip(ens.race_mlp.parameters(), members[0].race_mlp.parameters(), strict=True)
    )
    routes = ens.routes(mixed_boards)
    assert (routes == CRASHED_ROUTE).sum() > 10  # every net is exercised
    want = np.mean([_logits(m, mixed_boards) for m in members], axis=0)
    np.testing.assert_allclose(_logits(ens, mixed_boards), want, atol=1e-5)
    # the search's path (first-layer tables per net) gives the softmax of the mean logits
    want_p = torch.softmax(torch.from_numpy(want), -1).numpy()
    np.testing.assert_allclose(ens.probs6(mixed_boards), want_p, atol=1e-6)
    # = the members' probabilities' normalized geometric mean (the module docstring's identity)
    geo = np.exp(np.mean([np.log(m.probs6(mixed_boards)) for m in members], axis=0))
    np.testing.assert_allclose(ens.probs6(mixed_boards), geo / geo.sum(-1, keepdims=True), atol=1e-5)


def test_members_with_their_own_deeper_race_nets_are_merged_block_by_block(mixed_boards):
    members = [_net(4), _net(5, race_hidden=(3, 4))]  # race nets differ: merged, two layers each
    ens = ensemble_network(members)
    assert ens.config.hidden == (16,) and ens.config.race_hidden == (9, 9)
    second = [m for m in ens.race_mlp if isinstance(m, torch.nn.Linear)][1].weight
    assert torch.count_nonzero(second[:5, 6:]) == 0 and torch.count_nonzero(second[5:, :6]) == 0
    race = np.asarray(race_flags(mixed_boards), dtype=bool)
    assert race.sum() > 100
    want = np.mean([_logits(m, mixed_boards) for m in members], axis=0)
    np.testing.assert_allclose(_logits(ens, mixed_boards), want, atol=1e-5)


def test_an_ensemble_of_one_network_repeated_is_that_network(mixed_boards):
    net = _net(6)
    ens = ensemble_network([net, net])
    assert ens.config == net.config  # every net identical: kept once, not widened
    np.testing.assert_array_equal(ens.probs6(mixed_boards), net.probs6(mixed_boards))


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (lambda: _net(7, activation="tanh"), "member 2 has activation 'tanh', member 1 'sigmoid'"),
        (
            lambda: Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=True)),
            "member 2 has encoder 'rich'",
        ),
        (
            lambda: Network(NetworkConfig(encoder="expert_race", hidden=(8,), race_net=True)),
            "member 2 has crashed_net False",
        ),
        (lambda: _net(8, hidden=(4, 4)), "contact nets have different depths"),
        (lambda: _net(9, race_hidden=(7,)), "race nets have different depths"),
    ],
)
def test_members_that_cannot_be_merged_are_refused(second, message):
    with pytest.raises(ValueError, match=message):
        ensemble_network([_net(10), second()])
    with pytest.raises(ValueError, match="at least two networks, got 1"):
        ensemble_network([_net(10)])


def test_the_checkpoint_records_its_members_and_loads_as_an_ordinary_network(tmp_path, mixed_boards, capsys):
    paths = [save_checkpoint(tmp_path / f"m{i}.pt", _net(11 + i), games_trained=10 * i) for i in range(3)]
    out = tmp_path / "ens.pt"
    assert training_main(["ensemble", "--out", str(out), *map(str, paths)]) == 0
    assert "the mean of 3 networks' logits; hidden [24], race net [18, 15]" in capsys.readouterr().out
    ckpt = load_checkpoint(out)
    record = ckpt.extra["ensemble"]
    assert record["rule"] == ENSEMBLE_RULE and record["k"] == 3
    assert [m["sha256"] for m in record["members"]] == [file_sha256(p) for p in paths]
    # file names only: a folder of the machine that built it would mean nothing where the checkpoint ships
    assert ckpt.args == {"ensemble": [p.name for p in paths]} and ckpt.games_trained == 20
    assert [m["path"] for m in record["members"]] == [p.name for p in paths]
    members = [load_checkpoint(p).network for p in paths]
    want = np.mean([_logits(m, mixed_boards) for m in members], axis=0)
    np.testing.assert_allclose(_logits(ckpt.network, mixed_boards), want, atol=1e-5)


def test_the_command_line_refuses_bad_input_with_one_line(tmp_path, capsys):
    a = save_checkpoint(tmp_path / "a.pt", _net(20))
    b = save_checkpoint(tmp_path / "b.pt", Network(NetworkConfig(encoder="rich", hidden=(8,))))
    cases = [
        ([str(a)], "at least two member checkpoints, got 1"),
        ([str(a), str(tmp_path / "none.pt")], "no checkpoint at"),
        ([str(a), str(b)], "member 2 has encoder 'rich'"),
        ([str(a), str(a)], "already exists"),  # --out is a member: nothing is overwritten
    ]
    for members, message in cases:
        out = a if message == "already exists" else tmp_path / "out.pt"
        assert training_main(["ensemble", "--out", str(out), *members]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "out.pt").exists()


def test_a_corrupt_member_is_refused_before_anything_is_written(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    good = save_checkpoint(tmp_path / "good.pt", _net(21))
    with pytest.raises(ValueError, match="not a readable nard_ai checkpoint"):
        ensemble_checkpoint([good, bad], tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()


def test_nets_that_share_their_first_layer_but_not_their_depth_are_not_taken_for_one():
    """A race net of one layer and one of two with the same first layer are different nets: refused as such."""
    a, b = _net(30, race_hidden=(6,)), _net(31, race_hidden=(6, 6))
    b.race_mlp[0].load_state_dict(a.race_mlp[0].state_dict())
    b.race_mlp[2].load_state_dict(a.race_mlp[2].state_dict())  # a's output layer is b's second hidden layer
    with pytest.raises(ValueError, match="race nets have different depths"):
        ensemble_network([a, b])
