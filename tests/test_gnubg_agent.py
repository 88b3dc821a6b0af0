"""The ``gnubg:PLY`` agent and gnubg's cube analysis (nard_ai.gnubg.agent).

Reference values come from GNU Backgammon itself, called directly in the
test (``gnubg.evaluate``, ``gnubg.findbestmove``, ``gnubg_nn.probabilities``,
``gnubg_nn.moves``), from exact bear-off arithmetic, and from RULES.md.
Tests that need the optional ``gnubg`` package are skipped without it; the
error message for a missing package is tested either way.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from conftest import ALL_ROLLS, random_play_positions

import nard_ai as na
from nard_ai.agents import agent_from_spec
from nard_ai.core.board import game_result, pos, swap_sides
from nard_ai.core.rules import Rules
from nard_ai.cube import CubeState
from nard_ai.formats import parse_gnubg_id
from nard_ai.gnubg.agent import (
    GnubgAgent,
    gnubg_agent_from_spec,
    gnubg_available,
    gnubg_cube_analysis,
    gnubg_id_for_cube,
)
from nard_ai.model.network import cubeless_equity, invert_probs
from nard_ai.play.arena import play_match

needs_gnubg = pytest.mark.skipif(
    not gnubg_available(), reason="the optional gnubg package is not installed (pip install gnubg)"
)

START = na.starting_board()
#: The last roll of a race: the side on roll has checkers on its 3- and 2-points, the opponent one
#: checker on its 1-point. The side on roll bears both off with 25 of the 36 rolls (every roll with
#: one die >= 3 and the other >= 2, and 2-2 .. 6-6); otherwise the opponent is off next turn.
LAST_ROLL = pos(me={3: 1, 2: 1}, opp={1: 1})
LAST_ROLL_WINS = 25 / 36


def gnubg_rows(board: np.ndarray) -> list[list[int]]:
    """gnubg's two rows written out by hand from RULES.md §1: row 1 = the side on roll, each in its own numbering."""
    b = [int(x) for x in board]
    mover = [max(b[p], 0) for p in range(1, 25)] + [b[25]]
    opponent = [max(-b[25 - q], 0) for q in range(1, 25)] + [-b[0]]
    return [opponent, mover]


def apply_gnubg_move(board: np.ndarray, move: tuple[int, ...]) -> np.ndarray:
    """Play a gnubg move tuple ``(from, to, from, to, ...)`` (1-based, 25 = bar, 0 = off) on our board."""
    after = board.astype(np.int64).copy()
    for src, dst in zip(move[0::2], move[1::2], strict=True):
        after[src] -= 1
        if dst > 0:
            if after[dst] == -1:  # a hit: the opponent's blot goes to its bar
                after[dst] = 0
                after[0] -= 1
            after[dst] += 1
    return after.astype(np.int8)


# --------------------------------------------------------------------------- specs and errors


def test_a_missing_gnubg_package_is_a_clear_value_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "gnubg", None)  # makes `import gnubg` raise ImportError
    assert not gnubg_available()
    with pytest.raises(ValueError) as info:
        agent_from_spec("gnubg:1")
    assert str(info.value) == "gnubg:1 needs the optional gnubg package: pip install gnubg"


@pytest.mark.parametrize("spec", ["gnubg:3", "gnubg:-1", "gnubg:x", "gnubg:", "gnubg:1:2"])
def test_gnubg_specs_outside_plies_0_to_2_are_refused(spec):
    with pytest.raises(ValueError, match="gnubg"):
        gnubg_agent_from_spec(spec)


@needs_gnubg
def test_the_spec_names_the_agent_and_its_ply():
    agent = agent_from_spec("gnubg:1")
    assert isinstance(agent, GnubgAgent) and agent.ply == 1 and agent.name == "gnubg:1"
    assert agent_from_spec("gnubg").ply == 0


@needs_gnubg
def test_gnubg_lookahead_refuses_the_iranian_variant():
    """RULES.md §7 changes the legal plays; gnubg's own 1- and 2-ply lookahead cannot know it."""
    with pytest.raises(ValueError, match="standard rules"):
        GnubgAgent(1, Rules(no_hit_and_continue="000"))
    assert GnubgAgent(0, Rules(no_hit_and_continue="000")).ply == 0  # 0-ply plays come from our generator


@needs_gnubg
def test_off_the_main_thread_is_a_runtime_error_not_a_crash():
    """gnubg's library segfaults when a 1-ply evaluation runs off the main thread; the agent refuses."""
    agent = GnubgAgent(1)
    caught = []

    def work():
        try:
            agent.value(START[None])
        except RuntimeError as exc:
            caught.append(str(exc))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert caught and "main thread" in caught[0]


# --------------------------------------------------------------------------- evaluation


@needs_gnubg
@pytest.mark.parametrize("ply", [0, 1, 2])
def test_evaluate_equals_gnubg_evaluate_and_gnubg_nn_probabilities(ply):
    import gnubg

    gnubg_nn = pytest.importorskip("gnubg_nn", reason="gnubg_nn is not installed")
    boards = [START, na.board_from_position_id("2u4AADzubjMAAA"), na.board_from_position_id("bDeDISBsO8jIAA")]
    probs, equity = GnubgAgent(ply).value(np.array(boards))
    ci, ec = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0), gnubg.evalcontext(0, ply, 1, 0)
    for board, ours, eq in zip(boards, probs, equity, strict=True):
        direct = gnubg.evaluate(gnubg_rows(board), ci, ec)
        assert ours == pytest.approx(direct[:5], abs=1e-7)
        assert eq == pytest.approx(direct[5], abs=1e-5)  # gnubg's money equity (cube 1)
        assert ours == pytest.approx(gnubg_nn.probabilities(gnubg_rows(board), ply), abs=1e-6)


@needs_gnubg
def test_the_starting_position_is_about_even_at_gnubg_0_ply():
    """gnubg 0-ply, side on roll at the start: win 0.521, equity +0.068 (gnubg's 'eval' prints these)."""
    probs, equity = GnubgAgent(0).value(START[None])
    assert probs[0, 0] == pytest.approx(0.5215, abs=5e-4)
    assert probs[0, 1] == pytest.approx(0.154, abs=1e-3) and probs[0, 3] == pytest.approx(0.130, abs=1e-3)
    assert equity[0] == pytest.approx(0.068, abs=1e-3)


@needs_gnubg
def test_the_side_on_roll_is_gnubgs_row_1():
    """The last-roll race: the side on roll wins 25/36 (gnubg's bear-off database), the other side 0.

    gnubg stores bear-off chances in 16 bits (resolution 1/65535), hence the 2e-5 tolerance.
    """
    agent = GnubgAgent(0)
    probs, equity = agent.value(np.array([LAST_ROLL, swap_sides(LAST_ROLL)]))
    assert probs[0] == pytest.approx([LAST_ROLL_WINS, 0, 0, 0, 0], abs=2e-5)
    assert equity[0] == pytest.approx(2 * LAST_ROLL_WINS - 1, abs=4e-5)
    # with the opponent on roll, it bears its single checker off at once
    assert probs[1] == pytest.approx([1, 0, 0, 0, 0], abs=1e-6)


# --------------------------------------------------------------------------- plays


@needs_gnubg
@pytest.mark.parametrize("ply", [0, 1])
def test_chosen_plays_are_legal_in_our_generator(ply):
    rng = np.random.default_rng(11)
    n = 120 if ply == 0 else 12
    boards = random_play_positions(rng, n)
    dice = np.array(ALL_ROLLS, dtype=np.int8)[rng.integers(0, len(ALL_ROLLS), size=n)]
    chosen = GnubgAgent(ply).choose_plays(boards, dice)
    for board, roll, after in zip(boards, dice, chosen, strict=True):
        legal = {row.tobytes() for row in na.legal_plays(board, roll)}
        assert after.tobytes() in legal


@needs_gnubg
def test_0_ply_choices_are_gnubgs_own_findbestmove():
    """The play gnubg.findbestmove names at 0-ply is ours, or ties with ours to 1e-6.

    gnubg's move tuple ends at the first checker borne off (its "off" is a 0, which ends the
    list), so moves with a bear-off cannot be rebuilt from it and are left out here.
    """
    import gnubg

    rng = np.random.default_rng(5)
    boards = random_play_positions(rng, 400)
    boards = boards[:150]
    dice = np.array(ALL_ROLLS, dtype=np.int8)[rng.integers(0, len(ALL_ROLLS), size=len(boards))]
    agent = GnubgAgent(0)
    chosen = agent.choose_plays(boards, dice)
    ci, ec = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0), gnubg.evalcontext(0, 0, 1, 0)
    same = compared = 0
    for board, roll, after in zip(boards, dice, chosen, strict=True):
        move = gnubg.findbestmove(gnubg_rows(board), ci, ec, (int(roll[0]), int(roll[1])))
        if len(move) % 2:  # cut at a bear-off
            continue
        compared += 1
        theirs = apply_gnubg_move(board, move) if move else board
        if np.array_equal(theirs, after):
            same += 1
            continue
        ranked = agent.rank_plays(board, roll)
        index = next(i for i, a in enumerate(ranked.afterstates) if np.array_equal(a, theirs))
        assert ranked.equity[index] == pytest.approx(ranked.equity[0], abs=1e-6)
    assert compared >= 100 and same >= compared - 3


@needs_gnubg
def test_the_opening_3_1_makes_the_5_point():
    """gnubg 0-ply ranks 8/5 6/5 first with equity +0.160 for an opening 3-1."""
    ranked = GnubgAgent(0).rank_plays(START, (3, 1))
    assert na.play_notation(START, ranked.afterstates[0], (3, 1)) == "8/5 6/5"
    assert ranked.equity[0] == pytest.approx(0.1597, abs=1e-3)
    assert (np.diff(ranked.equity) <= 0).all()


@needs_gnubg
def test_bearing_off_the_last_checker_counts_as_using_all_dice():
    """RULES.md §3.6: with a lone checker on the 6-point and 6-5, 6/off ends the game with one die.

    gnubg's generator lists only 6/1/off; our plays (and so the agent's) include 6/off, valued by
    its exact result: the opponent has borne off checkers, so a single game, +1.
    """
    gnubg_nn = pytest.importorskip("gnubg_nn", reason="gnubg_nn is not installed")
    board = pos(me={6: 1}, opp={6: 5, 5: 3})
    six_off = pos(me={}, opp={6: 5, 5: 3})
    assert len(gnubg_nn.moves(gnubg_rows(board), 6, 5)) == 1  # 6/1/off only
    ranked = GnubgAgent(0).rank_plays(board, (6, 5))
    assert any(np.array_equal(a, six_off) for a in ranked.afterstates)
    assert all(game_result(a) == 1 for a in ranked.afterstates)
    assert ranked.equity == pytest.approx(np.ones(len(ranked)))
    chosen = GnubgAgent(0).choose_plays(board[None], np.array([[6, 5]]))
    assert game_result(chosen[0]) == 1


@needs_gnubg
def test_rank_plays_values_each_afterstate_as_gnubg_does():
    """A play's value is gnubg's evaluation of the afterstate with the opponent on roll, inverted."""
    import gnubg

    ranked = GnubgAgent(1).rank_plays(START, (6, 4))
    ci, ec = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0), gnubg.evalcontext(0, 1, 1, 0)
    for after, probs in zip(ranked.afterstates[:4], ranked.probs[:4], strict=True):
        direct = np.array(gnubg.evaluate(gnubg_rows(swap_sides(after)), ci, ec)[:5], dtype=np.float32)
        assert probs == pytest.approx(invert_probs(direct), abs=1e-7)
    assert ranked.equity[:4] == pytest.approx(cubeless_equity(ranked.probs[:4]), abs=1e-6)


@needs_gnubg
def test_gnubg_0_ply_beats_pubeval_by_the_published_margin():
    """gnubg 0-ply scores about +0.63 points per game against pubeval (cubeless money).

    400 duplicate-dice games give a 95% interval of about ±0.13 ppg, so the
    bound below fails only if the agent plays far below gnubg's strength.
    (2,000 games measured +0.623 ± 0.056.)
    """
    result = play_match(agent_from_spec("gnubg:0"), agent_from_spec("pubeval"), 400, seed=7)
    assert result.ppg > 0.35


# --------------------------------------------------------------------------- cube analysis


def test_gnubg_ids_for_cube_states_put_the_side_on_roll_in_seat_1():
    """The Match ID of a cube state (gnubg's manual: bit 6 = player on roll, bits 4-5 = cube owner)."""
    assert gnubg_id_for_cube(START, CubeState()) == "4HPwATDgc/ABMA:cAkAAAAAAAAE"  # E: Jacoby off (bit 66)
    board, state = parse_gnubg_id(gnubg_id_for_cube(START, CubeState(2, "opponent")))
    assert state.player_on_roll == 1 and state.cube_owner == 0 and state.cube_value == 2
    _, state = parse_gnubg_id(gnubg_id_for_cube(START, CubeState.for_match(7, (3, 1))))
    assert state.score == (1, 3) and state.match_length == 7


@needs_gnubg
def test_gnubg_cube_analysis_of_known_positions():
    """gnubg's 'eval' at 0-ply: the opening is no double; the last-roll race is double/take with the
    dead-cube equities of the exact 25/36: ND = 2p - 1, D/T = 2(2p - 1), D/P = +1; with the cube on
    the opponent's side there is no cube action."""
    wins = LAST_ROLL_WINS
    start, last, owned = gnubg_cube_analysis(
        [(START, CubeState()), (LAST_ROLL, CubeState()), (START, CubeState(2, "opponent"))], ply=0
    )
    assert start.action == "no_double" and start.gnubg_action.startswith("No double")
    assert start.no_double == pytest.approx(0.093, abs=0.005) and start.double_pass == 1.0
    assert last.action == "double_take" and last.gnubg_action == "Double, take"
    assert last.no_double == pytest.approx(2 * wins - 1, abs=1e-4)
    assert last.double_take == pytest.approx(2 * (2 * wins - 1), abs=1e-4)
    assert last.probs == pytest.approx([wins, 0, 0, 0, 0], abs=1e-4)
    assert owned.action == "no_double" and owned.gnubg_action == "" and np.isnan(owned.double_take)


@needs_gnubg
def test_gnubg_cube_analysis_refuses_a_finished_game():
    with pytest.raises(ValueError, match="over"):
        gnubg_cube_analysis([(pos(me={}, opp={6: 2}), CubeState())])
