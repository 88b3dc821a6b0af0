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
a request we cannot read              ``Error: <why>`` (gnubg prints it and
                                      stops asking; the server keeps running
                                      and the connection stays open)
====================================  =========================================

Replies are ASCII: text from the request quoted in an error is escaped
(``\\xe9`` for a character, ``\\xff`` for a byte that is not UTF-8).

The play: in money play (match length 0 or 9999) the best play by cubeless
equity; in match play the best by cubeless match-winning chance at the score
and cube of the board line (:func:`nard_ai.reports.analysis.score_plays`), so the
engine does not chase a gammon that cannot matter at the score.

The FIBS board line, colon-separated after ``board:``:

=====  ==================================================================
field  meaning
=====  ==================================================================
0, 1   names of "player" and opponent
2      match length (0 or 9999 = money/unlimited)
3, 4   player's and opponent's score
5-30   26 board entries: index 0 and 25 are the bars, 1-24 the points;
       checkers of colour ``c`` are counted with sign ``c``
31     turn: the colour on roll (gnubg: the doubler while a double waits)
32-35  player's dice, opponent's dice (0 = not rolled)
36     cube value; 37, 38 player / opponent may double; 39 was doubled
40     player's colour (1 or -1); 41 player's direction (-1: moves from
       24 towards 1, bar at index 25); 42 home; 43 bar
44-47  checkers off / on the bar; 48 can move; 49 forced move
50     did Crawford (gnubg writes its Crawford flag here); 51 redoubles
=====  ==================================================================

The side on roll (the *mover* of :mod:`nard_ai.core.board`) is the colour named
by ``turn``; its direction is the player's direction if it is the player,
else the opposite. Everything is turned into the mover's view (the bar it
enters from is the one opposite its home).
"""

from __future__ import annotations

import logging
import socketserver
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from nard_ai.core.board import BAR, BOARD_SIZE, OPP_BAR, game_result, validate_board

__all__ = [
    "FibsBoard",
    "parse_fibs_board",
    "checker_moves",
    "format_gnubg_move",
    "ExternalPlayer",
    "serve_external",
    "make_server",
]

log = logging.getLogger(__name__)

_MIN_FIELDS = 52  # the fields through "redoubles"; gnubg may add a post-Crawford flag
_UNLIMITED = 9999  # FIBS's match length of an unlimited match


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
        score: ``(side on roll, opponent)``.
        crawford: the Crawford flag gnubg writes.
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


def parse_fibs_board(line: str, gnubg: bool = True) -> FibsBoard:
    """Decode a FIBS ``board:`` line into the side on roll's view.

    Args:
        line: the line, ``board:...``; a trailing NUL (gnubg sends one) is ignored.
        gnubg: read the scores as gnubg's ``ComputerTurn`` writes them: the
            name and score fields 0/3 belong to gnubg's player 0 (the
            colour -1 side) unless a double is pending, when they belong to
            player 1 (colour 1); the board's colour 1 is always player 1. FIBS
            itself gives the player's (colour's) score in field 3: pass
            ``gnubg=False`` for lines from FIBS.

    Raises:
        ValueError: naming the field, on anything that is not a valid board line.
    """
    text = line.strip().strip("\0").strip()
    if not text.startswith("board:"):
        raise ValueError(f"expected a FIBS 'board:' line, got '{_escape(text[:40])}'")
    fields = text[len("board:") :].split(":")
    if len(fields) < _MIN_FIELDS:
        raise ValueError(f"a FIBS board line has at least {_MIN_FIELDS} fields, got {len(fields)}")
    try:
        nums = [int(f) for f in fields[2:]]
    except ValueError:
        raise ValueError("FIBS board fields 2 onwards must be integers") from None

    def field(i: int) -> int:
        return nums[i - 2]

    points = np.array([field(5 + i) for i in range(26)], dtype=np.int64)
    turn, colour, direction = field(31), field(40), field(41)
    if turn not in (1, -1) or colour not in (1, -1) or direction not in (1, -1):
        raise ValueError(f"turn, colour and direction must be 1 or -1, got {turn}, {colour}, {direction}")
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
    if not all(0 <= d <= 6 for d in dice) or (0 in dice and dice != (0, 0)):
        raise ValueError(f"FIBS board: dice must be 1-6 (or both 0), got {dice}")
    may, opp_may = bool(field(37)), bool(field(38))
    score, opp_score = field(3), field(4)
    length = field(2)
    if length == _UNLIMITED:
        length = 0
    cube = field(36)
    if cube < 1 or cube & (cube - 1):
        raise ValueError(f"FIBS board: cube value must be a power of two, got {cube}")
    return FibsBoard(
        board=board,
        dice=(max(dice), min(dice)),
        cube_value=cube,
        mover_may_double=may if mover_is_player else opp_may,
        opponent_may_double=opp_may if mover_is_player else may,
        doubled=field(39) != 0,
        match_length=length,
        score=(score, opp_score) if mover_is_player == (field(39) != 0 or not gnubg) else (opp_score, score),
        crawford=bool(field(50)),
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
        """The reply (without newline, ASCII) to one line from gnubg; ``Error: ...`` when it cannot be read."""
        try:
            fb = parse_fibs_board(line)
            if game_result(fb.board) != 0:
                raise ValueError("the game in that position is already over")
            with self._lock:
                if fb.doubled:
                    return "take" if self._cube_advice(fb)[1] else "drop"
                if fb.dice == (0, 0):
                    return "double" if self._cube_advice(fb)[0] else "roll"
                return self._move(fb)
        except ValueError as exc:
            return _escape(f"Error: {exc}")

    def _move(self, fb: FibsBoard) -> str:
        from nard_ai.reports.analysis import score_plays

        ranked = self.agent.rank_plays(fb.board, fb.dice)
        try:
            cube_state = _cube_state(fb)
        except ValueError as exc:
            log.warning("match state not usable (%s); choosing the play for money", exc)
            cube_state = None
        best = score_plays(ranked, cube_state).afterstates[0]  # by MWC at the score in match play
        return format_gnubg_move(checker_moves(fb.board, best, fb.dice))

    def _cube_advice(self, fb: FibsBoard) -> tuple[bool, bool]:
        """(the side on roll should double, its opponent should take) - roll and take when unsure."""
        from nard_ai import cube

        try:
            d = cube.cube_decision(fb.board, _cube_state(fb), agent=self.agent)
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
        crawford=fb.crawford and fb.match_length > 0,
    )


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        player: ExternalPlayer = self.server.player  # type: ignore[attr-defined]
        log.info("gnubg connected from %s", self.client_address)
        buffer = b""
        while True:
            try:
                chunk = self.request.recv(4096)
            except OSError:
                break
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                # gnubg writes each line with its trailing NUL byte; bytes that are not UTF-8
                # survive as surrogates, so an error can quote them (escaped: replies are ASCII)
                line = raw.replace(b"\0", b"").decode("utf-8", errors="surrogateescape").strip()
                if not line:
                    continue
                reply = player.respond(line)
                log.debug("%s -> %s", _escape(line), reply)
                try:
                    self.request.sendall(reply.encode("ascii", errors="backslashreplace") + b"\n")
                except OSError:
                    return
        log.info("gnubg disconnected")


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def _bind(port: int, host: str) -> _Server:
    try:
        return _Server((host, port), _Handler)
    except (OSError, UnicodeError, OverflowError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise ValueError(f"cannot listen on {host}:{port}: {reason}") from None


def make_server(agent: Any, port: int, host: str = "127.0.0.1") -> socketserver.ThreadingTCPServer:
    """A TCP server (bound and listening, not yet serving) answering gnubg's external-player requests.

    Args:
        agent: the :class:`nard_ai.search.lookahead.Agent` that decides.
        port: TCP port; 0 picks a free one (``server.server_address[1]`` tells which).
        host: address to listen on.

    Raises:
        ValueError: ``cannot listen on HOST:PORT: <reason>`` (a port in use, a bad address).
    """
    server = _bind(port, host)
    server.player = ExternalPlayer(agent)  # type: ignore[attr-defined]
    return server


def serve_external(port: int, host: str = "127.0.0.1", checkpoint: str | None = None, ply: int = 0) -> None:
    """Serve gnubg's external-player protocol until interrupted.

    The address is bound before the network loads, and the port actually
    bound (port 0: one the system picks) is logged with the gnubg command.

    Raises:
        ValueError: when ``host:port`` cannot be bound or the agent cannot be built.
        FileNotFoundError: on a missing checkpoint.
    """
    from nard_ai.agents import load_agent

    server = _bind(port, host)
    with server:
        server.player = ExternalPlayer(load_agent(checkpoint, ply=ply))  # type: ignore[attr-defined]
        bound = server.server_address[1]
        log.info("external player on %s:%d; in gnubg: set player 1 external %s:%d", host, bound, host, bound)
        server.serve_forever()
