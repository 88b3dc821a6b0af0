"""Jellyfish ``.mat`` match records, the text format game servers and gnubg export.

The format was never formally specified; this module reads what GNU
Backgammon's importer reads (``import.c``: ``ImportMatVariation``,
``ImportGame``, ``ParseMatMove``) and writes what its exporter writes
(``export.c``: ``ExportMatchMat``, ``ExportGameJF``)::

    ; [Site "GNU Backgammon"]
    ; [Player 1 "alice"]

     3 point match

     Game 1
     alice : 0                      bob : 0
      1) 31: 8/5 6/5                 52: 13/8 13/11
      2) 64: 24/14                    Doubles => 2
      3)  Takes                      66: 24/18(2) 13/7*(2)
      ...
          Wins 1 point

What is read:

* Comment lines starting with ``;`` or ``#`` (gnubg's ``; [Key "Value"]``
  header), anywhere; they are kept, in order, in :attr:`Match.comments`.
  ``[Crawford "Off"]`` turns the Crawford rule off, ``[Jacoby "On"]`` sets
  the Jacoby rule (money play).
* The file as text, or as bytes in UTF-8 (what gnubg 1.07 writes) or, for
  older exports, Windows-1252/Latin-1 (:func:`decode_mat`).
* ``N point match`` (``0`` = money play; at most 64, gnubg's longest match),
  then games: ``Game N``, a score line ``name : score   name : score`` (the
  score at the start of the game), then numbered move lines with two
  columns. The score line is split on its ``: N`` scores, not on columns:
  gnubg pads the first half to 31 characters, so after a first name of 27
  characters or more it writes the halves together (``aaaa… : 0b : 0``),
  and that is read too. **The left column is player 0 (the first name), the
  right column player 1**: the same seats as
  :class:`~nard_ai.formats.match_id.MatchState`. A line with two records has
  one for each; a line with one record goes to the column it starts in.
* Records: ``dd: play`` (a roll and its play in standard notation, read with
  :func:`~nard_ai.formats.notation.parse_play` on the replayed position, so
  stars are optional, ``bar``/``25``, ``off``/``0`` and repeated moves are
  all fine; nothing after the colon, ``-`` or ``Cannot Move`` when the roll
  cannot be played), ``Doubles => n`` (``Double``, with or without the
  value), ``Takes`` (``Accepts``), ``Drops`` (``Passes``, ``Rejects``),
  ``Wins n point(s)`` (anything after the number, such as ``and the
  match``, is ignored), ``Resigns`` (ignored; the ``Wins`` line that follows
  says the result). Beavers and raccoons are refused.
* Blank lines anywhere; a ``Crawford`` marker on the ``Game`` line, the
  score line or a line of its own. Whether a game is the Crawford game is
  otherwise worked out from the scores (RULES.md 8: the first game after a
  player first reaches one point short of the match length), as gnubg does.

Every game is replayed from the starting position, so a record that breaks
the rules (an illegal play, a doubled opening roll (RULES.md 2: each player
throws one die, ties are thrown again; no rule setting changes that), a double
in the Crawford game or by the player who does not own the cube, a take with
no double, points that do not match the final position and cube, a score line
that does not follow from the previous game) is a ``ValueError`` naming the
line and the value. Each
game's score line is checked against the previous game's result before the
game is replayed, so a wrong score is reported as such (naming the game, the
score written and the score it should be), not as what it would cause later.

Lines are counted from 1 at ``\n``, ``\r\n`` or ``\r`` (as ``grep -n`` counts a Unix or DOS
file); every record keeps its line and its line's ``N)`` (:attr:`MatAction.line`, ``.move``). A later
game naming other players than game 1 is read (gnubg 1.07's ``ImportGame`` silently copies each game's
names over the match's, so the last game's stay); here game 1's stay, and :attr:`Match.warnings` says so.

A ``Wins`` record while the game is still on is a resignation: the points
must be the cube value times 1, 2 or 3. A roll with nothing written after it
although it could be played is accepted only right before such a
resignation (the player rolled, then resigned), as gnubg reads it.

:func:`write_mat` writes gnubg's layout, the plays in gnubg's notation
(:func:`~nard_ai.formats.notation.play_notation`, stars included), with one
difference: the two halves of a score line are always separated by a space,
so that long names read back (gnubg 1.07 itself reads such a line only with
the space).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np

from nard_ai.core.board import game_result, starting_board, swap_sides, validate_board
from nard_ai.core.game import CENTERED
from nard_ai.core.movegen import legal_plays
from nard_ai.core.rules import Rules
from nard_ai.formats.mat_text import MAX_DIGITS, check_text, decode_mat
from nard_ai.formats.mat_text import number as _number
from nard_ai.formats.match_id import MAX_MATCH_LENGTH, GameStatus, MatchState
from nard_ai.formats.notation import STANDARD_RULES, parse_play, play_notation

_LEFT_WIDTH = 27  # gnubg: "%3d) %-27s " puts the right column at character 33
_RIGHT_WIN_INDENT = 34  # gnubg writes player 1's "Wins" at character 34
_LEFT_WIN_INDENT = 6  # and player 0's at character 6
_NAME_WIDTH = 31
_RIGHT_COLUMN = 1 + 3 + 2 + _LEFT_WIDTH  # where gnubg's right-column records start (character 33)


class ActionKind(StrEnum):
    """What a record of a ``.mat`` game does."""

    ROLL = "roll"  # a roll and the play made with it
    DOUBLE = "double"
    TAKE = "take"
    DROP = "drop"  # pass: the doubler wins the cube value before the double
    WIN = "win"  # the game's result, after a bear-off, a drop or a resignation


@dataclass(frozen=True, eq=False)
class MatAction:
    """One record of a game, by one player.

    The first four fields are the record itself (all that :func:`write_mat`
    needs); ``board``, ``state`` and ``play`` are filled in when a match is
    read (or replayed) and are not compared by ``==``.

    Attributes:
        player: the seat (0 = left column, 1 = right column) that acts.
        kind: an :class:`ActionKind`.
        dice: for a roll, the two dice as written (1-6 each).
        afterstate: for a roll, ``(26,)`` int8 board after the play, seen
            from ``player`` (not swapped); ``None`` for a roll not played
            because the player resigned right after it.
        cube_value: for a double, the value offered (2, 4, ...).
        points: for a win, the points won.
        board: ``(26,)`` int8 board before the record, seen from
            ``state.player_on_roll`` (the doubler for a take or drop); the
            pair gives :func:`~nard_ai.formats.match_id.gnubg_id` of the
            decision. ``None`` for a win.
        state: the :class:`MatchState` before the record (cube, score, the
            roll for a roll, the double for a take or drop). ``None`` for a
            win.
        play: for a roll, the play in gnubg's notation (``""`` when none).
        move: the ``N)`` move number of the record's line (``int``; 0 when the line has none).
        line: the 1-based line of the file holding the record (``int``; 0 when not read from a file).
            Neither is compared by ``==``.
    """

    player: int
    kind: ActionKind
    dice: tuple[int, int] = (0, 0)
    afterstate: np.ndarray | None = None
    cube_value: int = 0
    points: int = 0
    board: np.ndarray | None = field(default=None, repr=False)
    state: MatchState | None = field(default=None, repr=False)
    play: str = ""
    move: int = 0
    line: int = 0

    def _key(self) -> tuple:
        after = None if self.afterstate is None else tuple(int(c) for c in np.asarray(self.afterstate))
        return (self.player, ActionKind(self.kind), tuple(self.dice), after, self.cube_value, self.points)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MatAction):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class MatGame:
    """One game of a match.

    Attributes:
        score: ``(player 0, player 1)`` match score at the start of the game.
        actions: the records in order; the last is the :attr:`ActionKind.WIN`
            when the game was finished.
        crawford: this is the Crawford game (set when read; :func:`write_mat`
            does not write it, a reader works it out from the scores).
    """

    score: tuple[int, int]
    actions: tuple[MatAction, ...]
    crawford: bool = False

    @property
    def winner(self) -> int | None:
        """The seat that won the game, ``None`` if the record stops before the end."""
        last = self.actions[-1] if self.actions else None
        return last.player if last is not None and last.kind == ActionKind.WIN else None

    @property
    def points(self) -> int:
        """Points the winner won (0 if the game is unfinished)."""
        last = self.actions[-1] if self.actions else None
        return last.points if last is not None and last.kind == ActionKind.WIN else 0


@dataclass(frozen=True)
class Match:
    """A match (or money session) record.

    Attributes:
        length: points to win the match; 0 = money play.
        players: the names of seat 0 (left column) and seat 1 (right column).
        games: the games in order.
        comments: header comment lines, without the leading ``;`` and one
            space (``'[Site "GNU Backgammon"]'``).
        crawford_rule: whether the Crawford rule is played (default on).
        jacoby: the Jacoby rule, money play only (default off).
        warnings: ``tuple[str, ...]``, each naming its line: a game naming other players. Not compared.
    """

    length: int
    players: tuple[str, str]
    games: tuple[MatGame, ...]
    comments: tuple[str, ...] = ()
    crawford_rule: bool = True
    jacoby: bool = False
    warnings: tuple[str, ...] = field(default=(), compare=False)


# --------------------------------------------------------------------------
# Replaying a game: the rules check shared by the reader and the writer
# --------------------------------------------------------------------------

_NO_PLAY_TEXTS = ("", "-", "cannot move", "???", "????")


@dataclass
class _Raw:
    """A record as read, before replay: a roll carries its text or its afterstate."""

    player: int
    kind: ActionKind
    line: int = 0
    dice: tuple[int, int] = (0, 0)
    move: int = 0
    text: str | None = None
    afterstate: np.ndarray | None = None
    cube_value: int = 0
    points: int = 0


def _where(line: int, game: int) -> str:
    return f"line {line}" if line else f"game {game}"


def _replay_game(
    raws: list[_Raw], number: int, score: tuple[int, int], crawford: bool, match: Match, rules: Rules
) -> MatGame:
    """Play a game's records from the starting position, checking each against the rules."""
    board = starting_board()  # seen from `on_roll` once the first roll sets it
    on_roll: int | None = None
    cube, owner = 1, CENTERED
    doubler: int | None = None
    over: tuple[int, int, str] | None = None  # (winner, points, how)
    resigned_roll = False
    actions: list[MatAction] = []

    def state(player: int, turn: int, dice: tuple[int, int] = (0, 0), doubled: bool = False) -> MatchState:
        try:
            return MatchState(
                cube_value=cube,
                cube_owner=owner,
                player_on_roll=player,
                crawford=crawford,
                game_state=GameStatus.PLAYING,
                turn=turn,
                double_offered=doubled,
                dice=(max(dice), min(dice)),  # gnubg's order, as its Match ID of the decision
                match_length=match.length,
                score=score,
                jacoby=match.jacoby and not match.length,
            )
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None

    for index, raw in enumerate(raws):
        where = _where(raw.line, number)
        if raw.player not in (0, 1):
            raise ValueError(f"{where}: a record's player must be 0 or 1, got {raw.player!r}")
        who = f"{match.players[raw.player]!r} (player {raw.player})"
        if over is not None and raw.kind != ActionKind.WIN:
            raise ValueError(f"{where}: game {number} is already over, but {who} records a {raw.kind.value}")
        if resigned_roll and raw.kind != ActionKind.WIN:
            raise ValueError(f"{where}: a roll was left unplayed, so a resignation ('Wins') must follow it")
        if on_roll is None and raw.kind != ActionKind.WIN:
            if raw.kind != ActionKind.ROLL:
                raise ValueError(f"{where}: game {number} must start with a roll, got a {raw.kind.value}")
            if raw.dice[0] == raw.dice[1]:  # no Rules setting changes the opening roll
                raise ValueError(
                    f"{where}: game {number} opens with {raw.dice[0]}{raw.dice[1]}, but the opening roll is "
                    "never a double (each player throws one die; ties are thrown again: docs/RULES.md 2)"
                )
            on_roll = raw.player
        if raw.kind == ActionKind.ROLL:
            if doubler is not None:
                raise ValueError(f"{where}: {who} rolls while a double awaits an answer")
            if raw.player != on_roll:
                raise ValueError(f"{where}: {who} rolls, but it is player {on_roll}'s turn")
            dice = raw.dice
            before = board
            try:
                if raw.afterstate is not None:
                    after = _checked_afterstate(before, raw.afterstate, dice, rules)
                elif raw.text is not None and raw.text.strip().lower() not in _NO_PLAY_TEXTS:
                    after = parse_play(before, raw.text, dice, rules)
                else:
                    after = None
                    try:
                        after = parse_play(before, "-", dice, rules)
                    except ValueError:
                        # Legal moves exist: the player rolled, then resigned (gnubg's reading).
                        if index + 1 >= len(raws) or raws[index + 1].kind != ActionKind.WIN:
                            raise
                        resigned_roll = True
            except ValueError as exc:
                raise ValueError(f"{where}: {who} rolls {dice[0]}{dice[1]}: {exc}") from None
            play = "" if after is None else play_notation(before, after, dice)
            actions.append(
                MatAction(
                    raw.player,
                    ActionKind.ROLL,
                    dice=(int(dice[0]), int(dice[1])),
                    afterstate=after,
                    board=before,
                    state=state(raw.player, raw.player, (int(dice[0]), int(dice[1]))),
                    play="" if play == "-" else play,
                )
            )
            if after is not None:
                result = game_result(after)
                if result:
                    over = (raw.player, abs(result) * cube, "bearoff")
                board = swap_sides(after)
                on_roll = 1 - raw.player
        elif raw.kind == ActionKind.DOUBLE:
            if crawford:
                raise ValueError(
                    f"{where}: game {number} is the Crawford game: nobody may double (docs/RULES.md 8)"
                )
            if doubler is not None or raw.player != on_roll:
                raise ValueError(f"{where}: {who} doubles, but it is not their turn to roll")
            if owner not in (CENTERED, raw.player):
                raise ValueError(f"{where}: {who} doubles, but player {owner} owns the cube")
            offered = raw.cube_value or 2 * cube
            if offered != 2 * cube:
                raise ValueError(
                    f"{where}: {who} doubles to {offered}, but the cube is on {cube} (expected {2 * cube})"
                )
            actions.append(
                MatAction(
                    raw.player,
                    ActionKind.DOUBLE,
                    cube_value=offered,
                    board=board,
                    state=state(raw.player, raw.player),
                )
            )
            doubler = raw.player
        elif raw.kind in (ActionKind.TAKE, ActionKind.DROP):
            if doubler is None or raw.player == doubler:
                raise ValueError(f"{where}: {who} {raw.kind.value}s, but no double was offered to them")
            actions.append(
                MatAction(raw.player, raw.kind, board=board, state=state(doubler, raw.player, doubled=True))
            )
            if raw.kind == ActionKind.TAKE:
                cube, owner = 2 * cube, raw.player
            else:
                over = (doubler, cube, "drop")
            doubler = None
        else:  # WIN
            if raw.points < 1:
                raise ValueError(f"{where}: {who} wins {raw.points} points; a game is worth at least 1")
            if resigned_roll and raw.player == actions[-1].player:
                raise ValueError(f"{where}: {who} rolled without playing, so only the opponent can win now")
            if over is not None:
                winner, points, how = over
                if raw.player != winner or raw.points != points:
                    raise ValueError(
                        f"{where}: the game ended by a {how} with player {winner} winning {points}, "
                        f"but the record says player {raw.player} wins {raw.points}"
                    )
            else:
                if doubler is not None:
                    raise ValueError(f"{where}: {who} wins while a double awaits an answer (no take or drop)")
                # A resignation (RULES.md 6: single, gammon or backgammon, times the cube).
                if raw.points not in (cube, 2 * cube, 3 * cube):
                    raise ValueError(
                        f"{where}: {who} wins {raw.points} points by resignation, "
                        f"but with the cube on {cube} a game is worth {cube}, {2 * cube} or {3 * cube}"
                    )
                over = (raw.player, raw.points, "resignation")
            actions.append(MatAction(raw.player, ActionKind.WIN, points=raw.points))
            if index + 1 < len(raws):
                raise ValueError(
                    f"{_where(raws[index + 1].line, number)}: records after the end of game {number}"
                )
    done = (replace(a, move=r.move, line=r.line) for a, r in zip(actions, raws, strict=True))
    return MatGame(score=score, actions=tuple(done), crawford=crawford)


def _checked_afterstate(
    before: np.ndarray, afterstate: np.ndarray, dice: tuple[int, int], rules: Rules
) -> np.ndarray:
    """The afterstate as a board, if it is a legal play of ``dice`` from ``before`` (else a ValueError saying why)."""
    after = validate_board(np.asarray(afterstate))
    if after.ndim != 1:
        raise ValueError(f"an afterstate must have shape (26,), got {after.shape}")
    if (legal_plays(before, dice, rules) == after).all(axis=1).any():
        return after
    written = play_notation(before, after, dice)  # a ValueError if no moves of these dice reach it
    parse_play(before, written, dice, rules)  # a ValueError saying why it is not legal
    raise ValueError(f"{written!r} is not a legal play")


def _crawford_games(match_length: int, scores: list[tuple[int, int]], rule: bool) -> list[bool]:
    """Which games are Crawford games, from the scores (gnubg's ``ImportGame``, docs/RULES.md 8)."""
    flags = []
    post = False
    for s0, s1 in scores:
        crawford = (
            rule and match_length > 0 and not post and ((s0 == match_length - 1) != (s1 == match_length - 1))
        )
        post = post or crawford
        flags.append(crawford)
    return flags


def _check_score(
    match: Match, previous: MatGame | None, score: tuple[int, int], number: int, line: int
) -> None:
    """Game ``number``'s starting score follows from the previous game's result, and the match is not over.

    Checked before the game is replayed, so a wrong score line is reported as
    such, not as what it would cause later (a Crawford game in the wrong place).
    """
    where = _where(line, number)
    names = match.players
    if previous is not None:
        if previous.winner is None:
            raise ValueError(f"{where}: game {number - 1} has no result, but game {number} follows it")
        expected = list(previous.score)
        expected[previous.winner] += previous.points
        if match.length:
            expected = [min(s, match.length) for s in expected]
        if tuple(expected) != tuple(score):
            winner = previous.winner
            raise ValueError(
                f"{where}: game {number} starts at {score[0]}-{score[1]} "
                f"({names[0]} {score[0]}, {names[1]} {score[1]}), but game {number - 1} ended at "
                f"{expected[0]}-{expected[1]}: it started at {previous.score[0]}-{previous.score[1]} and "
                f"{names[winner]} (player {winner}) won {previous.points} "
                f"point{'s' if previous.points != 1 else ''}"
            )
    if match.length and max(score) > match.length:
        raise ValueError(
            f"{where}: game {number} starts at {score[0]}-{score[1]}, above the match length {match.length}"
        )
    if match.length and max(score) == match.length:
        raise ValueError(
            f"{where}: game {number} starts at {score[0]}-{score[1]}, "
            f"but the match to {match.length} is already over"
        )


def _replay_match(
    match: Match, games: list[tuple[list[_Raw], tuple[int, int], bool, int]], rules: Rules
) -> Match:
    """Replay the games in order, each after checking its starting score against the previous result.

    Args:
        match: the header (length, players, rules); its ``games`` are ignored.
        games: per game, its raw records, its starting score, whether the
            record marks it as the Crawford game, and the line of its score
            (0 when built by hand).
        rules: the rules the plays are checked against.
    """
    computed = _crawford_games(match.length, [score for _, score, _, _ in games], match.crawford_rule)
    replayed: list[MatGame] = []
    for k, (raws, score, marked, line) in enumerate(games):
        _check_score(match, replayed[-1] if replayed else None, score, k + 1, line)
        crawford = marked or computed[k]
        try:
            MatchState(match_length=match.length, score=score, crawford=crawford)
        except ValueError as exc:
            raise ValueError(f"{_where(line, k + 1)}: game {k + 1}: {exc}") from None
        replayed.append(_replay_game(raws, k + 1, score, crawford, match, rules))
    return replace(match, games=tuple(replayed))


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

_LENGTH_RE = re.compile(r"\s*([0-9]+)\s+point\s+match\s*", re.IGNORECASE)
_GAME_RE = re.compile(r"\s*game\s+([0-9]+)\b(.*)", re.IGNORECASE)
# The score line: "name : score   name : score". gnubg pads the left half to 31
# characters (" %-31s%s : %d"), so with a long first name the halves touch:
# " aaaaaaaaaaaaaaaaaaaaaaaaaaa : 0b : 0". The line is split on the " : N"
# patterns, not on columns; see _score_line.
_SCORE_RE = re.compile(
    r"\s*(?P<n0>[^:]*?)\s*:\s*(?P<s0>[0-9]+)(?P<n1>[^:]*?)\s*:\s*(?P<s1>[0-9]+)(?P<rest>[^:]*)"
)
_NUMBER_RE = re.compile(r"\s*([0-9]+)\)")
_ACTION_RE = re.compile(
    r"(?P<roll>(?<![\w/])[0-9][0-9]:)"
    r"|(?P<word>\b(?:doubles?|beavers?|raccoons?|takes?|accepts?|drops?|pass(?:es)?|rejects?|refuses?"
    r"|wins?|resigns?)\b)",
    re.IGNORECASE,
)
_CRAWFORD_RE = re.compile(r"\bcrawford\b", re.IGNORECASE)
_MARKER_RE = re.compile(r"[(*\[]*\bcrawford\b[)*\]]*", re.IGNORECASE)
_HEADER_RE = re.compile(r'\[\s*(?P<key>[^"\]]+?)\s+"(?P<value>[^"]*)"\s*\]')


def _score_line(
    line_text: str, number: int, length: int, known: tuple[str, str] | None
) -> tuple[tuple[str, str], tuple[int, int], int]:
    """Read a game's score line: the two names, the two scores and the column where the second name starts.

    When the first score runs into the second name (gnubg's layout with a
    first name of 27 or more characters), the digits are split so that the
    score has no leading zero and fits the match, preferring the split that
    gives the second name of the previous games (``known``), else the longest
    score, as gnubg's own ``%d`` reads it.
    """
    found = _SCORE_RE.fullmatch(line_text)
    if not found:
        raise ValueError(
            f"line {number}: expected the score line 'name : score   name : score', got {line_text.strip()!r}"
        )
    digits, tail = found.group("s0"), found.group("n1")
    splits = [len(digits)]  # the usual layout: the score, then spaces, then the name
    if tail[:1] and not tail[:1].isspace():
        # The halves touch: "0b", or "17up" (a score of 1 and "7up", or 17 and "up").
        splits = [
            k
            for k in range(len(digits), 0, -1)
            if (k == 1 or digits[0] != "0")
            and (not length or (k <= MAX_DIGITS and int(digits[:k]) <= length))
        ] or [len(digits)]  # none fits: read it as gnubg does, and let the score checks say what is wrong
    candidates = []
    for k in splits:
        names = (
            _MARKER_RE.sub("", found.group("n0")).strip(),
            _MARKER_RE.sub("", digits[k:] + tail).strip(),
        )
        if all(names):
            candidates.append((names, k))
    if not candidates:
        raise ValueError(
            f"line {number}: the score line {line_text.strip()!r} does not give two names and two scores"
        )
    names, k = next((c for c in candidates if known is not None and c[0][1] == known[1]), candidates[0])
    score = (
        _number(digits[:k], "the first score", number),
        _number(found.group("s1"), "the second score", number),
    )
    second = digits[k:] + tail
    return names, score, found.start("s0") + k + len(second) - len(second.lstrip())


def _parse_record(text: str, player: int, line: int) -> _Raw | None:
    """One column's record; ``None`` for one that is ignored (``Resigns``)."""
    body = text.strip()
    roll = re.fullmatch(r"([0-9])([0-9]):(.*)", body, re.DOTALL)
    if roll:
        dice = (int(roll.group(1)), int(roll.group(2)))
        if not all(1 <= d <= 6 for d in dice):
            raise ValueError(f"line {line}: roll {body[:3]!r} has a die outside 1-6")
        return _Raw(player, ActionKind.ROLL, line, dice=dice, text=roll.group(3).strip())
    word, _, rest = body.partition(" ")
    word = word.lower()
    rest = rest.strip()
    if word.startswith(("beaver", "raccoon")):
        raise ValueError(f"line {line}: {body!r}: beavers and raccoons are not supported")
    if word.startswith("double"):
        value = re.fullmatch(r"(?:=>|to)?\s*([0-9]*)\s*", rest)
        if not value:
            raise ValueError(f"line {line}: {body!r} is not 'Doubles => <cube value>'")
        return _Raw(
            player, ActionKind.DOUBLE, line, cube_value=_number(value.group(1) or "0", "the cube value", line)
        )
    if word.startswith(("take", "accept")):
        return _Raw(player, ActionKind.TAKE, line)
    if word.startswith(("drop", "pass", "reject", "refuse")):
        return _Raw(player, ActionKind.DROP, line)
    if word.startswith("win"):
        points = re.match(r"([0-9]+)\s*(?:points?)?", rest)
        if not points:
            raise ValueError(f"line {line}: {body!r} is not 'Wins <n> point(s)'")
        return _Raw(player, ActionKind.WIN, line, points=_number(points.group(1), "the points won", line))
    if word.startswith("resign"):
        return None
    raise ValueError(f"line {line}: unrecognised record {body!r}")


def _split_records(line_text: str, line: int, split_col: int) -> list[tuple[int, str]]:
    """The (player, text) records of a move line: two records are left then right; one goes by column."""
    numbered = _NUMBER_RE.match(line_text)
    body = " " * numbered.end() + line_text[numbered.end() :] if numbered else line_text
    if not body.strip():
        return []
    starts = [m.start() for m in _ACTION_RE.finditer(body)]
    if not starts:
        raise ValueError(f"line {line}: unrecognised text {line_text.strip()!r}")
    if body[: starts[0]].strip():
        raise ValueError(f"line {line}: unrecognised text {body[: starts[0]].strip()!r}")
    if len(starts) > 2:
        raise ValueError(f"line {line}: more than two records on one line: {line_text.strip()!r}")
    pieces = [body[a:b] for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]
    if len(pieces) == 2:
        return [(0, pieces[0]), (1, pieces[1])]
    return [(1 if starts[0] >= split_col else 0, pieces[0])]


def read_mat(text: str | bytes, rules: Rules = STANDARD_RULES) -> Match:
    """Read a Jellyfish ``.mat`` match record and replay it.

    Args:
        text: the file's contents (see the module docstring for what is
            accepted), as text or as the file's bytes; bytes are decoded by
            :func:`decode_mat` (UTF-8, else Windows-1252/Latin-1).
        rules: the rules the plays are checked against.

    Returns:
        The :class:`Match`, every roll's play resolved to an afterstate and
        every record given its position, :class:`MatchState`, line and move
        number; a later game naming other players is in its ``warnings``.

    Raises:
        ValueError: naming the line and the value, on anything malformed or
            against the rules (a doubled opening roll among them).
    """
    if isinstance(text, bytes | bytearray):
        text = decode_mat(text)  # checked for control characters there
    elif isinstance(text, str):
        text = check_text(text)  # as bytes are: a NUL in a name is no text record either way
    else:
        raise ValueError(f"a .mat record must be a str or bytes, got {type(text).__name__}")
    lines = re.split(r"\r\n|\r|\n", text.lstrip("\ufeff"))  # not splitlines: \f, \v are no line breaks
    comments: list[str] = []
    length: int | None = None
    games: list[dict] = []
    for number, line_text in enumerate(lines, start=1):
        stripped = line_text.strip()
        if not stripped:
            continue
        if stripped[0] in ";#":
            comments.append(stripped[1:].strip())
            continue
        if length is None:
            found = _LENGTH_RE.fullmatch(stripped)
            if not found:
                raise ValueError(
                    f"line {number}: expected 'N point match' before the games, got {stripped!r}"
                )
            length = _number(found.group(1), "the match length", number)
            if length > MAX_MATCH_LENGTH:
                raise ValueError(
                    f"line {number}: a {length}-point match is longer than {MAX_MATCH_LENGTH}, "
                    "the longest match gnubg plays (its MAXSCORE) and a Match ID can describe"
                )
            continue
        game = _GAME_RE.fullmatch(stripped)
        if game:
            crawford = bool(_CRAWFORD_RE.search(game.group(2)))  # "score", "names": from its score line
            games.append(
                {
                    "number": _number(game.group(1), "the game number", number),
                    "line": number,
                    "crawford": crawford,
                    "raws": [],
                }
            )
            continue
        if not games:
            raise ValueError(f"line {number}: expected 'Game 1', got {stripped!r}")
        current = games[-1]
        if _CRAWFORD_RE.search(stripped) and ":" not in stripped and not _ACTION_RE.search(stripped):
            current["crawford"] = True  # a marker line, before or after the score line
            continue
        if current.get("score") is None:
            known = games[0].get("names") if len(games) > 1 else None
            current["names"], current["score"], second = _score_line(line_text, number, length, known)
            current["score_line"] = number
            # A lone record left of this column is player 0's. gnubg's right column
            # starts at character 33 whatever the names, so a long first name
            # (which pushes the second name right) must not move it past that.
            current["split"] = max(10, min(_RIGHT_COLUMN, (second + 6) // 2))
            current["crawford"] |= bool(_CRAWFORD_RE.search(line_text))
            continue
        numbered = _NUMBER_RE.match(line_text)
        for player, record in _split_records(line_text, number, current["split"]):
            raw = _parse_record(record, player, number)
            if raw is not None:
                raw.move = _number(numbered.group(1), "the move number", number) if numbered else 0
                current["raws"].append(raw)
    if length is None:
        raise ValueError("not a .mat record: no 'N point match' line")
    if not games:
        raise ValueError("the .mat record has no games ('Game 1' ...)")
    for k, game in enumerate(games):
        if game.get("score") is None:
            raise ValueError(f"line {game['line']}: game {game['number']} has no score line")
        if game["number"] != k + 1:
            raise ValueError(f"line {game['line']}: game {game['number']} should be game {k + 1}")
    header, first = _header_values(comments), games[0]["names"]
    warnings = tuple(
        f"line {g['score_line']}: game {g['number']} names the players {g['names'][0]!r} and "
        f"{g['names'][1]!r}, but game 1 named them {first[0]!r} and {first[1]!r}; game 1's names are kept"
        for g in games[1:]
        if g["names"] != first
    )
    match = Match(
        length=length,
        players=first,
        games=(),
        comments=tuple(comments),
        crawford_rule=header.get("crawford", "on").lower() != "off",
        jacoby=bool(length == 0 and header.get("jacoby", "off").lower() == "on"),
        warnings=warnings,
    )
    entries = [(g["raws"], g["score"], g["crawford"], g["score_line"]) for g in games]
    return _replay_match(match, entries, rules)


def _header_values(comments: list[str]) -> dict[str, str]:
    found = (_HEADER_RE.fullmatch(comment) for comment in comments)
    return {f.group("key").strip().lower(): f.group("value") for f in found if f}


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def _record_text(action: MatAction) -> str:
    """A record as gnubg writes it; cube records start with a space, as in gnubg's files."""
    if action.kind == ActionKind.ROLL:
        return f"{action.dice[0]}{action.dice[1]}: {action.play}".rstrip()
    if action.kind == ActionKind.DOUBLE:
        return f" Doubles => {action.cube_value}"
    if action.kind == ActionKind.TAKE:
        return " Takes"
    if action.kind == ActionKind.DROP:
        return " Drops"
    return f" Wins {action.points} point{'s' if action.points != 1 else ''}"


def _game_lines(game: MatGame, number: int, players: tuple[str, str]) -> list[str]:
    lines = [f" Game {number}"]
    # gnubg pads the left half to 31 characters and writes the right half straight after it, so a
    # long first name runs into the second name ("aaaa : 0b : 0"). One space always separates them
    # here: gnubg's line for short names, unambiguous for long ones (gnubg 1.07 reads those right only so).
    left = f"{players[0]} : {game.score[0]}"
    lines.append(f" {left:<{_NAME_WIDTH - 1}} {players[1]} : {game.score[1]}")
    rows: list[list] = []  # [move number, left text, right text]

    def row_text(row: list) -> str:
        left = row[1] if row[1] is not None else ""
        right = row[2] if row[2] is not None else ""
        return f"{row[0]:3d}) {left:<{_LEFT_WIDTH}} {right}".rstrip()

    for action in game.actions:
        text = _record_text(action)
        if action.kind == ActionKind.WIN:
            last = rows[-1] if rows else None
            if action.player == 1 and last is not None and last[2] is None and last[1] == " Drops":
                last[2] = text  # gnubg: player 0 drops, player 1's win on the same line
            else:
                lines.extend(row_text(row) for row in rows)
                rows = []
                indent = _RIGHT_WIN_INDENT if action.player == 1 else _LEFT_WIN_INDENT
                lines.append(" " * indent + text.strip())
            continue
        if action.player == 0:
            rows.append([len(rows) + 1, text, None])
        elif rows and rows[-1][2] is None:
            rows[-1][2] = text
        else:
            rows.append([len(rows) + 1, None, text])
    lines.extend(row_text(row) for row in rows)
    return lines


def _raw_of(action: MatAction, game: int) -> _Raw:
    """A hand-built record, checked field by field."""
    if not isinstance(action, MatAction):
        raise ValueError(f"game {game}: records must be MatAction, got {type(action).__name__}")
    try:
        kind = ActionKind(action.kind)
    except ValueError:
        raise ValueError(f"game {game}: unknown record kind {action.kind!r}") from None
    if not isinstance(action.player, int | np.integer) or action.player not in (0, 1):
        raise ValueError(f"game {game}: a record's player must be 0 or 1, got {action.player!r}")
    dice = (0, 0)
    if kind == ActionKind.ROLL:
        try:
            dice = tuple(int(d) for d in action.dice)
        except (TypeError, ValueError):
            raise ValueError(
                f"game {game}: a roll's dice must be two integers 1-6, got {action.dice!r}"
            ) from None
        if len(dice) != 2 or not all(1 <= d <= 6 for d in dice):
            raise ValueError(f"game {game}: a roll's dice must be two integers 1-6, got {action.dice!r}")
    for name in ("cube_value", "points"):
        if not isinstance(getattr(action, name), int | np.integer):
            raise ValueError(f"game {game}: {name} must be an integer, got {getattr(action, name)!r}")
    return _Raw(
        int(action.player),
        kind,
        dice=dice,
        afterstate=action.afterstate,
        cube_value=int(action.cube_value),
        points=int(action.points),
    )


def write_mat(match: Match, rules: Rules = STANDARD_RULES) -> str:
    """Write a match as a Jellyfish ``.mat`` record, in gnubg's layout.

    The games are replayed first (only each record's player, kind, dice,
    afterstate, cube value and points are used), so a match built by hand
    is checked and its plays written in gnubg's notation.

    Args:
        match: the :class:`Match`.
        rules: the rules the plays are checked against.

    Returns:
        The text, ending with a newline; :func:`read_mat` reads it back to an
        equal match.

    Raises:
        ValueError: if a game breaks the rules (see :func:`read_mat`) or a
            player's name is empty or contains a ``:`` or a line break.
    """
    if not isinstance(match, Match):
        raise ValueError(f"write_mat takes a Match, got {type(match).__name__}")
    for seat, name in enumerate(match.players):
        if not name or ":" in name or "\n" in name or name != name.strip():
            raise ValueError(
                f"player {seat}'s name {name!r} cannot be written (empty, ':', line break or edge spaces)"
            )
    if (
        isinstance(match.length, bool)
        or not isinstance(match.length, int | np.integer)
        or not 0 <= match.length <= MAX_MATCH_LENGTH
    ):
        raise ValueError(
            f"the match length must be an integer 0 (money) to {MAX_MATCH_LENGTH} (gnubg's longest match), "
            f"got {match.length!r}"
        )
    entries = []
    for k, game in enumerate(match.games):
        if not isinstance(game, MatGame):
            raise ValueError(f"game {k + 1} must be a MatGame, got {type(game).__name__}")
        try:
            score = MatchState(match_length=match.length, score=game.score).score
        except ValueError as exc:
            raise ValueError(f"game {k + 1}: {exc}") from None
        entries.append(([_raw_of(action, k + 1) for action in game.actions], score, False, 0))
    games = _replay_match(match, entries, rules).games
    out = [f"; {comment}" for comment in match.comments]
    if out:
        out.append("")
    out += [f" {match.length} point match", ""]
    for k, game in enumerate(games):
        out += _game_lines(game, k + 1, match.players)
        out.append("")
    return "\n".join(out) + "\n"
