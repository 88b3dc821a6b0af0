"""GNU Backgammon Match IDs and the combined ``PositionID:MatchID`` form.

Source: the gnubg manual, "A technical description of the Match ID", and
gnubg's ``matchid.c``. A Match ID is 12 characters of base64 (standard
alphabet, no padding) holding a 9-byte *match key*: 72 bits, of which gnubg
uses 67. Bit ``k`` of the key is bit ``k % 8`` (least significant first) of
byte ``k // 8``; a field of ``n`` bits starting at bit ``k`` stores its value
least significant bit first.

=========  ====  =========================================================
bits       size  field (:class:`MatchState` attribute)
=========  ====  =========================================================
0-3        4     log2 of the cube value (``cube_value``): 0 = 1, 3 = 8
4-5        2     cube owner (``cube_owner``): 0 or 1 = that player, 3 = centred
6          1     the player on roll, or who rolled (``player_on_roll``)
7          1     this is the Crawford game (``crawford``)
8-10       3     game state (``game_state``, :class:`GameStatus`)
11         1     the player who must act now (``turn``)
12         1     a double is offered (``double_offered``)
13-14      2     resignation offered (``resignation``, :class:`Resignation`)
15-17      3     first die, 0 = not rolled (gnubg writes the higher die here)
18-20      3     second die
21-35      15    match length (``match_length``), 0 = money play
36-50      15    player 0's score (``score[0]``)
51-65      15    player 1's score (``score[1]``)
66         1     **not** Jacoby (``jacoby`` is its negation; added to gnubg in
                 2011 in an unused bit, so older IDs, all ``0`` there, read as
                 Jacoby on)
67-71      5     unused, always 0
=========  ====  =========================================================

Players and the mover
---------------------
A Match ID names gnubg's two fixed seats, player 0 and player 1 (gnubg's
board window shows player 1 at the bottom, usually the human, and player 0
on top). A nard_ai board knows no seats: it is always seen from the side on
roll. The two are tied by one rule, the one gnubg's combined ID uses:

    **the board goes with** ``MatchState.player_on_roll``: it is seen from
    that seat (gnubg's ``fMove``), which is then the mover of the board.

``player_on_roll`` and ``turn`` differ only while a double or a resignation
waits for an answer: then ``player_on_roll`` is the doubler (or resigner),
whose view the board still is, and ``turn`` is the player who must answer.
``score[player_on_roll]`` is the mover's score, and a cube owned by
``player_on_roll`` is owned by the mover.

Decoding is strict, like :mod:`nard_ai.formats.position_id`: every bit gnubg
would never write (cube owner ``10``, game state 5-7, a die of 7, one die
without the other, a Crawford game in money play, a score above the match
length, a match longer than 64 points, any of the 5 unused bits) is a
``ValueError`` naming the field. So is a state no game reaches, though
gnubg's reader (``MatchFromKey``) lets it through: a score at the match
length in a game being played or about to start, a centred cube above 1 in
match play, an owned cube at 1, dice rolled, a double or a resignation offered
or the cube turned before any game, a double
offered after rolling or against the cube's owner, a double and a
resignation pending with the doubled player to answer (see
:class:`MatchState`). What gnubg's play does write is read: the final score
(at the match length) once the last game is over, and a double and a
resignation pending together when the doubled player resigns (gnubg 1.07:
``double`` then ``resign single`` gives ``MDEAAAAAAAAA``).

Limits
------
The match length field has 15 bits, but gnubg plays matches of at most
:data:`MAX_MATCH_LENGTH` = 64 points (its ``MAXSCORE``): ``MatchFromKey`` in
``matchid.c`` refuses a longer one, and gnubg 1.07 answers ``set matchid
cAlgDAAAAAAE`` (a 99-point match) with "Illegal match ID" and ``new match
65`` with "compiled with support only for matches of length 64 and below".
So :class:`MatchState` refuses a match length above 64, and no Match ID
gnubg would reject is ever written. Money-play scores keep their 15 bits
(gnubg accepts a money score of 32767).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from nard_ai.core.game import CENTERED
from nard_ai.formats.base64key import decode_base64, encode_base64
from nard_ai.formats.position_id import board_from_position_id, position_id

MATCH_ID_LENGTH = 12
KEY_BYTES = 9
KEY_BITS = 72
USED_BITS = 67
MAX_CUBE_LOG2 = 15  # 4 bits: the largest cube gnubg can write is 2**15
MAX_FIELD = (1 << 15) - 1  # match length and scores have 15 bits each
MAX_MATCH_LENGTH = 64  # gnubg's MAXSCORE: the longest match it plays and reads from a Match ID
DEFAULT_MAX_CUBE_LOG2 = 10  # XG's default cube limit, 2**10 = 1024 (the XGID's last field)
_CENTRED_BITS = 3  # cube owner bits of a centred cube

# (name, first bit, number of bits), in the order of the manual.
_FIELDS = (
    ("cube", 0, 4),
    ("cube_owner", 4, 2),
    ("player_on_roll", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("double_offered", 12, 1),
    ("resignation", 13, 2),
    ("die_1", 15, 3),
    ("die_2", 18, 3),
    ("match_length", 21, 15),
    ("score_0", 36, 15),
    ("score_1", 51, 15),
    ("not_jacoby", 66, 1),
)


class GameStatus(IntEnum):
    """gnubg's game state (bits 8-10 of the match key): no game, playing, over, resigned, dropped.

    gnubg calls the field the game state; here it is ``GameStatus``, so as not to share a name with
    :class:`nard_ai.core.game.GameState` (a batch of games in play)."""

    NONE = 0  # no game started
    PLAYING = 1
    OVER = 2
    RESIGNED = 3  # the game ended by a resignation
    DROPPED = 4  # the game ended by a dropped (passed) cube


GameState = GameStatus
"""The old name of :class:`GameStatus` (before 2026-12-03), kept for a release: ``nard_ai.GameState``
is the batch of games of :mod:`nard_ai.core.game`, a different thing."""


class Resignation(IntEnum):
    """The resignation on offer (bits 13-14): what the resigning player offers to lose."""

    NONE = 0
    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


@dataclass(frozen=True)
class MatchState:
    """Everything a gnubg Match ID holds: cube, whose turn, dice and score.

    Players are gnubg's fixed seats 0 and 1; a board that goes with this
    state is seen from ``player_on_roll`` (see the module docstring). The
    defaults are a money game under way, cube centred, player 1 on roll
    before rolling, Jacoby and beavers off: with the starting board that is gnubg's
    ``4HPwATDgc/ABMA:cAkAAAAAAAAE`` and eXtreme Gammon's
    ``XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10``.

    Attributes:
        cube_value: 1, 2, 4, ... up to ``2**15``. While a double is offered
            it is still the value before the double (gnubg's convention).
        cube_owner: ``CENTERED`` (-1), 0 or 1.
        player_on_roll: the seat (0 or 1) that is on roll or has rolled; the
            board's mover.
        crawford: this game is the Crawford game (match play only).
        game_state: a :class:`GameStatus`.
        turn: the seat (0 or 1) that must act now; differs from
            ``player_on_roll`` only while a double or resignation awaits an
            answer.
        double_offered: ``player_on_roll`` has doubled and ``turn`` must take
            or pass.
        resignation: a :class:`Resignation` on offer, by the player who is
            not ``turn`` (``turn`` must accept or reject it): usually
            ``player_on_roll``, or the doubled player who resigns instead of
            answering a double (then ``turn`` is back on the doubler).
        dice: the roll to play, in the order given (an XGID's order;
            :func:`from_match_id` gives gnubg's, higher die first, and
            :func:`match_id` writes that order whatever the order here);
            ``(0, 0)`` before rolling.
        match_length: points to win the match, 1 to
            :data:`MAX_MATCH_LENGTH` (64, gnubg's limit); 0 = money play.
        score: ``(player 0, player 1)`` points so far.
        jacoby: the Jacoby rule (money play only; gnubg stores its negation).
        beavers: beavers allowed (money play only): a doubled player may
            beaver, taking the cube at twice the doubled value. The XGID holds
            it (bit 1 of its Jacoby field); a Match ID does not (gnubg keeps
            it as a session setting, ``set beavers``), so :func:`match_id`
            leaves it out and :func:`from_match_id` gives ``False``.
        max_cube_log2: log2 of the largest cube allowed, 0-15 (default 10,
            a 1024-cube): the last field of an XGID, kept here so that
            :func:`~nard_ai.formats.xgid.from_xgid` then
            :func:`~nard_ai.formats.xgid.to_xgid` give the XGID back. A Match
            ID does not hold it (:func:`from_match_id` gives the default),
            and only the XGID functions check the cube against it.

    Raises:
        ValueError: (from the constructor) on a field outside what a Match
            ID can hold: a cube value that is not a power of two up to
            ``2**15``, an owner or seat not in its range, one die rolled
            without the other, a die outside 0-6, a negative match length
            or one above 64 (gnubg's longest match), a negative or too
            large score, a score above the match length, beavers in
            match play, or a Crawford game in money play, at a score where one player is
            not exactly one point short of the match length, or with the
            cube turned or a double offered; and on a state no game reaches:
            a score at the match length while a game is played or about to
            start (``game_state`` NONE or PLAYING), a centred cube above 1
            in match play, an owned cube at 1, anything of a game in
            progress with no game (``game_state`` NONE: dice rolled, a
            double or a resignation offered, a turned cube, ``turn`` other
            than ``player_on_roll``), a double offered with dice rolled or by
            the player the cube is owned against, or a double and a
            resignation pending with ``turn`` on the doubled player.
    """

    cube_value: int = 1
    cube_owner: int = CENTERED
    player_on_roll: int = 1
    crawford: bool = False
    game_state: GameStatus = GameStatus.PLAYING
    turn: int = 1
    double_offered: bool = False
    resignation: Resignation = Resignation.NONE
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False
    max_cube_log2: int = DEFAULT_MAX_CUBE_LOG2
    beavers: bool = False

    def __post_init__(self) -> None:
        set_field = object.__setattr__  # the dataclass is frozen; normalise in place
        cube = _int("cube_value", self.cube_value)
        if cube < 1 or cube & (cube - 1) or cube > 1 << MAX_CUBE_LOG2:
            raise ValueError(f"cube_value must be a power of two from 1 to {1 << MAX_CUBE_LOG2}, got {cube}")
        set_field(self, "cube_value", cube)
        owner = _int("cube_owner", self.cube_owner)
        if owner not in (CENTERED, 0, 1):
            raise ValueError(f"cube_owner must be CENTERED (-1), 0 or 1, got {owner}")
        set_field(self, "cube_owner", owner)
        for name in ("player_on_roll", "turn"):
            seat = _int(name, getattr(self, name))
            if seat not in (0, 1):
                raise ValueError(f"{name} must be 0 or 1, got {seat}")
            set_field(self, name, seat)
        for name in ("crawford", "double_offered", "jacoby", "beavers"):
            flag = getattr(self, name)
            if not isinstance(flag, bool | np.bool_ | int | np.integer) or flag not in (0, 1):
                raise ValueError(f"{name} must be a bool, got {flag!r}")
            set_field(self, name, bool(flag))
        limit = _int("max_cube_log2", self.max_cube_log2)
        if not 0 <= limit <= MAX_CUBE_LOG2:
            raise ValueError(
                f"max_cube_log2 must be 0-{MAX_CUBE_LOG2} (a cube limit of 1 to 2**15), got {limit}"
            )
        set_field(self, "max_cube_log2", limit)
        set_field(self, "game_state", _enum(GameStatus, "game_state", self.game_state))
        set_field(self, "resignation", _enum(Resignation, "resignation", self.resignation))
        dice = _pair("dice", self.dice)
        if any(not 0 <= d <= 6 for d in dice):
            raise ValueError(f"each die must be 0-6 (0 = not rolled), got dice {dice}")
        if (dice[0] == 0) != (dice[1] == 0):
            raise ValueError(f"both dice are rolled or neither is (0, 0), got dice {dice}")
        set_field(self, "dice", dice)
        length = _int("match_length", self.match_length)
        if not 0 <= length <= MAX_MATCH_LENGTH:
            raise ValueError(
                f"match_length must be 0 (money play) to {MAX_MATCH_LENGTH}, the longest match gnubg "
                f"plays (its MAXSCORE; it rejects a Match ID with a longer match as illegal), got {length}"
            )
        set_field(self, "match_length", length)
        score = _pair("score", self.score)
        for player, points in enumerate(score):
            if not 0 <= points <= MAX_FIELD:
                raise ValueError(f"score of player {player} must be 0 to {MAX_FIELD}, got {points}")
            if length and points > length:
                raise ValueError(f"score of player {player} is {points}, above the match length {length}")
        set_field(self, "score", score)
        if self.beavers and length:
            raise ValueError(
                f"beavers is set in a {length}-point match; beavers are a money-play option (match_length 0)"
            )
        if self.crawford:
            if not length:
                raise ValueError("crawford is set in money play (match_length 0); it applies to matches only")
            # RULES.md 8: the Crawford game is the game right after one player
            # first reaches one point short of the match length.
            if max(score) != length - 1 or min(score) >= length - 1:
                raise ValueError(
                    f"crawford is set at score {score[0]}-{score[1]} of a {length}-point match; "
                    f"the Crawford game needs exactly one player at {length - 1}"
                )
            if cube != 1 or owner != CENTERED or self.double_offered:
                raise ValueError(
                    "crawford is set with the cube turned (value "
                    f"{cube}, owner {owner}, double offered {self.double_offered}); "
                    "nobody may double in the Crawford game (docs/RULES.md 8)"
                )
        self._check_reachable()

    def _check_reachable(self) -> None:
        """Refuse field combinations no game reaches (each field in range, checked before).

        gnubg's own reader (``MatchFromKey`` in ``matchid.c``) checks only the
        ranges; these are the states its play never writes. What it does
        write is kept: the final score, equal to the match length, once the
        last game is over; the dice and resignation of a game that ended; a
        double and a resignation pending together (the doubled player
        resigned instead of answering: ``turn`` is then the doubler, who
        must accept or reject the resignation); a centred cube above 1 in
        money play (automatic doubles).
        """
        length, score, cube, owner = self.match_length, self.score, self.cube_value, self.cube_owner
        state, dice, mover = self.game_state, self.dice, self.player_on_roll
        if length and state in (GameStatus.NONE, GameStatus.PLAYING):
            for player, points in enumerate(score):
                if points >= length:
                    raise ValueError(
                        f"score of player {player} is {points}, at the match length {length}, with game_state "
                        f"{state.name}: the match is over, so no game is played any more (gnubg writes the "
                        "final score only with the last game over: game_state OVER, RESIGNED or DROPPED)"
                    )
        if length and owner == CENTERED and cube != 1:
            raise ValueError(
                f"cube_value is {cube} with the cube centred (cube_owner CENTERED) in a {length}-point match; "
                "in match play a cube above 1 is always owned, by the player who took the double "
                "(a centred cube above 1 comes only from automatic doubles, a money-play option)"
            )
        if owner != CENTERED and cube == 1:
            raise ValueError(
                f"cube_owner is player {owner} with cube_value 1; a cube is owned only once a double has been "
                "taken, which makes it 2 or more (an unturned cube is centred: cube_owner CENTERED)"
            )
        if state == GameStatus.NONE:
            # no game has started: nothing of a game in progress (a roll, a double, a resignation, a turned cube)
            if dice != (0, 0):
                raise ValueError(
                    f"dice are {dice[0]}-{dice[1]} with game_state NONE: no game has started, so nothing has "
                    "been rolled (dice (0, 0))"
                )
            if self.resignation != Resignation.NONE:
                raise ValueError(
                    f"resignation is {self.resignation.name} with game_state NONE: no game has started, so "
                    "nobody can resign it (resignation NONE)"
                )
            if self.double_offered:
                raise ValueError(
                    "double_offered is set with game_state NONE: no game has started, so nobody can double "
                    "(double_offered False)"
                )
            if cube != 1 or owner != CENTERED:
                raise ValueError(
                    f"cube_value is {cube} with cube_owner {owner} and game_state NONE: no game has started, "
                    "so the cube is still centred at 1"
                )
            if self.turn != mover:
                raise ValueError(
                    f"turn is {self.turn} and player_on_roll {mover} with game_state NONE: they differ only "
                    "while a double or resignation awaits an answer, and no game has started"
                )
        if self.double_offered:
            if dice != (0, 0):
                raise ValueError(
                    f"double_offered is set with dice {dice[0]}-{dice[1]} rolled; a double is offered "
                    "before rolling (dice (0, 0))"
                )
            if owner == 1 - mover:
                raise ValueError(
                    f"double_offered is set for player_on_roll {mover} (the doubler), but the cube is owned "
                    f"by player {owner}; only the cube's owner, or either player while it is centred, may "
                    "double"
                )
            if self.resignation == Resignation.NONE and self.turn == mover:
                raise ValueError(
                    f"double_offered is set with turn {self.turn}, the doubler (player_on_roll {mover}); "
                    f"a double waits for the doubled player's answer, so turn is {1 - mover}"
                )
            if self.resignation != Resignation.NONE and self.turn != mover:
                raise ValueError(
                    f"double_offered and resignation {self.resignation.name} are both pending with turn "
                    f"{self.turn}, the doubled player; when the doubled player resigns instead of answering "
                    f"the double, the doubler (player_on_roll {mover}) must answer the resignation, so turn "
                    f"is {mover}"
                )

    @property
    def mover_score(self) -> int:
        """The score of ``player_on_roll``, the mover of the board that goes with this state."""
        return self.score[self.player_on_roll]

    @property
    def opponent_score(self) -> int:
        """The score of the other seat."""
        return self.score[1 - self.player_on_roll]


def _int(name: str, value: object) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _pair(name: str, value: object) -> tuple[int, int]:
    try:
        first, second = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair of integers, got {value!r}") from None
    return _int(name, first), _int(name, second)


def _enum(kind: type[IntEnum], name: str, value: object) -> IntEnum:
    number = _int(name, value)
    try:
        return kind(number)
    except ValueError:
        allowed = ", ".join(f"{m.value} ({m.name})" for m in kind)
        raise ValueError(f"{name} must be one of {allowed}, got {number}") from None


def match_key(state: MatchState) -> bytes:
    """The 9-byte gnubg match key of a state (bit layout in the module docstring)."""
    if not isinstance(state, MatchState):
        raise ValueError(f"match_key takes a MatchState, got {type(state).__name__}")
    values = {
        "cube": state.cube_value.bit_length() - 1,
        "cube_owner": _CENTRED_BITS if state.cube_owner == CENTERED else state.cube_owner,
        "player_on_roll": state.player_on_roll,
        "crawford": int(state.crawford),
        "game_state": int(state.game_state),
        "turn": state.turn,
        "double_offered": int(state.double_offered),
        "resignation": int(state.resignation),
        "die_1": max(state.dice),  # gnubg's MatchID() writes the higher die first
        "die_2": min(state.dice),
        "match_length": state.match_length,
        "score_0": state.score[0],
        "score_1": state.score[1],
        "not_jacoby": int(not state.jacoby),
    }
    key = 0
    for name, first, _ in _FIELDS:
        key |= values[name] << first
    return key.to_bytes(KEY_BYTES, "little")


def match_id(state: MatchState) -> str:
    """The GNU Backgammon Match ID of a state.

    Args:
        state: the :class:`MatchState`.

    Returns:
        12 base64 characters; ``"cAkAAAAAAAAE"`` for the default state (money
        game, player 1 on roll, Jacoby off), ``"QYkqASAAIAAA"`` for the
        manual's example (9-point match at 2-4, player 0 owns a 2-cube,
        player 1 has rolled 5-2, Jacoby bit 0).

    Raises:
        ValueError: if ``state`` is not a :class:`MatchState`.
    """
    value = int.from_bytes(match_key(state), "big")
    return encode_base64(value, MATCH_ID_LENGTH)


def _key_from_id(mid: str) -> int:
    """Decode the base64 of a Match ID to its 72-bit key (bit k = bit k of the int)."""
    value = decode_base64(mid, MATCH_ID_LENGTH, "Match ID")
    return int.from_bytes(value.to_bytes(KEY_BYTES, "big"), "little")


def from_match_id(mid: str) -> MatchState:
    """Decode a GNU Backgammon Match ID.

    Args:
        mid: 12 base64 characters; surrounding whitespace is ignored.

    Returns:
        The :class:`MatchState`. Dice written low die first are accepted and
        returned high die first (gnubg's order, the one :func:`match_id`
        writes).

    Raises:
        ValueError: naming the field and value, on a wrong length, characters
            outside base64, a field value gnubg never writes, or a state no
            game reaches (see the module docstring and :class:`MatchState`).
    """
    if not isinstance(mid, str):
        raise ValueError(f"a Match ID must be a str, got {type(mid).__name__}")
    mid = mid.strip()
    key = _key_from_id(mid)
    if key >> USED_BITS:
        raise ValueError(
            f"Match ID {mid!r} sets unused bits {USED_BITS}-{KEY_BITS - 1} (gnubg never writes them)"
        )
    raw = {name: (key >> first) & ((1 << size) - 1) for name, first, size in _FIELDS}
    if raw["cube_owner"] == 2:
        raise ValueError(f"Match ID {mid!r}: cube owner bits are 10 (2); only 00, 01 and 11 (centred) exist")
    if raw["game_state"] > max(GameStatus):
        raise ValueError(f"Match ID {mid!r}: game state {raw['game_state']} is not 0-{int(max(GameStatus))}")
    for die in ("die_1", "die_2"):
        if raw[die] > 6:
            raise ValueError(f"Match ID {mid!r}: {die.replace('_', ' ')} is {raw[die]}, not 0-6")
    try:
        return MatchState(
            cube_value=1 << raw["cube"],
            cube_owner=CENTERED if raw["cube_owner"] == _CENTRED_BITS else raw["cube_owner"],
            player_on_roll=raw["player_on_roll"],
            crawford=bool(raw["crawford"]),
            game_state=GameStatus(raw["game_state"]),
            turn=raw["turn"],
            double_offered=bool(raw["double_offered"]),
            resignation=Resignation(raw["resignation"]),
            dice=(max(raw["die_1"], raw["die_2"]), min(raw["die_1"], raw["die_2"])),
            match_length=raw["match_length"],
            score=(raw["score_0"], raw["score_1"]),
            jacoby=not raw["not_jacoby"],
        )
    except ValueError as exc:
        raise ValueError(f"Match ID {mid!r}: {exc}") from None


def gnubg_id(board: np.ndarray, state: MatchState) -> str:
    """The combined ``PositionID:MatchID`` that gnubg shows as its "GNU Backgammon ID".

    Args:
        board: ``(26,)`` board seen from ``state.player_on_roll`` (the mover).
        state: the :class:`MatchState`.

    Returns:
        ``"<14-character Position ID>:<12-character Match ID>"``, e.g.
        ``"4HPwATDgc/ABMA:cAkAAAAAAAAE"`` for the starting board and the
        default state.

    Raises:
        ValueError: on an invalid board or state.
    """
    return f"{position_id(board)}:{match_id(state)}"


def parse_gnubg_id(text: str) -> tuple[np.ndarray, MatchState]:
    """Decode a combined ``PositionID:MatchID``.

    Args:
        text: ``"4HPwATDgc/ABMA:cAkAAAAAAAAA"``; surrounding whitespace and a
            leading ``GNUBGID`` or ``GNU Backgammon ID:`` label are ignored.

    Returns:
        ``(board, state)``: the ``(26,)`` int8 board, seen from
        ``state.player_on_roll`` (the mover), and the :class:`MatchState`.

    Raises:
        ValueError: naming the part and value, when the text is not one
            Position ID and one Match ID joined by ``:``, or either is
            malformed.
    """
    if not isinstance(text, str):
        raise ValueError(f"a GNU Backgammon ID must be a str, got {type(text).__name__}")
    body = text.strip()
    for label in ("GNU Backgammon ID:", "GNUBGID:", "GNUBGID"):
        if body[: len(label)].upper() == label.upper():
            body = body[len(label) :].strip()
            break
    parts = body.split(":")
    if len(parts) != 2:
        raise ValueError(
            f"a GNU Backgammon ID is 'PositionID:MatchID' (one ':'), got {len(parts) - 1} ':' in {text!r}"
        )
    pid, mid = (part.strip() for part in parts)
    board = board_from_position_id(pid)
    state = from_match_id(mid)
    return board, state


# --------------------------------------------------------------------------- a turn to analyse


#: What each finished (or not yet started) game state of a Match ID means.
_ENDED = {
    "NONE": "no game has started",
    "OVER": "the game has ended",
    "RESIGNED": "the game ended by a resignation",
    "DROPPED": "the game ended by a passed double",
}


def game_state_text(state: MatchState | None) -> str | None:
    """What a Match ID's game state other than playing means (``"the game has ended"``), or None while playing."""
    if state is None or state.game_state.name == "PLAYING":
        return None
    return _ENDED.get(state.game_state.name, "the game is not being played")


def not_playing(state: MatchState | None, *, double_ok: bool = False) -> str | None:
    """Why an ID's match state leaves the side on roll no play or evaluation to analyse; None when it has one.

    The rules of UBGI's ``go`` (:mod:`nard_ai.interfaces.ubgi`, whose ``bad_state`` answers give the
    same first words), shared by ``nard hint/eval/cube/rollout/play``, the HTTP endpoints, the web
    board and ``evaluate.py --positions``:

    * a game state other than playing (gnubg's over, resigned, dropped, or no game started):
      ``"the ID's game state is over, not playing (the game has ended)"``;
    * a resignation on offer: it must be accepted or rejected before play goes on;
    * a double on offer (a Match ID's "double offered", an XGID's ``D`` dice): the doubled side
      must take or pass first. ``double_ok``: the question is that take or pass (``nard cube``,
      ``/cube``: the cube decision of the doubler's position answers it), so it is no refusal.

    A bare Position ID (``state`` ``None``) is always playing. A board whose game is over is the
    callers' own check (its words name the position).
    """
    if state is None:
        return None
    ended = game_state_text(state)
    if ended is not None:
        return f"the ID's game state is {state.game_state.name.lower()}, not playing ({ended})"
    if state.resignation:
        return "a resignation awaits its answer: it is accepted or rejected before play goes on"
    if state.double_offered and not double_ok:
        return "a double awaits its answer: the doubled side takes or passes before the doubler rolls"
    return None
