"""The first layer as an embedding lookup (nard_ai.model.embedding) equals the plain layer ``W x + b``.

The reference is torch's ``Linear`` on the encoder's rows (nard_ai.model.encoding); the
lookup only reorders the float32 sums, so they agree to rounding (about 1e-6 of
the pre-activations' size here).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import check_first_layer_against_plain

from nard_ai.core.board import pos, starting_board, swap_sides_unchecked
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.model.embedding import dense_columns, unit_values
from nard_ai.model.encoding import encode_rich, encode_td198


def _boards() -> np.ndarray:
    rng = np.random.default_rng(11)
    boards = np.tile(starting_board(), (64, 1))
    rows = []
    for _ in range(40):
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        plays, owner = legal_plays_batch(boards, dice, sort=False)
        rows.append(plays)
        pick = np.array([rng.choice(np.flatnonzero(owner == i)) for i in range(len(boards))])
        chosen = plays[pick]
        boards = swap_sides_unchecked(chosen[(chosen > 0).any(axis=1)])
        if len(boards) == 0:
            break
    extra = np.stack(
        [
            pos(me={6: 15}, opp={6: 15}),  # 15 on one point: the table's last row
            pos(me={25: 3, 6: 12}, opp={25: 2, 1: 13}),  # both bars
        ]
    )
    return np.ascontiguousarray(np.concatenate(rows + [extra]))


@pytest.mark.parametrize("name, encode, threads", [("td198", encode_td198, 1), ("rich", encode_rich, 2)])
def test_lookup_plus_dense_equals_the_plain_first_layer(name, encode, threads):
    boards = _boards()
    check_first_layer_against_plain(boards, encode(boards), name, threads)


def test_unit_values_are_tesauros_point_units():
    """n >= 1, n >= 2, n >= 3 and (n - 3) / 2 for n > 3 (Tesauro 1992; encoding module docstring)."""
    u = unit_values()
    np.testing.assert_array_equal(u[0], [0, 0, 0, 0])
    np.testing.assert_array_equal(u[2], [1, 1, 0, 0])
    np.testing.assert_array_equal(u[5], [1, 1, 1, 1.0])
    np.testing.assert_array_equal(u[15], [1, 1, 1, 6.0])


def test_dense_columns_reject_other_encoders():
    with pytest.raises(ValueError, match="td198, rich, expert and expert_race only"):
        dense_columns("pubeval")


def test_the_network_rebuilds_its_tables_after_a_training_step():
    """After an optimizer step the embedding path must see the new weights, not a stale table."""
    from nard_ai.model.network import Network, NetworkConfig

    net = Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True))
    boards = _boards()[:200]
    ref = lambda: net.predict(torch.from_numpy(net.encoder.encode(boards))).numpy()  # noqa: E731
    np.testing.assert_allclose(net.probs6(boards), ref(), atol=2e-6)
    opt = torch.optim.SGD(net.parameters(), lr=1.0)
    loss = net(torch.from_numpy(net.encoder.encode(boards))).sum()
    loss.backward()
    opt.step()
    np.testing.assert_allclose(net.probs6(boards), ref(), atol=2e-6)
    with torch.no_grad():
        net.mlp[0].weight.mul_(0.5)  # an in-place change outside any optimizer
    np.testing.assert_allclose(net.probs6(boards), ref(), atol=2e-6)


def test_the_tables_follow_a_fused_adam_step():
    """torch's fused Adam updates weights in place without bumping their version counter (torch 2.13):
    the learner's steps must still reach the embedding path (a stale table made a resumed training run
    differ from an uninterrupted one)."""
    from nard_ai.model.learn import Learner
    from nard_ai.model.network import Network, NetworkConfig

    net = Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True))
    learner = Learner(net, lr=0.1)
    boards = _boards()[:200]
    ref = lambda: net.predict(torch.from_numpy(net.encoder.encode(boards))).numpy()  # noqa: E731
    before = net.probs6(boards).copy()
    targets = np.tile(np.eye(6, dtype=np.float32)[0], (len(boards), 1))
    learner.update(boards, targets)
    after = net.probs6(boards)
    assert np.abs(after - before).max() > 1e-3  # the step moved the outputs
    np.testing.assert_allclose(after, ref(), atol=2e-6)
