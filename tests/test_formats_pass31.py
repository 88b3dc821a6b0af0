"""Pass 31, an analyst moving positions between gnubg, eXtreme Gammon and nard_ai: the readers' edge cases.

Each test says what the right answer is and where it comes from.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from nard_ai.formats import from_xgid
from nard_ai.formats.mat import decode_mat, read_mat
from nard_ai.formats.tanboard import validate_tanboard

MAT = (Path(__file__).parent / "data" / "match_3pt.mat").read_text()
START = "XGID=-b----E-C---eE---c-e----B-"


def test_xgid_field_of_thousands_of_digits_is_refused_naming_the_field():
    """A field of 5000 digits was refused with Python's own words ("Exceeds the limit (4300 digits) for
    integer string conversion"), naming neither the field nor the XGID. Right: the README's "every parser
    raises ValueError naming the field and value"; the max cube field is 0-15 (xgid.py's table)."""
    with pytest.raises(
        ValueError, match=r"XGID field 'max cube' must be 0 to 15, got a number of 5000 digits"
    ):
        from_xgid(f"{START}:0:0:1:00:0:0:0:0:" + "1" * 5000)
    with pytest.raises(ValueError, match=r"XGID field 'turn' must be -1 to 1, got a number of 5000 digits"):
        from_xgid(f"{START}:0:0:-" + "9" * 5000 + ":00:0:0:0:0:10")


def test_xgid_leading_zeros_still_read_as_gnubg_reads_them():
    """gnubg's XGID importer (SetXGID in set.c) reads each field with atoi, so leading zeros do not change
    the value: 5000 zeros then 10 is a max cube of 10 (2**10), as before the fix for long fields."""
    _, state = from_xgid(f"{START}:0:0:1:00:0:0:0:0:" + "0" * 5000 + "10")
    assert state.max_cube_log2 == 10


@pytest.mark.parametrize("digit", ["\uff13", "\u0663", "\u09e9"])  # fullwidth, Arabic-Indic, Bengali three
def test_mat_numbers_are_ascii_digits_only(digit):
    """``re``'s ``\\d`` and ``int`` take any script's digits, so "３ point match" was read as a 3-point match.
    Right: gnubg's .mat importer reads the numbers with C's %d/atoi (ASCII digits only), so such a file is
    no .mat record for gnubg; read_mat refuses it naming the line."""
    with pytest.raises(ValueError, match=r"line 9: expected 'N point match'"):
        read_mat(MAT.replace(" 3 point match", f" {digit} point match"))
    with pytest.raises(ValueError, match=r"line 12: expected the score line"):
        read_mat(MAT.replace("alice : 0 ", f"alice : {digit} ", 1))


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        (" 3 point match", " 9{} point match", r"line 9: the match length"),
        ("alice : 0 ", "alice : 9{} ", r"line 12: the first score"),
        ("Game 1", "Game 9{}", r"line 11: the game number"),
        ("  1)  ", "  9{})  ", r"line 13: the move number"),
        ("Doubles => 2", "Doubles => 9{}", r"line 15: the cube value"),
        ("Wins 2 points", "Wins 9{} points", r"line 19: the points won"),
    ],
)
def test_mat_number_of_thousands_of_digits_is_refused_naming_line_and_field(old, new, where):
    """A 5000-digit number anywhere in a record raised Python's "Exceeds the limit (4300 digits)" with no
    line. Right: the README's "naming the line and the value" for read_mat; the line numbers are those of
    tests/data/match_3pt.mat as grep -n counts them."""
    text = MAT.replace(old, new.format("9" * 4999), 1)
    with pytest.raises(ValueError, match=where + r" is a number of 5000 digits"):
        read_mat(text)


def test_mat_text_with_a_nul_is_refused_as_its_bytes_are():
    """read_mat(bytes) refused a NUL ("not a text .mat record"), but read_mat(str) read it into a player's
    name, which write_mat then wrote out. Right: the same text gives the same answer either way
    (decode_mat's check, in the README's words "bytes: UTF-8, or Latin-1/cp1252" of a text file)."""
    text = MAT.replace("alice", "al\x00ice")
    with pytest.raises(ValueError, match=r"control character 0x00 on line 2"):
        read_mat(text.encode())
    with pytest.raises(ValueError, match=r"control character 0x00 on line 2"):
        read_mat(text)
    assert len(read_mat(MAT.replace("\n", "\r\n")).games) == 3  # ordinary line ends and text still read


def test_decode_mat_still_importable_from_mat():
    """decode_mat moved to nard_ai.formats.mat_text (mat.py's 900-line limit); the README and tests import it
    from nard_ai.formats.mat, which keeps the name."""
    assert decode_mat("M\u00fcller".encode("cp1252")) == "M\u00fcller"


@pytest.mark.parametrize(
    "dtype, value, shown",
    [(np.uint64, 2**63 + 5, "9223372036854775813"), (np.float64, 1e30, "1e+30"), (np.int64, 16, "16")],
)
def test_a_two_row_board_names_a_count_past_15_as_given(dtype, value, shown):
    # found: uint64 2**63 + 5 (and float 1e30) were cast to int64 first and reported as "a negative count
    # -9223..."; right: the count as given, and a player has 15 checkers (docs/RULES.md §1)
    tan = np.zeros((2, 25), dtype=dtype)
    tan[0, 3] = value
    with pytest.raises(
        ValueError, match=rf"row 0, column 3 holds {re.escape(shown)} checkers; a player has only 15"
    ):
        validate_tanboard(tan)
