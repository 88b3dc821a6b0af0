"""The ``expert`` encoder: ``rich`` plus gnubg's 25 contact/crashed-net inputs per side (nard_ai.model.expert).

Checked four ways: hand-made positions whose units are worked out here from gnubg's
definitions (eval.c ``CalculateHalfInputs``, as the module docstring states them); a
plain-Python reference of the definitions, point by point in gnubg's two-row form, against
the compiled kernels on positions of random games; gnubg's own compiled
``CalculateHalfInputs`` where the ``gnubg`` package is installed; and the encoder's
contracts (layout, symmetry, races, the first layer's embedding path, checkpoints).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import check_first_layer_against_plain

from nard_ai import legal_plays, pos, starting_board, swap_sides
from nard_ai.core.classes import race_flags
from nard_ai.formats.tanboard import to_tanboard
from nard_ai.model.encoding import EXPERT, encode_expert, encode_rich, get_encoder
from nard_ai.model.expert import (
    ESCAPES,
    ESCAPES_PAST_FIRST,
    EXPERT_NAMES,
    ROLL_WAYS,
    ROLL_WEIGHT,
    WAY_EITHER,
    WAY_FACES,
    WAY_PIPS,
    WAY_STEPS,
    expert_inputs_into,
)
from nard_ai.model.network import Network, NetworkConfig, load_checkpoint, save_checkpoint
from tests.conftest import mixed_positions

MINE, THEIRS = slice(221, 246), slice(246, 271)
UNIT = {name: k for k, name in enumerate(EXPERT_NAMES)}


def mover_half(board) -> np.ndarray:
    return encode_expert(np.asarray(board, dtype=np.int8)[None])[0][MINE]


def check_units(board, expected: dict[str, float]) -> None:
    got = mover_half(board)
    for name, value in expected.items():
        assert got[UNIT[name]] == pytest.approx(value, rel=1e-6, abs=1e-7), name


# --------------------------------------------------------------------------
# registration and layout
# --------------------------------------------------------------------------


def test_expert_is_registered_with_its_size_and_race_unit():
    assert get_encoder("expert", 1) is EXPERT
    assert (EXPERT.size, EXPERT.race_unit, EXPERT.race_fn) == (271, 220, race_flags)
    assert len(EXPERT_NAMES) == 25 and EXPERT_NAMES[0] == "I_OFF1" and EXPERT_NAMES[-1] == "I_BACKRESCAPES"


def test_the_first_221_units_are_rich():
    boards = mixed_positions(np.random.default_rng(3), 300)
    np.testing.assert_array_equal(encode_expert(boards)[:, :221], encode_rich(boards))


def test_expert_inputs_into_leaves_other_columns_alone_and_checks_its_arguments():
    boards = mixed_positions(np.random.default_rng(4), 20)
    out = np.full((20, 60), 7.0, dtype=np.float32)
    expert_inputs_into(boards, out, 5)
    assert (out[:, :5] == 7).all() and (out[:, 55:] == 7).all()
    np.testing.assert_array_equal(out[:, 5:55], encode_expert(boards)[:, 221:])
    with pytest.raises(ValueError, match="float32"):
        expert_inputs_into(boards, np.zeros((20, 40), dtype=np.float32), 0)
    with pytest.raises(ValueError, match="int8"):
        expert_inputs_into(boards.astype(np.int64), out, 0)


# --------------------------------------------------------------------------
# the tables, against gnubg's (eval.c ComputeTable0/1, aIntermediate, aanCombination, aaRoll)
# --------------------------------------------------------------------------


def test_escape_tables_edges():
    # ComputeTable0: nothing blocked, all 36; ComputeTable1 (past the first block) gives 0 for nothing blocked
    assert ESCAPES[0] == 36 and ESCAPES_PAST_FIRST[0] == 0
    # only the point 1 ahead blocked: 1-1 has both dice blocked (1 roll) -> 35; every other roll goes past it
    assert ESCAPES[1] == 35 and ESCAPES_PAST_FIRST[1] == 35
    # only 5 ahead: sums of 5 (4 rolls) and 5-5 fail -> 31; of those, sums 2, 3, 4 (6 rolls) stop short of it
    assert ESCAPES[1 << 4] == 31 and ESCAPES_PAST_FIRST[1 << 4] == 25


def test_the_ways_to_hit_are_gnubgs():
    """39 ways (aIntermediate); per distance 1..24 as many as gnubg's aanCombination lists; rolls as aaRoll."""
    assert len(WAY_PIPS) == 39
    per_distance = [int((WAY_PIPS == d).sum()) for d in range(1, 25)]
    assert per_distance == [1, 2, 3, 4, 3, 5, 3, 4, 3, 2, 1, 3, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1]
    rolls = [(d, d) for d in range(1, 7)] + [(hi, lo) for hi in range(2, 7) for lo in range(1, hi)]
    assert len(ROLL_WAYS) == 21 and ROLL_WEIGHT.sum() == 36
    for (hi, lo), ways, weight in zip(rolls, ROLL_WAYS, ROLL_WEIGHT, strict=True):
        if hi == lo:  # a double's 1, 2, 3 and 4 steps, every landing required
            assert weight == 1
            assert [(WAY_FACES[w], WAY_PIPS[w]) for w in ways] == [(k, k * hi) for k in range(1, 5)]
            assert list(WAY_STEPS[ways[3]]) == [hi, 2 * hi, 3 * hi] and not WAY_EITHER[ways].any()
        else:  # low die, high die, both (either landing will do)
            assert weight == 2 and ways[3] == -1
            assert [(WAY_FACES[w], WAY_PIPS[w]) for w in ways[:3]] == [(1, lo), (1, hi), (2, lo + hi)]
            assert list(WAY_STEPS[ways[2]]) == [lo, hi, 0] and WAY_EITHER[ways[2]]


# --------------------------------------------------------------------------
# hand-made positions (each value worked out from the definitions; S = the side on roll)
# --------------------------------------------------------------------------


def test_starting_position_by_hand():
    """Each side: 2 on 24, 5 on 13, 3 on 8, 5 on 6; both halves equal.

    Break contact: O's rearmost is on S's 1 (r = 1): 6x5 + 8x3 + 13x5 + 24x2 = 167 -> 1.
    Back checker and back anchor: the 24 -> 23/24; forward anchor: the 24 is O's 1 -> 1/6.
    No blots: no hits. Back escapes: O's back checker sees S's 6, 8, 13 at 5, 7, 12 pips:
    sums 5 (4 rolls), 7 (6), 12 (1) and 5-5 fail -> 24/36. Containment (O on S's 1..9): fewest
    escapes 22, from S's 2 (blocks 4, 6, 11 ahead: sums 4 (3), 6 (5), 11 (2), and 4-4, 6-6,
    4-6 with both dice blocked (4)) -> 1 - 22/36, the same for I_CONTAIN. Mobility: 8s see O's
    point at S's 1, 7 ahead (30 escapes), weight 2; 13s see S's 12 and 1, 1 and 12 ahead (34),
    weight 7; 24s as the back escapes (24), weight 18: (2x3x30 + 7x5x34 + 18x2x24) / 3600.
    Moment: indices 5x5, 7x3, 12x5, 23x2 sum 152, ceil(152/15) = 11; beyond it 5x1 + 2x144 =
    293 over 7 -> 42 -> 42/400. Enter2: O made 1 home point -> 1 - (5/6)^2 = 11/36. Timing:
    m = 11; the 13 adds 3 spares (t 36), the 8 adds 3 (t 57); home: the 6 adds 3 (t 72),
    points 5, 4, 3, 2 take 2 each (t 64, 58, 54, 52), point 1 finds 1 spare left -> 0.52.
    Backbone: from the 24, the 13 is 11 apart (c 2), the 8 and 6 too far (0) -> 1 - (2/3)/11.
    One anchor in O's home: backg1 = 2/8. Free pips: none in front of O's rearmost. Escapes
    past the first block (5 ahead): the 24 escapes less sums 2, 3, 4 (6 rolls) -> 18/36.
    """
    expected = {
        "I_OFF1": 0,
        "I_OFF2": 0,
        "I_OFF3": 0,
        "I_BREAK_CONTACT": 1.0,
        "I_BACK_CHEQUER": 23 / 24,
        "I_BACK_ANCHOR": 23 / 24,
        "I_FORWARD_ANCHOR": 1 / 6,
        "I_PIPLOSS": 0,
        "I_P1": 0,
        "I_P2": 0,
        "I_BACKESCAPES": 24 / 36,
        "I_ACONTAIN": 14 / 36,
        "I_ACONTAIN2": (14 / 36) ** 2,
        "I_CONTAIN": 14 / 36,
        "I_CONTAIN2": (14 / 36) ** 2,
        "I_MOBILITY": (2 * 3 * 30 + 7 * 5 * 34 + 18 * 2 * 24) / 3600,
        "I_MOMENT2": 42 / 400,
        "I_ENTER": 0,
        "I_ENTER2": 11 / 36,
        "I_TIMING": 0.52,
        "I_BACKBONE": 1 - (2 / 3) / 11,
        "I_BACKG": 0,
        "I_BACKG1": 2 / 8,
        "I_FREEPIP": 0,
        "I_BACKRESCAPES": 18 / 36,
    }
    assert set(expected) == set(EXPERT_NAMES)
    check_units(starting_board(), expected)
    f = encode_expert(starting_board()[None])[0]
    np.testing.assert_array_equal(f[MINE], f[THEIRS])


H1 = pos(me={10: 1, 6: 2, 1: 12}, opp={20: 1, 1: 14})


def test_one_blot_direct_and_combined_shots_and_the_position_units_by_hand():
    """S: 1 on 10, 2 on 6, 12 on 1; O: a blot on its 20 (S's 5), 14 on its 1 (S's 24).

    Hits: the hitter on 10 is 5 pips from the blot (the 6 holds exactly two: not a hitter):
    every 5 (11 rolls), 4-1 and 3-2 through open points (4): 15/36, one checker each; the
    blot loses 5 pips: 15 x 5 / 432. r = 5: break contact (10-5+1) + 2 x (6-5+1) = 10;
    free pips 12 x 1. Back checker 10 -> 9/24; back anchor 6 -> 5/24; no anchor in 13..24 -> 2.
    O's blot sees S's 6 one pip ahead: only 1-1 fails -> 35/36, and every escape goes past
    it (35/36). Containment from S's 5..9: 35 (at 5) -> 1/36; from S's 1..9: fewest 31 at
    S's 1 (5 ahead: sums 5 and 5-5) -> 5/36. Mobility: the 10 sees no O point, weight 4:
    4 x 36 / 3600. Moment: indices 9, 5, 5, 0 x 12 sum 19 -> mean 2; beyond it 49 + 9 + 9
    over 3 -> 23 -> 23/400. Enter2: O holds its 1 -> 11/36. Timing: the 10 adds 1 spare
    (t 9); the 6 holds 2; points 5..2 need 2 each, 1 spare is not enough; the 1 adds 10
    spares at index 0 -> 0.09. No made point above index 0 besides the 6: backbone 0.
    """
    check_units(
        H1,
        {
            "I_PIPLOSS": 75 / 432,
            "I_P1": 15 / 36,
            "I_P2": 0,
            "I_BREAK_CONTACT": 10 / 167,
            "I_FREEPIP": 0.12,
            "I_BACK_CHEQUER": 9 / 24,
            "I_BACK_ANCHOR": 5 / 24,
            "I_FORWARD_ANCHOR": 2.0,
            "I_BACKESCAPES": 35 / 36,
            "I_BACKRESCAPES": 35 / 36,
            "I_ACONTAIN": 1 / 36,
            "I_ACONTAIN2": 1 / 36**2,
            "I_CONTAIN": 5 / 36,
            "I_CONTAIN2": 25 / 36**2,
            "I_MOBILITY": 0.04,
            "I_MOMENT2": 23 / 400,
            "I_ENTER": 0,
            "I_ENTER2": 11 / 36,
            "I_TIMING": 0.09,
            "I_BACKBONE": 0,
            "I_BACKG": 0,
            "I_BACKG1": 0,
        },
    )


def test_two_blots_and_a_double_hit_by_hand():
    """As H1 with a second O blot on its 17 (S's 8, 2 pips from the hitter).

    Rolls hitting: 1-1 (two steps to the 8), 2-2, 5-5; 2-1, 4-2, 6-2 (the 2); 5-1, 5-3, 5-4,
    6-5 (the 5); 4-1 (both dice to the 5); 5-2 (the 2, or the 5: the same single hitter, one
    checker); 3-2 (the 2 hits on 8, then the 3 on 5: a landing with a blot, two checkers):
    3 + 2 x 10 = 23/36, two checkers 2/36. Pips: the 8 costs O 8 pips, the 5 5 pips: 1-1, 2-2
    8, 5-5 5; 2-1, 3-2, 4-2, 5-2, 6-2 8; 4-1, 5-1, 5-3, 5-4, 6-5 5: 21 + 2 x 65 = 151.
    """
    board = pos(me={10: 1, 6: 2, 1: 12}, opp={20: 1, 17: 1, 1: 13})
    check_units(board, {"I_P1": 23 / 36, "I_P2": 2 / 36, "I_PIPLOSS": 151 / 432})


def test_one_checker_on_the_bar_hits_from_the_bar_and_the_entering_loss_by_hand():
    """S: 1 on the bar, 1 on 13, 2 on 6, 11 on 1; O: a blot on its 2, 2 on its 5, 12 on its 6.

    Only the bar is behind the blot (S's 23, 2 pips in): every 2 (11 rolls) and 1-1 through
    O's 1: 12/36, one checker; O loses 23 pips each: 12 x 23. Entering against O's 5 and 6:
    5-5 loses 20, 6-6 24, 6-5 (two rolls) 11 each: 66 / (36 x 49/6). Enter2: 1 - (4/6)^2.
    """
    board = pos(me={25: 1, 13: 1, 6: 2, 1: 11}, opp={2: 1, 5: 2, 6: 12})
    check_units(
        board,
        {
            "I_P1": 12 / 36,
            "I_P2": 0,
            "I_PIPLOSS": 12 * 23 / 432,
            "I_ENTER": 66 / 294,
            "I_ENTER2": 20 / 36,
            "I_BACK_CHEQUER": 1.0,
        },
    )


def test_two_on_the_bar_count_only_direct_shots_from_the_bar_by_hand():
    """S: 2 on the bar, 2 on 6, 11 on 1; O: a blot on its 5, 2 on its 6, 12 on its 13.

    Only a 5 hits (11 rolls; 4-1 and 3-2 do not count with two on the bar), 20 pips each.
    Entering with two on the bar against O's 6: 6-6 loses 24, and each of 1-6 .. 5-6 leaves a
    checker out, losing the 6 (two rolls each): 24 + 5 x 12 = 84.
    """
    board = pos(me={25: 2, 6: 2, 1: 11}, opp={5: 1, 6: 2, 13: 12})
    check_units(board, {"I_P1": 11 / 36, "I_P2": 0, "I_PIPLOSS": 220 / 432, "I_ENTER": 84 / 294})


def test_gnubgs_entry_check_for_a_double_hitting_from_a_point_with_one_on_the_bar():
    """Module docstring: with one checker on the bar, a double d-d hitting directly from a point
    looks at O's point 2d for the entry (gnubg's second way of the roll), not d.

    S: 1 on the bar, 1 on 10; O: a blot on its 18 (S's 7, 3 from the 10), 14 on its 6. The
    3s hit after entering with the other die: 3-1, 3-2, 4-3, 5-3 (6-3 cannot enter), 7 pips
    each: 8/36. 3-3 could enter on O's 3 and hit, but gnubg checks O's 6 (made): not counted.
    """
    board = pos(me={25: 1, 10: 1, 6: 2, 1: 11}, opp={18: 1, 6: 14})
    check_units(board, {"I_P1": 8 / 36, "I_P2": 0, "I_PIPLOSS": 8 * 7 / 432})


def test_gnubgs_landing_check_for_several_steps_from_the_bar():
    """Module docstring: with one checker on the bar, a way of several steps from the bar counts a
    second checker when O has a blot on its point ``s + 2`` for a landing ``s`` pips in.

    S: 1 on the bar, 2 on 6, 12 on 1; O: blots on its 5 and 3, 13 on its 13. Hitting rolls:
    the 3s and the 5s from the bar, 1-1 and 2-1 (to the 3), 4-1 (to the 5): 25/36. Two
    checkers: 3-2 (to the 5 through the 3) and 5-3 (both from the bar), and, by the rule above,
    1-1 and 2-1 (a step of 1 reads O's 3, the target itself) and 4-1 (reads O's 3): 9/36.
    Pips: 22 for the blot on 3, 20 on 5, the larger per roll: 3 x 22 + 1 x 20 (doubles 1-1,
    3-3, 5-5: 64) and 2 x (6 x 22 + 5 x 20) = 464 for the rest.
    """
    board = pos(me={25: 1, 6: 2, 1: 12}, opp={5: 1, 3: 1, 13: 13})
    check_units(board, {"I_P1": 25 / 36, "I_P2": 9 / 36, "I_PIPLOSS": 528 / 432})


def test_checkers_off_anchors_backbone_and_back_game_units_by_hand():
    """I_OFF: 3 off -> (3/5, 0, 0); 7 off -> (1, 2/5, 0); 12 off -> (1, 1, 2/5).

    Forward anchor: S's most forward point in 19..24 (20 -> O's 5 -> 5/6; 21 -> 4/6), else its
    rearmost in 13..18 (16 -> 9/6). Backbone: from the rearmost made point 22 (the 1 never
    counts): 20 (2 apart, c 11), 16 (6, 11), 8 and 2 (too far, 0) -> 1 - 5.5/11; from 21: 16
    (5, 11), 14 (7, c 6) -> 1 - 8.5/11. Back game: anchors on 20 and 22, 4 checkers there and 1
    on the bar -> (5 - 3)/4; one anchor (21) with 2 checkers -> backg1 2/8.
    """
    check_units(
        pos(me={20: 2, 22: 2, 16: 2, 8: 2, 2: 2, 1: 1, 25: 1}, opp={13: 15}),
        {
            "I_OFF1": 3 / 5,
            "I_OFF2": 0,
            "I_OFF3": 0,
            "I_FORWARD_ANCHOR": 5 / 6,
            "I_BACKBONE": 0.5,
            "I_BACKG": 0.5,
            "I_BACKG1": 0,
        },
    )
    check_units(
        pos(me={21: 2, 16: 2, 14: 3, 1: 1}, opp={13: 15}),
        {
            "I_OFF1": 1,
            "I_OFF2": 2 / 5,
            "I_OFF3": 0,
            "I_FORWARD_ANCHOR": 4 / 6,
            "I_BACKBONE": 1 - 8.5 / 11,
            "I_BACKG": 0,
            "I_BACKG1": 2 / 8,
        },
    )
    check_units(
        pos(me={16: 2, 14: 1}, opp={13: 15}),
        {"I_OFF1": 1, "I_OFF2": 1, "I_OFF3": 2 / 5, "I_FORWARD_ANCHOR": 9 / 6, "I_BACKBONE": 0},
    )


def test_a_race_position_by_hand():
    """S: 8 on 1, 7 on 2; O: 8 on its 1, 7 on its 3 (S's 22, so r = 22). No contact: no hits, no
    break-contact pips, O's back checker sees none of S's points (36 escapes, 0 past a first
    block), no containment from S's 9 back to O's rearmost; but I_CONTAIN still sees S's 2 one
    pip in front of S's 1 (35 -> 1/36). Free pips = S's pip count 22. Timing: the 2 has 5 spares
    at index 1 -> 0.05. Enter2: O holds 2 home points -> 20/36.
    """
    board = pos(me={1: 8, 2: 7}, opp={1: 8, 3: 7})
    check_units(
        board,
        {
            "I_BREAK_CONTACT": 0,
            "I_PIPLOSS": 0,
            "I_P1": 0,
            "I_P2": 0,
            "I_BACK_CHEQUER": 1 / 24,
            "I_BACK_ANCHOR": 1 / 24,
            "I_FORWARD_ANCHOR": 2,
            "I_BACKESCAPES": 1,
            "I_BACKRESCAPES": 0,
            "I_ACONTAIN": 0,
            "I_CONTAIN": 1 / 36,
            "I_MOBILITY": 0,
            "I_MOMENT2": 0,
            "I_FREEPIP": 0.22,
            "I_TIMING": 0.05,
            "I_ENTER2": 20 / 36,
        },
    )


def test_race_positions_follow_the_definitions():
    """Module docstring: in a race O's checkers are all behind S's, which fixes several units."""
    boards = mixed_positions(np.random.default_rng(8), 600)
    boards = boards[race_flags(boards)]
    assert len(boards) > 50
    enc = encode_expert(boards)
    assert (enc[:, 220] == 1).all()
    for half, view in ((MINE, boards), (THEIRS, swap_sides(boards))):
        f = enc[:, half]
        for name in (
            "I_BREAK_CONTACT",
            "I_PIPLOSS",
            "I_P1",
            "I_P2",
            "I_ACONTAIN",
            "I_ENTER",
            "I_BACKRESCAPES",
        ):
            np.testing.assert_array_equal(f[:, UNIT[name]], 0, err_msg=name)
        np.testing.assert_array_equal(f[:, UNIT["I_BACKESCAPES"]], 1)
        mine = np.clip(view[:, 1:26].astype(np.int64), 0, None)
        points = np.arange(1, 26)
        np.testing.assert_allclose(f[:, UNIT["I_FREEPIP"]], (mine * points).sum(1) / 100, rtol=1e-6)
        mobility = (mine[:, 6:] * (points[6:] - 6) * 36).sum(1) / 3600
        np.testing.assert_allclose(f[:, UNIT["I_MOBILITY"]], mobility, rtol=1e-6)


# --------------------------------------------------------------------------
# a straightforward reference, in gnubg's two-row form
# --------------------------------------------------------------------------


def _escapes(board, n: int, past_first: bool = False) -> int:
    # rolls (of 36) with which a checker of the other side on its index n passes board's made points
    # among the min(n, 12) points in front of it (the point i + 1 pips ahead is board index 24 + i - n)
    blocked = [n > i and board[24 + i - n] >= 2 for i in range(12)]
    first = next((i + 1 for i in range(12) if blocked[i]), None)
    count = 0
    for a in range(1, 7):
        for b in range(1, a + 1):
            if blocked[a + b - 1] or (blocked[a - 1] and blocked[b - 1]):
                continue
            if past_first and (first is None or a + b <= first):
                continue
            count += 1 if a == b else 2
    return count


def _roll_ways(a: int, b: int) -> list[tuple[int, int, list[int], bool]]:
    # (faces, pips, intermediate steps, either-suffices) in gnubg's order
    if a == b:
        return [(k, k * a, [a * s for s in range(1, k)], False) for k in range(1, 5)]
    lo, hi = min(a, b), max(a, b)
    return [(1, lo, [], False), (1, hi, [], False), (2, lo + hi, [lo, hi], True)]


ROLLS = [(d, d) for d in range(1, 7)] + [(hi, lo) for hi in range(2, 7) for lo in range(1, hi)]


def _hits(me, op) -> tuple[int, int, int]:
    """(pips lost over the 36 rolls, rolls hitting >= 1, >= 2): the module docstring's rules."""
    made_home = sum(me[i] >= 2 for i in range(6))
    targets = [q for q in range(24) if op[q] == 1 and (q <= 21 or made_home > 2)]
    hitters = [j for j in range(25) if me[j] and not (j < 6 and me[j] == 2)]

    def hitting(way) -> set[int]:
        faces, pips, steps, either = way
        found = set()
        for q in targets:  # O's blot on its index q is my index 23 - q
            for j in hitters:
                if j - (23 - q) != pips:
                    continue
                # landings counted from the target, as gnubg does: O's index q - step
                blocked = [op[q - s] > 1 for s in steps]
                if faces > 1 and (all(blocked) if either else any(blocked)):
                    continue
                found.add(j)
        return found

    pip_sum = one = two = 0
    for a, b in ROLLS:
        ways = _roll_ways(a, b)
        hits = [hitting(w) for w in ways]
        count = pips = 0
        if me[24] == 0:
            last = -1
            for (faces, wpips, steps, _), h in zip(ways, hits, strict=True):
                if not h:
                    continue
                k = max(h)
                pips = max(pips, k - wpips + 1)
                if faces == 1:
                    count += 1 if (last != k or me[k] > 1) else 0
                    last = k
                    count += 1 if a == b and len(h) > 1 else 0
                else:
                    count = max(count, 1)
                    if any(op[23 - k + s] == 1 for s in steps):
                        count += 1
        elif me[24] == 1:
            entered = False
            for j, ((faces, wpips, steps, _), h) in enumerate(zip(ways, hits, strict=True)):
                if not h:
                    continue
                if faces == 1:
                    for k in sorted(h, reverse=True):
                        if entered and k != 24:
                            break
                        if k != 24:
                            if op[ways[1 - j][1] - 1] > 1:  # gnubg: the roll's other way's pips
                                break
                            entered = True
                        count += 1
                        pips = max(pips, k - wpips + 1)
                elif 24 in h:
                    count = max(count, 1)
                    pips = max(pips, 25 - wpips)
                    if any(op[s + 1] == 1 for s in steps):  # gnubg's index (module docstring)
                        count += 1
        else:
            for (faces, wpips, _, _), h in zip(ways[:2], hits[:2], strict=True):
                if faces == 1 and 24 in h:
                    count += 1
                    pips = max(pips, 25 - wpips)
        weight = 1 if a == b else 2
        pip_sum += pips * weight
        one += weight if count > 0 else 0
        two += weight if count > 1 else 0
    return pip_sum, one, two


def reference_half(me, op) -> list[float]:
    """gnubg's 25 units of the side ``me`` against ``op`` (rows: index i = point i + 1, 24 = bar)."""
    me, op = [int(v) for v in me], [int(v) for v in op]
    f = dict.fromkeys(EXPERT_NAMES, 0.0)
    off = 15 - sum(me)
    f["I_OFF1"], f["I_OFF2"], f["I_OFF3"] = min(off, 5) / 5, min(max(off - 5, 0), 5) / 5, max(off - 10, 0) / 5
    o_back = max((q for q in range(25) if op[q]), default=-1)
    r = 23 - o_back  # O's rearmost checker, my index
    f["I_BREAK_CONTACT"] = sum((i + 1 - r) * me[i] for i in range(25) if i > r) / 167
    f["I_FREEPIP"] = sum((i + 1) * me[i] for i in range(25) if i < r) / 100
    back = max((i for i in range(25) if me[i]), default=-1)
    f["I_BACK_CHEQUER"] = back / 24
    anchor = max((i for i in range(min(back, 23) + 1) if me[i] >= 2), default=-1)
    f["I_BACK_ANCHOR"] = anchor / 24
    home_anchor = [j for j in range(18, anchor + 1) if me[j] >= 2]
    outer_anchor = [j for j in range(12, 18) if me[j] >= 2]
    j = min(home_anchor) if home_anchor else max(outer_anchor) if outer_anchor else None
    f["I_FORWARD_ANCHOR"] = 2.0 if j is None else (24 - j) / 6
    pip_sum, one, two = _hits(me, op)
    f["I_PIPLOSS"], f["I_P1"], f["I_P2"] = pip_sum / 432, one / 36, two / 36
    f["I_BACKESCAPES"] = _escapes(me, 23 - r) / 36
    f["I_BACKRESCAPES"] = _escapes(me, 23 - r, past_first=True) / 36
    f["I_ACONTAIN"] = 1 - min([36] + [_escapes(me, q) for q in range(15, 24 - r)]) / 36
    f["I_ACONTAIN2"] = f["I_ACONTAIN"] ** 2
    f["I_CONTAIN"] = 1 - min(_escapes(me, q) for q in range(15, 24)) / 36
    f["I_CONTAIN2"] = f["I_CONTAIN"] ** 2
    f["I_MOBILITY"] = sum((i - 5) * me[i] * _escapes(op, i) for i in range(6, 25)) / 3600
    total = sum(me)
    mean = -(-sum(i * me[i] for i in range(25)) // total) if total else 0
    far = [(i, me[i]) for i in range(mean + 1, 25) if me[i]]
    far_n = sum(n for _, n in far)
    f["I_MOMENT2"] = (-(-sum(n * (i - mean) ** 2 for i, n in far) // far_n) if far_n else 0) / 400
    blocked = [op[i] > 1 for i in range(6)]
    if me[24]:
        loss = 0
        for d1 in range(1, 7):
            for d2 in range(1, 7):  # the 36 rolls: a double loses 4 dice, else each blocked die that counts
                stuck = [d for d in (d1, d2) if blocked[d - 1]]
                if d1 == d2 and stuck:
                    loss += 4 * d1
                elif len(stuck) == 2:
                    loss += d1 + d2
                elif stuck and me[24] > 1:
                    loss += stuck[0]
        f["I_ENTER"] = loss / (36 * 49 / 6)
    f["I_ENTER2"] = 1 - (1 - sum(blocked) / 6) ** 2
    # timing
    m = max(r, 11)
    t, spare = 24 * me[24], me[24]
    for i in range(23, m, -1):
        if me[i] and me[i] != 2:
            extra = me[i] - 2 if me[i] > 2 else 1
            spare, t = spare + extra, t + i * extra
    for i in range(min(m, 23), 5, -1):
        spare, t = spare + me[i], t + i * me[i]
    for i in range(5, -1, -1):
        if me[i] > 2:
            spare, t = spare + me[i] - 2, t + i * (me[i] - 2)
        elif me[i] < 2 and spare >= 2 - me[i]:
            spare, t = spare - (2 - me[i]), t - i * (2 - me[i])
    assert t >= 0
    f["I_TIMING"] = t / 100
    made = [i for i in range(23, 0, -1) if me[i] >= 2]
    if len(made) > 1:
        pa = made[0]
        c = [11 if pa - q <= 6 else 13 - (pa - q) if pa - q <= 11 else 0 for q in made[1:]]
        w, tot = sum(ci * me[pa] for ci in c), me[pa] * len(c)  # gnubg's sums, weighted by the rear point
        f["I_BACKBONE"] = 1 - w / (tot * 11)
    anchors = sum(me[i] > 1 for i in range(18, 24))
    back_checkers = sum(me[18:25])
    if anchors > 1:
        f["I_BACKG"] = (back_checkers - 3) / 4
    elif anchors == 1:
        f["I_BACKG1"] = back_checkers / 8
    return [f[name] for name in EXPERT_NAMES]


def _game_positions(seed: int, n: int) -> np.ndarray:
    # positions of random games (mixed_positions: 60% random play), their afterstates and the swapped ones
    rng = np.random.default_rng(seed)
    boards = mixed_positions(rng, n)
    afters = np.concatenate(
        [legal_plays(b, (int(rng.integers(1, 7)), int(rng.integers(1, 7)))) for b in boards[: n // 5]]
    )
    afters = afters[rng.permutation(len(afters))[:n]]
    return np.ascontiguousarray(np.concatenate([boards, afters, swap_sides(afters)]))


def test_the_kernels_match_the_reference_on_positions_of_random_games():
    """Every unit of both halves, against the point-by-point reference above (the kernels use bit
    masks for the hits and the escape windows, and tables of ways built once)."""
    boards = _game_positions(21, 500)
    enc = encode_expert(boards)
    for board, row in zip(boards, enc, strict=True):
        tan = to_tanboard(board)
        np.testing.assert_allclose(
            row[MINE], reference_half(tan[1], tan[0]), rtol=1e-6, atol=1e-7, err_msg=str(board)
        )
        np.testing.assert_allclose(
            row[THEIRS], reference_half(tan[0], tan[1]), rtol=1e-6, atol=1e-7, err_msg=str(board)
        )


def test_swapping_sides_exchanges_the_two_halves():
    boards = _game_positions(5, 300)
    a = encode_expert(boards)
    b = encode_expert(np.ascontiguousarray(swap_sides(boards)))
    np.testing.assert_array_equal(a[:, MINE], b[:, THEIRS])
    np.testing.assert_array_equal(a[:, THEIRS], b[:, MINE])


def test_the_parallel_path_equals_the_serial_one():
    boards = _game_positions(6, 1500)
    serial = np.zeros((len(boards), 50), dtype=np.float32)
    parallel = np.zeros_like(serial)
    expert_inputs_into(boards, serial, 0, threads=1)
    expert_inputs_into(boards, parallel, 0, threads=2)
    np.testing.assert_array_equal(serial, parallel)
    np.testing.assert_array_equal(encode_expert(boards)[:, 221:], serial)


# --------------------------------------------------------------------------
# gnubg's own CalculateHalfInputs, where the gnubg package is installed
# --------------------------------------------------------------------------

_ORACLE = r"""
import ctypes, json, os, subprocess, sys
import gnubg  # importing it initialises gnubg's evaluator, escape tables included
so = os.path.realpath(gnubg._gnubg.__file__)
symbols = {}
for line in subprocess.run(["nm", so], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3:
        symbols[parts[2]] = int(parts[0], 16)
if "CalculateHalfInputs" not in symbols:
    sys.exit(3)
base = next(int(f[0].split("-")[0], 16) for f in (l.split() for l in open("/proc/self/maps"))
            if len(f) >= 6 and f[5] == so and int(f[2], 16) == 0)
board_t, out_t = ctypes.c_uint * 25, ctypes.c_float * 25
half = ctypes.CFUNCTYPE(None, board_t, board_t, out_t)(base + symbols["CalculateHalfInputs"])
halves = []
for me, op in json.loads(sys.stdin.read()):
    out = out_t(*[float("nan")] * 25)
    half(board_t(*me), board_t(*op), out)
    halves.append(list(out))
tables = {name: list((ctypes.c_int * 4096).from_address(base + symbols[name]))
          for name in ("anEscapes", "anEscapes1") if name in symbols}
print(json.dumps({"halves": halves, "tables": tables}))
"""


def _gnubg_halves(rows: list) -> tuple[np.ndarray, dict[str, list[int]]]:
    try:
        import gnubg  # noqa: F401
    except ImportError:
        pytest.skip("the gnubg package is not installed")
    if not sys.platform.startswith("linux") or shutil.which("nm") is None:
        pytest.skip("needs Linux's /proc/self/maps and binutils' nm to find gnubg's CalculateHalfInputs")
    run = subprocess.run(
        [sys.executable, "-c", _ORACLE],
        input=json.dumps(rows),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=300,
    )
    if run.returncode == 3 or run.returncode < 0:
        pytest.skip(f"gnubg's CalculateHalfInputs cannot be called in this build (exit {run.returncode})")
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    return np.array(result["halves"], dtype=np.float32), result["tables"]


def test_the_encoder_matches_gnubgs_compiled_calculate_half_inputs():
    """gnubg's own function (its ``gnubg`` Python package's library, called through ctypes in a
    child process) on positions of random games: every unit it computes (3..24; the I_OFF units
    come from menOffAll, not from it) of both halves, to float32 rounding; and its two escape
    tables. Finished games are left out: gnubg divides by zero there (module docstring)."""
    boards = _game_positions(33, 1500)
    boards = boards[(boards > 0).any(axis=1) & (boards < 0).any(axis=1)]
    rows = []
    for board in boards:
        tan = to_tanboard(board).tolist()
        rows += [[tan[1], tan[0]], [tan[0], tan[1]]]
    gnubg_units, tables = _gnubg_halves(rows)
    assert np.isnan(gnubg_units[:, :3]).all()  # gnubg's half function leaves the I_OFF units alone
    if "anEscapes" in tables:  # its escape tables (ComputeTable0, ComputeTable1), where it exports them
        np.testing.assert_array_equal(ESCAPES, tables["anEscapes"])
        np.testing.assert_array_equal(ESCAPES_PAST_FIRST, tables["anEscapes1"])
    enc = encode_expert(boards)
    ours = np.stack([enc[:, MINE], enc[:, THEIRS]], axis=1).reshape(-1, 25)
    np.testing.assert_allclose(ours[:, 3:], gnubg_units[:, 3:], rtol=0, atol=1e-6)


# --------------------------------------------------------------------------
# the network: embedding path and checkpoints
# --------------------------------------------------------------------------


def _special_boards() -> np.ndarray:
    return np.stack(
        [
            pos(me={6: 15}, opp={6: 15}),  # 15 on one point: the table's last row
            pos(me={25: 3, 6: 12}, opp={25: 2, 1: 13}),  # both bars
            pos(me={1: 1}, opp={}),  # a finished game
        ]
    )


@pytest.mark.parametrize("threads", [1, 2])
def test_the_embedding_path_equals_the_plain_first_layer(threads):
    boards = np.ascontiguousarray(np.concatenate([_game_positions(11, 400), _special_boards()]))
    cols = check_first_layer_against_plain(boards, encode_expert(boards), "expert", threads)
    assert cols == [192, 193, 194, 195] + list(range(198, 271))


def test_the_network_uses_the_embedding_path_and_agrees_with_the_encoded_one():
    torch.manual_seed(3)
    net = Network(NetworkConfig(encoder="expert", hidden=(24,), race_net=True))
    assert net._embeddable
    boards = np.ascontiguousarray(np.concatenate([_game_positions(12, 300), _special_boards()[:2]]))
    fast = net.probs6(boards)
    with torch.no_grad():
        plain = net.predict(torch.from_numpy(encode_expert(boards))).numpy()
    np.testing.assert_allclose(fast, plain, atol=2e-6)


def test_checkpoint_round_trip(tmp_path):
    torch.manual_seed(1)
    net = Network(NetworkConfig(encoder="expert", hidden=(8,), race_net=True))
    path = save_checkpoint(tmp_path / "e.pt", net, games_trained=3)
    payload = torch.load(path, weights_only=False)
    assert payload["encoder"] == {"name": "expert", "version": 1, "size": 271}
    loaded = load_checkpoint(path)
    assert loaded.network.config == net.config and loaded.network.encoder is EXPERT
    boards = mixed_positions(np.random.default_rng(2), 60)
    np.testing.assert_allclose(loaded.network.probs6(boards), net.probs6(boards), rtol=1e-6)
