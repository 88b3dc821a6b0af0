"""Outcomes a position rules out are never reported (evaluator.sanity_check, after gnubg's SanityCheck)."""

from __future__ import annotations

import numpy as np

from nard_ai import board_from_position_id, pos, starting_board
from nard_ai.agents import load_agent
from nard_ai.eval.evaluator import sanity_check

ALL = np.array([[0.9, 0.8, 0.7, 0.6, 0.5]], dtype=np.float32)  # deliberately impossible numbers


def test_no_gammon_for_the_side_on_roll_once_the_opponent_has_borne_off():
    """RULES.md §6: a gammon needs the loser to have borne off no checker. O has 14 on the board here."""
    board = pos(me={6: 5, 8: 3, 13: 5, 24: 2}, opp={6: 5, 8: 3, 13: 5, 24: 1})
    p = sanity_check(board[None], ALL.copy())[0]
    assert p[1] == p[2] == 0.0
    np.testing.assert_allclose(p[3:], [0.1, 0.1], rtol=1e-6)  # lose-gammon capped at 1 - win


def test_no_gammon_against_the_side_on_roll_once_it_has_borne_off():
    board = pos(me={6: 5, 8: 3, 13: 5, 24: 1}, opp={6: 5, 8: 3, 13: 5, 24: 2})
    p = sanity_check(board[None], ALL.copy())[0]
    assert p[3] == p[4] == 0.0 and p[1] == np.float32(0.8)


def test_no_backgammon_in_a_race_without_a_checker_in_the_winners_home_board():
    """A race, all 15 on the board each: O has none on X's points 1..6, X none on O's (X's 19..24)."""
    board = pos(me={7: 5, 8: 5, 9: 5}, opp={10: 5, 11: 5, 12: 5})
    p = sanity_check(board[None], ALL.copy())[0]
    assert p[2] == 0.0 and p[4] == 0.0 and p[1] == np.float32(0.8)


def test_contact_positions_keep_their_backgammons():
    p = sanity_check(starting_board()[None], ALL.copy())[0]
    np.testing.assert_allclose(p, [0.9, 0.8, 0.7, 0.1, 0.1], rtol=1e-6)  # only the ordering caps apply


def test_the_shipped_network_gives_no_impossible_gammon():
    """X bears off its last 3 checkers next roll for sure; O has borne off one: exactly a single win, +1."""
    board = board_from_position_id("AGB3d4AFAAAAAA")
    for ply in (0, 1):
        probs, equity = load_agent(ply=ply).value(board[None])
        assert probs[0, 1] == 0.0 and probs[0, 2] == 0.0
        assert equity[0] <= 1.0 + 1e-6


def test_a_win_an_ulp_above_one_gives_no_negative_lose_gammon():
    """A network's float32 outcome sum can pass 1 by an ulp; lose-gammon is capped at ``1 - win``,
    which must not go below 0 (a review found ``-0.0%`` printed at 2-ply for 4NvBBwCzBQAQAA)."""
    over = np.float32(1.0) + np.finfo(np.float32).eps
    probs = np.array([[over, 0.5, 0.01, 0.0, 0.0]], dtype=np.float32)
    p = sanity_check(starting_board()[None], probs)[0]
    assert p[0] == 1.0 and p[3] == 0.0 and p[4] == 0.0 and not np.signbit(p[3:]).any()
    agent = load_agent(None, ply=2)
    value = agent.value(board_from_position_id("4NvBBwCzBQAQAA")[None])
    assert (value.probs >= 0).all()
