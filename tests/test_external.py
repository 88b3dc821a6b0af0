"""gnubg's external-player protocol (nard_ai.interfaces.external): FIBS board lines, replies, and a real gnubg game."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from nard_ai.agents import load_agent
from nard_ai.core.board import starting_board
from nard_ai.core.movegen import legal_plays
from nard_ai.interfaces.external import (
    ExternalPlayer,
    checker_moves,
    format_gnubg_move,
    make_server,
    parse_fibs_board,
)
from tests.conftest import cli_server
from tests.test_analysis import GammonChaser

REPO = Path(__file__).resolve().parents[1]

GNUBG = "/usr/games/gnubg"

# What gnubg 1.07 sent to its external player 1 ("root", colour 1, on roll with 6-3)
# at the start of a 1-point match: the starting position, money cube centred.
OPENING_63 = (
    "board:gnubg:root:1:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
    "1:6:3:6:3:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:1:1"
)


def _fields(line: str) -> list[str]:
    return line[len("board:") :].split(":")


def _line(fields: list[str]) -> str:
    return "board:" + ":".join(fields)


@pytest.fixture(scope="module")
def player() -> ExternalPlayer:
    return ExternalPlayer(load_agent())


def test_gnubg_opening_line_is_the_starting_board_with_the_roll():
    fb = parse_fibs_board(OPENING_63 + "\0")
    assert np.array_equal(fb.board, starting_board())
    assert fb.dice == (6, 3)
    assert fb.cube_value == 1 and fb.cube_owner == "centred" and not fb.doubled
    assert fb.match_length == 1 and fb.score == (0, 0)


def test_the_other_colour_on_roll_is_read_from_its_own_side():
    """Same position, but the side on roll is colour -1 moving towards 25 (bar at index 0)."""
    f = _fields(OPENING_63)
    board = [int(x) for x in f[5:31]]
    mirrored = [-board[25 - i] for i in range(26)]
    f[5:31] = [str(v) for v in mirrored]
    f[31] = "-1"  # turn: colour -1
    fb = parse_fibs_board(_line(f))
    assert np.array_equal(fb.board, starting_board())


def test_scores_follow_gnubgs_writer_player_0_first_unless_doubled():
    f = _fields(OPENING_63)
    f[2], f[3], f[4] = "5", "1", "3"  # 5-point match; gnubg (player 0) 1, us (player 1, on roll) 3
    assert parse_fibs_board(_line(f)).score == (3, 1)
    assert parse_fibs_board(_line(f), gnubg=False).score == (1, 3)


def test_cube_owner_comes_from_the_may_double_flags():
    f = _fields(OPENING_63)
    f[36], f[37], f[38] = "2", "1", "0"
    assert parse_fibs_board(_line(f)).cube_owner == "on_roll"
    f[37], f[38] = "0", "1"
    assert parse_fibs_board(_line(f)).cube_owner == "opponent"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("hello", "board:"),
        ("board:a:b:1:0:0", "fields"),
        (OPENING_63.replace(":1:6:3:", ":1:x:3:"), "integers"),
        (OPENING_63.replace(":0:-2:0:", ":0:-9:0:", 1), "FIBS board"),
        (OPENING_63.replace(":1:6:3:6:3:", ":1:6:9:6:9:"), "dice"),
    ],
)
def test_malformed_lines_are_refused_with_a_reason(line, needle):
    with pytest.raises(ValueError, match=needle):
        parse_fibs_board(line)


def test_moves_are_written_as_gnubg_parses_them():
    assert format_gnubg_move([(8, 5), (6, 5)]) == "8/5 6/5"
    assert format_gnubg_move([(25, 22), (13, 11)]) == "bar/22 13/11"
    assert format_gnubg_move([(6, 0), (5, 0)]) == "6/off 5/off"
    assert format_gnubg_move([]) == ""


def test_player_answers_a_roll_with_a_legal_play(player):
    assert player.respond(OPENING_63) in ("24/18 18/15", "24/18 13/10", "13/7 13/10", "24/15")


def test_player_answers_cube_questions(player):
    f = _fields(OPENING_63)
    f[32:36] = ["0", "0", "0", "0"]  # no dice: roll or double
    assert player.respond(_line(f)) == "roll"  # nobody doubles the opening
    f[39] = "1"  # a double is pending: take or drop
    assert player.respond(_line(f)) == "take"


def test_player_never_raises_on_garbage(player):
    assert player.respond("nonsense").startswith("Error: ")
    assert player.respond("board:" + ":".join(["0"] * 60)).startswith("Error: ")


def test_non_ascii_input_gets_an_escaped_ascii_error(player):
    reply = player.respond("h\u00e9llo")
    assert reply == "Error: expected a FIBS 'board:' line, got 'h\\xe9llo'"
    reply.encode("ascii")  # gnubg reads ASCII: the reply must encode
    assert player.respond("\udcff\udcfe").endswith("got '\\xff\\xfe'")  # raw bytes (surrogateescape)


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def test_the_connection_survives_non_ascii_and_binary_lines():
    """Before the fix a non-ASCII line made the handler raise UnicodeEncodeError and drop the connection."""
    server = make_server(GammonChaser(), 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(server.server_address, timeout=30) as conn:
            conn.sendall("h\u00e9llo\n".encode())
            assert _read_line(conn) == b"Error: expected a FIBS 'board:' line, got 'h\\xe9llo'\n"
            conn.sendall(b"\xff\xfe\0\n")
            assert _read_line(conn) == b"Error: expected a FIBS 'board:' line, got '\\xff\\xfe'\n"
            conn.sendall(OPENING_63.encode() + b"\0\n")  # the same connection still answers a real request
            reply = _read_line(conn).decode().strip()
            assert "/" in reply and not reply.startswith("Error")
    finally:
        server.shutdown()
        server.server_close()


def _dmp_line(match_length: int, score: tuple[int, int]) -> str:
    """OPENING_63 at a match score (player 1 on roll with 6-3, colour 1), cube centred, not Crawford."""
    f = _fields(OPENING_63)
    f[2], f[3], f[4] = str(match_length), str(score[0]), str(score[1])
    f[50] = "0"  # not the Crawford game (OPENING_63, a 1-point match, has gnubg's Crawford flag set)
    return _line(f)


def test_the_play_is_chosen_by_mwc_at_the_match_score():
    """GammonChaser: the gammonish play 0 is best for money, the safe play 1 at double match point."""
    player = ExternalPlayer(GammonChaser())
    board, dice = starting_board(), (6, 3)
    plays = legal_plays(board, dice)
    gammonish = format_gnubg_move(checker_moves(board, plays[0], dice))
    safe = format_gnubg_move(checker_moves(board, plays[1], dice))
    assert player.respond(_dmp_line(0, (0, 0))) == gammonish  # money (FIBS match length 0)
    assert player.respond(_dmp_line(9999, (0, 0))) == gammonish  # FIBS's unlimited match: money
    assert player.respond(_dmp_line(5, (4, 4))) == safe  # 4-4 of 5: only winning counts
    assert player.respond(_dmp_line(5, (0, 0))) == gammonish  # 0-0 of 5: a gammon is worth 2 of 5 points


def test_busy_port_is_a_value_error_naming_the_address():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{port}: "):
            make_server(GammonChaser(), port)
    finally:
        taken.close()
    with pytest.raises(ValueError, match="cannot listen on 256.1.1.1:0"):
        make_server(GammonChaser(), 0, host="256.1.1.1")


def test_nard_serve_external_0_reports_the_port_it_bound():
    pattern = r"external player on 127\.0\.0\.1:(\d+); in gnubg: set player 1 external"
    with cli_server(["serve", "--external", "0"], pattern) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            conn.sendall(b"hello\n")
            assert _read_line(conn).startswith(b"Error: expected a FIBS 'board:' line")


@pytest.mark.skipif(
    not os.path.exists(GNUBG), reason=f"GNU Backgammon not installed at {GNUBG} (apt-get install gnubg)"
)
def test_real_gnubg_plays_a_whole_match_against_the_engine(tmp_path):
    server = make_server(load_agent(), 0)
    replies: list[str] = []
    respond = server.player.respond

    def recording(line: str) -> str:
        reply = respond(line)
        replies.append(reply)
        return reply

    server.player.respond = recording
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    commands = "\n".join(
        [
            "set display off",
            "set player 0 gnubg",
            "set player 0 chequerplay evaluation plies 0",
            "set player 0 cubedecision evaluation plies 0",
            f"set player 1 external localhost:{port}",
            "set seed 7",
            "new match 3",
            "quit",
            "y",
            "",
        ]
    )
    try:
        result = subprocess.run(
            [GNUBG, "-t", "-q", "-r"],
            input=commands,
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    finally:
        server.shutdown()
        server.server_close()
    out = result.stdout
    assert "has won the match" in out, out[-3000:] + result.stderr[-2000:]
    assert "Warning" not in out and "illegal" not in out.lower()
    assert replies and not any(r.startswith("Error") for r in replies), replies
    assert any("/" in r for r in replies)
