"""The race inputs (nard_ai.model.race_inputs) and the ``expert_race`` encoder that carries them.

Expected values are worked by hand from the definitions in the race_inputs module docstring
(crossovers and the checkers-off thermometer as gnubg's race net defines them, eval.c
``CalculateRaceInputs``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import check_first_layer_against_plain

from nard_ai import pos, starting_board, swap_sides
from nard_ai.model.encoding import EXPERT_RACE, encode_expert, encode_expert_race, get_encoder
from nard_ai.model.network import Network, NetworkConfig, load_checkpoint, route_boards, save_checkpoint
from nard_ai.model.onnx_export import input_layout
from nard_ai.model.race_inputs import RACE_HALF_INPUTS, RACE_INPUTS, race_inputs_into
from nard_ai.training.supervised import widened
from tests.conftest import mixed_positions

FIRST = 271  # expert's size: the race inputs follow its units


def _race_units(board: np.ndarray) -> np.ndarray:
    return encode_expert_race(np.ascontiguousarray(board[None], dtype=np.int8))[0, FIRST:]


def test_registered_with_its_size():
    assert get_encoder("expert_race", 1) is EXPERT_RACE
    assert EXPERT_RACE.size == 312 == FIRST + RACE_INPUTS
    assert RACE_INPUTS == 41 and RACE_HALF_INPUTS == 19
    assert EXPERT_RACE.race_unit == 220  # routes as rich/expert do


def test_starting_position_by_hand():
    u = _race_units(starting_board())
    for half in (u[:19], u[19:38]):  # both sides alike
        assert (half[:14] == 0).all()  # nothing borne off
        # crossovers: 2 on the 24-point x 3 + 5 on 13 x 2 + 3 on 8 x 1 = 19
        assert half[14] == pytest.approx(1.9)
        assert half[15] == pytest.approx(10 / 15)  # 10 checkers on 8, 13, 24
        assert half[16] == pytest.approx((2 * 18 + 5 * 7 + 3 * 2) / 50)  # 77 pips to bring them home
        assert half[17] == 0  # nothing on points 1-3
        assert half[18] == pytest.approx(5 / 6)  # only the 6-point is held at home
    assert u[38] == 0 and u[40] == 0  # 167 against 167
    assert u[39] == pytest.approx(4 / math.sqrt(334), rel=1e-6)


def test_a_position_by_hand():
    # side on roll: 5 on 6, 2 on 3, 3 on 10, 1 on 20 (11 on the board, 4 off, 86 pips)
    # opponent (its numbering): 4 on 2, 2 on 8, 1 on 16 (7 on the board, 8 off, 40 pips)
    u = _race_units(pos(me={6: 5, 3: 2, 10: 3, 20: 1}, opp={2: 4, 8: 2, 16: 1}))
    me, opp, whole = u[:19], u[19:38], u[38:]
    np.testing.assert_array_equal(me[:14], [1] * 4 + [0] * 10)
    assert me[14] == pytest.approx(0.6)  # 3 x 1 (10-point) + 1 x 3 (20-point)
    assert me[15] == pytest.approx(4 / 15)
    assert me[16] == pytest.approx((3 * 4 + 14) / 50)
    assert me[17] == pytest.approx(2 / 15)
    assert me[18] == pytest.approx(4 / 6)  # 1, 2, 4, 5 empty
    np.testing.assert_array_equal(opp[:14], [1] * 8 + [0] * 6)
    assert opp[14] == pytest.approx(0.4)  # 2 x 1 (8-point) + 1 x 2 (16-point)
    assert opp[15] == pytest.approx(3 / 15)
    assert opp[16] == pytest.approx((2 * 2 + 10) / 50)
    assert opp[17] == pytest.approx(4 / 15)
    assert opp[18] == pytest.approx(5 / 6)
    assert whole[0] == pytest.approx(-46 / 20)
    assert whole[1] == pytest.approx(-42 / math.sqrt(126), rel=1e-6)
    assert whole[2] == pytest.approx(-460 / 126, rel=1e-6)


def test_bar_checkers_count_as_point_25():
    u = _race_units(pos(me={25: 1, 6: 14}, opp={25: 2, 1: 13}))
    assert u[14] == pytest.approx(0.4)  # a checker on the bar has 4 boundaries to cross
    assert u[15] == pytest.approx(1 / 15) and u[16] == pytest.approx(19 / 50)
    assert u[19 + 14] == pytest.approx(0.8) and u[19 + 16] == pytest.approx(38 / 50)
    assert u[38] == pytest.approx(((50 + 13) - (25 + 84)) / 20)


def test_swap_sides_exchanges_the_halves():
    boards = mixed_positions(np.random.default_rng(21), 200)
    a = encode_expert_race(boards)[:, FIRST:]
    b = encode_expert_race(np.ascontiguousarray(np.stack([swap_sides(x) for x in boards])))[:, FIRST:]
    np.testing.assert_array_equal(a[:, :19], b[:, 19:38])
    np.testing.assert_array_equal(a[:, 19:38], b[:, :19])
    np.testing.assert_allclose(a[:, 38], -b[:, 38], atol=1e-6)
    np.testing.assert_allclose(a[:, 40], -b[:, 40], atol=1e-6)


def test_first_units_are_expert_and_threads_agree():
    boards = mixed_positions(np.random.default_rng(22), 3000)  # above the parallel threshold
    x = encode_expert_race(boards)
    np.testing.assert_array_equal(x[:, :FIRST], encode_expert(boards))
    serial = np.zeros((len(boards), RACE_INPUTS), dtype=np.float32)
    parallel = np.zeros_like(serial)
    race_inputs_into(boards, serial, 0, 1)
    race_inputs_into(boards, parallel, 0, 2)
    np.testing.assert_array_equal(serial, parallel)
    np.testing.assert_array_equal(serial, x[:, FIRST:])


def test_bad_arrays_are_clear_errors():
    boards = np.ascontiguousarray(starting_board()[None])
    with pytest.raises(ValueError, match="boards must be"):
        race_inputs_into(boards.astype(np.int16), np.zeros((1, 41), np.float32), 0)
    with pytest.raises(ValueError, match="out must be"):
        race_inputs_into(boards, np.zeros((1, 40), np.float32), 0)
    with pytest.raises(ValueError, match="out must be"):
        race_inputs_into(boards, np.zeros((1, 41), np.float64), 0)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_embedding_path_equals_the_plain_first_layer(threads):
    boards = mixed_positions(np.random.default_rng(23), 400)
    cols = check_first_layer_against_plain(boards, encode_expert_race(boards), "expert_race", threads)
    assert cols == [192, 193, 194, 195] + list(range(198, 312))


def test_network_fast_path_checkpoint_and_routes(tmp_path):
    torch.manual_seed(4)
    net = Network(NetworkConfig(encoder="expert_race", hidden=(16,), race_net=True, crashed_net=True))
    assert net._embeddable
    boards = mixed_positions(np.random.default_rng(24), 300)
    with torch.no_grad():
        plain = net.predict(torch.from_numpy(encode_expert_race(boards))).numpy()
    np.testing.assert_allclose(net.probs6(boards), plain, atol=2e-6)
    routes = net.routes(boards)
    assert set(np.unique(routes)) <= {0, 1, 2}
    np.testing.assert_array_equal(routes, route_boards(boards, EXPERT_RACE.race_fn(boards), True))
    path = save_checkpoint(tmp_path / "r.pt", net, games_trained=0)
    loaded = load_checkpoint(path).network
    assert loaded.encoder is EXPERT_RACE
    np.testing.assert_allclose(loaded.probs6(boards), net.probs6(boards), rtol=1e-6)


def test_an_expert_network_widens_to_it_unchanged():
    torch.manual_seed(5)
    source = Network(NetworkConfig(encoder="expert", hidden=(12,), race_net=True, crashed_net=True))
    boards = mixed_positions(np.random.default_rng(25), 300)
    wide = widened(source, "expert_race", boards[:64])
    assert wide.encoder is EXPERT_RACE and wide.crashed_mlp is not None
    np.testing.assert_allclose(wide.probs6(boards), source.probs6(boards), atol=1e-6)


def test_the_onnx_input_layout_covers_every_unit():
    rows = input_layout(EXPERT_RACE)
    units = []
    for r in rows:
        units += list(range(r.first, r.last + 1))
    assert units == list(range(312))
    assert "crossovers" in rows[-41 + 14].meaning and rows[-1].meaning.startswith("10 x pip lead")
