"""The Universal Backgammon Interface (UBGI) v0.2: the engine side, over a pair of text streams.

UBGI is a line protocol between a *controller* (a GUI, a bot framework, an
engine-duel tool) and an engine, in the manner of chess's UCI. The version
served here is **UBGI v0.2** as specified in ``docs/ubgi-v0.2-spec.md`` of
the ``bungogood/bgci`` repository (the reference dueller; 2026), which
grew out of Øystein Schønning-Johansen's UBGI draft 0.01
(``oysteijo/Universal-Backgammon-Interface``). ``nard ubgi``
(:mod:`nard_ai.interfaces.commands.ubgi`) runs :class:`UbgiEngine` on
stdin/stdout.

Commands (controller to engine) and replies
-------------------------------------------
One command a line, keywords case-sensitive, tokens separated by blanks.
Replies are written one a line, each flushed at once. A command with no
reply in the table is silent when it succeeds.

=================================  ==========================================
command                            reply
=================================  ==========================================
``ubgi``                           ``id name nard_ai``, ``id author ...``,
                                   ``id version ...``, ``proto 0.2``, one
                                   ``key`` line per setting, ``ubgiok``
``isready``                        ``readyok`` once the network is loaded
``newgame``                        (none) forgets the position and dice
``position gnubgid ID``            (none) ``ID`` is a gnubg Position ID or
                                   ``PositionID:MatchID``
``position xgid XGID``             (none) an XGID, ``XGID=`` prefix optional
``dice D1 D2``                     (none) the roll, each die 1..6
``go`` / ``go chequer``            ``bestmove PLAY`` (``pass``: no legal play)
``go cube``                        ``bestcube double|nodouble``; ``bestcube
                                   take|pass`` when a double awaits the answer
``go turn``                        ``bestturn cube=double|nodouble move=PLAY``
``set KEY VALUE``                  (none)
``get KEY``                        ``value KEY VALUE``
``keys``                           one ``key`` line per setting
``quit``                           (none) the engine stops reading and exits
``stop``                           (none) nothing runs in the background
=================================  ==========================================

Before each ``bestmove`` and ``bestturn`` the engine writes one optional
``info`` line (spec section 4): ``info depth N score S time_ms T pv PLAY``,
``N`` the UBGI ply, ``S`` the ranking value of the play for the side on roll
(cubeless equity, points per game, in money play; in match play the cubeless
match-winning chance as normalised equity per unit cube, the ``emg`` of
:func:`nard_ai.reports.analysis.score_plays`), ``T`` milliseconds.

``PLAY`` is one ``from/to`` token per checker moved by one die, in the side on
roll's numbering (24 .. 1), ``bar`` and ``off`` spelled out, highest source
first, no ``*`` and no ``(2)``: ``bestmove 24/18 18/13`` for a 6-5 played with
one checker, ``bestmove 8/5 8/5 6/3 6/3`` for a 3-3 (spec section 6; the
leaping checker written out as UBGI draft 0.01 asks).

Settings (``keys``; the line format of spec section 4)::

    key engine.ply int 1..3 1 root-inclusive checker-play depth; UBGI 1 = nard/gnubg 0-ply
    key engine.filter enum tiny|narrow|normal|large|huge normal ! move filter of deeper searches
    key game.variant enum backgammon backgammon standard backgammon

**engine.ply** is UBGI's *root-inclusive* depth (spec section 3): UBGI ply 1
generates every legal play and values each afterstate with the network, no
lookahead; each further ply averages over the opponent's 21 rolls and best
replies. That is one more than gnubg's numbering, which nard_ai uses
everywhere else (``--ply``): **UBGI ply = nard/gnubg ply + 1**, so
``engine.ply 1`` is ``nard hint --ply 0``, ``2`` is ``--ply 1``, ``3`` is
``--ply 2`` (:data:`nard_ai.search.filters.MAX_PLY`). The same agent makes the
cube decisions (its cubeless probabilities at that depth). **engine.filter**
is gnubg's move-filter preset of 1- and 2-ply (nard numbering) searches
(:data:`nard_ai.search.filters.MOVE_FILTERS`); a minor option (``!``).

Errors (spec section 5): ``error CODE DETAIL``, and the engine reads on:

=================  ==========================================================
code               when
=================  ==========================================================
``bad_command``    an unknown command, a command with missing or surplus
                   words, a line longer than :data:`MAX_LINE_BYTES` bytes
``bad_value``      an ID that does not decode (the decoder's reason
                   follows), a die not 1..6, a setting value outside its
                   range, a cube or score no game can have
``bad_state``      ``go`` without a position (``missing position``) or,
                   for a play, without dice (``missing dice``); a finished
                   game (its board, or its ID's game state over, resigned or
                   dropped); a resignation awaiting its answer; a play asked
                   while a double awaits its answer (the words of
                   ``nard_ai.formats.match_id.not_playing``, as ``nard hint``
                   and HTTP); the network failing to load
``unsupported``    a position format other than ``gnubgid``/``xgid``, a
                   setting key this engine does not have, a ``go`` mode
                   other than ``chequer``, ``cube``, ``turn``
=================  ==========================================================

Where the specification is silent, these choices (UCI's conventions where
they apply) are made, and ``README.md`` ("UBGI") lists them too:

1. **Perspective.** A Position ID lists the side on roll first, so every
   position is read from the side on roll's view, and moves are in its
   numbering. A ``PositionID:MatchID`` or an XGID also sets the cube, the
   match score, Crawford, Jacoby/beavers (XGID) and the dice; a bare Position
   ID means money play, cube 1 centred.
2. **Dice.** A ``position`` that is refused leaves no position and no dice (a ``go``
   then answers ``bad_state missing position``, never for the position before), and a
   refused ``dice`` leaves no dice (a ``go`` for a play answers ``bad_state missing dice``).
   ``position`` replaces the dice with the ID's own (none for a bare
   Position ID or an ID before the roll); ``dice`` after it sets them. Dice
   are given larger or smaller first alike.
3. **go cube** is the decision of the side on roll *before* it rolls, so it
   does not use the dice. ``bestcube double`` when the proper action is
   double/take or double/pass (:func:`nard_ai.cube.cube_decision`, the same as
   ``nard cube``'s ``action``); ``nodouble`` for no double, too good (play on
   for the gammon), and when the side on roll may not double (the opponent
   owns the cube, the Crawford game, a dead cube). When the ID says a double
   awaits its answer (a Match ID's "double offered", an XGID's ``D`` dice) the
   engine answers for the side that must respond: ``bestcube take`` or
   ``bestcube pass`` (take when double/take is no better than double/pass for
   the doubler), beyond v0.2's two words, as draft 0.01's ``take``/``drop``.
4. **go turn** is the whole turn: the cube decision before the roll (as
   ``go cube``) and the play of the given dice, so it needs dice.
5. **The play** is the best by cubeless equity in money play and by cubeless
   match-winning chance at the score in match play: the top line of
   ``nard hint`` at the same ply (:func:`nard_ai.reports.analysis.score_plays`).
6. **Before ubgi.** Commands are served before the ``ubgi`` handshake too (as
   UCI engines do); the network loads on the first ``isready`` or ``go``.
7. **Compatibility** (spec section 8): v0.1's ``setoption name KEY value
   VALUE`` is read as ``set KEY VALUE``, and ``go role chequer|cube|turn``
   (the bgci dueller's v0.1 form) as ``go chequer|cube|turn``.
8. **Limits.** A line is at most :data:`MAX_LINE_BYTES` (4096) bytes before
   its newline (characters, on a text stream), as the external-player server
   (:mod:`nard_ai.interfaces.external`). A longer one is answered ``error
   bad_command line longer than 4096 bytes`` and the rest of it, up to its
   newline, is dropped. Bytes that are not UTF-8 are quoted escaped
   (``\\xff``); replies are ASCII. The end of input is ``quit``. Every
   request is bounded: at most 3 UBGI plies over at most the legal plays of
   one roll.
9. **Failures.** A failure of the engine itself (a bug) is logged with its
   traceback on stderr and answered ``error bad_state internal error
   (TYPE)``; the engine reads on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from nard_ai.core.board import game_result
from nard_ai.formats.match_id import not_playing
from nard_ai.formats.position import is_xgid
from nard_ai.interfaces.external import checker_moves, format_gnubg_move
from nard_ai.search.filters import MAX_PLY, MOVE_FILTERS

__all__ = [
    "UbgiEngine",
    "UbgiError",
    "serve_ubgi",
    "format_ubgi_play",
    "PROTOCOL_VERSION",
    "MAX_LINE_BYTES",
    "ERROR_CODES",
    "MAX_UBGI_PLY",
]

log = logging.getLogger(__name__)

PROTOCOL_VERSION = "0.2"
"""The UBGI version served (``proto 0.2``)."""
MAX_LINE_BYTES = 4096
"""The longest command line read, in bytes before the newline (characters on a text stream)."""
ERROR_CODES = ("bad_command", "bad_value", "bad_state", "unsupported")
"""The four error codes of UBGI v0.2, section 5."""
MAX_UBGI_PLY = MAX_PLY + 1
"""The deepest ``engine.ply`` (UBGI's root-inclusive numbering): nard's deepest search plus one."""

ENGINE_NAME = "nard_ai"
ENGINE_AUTHOR = "the nard_ai developers"
_VARIANTS = ("backgammon",)
_GO_MODES = ("chequer", "cube", "turn")


class UbgiError(Exception):
    """A request the engine answers with ``error CODE DETAIL``.

    Args:
        code: one of :data:`ERROR_CODES`.
        detail: the sentence after the code (ASCII-escaped when written).
    """

    def __init__(self, code: str, detail: str) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"UBGI error code must be one of {ERROR_CODES}, got {code!r}")
        super().__init__(f"{code} {detail}")
        self.code = code
        self.detail = detail

    @property
    def line(self) -> str:
        """The reply line, ``error CODE DETAIL``, in printable ASCII."""
        return _escape(f"error {self.code} {self.detail}")


def _escape(text: str) -> str:
    """``text`` in printable ASCII: ``\\xNN`` for a byte that was not UTF-8 (``surrogateescape``), else ``ascii()``."""
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 32 <= code < 127:
            out.append(ch)
        else:
            out.append(ascii(ch)[1:-1])
    return "".join(out)


def _quote(text: str, limit: int = 40) -> str:
    """``'text'`` for an error message, cut at ``limit`` characters."""
    return "'" + (text if len(text) <= limit else text[:limit] + "...") + "'"


def format_ubgi_play(board: np.ndarray, afterstate: np.ndarray, dice: tuple[int, int]) -> str:
    """A play as UBGI's ``bestmove`` payload: one ``from/to`` per die, ``bar``/``off``, ``pass`` for none.

    Args:
        board: ``(26,)`` int8 before the play, side on roll's view.
        afterstate: ``(26,)`` int8 after it, same view (not swapped).
        dice: the roll, two integers 1..6.

    Returns:
        For example ``"24/18 18/13"`` (a checker moved by both dice is written
        leg by leg), ``"bar/22 13/11"``, ``"6/off 5/off"``, or ``"pass"``.

    Raises:
        ValueError: when no sequence of single checker moves of ``dice`` gives ``afterstate``.
    """
    moves = checker_moves(board, afterstate, (int(dice[0]), int(dice[1])))
    return format_gnubg_move(moves) if moves else "pass"


@dataclass
class _Position:
    """The position of the last ``position`` command, side on roll's view."""

    text: str
    board: np.ndarray
    state: Any  # a nard_ai.formats.match_id.MatchState, or None for a bare Position ID
    cube: Any  # the nard_ai.cube.CubeState of the side on roll


def _key_lines() -> list[str]:
    filters = "|".join(MOVE_FILTERS)
    return [
        f"key engine.ply int 1..{MAX_UBGI_PLY} 1 root-inclusive checker-play depth; UBGI 1 = nard/gnubg 0-ply",
        f"key engine.filter enum {filters} normal ! move filter of deeper searches (gnubg's presets)",
        f"key game.variant enum {'|'.join(_VARIANTS)} backgammon standard backgammon",
    ]


class UbgiEngine:
    """One UBGI session: reads command lines, answers them with the agent's decisions.

    The engine holds no globals: its position, dice and settings live in the
    instance, and its agents come from ``agent_factory``.

    Args:
        agent_factory: ``(nard_ply, filters) -> Agent``: builds the
            :class:`nard_ai.search.lookahead.Agent` for a nard/gnubg ply
            (0..2) and a move-filter preset name; called at the first
            ``isready`` or ``go`` after a setting changed, and its agent
            reused. ``None``: the default network
            (:func:`nard_ai.agents.load_agent`).
        ply: the starting ``engine.ply``, UBGI's root-inclusive numbering (1..3).
        filters: the starting ``engine.filter``, a preset name.
        version: the ``id version`` line's text.

    Raises:
        ValueError: on a ``ply`` or ``filters`` outside their range.
    """

    def __init__(
        self,
        agent_factory: Callable[[int, str], Any] | None = None,
        ply: int = 1,
        filters: str = "normal",
        version: str = "",
    ) -> None:
        if isinstance(ply, bool) or not isinstance(ply, int) or not 1 <= ply <= MAX_UBGI_PLY:
            raise ValueError(
                f"engine.ply must be 1..{MAX_UBGI_PLY} (UBGI's root-inclusive numbering), got {ply!r}"
            )
        if filters not in MOVE_FILTERS:
            raise ValueError(f"engine.filter must be one of {', '.join(MOVE_FILTERS)}, got {filters!r}")
        self._factory = agent_factory if agent_factory is not None else _default_factory
        self.settings: dict[str, Any] = {
            "engine.ply": ply,
            "engine.filter": filters,
            "game.variant": "backgammon",
        }
        self.version = version or _package_version()
        self.position: _Position | None = None
        self.dice: tuple[int, int] | None = None
        self.finished = False
        self._agent: Any = None
        self._agent_key: tuple[int, str] | None = None

    # ------------------------------------------------------------------ streams

    def run(self, stdin: IO, stdout: IO) -> int:
        """Serve commands from ``stdin`` until ``quit`` or the end of input; returns 0.

        Args:
            stdin: a text or binary stream (bytes are decoded as UTF-8 with
                ``surrogateescape``, so a bad byte is quoted, not fatal).
            stdout: a text stream; each reply line is flushed at once.
        """
        for line in _bounded_lines(stdin):
            replies = [line.line] if isinstance(line, UbgiError) else self.handle(line)
            for reply in replies:
                stdout.write(reply + "\n")
                stdout.flush()
            if self.finished:
                break
        self.finished = True
        return 0

    # ------------------------------------------------------------------ commands

    def handle(self, line: str) -> list[str]:
        """The reply lines (ASCII, no newlines) to one command line; ``[]`` for a silent command.

        Never raises: a request that cannot be served is one ``error CODE
        DETAIL`` line (module docstring), a bug ``error bad_state internal
        error (TYPE)`` with its traceback logged. ``line`` is a ``str``; bytes
        are decoded as :meth:`run` decodes them (UTF-8, a bad byte quoted), and
        anything else is ``error bad_command`` naming its type.
        """
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).decode("utf-8", errors="surrogateescape")
        if not isinstance(line, str):
            return [UbgiError("bad_command", f"a command line is a str, got {type(line).__name__}").line]
        words = line.split()
        if not words:
            return []
        try:
            return self._dispatch(words)
        except UbgiError as exc:
            return [exc.line]
        except Exception as exc:  # a bug: keep serving, say so, log it
            log.exception("cannot answer %s", _escape(line[:200]))
            return [f"error bad_state internal error ({type(exc).__name__}); see the engine's stderr"]

    def _dispatch(self, words: list[str]) -> list[str]:
        command, args = words[0], words[1:]
        if command == "ubgi":
            self._no_args(command, args)
            return [
                f"id name {ENGINE_NAME}",
                f"id author {ENGINE_AUTHOR}",
                f"id version {self.version}",
                f"proto {PROTOCOL_VERSION}",
                *_key_lines(),
                "ubgiok",
            ]
        if command == "isready":
            self._no_args(command, args)
            self._ensure_agent()
            return ["readyok"]
        if command == "newgame":
            self._no_args(command, args)
            self.position, self.dice = None, None
            return []
        if command == "position":
            self.position, self.dice = None, None  # a refused position leaves none (not the one before)
            self._set_position(args)
            return []
        if command == "dice":
            self.dice = None  # a refused roll leaves none (not the one before)
            self.dice = _parse_dice(args)
            return []
        if command == "go":
            return self._go(args)
        if command == "set":
            if len(args) < 2:
                raise UbgiError("bad_command", "expected: set <key> <value>")
            self._set(args[0], " ".join(args[1:]))
            return []
        if command == "setoption":  # v0.1 (spec section 8): setoption name KEY value VALUE
            if len(args) < 4 or args[0] != "name" or args[2] != "value":
                raise UbgiError("bad_command", "expected: setoption name <key> value <value>")
            self._set(args[1], " ".join(args[3:]))
            return []
        if command == "get":
            if len(args) != 1:
                raise UbgiError("bad_command", "expected: get <key>")
            return [f"value {args[0]} {self._get(args[0])}"]
        if command == "keys":
            self._no_args(command, args)
            return _key_lines()
        if command == "quit":
            self._no_args(command, args)
            self.finished = True
            return []
        if command == "stop":
            self._no_args(command, args)
            return []  # every request is answered before the next line is read: nothing to stop
        raise UbgiError("bad_command", f"unknown command {_quote(command)}")

    @staticmethod
    def _no_args(command: str, args: list[str]) -> None:
        if args:
            raise UbgiError("bad_command", f"'{command}' takes no arguments, got {_quote(' '.join(args))}")

    # ------------------------------------------------------------------ settings

    def _set(self, key: str, value: str) -> None:
        if key == "engine.ply":
            if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_UBGI_PLY:
                raise UbgiError("bad_value", f"engine.ply must be 1..{MAX_UBGI_PLY}, got {_quote(value)}")
            self.settings[key] = int(value)
        elif key == "engine.filter":
            if value not in MOVE_FILTERS:
                raise UbgiError(
                    "bad_value", f"engine.filter must be one of {'|'.join(MOVE_FILTERS)}, got {_quote(value)}"
                )
            self.settings[key] = value
        elif key == "game.variant":
            if value not in _VARIANTS:
                raise UbgiError(
                    "bad_value", f"game.variant must be {'|'.join(_VARIANTS)}, got {_quote(value)}"
                )
            self.settings[key] = value
        else:
            raise UbgiError("unsupported", f"key {_quote(key)} (keys: {', '.join(self.settings)})")

    def _get(self, key: str) -> str:
        if key not in self.settings:
            raise UbgiError("unsupported", f"key {_quote(key)} (keys: {', '.join(self.settings)})")
        return str(self.settings[key])

    def _ensure_agent(self) -> Any:
        key = (self.settings["engine.ply"] - 1, self.settings["engine.filter"])
        if self._agent is None or self._agent_key != key:
            try:
                self._agent = self._factory(*key)
            except (ValueError, FileNotFoundError, OSError) as exc:
                raise UbgiError("bad_state", f"the engine cannot load its network: {exc}") from None
            self._agent_key = key
        return self._agent

    # ------------------------------------------------------------------ position and dice

    def _set_position(self, args: list[str]) -> None:
        from nard_ai.cube.state import cube_state_from_match
        from nard_ai.formats.position import parse_position

        if not args:
            raise UbgiError("bad_command", "expected: position gnubgid <ID> | position xgid <XGID>")
        kind = args[0]
        if kind not in ("gnubgid", "xgid"):
            raise UbgiError(
                "unsupported", f"position format {_quote(kind)} (this engine reads gnubgid and xgid)"
            )
        if len(args) != 2:
            raise UbgiError(
                "bad_command", f"expected: position {kind} <{'ID' if kind == 'gnubgid' else 'XGID'}>"
            )
        text = args[1]
        xgid = is_xgid(text)
        if kind == "gnubgid" and xgid:
            raise UbgiError("bad_value", f"{_quote(text)} is an XGID: send it as position xgid")
        if kind == "xgid" and not xgid:
            raise UbgiError("bad_value", f"{_quote(text)} is not an XGID (XGID=<position>:<9 fields>)")
        try:
            board, state = parse_position(text)
        except ValueError as exc:
            raise UbgiError("bad_value", f"{kind} {_quote(text)}: {exc}") from None
        try:
            cube = cube_state_from_match(state)
        except ValueError as exc:
            raise UbgiError("bad_value", f"{kind} {_quote(text)}: the cube or score: {exc}") from None
        self.position = _Position(text=text, board=board, state=state, cube=cube)
        dice = (0, 0) if state is None else tuple(int(d) for d in state.dice)
        self.dice = None if dice == (0, 0) else (max(dice), min(dice))

    # ------------------------------------------------------------------ decisions

    def _go(self, args: list[str]) -> list[str]:
        if args[:1] == ["role"]:  # v0.1: go role chequer|cube|turn
            args = args[1:]
            if not args:
                raise UbgiError("bad_command", "expected: go role chequer|cube|turn")
        if len(args) > 1:
            raise UbgiError("bad_command", f"expected: go [chequer|cube|turn], got {_quote(' '.join(args))}")
        mode = args[0] if args else "chequer"
        if mode not in _GO_MODES:
            raise UbgiError(
                "unsupported", f"go {_quote(mode)} (this engine answers go chequer, go cube, go turn)"
            )
        position = self._live_position()
        if mode == "cube":
            agent = self._ensure_agent()
            if position.state is not None and position.state.double_offered:
                return [f"bestcube {self._answer_double(position, agent)}"]
            return [f"bestcube {self._cube_action(position, agent)}"]
        reason = not_playing(position.state)
        if reason:  # a double awaiting its answer: the doubled side takes or passes first
            raise UbgiError("bad_state", reason)
        if self.dice is None:
            raise UbgiError("bad_state", "missing dice (send dice <d1> <d2>)")
        agent = self._ensure_agent()
        if mode == "turn":
            cube_word = self._cube_action(position, agent)
            info, play = self._best_play(position, agent)
            return [info, f"bestturn cube={cube_word} move={play}"]
        info, play = self._best_play(position, agent)
        return [info, f"bestmove {play}"]

    def _live_position(self) -> _Position:
        """The position set, refused (``bad_state``) when none is, its game is over, or its ID's
        state leaves no decision to make (:func:`nard_ai.formats.match_id.not_playing`, the check
        ``nard hint``/``cube`` and the HTTP endpoints share; a double awaiting its answer passes,
        ``go cube`` answers it)."""
        position = self.position
        if position is None:
            raise UbgiError("bad_state", "missing position (send position gnubgid <ID>)")
        if game_result(position.board) != 0:
            raise UbgiError("bad_state", "the game in this position is over")
        reason = not_playing(position.state, double_ok=True)
        if reason:
            raise UbgiError("bad_state", reason)
        return position

    @staticmethod
    def _decision(position: _Position, agent: Any):
        from nard_ai.cube import cube_decision

        try:
            return cube_decision(position.board, position.cube, agent=agent)
        except ValueError as exc:
            raise UbgiError("bad_state", f"no cube decision in this position: {exc}") from None

    def _cube_action(self, position: _Position, agent: Any) -> str:
        """``double`` or ``nodouble`` for the side on roll, before its roll (as ``nard cube``'s action)."""
        d = self._decision(position, agent)
        return "double" if d.cube_available and d.action in ("double_take", "double_pass") else "nodouble"

    def _answer_double(self, position: _Position, agent: Any) -> str:
        """``take`` or ``pass`` for the side that was doubled (the board is the doubler's view)."""
        return "take" if self._decision(position, agent).taker_takes else "pass"

    def _best_play(self, position: _Position, agent: Any) -> tuple[str, str]:
        """``(info line, play)`` of the best play of :attr:`dice` (``nard hint``'s top line)."""
        from nard_ai.reports.analysis import score_plays

        assert self.dice is not None
        start = time.perf_counter()
        try:
            ranked = agent.rank_plays(position.board, self.dice)
        except ValueError as exc:
            raise UbgiError("bad_state", f"no play in this position: {exc}") from None
        scored = score_plays(ranked, position.cube)
        play = format_ubgi_play(position.board, scored.afterstates[0], self.dice)
        ms = (time.perf_counter() - start) * 1000.0
        # the depth the best play was valued at (UBGI's root-inclusive numbering: nard's ply + 1),
        # less than engine.ply where the move filters left a single play (decided, as gnubg does)
        plies = getattr(scored, "plies", None)
        depth = self.settings["engine.ply"] if plies is None or not len(plies) else int(plies[0]) + 1
        info = f"info depth {depth} score {float(scored.emg[0]):.6f} time_ms {ms:.0f} pv {play}"
        return info, play


def _parse_dice(args: list[str]) -> tuple[int, int]:
    if len(args) != 2:
        raise UbgiError("bad_command", "expected: dice <d1> <d2> (two dice, e.g. dice 3 1)")
    dice = []
    for word in args:
        if not (word.isascii() and word.isdigit()) or not 1 <= int(word) <= 6:
            raise UbgiError("bad_value", f"each die must be 1..6, got {_quote(word)}")
        dice.append(int(word))
    return max(dice), min(dice)


def _bounded_lines(stream: IO) -> Iterator[str | UbgiError]:
    """The lines of ``stream`` without their newline, or a :class:`UbgiError` for one over the limit.

    Reads at most :data:`MAX_LINE_BYTES` + 1 units at a time, so a line without
    an end costs bounded memory: the rest of an over-long line is read and
    dropped up to its newline.
    """
    while True:
        piece = stream.readline(MAX_LINE_BYTES + 1)
        if not piece:
            return
        text = piece.decode("utf-8", errors="surrogateescape") if isinstance(piece, bytes) else piece
        ended = text.endswith("\n")
        body = text[:-1] if ended else text
        if len(piece) - (1 if ended else 0) > MAX_LINE_BYTES:
            while not ended:
                rest = stream.readline(65536)
                if not rest:
                    break
                ended = rest.endswith(b"\n") if isinstance(rest, bytes) else rest.endswith("\n")
            yield UbgiError("bad_command", f"line longer than {MAX_LINE_BYTES} bytes")
            continue
        yield body.rstrip("\r")


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nard_ai")
    except PackageNotFoundError:
        return "unknown"


def _default_factory(ply: int, filters: str) -> Any:
    from nard_ai.agents import load_agent

    return load_agent(None, ply=ply, filters=filters)


def serve_ubgi(
    stdin: IO,
    stdout: IO,
    checkpoint: str | None = None,
    ply: int = 1,
    filters: str = "normal",
) -> int:
    """Serve UBGI on two streams with a network agent until ``quit`` or the end of input.

    Args:
        stdin: commands, a text or binary stream.
        stdout: replies, a text stream.
        checkpoint: the network's checkpoint (``None``: the default network).
        ply: the starting ``engine.ply`` (UBGI numbering, 1..3).
        filters: the starting ``engine.filter`` preset.

    Returns:
        0, the exit status.

    Raises:
        ValueError: on a ``ply`` or ``filters`` outside their range.
    """
    from nard_ai.agents import load_agent

    def factory(nard_ply: int, preset: str) -> Any:
        return load_agent(checkpoint, ply=nard_ply, filters=preset)

    return UbgiEngine(factory, ply=ply, filters=filters).run(stdin, stdout)
