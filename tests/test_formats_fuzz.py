"""Bounded fuzzing of every text parser: Position IDs, Match IDs, combined gnubg IDs, XGIDs and ``.mat`` records.

Issue 15 ("nothing breaks"): malformed text must give a ``ValueError``,
never another exception, a hang or a silently wrong answer; text that is
accepted must give the same thing back when it is written and read again.
Each test is a seeded loop (the same cases on every run), small enough for
CI: tens of thousands of strings in all, each test a few seconds.

The cases are seeded mutations of valid text (characters replaced, inserted,
deleted or swapped, from the format's own alphabet, its separators, or any
code point, lone surrogates included), random strings of the right length
(for the base64 IDs: random keys, so that every field value is tried), and
random strings of any length.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_board

from nard_ai.formats import (
    board_from_position_id,
    from_match_id,
    from_xgid,
    match_id,
    position_id,
    read_mat,
    to_xgid,
    write_mat,
)
from nard_ai.formats.match_id import GameStatus, MatchState, Resignation
from nard_ai.formats.position import parse_position
from tests.test_formats_match import random_state

BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
XGID_CHARS = "-ABCDEFGHIJKLMNOPabcdefghijklmnop0123456789:=XGIDxgidBRD+ "
MAT_CHARS = "0123456789:/*()-; \n\tabcdefghijklmnopqrstuvwxyzGameDoublesTakesDropsWinspointmatch=>off bar"


def _char(rng: np.random.Generator, alphabet: str) -> str:
    roll = rng.random()
    if roll < 0.7:
        return alphabet[int(rng.integers(len(alphabet)))]
    if roll < 0.9:
        return chr(int(rng.integers(0, 128)))
    return chr(int(rng.integers(0, 0x110000)))  # any code point, lone surrogates included


def mutate(text: str, rng: np.random.Generator, alphabet: str, edits: int = 3) -> str:
    """``text`` with 1..``edits`` characters replaced, inserted, deleted or swapped with a neighbour."""
    for _ in range(int(rng.integers(1, edits + 1))):
        i = int(rng.integers(0, len(text) + 1))
        op = int(rng.integers(4))
        if op == 0 and i < len(text):
            text = text[:i] + _char(rng, alphabet) + text[i + 1 :]
        elif op == 1:
            text = text[:i] + _char(rng, alphabet) + text[i:]
        elif op == 2 and i < len(text):
            text = text[:i] + text[i + 1 :]
        elif i + 1 < len(text):
            text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return text


def random_text(rng: np.random.Generator, alphabet: str, length: int) -> str:
    return "".join(_char(rng, alphabet) for _ in range(length))


def accepted(parse, text):
    """``parse(text)``, or ``None`` when it raises ValueError with a message; any other exception fails."""
    try:
        return parse(text)
    except ValueError as exc:
        assert str(exc), f"a ValueError must say what is wrong ({text!r})"
        return None


def xgid_state(rng: np.random.Generator) -> MatchState:
    """A random state an XGID holds: a game being played, no resignation, turn on the mover unless doubled."""
    state = random_state(rng)
    length = state.match_length
    doubled = state.double_offered and state.cube_value < 1 << 10
    return MatchState(
        cube_value=state.cube_value if state.cube_owner != -1 else 1,
        cube_owner=state.cube_owner,
        player_on_roll=state.player_on_roll,
        crawford=state.crawford,
        game_state=GameStatus.PLAYING,
        turn=1 - state.player_on_roll if doubled else state.player_on_roll,
        double_offered=doubled,
        resignation=Resignation.NONE,
        dice=state.dice,
        match_length=length,
        score=tuple(min(s, length - 1) for s in state.score) if length else state.score,
        jacoby=state.jacoby and not length,
        max_cube_log2=15,
    )


def _accepted_count(cases, check) -> int:
    """Run ``check`` on every case; returns how many were accepted (each test's cases take a few seconds)."""
    return sum(bool(check(text)) for text in cases)


def test_fuzzed_position_ids_raise_only_value_errors_and_accepted_ones_round_trip():
    """20,000 Position IDs: mutations of valid ones, random 14-character base64 (random keys) and random
    strings. Whatever is accepted is a valid board whose Position ID is the text itself (decoding is strict,
    so there is one ID per board) and decodes to the same board."""
    rng = np.random.default_rng(1501)
    valid = [position_id(random_board(rng)) for _ in range(200)]
    cases = [mutate(valid[int(rng.integers(len(valid)))], rng, BASE64) for _ in range(12000)]
    cases += [random_text(rng, BASE64, 14) for _ in range(6000)]
    cases += [random_text(rng, BASE64 + ": ", int(rng.integers(0, 30))) for _ in range(2000)]

    def check(text: str) -> bool:
        board = accepted(board_from_position_id, text)
        if board is None:
            return False
        again = position_id(board)
        assert again == text.strip(), text
        assert (board_from_position_id(again) == board).all()
        return True

    # the mutations keep many IDs valid, so the round trip is exercised
    assert _accepted_count(cases, check) > 300


def test_fuzzed_match_ids_raise_only_value_errors_and_accepted_ones_round_trip():
    """20,000 Match IDs: mutations of valid ones, random 12-character base64 (every field value, most of
    them states no game reaches) and random strings. An accepted ID re-encodes to itself, or, when it
    wrote the lower die first, to gnubg's order of the same state."""
    rng = np.random.default_rng(1502)
    valid = [match_id(random_state(rng)) for _ in range(300)]
    cases = [mutate(valid[int(rng.integers(len(valid)))], rng, BASE64) for _ in range(12000)]
    cases += [random_text(rng, BASE64, 12) for _ in range(6000)]
    cases += [random_text(rng, BASE64 + ": ", int(rng.integers(0, 30))) for _ in range(2000)]

    def check(text: str) -> bool:
        state = accepted(from_match_id, text)
        if state is None:
            return False
        again = match_id(state)
        assert from_match_id(again) == state, text
        assert state.dice[0] >= state.dice[1]  # from_match_id reads gnubg's order
        if again != text.strip():
            # the only other spelling of a state: its dice written low die first
            assert from_match_id(text).dice != (0, 0) and len(set(state.dice)) == 2, text
        return True

    assert _accepted_count(cases, check) > 500


def test_fuzzed_combined_gnubg_ids_raise_only_value_errors_and_accepted_ones_round_trip():
    """5,000 ``PositionID:MatchID`` strings through parse_position (the entry point of the CLI and the
    HTTP server): mutations of valid ones; what is accepted gives the same board and state back."""
    rng = np.random.default_rng(1503)
    valid = [f"{position_id(random_board(rng))}:{match_id(random_state(rng))}" for _ in range(200)]
    cases = [mutate(valid[int(rng.integers(len(valid)))], rng, BASE64 + ":") for _ in range(5000)]

    def check(text: str) -> bool:
        got = accepted(parse_position, text)
        if got is None:
            return False
        board, state = got
        if state is None:  # the mutation dropped the ':': a bare Position ID
            assert position_id(board) == text.strip()
            return True
        again_board, again_state = parse_position(f"{position_id(board)}:{match_id(state)}")
        assert (again_board == board).all() and again_state == state, text
        return True

    assert _accepted_count(cases, check) > 100


def test_fuzzed_xgids_raise_only_value_errors_and_accepted_ones_round_trip():
    """20,000 XGIDs: mutations of valid ones (position characters, fields, separators) and random strings.
    What is accepted writes back an XGID that reads to the same board and state, dice order included, and
    writing that again gives the same text."""
    rng = np.random.default_rng(1504)
    valid = [to_xgid(random_board(rng), xgid_state(rng)) for _ in range(300)]
    cases = [mutate(valid[int(rng.integers(len(valid)))], rng, XGID_CHARS) for _ in range(17000)]
    cases += [random_text(rng, XGID_CHARS, int(rng.integers(0, 70))) for _ in range(3000)]

    def check(text: str) -> bool:
        got = accepted(from_xgid, text)
        if got is None:
            return False
        board, state = got
        again = to_xgid(board, state)
        again_board, again_state = from_xgid(again)
        assert (again_board == board).all() and again_state == state, text
        assert to_xgid(again_board, again_state) == again
        return True

    assert _accepted_count(cases, check) > 500


MAT_SNIPPETS = [
    """ 1 point match

 Game 1
 alice : 0                      bob : 0
  1) 31: 8/5 6/5                 42: 8/4 6/4
  2) 65: 24/13                   66: 24/18(2) 13/7(2)
  3) 21: 13/11 6/5
""",
    """ 3 point match

 Game 1
 alice : 0                      bob : 0
  1) 43: 24/20 13/10              Doubles => 2
  2)  Takes                      52: 13/8 13/11
  3)  Doubles => 4                Drops
  4)  Wins 2 points
""",
    """ 0 point match

 Game 1
 a : 0                          b : 0
  1) 64: 24/14                   55: 13/3(2)
  2) 33: 13/10(2) 6/3(2)          Wins 1 point
""",
]


def test_fuzzed_mat_records_raise_only_value_errors_and_accepted_ones_round_trip():
    """1,000 short ``.mat`` records: mutations of three small valid ones (a money game, a match with cube
    actions, a resignation), character by character (up to 4 edits) or a whole line dropped or doubled.
    What is accepted writes a record that reads back to the same match and writes the same text again."""
    rng = np.random.default_rng(1505)
    for snippet in MAT_SNIPPETS:
        assert read_mat(snippet).games  # the seeds themselves are valid
    cases = []
    for _ in range(1000):
        text = MAT_SNIPPETS[int(rng.integers(len(MAT_SNIPPETS)))]
        if rng.random() < 0.25:
            lines = text.split("\n")
            k = int(rng.integers(len(lines)))
            lines[k : k + 1] = [] if rng.random() < 0.5 else [lines[k], lines[k]]
            text = "\n".join(lines)
        else:
            text = mutate(text, rng, MAT_CHARS, edits=4)
        cases.append(text)

    def check(text: str) -> bool:
        match = accepted(read_mat, text)
        if match is None:
            return False
        written = write_mat(match)
        back = read_mat(written)
        assert back == match, text
        assert write_mat(back) == written
        return True

    assert _accepted_count(cases, check) > 20


@pytest.mark.parametrize(
    "parse", [board_from_position_id, from_match_id, from_xgid, parse_position, read_mat]
)
def test_parsers_refuse_non_text_with_a_value_error(parse):
    """None, numbers, lists: a ValueError (read_mat also takes bytes), never a TypeError or AttributeError."""
    for value in (None, 14, 3.5, ["4HPwATDgc/ABMA"], object()):
        with pytest.raises(ValueError):
            parse(value)
