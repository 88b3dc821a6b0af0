"""eXtreme Gammon position IDs (XGID).

An XGID is ten ``:``-separated fields after an optional ``XGID=`` prefix::

    XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10
         position                   | | | |  | | | | max cube (log2)
                                    | | | |  | | | match length, 0 = money
                                    | | | |  | | Crawford (match) / Jacoby+beaver (money)
                                    | | | |  | O's score
                                    | | | |  X's score
                                    | | | dice
                                    | | turn
                                    | cube owner
                                    cube value (log2)

Sources: eXtreme Gammon's published description of the XGID, and GNU
Backgammon's importer of it (``SetXGID`` in ``set.c``, ``PositionFromXG``
in ``positionid.c``), which this module follows field by field so that an
XGID read here gives the same position and Match ID as in gnubg.

===============  ===========================================================
field            meaning
===============  ===========================================================
position         26 characters, **always from X's side, whoever is on
                 roll**. Index 0 is O's bar, index ``i`` (1-24) is X's point
                 ``i`` (X moves 24 towards 1, so O's point ``q`` is index
                 ``25 - q``), index 25 is X's bar. ``-`` = empty, ``A``-``O``
                 = 1-15 checkers of X (upper case), ``a``-``o`` = 1-15 of O.
                 Borne-off checkers are the ones missing from 15.
cube             the cube value is ``2**cube``; while a double is offered it
                 is the cube before the double.
cube owner       ``1`` X, ``-1`` O, ``0`` centred. A centred cube is one
                 nobody has doubled yet, so its value is 1 (cube field
                 ``0``), except in money play, where automatic doubles
                 leave it centred above 1 (gnubg's Match ID and XG's
                 cube field both hold it; read and written). A centred
                 cube above 1 in match play, and an owned cube at 1, are
                 refused (RULES.md 8: the cube starts centred at 1, and
                 whoever takes a double owns it).
turn             ``1`` X, ``-1`` O: the player on roll, or (dice ``D``) the
                 player who has doubled.
dice             ``00`` not rolled yet; two digits 1-6 = the roll (XG and
                 gnubg write the higher die first; either order is read,
                 and kept in ``MatchState.dice`` as written, so that
                 :func:`to_xgid` writes it back); ``D`` = a double is
                 offered and the other player must take or pass. XG's ``B``
                 (beaver) and ``R`` (raccoon) are refused, as gnubg does.
score 1, 2       X's score, then O's; in match play each below the match
                 length (a score at it ends the match: no game is played).
Crawford/Jacoby  match play: 1 = this is the Crawford game, else 0. Money
                 play: bit 0 = Jacoby rule, bit 1 = beavers allowed (``0``
                 neither, ``1`` Jacoby, ``2`` beavers, ``3`` both), kept in
                 ``MatchState.jacoby`` and ``MatchState.beavers``.
match length     0 = money play; at most 64, gnubg's longest match (see
                 :data:`~nard_ai.formats.match_id.MAX_MATCH_LENGTH`).
max cube         log2 of the largest cube allowed (XG's cube limit, 10 =
                 1024 by default); kept in ``MatchState.max_cube_log2`` so
                 that a round trip writes it back. A cube above it, or a
                 pending double (``D``) to a cube above it, is refused.
===============  ===========================================================

Players and seats (the same mapping as gnubg's importer): **X is gnubg's
player 1 and O is player 0**, so XGID's score 1 is ``MatchState.score[1]``,
a cube owner of 1 is player 1, turn 1 means ``player_on_roll == 1``. The
board that goes with the XGID is seen from the player on roll (the doubler
while ``D`` is pending), exactly as :mod:`nard_ai.formats.match_id` pairs a
board with a :class:`MatchState`: with X on roll it is the position string
read as signed counts; with O on roll it is that board turned with
:func:`nard_ai.core.board.swap_sides`.

What an XGID cannot hold (and :func:`to_xgid` refuses): a resignation on
offer, a game state other than "playing", and turn/dice combinations other
than "on roll, not rolled", "rolled", and "doubled, awaiting an answer".
Everything :func:`from_xgid` reads, :func:`to_xgid` writes back.
"""

from __future__ import annotations

import numpy as np

from nard_ai.core.board import BOARD_SIZE, NUM_CHECKERS, swap_sides, validate_board
from nard_ai.core.game import CENTERED
from nard_ai.formats.match_id import (
    MAX_CUBE_LOG2,
    MAX_FIELD,
    MAX_MATCH_LENGTH,
    GameStatus,
    MatchState,
    Resignation,
)

XGID_PREFIX = "XGID="
POSITION_LENGTH = 26
FIELD_NAMES = (
    "position",
    "cube",
    "cube owner",
    "turn",
    "dice",
    "score 1 (X)",
    "score 2 (O)",
    "Crawford/Jacoby",
    "match length",
    "max cube",
)
X_PLAYER = 1  # gnubg's seat for XG's X (upper case); O is seat 0
_JACOBY = 1
_BEAVER = 2


def _position_string(xg_board: np.ndarray) -> str:
    """The 26 characters of a board already in X's view (index layout = nard_ai's)."""
    chars = []
    for count in xg_board.tolist():
        if count > 0:
            chars.append(chr(ord("A") + count - 1))
        elif count < 0:
            chars.append(chr(ord("a") - count - 1))
        else:
            chars.append("-")
    return "".join(chars)


def to_xgid(board: np.ndarray, state: MatchState | None = None, *, max_cube_log2: int | None = None) -> str:
    """The XGID of a board and match state.

    Args:
        board: ``(26,)`` board seen from ``state.player_on_roll`` (the mover;
            the doubler while a double is offered).
        state: the :class:`MatchState`; the default is a money game with
            player 1 (XG's X) on roll before rolling, Jacoby and beavers off, so
            ``to_xgid(starting_board())`` is
            ``"XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"``.
        max_cube_log2: the last field, log2 of XG's cube limit; ``None``
            (the default) writes ``state.max_cube_log2`` (10 unless the
            state came from an XGID that said otherwise).

    Returns:
        The XGID, with the ``XGID=`` prefix.

    Raises:
        ValueError: on an invalid board, a state an XGID cannot express (a
            resignation, a game not being played, ``turn`` differing from ``player_on_roll`` without a
            double, a centred cube above 1 in match play, an owned cube at 1), a ``max_cube_log2`` outside
            0-15, or a cube (or a pending double) above ``2**max_cube_log2``.
    """
    state = MatchState() if state is None else state
    if not isinstance(state, MatchState):
        raise ValueError(f"to_xgid takes a MatchState, got {type(state).__name__}")
    arr = np.asarray(board)
    if arr.ndim != 1:
        raise ValueError(f"to_xgid takes one board of shape (26,), got shape {arr.shape}")
    arr = validate_board(arr)
    if max_cube_log2 is None:
        max_cube_log2 = state.max_cube_log2
    if isinstance(max_cube_log2, bool) or not isinstance(max_cube_log2, int | np.integer):
        raise ValueError(f"max_cube_log2 must be an integer, got {max_cube_log2!r}")
    if not 0 <= max_cube_log2 <= MAX_CUBE_LOG2:
        raise ValueError(f"max_cube_log2 must be 0-{MAX_CUBE_LOG2}, got {max_cube_log2}")
    cube_log2 = state.cube_value.bit_length() - 1
    _check_cube(
        cube_log2, state.cube_owner == CENTERED, state.double_offered, int(max_cube_log2), state.match_length
    )
    if state.resignation != Resignation.NONE:
        raise ValueError(f"an XGID cannot express a resignation on offer ({state.resignation.name})")
    if state.game_state != GameStatus.PLAYING:
        raise ValueError(f"an XGID describes a game being played, got game_state {state.game_state.name}")
    if state.double_offered:  # with dice (0, 0): MatchState refuses a double offered after rolling
        if state.turn == state.player_on_roll:
            raise ValueError("with a double offered, turn must be the player asked to take (not the doubler)")
        dice = "D"
    else:
        if state.turn != state.player_on_roll:
            raise ValueError(
                f"turn ({state.turn}) differs from player_on_roll ({state.player_on_roll}) "
                "without a double offered; an XGID cannot express that"
            )
        dice = f"{state.dice[0]}{state.dice[1]}"
    xg_board = arr if state.player_on_roll == X_PLAYER else swap_sides(arr)
    owner = {CENTERED: 0, X_PLAYER: 1, 1 - X_PLAYER: -1}[state.cube_owner]
    turn = 1 if state.player_on_roll == X_PLAYER else -1
    if state.match_length:
        flags = int(state.crawford)
    else:
        flags = (_JACOBY if state.jacoby else 0) | (_BEAVER if state.beavers else 0)
    fields = (
        _position_string(xg_board),
        str(cube_log2),
        str(owner),
        str(turn),
        dice,
        str(state.score[X_PLAYER]),
        str(state.score[1 - X_PLAYER]),
        str(flags),
        str(state.match_length),
        str(int(max_cube_log2)),
    )
    return XGID_PREFIX + ":".join(fields)


def _check_cube(cube_log2: int, centred: bool, doubled: bool, max_cube_log2: int, match_length: int) -> None:
    """The cube fields agree: a centred cube is 1 in match play (any value in money play: automatic doubles),
    an owned one 2 or more, and neither the cube nor a pending double passes the max cube."""
    if centred and cube_log2 and match_length:
        raise ValueError(
            f"the cube is centred (owner 0) at {1 << cube_log2} (field 'cube' {cube_log2}) in a "
            f"{match_length}-point match (field 'match length'); in match play a centred cube is one nobody "
            "has doubled, so its value is 1 (field 'cube' 0): after a take the taker owns it (docs/RULES.md 8; "
            "a centred cube above 1 comes only from automatic doubles, in money play)"
        )
    if not centred and not cube_log2:
        raise ValueError(
            "the cube is owned (field 'cube owner' not 0) at 1 (field 'cube' 0); a cube is owned only once "
            "a double has been taken, which makes it 2 or more (field 'cube' 1 or more)"
        )
    if cube_log2 > max_cube_log2:
        raise ValueError(
            f"the cube is {1 << cube_log2} (field 'cube' {cube_log2}), above the max cube "
            f"{1 << max_cube_log2} (field 'max cube' {max_cube_log2})"
        )
    if doubled and cube_log2 + 1 > max_cube_log2:
        raise ValueError(
            f"a double to {2 << cube_log2} is offered (dice 'D'), above the max cube "
            f"{1 << max_cube_log2} (field 'max cube' {max_cube_log2})"
        )


def _parse_int(text: str, field: str, low: int, high: int) -> int:
    body = text.strip()
    digits = body[1:] if body[:1] in "+-" else body
    if not digits.isdigit() or not digits.isascii():
        raise ValueError(f"XGID field {field!r} must be an integer, got {text!r}")
    significant = digits.lstrip("0") or "0"
    if len(significant) > 18:  # far out of range (and int() refuses a str of over 4300 digits)
        raise ValueError(
            f"XGID field {field!r} must be {low} to {high}, got a number of {len(significant)} digits "
            f"({body[:12]!r}...)"
        )
    value = -int(significant) if body.startswith("-") else int(significant)
    if not low <= value <= high:
        raise ValueError(f"XGID field {field!r} must be {low} to {high}, got {value}")
    return value


def _parse_position(text: str) -> np.ndarray:
    """The 26 position characters as a signed board in X's view (nard_ai's index layout)."""
    if len(text) != POSITION_LENGTH:
        raise ValueError(f"XGID field 'position' has {POSITION_LENGTH} characters, got {len(text)}: {text!r}")
    board = np.zeros(BOARD_SIZE, dtype=np.int64)
    for index, ch in enumerate(text):
        if ch == "-":
            continue
        if "A" <= ch <= "Z" and ch.isascii():
            count = ord(ch) - ord("A") + 1
        elif "a" <= ch <= "z" and ch.isascii():
            count = -(ord(ch) - ord("a") + 1)
        else:
            raise ValueError(
                f"XGID field 'position' has {ch!r} at index {index}; only '-', 'A'-'O' (X) and 'a'-'o' (O) are allowed"
            )
        if abs(count) > NUM_CHECKERS:
            raise ValueError(
                f"XGID field 'position' has {ch!r} at index {index}: {abs(count)} checkers, a side has only 15"
            )
        if index == 0 and count > 0:
            raise ValueError(f"XGID field 'position': index 0 is O's bar, but holds X's checkers ({ch!r})")
        if index == POSITION_LENGTH - 1 and count < 0:
            raise ValueError(f"XGID field 'position': index 25 is X's bar, but holds O's checkers ({ch!r})")
        board[index] = count
    try:
        return validate_board(board)
    except ValueError as exc:
        raise ValueError(f"XGID field 'position' {text!r} is not a valid position: {exc}") from None


def from_xgid(text: str) -> tuple[np.ndarray, MatchState]:
    """Decode an XGID.

    Args:
        text: ``"XGID=<position>:<cube>:<owner>:<turn>:<dice>:<score 1>:<score 2>:<flags>:<length>:<max cube>"``;
            the ``XGID=`` prefix is optional (any case) and surrounding
            whitespace is ignored.

    Returns:
        ``(board, state)``: the ``(26,)`` int8 board seen from
        ``state.player_on_roll`` and the :class:`MatchState` (X = player 1,
        O = player 0; game state "playing"; the max cube in
        ``state.max_cube_log2``; in money play the Jacoby field's bit 0 in
        ``state.jacoby`` and bit 1, beavers, in ``state.beavers``).

    Raises:
        ValueError: naming the field and value, on a wrong number of fields,
            any malformed field, a match longer than 64 points, a score at
            or above the match length, a centred cube above 1 in match play, an owned cube
            at 1, a cube (or pending double) above the max cube, or a state
            :class:`MatchState` refuses (a Crawford game at a score where it
            cannot be).
    """
    if not isinstance(text, str):
        raise ValueError(f"an XGID must be a str, got {type(text).__name__}")
    body = text.strip()
    if body[: len(XGID_PREFIX)].upper() == XGID_PREFIX:
        body = body[len(XGID_PREFIX) :]
    fields = body.split(":")
    if len(fields) != len(FIELD_NAMES):
        raise ValueError(
            f"an XGID has {len(FIELD_NAMES)} ':'-separated fields, got {len(fields)} in {text!r}"
        )
    position, cube, owner, turn, dice, score_x, score_o, flags, length, max_cube = fields
    xg_board = _parse_position(position)
    cube_log2 = _parse_int(cube, "cube", 0, MAX_CUBE_LOG2)
    owner_value = _parse_int(owner, "cube owner", -1, 1)
    turn_value = _parse_int(turn, "turn", -1, 1)
    if turn_value == 0:
        raise ValueError("XGID field 'turn' must be 1 (X) or -1 (O), got 0")
    match_length = _parse_int(length, "match length", 0, MAX_FIELD)
    if match_length > MAX_MATCH_LENGTH:
        raise ValueError(
            f"XGID field 'match length' is {match_length}, longer than {MAX_MATCH_LENGTH}, "
            "the longest match gnubg plays (its MAXSCORE)"
        )
    scores = (
        _parse_int(score_x, "score 1 (X)", 0, MAX_FIELD),
        _parse_int(score_o, "score 2 (O)", 0, MAX_FIELD),
    )
    for field, points in zip(FIELD_NAMES[5:7], scores, strict=True):
        if match_length and points >= match_length:
            raise ValueError(
                f"XGID field {field!r} is {points}, at or above the match length {match_length}: "
                "the match is over, and an XGID describes a game being played"
            )
    flag_value = _parse_int(flags, "Crawford/Jacoby", 0, 1 if match_length else _JACOBY | _BEAVER)
    max_cube_log2 = _parse_int(max_cube, "max cube", 0, MAX_CUBE_LOG2)
    dice_text = dice.strip()
    double_offered = False
    if dice_text.upper() == "D":
        double_offered, rolled = True, (0, 0)
    elif dice_text.upper() in ("B", "R"):
        raise ValueError(f"XGID field 'dice' is {dice_text!r} (beaver/raccoon), which is not supported")
    elif len(dice_text) == 2 and dice_text.isdigit() and dice_text.isascii():
        rolled = (int(dice_text[0]), int(dice_text[1]))
        if rolled != (0, 0) and not all(1 <= d <= 6 for d in rolled):
            raise ValueError(f"XGID field 'dice' must be 00, D or two dice 1-6, got {dice!r}")
    else:
        raise ValueError(f"XGID field 'dice' must be 00, D or two dice 1-6, got {dice!r}")
    try:
        _check_cube(cube_log2, owner_value == 0, double_offered, max_cube_log2, match_length)
    except ValueError as exc:
        raise ValueError(f"XGID {text!r}: {exc}") from None
    mover = X_PLAYER if turn_value == 1 else 1 - X_PLAYER
    seat_of_score = {X_PLAYER: scores[0], 1 - X_PLAYER: scores[1]}
    try:
        state = MatchState(
            cube_value=1 << cube_log2,
            cube_owner={0: CENTERED, 1: X_PLAYER, -1: 1 - X_PLAYER}[owner_value],
            player_on_roll=mover,
            crawford=bool(flag_value) if match_length else False,
            game_state=GameStatus.PLAYING,
            turn=1 - mover if double_offered else mover,
            double_offered=double_offered,
            dice=rolled,
            match_length=match_length,
            score=(seat_of_score[0], seat_of_score[1]),
            jacoby=bool(flag_value & _JACOBY) if not match_length else False,
            beavers=bool(flag_value & _BEAVER) if not match_length else False,
            max_cube_log2=max_cube_log2,
        )
    except ValueError as exc:
        raise ValueError(f"XGID {text!r}: {exc}") from None
    board = xg_board if mover == X_PLAYER else swap_sides(xg_board)
    return board, state
