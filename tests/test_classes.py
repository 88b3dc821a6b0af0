"""Position classes (nard_ai.core.classes): one definition, re-exported where the layers above had them.

The expected classes are worked out by hand from the definitions in the module docstring
(gnubg eval.c ``ClassifyPosition``); the starting position is contact (RULES.md §2).
"""

from __future__ import annotations

import numpy as np
import pytest

from nard_ai.core import classes
from nard_ai.core.board import starting_board


def board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A board from the mover's points (25 = bar) and the opponent's points in its own numbering (25 = bar)."""
    b = np.zeros(26, dtype=np.int8)
    for p, n in mine.items():
        b[p] = n
    for q, n in theirs.items():
        b[0 if q == 25 else 25 - q] -= n
    assert b[b > 0].sum() <= 15 and -b[b < 0].sum() <= 15
    return b


def test_the_starting_position_is_contact_and_not_crashed():
    b = starting_board()
    assert classes.classify_positions(b).tolist() == [classes.CONTACT]
    assert classes.race_flags(b).tolist() == [False]
    assert classes.has_contact(b).tolist() == [True]
    assert classes.crashed_sides(b).tolist() == [[False, False]]


def test_each_class_on_a_hand_made_board():
    # every checker home on both sides: bear-off
    bearoff = board({1: 5, 2: 5, 3: 5}, {1: 5, 2: 5, 3: 5})
    # mover's rear checker on its 8-point, opponent's rear on its 8-point (index 17): 8 < 17, a race
    race = board({8: 1, 6: 14}, {8: 1, 6: 14})
    # the mover has 11 checkers on its 1-point and 2 on its 2-point, 2 back on the opponent's 1-point:
    # tot = 15, a1 = 11 > 1 and tot <= 6 + a1 = 17: crashed (gnubg's rule)
    crashed = board({1: 11, 2: 2, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    over = board({1: 2}, {})
    got = classes.classify_positions(np.stack([bearoff, race, crashed, over]))
    assert [classes.CLASS_NAMES[k] for k in got] == ["bearoff", "race", "crashed", "over"]
    assert classes.is_bearoff(np.stack([bearoff, race])).tolist() == [True, False]
    assert classes.crashed_sides(crashed).tolist() == [[True, False]]


def test_the_classes_agree_with_a_plain_reading_of_their_definitions_on_random_games():
    from conftest import random_play_positions

    from nard_ai.core.board import swap_sides

    boards = random_play_positions(np.random.default_rng(5), 600)
    race = classes.race_flags(boards)
    # no contact: every mover checker (index 1..25) is below every opponent checker (index 0..24)
    plain = [max(np.flatnonzero(b > 0)) < min(np.flatnonzero(b < 0)) for b in boards]
    assert race.tolist() == plain
    assert (race == classes.race_flags(swap_sides(boards))).all()  # symmetric in the view
    home = [(b[7:] <= 0).all() and (b[:19] >= 0).all() for b in boards]
    assert classes.is_bearoff(boards).tolist() == home
    assert 0 < race.sum() < len(boards)  # the sample meets both


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("nard_ai.model.encoding", ["race_flags"]),
        ("nard_ai.eval.evaluator", ["has_contact"]),
        ("nard_ai.eval.bearoff", ["is_bearoff"]),
        (
            "nard_ai.training.positions",
            [
                "classify_positions",
                "crashed_sides",
                "CLASS_NAMES",
                "OVER",
                "BEAROFF",
                "RACE",
                "CRASHED",
                "CONTACT",
            ],
        ),
    ],
)
def test_the_old_homes_re_export_the_same_objects(module, names):
    import importlib

    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is getattr(classes, name), f"{module}.{name}"
        assert name in mod.__all__


def test_the_one_python_single_die_rule_agrees_with_the_independent_reference_on_random_games():
    """core.checker_moves.single_moves (used by the checker-move env and notation) against tests/reference.py's
    single_die_moves, written separately from RULES.md 3.2, 4 and 5: the same sources and boards for every die."""
    from conftest import random_bearoff_positions, random_play_positions
    from reference import single_die_moves

    from nard_ai.core.checker_moves import single_moves

    rng = np.random.default_rng(11)
    boards = np.concatenate([random_play_positions(rng, 300), random_bearoff_positions(rng, 100)])
    for b in boards:
        t = tuple(int(x) for x in b)
        for die in range(1, 7):
            ours = {(src, after) for (src, _), after in single_moves(t, die)}
            theirs = {(s.from_point, s.after) for s in single_die_moves(t, die)}
            assert ours == theirs, (t, die)


def test_the_compiled_random_games_splitmix_step_is_core_dice_splitmix64():
    """movegen._next_random writes SplitMix64's constants out (a kernel cannot read another file's globals
    safely); its outputs must be core.dice.splitmix64's, output k of a state being mix(seed + k * gamma)."""
    from nard_ai.core.dice import splitmix64
    from nard_ai.core.movegen import _next_random

    for seed in (0, 1, 2**63 + 12345):
        state = np.array([seed], dtype=np.uint64)
        got = [int(_next_random(state, 0)) for _ in range(5)]
        assert got == [int(x) for x in splitmix64(seed, np.arange(1, 6, dtype=np.uint64))]
