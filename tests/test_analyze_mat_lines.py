"""``nard analyze`` names each decision by the ``.mat`` record's own numbering and its line in the file;
a doubled opening roll is refused; a later game naming other players is a warning.

Every record is a text written in the test; each expected line number is counted in that text (the
comments number its lines), and checked against the text itself where that is easy.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from conftest import RENAMED_MAT, run_cli

from nard_ai.core.board import starting_board
from nard_ai.core.movegen import legal_plays
from nard_ai.core.rules import Rules
from nard_ai.formats.mat import ActionKind, MatAction, Match, MatGame, read_mat, write_mat
from nard_ai.interfaces.commands import analyze as analyze_command
from nard_ai.reports.analysis import analyze_match, format_analysis
from nard_ai.search.lookahead import RankedPlays


class FakeAgent:
    """The last legal play is best (win chance 0.40 + 0.01 k for the k-th); every position wins 50%."""

    ply = 0
    name = "fake"

    def rank_plays(self, board, dice) -> RankedPlays:
        plays = legal_plays(board, dice)
        probs = np.zeros((len(plays), 5), dtype=np.float32)
        probs[:, 0] = 0.40 + 0.01 * np.arange(len(plays))
        order = np.argsort(-probs[:, 0], kind="stable")
        return RankedPlays(afterstates=plays[order], probs=probs[order], equity=2.0 * probs[order, 0] - 1.0)

    def value(self, boards):
        probs = np.tile(np.array([0.5, 0, 0, 0, 0], dtype=np.float32), (len(boards), 1))
        return probs, 2.0 * probs[:, 0] - 1.0


# A 3-point match, one game, laid out as gnubg writes it. Lines, counted from 1:
ONE_GAME = "\n".join(
    [
        '; [Site "nard_ai tests"]',  # line 1
        "",  # line 2
        " 3 point match",  # line 3
        "",  # line 4
        " Game 1",  # line 5
        " alice : 0                      bob : 0",  # line 6
        "  1) 31: 8/5 6/5                 52: 13/8 13/11",  # line 7: move 1, alice left, bob right
        "  2)  Doubles => 2                Drops",  # line 8: move 2, alice doubles, bob drops
        "      Wins 1 point",  # line 9: no move number
    ]
)
# (kind, player, move, line) of every record, from the comments above
ONE_GAME_RECORDS = [
    (ActionKind.ROLL, 0, 1, 7),
    (ActionKind.ROLL, 1, 1, 7),
    (ActionKind.DOUBLE, 0, 2, 8),
    (ActionKind.DROP, 1, 2, 8),
    (ActionKind.WIN, 0, 0, 9),
]


def _line_of(text: str, fragment: str) -> int:
    """The 1-based line of ``fragment`` as ``grep -n`` counts it (newlines before it, plus one)."""
    return text.count("\n", 0, text.index(fragment)) + 1


def test_the_line_numbers_stated_are_the_texts_own():
    assert _line_of(ONE_GAME, "31: 8/5") == 7
    assert _line_of(ONE_GAME, "Doubles") == 8
    assert _line_of(ONE_GAME, "Wins 1") == 9


def test_every_record_keeps_its_move_number_and_line():
    (game,) = read_mat(ONE_GAME).games
    assert [(a.kind, a.player, a.move, a.line) for a in game.actions] == ONE_GAME_RECORDS


@pytest.mark.parametrize(
    ("newline", "page_break"),
    [("\n", False), ("\r\n", False), ("\r", False), ("\n", True), ("\r\n", True)],
    ids=["unix", "dos", "old-mac", "unix+formfeed", "dos+formfeed"],
)
def test_lines_are_counted_at_line_breaks_only(newline, page_break):
    """A form feed (a page break of old text files) or a vertical tab is not a line break: grep -n
    counts ``\\n`` (a DOS file's ``\\r\\n`` once), and Python's ``splitlines`` would count one more."""
    lines = ONE_GAME.split("\n")
    if page_break:
        lines[3] = "\f"  # line 4, blank, becomes a page break: still line 4
    text = newline.join(lines)
    if page_break:
        assert len(text.splitlines()) == 10  # what the reader counted before: one line too many
    (game,) = read_mat(text).games
    assert [(a.kind, a.player, a.move, a.line) for a in game.actions] == ONE_GAME_RECORDS


def test_move_and_line_are_not_compared():
    match = read_mat(ONE_GAME)
    shifted = read_mat("\n\n" + ONE_GAME)  # two blank lines on top: every record two lines lower
    assert [a.line for a in shifted.games[0].actions] == [line + 2 for *_, line in ONE_GAME_RECORDS]
    assert shifted.games == match.games
    assert read_mat(write_mat(match)).games == match.games


def test_decisions_carry_the_mat_move_number_player_and_line():
    analysis = analyze_match(read_mat(ONE_GAME), FakeAgent())
    named = [(d.kind, d.player, d.move, d.line) for d in analysis.decisions]
    assert named == [
        ("checker", 0, 1, 7),  # alice's 31 on line 7, move 1, left column
        ("no_double", 1, 1, 7),  # bob could double before his 52: named by that roll, line 7
        ("checker", 1, 1, 7),  # bob's 52 on line 7, move 1, right column
        ("double", 0, 2, 8),  # alice's double, line 8, move 2
        ("pass", 1, 2, 8),  # bob's drop, line 8, move 2
    ]
    data = analysis.to_dict()
    assert [(d["game"], d["mat_move"], d["player"], d["line"]) for d in data["decisions"]] == [
        (1, 1, 0, 7),
        (1, 1, 1, 7),
        (1, 1, 1, 7),
        (1, 2, 0, 8),
        (1, 2, 1, 8),
    ]
    assert [d["turn"] for d in data["decisions"]] == [1, 2, 2, 3, 3]  # the old per-game roll count stays


def test_the_text_report_starts_each_decision_with_move_and_line():
    text = format_analysis(analyze_match(read_mat(ONE_GAME), FakeAgent()))
    assert "alice (left column) vs bob (right column)" in text
    rows = text.splitlines()
    double = next(r for r in rows if "Double" in r and "right:" in r)
    assert double.startswith("  2) line 8 alice ")  # move 2, line 8 of ONE_GAME
    play = next(r for r in rows if " 52 " in r)
    assert play.startswith("  1) line 7 bob ")


def test_unknown_move_and_line_print_as_a_dash():
    """A match built in code has no lines: the report says '-' rather than a wrong number."""
    read = read_mat(ONE_GAME)
    bare = Match(
        3, read.players, tuple(MatGame(g.score, tuple(_bare(a) for a in g.actions)) for g in read.games)
    )
    analysis = analyze_match(bare, FakeAgent())
    assert {(d.move, d.line) for d in analysis.decisions} == {(0, 0)}
    assert all(d["mat_move"] is None and d["line"] is None for d in analysis.to_dict()["decisions"])
    double = next(r for r in format_analysis(analysis).splitlines() if "Double" in r and "right:" in r)
    assert double.startswith("   - line - alice ")


def _bare(action: MatAction) -> MatAction:
    """The record as code builds it: no move number, no line."""
    return replace(action, move=0, line=0)


def test_the_command_prints_move_and_line_in_text_and_json(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(analyze_command, "agent_arg", lambda parser, checkpoint, ply: FakeAgent())
    path = tmp_path / "one.mat"
    path.write_text(ONE_GAME)
    status, out, err = run_cli(["analyze", str(path), "--json", "--no-progress"], capsys)
    assert status == 0, err
    decisions = json.loads(out)["decisions"]
    assert [(d["kind"], d["mat_move"], d["line"]) for d in decisions][-2:] == [
        ("double", 2, 8),
        ("pass", 2, 8),
    ]
    status, out, err = run_cli(["analyze", str(path), "--no-progress"], capsys)
    assert status == 0 and err == ""
    assert any(row.startswith("  2) line 8 bob ") and "Pass" in row for row in out.splitlines())


# --------------------------------------------------------------------------- a doubled opening roll

# Line 7 opens game 1 with 33 (RULES.md 2: each player throws one die, so never a double).
OPENING_DOUBLE = "\n".join(
    [
        '; [Site "nard_ai tests"]',  # line 1
        "",  # line 2
        " 3 point match",  # line 3
        "",  # line 4
        " Game 1",  # line 5
        " alice : 0                      bob : 0",  # line 6
        "  1) 33: 8/5(2) 6/3(2)           52: 13/8 13/11",  # line 7
    ]
)


@pytest.mark.parametrize("rules", [Rules(), Rules.iranian("000"), Rules.iranian("002")], ids=str)
def test_a_doubled_opening_roll_is_refused_under_every_rule_setting(rules):
    """No Rules setting changes the opening roll: the Iranian variant (RULES.md 7) only restricts
    hitting and continuing; RULES.md 2 (the opening roll) comes from all three seeds."""
    assert _line_of(OPENING_DOUBLE, "33:") == 7
    with pytest.raises(
        ValueError, match=r"^line 7: game 1 opens with 33, but the opening roll is never a double"
    ):
        read_mat(OPENING_DOUBLE, rules)


def test_a_doubled_opening_roll_in_the_right_column_and_a_later_game_is_named_by_its_line():
    text = "\n".join(
        [
            " 3 point match",  # line 1
            " Game 1",  # line 2
            " alice : 0                      bob : 0",  # line 3
            "  1) 31: 8/5 6/5                 52: 13/8 13/11",  # line 4
            "  2)  Doubles => 2                Drops",  # line 5
            "      Wins 1 point",  # line 6
            " Game 2",  # line 7
            " alice : 1                      bob : 0",  # line 8
            "  1)                             66: 24/18(2) 13/7(2)",  # line 9: bob opens with 66
        ]
    )
    assert _line_of(text, "66:") == 9
    with pytest.raises(ValueError, match=r"^line 9: game 2 opens with 66"):
        read_mat(text)
    # a double later in a game is fine: the same game with bob's 66 as his second roll
    fine = text.replace(
        "  1)                             66: 24/18(2) 13/7(2)",
        "  1) 42: 8/4 6/4                 66: 24/18(2) 13/7(2)",
    )
    assert read_mat(fine).games[1].actions[1].dice == (6, 6)


def test_write_mat_refuses_a_hand_built_doubled_opening_roll():
    after = legal_plays(starting_board(), (3, 3))[0]
    game = MatGame((0, 0), (MatAction(0, ActionKind.ROLL, dice=(3, 3), afterstate=after),))
    with pytest.raises(ValueError, match=r"^game 1: game 1 opens with 33"):
        write_mat(Match(3, ("alice", "bob"), (game,)))


def test_the_command_refuses_a_doubled_opening_roll_as_its_other_bad_records(capsys, tmp_path):
    path = tmp_path / "opening.mat"
    path.write_text(OPENING_DOUBLE)
    status, out, err = run_cli(["analyze", str(path), "--no-progress"], capsys)
    assert status == 2 and out == ""
    assert f"nard analyze: error: {path}: line 7: game 1 opens with 33" in err
    bad = tmp_path / "bad.mat"
    bad.write_text(OPENING_DOUBLE.replace("8/5(2) 6/3(2)", "8/2(2) 6/3(2)"))  # another bad record: same exit
    assert run_cli(["analyze", str(bad), "--no-progress"], capsys)[0] == 2


# --------------------------------------------------------------------------- players renamed

RENAMED = RENAMED_MAT  # conftest: game 2 names carol and dave on line 10


def test_a_later_game_naming_other_players_is_read_with_a_warning():
    """gnubg 1.07's ImportGame copies every game's names over the match's without a message; nard
    keeps game 1's names and says which line named others."""
    assert _line_of(RENAMED, "carol") == 10
    match = read_mat(RENAMED)
    assert match.players == ("alice", "bob")
    assert match.warnings == (
        "line 10: game 2 names the players 'carol' and 'dave', but game 1 named them 'alice' and 'bob'; "
        "game 1's names are kept",
    )
    assert read_mat(ONE_GAME).warnings == ()
    assert read_mat(RENAMED.replace("carol", "alice").replace("dave ", "bob  ")).warnings == ()
    assert match.games[1].actions[0].line == 11


def test_the_command_warns_on_stderr_and_goes_on_with_game_1s_names(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(analyze_command, "agent_arg", lambda parser, checkpoint, ply: FakeAgent())
    path = tmp_path / "renamed.mat"
    path.write_text(RENAMED)
    status, out, err = run_cli(["analyze", str(path), "--json", "--no-progress"], capsys)
    assert status == 0
    assert (
        err == f"nard analyze: warning: {path}: line 10: game 2 names the players 'carol' and 'dave', "
        "but game 1 named them 'alice' and 'bob'; game 1's names are kept\n"
    )
    data = json.loads(out)
    assert data["players"] == ["alice", "bob"] and data["games"] == 2
    assert (data["decisions"][-1]["game"], data["decisions"][-1]["line"]) == (2, 11)


# --------------------------------------------------------------------------- the two spellings of one mark


def test_very_bad_is_spelt_as_documented_in_the_json():
    """``thresholds`` keys are SkillThresholds' fields (``very_bad``); skills and marks are gnubg's
    words (``"very bad"``). Both are kept: renaming either would break a reader of the other."""
    data = analyze_match(read_mat(ONE_GAME), FakeAgent()).to_dict()
    assert set(data["thresholds"]) == {"doubtful", "bad", "very_bad"}
    assert all(set(s["marks"]) == {"doubtful", "bad", "very bad"} for s in data["stats"])
    assert {d["skill"] for d in data["decisions"]} <= {"", "doubtful", "bad", "very bad"}
