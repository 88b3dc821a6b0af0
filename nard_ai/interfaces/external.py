"""gnubg's external-player protocol on a TCP port: transport and FIBS board parsing only.

After ``set player 1 external localhost:PORT`` in GNU Backgammon, gnubg
connects to this server and, each time that player must act, writes one FIBS
``board:`` line (``FIBSBoard`` in gnubg's ``drawboard.c``; the layout is
FIBS's "boardstyle 3", http://www.fibs.com/fibs_interface.html#board_state)
and reads back one line (``ComputerTurn`` in gnubg's ``play.c``):

====================================  =========================================
situation in the board line           our reply
====================================  =========================================
``doubled`` field set (the other      ``take`` or ``drop`` (gnubg reads the
side doubled; we must answer)         first letter: a/t take, d/p drop)
no dice rolled (gnubg asks only       ``double`` or ``roll``
when the cube is available)
dice rolled                           the play in gnubg's notation, one
                                      ``from/to`` per checker moved, mover's
                                      numbering, ``bar`` and ``off`` spelled
                                      out (``8/5 6/5``, ``bar/22 13/11``); an
                                      empty line when no move is possible
a request we cannot read, an empty    ``Error: <why>`` (gnubg prints it and
line included                         stops asking; the server keeps running
                                      and the connection stays open)
====================================  =========================================

Replies are ASCII: text from the request quoted in an error is escaped
(``\\xe9`` for a character, ``\\xff`` for a byte that is not UTF-8).

The server's limits (:func:`make_server`; ``nard serve --external PORT
--max-connections N --idle-timeout SECONDS``):

* **Line length**: at most :data:`MAX_LINE_BYTES` (4096) bytes before the
  newline (gnubg's lines are about 150). A longer line is answered
  ``Error: line longer than 4096 bytes`` as soon as the limit is passed;
  the rest of it, up to its newline, is read and dropped (each byte looked
  at once), and the connection goes on with the next line.
* **Connections**: at most :data:`DEFAULT_MAX_CONNECTIONS` (64) at once,
  each served by its own thread; one more is answered ``Error: too many
  connections (64 open); try again later`` and closed. Pending connections
  wait in a listen queue of ``socket.SOMAXCONN``. The engine answers one
  request at a time (it is shared), so many clients queue behind each other.
* **Idle timeout**: a connection that sends nothing for
  :data:`DEFAULT_IDLE_TIMEOUT` (600) seconds, or does not read a reply for
  as long, is told ``Error: no request for 600 s; closing the connection``
  and closed (gnubg connects anew at its next ``set player ... external``).
  A timeout above :data:`MAX_IDLE_TIMEOUT` (1e9 s) is refused at start-up.

The play: in money play (match length 0 or 9999) the best play by cubeless
equity; in match play the best by cubeless match-winning chance at the score
and cube of the board line (:func:`nard_ai.reports.analysis.score_plays`), so the
engine does not chase a gammon that cannot matter at the score. A line
whose cube and score no game can have (a turned cube in the Crawford game or
a double offered in it, a cube above what the away counts allow) is an
``Error:`` answer, not a play for money.

The FIBS board line, colon-separated after ``board:``, each numeric field
range-checked (a value outside its range is ``Error: FIBS board field N
(name) must be ...``):

=====  ==================================================================
field  meaning (range)
=====  ==================================================================
0, 1   names of "player" and opponent (any text)
2      match length: 0 or 9999 = money/unlimited, else 1..25 (the
       engine's longest match, :data:`nard_ai.cube.state.MAX_AWAY`)
3, 4   player's and opponent's score: 0..length-1 in a match, 0..2^31-1
       in money play (gnubg writes the session score)
5-30   26 board entries, -15..15: index 0 and 25 are the bars, 1-24 the
       points; checkers of colour ``c`` are counted with sign ``c``
31     turn, 1 or -1: the colour on roll (gnubg: the doubler while a
       double waits)
32-35  player's dice, opponent's dice, 0..6 (0 = not rolled)
36     cube value, a power of two 1..4096; 37, 38 player / opponent may
       double (0, 1); 39 was doubled (-1..1: gnubg's sign says who doubled)
40     player's colour (1 or -1); 41 player's direction (1 or -1; -1:
       moves from 24 towards 1, bar at index 25); 42 home, 43 bar (0, 25)
44-47  checkers off, on the bar (0..15); 48 can move (0..4); 49 forced
       move (0, 1)
50, 51 gnubg 1.07: post-Crawford (1 from the game after the Crawford game
       on, and in a 1-point match) and "not the Crawford game" (0 only in
       the Crawford game); FIBS: did Crawford, redoubles. 0..2^31-1 each
52...  more fields, if any: integers -2^31..2^31-1, ignored
=====  ==================================================================

**The Crawford game.** What gnubg 1.07.001 writes in fields 50 and 51,
recorded from the real program (``tests/data/gnubg_board_lines.txt``, made
by ``tests/data/record_gnubg_board_lines.py``): the Crawford game ``0:0``,
post-Crawford games ``1:1``, ordinary match games ``0:1``, a 1-point match
``1:1``, money ``0:1``. gnubg's own reader of these lines
(``ProcessFIBSBoardInfo`` in ``drawboard.c``) and FIBS agree with one rule,
used here: a game is the Crawford game when it is match play, exactly one
side is 1-away, and fields 50 and 51 are both 0. (Field 50 alone is *not*
gnubg's Crawford flag: reading it so made 1-point matches and post-Crawford
games count as Crawford games.)

The side on roll (the *mover* of :mod:`nard_ai.core.board`) is the colour named
by ``turn``; its direction is the player's direction if it is the player,
else the opposite. Everything is turned into the mover's view (the bar it
enters from is the one opposite its home).
"""

from __future__ import annotations

import logging
import re
import socket
import socketserver
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from nard_ai.core.board import BAR, BOARD_SIZE, OPP_BAR, game_result, validate_board
from nard_ai.cube.state import MAX_AWAY, MAX_CUBE

__all__ = [
    "FibsBoard",
    "parse_fibs_board",
    "checker_moves",
    "format_gnubg_move",
    "ExternalPlayer",
    "serve_external",
    "make_server",
    "MAX_LINE_BYTES",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_IDLE_TIMEOUT",
    "MAX_IDLE_TIMEOUT",
]

log = logging.getLogger(__name__)

#: The longest request line the server reads, in bytes before the newline (gnubg's are about 150).
MAX_LINE_BYTES = 4096
#: Connections served at once by default; one more is refused with an ``Error:`` line.
DEFAULT_MAX_CONNECTIONS = 64
#: Seconds a connection may stay silent (or leave a reply unread) before it is closed, by default.
DEFAULT_IDLE_TIMEOUT = 600.0
#: The longest idle timeout taken (about 31 years): a socket timeout must fit in 64-bit nanoseconds
#: (Python's ``settimeout`` raises ``OverflowError`` from about 9.2e9 s), so a larger one is refused at start.
MAX_IDLE_TIMEOUT = 1e9

_MIN_FIELDS = 52  # the fields through 51; gnubg 1.07 writes exactly these
_UNLIMITED = 9999  # FIBS's match length of an unlimited match
_C_INT_MAX = 2**31 - 1  # gnubg writes its fields from C ints
_INTEGER = re.compile(r"-?[0-9]+")  # as gnubg and FIBS write them: no "+", "_", spaces or non-ASCII digits

#: field -> (name, lowest, highest) for the fields after the names (field 2, the match length, is
#: checked apart: 0 or 9999 for money, else 1..MAX_AWAY).
_RANGES: dict[int, tuple[str, int, int]] = {
    3: ("score", 0, _C_INT_MAX),
    4: ("opponent's score", 0, _C_INT_MAX),
    **{5 + i: (f"board entry {i}", -15, 15) for i in range(26)},
    32: ("player's die", 0, 6),
    33: ("player's die", 0, 6),
    34: ("opponent's die", 0, 6),
    35: ("opponent's die", 0, 6),
    36: ("cube value", 1, MAX_CUBE),
    37: ("player may double", 0, 1),
    38: ("opponent may double", 0, 1),
    39: ("doubled", -1, 1),
    44: ("player's checkers off", 0, 15),
    45: ("opponent's checkers off", 0, 15),
    46: ("player's checkers on the bar", 0, 15),
    47: ("opponent's checkers on the bar", 0, 15),
    48: ("can move", 0, 4),
    49: ("forced move", 0, 1),
    50: ("post-Crawford / did Crawford", 0, _C_INT_MAX),
    51: ("not Crawford / redoubles", 0, _C_INT_MAX),
}
#: field -> (name, the values it may take).
_CHOICES: dict[int, tuple[str, tuple[int, int]]] = {
    31: ("turn", (1, -1)),
    40: ("colour", (1, -1)),
    41: ("direction", (1, -1)),
    42: ("home", (0, 25)),
    43: ("bar", (0, 25)),
}


@dataclass(frozen=True)
class FibsBoard:
    """A FIBS board line, from the side on roll's view.

    Attributes:
        board: ``(26,)`` int8, :mod:`nard_ai.core.board` layout, side on roll's view.
        dice: the roll, ``(0, 0)`` if not rolled.
        cube_value: the cube (before a pending double).
        mover_may_double, opponent_may_double: who may double.
        doubled: a double is pending; the side on roll is the doubler and
            the receiver of the line must take or drop.
        match_length: 0 for money play.
        score: ``(side on roll, opponent)``; in money play the session score gnubg writes.
        crawford: this is the Crawford game: match play, exactly one side
            1-away, fields 50 and 51 both 0 (see the module docstring).
    """

    board: np.ndarray
    dice: tuple[int, int]
    cube_value: int
    mover_may_double: bool
    opponent_may_double: bool
    doubled: bool
    match_length: int
    score: tuple[int, int]
    crawford: bool

    @property
    def post_crawford(self) -> bool:
        """Match play, a side 1-away, and not the Crawford game (a 1-point match counts, as in gnubg)."""
        length = self.match_length
        return length > 0 and not self.crawford and any(s == length - 1 for s in self.score)

    @property
    def cube_owner(self) -> str:
        """``"centred"``, ``"on_roll"`` or ``"opponent"`` (the names of :mod:`nard_ai.cube.decision`)."""
        if self.mover_may_double and not self.opponent_may_double:
            return "on_roll"
        if self.opponent_may_double and not self.mover_may_double:
            return "opponent"
        return "centred"


def _escape(text: str) -> str:
    """``text`` in printable ASCII: ``\\xNN`` for a raw byte (decoded with ``surrogateescape``), else as ``ascii()``."""
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 32 <= code < 127:
            out.append(ch)
        else:
            out.append(ascii(ch)[1:-1])
    return "".join(out)


def _field_error(index: int, name: str, text: str) -> ValueError:
    return ValueError(f"FIBS board field {index} ({name}) must be {text}")


def parse_fibs_board(line: str, gnubg: bool = True) -> FibsBoard:
    """Decode a FIBS ``board:`` line into the side on roll's view.

    Args:
        line: the line, ``board:...``, at most :data:`MAX_LINE_BYTES` characters;
            a trailing NUL (gnubg sends one) is ignored.
        gnubg: read the scores as gnubg's ``ComputerTurn`` writes them: the
            name and score fields 0/3 belong to gnubg's player 0 (the
            colour -1 side) unless a double is pending, when they belong to
            player 1 (colour 1); the board's colour 1 is always player 1. FIBS
            itself gives the player's (colour's) score in field 3: pass
            ``gnubg=False`` for lines from FIBS.

    Raises:
        ValueError: naming the field, on anything that is not a valid board
            line: too long, too few fields, a field that is not a plain
            decimal integer, a value outside its range (the table in the
            module docstring), a board :func:`nard_ai.core.board.validate_board`
            rejects, a score at or above the match length.
    """
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"a FIBS board line has at most {MAX_LINE_BYTES} characters, got {len(line)}")
    text = line.strip().strip("\0").strip()
    if not text:
        raise ValueError("expected a FIBS 'board:' line, got an empty line")
    if not text.startswith("board:"):
        raise ValueError(f"expected a FIBS 'board:' line, got '{_escape(text[:40])}'")
    fields = text[len("board:") :].split(":")
    if len(fields) < _MIN_FIELDS:
        raise ValueError(f"a FIBS board line has at least {_MIN_FIELDS} fields, got {len(fields)}")
    nums: list[int] = [0, 0]
    for i, raw in enumerate(fields[2:], start=2):
        if not _INTEGER.fullmatch(raw):
            raise ValueError(f"FIBS board field {i} must be a decimal integer, got '{_escape(raw[:20])}'")
        value = int(raw)  # at most MAX_LINE_BYTES digits: below int()'s own limit
        shown = raw if len(raw) <= 24 else f"{raw[:20]}... ({len(raw)} digits)"
        if i == 2:
            if value != _UNLIMITED and not 0 <= value <= MAX_AWAY:
                raise _field_error(
                    2, "match length", f"0 or {_UNLIMITED} (money), or 1..{MAX_AWAY}, got {shown}"
                )
        elif i in _CHOICES:
            name, choices = _CHOICES[i]
            if value not in choices:
                raise _field_error(i, name, f"{choices[0]} or {choices[1]}, got {shown}")
        else:
            # fields 0-51 all have names (0-1 the names, 2 above); past 51 a later protocol's extras
            name, lo, hi = _RANGES.get(i, ("extra field", -(2**31), _C_INT_MAX))
            if not lo <= value <= hi:
                raise _field_error(i, name, f"{lo}..{hi}, got {shown}")
        nums.append(value)

    def field(i: int) -> int:
        return nums[i]

    length = field(2)
    if length == _UNLIMITED:
        length = 0
    if length and max(field(3), field(4)) >= length:
        raise ValueError(
            f"FIBS board: scores must be 0..{length - 1} in a {length}-point match, got {field(3)} and {field(4)}"
        )
    turn, colour, direction = field(31), field(40), field(41)
    points = np.array([field(5 + i) for i in range(26)], dtype=np.int64)
    mover_is_player = turn == colour
    mover_direction = direction if mover_is_player else -direction
    board = np.zeros(BOARD_SIZE, dtype=np.int64)
    for p in range(1, 25):
        board[p] = turn * (points[p] if mover_direction < 0 else points[25 - p])
    # the bar a side enters from is opposite its home: index 25 for the side moving towards 0
    mover_bar, opp_bar = (points[25], points[0]) if mover_direction < 0 else (points[0], points[25])
    board[BAR] = abs(int(mover_bar))
    board[OPP_BAR] = -abs(int(opp_bar))
    try:
        board = validate_board(board.astype(np.int8))
    except ValueError as exc:
        raise ValueError(f"FIBS board: {exc}") from None
    dice = (field(32), field(33))
    if dice == (0, 0):
        dice = (field(34), field(35))
    if 0 in dice and dice != (0, 0):
        raise ValueError(f"FIBS board: dice must be 1-6 (or both 0), got {dice}")
    cube = field(36)
    if cube & (cube - 1):
        raise _field_error(36, "cube value", f"a power of two, got {cube}")
    may, opp_may = bool(field(37)), bool(field(38))
    doubled = field(39) != 0
    if mover_is_player == (doubled or not gnubg):
        score, opp_score = field(3), field(4)
    else:
        score, opp_score = field(4), field(3)
    one_away = length > 0 and (score == length - 1) != (opp_score == length - 1)
    return FibsBoard(
        board=board,
        dice=(max(dice), min(dice)),
        cube_value=cube,
        mover_may_double=may if mover_is_player else opp_may,
        opponent_may_double=opp_may if mover_is_player else may,
        doubled=doubled,
        match_length=length,
        score=(score, opp_score),
        crawford=one_away and field(50) == 0 and field(51) == 0,
    )


def checker_moves(board: np.ndarray, afterstate: np.ndarray, dice: tuple[int, int]) -> list[tuple[int, int]]:
    """One sequence of single checker moves ``(from, to)`` taking ``board`` to ``afterstate``.

    Mover's numbering: 25 = the bar, 0 = borne off; highest source first; ``[]`` for no move.
    """
    from nard_ai.formats.notation import (
        move_sequences,  # the notation module's search; one sequence is enough
    )

    start = tuple(int(c) for c in board)
    target = tuple(int(c) for c in afterstate)
    if start == target:
        return []
    d1, d2 = dice
    found = move_sequences(start, target, (d1,) * 4 if d1 == d2 else (d1, d2))
    if not found:
        raise ValueError("no sequence of checker moves gives that afterstate")
    return [(int(s), int(d)) for s, d in min(found)]


def format_gnubg_move(moves: list[tuple[int, int]]) -> str:
    """Single checker moves ``(from, to)`` (25 = bar, 0 = off) as gnubg's ``ParseMove`` reads them."""

    def name(point: int) -> str:
        return "bar" if point == BAR else "off" if point == 0 else str(point)

    return " ".join(f"{name(s)}/{name(d)}" for s, d in moves)


class ExternalPlayer:
    """Answers gnubg's board lines with the agent's decisions.

    Args:
        agent: a :class:`nard_ai.search.lookahead.Agent` (``rank_plays``, ``evaluate``).
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self._lock = threading.Lock()

    def respond(self, line: str) -> str:
        """The reply (without newline, ASCII) to one line from gnubg; ``Error: ...`` when it cannot be read.

        Never raises: a request the engine cannot answer is ``Error: <why>``; a
        failure of the engine itself (a bug) is logged with its traceback and
        answered ``Error: internal error (<exception type>); see the server log``.
        """
        try:
            fb = parse_fibs_board(line)
            if game_result(fb.board) != 0:
                raise ValueError("the game in that position is already over")
            try:
                state = _cube_state(fb)
            except ValueError as exc:
                raise ValueError(f"FIBS board: cube and score: {exc}") from None
            if fb.doubled and fb.crawford:  # as the Match ID and XGID readers refuse it
                raise ValueError(
                    "FIBS board: cube and score: a double offered in the Crawford game (nobody may double)"
                )
            with self._lock:
                if fb.doubled:
                    return "take" if self._cube_advice(fb, state)[1] else "drop"
                if fb.dice == (0, 0):
                    return "double" if self._cube_advice(fb, state)[0] else "roll"
                return self._move(fb, state)
        except ValueError as exc:
            return _escape(f"Error: {exc}")
        except Exception as exc:  # a bug: keep serving, say so, log it
            log.exception("cannot answer %s", _escape(line[:200]))
            return f"Error: internal error ({type(exc).__name__}); see the server log"

    def _move(self, fb: FibsBoard, state: Any) -> str:
        from nard_ai.reports.analysis import score_plays

        ranked = self.agent.rank_plays(fb.board, fb.dice)
        best = score_plays(ranked, state).afterstates[0]  # by MWC at the score in match play
        return format_gnubg_move(checker_moves(fb.board, best, fb.dice))

    def _cube_advice(self, fb: FibsBoard, state: Any) -> tuple[bool, bool]:
        """(the side on roll should double, its opponent should take) - roll and take when unsure."""
        from nard_ai import cube

        try:
            d = cube.cube_decision(fb.board, state, agent=self.agent)
        except ValueError as exc:
            log.warning("cube decision failed (%s); rolling / taking", exc)
            return False, True
        double = d.cube_available and d.action in ("double_take", "double_pass")
        take = not d.cube_available or not np.isfinite(d.double_take) or d.double_take <= d.double_pass
        return bool(double), bool(take)


def _cube_state(fb: FibsBoard):
    """The :class:`nard_ai.cube.CubeState` of a board line, side on roll's view (ValueError if inexpressible)."""
    from nard_ai.cube import CubeState

    return CubeState(
        value=fb.cube_value,
        owner=fb.cube_owner if fb.cube_value > 1 else "centred",
        match_length=fb.match_length,
        score=fb.score if fb.match_length else (0, 0),
        crawford=fb.crawford,
    )


class _Handler(socketserver.BaseRequestHandler):
    """One connection: lines in, one reply line each; bounded line length, an idle timeout."""

    def handle(self) -> None:
        server: _Server = self.server  # type: ignore[assignment]
        sock: socket.socket = self.request
        sock.settimeout(server.idle_timeout)
        log.info("gnubg connected from %s", self.client_address)
        pending = bytearray()  # the start of the current line, at most MAX_LINE_BYTES
        skipping = False  # inside a line over the limit: drop bytes up to its newline
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                self._send(f"Error: no request for {server.idle_timeout:g} s; closing the connection")
                log.info("closing %s: idle for %g s", self.client_address, server.idle_timeout)
                return
            except OSError:
                break
            if not chunk:
                break
            start = 0
            while start <= len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if not skipping:
                    if len(pending) + len(piece) > MAX_LINE_BYTES:
                        pending.clear()
                        skipping = True
                        if not self._send(f"Error: line longer than {MAX_LINE_BYTES} bytes"):
                            return
                    else:
                        pending += piece
                if end < 0:
                    break
                start = end + 1
                if skipping:
                    skipping = False
                    continue
                line, pending = bytes(pending), bytearray()
                if not self._answer(server.player, line):
                    return
        log.info("gnubg disconnected")

    def _answer(self, player: ExternalPlayer, raw: bytes) -> bool:
        # gnubg writes each board line with a NUL byte after its newline (ComputerTurn: strlen + 1 bytes),
        # which leads the next line here and is dropped; bytes that are not UTF-8 survive as surrogates,
        # so an error can quote them (escaped: replies are ASCII). An empty line is a line we cannot
        # read like any other, answered with an Error line so that a client typing one is not left
        # waiting; gnubg never sends one (each of its writes is one board line), so no reply of ours
        # can answer a later board of gnubg's.
        line = raw.replace(b"\0", b"").decode("utf-8", errors="surrogateescape").strip()
        reply = player.respond(line)
        log.debug("%s -> %s", _escape(line), reply)
        return self._send(reply)

    def _send(self, reply: str) -> bool:
        """Write one reply line; False when the connection is gone (or the peer reads nothing for the timeout)."""
        try:
            self.request.sendall(reply.encode("ascii", errors="backslashreplace") + b"\n")
        except OSError:
            return False
        return True


class _Server(socketserver.ThreadingTCPServer):
    """A thread per connection, at most ``max_connections`` of them; a listen queue of ``SOMAXCONN``."""

    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = socket.SOMAXCONN
    _REFUSED_LINGER = 2.0  # seconds a refused socket stays half-open so its error line is read, not reset
    _REFUSED_MAX = 1024  # refused sockets kept lingering at most; beyond, closed at once

    def __init__(self, address: tuple[str, int], max_connections: int, idle_timeout: float) -> None:
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self._refused: list[tuple[socket.socket, float]] = []
        self.player: ExternalPlayer | None = None
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request, client_address)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def _refuse(self, sock: socket.socket, client_address: Any) -> None:
        log.warning("refusing %s: %d connections open", client_address, self.max_connections)
        message = f"Error: too many connections ({self.max_connections} open); try again later\n"
        try:
            sock.setblocking(False)
            sock.send(message.encode("ascii"))  # a short line: fits the send buffer of a new socket
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            sock.close()
            return
        # closing now, with the client's request unread, would reset the connection and could lose
        # the line; service_actions closes it once the client has read it and hung up, or after a while
        if len(self._refused) >= self._REFUSED_MAX:
            sock.close()
        else:
            self._refused.append((sock, time.monotonic() + self._REFUSED_LINGER))

    def service_actions(self) -> None:
        super().service_actions()
        if not self._refused:
            return
        now, keep = time.monotonic(), []
        for sock, deadline in self._refused:
            try:
                while data := sock.recv(65536):  # drop what the client sent; b"" once it hung up
                    del data
                gone = True
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone or now >= deadline:
                sock.close()
            else:
                keep.append((sock, deadline))
        self._refused = keep

    def server_close(self) -> None:
        super().server_close()
        for sock, _ in self._refused:
            sock.close()
        self._refused = []


def _check_limits(max_connections: Any, idle_timeout: Any) -> None:
    if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 1:
        raise ValueError(f"max_connections must be a whole number >= 1, got {max_connections!r}")
    if (
        isinstance(idle_timeout, bool)
        or not isinstance(idle_timeout, (int, float))
        or not 0 < idle_timeout < float("inf")
    ):
        raise ValueError(f"idle_timeout must be a number of seconds > 0, got {idle_timeout!r}")
    if idle_timeout > MAX_IDLE_TIMEOUT:
        raise ValueError(f"idle_timeout must be at most {MAX_IDLE_TIMEOUT:g} seconds, got {idle_timeout!r}")


def _bind(port: int, host: str, max_connections: int, idle_timeout: float) -> _Server:
    _check_limits(max_connections, idle_timeout)
    try:
        return _Server((host, port), max_connections, float(idle_timeout))
    except (OSError, UnicodeError, OverflowError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise ValueError(f"cannot listen on {host}:{port}: {reason}") from None


def make_server(
    agent: Any,
    port: int,
    host: str = "127.0.0.1",
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
) -> socketserver.ThreadingTCPServer:
    """A TCP server (bound and listening, not yet serving) answering gnubg's external-player requests.

    Args:
        agent: the :class:`nard_ai.search.lookahead.Agent` that decides.
        port: TCP port; 0 picks a free one (``server.server_address[1]`` tells which).
        host: address to listen on.
        max_connections: connections served at once; one more gets an ``Error:`` line and is closed.
        idle_timeout: seconds a connection may send nothing (or leave a reply unread) before it is closed.

    Raises:
        ValueError: ``cannot listen on HOST:PORT: <reason>`` (a port in use, a bad address);
            a ``max_connections`` below 1 or not an integer, an ``idle_timeout`` not above 0.
    """
    server = _bind(port, host, max_connections, idle_timeout)
    server.player = ExternalPlayer(agent)
    return server


def serve_external(
    port: int,
    host: str = "127.0.0.1",
    checkpoint: str | None = None,
    ply: int = 0,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
) -> None:
    """Serve gnubg's external-player protocol until interrupted.

    The address is bound before the network loads, and the port actually
    bound (port 0: one the system picks) is logged with the gnubg command.
    ``max_connections`` and ``idle_timeout`` are as for :func:`make_server`.

    Raises:
        ValueError: when ``host:port`` cannot be bound, a limit is out of range, or the agent cannot be built.
        FileNotFoundError: on a missing checkpoint.
    """
    from nard_ai.agents import load_agent

    server = _bind(port, host, max_connections, idle_timeout)
    with server:
        server.player = ExternalPlayer(load_agent(checkpoint, ply=ply))
        bound = server.server_address[1]
        log.info(
            "external player on %s:%d; in gnubg: set player 1 external %s:%d "
            "(at most %d connections, idle timeout %g s)",
            host,
            bound,
            host,
            bound,
            max_connections,
            idle_timeout,
        )
        server.serve_forever()
