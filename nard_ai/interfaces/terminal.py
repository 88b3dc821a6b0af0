"""A game against the engine in the terminal: the logic behind ``nard play``.

Input and output are injected (``read(prompt) -> str`` and ``write(text)``),
so a session runs the same under a terminal (``input``/``print``) and under
a test that scripts the lines. Randomness is an explicit
``np.random.Generator``.

The game
--------
A money game (RULES.md §1-6, the standard rules) between *you* (seat 0) and
the engine (seat 1). The board is always drawn from your side (you are
``X``, moving from your 24-point down to your 1-point) with pip counts, at
the start of each of your turns and at the end of the game. The opening
roll (RULES.md §2) decides who starts unless ``first`` says otherwise.

Your turn: type the play in standard notation (``24/18 13/11*``,
``bar/22``, ``8/2(2)``, ``6/off``; ``-`` when nothing can be played); a
play that is not legal is refused with the reason from
:func:`nard_ai.formats.notation.parse_play`, and you type again. A roll
with a single legal play is played for you. Commands: ``hint`` (the
engine's three best plays; at a cube prompt, its cube advice), ``board``
(draw it again), ``resign`` (below), ``help``, ``quit``; a word that is none
of them is answered with that list. End of input (Ctrl-D) or Ctrl-C ends the
session cleanly.

Resigning: ``resign`` (a single game), ``resign single``, ``resign gammon``,
``resign backgammon`` (or ``resign s``/``n``, ``g``, ``b``; gnubg's words,
``normal`` too) at your move prompt, and with the cube at your roll/double
prompt and when the engine has doubled you. It is worth 1, 2 or 3 points
times the cube value, scored as a finished game (:func:`nard_ai.cube.finished_points`:
under the Jacoby rule a gammon or backgammon counts single while the cube is
centred). The engine accepts by gnubg's rule (``ComputerTurn`` in gnubg's
``play.c``: it agrees when ``rEqAfter - rEqBefore < 1e-6``, the resigner's
equity after the resignation against playing on): it accepts when accepting
loses it nothing in equity, i.e. when the points are at least its own
equity playing on (less 1e-6), see :meth:`_Session.engine_equity`; then
the game ends with those points to it. Otherwise it declines with that
equity, and play goes on (a resignation of less than the game is already
lost by is declined by the same rule).

The engine offers to resign too, as gnubg's computer player does (``ComputerTurn`` in gnubg's ``play.c``,
``getResignation`` in its ``eval.c``): at its turn, before its cube decision and roll, it values the
position it is on roll in by the functions it weighs your resignations with
(:meth:`_Session.engine_equity`: cubeful with the cube, else cubeless times the cube value; at its ply)
and offers the smallest resignation whose points equal that equity within 1e-6 either way: resigning
loses it nothing, and accepting loses you nothing by its estimate (:func:`resignation_to_offer`). The
board is drawn with the offer and that equity, and ``Accept? [y/n]`` asks: ``y`` ends the game with those
points to you (scored as a finished game), ``n`` plays on; other answers ask again. In practice it offers
only where the result is certain: the bear-off database's values are exact, the sanity rules zero the
gammons and backgammons a position rules out, and the network's chances where none exists are far below
1e-6. Where this differs from gnubg: gnubg weighs resigning only in non-contact positions, cubeless at
0 ply; here at every turn, at the engine's ply (one valuation, less than its move costs). A declined
offer is not made again in that game, at that value or below (gnubg's ``nResign >
fResignationDeclined``), while gnubg forgets the declined value at the game's next move (its
``ApplyMoveRecord`` clears it) and so offers again on its next turn. With its roll already given (a start
roll, the opening) the engine values the position before the roll, as gnubg does.

A game can start from a given position (``start``) with its cube
(``start_cube``: value and owner) and its roll (``start_dice``): the side on
roll then plays that roll at once, with no cube decision before it.

With ``cube=True`` the doubling cube is in play (RULES.md §8; no beavers;
the Jacoby rule only with ``jacoby=True``, the default off as
:class:`~nard_ai.cube.CubeState`'s and ``nard cube``'s without an ID that
turns it on), said in one line at the start of the session: before rolling,
the player who may double (cube centred or owned) is asked (you:
``roll``/``double``), the engine doubles when
:func:`nard_ai.cube.cube_decision` says "double" (it plays on when it is too
good), and it takes or passes your double by the same model (it takes when
double/take is worth less to you than double/pass), both under the rules in
play. Points = result (1, 2, 3; RULES.md §6) x the cube value; under the
Jacoby rule a gammon or backgammon counts as a single game while the cube is
centred (:func:`nard_ai.cube.finished_points`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nard_ai.core.board import game_result, starting_board, swap_sides, validate_board, validate_dice
from nard_ai.core.game import CENTERED, opening_roll, roll_dice
from nard_ai.core.movegen import legal_plays
from nard_ai.cube import CubeState, cube_decision, finished_points
from nard_ai.formats.ascii import render_board
from nard_ai.formats.notation import parse_play, play_notation
from nard_ai.play.cube_policy import OWNER_BY_CODE, owner_codes, owner_seat, taken_cube
from nard_ai.reports.analysis import cube_action_text
from nard_ai.search.valuation import agent_value

__all__ = ["HUMAN", "ENGINE", "FIRST_CHOICES", "SessionResult", "play_session", "cube_rules_text"]

HUMAN, ENGINE = 0, 1
FIRST_CHOICES = ("roll", "human", "engine")
QUIT_WORDS = ("q", "quit", "exit", "bye")
HELP_TEXT = (
    "Type your play in standard notation: 24/18 13/11*  bar/22  8/2(2)  6/off  (- when you cannot move).\n"
    "Points are numbered from your side: you move from 24 down to 1 and bear off past 1.\n"
    "Commands: hint (the engine's best plays), board (draw the board again), help, quit,\n"
    "resign [single|gammon|backgammon] (or resign s, g, b; the engine accepts when the points are\n"
    "at least its equity playing on)."
)
CUBE_HELP = (
    "r (or Enter) rolls the dice; d doubles the stakes; hint asks the engine; resign [single|gammon|backgammon] "
    "offers to resign; quit ends the session."
)
COMMANDS_TEXT = "the commands are hint, board, resign, help and quit"
RESIGN_WORDS = {"": 1, "s": 1, "single": 1, "n": 1, "normal": 1, "g": 2, "gammon": 2, "b": 3, "backgammon": 3}
"""``resign WORD`` -> the result resigned (1 single, 2 gammon, 3 backgammon; gnubg's ``normal`` and its
one-letter ``n``/``g``/``b`` too); no word is a single game, as in gnubg."""
RESULT_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
RESIGN_TOLERANCE = 1e-6
"""gnubg's ``max_gain``: the engine accepts when its equity playing on exceeds the resignation's points by
less than this (``rEqAfter - rEqBefore < max_gain`` in gnubg's ``ComputerTurn``)."""
_WORDS = re.compile(r"[A-Za-z]+(\s+[A-Za-z]+)*")  # words only: a command, never a play (plays have digits)


def parse_resign(text: str) -> int | None:
    """The result a ``resign`` command offers (1, 2, 3), or ``None`` when ``text`` is not one.

    Raises:
        ValueError: on ``resign`` with a word that is not a result (``resign triple``, ``resign 7``),
            with the message to show.
    """
    words = text.lower().split()
    if not words or words[0] != "resign":
        return None
    word = " ".join(words[1:])
    if word not in RESIGN_WORDS:
        raise ValueError(
            f"cannot resign {word!r}: type resign (a single game), resign gammon or resign backgammon "
            "(or resign s, g, b)"
        )
    return RESIGN_WORDS[word]


def cube_rules_text(jacoby: bool) -> str:
    """The line that opens a session with the cube: which money-play rules apply."""
    if jacoby:
        return (
            "Money game with the doubling cube, the Jacoby rule (a gammon or backgammon counts as a single "
            "game until the cube is turned) and no beavers."
        )
    return (
        "Money game with the doubling cube, without the Jacoby rule (a gammon or backgammon counts in full "
        "with the cube centred too) and without beavers."
    )


def resignation_to_offer(equity: float, points: Callable[[int], int]) -> int | None:
    """The resignation (1 single, 2 gammon, 3 backgammon) the engine offers with ``equity`` playing on
    (points, from its side), or ``None``.

    gnubg's rule (``getResignation`` in eval.c: the result whose loss is worth exactly the equity playing
    on): the smallest ``r`` with ``points(r)`` within :data:`RESIGN_TOLERANCE` of ``-equity`` either way,
    i.e. resigning loses the engine nothing (``-points(r) >= equity - 1e-6``, the rule it accepts your
    resignations by) and accepting loses you nothing (``points(r) >= -equity - 1e-6``). ``points``: the
    points of a game lost by ``r`` at the cube (:meth:`_Game.points`; under the Jacoby rule with the cube
    centred all three are 1, and the smallest, a single game, is offered, as gnubg does).
    """
    for result in (1, 2, 3):
        if abs(points(result) + equity) <= RESIGN_TOLERANCE:
            return result
    return None


@dataclass(frozen=True)
class SessionResult:
    """What a session ended with.

    Attributes:
        games: games finished.
        points: ``(you, engine)`` points won over the session.
        ended: ``"done"`` (no further game wanted, or ``max_games`` played),
            ``"quit"`` (a quit command), ``"eof"`` (end of input) or
            ``"interrupt"`` (Ctrl-C).
    """

    games: int
    points: tuple[int, int]
    ended: str


class _Resigned(Exception):
    """The engine accepted your resignation: the game ends with ``points`` to it."""

    def __init__(self, points: int) -> None:
        super().__init__(points)
        self.points = points


class _EndSession(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Game:
    """One game in progress: the board from the side on roll's view, and the cube (seat or None)."""

    board: np.ndarray
    on_roll: int
    cube_value: int = 1
    cube_owner: int = CENTERED  # the drivers' convention (nard_ai.play.cube_policy): CENTERED or a seat
    jacoby: bool = False
    declined: int = 0  # the largest resignation the engine offered and you declined in this game

    def human_view(self) -> np.ndarray:
        return self.board if self.on_roll == HUMAN else swap_sides(self.board)

    def cube_state(self, seat: int | None = None) -> CubeState:
        """The cube from the view of ``seat`` on roll (default: the side on roll; money play, the
        session's Jacoby rule)."""
        owner = OWNER_BY_CODE[int(owner_codes(self.cube_owner, self.on_roll if seat is None else seat))]
        return CubeState(value=self.cube_value, owner=owner, jacoby=self.jacoby)

    def points(self, result: int) -> int:
        """The points of a game won by ``result`` (1 single, 2 gammon, 3 backgammon) at this cube."""
        return int(finished_points(result, self.cube_value, self.cube_owner == CENTERED, self.jacoby))

    def may_double(self) -> bool:
        return self.cube_state().can_double


class _Session:
    def __init__(
        self,
        agent,
        rng: np.random.Generator,
        read,
        write,
        name: str,
        cube: bool,
        start_cube: CubeState | None = None,
        start_dice: tuple[int, int] | None = None,
        jacoby: bool = False,
    ) -> None:
        self.agent, self.rng, self.write, self.name, self.cube = agent, rng, write, name, cube
        self._read = read
        self.start_cube, self.start_dice = start_cube, start_dice
        self.jacoby = jacoby
        self._last_cube: tuple[tuple[bytes, str], object] | None = None

    def decide_cube(self, board: np.ndarray, state: CubeState):
        """:func:`~nard_ai.cube.cube_decision` of ``board`` (the side on roll's view) at ``state`` by the
        engine's agent; the last answer is kept, so the engine's turn, which asks it for its resignation
        check and then for its double, searches once (the agent is deterministic: the same board and cube
        give the same decision)."""
        key = (np.ascontiguousarray(board).tobytes(), repr(state))
        if self._last_cube is None or self._last_cube[0] != key:
            self._last_cube = (key, cube_decision(board, state, agent=self.agent))
        return self._last_cube[1]

    # -- input

    def ask(self, prompt: str) -> str:
        """One line of input, stripped; end of input, Ctrl-C and quit words end the session."""
        try:
            line = self._read(prompt)
        except EOFError:
            raise _EndSession("eof") from None
        except KeyboardInterrupt:
            raise _EndSession("interrupt") from None
        text = line.strip()
        if text.lower() in QUIT_WORDS:
            raise _EndSession("quit")
        return text

    # -- output

    def show(self, game: _Game, dice: tuple[int, int] | None = None) -> None:
        self.write(render_board(game.human_view(), dice))
        if self.cube or game.cube_value > 1:  # a turned cube from a start position counts even without --cube
            if game.cube_owner == CENTERED:
                self.write(f" Cube: {game.cube_value}, centred")
            else:
                owner = "you" if game.cube_owner == HUMAN else self.name
                self.write(f" Cube: {game.cube_value}, owned by {owner}")

    def hint(self, board: np.ndarray, dice: tuple[int, int]) -> None:
        ranked = self.agent.rank_plays(board, dice)
        for i in range(min(3, len(ranked))):
            play = play_notation(board, ranked.afterstates[i], dice) or "-"
            self.write(
                f"  {i + 1}. {play:<22} equity {ranked.equity[i]:+.3f}  win {100 * ranked.probs[i][0]:.1f}%"
            )

    def cube_hint(self, game: _Game, doubled: bool) -> None:
        """The engine's cube advice for you: before your roll (``doubled`` false) or on its double."""
        d = self.decide_cube(game.board, game.cube_state())
        if not doubled:  # you are on roll: your cubeful equities per unit of the current cube
            self.write(
                f"  Hint: {cube_action_text(d)}. Your cubeful equity: no double {d.no_double:+.3f}, "
                f"double/take {d.double_take:+.3f}, double/pass {d.double_pass:+.3f} (per unit of the cube)."
            )
            return
        take = not np.isfinite(d.double_take) or d.double_take <= d.double_pass
        # the equities are the doubler's (the engine's): yours are their negatives
        self.write(
            f"  Hint: {'take' if take else 'pass'}. Your cubeful equity: take {-d.double_take:+.3f}, "
            f"pass {-d.double_pass:+.3f} (per unit of the current cube)."
        )

    # -- one game

    def play_game(self, first: str, start: np.ndarray | None) -> tuple[int, int]:
        """Play one game; returns ``(winner seat, points)``."""
        if start is not None:
            game = _Game(
                board=start.copy(), on_roll=ENGINE if first == "engine" else HUMAN, jacoby=self.jacoby
            )
            if self.start_cube is not None:
                game.cube_value = self.start_cube.value
                game.cube_owner = owner_seat(self.start_cube, game.on_roll)
            dice = self.start_dice
            who = "You are" if game.on_roll == HUMAN else f"{self.name} is"
            rolled = "" if dice is None else f" with {dice[0]}-{dice[1]}"
            self.write(f"{who} on roll{rolled}.")
        else:
            starter, opening = opening_roll(1, self.rng)
            mine, theirs = int(opening[0, 0]), int(opening[0, 1])
            seat = int(starter[0]) if first == "roll" else (HUMAN if first == "human" else ENGINE)
            game = _Game(board=starting_board(), on_roll=seat, jacoby=self.jacoby)
            dice = (max(mine, theirs), min(mine, theirs))
            who = "you play" if seat == HUMAN else f"{self.name} plays"
            if first == "roll":
                self.write(
                    f"Opening roll: you {mine}, {self.name} {theirs}: {who} first with {dice[0]}-{dice[1]}."
                )
            else:
                self.write(f"{'You play' if seat == HUMAN else who} first with {dice[0]}-{dice[1]}.")
        try:
            return self._play_on(game, dice)
        except _Resigned as resigned:
            points = resigned.points
            self.write(f"{self.name} wins {points} point{'s' if points != 1 else ''} (you resigned).")
            return ENGINE, points

    def _play_on(self, game: _Game, dice: tuple[int, int] | None) -> tuple[int, int]:
        """The game's turns from ``game`` (``dice``: the side on roll's roll, if rolled) to its end."""
        while True:
            if game.on_roll == ENGINE:  # it may offer to resign before its cube decision and roll
                ended = self.engine_resigns(game)
                if ended is not None:
                    return ended
            if dice is None:  # not the opening turn: a cube decision first, then the roll
                ended = self.cube_turn(game)
                if ended is not None:
                    return ended
                d = roll_dice(1, self.rng)[0]
                dice = (int(max(d)), int(min(d)))
            mover = game.on_roll
            after = self.human_turn(game, dice) if mover == HUMAN else self.engine_turn(game, dice)
            dice = None
            result = game_result(after)
            if result != 0:
                game.board = after
                self.write(render_board(after if mover == HUMAN else swap_sides(after), pid=False))
                points = game.points(abs(int(result)))
                kind = RESULT_NAMES[abs(int(result))]
                winner = mover if result > 0 else 1 - mover
                who = "You win" if winner == HUMAN else f"{self.name} wins"
                jacoby = self.jacoby and game.cube_owner == CENTERED and abs(int(result)) > 1
                why = " (the Jacoby rule: the cube was not turned)" if jacoby else ""
                self.write(f"{who} {kind}: {points} point{'s' if points != 1 else ''}{why}.")
                return winner, points
            game.board = swap_sides(after)
            game.on_roll = 1 - mover

    def cube_turn(self, game: _Game) -> tuple[int, int] | None:
        """The side on roll may double; returns ``(winner, points)`` if a double is passed."""
        if not (self.cube and game.may_double()):
            return None
        if game.on_roll == HUMAN:
            self.show(game)
            while True:
                answer = self.ask("Roll or double? [r/d] ").lower()
                if answer in ("", "r", "roll"):
                    return None
                if answer in ("d", "double"):
                    break
                if self.resign_command(game, answer):
                    continue
                if answer == "help":
                    self.write(CUBE_HELP)
                elif answer == "hint":
                    self.cube_hint(game, doubled=False)
                elif answer == "board":
                    self.show(game)
                else:
                    self.write(f"  {answer!r}: type r to roll or d to double ({COMMANDS_TEXT}).")
            decision = self.decide_cube(game.board, game.cube_state())
            if decision.double_take < decision.double_pass:
                game.cube_value, game.cube_owner = (
                    int(x[0]) for x in taken_cube([game.cube_value], [False], ENGINE)
                )
                self.write(f"{self.name} takes. The cube is on {game.cube_value}, owned by {self.name}.")
                return None
            self.write(f"{self.name} passes.")
            return self._passed(HUMAN, game.cube_value)
        decision = self.decide_cube(game.board, game.cube_state())
        if decision.action not in ("double_take", "double_pass"):
            return None
        self.show(game)
        self.write(f"{self.name} doubles to {2 * game.cube_value}.")
        while True:
            answer = self.ask("Take or pass? [t/p] ").lower()
            if answer in ("t", "take"):
                game.cube_value, game.cube_owner = (
                    int(x[0]) for x in taken_cube([game.cube_value], [False], HUMAN)
                )
                self.write(f"You take. The cube is on {game.cube_value}, and you own it.")
                return None
            if answer in ("p", "pass", "drop"):
                return self._passed(ENGINE, game.cube_value)
            if answer == "hint":
                self.cube_hint(game, doubled=True)
                continue
            if self.resign_command(game, answer, doubled=True):
                continue
            self.write(f"  {answer!r}: type t to take (play on for {2 * game.cube_value}) or p to pass.")

    # -- resigning

    def resign_command(
        self, game: _Game, text: str, dice: tuple[int, int] | None = None, doubled: bool = False
    ) -> bool:
        """Answer ``text`` if it is a ``resign`` command (false if it is not); raises :class:`_Resigned`
        when the engine accepts. ``dice``: your roll, at your move prompt; ``doubled``: at the take/pass
        prompt of the engine's double."""
        try:
            result = parse_resign(text)
        except ValueError as exc:
            self.write(f"  {str(exc)[0].upper()}{str(exc)[1:]}.")
            return True
        if result is None:
            return False
        points = game.points(result)
        equity, kind = self.engine_equity(game, dice, doubled)
        offer = (
            f"  You offer to resign {RESULT_NAMES[result]} ({points} point{'s' if points != 1 else ''}); "
            f"{self.name}'s {kind} equity playing on: {equity:+.3f}"
        )
        if equity - points < RESIGN_TOLERANCE:  # gnubg: accepting loses the engine nothing
            self.write(f"{offer}. {self.name} accepts.")
            raise _Resigned(points)
        self.write(
            f"{offer}, more than {points} point{'s' if points != 1 else ''}: {self.name} declines. Play on."
        )
        return True

    def engine_resigns(self, game: _Game) -> tuple[int, int] | None:
        """The engine's offer to resign at its turn (module docstring), if it makes one; returns
        ``(HUMAN, points)`` when you accept, ``None`` when it makes none or you decline."""
        equity, kind = self.engine_equity(game)
        result = resignation_to_offer(equity, game.points)
        if result is None or result <= game.declined:
            return None
        points = game.points(result)
        won = f"{points} point{'s' if points != 1 else ''}"
        self.show(game)
        self.write(
            f"{self.name} offers to resign {RESULT_NAMES[result]} ({won}); "
            f"its {kind} equity playing on: {equity:+.3f}."
        )
        while True:
            answer = self.ask("Accept? [y/n] ").lower()
            if answer in ("y", "yes"):
                self.write(f"You win {won} ({self.name} resigned).")
                return HUMAN, points
            if answer in ("n", "no"):
                game.declined = result
                self.write(f"You decline {RESULT_NAMES[result]}: play on.")
                return None
            self.write(f"  {answer!r}: type y to accept ({won} to you) or n to play on.")

    def engine_equity(
        self, game: _Game, dice: tuple[int, int] | None = None, doubled: bool = False
    ) -> tuple[float, str]:
        """The engine's equity playing on, in points at the current cube, from its side: what it weighs a
        resignation against; with its kind, ``"cubeful"`` or ``"cubeless"``.

        gnubg (``get_eq_before_resign`` in ``play.c``) values the position the resigner is in: after the
        roll when the resigner has rolled, before it otherwise; this does the same, at the engine's own
        ply (gnubg: 0 ply), with the functions of ``nard hint`` and ``nard cube``:

        - your move prompt (``dice``): your best play by :meth:`Agent.rank_plays` (``nard hint``'s
          ranking); without the cube in play, minus its cubeless equity times the cube value; with the
          cube, the engine's cubeful equity on roll after it (:func:`~nard_ai.cube.cube_decision`'s
          ``optimal``, ``nard cube``'s), the exact points if the play ends the game;
        - your roll/double prompt: minus your cubeful equity on roll (``cube_decision(...).optimal``);
        - the engine's turn before its roll (its own offer to resign): its cubeful equity on roll with
          the cube (``cube_decision(...).optimal``), else its cubeless equity at its ply
          (:func:`~nard_ai.search.valuation.agent_value`, ``nard eval``'s) times the cube value;
        - the engine's double waiting for your answer (``doubled``): its double/take or double/pass
          equity, whichever is lower for it (your right answer).
        """
        value = game.cube_value
        if doubled:  # the engine (on roll) has doubled: your best answer
            d = self.decide_cube(game.board, game.cube_state())
            return value * min(d.double_take, d.double_pass), "cubeful"
        if dice is None:  # before the roll of the side on roll: you at a cube prompt, or the engine
            sign = 1 if game.on_roll == ENGINE else -1
            if self.cube:
                d = self.decide_cube(game.board, game.cube_state())
                return sign * value * d.optimal, "cubeful"
            return sign * value * float(agent_value(self.agent, game.board[None]).equity[0]), "cubeless"
        ranked = self.agent.rank_plays(game.board, dice)
        if not self.cube:  # no cube in play: cubeless, the cube's value a fixed stake
            return -value * float(ranked.equity[0]), "cubeless"
        after = ranked.afterstates[0]
        result = int(game_result(after))  # yours, the mover's: > 0 you win
        if result != 0:
            return (-1 if result > 0 else 1) * float(game.points(abs(result))), "cubeful"
        d = self.decide_cube(swap_sides(after), game.cube_state(ENGINE))
        return value * d.optimal, "cubeful"

    def _passed(self, winner: int, points: int) -> tuple[int, int]:
        who = "You win" if winner == HUMAN else f"{self.name} wins"
        self.write(f"{who} {points} point{'s' if points != 1 else ''} (the double was passed).")
        return winner, points

    def human_turn(self, game: _Game, dice: tuple[int, int]) -> np.ndarray:
        board = game.board
        plays = legal_plays(board, dice)
        self.show(game, dice)
        if len(plays) == 1:
            if (plays[0] == board).all():
                self.write(f"You rolled {dice[0]}-{dice[1]} and cannot move.")
            else:
                self.write(f"You rolled {dice[0]}-{dice[1]}. Forced: {play_notation(board, plays[0], dice)}")
            return plays[0]
        while True:
            text = self.ask(f"Your move ({dice[0]}-{dice[1]}): ")
            command = text.lower()
            if command in ("help", "?"):
                self.write(HELP_TEXT)
            elif command == "hint":
                self.hint(board, dice)
            elif command == "board":
                self.show(game, dice)
            elif not text:
                self.write("  Type your play, e.g. 13/7 8/7, or help.")
            elif self.resign_command(game, text, dice):
                continue
            elif _WORDS.fullmatch(text):  # a word is no play: an unknown command (undo, ...)
                self.write(f"  Unknown command {text!r}: {COMMANDS_TEXT}; type a play as 13/7 8/7.")
            else:
                try:
                    return parse_play(board, text, dice)
                except ValueError as exc:
                    self.write(f"  Not legal: {exc}")

    def engine_turn(self, game: _Game, dice: tuple[int, int]) -> np.ndarray:
        board = game.board
        after = self.agent.choose_plays(board[None], np.asarray([dice], dtype=np.int8))[0]
        play = play_notation(board, after, dice)
        if play in ("", "-"):
            self.write(f"{self.name} rolls {dice[0]}-{dice[1]} and cannot move.")
        else:
            self.write(f"{self.name} rolls {dice[0]}-{dice[1]} and plays {play}.")
        return after


def play_session(
    agent,
    rng: np.random.Generator,
    read: Callable[[str], str] | None = None,
    write: Callable[[str], None] | None = None,
    *,
    first: str = "roll",
    cube: bool = False,
    start: np.ndarray | None = None,
    max_games: int | None = None,
    name: str = "nard",
    start_cube: CubeState | None = None,
    start_dice: tuple[int, int] | None = None,
    jacoby: bool = False,
) -> SessionResult:
    """Play games against an agent until you stop (see the module docstring for the rules of play).

    Args:
        agent: anything with ``choose_plays(boards, dice)``, ``rank_plays(board, dice)``
            and ``evaluate(boards)`` (a :class:`nard_ai.search.lookahead.Agent`).
        rng: the dice (opening rolls and every roll after).
        read: ``read(prompt) -> line`` (default: :func:`input`); raising
            ``EOFError`` or ``KeyboardInterrupt`` ends the session cleanly.
        write: called with each piece of output, lines joined by ``"\\n"``
            (default: :func:`print`).
        first: ``"roll"`` (the opening roll decides), ``"human"`` or
            ``"engine"`` (that side starts, with the opening roll's two
            different dice).
        cube: play with the doubling cube (money play, no beavers); its rules are said in one line
            at the start (:func:`cube_rules_text`).
        start: ``(26,)`` board to start each game from instead of the
            starting position, seen from the side on roll: you, or the
            engine when ``first == "engine"``; no opening roll then.
        max_games: stop after this many games (``None``: ask after each one).
        name: the engine's name in the messages.
        start_cube: the cube each game from ``start`` begins with (money
            play; ``owner`` seen from ``start``'s side on roll). A turned
            cube counts for the points even when ``cube`` is off (nobody
            may double then). Default: centred at 1.
        start_dice: the roll ``start``'s side on roll plays first (no cube
            decision before it); default: it rolls (after its cube decision).
        jacoby: the Jacoby rule (needs ``cube``): a gammon or backgammon counts as a single game
            while the cube is centred, in the points and in the engine's cube decisions.

    Returns:
        A :class:`SessionResult`.

    Raises:
        ValueError: on an unknown ``first``, a ``max_games`` below 1, a
            ``start`` board that is invalid or finished (or dead: both sides
            on the bar against closed boards, where neither could ever move;
            see :func:`nard_ai.core.board.validate_board`), ``start_cube`` or
            ``start_dice`` without ``start``, a match-play ``start_cube``,
            ``jacoby`` without ``cube``, or dice outside 1..6.
    """
    if first not in FIRST_CHOICES:
        raise ValueError(f"first must be one of {FIRST_CHOICES}, got {first!r}")
    if max_games is not None and max_games < 1:
        raise ValueError(f"max_games must be >= 1 (or None), got {max_games}")
    if start is not None:
        start = validate_board(np.asarray(start))
        if start.ndim != 1 or game_result(start) != 0:
            raise ValueError("the start position must be one board of a game not yet over")
    if (start_cube is not None or start_dice is not None) and start is None:
        raise ValueError("start_cube and start_dice need a start position")
    if start_cube is not None and not start_cube.is_money:
        raise ValueError("nard play plays money games: start_cube must be a money-play cube state")
    if jacoby and not cube:
        raise ValueError("the Jacoby rule needs the cube: jacoby=True with cube=True")
    if start_dice is not None:
        d = validate_dice(np.asarray(start_dice))[0]
        start_dice = (int(max(d)), int(min(d)))  # larger die first, as every roll here
    read = input if read is None else read
    write = print if write is None else write
    session = _Session(agent, rng, read, write, name, cube, start_cube, start_dice, jacoby)
    if cube:
        write(cube_rules_text(jacoby))
    points = [0, 0]
    games = 0
    try:
        while True:
            winner, won = session.play_game(first, start)
            points[winner] += won
            games += 1
            write(
                f"Session: you {points[HUMAN]}, {name} {points[ENGINE]} after {games} game{'s' if games != 1 else ''}."
            )
            if max_games is not None and games >= max_games:
                return SessionResult(games, (points[0], points[1]), "done")
            if session.ask("Play another game? [y/n] ").lower() not in ("y", "yes"):
                return SessionResult(games, (points[0], points[1]), "done")
    except _EndSession as end:
        if end.reason in ("eof", "interrupt"):
            write("")  # end the prompt's line
        write("Bye.")
        return SessionResult(games, (points[0], points[1]), end.reason)
