"""The ``rich`` encoder (td198 plus hand-made features) and the race/contact network split."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nard_ai import legal_plays, pos, starting_board, swap_sides
from nard_ai.eval.evaluator import has_contact
from nard_ai.model.encoding import ESCAPES, RICH, TD198, encode_rich, encode_td198, get_encoder
from nard_ai.model.network import Network, NetworkConfig, load_checkpoint, save_checkpoint
from tests.conftest import mixed_positions

MINE, THEIRS = slice(198, 209), slice(209, 220)
RACE = 220
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]


def features(board) -> np.ndarray:
    return encode_rich(np.asarray(board, dtype=np.int8)[None])[0]


def test_rich_is_registered_with_its_size_and_race_unit():
    assert get_encoder("rich", 1) is RICH
    assert (RICH.size, RICH.race_unit) == (221, 220)


def test_first_198_units_are_td198():
    boards = mixed_positions(np.random.default_rng(3), 300)
    np.testing.assert_array_equal(encode_rich(boards)[:, :198], encode_td198(boards))


def test_starting_position_features_by_hand():
    """Start (RULES.md §1): 2 on 24, 5 on 13, 3 on 8, 5 on 6 for each side.

    pip 167 -> 167/150; back: the two on 24 -> 2/5; no blots, so no shots; the
    longest prime is one point -> 1/6; home points made: the 6 -> 1/6; anchors:
    the 24 -> 1/2; 4 points made -> 4/12. Escapes from 24: the opponent holds
    19, 17 and 12, i.e. 5, 7 and 12 pips ahead, so the rolls summing to 5 (4),
    7 (6) or 12 (6-6, 1), and 5-5 (both dice blocked) fail: 36 - 12 = 24.
    Containment: the fewest escapes from 15..24 are from 23, with 19, 17 and
    12 held 4, 6 and 11 pips ahead: sums 4 (3 rolls), 6 (5) and 11 (2) fail,
    and so do 4-6, 4-4 and 6-6 (both dice blocked, 4 rolls): 36 - 14 = 22.
    Break contact: 2 checkers on 24 must pass the opponent's rearmost checker
    on 1: 2 x 23 pips; 5 on 13: 5 x 12; 3 on 8: 3 x 7; 5 on 6: 5 x 5 ->
    46 + 60 + 21 + 25 = 152 pips -> 152/150.
    """
    f = features(starting_board())
    expected = [167 / 150, 2 / 5, 0, 0, 1 / 6, 1 / 6, 1 / 2, 24 / 36, 22 / 36, 152 / 150, 4 / 12]
    np.testing.assert_allclose(f[MINE], expected, rtol=1e-6)
    np.testing.assert_allclose(f[THEIRS], expected, rtol=1e-6)  # the start is symmetric
    assert f[RACE] == 0.0


def test_escape_table_edges():
    # gnubg eval.c ComputeTable0: nothing blocked -> all 36 rolls; a full prime right in front -> none
    assert ESCAPES[0] == 36
    assert ESCAPES[0b111111] == 0
    # only the point 6 pips ahead blocked: 1-5, 2-4, 3-3 land on it (5 rolls), 6-6 has both dice blocked (1)
    assert ESCAPES[1 << 5] == 36 - 5 - 1


def test_swapping_sides_swaps_the_feature_blocks():
    boards = mixed_positions(np.random.default_rng(5), 400)
    a = encode_rich(boards)
    b = encode_rich(np.ascontiguousarray(swap_sides(boards)))
    np.testing.assert_array_equal(a[:, MINE], b[:, THEIRS])
    np.testing.assert_array_equal(a[:, THEIRS], b[:, MINE])
    np.testing.assert_array_equal(a[:, RACE], b[:, RACE])


def test_race_unit_is_no_contact():
    boards = mixed_positions(np.random.default_rng(7), 500)
    np.testing.assert_array_equal(encode_rich(boards)[:, RACE] == 1.0, ~has_contact(boards))


def test_direct_and_indirect_shots_by_hand():
    """One blot of ours on our 10, a single opponent checker on its 20 (our 5): 5 pips away.

    Direct 5s: 11 rolls; indirect: 1-4 and 2-3 (4 rolls), all open -> 15/36.
    """
    board = pos(me={10: 1, 6: 5}, opp={20: 1, 1: 5})
    assert features(board)[MINE][3] == pytest.approx(15 / 36)


def test_a_blocked_intermediate_point_stops_the_indirect_shot():
    """As above, with our points 7 and 8 made: from our 5, 2-3 must stop on 7 or 8 (both ours): no hit.

    1-4 still hits through our 9 (the 4 first; the 1 first stops on our 6, also made, but one open
    route is enough): 11 direct + 2 = 13 rolls.
    """
    board = pos(me={10: 1, 8: 2, 7: 2, 6: 5}, opp={20: 1, 1: 5})
    assert features(board)[MINE][3] == pytest.approx(13 / 36)


def _shots_by_legal_plays(board) -> int:
    # rolls (of 36) for which some legal play of the opponent puts one of our checkers on the bar
    theirs = swap_sides(board)
    before = -int(theirs[0])
    count = 0
    for a, b in ROLLS:
        plays = legal_plays(theirs, (a, b))
        if (-plays[:, 0].astype(int) > before).any():
            count += 1 if a == b else 2
    return count


def test_shots_agree_with_the_move_generator_on_random_positions():
    """The shot count against each side equals a count from the legal-play generator on almost all positions.

    They may differ only where a hit needs a partial play that the whole-turn rules
    forbid (RULES.md §3: use both dice when possible), which the feature ignores.
    """
    rng = np.random.default_rng(11)
    boards = mixed_positions(rng, 400)
    boards = boards[has_contact(boards)]
    enc = encode_rich(boards)
    agree = 0
    for board, f in zip(boards, enc, strict=True):
        agree += round(f[MINE][3] * 36) == _shots_by_legal_plays(board)
    assert agree / len(boards) >= 0.97, f"{agree} of {len(boards)}"


def test_race_network_routes_race_rows_to_the_race_mlp():
    torch.manual_seed(0)
    net = Network(NetworkConfig(encoder="rich", hidden=(16,), race_net=True))
    race = pos(me={1: 8, 2: 7}, opp={1: 8, 3: 7})
    boards = np.stack([starting_board(), race, starting_board()])
    x = torch.from_numpy(net.encoder.encode(boards))
    logits = net(x)
    torch.testing.assert_close(logits[[0, 2]], net.mlp(x[[0, 2]]))
    torch.testing.assert_close(logits[[1]], net.race_mlp(x[[1]]))
    torch.testing.assert_close(net.predict(x), torch.softmax(logits, dim=1).detach())


def test_race_net_needs_an_encoder_with_a_race_unit():
    assert TD198.race_unit is None
    with pytest.raises(ValueError, match="no race unit"):
        Network(NetworkConfig(encoder="td198", race_net=True))


def test_race_net_checkpoint_round_trip(tmp_path):
    torch.manual_seed(1)
    net = Network(NetworkConfig(encoder="rich", hidden=(8,), race_net=True))
    path = save_checkpoint(tmp_path / "r.pt", net, games_trained=7)
    loaded = load_checkpoint(path)
    assert loaded.network.config == net.config
    boards = mixed_positions(np.random.default_rng(2), 50)
    np.testing.assert_allclose(loaded.network.probs6(boards), net.probs6(boards), rtol=1e-6)


def _side_reference(b: np.ndarray) -> list[float]:
    """The 11 features of the side with positive counts, point by point as the module docstring
    defines them (the shot count's rolls come from ``encoding._shots`` given masks built here)."""
    from nard_ai.model.encoding import _shots

    b = [int(v) for v in b]
    mine = [p for p in range(1, 26) if b[p] > 0]
    theirs = [q for q in range(0, 25) if b[q] < 0]
    my_rear = max(mine, default=0)
    opp_rear = min(theirs, default=26)
    contact = my_rear > opp_rear
    made = [p for p in range(1, 25) if b[p] >= 2]
    prime = run = 0
    for p in range(1, 25):
        run = run + 1 if b[p] >= 2 else 0
        prime = max(prime, run)
    feats = [
        sum(p * max(b[p], 0) for p in range(1, 26)) / 150,
        (b[25] + sum(max(b[p], 0) for p in range(19, 25))) / 5,
        0.0,
        0.0,
        prime / 6,
        sum(1 for p in made if p <= 6) / 6,
        sum(1 for p in made if p >= 19) / 2,
        1.0,
        1.0,
        0.0,
        len(made) / 12,
    ]
    if not contact:
        return feats
    blots = [p for p in range(1, 25) if b[p] == 1]
    feats[2] = len(blots) / 5
    if blots:
        blot_mask = sum(1 << p for p in blots)
        sources = sum(1 << q for q in theirs)
        open_mask = sum(1 << p for p in range(1, 25) if b[p] < 2)
        feats[3] = _shots(np.array(b, dtype=np.int8), blot_mask, sources, open_mask) / 36

    def escapes(n: int) -> int:
        # gnubg ComputeTable0's index: bit i = the point i + 1 pips ahead of n is held by the opponent
        window = sum(1 << i for i in range(12) if n - 1 - i >= 1 and b[n - 1 - i] <= -2)
        return int(ESCAPES[window])

    feats[7] = escapes(my_rear) / 36
    feats[8] = min(escapes(n) for n in range(15, 25)) / 36
    feats[9] = sum((p - opp_rear) * b[p] for p in range(opp_rear + 1, 26) if b[p] > 0) / 150
    return feats


def test_rich_features_match_a_point_by_point_reference():
    """Every hand-made unit, both sides, and the race flag, against per-point Python loops.

    The compiled encoder builds bit masks in one pass and counts with popcounts
    (and its escape table is indexed the other way round); this checks it
    against the formulation of the module docstring, on random-play, bear-off
    and scattered positions and on the afterstates of random-play positions.
    """
    rng = np.random.default_rng(21)
    boards = mixed_positions(rng, 600)
    afters = np.concatenate(
        [legal_plays(b, (int(rng.integers(1, 7)), int(rng.integers(1, 7)))) for b in boards[:150]]
    )
    boards = np.concatenate([boards, afters, swap_sides(afters)])
    enc = encode_rich(boards)
    for board, f in zip(boards, enc, strict=True):
        np.testing.assert_allclose(f[MINE], _side_reference(board), rtol=1e-6, atol=0, err_msg=str(board))
        np.testing.assert_allclose(f[THEIRS], _side_reference(swap_sides(board)), rtol=1e-6, atol=0)
        assert f[RACE] == float(not has_contact(board[None])[0])
