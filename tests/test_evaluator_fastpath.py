"""The evaluator's one-pass path equals the plain composition of its steps.

``NetworkEvaluator.evaluate`` groups boards by network before encoding
(``Network.predict_grouped``), converts, sanity-checks and marks bear-offs in
one compiled pass. These tests rebuild the same numbers the slow, obvious
way: encode every board, run torch's ``predict`` (which routes rows on the
encoder's race unit), ``exclusive_to_gnubg``, a NumPy transcription of gnubg's
``SanityCheck`` rules (RULES.md §6), and the bear-off database for bear-off
positions.
"""

from __future__ import annotations

import numpy as np
import torch

from nard_ai import legal_plays_batch, starting_board
from nard_ai.core.board import pos, swap_sides_unchecked
from nard_ai.eval.bearoff import bearoff_probs, is_bearoff
from nard_ai.eval.evaluator import NetworkEvaluator, has_contact, sanity_check
from nard_ai.model.encoding import contact_first_order, encode_rich, race_flags
from nard_ai.model.network import (
    Network,
    NetworkConfig,
    default_checkpoint_path,
    exclusive_to_gnubg,
    load_checkpoint,
)


def _boards(n_positions: int = 300, seed: int = 5) -> np.ndarray:
    """Afterstates of random play, turned to the opponent's view, plus races and bear-offs."""
    rng = np.random.default_rng(seed)
    boards = np.tile(starting_board(), (n_positions, 1))
    out = []
    for _ in range(60):
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        plays, owner = legal_plays_batch(boards, dice, sort=False)
        pick = np.array([rng.choice(np.flatnonzero(owner == i)) for i in range(len(boards))])
        chosen = plays[pick]
        alive = (chosen > 0).any(axis=1)
        boards = swap_sides_unchecked(chosen[alive])
        out.append(boards)
        if len(boards) == 0:
            break
    extra = np.stack(
        [
            pos(me={1: 3, 2: 2, 5: 4}, opp={1: 2, 3: 5}),  # bear-off, both sides
            pos(me={7: 5, 8: 5, 9: 5}, opp={10: 5, 11: 5, 12: 5}),  # race, no checker in a home board
            pos(me={6: 5, 8: 3, 13: 5, 24: 2}, opp={6: 5, 8: 3, 13: 5, 24: 1}),  # O has borne off one
        ]
    )
    return np.ascontiguousarray(np.concatenate(out + [extra]))


def _slow_sanity(boards: np.ndarray, probs: np.ndarray) -> np.ndarray:
    probs = probs.copy()
    mine_on = np.where(boards > 0, boards, 0).sum(axis=1)
    theirs_on = -np.where(boards < 0, boards, 0).sum(axis=1)
    race = ~has_contact(boards)
    probs[theirs_on < 15, 1:3] = 0.0
    probs[mine_on < 15, 3:5] = 0.0
    probs[race & ~(boards[:, 1:7] < 0).any(axis=1), 2] = 0.0
    probs[race & ~(boards[:, 19:25] > 0).any(axis=1), 4] = 0.0
    np.minimum(probs[:, 1], probs[:, 0], out=probs[:, 1])
    np.minimum(probs[:, 2], probs[:, 1], out=probs[:, 2])
    np.minimum(probs[:, 3], 1.0 - probs[:, 0], out=probs[:, 3])
    np.minimum(probs[:, 4], probs[:, 3], out=probs[:, 4])
    return probs


def test_race_flags_equal_the_rich_encoders_race_unit():
    boards = _boards()
    flags = race_flags(boards)
    assert flags.any() and (~flags).any()
    np.testing.assert_array_equal(flags, encode_rich(boards)[:, 220] == 1.0)


def test_contact_first_order_is_a_stable_partition():
    race = np.array([True, False, False, True, False])
    order, contact = contact_first_order(race)
    assert contact == 3 and order.tolist() == [1, 2, 4, 0, 3]


def test_predict_grouped_equals_torch_predict_on_encoded_rows():
    boards = _boards()
    net = load_checkpoint(default_checkpoint_path()).network
    probs, order = net.predict_grouped(boards)
    ref = net.predict(torch.from_numpy(net.encoder.encode(boards))).numpy()
    assert sorted(order.tolist()) == list(range(len(boards)))
    np.testing.assert_allclose(probs.T, ref[order], atol=2e-6)
    np.testing.assert_allclose(net.probs6(boards), ref, atol=2e-6)


def test_predict_grouped_without_a_race_net_keeps_the_order():
    net = Network(NetworkConfig(encoder="td198", hidden=(16,)))
    boards = _boards(40)
    probs, order = net.predict_grouped(boards)
    np.testing.assert_array_equal(order, np.arange(len(boards)))
    ref = net.predict(torch.from_numpy(net.encoder.encode(boards))).numpy()
    np.testing.assert_allclose(probs.T, ref, atol=2e-6)


def test_evaluate_equals_the_step_by_step_composition():
    boards = _boards()
    net = load_checkpoint(default_checkpoint_path()).network
    got = NetworkEvaluator(net).evaluate(boards)
    ref6 = net.predict(torch.from_numpy(net.encoder.encode(boards))).numpy()
    ref = _slow_sanity(boards, np.asarray(exclusive_to_gnubg(ref6), dtype=np.float32))
    covered = is_bearoff(boards)
    assert covered.any()
    ref[covered] = bearoff_probs(boards[covered])
    np.testing.assert_allclose(got, ref, atol=3e-6)
    without = NetworkEvaluator(net, bearoff=False).evaluate(boards)
    np.testing.assert_allclose(without[~covered], ref[~covered], atol=3e-6)


def test_sanity_check_equals_the_numpy_rules():
    boards = _boards()
    rng = np.random.default_rng(3)
    p6 = rng.dirichlet(np.ones(6), size=len(boards)).astype(np.float32)
    p5 = np.asarray(exclusive_to_gnubg(p6), dtype=np.float32)
    np.testing.assert_array_equal(sanity_check(boards, p5.copy()), _slow_sanity(boards, p5))
