"""One named scenario per rule of RULES.md sections 1-7.

Each test quotes the rule it checks and sketches the relevant points, in the
mover's numbering (the mover moves from 24 down to 1 and bears off below 1).
``X`` = a mover checker, ``O`` = an opponent checker, ``Xn``/``On`` = n of
them. Boards are built with ``pos(me=..., opp=...)``; ``theirs({...})``
writes the opponent's checkers on the mover's point numbers.

Move-generation tests run twice, through the ``generate`` fixture: once on
the slow reference (``tests/reference.py``) and once on
``nard_ai.core.movegen.legal_plays`` (skipped while that module is missing).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import ALL_ROLLS, play_set, theirs
from reference import apply_moves, as_tuple

from nard_ai.core.board import game_result, pip_count, pos, starting_board, swap_sides
from nard_ai.core.rules import Rules

STANDARD = Rules()
IRANIAN_000 = Rules.iranian("000")
IRANIAN_002 = Rules.iranian("002")


def plays(generate, board, dice, rules: Rules = STANDARD) -> set[tuple[int, ...]]:
    """The legal afterstates as a set of tuples."""
    return play_set(generate(board, dice, rules))


def after(board, *moves: tuple[int, int]) -> tuple[int, ...]:
    """The board after single-checker moves ``(from, to)``; 25 = bar, 0 = off, hits included."""
    return apply_moves(board, moves)


def mover_pips(board) -> int:
    return int(pip_count(np.asarray(board, dtype=np.int8))[0])


def mover_off(board) -> int:
    return 15 - int(np.clip(np.asarray(board)[1:26], 0, None).sum())


# ---------------------------------------------------------------------------
# Section 1: board, checkers, numbering
# ---------------------------------------------------------------------------


def test_starting_position_has_2_5_3_5_checkers_and_167_pips_each():
    """RULES.md 1: "2 checkers on 24, 5 on 13, 3 on 8, 5 on 6. Pip count 167 each."

    point  24 .. 19 | 18 .. 13 | 12 .. 7 |  6 ..  1
    mover  X2       |       X5 |    X3   |  X5
    opp    .  O5    |  O3      | O5      |       O2
    """
    start = starting_board()
    spec = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 13: 5, 8: 3, 6: 5})
    assert np.array_equal(start, spec)
    assert start.dtype == np.int8 and start.shape == (26,)
    assert pip_count(start).tolist() == [167, 167]
    # "My point p is the opponent's point 25 - p": the start is symmetric.
    assert np.array_equal(swap_sides(start), start)
    assert start[19] == -5 and start[1] == -2  # the opponent's 6- and 24-points


# ---------------------------------------------------------------------------
# Section 2: starting the game
# ---------------------------------------------------------------------------


def test_opening_roll_is_never_a_double_and_plays_both_numbers(generate):
    """RULES.md 2: "the higher number moves first and plays the two numbers rolled ...
    (so the first move is never a double). Equal numbers: roll again."

    Of the 36 outcomes of two single dice, the 6 ties are rolled again, so the
    opening roll is one of the 15 non-doubles, each with chance 2/30, and the
    first play moves both numbers (pip count 167 - a - b) from the start.
    """
    outcomes = [(a, b) for a, b in itertools.product(range(1, 7), repeat=2) if a != b]
    rolls = {tuple(sorted(o, reverse=True)) for o in outcomes}
    assert len(outcomes) == 30 and len(rolls) == 15
    assert all(a != b for a, b in rolls)
    start = starting_board()
    for a, b in sorted(rolls):
        for board in plays(generate, start, (a, b)):
            assert mover_pips(board) == 167 - a - b

    # The game layer's opening roll, when it exists (nard_ai.core.game.opening_roll(n, rng)).
    try:
        from nard_ai.core.game import opening_roll
    except ImportError:
        return
    starter, rolled = opening_roll(30_000, np.random.default_rng(0))
    rolled = np.asarray(rolled)
    assert rolled.shape == (30_000, 2)
    assert np.all(rolled[:, 0] != rolled[:, 1]) and np.all((rolled >= 1) & (rolled <= 6))
    # "the higher number moves first": player 0 rolled die 0, player 1 die 1.
    assert np.array_equal(
        np.asarray(starter), (rolled[:, 1] > rolled[:, 0]).astype(np.asarray(starter).dtype)
    )
    counts = np.bincount((rolled[:, 0] - 1) * 6 + rolled[:, 1] - 1, minlength=36).reshape(6, 6)
    off_diagonal = counts[~np.eye(6, dtype=bool)]
    assert np.all(np.abs(off_diagonal - 1000) < 200)  # each of the 30 ordered outcomes ~ 1/30


# ---------------------------------------------------------------------------
# Section 3: moving
# ---------------------------------------------------------------------------


def test_five_two_moves_one_checker_or_two(generate):
    """RULES.md 3.1: "With 5-2 you may move one checker 5 and another 2, or one checker 5 then 2."
    RULES.md 3.5: "two move sequences that end in the same position are one play."

        point  13 12 11 10  9  8  7  6
        mover  X5              X3    X5        roll 5-2 from the start
    """
    start = starting_board()
    legal = plays(generate, start, (5, 2))
    two_checkers = after(start, (13, 8), (13, 11))
    one_checker = after(start, (13, 8), (8, 6))
    assert two_checkers in legal
    assert one_checker in legal
    assert after(start, (13, 11), (11, 6)) == one_checker  # 13/11/6 is the same play as 13/8/6
    assert after(start, (24, 22), (13, 8)) in legal
    assert all(b[17] == -3 for b in legal)  # 24/22/17 would land on the closed 17-point
    assert len(legal) == 8  # gnubg agrees: 8 distinct 5-2 opening plays


def test_may_not_land_on_a_closed_point_but_may_pass_over_it(generate):
    """RULES.md 3.2: "A point with two or more opposing checkers is closed. Passing over
    closed points is allowed (004: light moves 8->5 over the closed 7-point)."

        point   8  7  6  5
        mover   X  .  X14 .
        opp     .  O2 .   .        roll 3-1: 8/5 passes the closed 7; 8/7 is illegal
    """
    board = pos(me={8: 1, 6: 14}, opp=theirs({7: 2}) | {1: 13})
    legal = plays(generate, board, (3, 1))
    assert all(b[7] == -2 for b in legal)  # nobody ever lands on the closed 7-point
    assert after(board, (8, 5), (6, 5)) in legal  # 8/5 passes over it
    assert after(board, (8, 5), (5, 4)) in legal
    # With 1-1 the checker on 8 cannot move at all: 8/7 is closed.
    assert all(b[8] == 1 for b in plays(generate, board, (1, 1)))


def test_every_intermediate_point_of_a_double_must_be_open(generate):
    """RULES.md 3.2: "When one checker uses several dice, every intermediate landing point
    must be open (001, 004): a 4-4 is four separate 4s, not a 16-point jump."

        point  24 23 22 21 20 19 18 17 16 ..  8 ..  1
        mover  X                               X14 (on 1, stuck: not all home)
        opp                         O2                 roll 4-4: 24/20 only
    """
    board = pos(me={24: 1, 1: 14}, opp=theirs({16: 2}) | {6: 13})
    assert plays(generate, board, (4, 4)) == {after(board, (24, 20))}
    assert after(board, (24, 8)) not in plays(generate, board, (4, 4))
    # Close the 20-point instead: the first 4 is blocked, so nothing moves.
    blocked = pos(me={24: 1, 1: 14}, opp=theirs({20: 2}) | {6: 13})
    assert plays(generate, blocked, (4, 4)) == {as_tuple(blocked)}


def test_doubles_give_four_moves_or_as_many_as_are_legal(generate):
    """RULES.md 3.3: "Doubles give four moves of that number (fewer if fewer are legal)."

    start, roll 6-6: every play moves 24 pips.
    point  24 .. 18 .. 12 ..  6 ..  1
    mover  X        (X14 on 1)            roll 6-6 with 12 closed: 24/18 only
    opp            O2
    """
    start = starting_board()
    legal = plays(generate, start, (6, 6))
    assert legal and all(mover_pips(b) == 167 - 24 for b in legal)
    board = pos(me={24: 1, 1: 14}, opp=theirs({12: 2}) | {6: 13})
    assert plays(generate, board, (6, 6)) == {after(board, (24, 18))}


def test_both_dice_must_be_played_even_when_that_is_bad(generate):
    """RULES.md 3.4: "Both dice ... must be played if any sequence allows it, even if that is
    bad for the player (000's 4-5 example)."  000: if moving one checker 4 leaves no 5,
    but moving another checker 4 lets the 5 be played, the latter is forced.

        point  12 11 10  9  8  7  6  5  4  3  2  1
        mover  X      X                       X13
        opp                    O2    O2          O2   + one O on the bar
        roll 5-4: 10/6 (safe) leaves no 5; 12/8/3 (a blot in front of the bar) is forced.
    """
    board = pos(me={12: 1, 10: 1, 2: 13}, opp=theirs({7: 2, 5: 2, 1: 2, 25: 1}) | {6: 8})
    assert plays(generate, board, (5, 4)) == {after(board, (12, 8), (8, 3))}
    assert after(board, (10, 6)) not in plays(generate, board, (5, 4))


def test_must_play_larger_die_when_only_one_fits(generate):
    """RULES.md 3.4: "If either die could be played but not both, the larger must be played."

    point  24 .. 21 .. 18 .. 15 ..  2
    mover  X                        X14 (stuck: not all home)
    opp                     O2            roll 6-3: 24/18 or 24/21, never both
    """
    board = pos(me={24: 1, 2: 14}, opp=theirs({15: 2}) | {6: 13})
    assert plays(generate, board, (6, 3)) == {after(board, (24, 18))}


def test_plays_smaller_die_when_larger_cannot_be_played(generate):
    """RULES.md 3.4: "If only one die can be played, play it."

    point  24 .. 21 .. 18 .. 15 ..  2
    mover  X                        X14
    opp               O2    O2            roll 6-3: the 6 is blocked, play 24/21
    """
    board = pos(me={24: 1, 2: 14}, opp=theirs({18: 2, 15: 2}) | {6: 11})
    assert plays(generate, board, (6, 3)) == {after(board, (24, 21))}


def test_no_legal_move_leaves_the_board_unchanged(generate):
    """RULES.md 3.4: "If nothing is legal, the turn is lost." (the one play is the unchanged board)

    point  25(bar) 24 23 22 21 20 19
    mover  X
    opp            O2 O2 O2 O2 O2 O2      a closed board: no die enters
    """
    board = pos(me={25: 1, 13: 5, 6: 9}, opp=theirs({24: 2, 23: 2, 22: 2, 21: 2, 20: 2, 19: 2}) | {13: 3})
    for roll in ALL_ROLLS:
        assert plays(generate, board, roll) == {as_tuple(board)}


# ---------------------------------------------------------------------------
# Section 4: hitting and the bar
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("roll", [r for r in ALL_ROLLS if r[0] != r[1]])
def test_die_d_enters_from_the_bar_on_point_25_minus_d(generate, roll):
    """RULES.md 4: "A die d enters on the player's point 25 - d ... 1 enters on 24, 6 on 19."
    "A player with checkers on the bar must enter all of them before moving any other checker."

        point  25(bar) 24 .. 19 .. 13  ..  6
        mover  X2                  X5      X8       two on the bar, an open board
    """
    a, b = roll
    board = pos(me={25: 2, 13: 5, 6: 8}, opp={11: 15})
    assert plays(generate, board, roll) == {after(board, (25, 25 - a), (25, 25 - b))}


def test_closed_entry_point_cannot_be_entered_and_enters_as_many_as_possible(generate):
    """RULES.md 4: "A die whose entry point is closed cannot enter ... if only some checkers
    can enter, enter as many as possible."

        point  25(bar) 24 .. 19
        mover  X2                         roll 6-1: one enters on 24; the other stays
        opp                  O5           (19 is closed), no other checker may move
    """
    board = pos(me={25: 2, 13: 5, 6: 8}, opp={6: 5, 13: 10})
    assert plays(generate, board, (6, 1)) == {after(board, (25, 24))}


def test_no_die_enters_loses_the_whole_turn(generate):
    """RULES.md 4: "If no die can enter, the whole turn is lost."

    point  25(bar) 24 23 22 21 20 19 ..  6
    mover  X                             X14
    opp            O2 .  .  O2 .  O2           roll 6-1: 19 and 24 closed
    """
    board = pos(me={25: 1, 6: 14}, opp=theirs({24: 2, 21: 2, 19: 2}) | {13: 9})
    assert plays(generate, board, (6, 1)) == {as_tuple(board)}


def test_after_the_last_checker_enters_the_remaining_dice_are_played_normally(generate):
    """RULES.md 4: "After the last checker has entered, remaining dice are played normally."

    point  25(bar) 24 .. 19 .. 13 ..  6
    mover  X                   X5     X9
    opp                  O5                    roll 6-1: bar/24 then any 6
    """
    board = pos(me={25: 1, 13: 5, 6: 9}, opp={6: 5, 13: 10})
    legal = plays(generate, board, (6, 1))
    assert all(b[25] == 0 for b in legal)
    assert after(board, (25, 24), (13, 7)) in legal  # another checker plays the 6
    assert after(board, (25, 24), (24, 18)) in legal
    # With three on the bar and 2-2 all three enter on 23 and the fourth 2 is free.
    three = pos(me={25: 3, 13: 5, 6: 7}, opp={6: 5, 13: 10})
    legal = plays(generate, three, (2, 2))
    assert all(b[25] == 0 and b[23] >= 2 for b in legal)
    assert after(three, (25, 23), (25, 23), (25, 23), (13, 11)) in legal


def test_hitting_a_blot_sends_it_to_the_bar(generate):
    """RULES.md 4: "Landing on an opposing blot hits it: it goes to the bar. Hitting is
    never compulsory except when it is part of every legal play."

        point  13 .. 10  9  8
        mover  X5          X3 ...       (the start position with an O blot on 10)
        opp        O                     roll 3-1: 13/10* hits; 8/5 6/5 does not
    """
    board = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 13: 5, 8: 2, 6: 5, 15: 1})
    legal = plays(generate, board, (3, 1))
    hit = after(board, (13, 10), (10, 9))
    assert hit in legal and hit[0] == -1  # the opponent's bar (index 0) holds the blot
    assert after(board, (8, 5), (6, 5)) in legal  # not compulsory


def test_six_prime_cannot_be_passed_by_any_roll(generate):
    """RULES.md 4: "A six-prime cannot be passed by any roll."

    point  24 .. 19 | 18 17 16 15 14 13 | 12 ..  6
    mover  X        |                   |        X14
    opp             | O2 O2 O2 O2 O2 O2 |             the checker on 24 stays behind 18
    """
    board = pos(me={24: 1, 6: 14}, opp=theirs({18: 2, 17: 2, 16: 2, 15: 2, 14: 2, 13: 2}) | {6: 3})
    for roll in ALL_ROLLS:
        for b in plays(generate, board, roll):
            assert sum(max(x, 0) for x in b[19:25]) == 1, roll  # still behind the prime


# ---------------------------------------------------------------------------
# Section 5: bearing off
# ---------------------------------------------------------------------------


def test_bearing_off_only_when_all_checkers_are_home(generate):
    """RULES.md 5: "Allowed only when all of the player's checkers still in play are in the
    home board (points 1-6) and none is on the bar."

        point  20 .. 16 .. 12 ..  8  7  6 ..  1
        mover  X                        X14          roll 6-5 or 4-4: the straggler
                                                     cannot get home in time to bear off
    """
    board = pos(me={20: 1, 6: 14}, opp={6: 15})
    for roll in [(6, 5), (4, 4)]:
        legal = plays(generate, board, roll)
        assert legal and all(mover_off(b) == 0 for b in legal)
    # ... but once the straggler is home the next die may bear off: 7/6 then 6/off.
    straggler = pos(me={7: 1, 6: 14}, opp={6: 15})
    assert after(straggler, (7, 6), (6, 0)) in plays(generate, straggler, (6, 1))


def test_die_bears_off_from_its_exact_point_or_moves_inside_home(generate):
    """RULES.md 5: "A die d may bear off a checker from point d." "Instead of bearing off,
    the die may move a checker inside the home board."

        point   6  5  4  3  2  1
        mover   X3 X2 .  .  X  .        roll 6-5
    """
    board = pos(me={6: 3, 5: 2, 2: 1}, opp={6: 15})
    legal = plays(generate, board, (6, 5))
    assert after(board, (6, 0), (5, 0)) in legal
    assert after(board, (6, 0), (6, 1)) in legal  # the 5 moves inside instead
    assert after(board, (6, 0), (5, 0)) != after(board, (6, 0), (6, 1))


def test_checker_on_a_higher_point_forces_moving_instead_of_bearing_off(generate):
    """RULES.md 5: "If point d is empty and there are checkers on higher points, the die must
    be played by moving a checker from a higher point (it cannot bear off)."

        point   6  5  4  3  2  1
        mover   X2 .  .  .  X3 .        roll 4-4: 6/2 6/2 first, then 2/off 2/off
    """
    board = pos(me={6: 2, 2: 3}, opp={6: 15})
    assert plays(generate, board, (4, 4)) == {after(board, (6, 2), (6, 2), (2, 0), (2, 0))}


def test_highest_checker_bears_off_with_a_larger_die(generate):
    """RULES.md 5: "If point d is empty and no checker is on a higher point, a checker is
    borne off from the highest occupied point (e.g. highest checker on 4, roll 6: bear off
    from 4; all checkers on 1-3 and roll 6-4: bear off two from 3)."

        point   6  5  4  3  2  1
        mover   .  .  X  X2 .  X        roll 6-5: 4/off 3/off
        mover   .  .  .  X2 X  X2       roll 6-4: 3/off 3/off
    """
    board = pos(me={4: 1, 3: 2, 1: 1}, opp={6: 15})
    assert plays(generate, board, (6, 5)) == {after(board, (4, 0), (3, 0))}
    low = pos(me={3: 2, 2: 1, 1: 2}, opp={6: 15})
    assert plays(generate, low, (6, 4)) == {after(low, (3, 0), (3, 0))}


def test_three_three_takes_the_rest_off_the_two_point(generate):
    """RULES.md 5: "With doubles, each of the four moves follows the same rules in turn (000:
    3-3 with fewer than four checkers on the 3-point and none higher: the rest come off the
    2-point)."

        point   6  5  4  3  2  1
        mover   .  .  .  X2 X3 .        roll 3-3: 3/off 3/off 2/off 2/off
    """
    board = pos(me={3: 2, 2: 3}, opp={6: 15})
    assert plays(generate, board, (3, 3)) == {after(board, (3, 0), (3, 0), (2, 0), (2, 0))}


def test_hit_checker_stops_bearing_off_until_it_is_back_home(generate):
    """RULES.md 5: "If a checker is hit during bear-off, bearing off stops until it is back home."

    point  25(bar) 24 .. 19 ..  6  5  4  3  2  1
    mover  X                    X3 X3 X3 X2 X2 .          (one borne off)
    opp            O2    O13                              no roll bears another off
    """
    board = pos(me={25: 1, 6: 3, 5: 3, 4: 3, 3: 2, 2: 2}, opp=theirs({24: 2}) | {6: 13})
    for roll in ALL_ROLLS:
        for b in plays(generate, board, roll):
            assert mover_off(b) == 1, roll  # nothing more comes off this turn


def test_bearing_off_the_last_checker_ends_the_play(generate):
    """RULES.md 3.6: "A play that bears off the mover's last checker ends the game at once;
    the dice it did not need are not owed (this counts as using every die)."

        point   5  4  3  2  1
        mover   X  .  .  .  .
        opp     .  .  O  .  .        roll 5-2: 5/off (the 2 is not owed) or 5/3*/off
    """
    board = pos(me={5: 1}, opp=theirs({3: 1}) | {6: 14})
    legal = plays(generate, board, (5, 2))
    assert legal == {after(board, (5, 0)), after(board, (5, 3), (3, 0))}
    assert all(mover_off(b) == 15 for b in legal)
    # One checker on 2, roll 6-5: one play, all off.
    last = pos(me={2: 1}, opp={6: 15})
    assert plays(generate, last, (6, 5)) == {after(last, (2, 0))}
    # 1-1 with two checkers on 1: both come off after two of the four 1s.
    two = pos(me={1: 2}, opp={6: 15})
    assert plays(generate, two, (1, 1)) == {after(two, (1, 0), (1, 0))}


# ---------------------------------------------------------------------------
# Section 6: end of a game and scoring
# ---------------------------------------------------------------------------


def test_single_game_when_the_loser_has_borne_off_one_checker_even_with_one_on_the_bar():
    """RULES.md 6 (004): "loser has borne off one checker and has one on the bar -> single (1)".

    mover: all 15 off.   opp: 1 off, 1 on its bar, 13 on its 6-point.
    """
    board = pos(me={}, opp={25: 1, 6: 13})
    assert game_result(board) == 1
    assert game_result(swap_sides(board)) == -1


def test_gammon_when_the_loser_has_borne_off_none_and_is_all_in_its_home_board():
    """RULES.md 6 (004): "loser has borne off none, all his checkers in his own home board,
    none on the bar or in the winner's home board -> gammon (2)".
    """
    board = pos(me={}, opp={6: 5, 5: 5, 4: 5})
    assert game_result(board) == 2
    assert game_result(swap_sides(board)) == -2


def test_backgammon_when_the_loser_has_a_checker_on_the_bar():
    """RULES.md 6: "backgammon: has borne off none, and has a checker on the bar or in the
    winner's home board -> 3"."""
    board = pos(me={}, opp={25: 1, 6: 14})
    assert game_result(board) == 3
    assert game_result(swap_sides(board)) == -3


def test_backgammon_when_the_loser_has_a_checker_in_the_winners_home_board():
    """RULES.md 6: a loser's checker on the winner's home board (the loser's 19..24) -> 3.

    winner (mover) point   6  5  4  3  2  1
    loser's checker           .  .  .  O  .  .     (the loser's 22-point)
    """
    board = pos(me={}, opp={22: 1, 6: 14})
    assert game_result(board) == 3
    assert game_result(swap_sides(board)) == -3
    # On the winner's 7-point (the loser's 18) it is only a gammon.
    assert game_result(pos(me={}, opp={18: 1, 6: 14})) == 2


def test_score_is_result_times_cube_value():
    """RULES.md 6 (000): "cube on 4 and a gammon -> 8 points; cube on 16 and a backgammon -> 48"."""
    gammon = pos(me={}, opp={6: 15})
    backgammon = pos(me={}, opp={25: 1, 6: 14})
    assert game_result(gammon) * 4 == 8
    assert game_result(backgammon) * 16 == 48


def test_game_not_over_scores_zero():
    """RULES.md 6: "The first player to bear off all 15 checkers wins" -- before that, 0."""
    assert game_result(starting_board()) == 0


# ---------------------------------------------------------------------------
# Section 7: the Iranian no-hit-and-continue variant
# ---------------------------------------------------------------------------

# RULES.md 7 worked position (each side in its own numbering).
WORKED = pos(me={24: 2, 13: 5, 8: 1, 7: 2, 6: 3, 3: 2}, opp={24: 2, 20: 1, 13: 5, 8: 3, 6: 4})
WORKED_SKETCH = """
        point   8  7  6  5  4  3  2  1
        mover   X  X2 X3 .  .  X2 .  .
        opp     .  .  .  O  .  .  .  O2     (O blot on the mover's 5-point)
"""


def test_iranian_worked_position_has_the_opponent_blot_on_the_five_point():
    """RULES.md 7: "the opponent's blot stands on the mover's 5-point"."""
    assert WORKED[5] == -1 and WORKED[1] == -2


def test_iranian_two_one_excludes_hit_and_continue(generate):
    """RULES.md 7: "Roll 2-1: 28 standard plays. The 000 form excludes 7/5*/4 and 6/5*/3 (26
    remain); the 002 form excludes only 6/5*/3, which continues onto the mover's own
    3-point (27 remain). 7/5* 6/5 (hit and cover with another checker) is legal in every form."
    """
    standard = plays(generate, WORKED, (2, 1))
    form_000 = plays(generate, WORKED, (2, 1), IRANIAN_000)
    form_002 = plays(generate, WORKED, (2, 1), IRANIAN_002)
    hit_on = {"7/5*/4": after(WORKED, (7, 5), (5, 4)), "6/5*/3": after(WORKED, (6, 5), (5, 3))}
    assert len(standard) == 28 and len(form_000) == 26 and len(form_002) == 27
    assert standard - form_000 == {hit_on["7/5*/4"], hit_on["6/5*/3"]}
    assert standard - form_002 == {hit_on["6/5*/3"]}
    assert form_000 <= standard and form_002 <= standard
    cover = after(WORKED, (7, 5), (6, 5))
    assert cover in standard and cover in form_000 and cover in form_002


def test_iranian_three_one_excludes_only_in_the_000_form(generate):
    """RULES.md 7: "Roll 3-1: the 000 form excludes 8/5*/4 and 6/5*/2; the 002 form excludes
    nothing (both continue to empty points)."
    """
    standard = plays(generate, WORKED, (3, 1))
    form_000 = plays(generate, WORKED, (3, 1), IRANIAN_000)
    form_002 = plays(generate, WORKED, (3, 1), IRANIAN_002)
    assert standard - form_000 == {after(WORKED, (8, 5), (5, 4)), after(WORKED, (6, 5), (5, 2))}
    assert form_000 <= standard
    assert form_002 == standard


def test_iranian_standard_rules_are_the_default(generate):
    """RULES.md 7: "opt-in, off by default"."""
    assert plays(generate, WORKED, (2, 1)) == plays(generate, WORKED, (2, 1), Rules())
    assert Rules().no_hit_and_continue is None


def test_iranian_other_checkers_may_leave_the_point_hit_on(generate):
    """RULES.md 7.2: "other own checkers that reached that point without hitting may still leave it".

    Worked position, roll 1-1: 6/5* 6/5 5/4 4/3 respects the rule (the second checker
    moves on); the same position via 6/5*/4/3 6/5 does not, but one respecting
    sequence is enough, so the play is legal in the 000 form.
    """
    target = after(WORKED, (6, 5), (6, 5), (5, 4), (4, 3))
    assert target == after(WORKED, (6, 5), (5, 4), (4, 3), (6, 5))
    assert target in plays(generate, WORKED, (1, 1), IRANIAN_000)
    # Moving the lone hitter on is excluded: 6/5*/4/3/2.
    assert after(WORKED, (6, 5), (5, 4), (4, 3), (3, 2)) not in plays(generate, WORKED, (1, 1), IRANIAN_000)


def test_iranian_when_no_play_respects_the_rule_all_stay_legal(generate):
    """RULES.md 7.3: "if none does, all of L stay legal" (000: "only when the player has no
    other move is it allowed").

        point  12 11 10 ..  7  6  5  4  3  2  1
        mover  X12          X  .  .  X2 .  .  .
        opp       O2 O2     .  O2 O  .  O2 O2 .      roll 2-1: 7/5*/4 is the only play
    """
    board = pos(me={12: 12, 7: 1, 4: 2}, opp=theirs({11: 2, 10: 2, 6: 2, 5: 1, 3: 2, 2: 2}) | {6: 4})
    only = {after(board, (7, 5), (5, 4))}
    assert plays(generate, board, (2, 1)) == only
    assert plays(generate, board, (2, 1), IRANIAN_000) == only
    assert plays(generate, board, (2, 1), IRANIAN_002) == only


def test_iranian_rule_ignores_hits_outside_the_home_board(generate):
    """RULES.md 7: the rule is about "a checker that hits a blot in the mover's home board
    (the mover's points 1-6)"; hitting on 9 and moving on is always allowed.

        point  13 12 11 10  9  8
        mover  X5             X3  ...       (start, with an O blot on 9)
        opp                O                roll 4-1: 13/9*/8 stays legal
    """
    board = pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp={24: 2, 13: 5, 8: 2, 6: 5, 16: 1})
    hit_and_go = after(board, (13, 9), (9, 8))
    assert hit_and_go in plays(generate, board, (4, 1), IRANIAN_000)
    assert hit_and_go in plays(generate, board, (4, 1), IRANIAN_002)
