"""Tests of the match-level formats: gnubg Match IDs, XGIDs, reading written plays, ``.mat`` records.

Every board is the layout of :mod:`nard_ai.core.board` (``(26,)`` int8, the
mover's view). Boards built by hand use ``pos(me=..., opp=...)``, each side
in its own numbering. Known vectors come from the formats' own
documentation (the gnubg manual's Match ID example, the XGID of the starting
position in ``nard_ai/data/README.md``) and from gnubg itself (the ``gnubg``
Python module's ``match_id`` and ``set_gnubg_id``/``gnubg_id``), recorded
here as literals; the live gnubg cross-checks are skipped where the module is
not installed.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import random_board
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nard_ai
from nard_ai.core.board import game_result, pos, starting_board, swap_sides
from nard_ai.core.game import CENTERED
from nard_ai.core.movegen import legal_plays
from nard_ai.core.rules import Rules
from nard_ai.formats import (
    ActionKind,
    GameStatus,
    MatAction,
    Match,
    MatchState,
    MatGame,
    Resignation,
    board_from_position_id,
    from_match_id,
    from_xgid,
    gnubg_id,
    match_id,
    parse_gnubg_id,
    parse_play,
    play_notation,
    position_id,
    read_mat,
    to_xgid,
    write_mat,
)
from nard_ai.formats.base64key import encode_base64
from nard_ai.formats.mat import decode_mat
from nard_ai.formats.match_id import MAX_MATCH_LENGTH, match_key

DATA = Path(__file__).parent / "data"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_state(rng: np.random.Generator) -> MatchState:
    """A random valid MatchState: Crawford only where the score allows it, and only states a game reaches
    (a score at the match length only once the game is over, an owned cube above 1, a centred cube above 1
    only in money play, no dice before the first game, a double only before rolling and by a player the cube
    is not owned against). The dice are in either order."""
    length = int(rng.choice([0, 1, 3, 5, 7, 9, 11, 25, 64]))
    game_state = GameStatus(int(rng.integers(0, 5)))
    over = game_state not in (GameStatus.NONE, GameStatus.PLAYING)
    top = (length + 1 if over else length) if length else 100
    score = tuple(int(rng.integers(0, top)) for _ in range(2))
    crawford = bool(length and rng.random() < 0.5 and max(score) < length)
    if crawford:
        score = (length - 1, int(rng.integers(0, length - 1))) if length > 1 else score
        score = score if rng.random() < 0.5 else score[::-1]
        crawford = length > 1
    owner = CENTERED if crawford else int(rng.choice([CENTERED, 0, 1]))
    if owner == CENTERED:
        cube = 1 if crawford or length else 1 << int(rng.integers(0, 16))  # money: automatic doubles
    else:
        cube = 1 << int(rng.integers(1, 16))
    if game_state == GameStatus.NONE:
        owner, cube = CENTERED, 1  # nothing of a game in progress before any game
    player_on_roll = int(rng.integers(0, 2))
    double_offered = bool(
        game_state != GameStatus.NONE and not crawford and owner != 1 - player_on_roll and rng.random() < 0.3
    )
    rolled = game_state != GameStatus.NONE and not double_offered and rng.random() < 0.7
    dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7))) if rolled else (0, 0)
    resignation = Resignation(int(rng.integers(0, 4))) if game_state != GameStatus.NONE else Resignation.NONE
    turn = int(rng.integers(0, 2)) if game_state != GameStatus.NONE else player_on_roll
    if double_offered:
        # the doubled player answers; if it resigned instead, the doubler answers the resignation
        turn = player_on_roll if resignation != Resignation.NONE else 1 - player_on_roll
    return MatchState(
        cube_value=cube,
        cube_owner=owner,
        player_on_roll=player_on_roll,
        crawford=crawford,
        game_state=game_state,
        turn=turn,
        double_offered=double_offered,
        resignation=resignation,
        dice=dice,
        match_length=length,
        score=score,
        jacoby=bool(rng.random() < 0.5),
    )


def gnubg_order(state: MatchState) -> MatchState:
    """The state with its dice high die first, as from_match_id reads them (gnubg writes that order)."""
    return replace(state, dice=(max(state.dice), min(state.dice)))


def mutations(valid: list[str]) -> st.SearchStrategy[str]:
    """Valid IDs with characters replaced, inserted or deleted."""

    @st.composite
    def mutate(draw) -> str:
        text = draw(st.sampled_from(valid))
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, len(text)))
            op = draw(st.sampled_from(["replace", "insert", "delete"]))
            ch = draw(st.characters(codec="utf-8") | st.sampled_from(list(":=-/ABab019+*()XGIDxgid \n")))
            if op == "replace" and i < len(text):
                text = text[:i] + ch + text[i + 1 :]
            elif op == "insert":
                text = text[:i] + ch + text[i:]
            elif i < len(text):
                text = text[:i] + text[i + 1 :]
        return text

    return mutate()


def only_value_errors(parse, text) -> None:
    """Call a parser; anything but success or a ValueError fails the test."""
    try:
        parse(text)
    except ValueError as exc:
        assert str(exc), "a ValueError must say what is wrong"


# --------------------------------------------------------------------------
# Match IDs: known vectors
# --------------------------------------------------------------------------


def test_match_id_of_the_manuals_example():
    """gnubg manual 11.7: 9-point match at 2-4, player 0 owns a 2-cube, player 1 has rolled 5-2: QYkqASAAIAAA."""
    state = MatchState(
        cube_value=2,
        cube_owner=0,
        player_on_roll=1,
        game_state=GameStatus.PLAYING,
        turn=1,
        dice=(5, 2),
        match_length=9,
        score=(2, 4),
        jacoby=True,  # bit 66 is 0 in the manual's (pre-Jacoby-bit) ID
    )
    assert match_id(state) == "QYkqASAAIAAA"
    assert from_match_id("QYkqASAAIAAA") == state


@pytest.mark.parametrize(
    ("mid", "state"),
    [
        # gnubg's ID of a new money session: player 1 on roll, Jacoby on (its default).
        ("cAkAAAAAAAAA", MatchState(jacoby=True)),
        # The default state (Jacoby off) sets bit 66, "not Jacoby".
        ("cAkAAAAAAAAE", MatchState()),
        # No game started, player 0 (gnubg's fresh board).
        ("MAAAAAAAAAAA", MatchState(player_on_roll=0, turn=0, game_state=GameStatus.NONE, jacoby=True)),
        # Computed with the gnubg module's match_id(cubeinfo, posinfo):
        ("EgH7ADAAKAAE", MatchState(4, 1, 0, False, GameStatus.PLAYING, 0, False, 0, (6, 6), 7, (3, 5))),
        (
            "8ImlAEAAEAAE",
            MatchState(1, CENTERED, 1, True, GameStatus.PLAYING, 1, False, 0, (3, 1), 5, (4, 2)),
        ),
        ("ARkAAAAAAAAA", MatchState(2, 0, 0, False, GameStatus.PLAYING, 1, True, 0, (0, 0), 0, (0, 0), True)),
        ("Q0FgAaAAOAAE", MatchState(8, 0, 1, False, GameStatus.PLAYING, 0, False, 2, (0, 0), 11, (10, 7))),
        # gnubg 1.07 after `double` then `resign single` by the doubled player: the doubler (player 0)
        # must answer the resignation while the double is still pending.
        (
            "MDEAAAAAAAAA",
            MatchState(1, CENTERED, 0, False, GameStatus.PLAYING, 0, True, 1, (0, 0), 0, (0, 0), True),
        ),
        # gnubg 1.07 at the end of a 1-point match won by a resignation: the final score, at the match
        # length, with the last roll and the resignation kept.
        (
            "MKslAAAACAAE",
            MatchState(1, CENTERED, 0, False, GameStatus.RESIGNED, 1, False, 1, (3, 1), 1, (0, 1)),
        ),
        ("MIJqAAAAEAAE", MatchState(1, CENTERED, 0, False, GameStatus.OVER, 0, False, 0, (5, 2), 3, (0, 2))),
        ("VgwgA0ABwAAE", MatchState(64, 1, 1, False, GameStatus.DROPPED, 1, False, 0, (0, 0), 25, (20, 24))),
    ],
)
def test_known_match_ids(mid, state):
    """gnubg manual 11.7 and gnubg's own MatchID(): each field where the manual puts it."""
    assert match_id(state) == mid
    assert from_match_id(mid) == state


def test_match_id_fields_sit_where_the_manual_says():
    """gnubg manual 11.7: the bit positions, read back from an independent base64 decoding."""
    import base64

    # player 1 owns an 8-cube and redoubles; player 0 resigns a gammon instead of answering, so player 1
    # is to answer the resignation (turn 1)
    state = MatchState(8, 1, 1, False, GameStatus.PLAYING, 1, True, Resignation.GAMMON, (0, 0), 21, (17, 9))
    key = int.from_bytes(base64.b64decode(match_id(state)), "little")
    assert key & 0xF == 3  # log2(8)
    assert (key >> 4) & 3 == 1 and (key >> 6) & 1 == 1 and (key >> 11) & 1 == 1 and (key >> 12) & 1 == 1
    assert (key >> 13) & 3 == 2
    assert (key >> 21) & 0x7FFF == 21 and (key >> 36) & 0x7FFF == 17 and (key >> 51) & 0x7FFF == 9
    assert (key >> 66) & 1 == 1  # Jacoby off


def test_match_id_writes_the_higher_die_first_and_reads_either_order():
    """gnubg's MatchID() stores the higher die in bits 15-17, whatever the order of its anDice; MatchState
    keeps the dice as given (an XGID's order), and from_match_id reads them high die first."""
    assert MatchState(dice=(2, 5)).dice == (2, 5)
    assert match_id(MatchState(dice=(2, 5))) == match_id(MatchState(dice=(5, 2))) == "cIkKAAAAAAAE"
    low_first = "cAkVAAAAAAAE"  # dice 2, 5 written low first
    assert from_match_id(low_first).dice == (5, 2)
    assert match_id(from_match_id(low_first)) == match_id(MatchState(dice=(5, 2)))


def test_match_ids_match_gnubg_on_random_states():
    """gnubg's own MatchID() (the gnubg module) writes the same ID for random states, and we read its IDs back."""
    gnubg = pytest.importorskip("gnubg")
    rng = np.random.default_rng(3)
    checked = 0
    while checked < 400:
        state = random_state(rng)
        money = state.match_length == 0
        score = (0, 0) if money else state.score  # gnubg's cubeinfo drops a money score
        try:
            cube_info = gnubg.cube_info(
                state.cube_value,
                state.cube_owner,
                state.player_on_roll,
                state.match_length,
                score,
                state.crawford,
                0,
            )
        except RuntimeError:
            continue  # states gnubg's SetCubeInfo refuses (e.g. a score at the match length)
        pos_info = gnubg.pos_info(
            state.turn, int(state.resignation), int(state.double_offered), int(state.game_state), state.dice
        )
        expected = MatchState(**{**state.__dict__, "score": score, "jacoby": bool(cube_info["jacoby"])})
        theirs = gnubg.match_id(cube_info, pos_info)
        assert match_id(expected) == theirs
        assert from_match_id(theirs) == gnubg_order(expected)
        checked += 1


def test_match_id_round_trips_random_states():
    """Encoding then decoding gives the state back, and the ID back."""
    rng = np.random.default_rng(4)
    for _ in range(2000):
        state = random_state(rng)
        mid = match_id(state)
        assert len(mid) == 12 and from_match_id(mid) == gnubg_order(state)
        assert match_id(from_match_id(f"  {mid}\n")) == mid


# --------------------------------------------------------------------------
# Match IDs: the board goes with the player on roll
# --------------------------------------------------------------------------


def test_gnubg_id_of_the_starting_position():
    """gnubg shows 4HPwATDgc/ABMA:cAkAAAAAAAAA for a new money game; the board is the mover's."""
    board, state = parse_gnubg_id("4HPwATDgc/ABMA:cAkAAAAAAAAA")
    assert (board == starting_board()).all()
    assert state == MatchState(jacoby=True)
    assert gnubg_id(starting_board(), MatchState()) == "4HPwATDgc/ABMA:cAkAAAAAAAAE"


def test_the_board_of_a_gnubg_id_is_seen_from_the_player_on_roll():
    """gnubg's importer of the XGID below (X = player 1 played 8/5 6/5, O = player 0 on roll with 5-2) writes
    sGfwATDgc/ABMA:MIEKAAAAAAAE: the Position ID is O's view, and player_on_roll is 0.

        O (player 0, on roll) sees: its own 24:2 13:5 8:3 6:5; X's 24:2 13:5 8:2 6:4 5:2.
    """
    board, state = parse_gnubg_id("sGfwATDgc/ABMA:MIEKAAAAAAAE")
    assert state.player_on_roll == 0 and state.turn == 0 and state.dice == (5, 2)
    x_after_31 = {24: 2, 13: 5, 8: 2, 6: 4, 5: 2}
    assert (board == pos(me={24: 2, 13: 5, 8: 3, 6: 5}, opp=x_after_31)).all()
    assert state.mover_score == state.score[0]


@pytest.mark.parametrize(
    "text",
    [
        " 4HPwATDgc/ABMA:cAkAAAAAAAAA ",
        "GNUBGID 4HPwATDgc/ABMA:cAkAAAAAAAAA",
        "GNU Backgammon ID: 4HPwATDgc/ABMA:cAkAAAAAAAAA",
    ],
)
def test_gnubg_id_accepts_labels_and_whitespace(text):
    """gnubg prints 'GNU Backgammon ID: <pid>:<mid>'; the label and spaces are not part of the ID."""
    board, state = parse_gnubg_id(text)
    assert (board == starting_board()).all() and state == MatchState(jacoby=True)


def test_gnubg_id_round_trips_random_boards_and_states():
    """A board and state written as PositionID:MatchID read back unchanged."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        board, state = random_board(rng), random_state(rng)
        got_board, got_state = parse_gnubg_id(gnubg_id(board, state))
        assert (got_board == board).all() and got_state == gnubg_order(state)


# --------------------------------------------------------------------------
# Match IDs: refusals
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mid", "message"),
    [
        ("cAkAAAAAAAA", "12 characters"),
        ("cAkAAAAAAAAAA", "12 characters"),
        ("cAkAAAAAAA*A", "base64"),
        ("cAkAAAAAAAAI", "unused bits"),
        ("YAkAAAAAAAAA", "cube owner bits are 10"),
        ("cA0AAAAAAAAA", "game state 5"),
        ("cIkHAAAAAAAA", "die 1 is 7"),
        ("cIkBAAAAAAAA", "both dice"),
        ("8AkAAAAAAAAA", "money play"),
        ("cAlgAFAAAAAA", "above the match length"),
    ],
)
def test_malformed_match_ids_raise_value_error_naming_the_field(mid, message):
    """Strict decoding: every field value gnubg never writes is refused, saying which."""
    with pytest.raises(ValueError, match=message):
        from_match_id(mid)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cube_value": 3}, "power of two"),
        ({"cube_value": 1 << 16}, "power of two"),
        ({"cube_owner": 2}, "cube_owner"),
        ({"player_on_roll": 2}, "player_on_roll"),
        ({"turn": -1}, "turn"),
        ({"dice": (3, 0)}, "both dice"),
        ({"dice": (7, 1)}, "0-6"),
        ({"dice": "31"}, "integer"),
        ({"game_state": 9}, "game_state"),
        ({"resignation": 4}, "resignation"),
        ({"match_length": -1}, "match_length"),
        ({"match_length": 5, "score": (6, 0)}, "above the match length"),
        ({"crawford": True}, "money play"),
        ({"crawford": True, "match_length": 5, "score": (3, 2)}, "exactly one player at 4"),
        ({"crawford": True, "match_length": 5, "score": (4, 4)}, "exactly one player at 4"),
        ({"crawford": True, "match_length": 5, "score": (4, 1), "cube_value": 2}, "Crawford game"),
        ({"jacoby": "yes"}, "jacoby"),
    ],
)
def test_match_state_refuses_what_a_match_id_cannot_hold(fields, message):
    """MatchState checks its fields, so match_id never meets a value it cannot write."""
    with pytest.raises(ValueError, match=message):
        MatchState(**fields)


@pytest.mark.parametrize(
    ("mid", "message"),
    [
        # Our encoder with the game state bits set to 1 (playing): 5-2 in a 5-point match (gnubg's
        # SetCubeInfo refuses that score, and MatchFromKey lets it through).
        ("cImlAFAAEAAE", r"score of player 0 is 5, at the match length 5, with game_state PLAYING"),
        # The rest written by the gnubg module's match_id(cube_info, pos_info), which writes any fields:
        ("cYmlABAAEAAE", r"cube_value is 2 with the cube centred \(cube_owner CENTERED\) in a 5-point match"),
        ("QIkFAAAAAAAA", r"cube_owner is player 0 with cube_value 1"),
        ("cJEFAAAAAAAA", r"double_offered is set with dice 3-1 rolled; a double is offered before rolling"),
        ("cDEAAAAAAAAA", r"double_offered and resignation SINGLE are both pending with turn 0, the doubled"),
        ("cIgFAAAAAAAA", r"dice are 3-1 with game_state NONE: no game has started"),
        (
            "QREAAAAAAAAA",
            r"double_offered is set for player_on_roll 1 \(the doubler\), but the cube is owned",
        ),
    ],
)
def test_match_ids_of_states_no_game_reaches_are_refused_naming_the_field(mid, message):
    """gnubg's MatchFromKey checks only each field's range; these combinations its play never writes (a
    match already won with a game under way, a centred 2-cube in match play, a 1-cube owned, a double after
    the roll, a resignation left to the resigner, dice before the first game, a double against the owner)."""
    with pytest.raises(ValueError, match=f"Match ID {mid!r}: {message}"):
        from_match_id(mid)


def test_match_states_gnubg_writes_in_play_are_read():
    """What gnubg 1.07 writes in play is accepted (the IDs of its `show board`): MDEAAAAAAAAA after `double`
    then `resign single` (a double and a resignation pending, the doubler to answer), MKslAAAACAAE at the
    end of a 1-point match won by resignation (score 1 of 1, game over), and a centred 4-cube in money
    play (automatic doubles)."""
    pending = from_match_id("MDEAAAAAAAAA")
    assert pending.double_offered and pending.resignation == Resignation.SINGLE
    assert pending.turn == pending.player_on_roll == 0
    final = from_match_id("MKslAAAACAAE")
    assert final.score == (0, 1) and final.match_length == 1 and final.game_state == GameStatus.RESIGNED
    assert MatchState(cube_value=4).cube_owner == CENTERED


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"match_length": 5, "score": (5, 2)}, "at the match length 5"),
        ({"match_length": 5, "score": (0, 5), "game_state": GameStatus.NONE}, "at the match length 5"),
        ({"match_length": 5, "cube_value": 2}, "centred"),
        ({"cube_value": 1, "cube_owner": 1}, "cube_owner is player 1 with cube_value 1"),
        ({"double_offered": True, "turn": 0, "dice": (6, 5)}, "before rolling"),
        ({"double_offered": True, "turn": 0, "resignation": Resignation.GAMMON}, "both pending"),
        ({"game_state": GameStatus.NONE, "dice": (6, 5)}, "no game has started"),
        ({"double_offered": True, "turn": 0, "cube_value": 2, "cube_owner": 0}, "owned by player 0"),
    ],
)
def test_match_state_refuses_states_no_game_reaches(fields, message):
    """The same checks in the constructor, so match_id never writes such a state either."""
    with pytest.raises(ValueError, match=message):
        MatchState(**fields)


def test_a_final_score_at_the_match_length_is_kept_once_the_game_is_over():
    """gnubg writes the final score with game state OVER, RESIGNED or DROPPED; it round-trips."""
    for state in (GameStatus.OVER, GameStatus.RESIGNED, GameStatus.DROPPED):
        final = MatchState(game_state=state, match_length=5, score=(5, 2))
        assert from_match_id(match_id(final)) == final


def test_the_longest_match_is_gnubgs_64_points():
    """gnubg's MAXSCORE is 64: gnubg 1.07 takes `set matchid cAkACAAAAAAE` (a 64-point match) and answers
    "Illegal match ID" to cAkgCAAAAAAE (65 points) and cAlgDAAAAAAE (99 points), and `new match 65` with
    "compiled with support only for matches of length 64 and below"."""
    assert MAX_MATCH_LENGTH == 64
    assert match_id(MatchState(match_length=64)) == "cAkACAAAAAAE"
    assert from_match_id("cAkACAAAAAAE") == MatchState(match_length=64)
    for length in (65, 99, 32767):
        with pytest.raises(ValueError, match=rf"match_length must be 0 \(money play\) to 64.*got {length}"):
            MatchState(match_length=length)
    for mid, length in (("cAkgCAAAAAAE", 65), ("cAlgDAAAAAAE", 99)):
        with pytest.raises(ValueError, match=rf"Match ID '{mid}': match_length .* to 64.*got {length}"):
            from_match_id(mid)


def test_money_scores_keep_all_fifteen_bits():
    """gnubg 1.07 takes `set matchid cAkAAPD/BwAE`: a money session at 32767-0 (the limit is for matches only)."""
    state = MatchState(score=(32767, 0))
    assert match_id(state) == "cAkAAPD/BwAE" and from_match_id("cAkAAPD/BwAE") == state


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4HPwATDgc/ABMA", "one ':'"),
        ("4HPwATDgc/ABMA:cAkAAAAAAAAA:x", "one ':'"),
        ("4HPwATDgc/ABM:cAkAAAAAAAAA", "Position ID"),
        ("4HPwATDgc/ABMA:cAkAAAAAAAA", "Match ID"),
    ],
)
def test_malformed_gnubg_ids_raise_value_error(text, message):
    """The combined form is exactly one Position ID and one Match ID."""
    with pytest.raises(ValueError, match=message):
        parse_gnubg_id(text)


@FUZZ
@given(st.text(max_size=20) | mutations(["cAkAAAAAAAAA", "QYkqASAAIAAA", "VgwgA0ABwAAE"]))
def test_match_id_parser_raises_only_value_errors(text):
    """Fuzz: random and mutated Match IDs either decode or raise ValueError."""
    only_value_errors(from_match_id, text)


@FUZZ
@given(st.text(max_size=40) | mutations(["4HPwATDgc/ABMA:cAkAAAAAAAAA", "sGfwATDgc/ABMA:MIEKAAAAAAAE"]))
def test_gnubg_id_parser_raises_only_value_errors(text):
    """Fuzz: random and mutated combined IDs either decode or raise ValueError."""
    only_value_errors(parse_gnubg_id, text)


# --------------------------------------------------------------------------
# XGID
# --------------------------------------------------------------------------


def test_xgid_of_the_starting_position():
    """nard_ai/data/README.md: the starting position is XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10."""
    assert to_xgid(starting_board()) == START_XGID
    assert to_xgid(starting_board(), MatchState()) == START_XGID
    board, state = from_xgid(START_XGID)
    assert (board == starting_board()).all() and state == MatchState()


def test_xgid_exports_from_the_package():
    """The issue asks for to_xgid/from_xgid and match_id/from_match_id at the top level."""
    assert nard_ai.to_xgid(nard_ai.starting_board()) == START_XGID
    assert nard_ai.from_match_id(nard_ai.match_id(nard_ai.MatchState())) == nard_ai.MatchState()
    assert (nard_ai.from_xgid(START_XGID)[0] == nard_ai.starting_board()).all()


# XGIDs of non-symmetric positions and the GNU Backgammon IDs that gnubg's own
# importer (set_gnubg_id, then gnubg_id) makes of them.
GNUBG_XGID_VECTORS = [
    # X (player 1) played 8/5 6/5; O (player 0) to play 5-2.
    ("XGID=-b---BD-B---eE---c-e----B-:0:0:-1:52:0:0:0:0:10", "sGfwATDgc/ABMA:MIEKAAAAAAAE"),
    # O played its 8/5 6/5 (X's 17/20 19/20); X to play 6-4.
    ("XGID=-b----E-C---eE---b-db---B-:0:0:1:64:0:0:0:0:10", "sGfwATDgc/ABMA:cAkTAAAAAAAE"),
    # As the first, O to roll, X owns a 2-cube, 5-point match at X 2, O 0.
    ("XGID=-b---BD-B---eE---c-e----B-:1:1:-1:00:2:0:0:5:10", "sGfwATDgc/ABMA:EQGgAAAAEAAE"),
    # Checkers on both bars and borne off; money with Jacoby; O to play 3-1.
    ("XGID=aC----B-------------b---dB:0:0:-1:31:0:0:1:0:10", "BwMAYA8DAEAAAA:MIEFAAAAAAAA"),
    ("XGID=aC----B-------------b---dB:0:0:1:31:0:0:1:0:10", "DwMAQAcDAGAAAA:cIkFAAAAAAAA"),
    # A 7-point match at X 6, O 4, the Crawford game, X to play 3-1.
    ("XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:1:31:6:4:1:7:10", "3PaAAQZi25gBMA:8InlAEAAMAAE"),
    # 7-point match at X 3, O 2, O owns a 4-cube and is to play 6-4.
    ("XGID=-b----E-C---eE---b-d-b--B-:2:1:-1:64:3:2:0:7:10", "4HPwATCYZ/ABMA:EgHzACAAGAAE"),
]


@pytest.mark.parametrize(("xgid", "gnubg"), GNUBG_XGID_VECTORS)
def test_xgid_gives_the_position_and_match_ids_gnubg_gives(xgid, gnubg):
    """gnubg's SetXGID: X is player 1, O player 0, the board is the view of the side on roll."""
    board, state = from_xgid(xgid)
    assert gnubg_id(board, state) == gnubg
    pid_board, pid_state = parse_gnubg_id(gnubg)
    assert (pid_board == board).all() and pid_state == state
    assert to_xgid(pid_board, pid_state) == xgid


def test_an_opening_move_reads_the_same_from_both_sides():
    """A non-symmetric position, both ways: after X's 3-1 (8/5 6/5), O on roll sees X's checkers on its 20, 19, 17.

    The XGID string is always X's view (index i = X's point i); with O on roll
    the board is turned to O, and its Position ID is gnubg's for O on roll.
    """
    x_after_31 = {24: 2, 13: 5, 8: 2, 6: 4, 5: 2}
    start = {24: 2, 13: 5, 8: 3, 6: 5}
    o_to_play = "XGID=-b---BD-B---eE---c-e----B-:0:0:-1:52:0:0:0:0:10"
    board, state = from_xgid(o_to_play)
    assert (board == pos(me=start, opp=x_after_31)).all()
    assert state.player_on_roll == 0 and state.dice == (5, 2)
    assert position_id(board) == "sGfwATDgc/ABMA"
    # The same physical position with X to play instead: the string is unchanged, the board is X's view.
    x_to_play = o_to_play.replace(":-1:52:", ":1:52:")
    x_board, x_state = from_xgid(x_to_play)
    assert (x_board == pos(me=x_after_31, opp=start)).all() and (x_board == swap_sides(board)).all()
    assert x_state.player_on_roll == 1
    assert to_xgid(board_from_position_id(position_id(x_board)), x_state) == x_to_play


def test_xgids_match_gnubgs_importer_live():
    """gnubg's set_gnubg_id then gnubg_id, on XGIDs with X on roll (the ones gnubg imports without asking to swap)."""
    gnubg = pytest.importorskip("gnubg")
    rng = np.random.default_rng(6)
    for _ in range(40):
        board = random_board(rng)
        if game_result(board):
            continue
        owner = int(rng.choice([CENTERED, 0, 1]))
        state = MatchState(
            player_on_roll=1,
            turn=1,
            dice=(int(rng.integers(1, 7)), int(rng.integers(1, 7))),
            cube_value=1 if owner == CENTERED else 1 << int(rng.integers(1, 4)),  # a centred cube is 1
            cube_owner=owner,
        )
        xgid = to_xgid(board, state)
        gnubg.set_gnubg_id(xgid)
        assert gnubg.gnubg_id() == gnubg_id(board, state)


@pytest.mark.parametrize(
    ("xgid", "expected"),
    [
        # cube 2**3 owned by O (player 0), O's turn.
        ("XGID=-b----E-C---eE---c-e----B-:3:-1:-1:31:0:0:0:0:10", {"cube_value": 8, "cube_owner": 0}),
        # scores: X's first (player 1), O's second (player 0).
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:3:1:0:7:10", {"score": (1, 3), "match_length": 7}),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:6:3:1:7:10", {"crawford": True}),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:1:0:10", {"jacoby": True}),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:2:0:10", {"jacoby": False, "beavers": True}),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:3:0:10", {"jacoby": True, "beavers": True}),
        # low die first, kept as written (to_xgid writes it back: test_an_xgid_keeps_its_dice_order)
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:13:0:0:0:0:10", {"dice": (1, 3)}),
        # D: X (turn 1) doubled from 2 (it owned the cube); O (player 0) must answer.
        (
            "XGID=-b----E-C---eE---c-e----B-:1:1:1:D:0:0:0:0:10",
            {"double_offered": True, "player_on_roll": 1, "turn": 0, "cube_value": 2, "cube_owner": 1},
        ),
    ],
)
def test_xgid_fields(xgid, expected):
    """XG's field meanings, as gnubg's importer reads them."""
    _, state = from_xgid(xgid)
    for name, value in expected.items():
        assert getattr(state, name) == value, name


def test_an_xgid_keeps_its_dice_order():
    """XGID ...:16:... read then written is ...:16:... again (it used to come back as 61): the dice stay in
    the order written; the Match ID of the same state still has gnubg's order, higher die first."""
    for dice in ("16", "61", "35", "44"):
        xgid = f"XGID=-b----E-C---eE---c-e----B-:0:0:1:{dice}:0:0:0:0:10"
        board, state = from_xgid(xgid)
        assert state.dice == (int(dice[0]), int(dice[1]))
        assert to_xgid(board, state) == xgid
        assert from_match_id(match_id(state)).dice == tuple(sorted(state.dice, reverse=True))


def test_xgid_writes_a_pending_double_as_d_with_the_doubler_on_turn():
    """XGID 'D': turn names the doubler; the cube is the cube before the double."""
    state = MatchState(cube_value=2, cube_owner=0, player_on_roll=0, turn=1, double_offered=True)
    xgid = to_xgid(starting_board(), state)
    assert xgid == "XGID=-b----E-C---eE---c-e----B-:1:-1:-1:D:0:0:0:0:10"
    assert from_xgid(xgid)[1] == state


@pytest.mark.parametrize(
    "text",
    [
        "-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10",
        "  xgid=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10\n",
    ],
)
def test_xgid_prefix_is_optional_and_whitespace_ignored(text):
    board, state = from_xgid(text)
    assert (board == starting_board()).all() and state == MatchState()


def test_xgid_round_trips_random_boards_and_states():
    """to_xgid then from_xgid gives the board and state back (for every state an XGID can hold), the max
    cube field included."""
    rng = np.random.default_rng(7)
    done = 0
    while done < 500:
        board, state = random_board(rng), random_state(rng)
        doubled = state.double_offered
        # an XGID is a game being played: a match score below the match length
        score = (
            tuple(min(s, state.match_length - 1) for s in state.score) if state.match_length else state.score
        )
        # An XGID holds a centred cube above 1 only in money play (as random_state makes them), and a cube
        # (or double) only up to its max cube.
        cube = state.cube_value
        cube_log2 = cube.bit_length() - 1 + int(doubled)
        if cube_log2 > 15:
            continue
        state = MatchState(
            **{
                **state.__dict__,
                "cube_value": cube,
                "score": score,
                "game_state": GameStatus.PLAYING,
                "resignation": Resignation.NONE,
                "double_offered": doubled,
                "turn": 1 - state.player_on_roll if doubled else state.player_on_roll,
                "jacoby": state.jacoby and not state.match_length,
                "beavers": not state.match_length and rng.random() < 0.5,  # XG's Jacoby field, bit 1
                "max_cube_log2": int(rng.integers(max(cube_log2, 1), 16)),
            }
        )
        xgid = to_xgid(board, state)
        got_board, got_state = from_xgid(xgid)
        assert (got_board == board).all() and got_state == state, xgid
        assert to_xgid(got_board, got_state) == xgid
        done += 1


@pytest.mark.parametrize(
    ("xgid", "message"),
    [
        ("XGID=-b----E-C---eE---c-e----B:0:0:1:31:0:0:0:0:10", "26 characters"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0", "10 ':'-separated fields"),
        ("XGID=-b----E-C---eE---c-e----?-:0:0:1:31:0:0:0:0:10", "'\\?' at index 24"),
        ("XGID=-b----E-C---eE---c-e----P-:0:0:1:31:0:0:0:0:10", "16 checkers"),
        ("XGID=-b----E-C---eE---c-e----C-:0:0:1:31:0:0:0:0:10", "16 checkers on the board"),
        ("XGID=Ab----E-C---eE---c-e----A-:0:0:1:31:0:0:0:0:10", "O's bar"),
        ("XGID=-b----E-C---eE---c-e----Aa:0:0:1:31:0:0:0:0:10", "X's bar"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:71:0:0:0:0:10", "'dice'"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:30:0:0:0:0:10", "'dice'"),
        ("XGID=-b----E-C---eE---c-e----B-:0:2:1:31:0:0:0:0:10", "'cube owner'"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:0:31:0:0:0:0:10", "'turn'"),
        ("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:B:0:0:3:0:10", "beaver"),
        ("XGID=-b----E-C---eE---c-e----B-:2:1:1:R:0:0:3:0:10", "beaver/raccoon"),
        ("XGID=-b----E-C---eE---c-e----B-:16:1:1:31:0:0:0:0:10", "'cube'"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:2:7:10", "'Crawford/Jacoby'"),
        ("XGID=-b----E-C---eE---c-e----B-:x:0:1:31:0:0:0:0:10", "'cube' must be an integer"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:8:0:0:7:10", "above the match length"),
        # a score equal to the match length: the match is over, no game is played
        (
            "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:7:0:0:7:10",
            "'score 1 \\(X\\)' is 7, at or above the match",
        ),
        (
            "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:7:0:7:10",
            "'score 2 \\(O\\)' is 7, at or above the match",
        ),
        # an owned cube of 1: a cube is owned only after a double
        ("XGID=-b----E-C---eE---c-e----B-:0:1:1:31:0:0:0:0:10", "owned \\(field 'cube owner' not 0\\) at 1"),
        ("XGID=-b----E-C---eE---c-e----B-:0:-1:1:D:0:0:0:5:10", "owned \\(field 'cube owner' not 0\\) at 1"),
        ("", "10 ':'-separated fields"),
        ("4HPwATDgc/ABMA:cAkAAAAAAAAA", "10 ':'-separated fields"),
    ],
)
def test_malformed_xgids_raise_value_error_naming_the_field(xgid, message):
    """Every field is checked; the message names the field and the value."""
    with pytest.raises(ValueError, match=message):
        from_xgid(xgid)


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (MatchState(resignation=Resignation.SINGLE), "resignation"),
        (MatchState(game_state=GameStatus.OVER), "game being played"),
        (MatchState(turn=0), "differs from player_on_roll"),
    ],
)
def test_to_xgid_refuses_states_an_xgid_cannot_hold(state, message):
    with pytest.raises(ValueError, match=message):
        to_xgid(starting_board(), state)


def test_an_xgid_cube_above_its_max_cube_is_refused():
    """XGID's last field is log2 of the largest cube allowed: cube field 3 (an 8-cube) with max cube 2 (a
    4-cube) contradicts itself, and so does a pending double ('D') from 4 to 8 under that limit."""
    with pytest.raises(ValueError, match=r"the cube is 8 \(field 'cube' 3\), above the max cube 4"):
        from_xgid("XGID=-b----E-C---eE---c-e----B-:3:1:1:00:0:0:0:0:2")
    with pytest.raises(ValueError, match=r"a double to 8 is offered .* above the max cube 4"):
        from_xgid("XGID=-b----E-C---eE---c-e----B-:2:1:1:D:0:0:0:0:2")
    with pytest.raises(ValueError, match=r"the cube is 8 .* above the max cube 4"):
        to_xgid(starting_board(), MatchState(cube_value=8, cube_owner=1), max_cube_log2=2)
    # At the limit is fine: a 4-cube under max cube 2.
    assert from_xgid("XGID=-b----E-C---eE---c-e----B-:2:1:1:00:0:0:0:0:2")[1].cube_value == 4


@pytest.mark.parametrize("max_cube", ["2", "10", "15"])
def test_an_xgid_keeps_its_max_cube_field_on_a_round_trip(max_cube):
    """to_xgid(*from_xgid(x)) == x: the max cube (2 = a 4-cube limit here) is kept in MatchState.max_cube_log2,
    not replaced by XG's default 10 on writing."""
    xgid = f"XGID=-b----E-C---eE---c-e----B-:2:1:1:00:0:0:0:0:{max_cube}"
    board, state = from_xgid(xgid)
    assert state.max_cube_log2 == int(max_cube)
    assert to_xgid(board, state) == xgid
    assert to_xgid(board, state, max_cube_log2=12).endswith(":12")  # an explicit limit still wins


def test_a_centred_cube_above_one_is_refused_in_a_match_and_kept_in_money_play():
    """XGID's cube owner 0 is a centred cube. In match play it is one nobody has doubled: its value is 1
    (RULES.md 8: the cube starts centred at 1, and whoever takes a double owns it), so cube field 1 (a
    2-cube) with owner 0 in a 5-point match is refused, with a pending double ('D') or without. In money
    play automatic doubles leave it centred above 1 (gnubg's Match ID holds it, issue 15): it is kept."""
    for dice in ("D", "00"):
        with pytest.raises(ValueError, match=r"the cube is centred \(owner 0\) at 2.* in a 5-point match"):
            from_xgid(f"XGID=-b----E-C---eE---c-e----B-:1:0:1:{dice}:0:0:0:5:10")
        money = f"XGID=-b----E-C---eE---c-e----B-:1:0:1:{dice}:0:0:0:0:10"
        board, state = from_xgid(money)
        assert (state.cube_value, state.cube_owner, state.double_offered) == (2, CENTERED, dice == "D")
        assert to_xgid(board, state) == money
    with pytest.raises(ValueError, match="centred"):
        to_xgid(starting_board(), MatchState(cube_value=2, cube_owner=CENTERED, match_length=5))
    # A centred cube being doubled (cube field 0, 'D') is the ordinary first double.
    _, state = from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:0:0:10")
    assert state.double_offered and state.cube_value == 1 and state.cube_owner == CENTERED


def test_an_xgid_match_longer_than_64_points_is_refused():
    """gnubg's longest match is 64 points (MAXSCORE); gnubg could not take such an XGID's Match ID."""
    with pytest.raises(ValueError, match=r"'match length' is 65, longer than 64"):
        from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:65:10")
    assert from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:64:10")[1].match_length == 64


@FUZZ
@given(st.text(max_size=60) | mutations([START_XGID] + [x for x, _ in GNUBG_XGID_VECTORS]))
def test_xgid_parser_raises_only_value_errors(text):
    """Fuzz: random and mutated XGIDs either decode or raise ValueError."""
    only_value_errors(from_xgid, text)


# --------------------------------------------------------------------------
# Reading written plays
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("me", "opp", "dice", "text", "expected"),
    [
        # 24/18 13/11*: opening-like, a blot on the mover's 11-point.
        (
            {24: 2, 13: 5, 8: 3, 6: 5},
            {14: 1, 13: 4, 8: 3, 6: 5, 24: 2},
            (6, 2),
            "24/18 13/11*",
            "24/18 13/11*",
        ),
        (
            {24: 2, 13: 5, 8: 3, 6: 5},
            {14: 1, 13: 4, 8: 3, 6: 5, 24: 2},
            (6, 2),
            "24/18 13/11",
            "24/18 13/11*",
        ),
        ({25: 1, 13: 5, 8: 3, 6: 6}, {24: 2, 13: 5, 8: 3, 6: 5}, (3, 1), "bar/22 6/5", "bar/22 6/5"),
        ({25: 1, 13: 5, 8: 3, 6: 6}, {24: 2, 13: 5, 8: 3, 6: 5}, (3, 1), "25/22 6/5", "bar/22 6/5"),
        ({25: 1, 13: 5, 8: 3, 6: 6}, {24: 2, 13: 5, 8: 3, 6: 5}, (3, 1), "Bar/22 6/5", "bar/22 6/5"),
        ({6: 3, 5: 2}, {24: 2}, (6, 5), "6/off 5/off", "6/off 5/off"),
        ({6: 3, 5: 2}, {24: 2}, (6, 5), "6/Off 5/OFF", "6/off 5/off"),
        ({6: 3, 5: 2}, {24: 2}, (6, 5), "6/0 5/0", "6/off 5/off"),
        ({13: 5, 8: 3, 6: 5}, {24: 2}, (6, 6), "8/2(2) 13/7(2)", "13/7(2) 8/2(2)"),
        ({13: 5, 8: 3, 6: 5}, {24: 2}, (6, 6), "8/2 8/2 13/7 13/7", "13/7(2) 8/2(2)"),
        ({13: 5, 8: 3, 6: 5}, {18: 1, 24: 1}, (6, 2), "13/7*/5", "13/7*/5"),
        ({13: 5, 8: 3, 6: 5}, {18: 1, 24: 1}, (6, 2), "13/7 7/5", "13/7*/5"),
        ({13: 5, 8: 3, 6: 5}, {18: 1, 24: 1}, (6, 2), "13/7*/5, ", "13/7*/5"),
    ],
)
def test_parse_play_reads_the_usual_forms(me, opp, dice, text, expected):
    """The forms the issue lists, in either case, with or without '*', bar as 25, off as 0."""
    board = pos(me=me, opp=opp)
    after = parse_play(board, text, dice)
    assert after.dtype == np.int8 and after.shape == (26,)
    assert any((after == play).all() for play in legal_plays(board, dice))
    assert play_notation(board, after, dice) == expected


def test_parse_play_reads_back_every_legal_play_of_random_positions():
    """Each legal play, written by play_notation, reads back to itself, under each rule variant."""
    rng = np.random.default_rng(8)
    checked = 0
    for rules in (Rules(), Rules(no_hit_and_continue="000"), Rules(no_hit_and_continue="002")):
        while checked < 400 * (1 + ["None", "000", "002"].index(str(rules.no_hit_and_continue))):
            board = random_board(rng)
            if game_result(board):
                continue
            dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
            for play in legal_plays(board, dice, rules):
                assert (parse_play(board, play_notation(board, play, dice), dice, rules) == play).all()
                checked += 1


def test_a_roll_that_cannot_be_played_is_a_dash():
    """RULES.md 3.4: if nothing is legal the turn is lost; '-' is that (empty) play."""
    board = pos(me={25: 1, 6: 14}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})
    assert (parse_play(board, "-", (6, 6)) == board).all()
    with pytest.raises(ValueError, match="'-' \\(no move\\) is not legal"):
        parse_play(starting_board(), "-", (3, 1))


def test_unmarked_intermediate_landings_do_not_hit_when_a_quiet_route_exists():
    """gnubg marks intermediate hits (24/20*/18); so 24/18 with 4-2 past a blot on 20 goes via 22.

    mover: 24:1 and 14 on its 6-point; opponent blot on the mover's 20-point.
    """
    board = pos(me={24: 1, 6: 14}, opp={5: 1, 13: 14})
    quiet = parse_play(board, "24/18", (4, 2))
    assert quiet[20] == -1 and quiet[0] == 0
    hit = parse_play(board, "24/20*/18", (4, 2))
    assert hit[20] == 0 and hit[0] == -1


def test_an_ambiguous_play_asks_for_the_hit_to_be_marked():
    """Blots on both the mover's 22 and 20: 24/18 with 4-2 must hit one of them; say which."""
    board = pos(me={24: 1, 6: 14}, opp={5: 1, 3: 1, 13: 13})
    with pytest.raises(ValueError, match=r"ambiguous.*24/22\*/18.*24/20\*/18"):
        parse_play(board, "24/18", (4, 2))
    assert parse_play(board, "24/22*/18", (4, 2))[22] == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("24/18 13", "move '13' needs a source and a destination"),
        ("24/x8", "'x8' is not a point"),
        ("24/26", "point 26 is outside"),
        ("off/20", "'off' can only be where a checker ends"),
        ("24/bar", "the bar can only be where a checker starts"),
        ("18/24", "does not move forward"),
        ("24*/18", "not its source"),
        ("8/2(5)", "repeat count \\(5\\)"),
        ("8/2(x)", "repeat count \\(x\\)"),
        ("24/23 24/23 13/12 13/12 6/5", "at most 4"),
        ("", "empty"),
    ],
)
def test_malformed_plays_name_the_token(text, message):
    with pytest.raises(ValueError, match=message):
        parse_play(starting_board(), text, (6, 1))


@pytest.mark.parametrize(
    ("me", "opp", "dice", "text", "message"),
    [
        (
            {24: 2, 13: 5, 8: 3, 6: 5},
            {24: 2, 13: 5, 8: 3, 6: 5},
            (6, 5),
            "24/20 13/8",
            "24/20 moves 4 pips.*5, 6, 11",
        ),
        (
            {24: 2, 13: 5, 8: 3, 6: 5},
            {24: 2, 13: 5, 8: 3, 6: 5},
            (3, 1),
            "10/7 8/7",
            "point 10 holds no checker",
        ),
        ({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5}, (3, 1), "13/10 13/12", "point 12 is closed"),
        (
            {24: 2, 13: 5, 8: 3, 6: 5},
            {24: 2, 13: 5, 8: 3, 6: 5},
            (3, 1),
            "bar/22 8/7",
            "no checker on the bar",
        ),
        (
            {25: 1, 13: 5, 8: 3, 6: 6},
            {24: 2, 13: 5, 8: 3, 6: 5},
            (3, 1),
            "8/5 6/5",
            "on the bar: they must enter",
        ),
        ({13: 2, 6: 13}, {24: 2}, (6, 5), "6/off 6/1", "cannot bear off until all"),
        ({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5}, (3, 1), "13/10*", "no opposing blot"),
        # issue 15: "the moves together need other dice" before; 24/18 itself is open with 6-6
        (
            {24: 2, 13: 5, 8: 3, 6: 5},
            {24: 2, 13: 5, 8: 3, 6: 5},
            (6, 6),
            "24/18(3)",
            r"you have only 2 checkers on the 24-point, but '24/18\(3\)' moves 3 from it",
        ),
        (
            {24: 2, 13: 5, 8: 3, 6: 5},
            {24: 2, 13: 5, 8: 3, 6: 5},
            (6, 6),
            "24/18 24/18 24/18 13/7",
            "you have only 2 checkers on the 24-point, but .* moves 3 from it",
        ),
        ({8: 1, 6: 5}, {24: 2}, (2, 2), "8/6(2)", "you have only 1 checker on the 8-point"),
        ({25: 2, 6: 5}, {24: 2}, (5, 5), "bar/20(3)", "you have only 2 checkers on the bar, but 'bar/20"),
    ],
)
def test_plays_impossible_with_the_dice_say_why(me, opp, dice, text, message):
    with pytest.raises(ValueError, match=message):
        parse_play(pos(me=me, opp=opp), text, dice)


def test_play_notation_of_an_unchanged_board_is_refused_when_the_roll_can_be_played():
    """Issue 15: play_notation(board, board, dice) gave '-' for a roll with legal moves. '-' is the play of
    a roll that cannot be played (RULES.md 3.4: otherwise at least one die must be); the unchanged board is
    then no play of the roll, as parse_play('-') already said."""
    with pytest.raises(
        ValueError, match=r"the afterstate is the board itself \(no move\), but 3-1 can be played"
    ):
        play_notation(starting_board(), starting_board(), (3, 1))
    with pytest.raises(ValueError, match="'-' .* is not legal"):
        parse_play(starting_board(), "-", (3, 1))
    # closed out: a checker on the bar against a closed board cannot enter with 6-5; '-' both ways
    shut_out = pos(me={25: 1, 13: 14}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})
    assert play_notation(shut_out, shut_out, (6, 5)) == "-"
    assert (parse_play(shut_out, "-", (6, 5)) == shut_out).all()
    # the opponent's 6-point open: 1-1 cannot enter (its 1-point is closed), 6-1 can, with the 6
    one_open = pos(me={25: 1, 13: 14}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2})
    assert play_notation(one_open, one_open, (1, 1)) == "-"
    with pytest.raises(ValueError, match=r"6-1 can be played here \(a 6 moves\)"):
        play_notation(one_open, one_open, (6, 1))


def test_a_play_that_leaves_a_die_unused_says_both_dice_must_be_played():
    """RULES.md 3.4: both dice must be played if any sequence allows it (13/7 alone with 6-1 is not a play)."""
    with pytest.raises(ValueError, match=r"plays 1 die but 2 can be played.*as many dice as possible"):
        parse_play(starting_board(), "13/7", (6, 1))


def test_a_play_of_the_smaller_die_says_the_larger_must_be_played():
    """RULES.md 3.4: either die could be played but not both, so the larger (6) must be.

    mover: one checker on its 10-point; opponent: two on the mover's 1-point.
    6-3: 10/4 then 3 blocked (4/1); 10/7 then 6 blocked (7/1).
    """
    board = pos(me={10: 1}, opp={24: 2})
    with pytest.raises(ValueError, match=r"only one die can be played.*larger one \(6\)"):
        parse_play(board, "10/7", (6, 3))
    assert parse_play(board, "10/4", (6, 3))[4] == 1


def test_a_play_against_the_iranian_rule_says_so():
    """RULES.md 7, worked case: with 2-1 the 000 form excludes 7/5*/4; 7/5* 6/5 stays legal."""
    board = pos(me={24: 2, 13: 5, 8: 1, 7: 2, 6: 3, 3: 2}, opp={24: 2, 20: 1, 13: 5, 8: 3, 6: 4})
    iranian = Rules(no_hit_and_continue="000")
    with pytest.raises(ValueError, match="no-hit-and-continue"):
        parse_play(board, "7/5*/4", (2, 1), iranian)
    assert parse_play(board, "7/5*/4", (2, 1))[5] == 0  # standard rules: fine
    assert parse_play(board, "7/4", (2, 1), iranian)[5] == -1  # read as 7/6/4, which is legal
    assert parse_play(board, "7/5* 6/5", (2, 1), iranian)[5] == 2


def test_bearing_off_from_below_a_higher_checker_names_the_bear_off_rule():
    """RULES.md 5: a die bears off from the point of its number, or, if no checker stands higher, from the
    highest point. mover 6:1 3:2 with 6-5: the 6 bears off from the 6-point (exact) and the 5, with a checker
    on the 6-point, cannot bear off from the 3-point; so 3/off 3/off is impossible because of that rule, not
    because of a closed point (no opposing checker is anywhere near)."""
    board = pos(me={6: 1, 3: 2}, opp={24: 2})
    with pytest.raises(ValueError) as info:
        parse_play(board, "3/off 3/off", (6, 5))
    message = str(info.value)
    assert "RULES.md 5" in message and "from the 3-point" in message and "on the 6-point" in message
    assert "closed" not in message
    # Once the 6 has borne off the checker on the 6-point, the 5 bears off from the 3-point (highest).
    assert parse_play(board, "6/off 3/off", (6, 5))[3] == 1


def test_bearing_off_with_a_checker_outside_names_the_all_home_rule():
    """RULES.md 5: bearing off needs every checker home. mover 13:2 6:13 with 6-5: 6/off is impossible
    while two checkers stand on the 13-point."""
    with pytest.raises(ValueError, match=r"cannot bear off until all your checkers.*RULES.md 5.*13-point"):
        parse_play(pos(me={13: 2, 6: 13}, opp={24: 2}), "6/off", (6, 5))


def test_a_checker_that_comes_home_and_bears_off_is_not_blamed_on_the_home_rule():
    """RULES.md 5: mover 8:1 5:2 with 6-2: 8/2 brings the last checker home, then the 2 bears it off, so
    8/off is legal; 8/off 5/3 needs three dice, which is what the message says (not "bear off too early")."""
    board = pos(me={8: 1, 5: 2}, opp={24: 2})
    after = parse_play(board, "8/off", (6, 2))
    assert after[8] == 0 and after[5] == 2
    with pytest.raises(ValueError, match="need other dice") as info:
        parse_play(board, "8/off 5/3", (6, 2))
    assert "home board" not in str(info.value)


def test_a_move_blocked_on_every_route_names_the_closed_points():
    """RULES.md 3.2: every landing point must be open. 13/6 with 4-3 lands on 9 or on 10, both closed here
    (12 is closed too but no route lands there, so it is not named)."""
    board = pos(me={13: 5, 8: 3, 6: 5}, opp={24: 2, 16: 2, 15: 2, 13: 2})
    with pytest.raises(ValueError, match=r"13/6 .* closed point \(10, 9\) \(docs/RULES.md 3.2\)"):
        parse_play(board, "13/6", (4, 3))


def test_bearing_off_the_last_checker_uses_every_die():
    """RULES.md 3.6: 6/off with 6-5 and a lone checker on the 6-point ends the game; the 5 is not owed."""
    board = pos(me={6: 1}, opp={24: 2})
    assert game_result(parse_play(board, "6/off", (6, 5))) == 1  # the opponent has borne off 13


@FUZZ
@given(
    st.text(max_size=30)
    | st.lists(
        st.sampled_from(["24", "13", "8", "6", "bar", "off", "/", "*", "(2)", " ", "25", "0", "7"]),
        max_size=12,
    ).map("".join),
    st.tuples(st.integers(1, 6), st.integers(1, 6)),
)
def test_parse_play_raises_only_value_errors(text, dice):
    """Fuzz: any text either reads as a legal play or raises ValueError."""
    only_value_errors(lambda t: parse_play(starting_board(), t, dice), text)


# --------------------------------------------------------------------------
# .mat match records
# --------------------------------------------------------------------------

SAMPLE = (DATA / "match_3pt.mat").read_text()


def test_sample_match_reads_with_its_games_scores_and_cube_actions():
    """tests/data/match_3pt.mat: alice v bob to 3; bob wins game 1 on a dropped redouble (0-2), alice wins
    the Crawford game 2 by bearing off (1-2), and game 3 on a resignation with a 2-cube (3-2)."""
    match = read_mat(SAMPLE)
    assert match.length == 3 and match.players == ("alice", "bob")
    assert match.comments[0] == '[Site "nard_ai tests"]'
    assert [g.score for g in match.games] == [(0, 0), (0, 2), (1, 2)]
    assert [g.crawford for g in match.games] == [False, True, False]
    assert [(g.winner, g.points) for g in match.games] == [(1, 2), (0, 1), (0, 2)]
    first = match.games[0]
    kinds = [(a.player, a.kind) for a in first.actions if a.kind != ActionKind.ROLL]
    assert kinds == [
        (0, ActionKind.DOUBLE),
        (1, ActionKind.TAKE),
        (1, ActionKind.DOUBLE),
        (0, ActionKind.DROP),
        (1, ActionKind.WIN),
    ]
    assert [a.cube_value for a in first.actions if a.kind == ActionKind.DOUBLE] == [2, 4]
    opening = first.actions[0]
    assert opening.player == 1 and opening.dice == (3, 4) and opening.play == "24/21 24/20"
    assert (opening.board == starting_board()).all()
    # Game 2 ends with alice bearing off her last checker.
    last_roll = match.games[1].actions[-2]
    assert last_roll.kind == ActionKind.ROLL and game_result(last_roll.afterstate) == 1


def test_sample_match_records_carry_the_position_and_match_state_of_each_decision():
    """Each record's board and MatchState give the gnubg ID of the decision (board from player_on_roll)."""
    match = read_mat(SAMPLE)
    take = next(a for a in match.games[0].actions if a.kind == ActionKind.TAKE)
    assert take.state.double_offered and take.state.player_on_roll == 0 and take.state.turn == 1
    assert take.state.cube_value == 1 and take.state.cube_owner == CENTERED
    board, state = parse_gnubg_id(gnubg_id(take.board, take.state))
    assert (board == take.board).all() and state == take.state
    redouble = [a for a in match.games[0].actions if a.kind == ActionKind.DOUBLE][1]
    assert redouble.state.cube_value == 2 and redouble.state.cube_owner == 1 and redouble.player == 1
    for game in match.games:
        for action in game.actions:
            if action.kind == ActionKind.ROLL:
                assert action.state.dice == tuple(sorted(action.dice, reverse=True))
                assert action.state.player_on_roll == action.player
                assert action.state.crawford == game.crawford


def test_sample_match_round_trips_read_write_read():
    """write_mat writes gnubg's layout: the sample (written that way) comes back character for character."""
    match = read_mat(SAMPLE)
    assert write_mat(match) == SAMPLE
    assert read_mat(write_mat(match)) == match


def _variant(text: str) -> str:
    """The sample as other programs write it: no header, no stars, bar as 25, off as 0, repeats
    spelled out, 'Passes', 'and the match', CRLF line ends, extra blank lines, a Crawford marker."""
    text = "\ufeff" + text.split("\n\n", 1)[1]  # drop the comment header (and start with a BOM)
    text = text.replace("*", "").replace("bar/", "25/").replace("/off", "/0").replace("Drops", "Passes")
    text = re.sub(r"(\S+)\((\d)\)", lambda m: " ".join([m.group(1)] * int(m.group(2))), text)
    text = text.replace(" Game 2\n", "\n Game 2\n Crawford game\n")
    text = text.rstrip("\n").replace("Wins 2 points", "Wins 2 points and the match", 1)
    return text.replace("\n", "\r\n") + "\r\n\r\n"


def test_common_variants_of_the_format_read_to_the_same_match():
    """gnubg's importer tolerates them all: header comments, markers, blank lines, spellings."""
    original = read_mat(SAMPLE)
    variant = read_mat(_variant(SAMPLE))
    assert variant.games == original.games and variant.players == original.players
    assert variant.comments == () and variant.length == 3


def test_a_crawford_marker_alone_makes_the_crawford_game():
    """A 'Crawford' marker on the score line is honoured (here it agrees with the scores)."""
    text = SAMPLE.replace(
        " alice : 0                      bob : 2", " alice : 0                      bob : 2 (Crawford)"
    )
    assert text != SAMPLE
    match = read_mat(text)
    assert match.players == ("alice", "bob") and match.games[1].crawford


def _random_game(rng: np.random.Generator, score: tuple[int, int]) -> MatGame:
    """A complete game of random legal plays, opening roll by RULES.md 2, to the last checker."""
    while True:
        a, b = (int(x) for x in rng.integers(1, 7, size=2))
        if a != b:
            break
    player = 0 if a > b else 1
    dice, board, actions = (a, b), starting_board(), []
    while True:
        plays = legal_plays(board, dice)
        after = plays[int(rng.integers(len(plays)))]
        actions.append(MatAction(player, ActionKind.ROLL, dice=dice, afterstate=after))
        result = game_result(after)
        if result:
            actions.append(MatAction(player, ActionKind.WIN, points=abs(result)))
            return MatGame(score=score, actions=tuple(actions))
        board, player = swap_sides(after), 1 - player
        dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))


def test_complete_random_games_round_trip_through_write_and_read():
    """A money session of whole games (bear-offs, gammons, dancing rolls) is written and read back equal."""
    rng = np.random.default_rng(9)
    games, score = [], [0, 0]
    for _ in range(3):
        game = _random_game(rng, (score[0], score[1]))
        games.append(game)
        score[game.winner] += game.points
    match = Match(length=0, players=("White Player", "Black"), games=tuple(games))
    text = write_mat(match)
    back = read_mat(text)
    assert back.games == match.games and back.players == match.players and back.length == 0
    assert write_mat(back) == text


def _sample_with(old: str, new: str, count: int = 1) -> str:
    assert SAMPLE.count(old) >= count, old
    return SAMPLE.replace(old, new, count)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no 'N point match'"),
        (" 3 point match\n", "no games"),
        ("hello\n 3 point match\n", "line 1: expected 'N point match'"),
        (
            _sample_with(
                "  1)                             34: 24/21 24/20",
                "  1)                             34: 24/20 24/20",
            ),
            "line 13: .*bob.*rolls 34",
        ),
        (
            _sample_with(
                "  1)                             34: 24/21 24/20",
                "  1)                             34: 24/21",
            ),
            "line 13: .*plays 1 die",
        ),
        (
            _sample_with(
                "  3)  Doubles => 2                Takes", "  3)  Doubles => 4                Takes"
            ),
            "line 15: .*doubles to 4.*cube is on 1",
        ),
        (
            _sample_with(
                "  3)  Doubles => 2                Takes", "  3)  Doubles => 2                Beavers"
            ),
            "line 15: .*beavers",
        ),
        (
            _sample_with(
                "  7)  Drops                       Wins 2 points",
                "  7)  Drops                       Wins 4 points",
            ),
            "line 19: .*wins 4",
        ),
        (
            _sample_with(
                " alice : 1                      bob : 2", " alice : 2                      bob : 2"
            ),
            r"line 50: game 3 starts at 2-2 \(alice 2, bob 2\), but game 2 ended at 1-2",
        ),
        (
            _sample_with(
                "  1) 65: 24/13                   11: 24/23(2) 6/5(2)",
                "  1) 65: 24/13                   Doubles => 2",
            ),
            "Crawford game: nobody may double",
        ),
        (
            _sample_with(
                "  1) 42: 8/4 6/4                 43: 24/20 13/10", "  1) 42: 8/4 6/4                 Takes"
            ),
            "no double was offered",
        ),
        (
            _sample_with("  3)  Doubles => 2                Takes", "  3)  Hello there"),
            "line 15: unrecognised",
        ),
        (_sample_with(" Game 2\n", " Game 5\n"), "game 5 should be game 2"),
        (_sample_with(" alice : 0                      bob : 2\n", " alice 0 bob 2\n"), "score line"),
        (_sample_with(" 3 point match", " 2 point match"), "match to 2 is already over"),
    ],
)
def test_broken_match_records_raise_value_error_naming_the_line(text, message):
    """Replaying each game catches records against the rules; malformed lines are named."""
    with pytest.raises(ValueError, match=message):
        read_mat(text)


def test_a_roll_left_unplayed_is_a_resignation_only_when_a_win_follows():
    """gnubg reads 'dd:' with legal moves as a roll after which the player resigned."""
    text = " 1 point match\n\n Game 1\n a : 0      b : 0\n  1) 31:\n                                  Wins 1 point\n"
    match = read_mat(text)
    assert match.games[0].actions[0].afterstate is None and match.games[0].winner == 1
    with pytest.raises(ValueError, match="can be played"):
        read_mat(text.replace("                                  Wins 1 point\n", ""))


def test_write_mat_refuses_an_illegal_play_and_unwritable_names():
    board = starting_board()
    bad = legal_plays(board, (6, 5))[0].copy()
    bad[24] -= 1  # a checker vanishes: no dice make this
    game = MatGame((0, 0), (MatAction(0, ActionKind.ROLL, dice=(6, 5), afterstate=bad),))
    with pytest.raises(ValueError, match="rolls 65"):
        write_mat(Match(length=0, players=("a", "b"), games=(game,)))
    with pytest.raises(ValueError, match="name"):
        write_mat(Match(length=0, players=("a:b", "c"), games=()))


def _gnubg_score_line(names: tuple[str, str], score: tuple[int, int]) -> str:
    """A score line as gnubg's ExportGameJF prints it: " %-31s%s : %d" with "%s : %d" on the left."""
    left = f"{names[0]} : {score[0]}"
    return f" {left:<31}{names[1]} : {score[1]}"


def test_gnubg_export_with_long_names_reads():
    """tests/data/gnubg_long_names.mat is gnubg 1.07's own export (`export match mat`) of a 3-point match
    played by gnubg against itself, with the names set to 31 a's and "7up": gnubg writes the score lines
    with the halves touching (" aaa…a : 07up : 0", then "17up", "27up"). Player 0 won 1 + 1 + 2."""
    match = read_mat((DATA / "gnubg_long_names.mat").read_bytes())
    assert match.players == ("a" * 31, "7up")
    assert [g.score for g in match.games] == [(0, 0), (1, 0), (2, 0)]
    assert [(g.winner, g.points) for g in match.games] == [(0, 1), (0, 1), (0, 2)]
    assert [g.crawford for g in match.games] == [False, False, True]  # 2-0 in a 3-point match


@pytest.mark.parametrize(
    "names",
    [
        ("a" * 27, "b"),  # the shortest first name whose score line gnubg writes merged: " aaa… : 0b : 0"
        ("a" * 31, "7up"),  # a second name starting with a digit
        ("Anna-Katharina Schmidt-Rottluff", "bob"),
        ("x" * 60, "y" * 60),
    ],
)
def test_long_names_round_trip_and_gnubgs_merged_score_lines_read(names):
    """write_mat then read_mat gives the match back (the promise of write_mat), and the same record with
    gnubg's merged score lines (no space between the halves) reads to the same match."""
    match = replace(read_mat(SAMPLE), players=names)
    text = write_mat(match)
    back = read_mat(text)
    assert back == match and write_mat(back) == text
    merged = text
    for game in match.games:
        ours = [line for line in text.splitlines() if line.startswith(f" {names[0]} : {game.score[0]}")][0]
        merged = merged.replace(ours, _gnubg_score_line(names, game.score))
    if len(f"{names[0]} : 0") >= 31:
        assert merged != text and f" : 0{names[1]} : 0" in merged  # gnubg's layout differs here
    assert read_mat(merged) == match


def test_write_mat_separates_the_halves_of_the_score_line():
    """gnubg pads the left half to 31 characters; write_mat does the same and adds one space when the left
    half is longer, which gnubg 1.07's importer needs to read the second name ("b", not ": 0")."""
    match = replace(read_mat(SAMPLE), players=("a" * 27, "b"))
    assert " aaaaaaaaaaaaaaaaaaaaaaaaaaa : 0 b : 0\n" in write_mat(match)
    assert " alice : 0                      bob : 0\n" in write_mat(read_mat(SAMPLE))  # gnubg's own layout


def test_latin1_and_utf8_files_both_read():
    """gnubg 1.07 writes UTF-8; older exports (Windows programs) wrote Latin-1/Windows-1252, where "Müller"
    is M\\xfcller, which is not UTF-8. Both read to the same names; a UTF-8 byte order mark is dropped."""
    text = SAMPLE.replace("alice", "Müller").replace("bob", "François")
    latin1 = text.encode("latin-1")
    with pytest.raises(UnicodeDecodeError):
        latin1.decode("utf-8")
    for data in (latin1, text.encode("cp1252"), text.encode("utf-8"), b"\xef\xbb\xbf" + text.encode("utf-8")):
        match = read_mat(data)
        assert match.players == ("Müller", "François") and len(match.games) == 3
    assert decode_mat("Œuvre €".encode("cp1252")) == "Œuvre €"  # Windows-1252 letters outside Latin-1


def test_a_binary_file_is_not_a_text_mat_record():
    """Bytes with control characters no text file holds (a pickle, weights) are refused by name."""
    with pytest.raises(ValueError, match=r"not a text .mat record \(control character 0x02 on line 1"):
        read_mat(b"\x80\x02\xff\xfe" * 10)
    with pytest.raises(ValueError, match="not a text .mat record"):
        decode_mat(b" 3 point match\n\x00\x00")


def test_a_wrong_score_line_is_reported_as_such_before_the_game_is_replayed():
    """Game 1 of the sample ends with bob winning 2 (a dropped redouble from 2), so game 2 starts at 0-2.
    Writing bob : 1 instead made gnubg's Crawford rule (RULES.md 8) fall on game 3 and the error read "game 3
    is the Crawford game"; the score line itself must be named, with both scores."""
    text = _sample_with(" alice : 0                      bob : 2", " alice : 0                      bob : 1")
    with pytest.raises(ValueError) as info:
        read_mat(text)
    message = str(info.value)
    assert message.startswith("line 22: game 2 starts at 0-1 (alice 0, bob 1), but game 1 ended at 0-2")
    assert "bob (player 1) won 2 points" in message and "Crawford" not in message


def test_a_match_longer_than_gnubgs_limit_is_refused_on_reading_and_writing():
    """gnubg plays matches of at most 64 points (MAXSCORE); a 99-point match cannot become a Match ID."""
    with pytest.raises(ValueError, match=r"line 9: a 99-point match is longer than 64"):
        read_mat(_sample_with(" 3 point match", " 99 point match"))
    with pytest.raises(ValueError, match=r"match length must be an integer 0 \(money\) to 64"):
        write_mat(Match(length=65, players=("a", "b"), games=()))
    assert read_mat(_sample_with(" 3 point match", " 64 point match")).length == 64


_SAMPLE_LINES = SAMPLE.splitlines()


@st.composite
def mutated_records(draw) -> str:
    lines = list(_SAMPLE_LINES)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["char", "drop", "dup", "swap"]))
        if op == "char" and lines[i]:
            j = draw(st.integers(0, len(lines[i]) - 1))
            ch = draw(st.sampled_from(list("0123456789/*:() abDTWx")) | st.characters(codec="utf-8"))
            lines[i] = lines[i][:j] + ch + lines[i][j + 1 :]
        elif op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        else:
            k = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[k] = lines[k], lines[i]
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80) | mutated_records() | st.binary(max_size=80) | mutated_records().map(str.encode))
def test_mat_reader_raises_only_value_errors(text):
    """Fuzz: random text or bytes, and mutated copies of the sample, either read or raise ValueError."""
    only_value_errors(read_mat, text)


# --- issue 15 follow-up: nothing of a game in progress when there is no game (game_state NONE)


def _match_id_with_game_state(state: MatchState, game_state: int) -> str:
    """``state``'s Match ID with the game state bits 8-10 (the manual's layout) set to ``game_state``."""
    key = int.from_bytes(match_key(state), "little")
    key = (key & ~(0b111 << 8)) | (game_state << 8)
    # as match_id() writes a key: its bytes read big-endian, 12 base64 characters
    return encode_base64(int.from_bytes(key.to_bytes(9, "little"), "big"), 12)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"resignation": Resignation.SINGLE}, "resignation is SINGLE with game_state NONE"),
        ({"resignation": Resignation.GAMMON}, "resignation is GAMMON with game_state NONE"),
        ({"resignation": Resignation.BACKGAMMON}, "resignation is BACKGAMMON with game_state NONE"),
        ({"double_offered": True}, "double_offered is set with game_state NONE"),
        ({"cube_value": 2, "cube_owner": 0}, "cube_value is 2 with cube_owner 0 and game_state NONE"),
        ({"cube_value": 4}, "cube_value is 4 with cube_owner -1 and game_state NONE"),  # money, centred
        ({"turn": 0, "player_on_roll": 1}, "turn is 0 and player_on_roll 1 with game_state NONE"),
        ({"dice": (3, 1)}, "dice are 3-1 with game_state NONE"),
    ],
)
def test_no_game_refuses_every_field_of_a_game_in_progress(fields, message):
    # the same fields with a game being played are a state gnubg writes (the control)
    playing = {"resignation": Resignation.NONE, "turn": 1, "player_on_roll": 1, **fields}
    if playing["resignation"] != Resignation.NONE or fields.get("double_offered"):
        playing["turn"] = 0  # the resigner's or doubler's opponent answers
    if "turn" in fields:
        playing["resignation"] = (
            Resignation.SINGLE
        )  # turn differs from the mover only with a question pending
    alive = MatchState(game_state=GameStatus.PLAYING, **playing)
    with pytest.raises(ValueError, match=re.escape(message)):
        MatchState(game_state=GameStatus.NONE, **fields)
    # and from a Match ID: the playing state's ID with the game state bits cleared
    mid = _match_id_with_game_state(alive, int(GameStatus.NONE))
    with pytest.raises(ValueError, match=f"Match ID {mid!r}: .*game_state NONE"):
        from_match_id(mid)


def test_the_reviewers_resignation_with_no_game_is_refused():
    # MCAAAAAAAAAA: bits 13-14 = 1 (a single game resigned), game state bits 8-10 = 0 (no game)
    with pytest.raises(
        ValueError, match=r"Match ID 'MCAAAAAAAAAA': resignation is SINGLE with game_state NONE"
    ):
        from_match_id("MCAAAAAAAAAA")


# --- issue 15 follow-up: a centred money cube above 1 (automatic doubles) is one rule everywhere


def test_a_centred_money_cube_of_2_is_read_written_and_round_tripped():
    # MQEAAAAAAAAA: cube bits 0-3 = 1 (a 2-cube), owner bits 4-5 = 3 (centred), money, game playing;
    # gnubg writes it after an automatic double (its Match ID holds a centred cube of any value)
    board, state = parse_gnubg_id("4HPwATDgc/ABMA:MQEAAAAAAAAA")
    assert (state.cube_value, state.cube_owner, state.match_length) == (2, CENTERED, 0)
    xgid = to_xgid(board, state)
    # XGID: field 'cube' is log2 of the cube (1), field 'cube owner' 0 = centred; Jacoby on -> flags 1
    assert xgid == "XGID=-b----E-C---eE---c-e----B-:1:0:-1:00:0:0:1:0:10"
    back_board, back_state = from_xgid(xgid)
    np.testing.assert_array_equal(back_board, board)
    assert back_state == state
    assert match_id(back_state) == "MQEAAAAAAAAA"


def test_a_centred_cube_above_1_in_match_play_is_refused_the_same_way_in_both_formats():
    with pytest.raises(ValueError, match=r"cube_value is 2 with the cube centred .* in a 5-point match"):
        MatchState(cube_value=2, match_length=5)
    with pytest.raises(ValueError, match=r"field 'cube' 1\) in a 5-point match \(field 'match length'\)"):
        from_xgid("XGID=-b----E-C---eE---c-e----B-:1:0:1:00:0:0:0:5:10")


def test_nard_show_prints_the_xgid_of_a_centred_money_2_cube():
    # the reviewer's case: `nard show` printed "Cube 2, centred" and dropped the XGID line
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "nard_ai.interfaces.cli", "show", "4HPwATDgc/ABMA:MQEAAAAAAAAA"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert " XGID=-b----E-C---eE---c-e----B-:1:0:-1:00:0:0:1:0:10" in out
    assert "Cube 2, centred" in out


@pytest.mark.parametrize(
    "xgid",
    [
        "XGID=-b----E-C---eE---c-e----B-:1:0:1:00:0:0:0:0:10",
        "XGID=-b----E-C---eE---c-e----B-:2:0:1:52:0:0:0:0:10",
    ],
)
def test_gnubgs_importer_reads_a_centred_money_cube_above_1_as_we_do(xgid):
    # gnubg's set_gnubg_id takes these XGIDs (a centred 2- and 4-cube, money) and gives
    # 4HPwATDgc/ABMA:cQkAAAAAAAAE and 4HPwATDgc/ABMA:cokKAAAAAAAE (checked live with the gnubg module)
    gnubg = pytest.importorskip("gnubg")
    gnubg.set_gnubg_id(xgid)
    assert gnubg.gnubg_id() == gnubg_id(*from_xgid(xgid))


def test_a_double_waiting_with_the_doubler_to_act_is_refused():
    # MBGgAAAAAAAA: double offered by player 0, turn 0 (found by a review of issue 15). gnubg's
    # Match ID gives the turn to the player who must act; while a double waits that is the doubled
    # player (player_on_roll's opponent), unless a resignation came instead (turn back to the doubler)
    with pytest.raises(ValueError, match="turn 0, the doubler"):
        from_match_id("MBGgAAAAAAAA")
    with pytest.raises(
        ValueError, match="turn 1, the doubler"
    ):  # the state itself (defaults: seat 1 on roll)
        MatchState(double_offered=True)
    ok = MatchState(double_offered=True, game_state=GameStatus.PLAYING, player_on_roll=0, turn=1)
    assert from_match_id(match_id(ok)).double_offered
