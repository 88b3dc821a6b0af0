"""The cube and match state of a position: one record, one owner convention.

Perspective
-----------
Everything here is for **the side on roll, before it rolls** (the side that
may double): the board is in its view (:mod:`nard_ai.core.board`), the cubeless
probabilities are gnubg's five numbers for it (:mod:`nard_ai.model.network`), and
the cube's owner and the score are named relative to it (:class:`CubeState`).
Take points are in the *opponent's* winning chances, as players quote them.

The owner is named relative to the side on roll: ``"centred"``, ``"on_roll"``
or ``"opponent"`` (:data:`CUBE_OWNERS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from nard_ai.core.game import finished_points  # re-exported: the one scoring rule lives in the core
from nard_ai.cube.met import MAX_AWAY
from nard_ai.formats.match_id import CENTERED, MatchState

__all__ = [
    "CENTRED",
    "ON_ROLL",
    "OPPONENT",
    "CUBE_OWNERS",
    "ACTIONS",
    "MAX_CUBE",
    "CubeState",
    "highest_cube_value",
    "check_cube",
    "cube_state_from_match",
    "finished_points",
    "OWNER_BY_CODE",
    "may_double",
    "owner_codes",
    "owner_seat",
]

CENTRED = "centred"
ON_ROLL = "on_roll"
OPPONENT = "opponent"
CUBE_OWNERS = (CENTRED, ON_ROLL, OPPONENT)
ACTIONS = ("no_double", "double_take", "double_pass", "too_good_take", "too_good_pass")

MAX_CUBE = 1 << 12

_EPS = 1e-7  # gnubg: below this winning chance (or above 1 - it) the cube is dead


# --------------------------------------------------------------------------- cube state


def _is_int(value) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def _is_bool(value) -> bool:
    """A Python or numpy bool (``0``/``1``, ``"yes"``, ``None`` are not)."""
    return isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    """A Python or numpy real number, not a bool."""
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


def highest_cube_value(owner_away: int, doubler_away: int) -> int:
    """The highest cube a side can own in match play, from the away counts.

    Rule (gnubg, ``play.c`` ``CommandDouble``: "The cube is dead; you can't
    double any more", and ``GetDPEq``; :attr:`CubeState.can_double` here): a
    side may double a cube of value ``c`` only while ``away > c``, that is
    while winning the current cube would not already win it the match. The
    score does not change within a game and only the owner may redouble, so
    the doubles alternate; the last one, to the owned value ``v``, was by
    the other side (``doubler_away > v / 2``), the one before it, to
    ``v / 2``, by the owner (``owner_away > v / 4``). Hence ``v`` is at most
    the smallest power of two ``>= doubler_away`` and at most twice the
    smallest power of two ``>= owner_away``. Example: in a 3-point match at
    0-0 the cube reaches 4 (2 by one side, 4 by the other) and never 8.

    Args:
        owner_away: points the cube owner still needs, ``>= 1``.
        doubler_away: points the other side (who doubled last) needs, ``>= 1``.

    Returns:
        The highest value, a power of two; ``1`` when no turned cube can be
        owned by this side (the other side, 1-away, could never double).

    Raises:
        ValueError: if a count is not an integer 1..25.
    """
    for name, count in (("owner_away", owner_away), ("doubler_away", doubler_away)):
        if not _is_int(count) or not 1 <= count <= MAX_AWAY:
            raise ValueError(f"{name} must be an integer number of points 1..{MAX_AWAY}, got {count!r}")
    owner_away, doubler_away = int(owner_away), int(doubler_away)
    return min(1 << (doubler_away - 1).bit_length(), 2 << (owner_away - 1).bit_length())


@dataclass(frozen=True)
class CubeState:
    """The cube and the match, seen from the side on roll (gnubg's ``cubeinfo``).

    Attributes:
        value: the cube value, a power of two (1, 2, 4, ...), an integer
            (Python or numpy; not a bool or float).
        owner: ``"centred"`` (:data:`CENTRED`), ``"on_roll"`` (the side on
            roll owns it, :data:`ON_ROLL`) or ``"opponent"`` (:data:`OPPONENT`).
            An owned cube has value 2 or more. A centred cube has value 1,
            except in money play, where automatic doubles (gnubg's ``set
            automatic doubles``) leave it centred at 2, 4, ...; money
            equities are in units of the current cube, so they are the
            same at every centred value ``v`` and worth ``v`` times as many points.
        match_length: points to win the match, an integer 1..25; 0 = money play.
        score: points already won, ``(side on roll, opponent)``: a tuple,
            list or array of two integers, each below ``match_length``.
            ``(0, 0)`` for money play. :attr:`away` and :attr:`opp_away` give
            the points each side still needs. In match play a turned cube is
            at most :func:`highest_cube_value` of the away counts (nobody doubles a
            cube that is dead for them).
        crawford: the current game is the Crawford game (RULES.md §8: one side
            has just reached match length minus one; nobody may double).
        jacoby: money play only: gammons count only once the cube is turned.
        beavers: money play only: a doubled side may redouble at once and
            keep the cube.

    ``crawford``, ``jacoby`` and ``beavers`` must be bools (Python or numpy).
    The default is money play, cube 1 centred, Jacoby and beavers off.

    Raises:
        ValueError: on a value of the wrong type (a bool, float, string) or
            type-less score or flags (see above); on a value that is not a
            power of two, an unknown owner, a centred cube above 1 in match
            play, an owned cube of 1, a match length outside 0..25, a score outside the
            match, a Crawford flag while no side is 1-away (or both are),
            Jacoby or beavers in a match, a score or Crawford flag in money
            play, a turned cube in the Crawford game, or a match cube above
            :func:`highest_cube_value` (one that no sequence of live doubles reaches).
    """

    value: int = 1
    owner: str = CENTRED
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False

    def __post_init__(self) -> None:
        value = self.value
        if not _is_int(value) or value < 1 or value & (value - 1):
            raise ValueError(f"the cube value must be a power of two (1, 2, 4, ...), got {value!r}")
        if value > MAX_CUBE:
            raise ValueError(f"cube value {value} is above the supported {MAX_CUBE}")
        if not isinstance(self.owner, str) or self.owner not in CUBE_OWNERS:
            raise ValueError(f"cube owner must be one of {CUBE_OWNERS}, got {self.owner!r}")
        if self.owner == CENTRED and value != 1 and self.match_length != 0:
            raise ValueError(
                f"cube value {value} with the cube centred in a {self.match_length}-point match: a centred "
                "cube above 1 comes only from automatic doubles, a money-play option (match_length 0); in "
                "match play a turned cube has an owner"
            )
        if self.owner != CENTRED and value == 1:
            raise ValueError(
                f"a cube owned by {self.owner!r} has value 2 or more (a cube of 1 is centred), got 1"
            )
        length = self.match_length
        if not _is_int(length) or not 0 <= length <= MAX_AWAY:
            raise ValueError(f"match_length must be 0 (money) or 1..{MAX_AWAY}, got {length!r}")
        raw = self.score
        if (
            not isinstance(raw, (tuple, list, np.ndarray))
            or len(raw) != 2
            or not all(_is_int(s) for s in raw)
        ):
            raise ValueError(f"score must be a pair of integers (side on roll, opponent), got {raw!r}")
        score = (int(raw[0]), int(raw[1]))
        for name in ("crawford", "jacoby", "beavers"):
            flag = getattr(self, name)
            if not _is_bool(flag):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
            object.__setattr__(self, name, bool(flag))
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "value", int(value))
        object.__setattr__(self, "owner", str(self.owner))
        object.__setattr__(self, "match_length", int(length))
        if length == 0:
            if score != (0, 0):
                raise ValueError(f"money play has no score, got {score}")
            if self.crawford:
                raise ValueError("the Crawford rule applies to match play only (match_length > 0)")
            return
        if self.jacoby or self.beavers:
            raise ValueError("the Jacoby rule and beavers are money-play options (match_length must be 0)")
        if any(s < 0 or s >= length for s in score):
            raise ValueError(f"score {score} must be 0..{length - 1} for each side in a {length}-point match")
        if self.crawford:
            one_away = [s == length - 1 for s in score]
            if sum(one_away) != 1:
                raise ValueError(
                    f"the Crawford game needs exactly one side 1-away, got score {score} in a {length}-point match"
                )
            if value != 1 or self.owner != CENTRED:
                raise ValueError("nobody may double in the Crawford game: the cube must be 1 and centred")
        if self.owner != CENTRED:
            away, opp_away = self.away, self.opp_away
            owner_away, doubler_away = (away, opp_away) if self.owner == ON_ROLL else (opp_away, away)
            top = highest_cube_value(owner_away, doubler_away)
            if value > top:
                doubler = "the opponent" if self.owner == ON_ROLL else "the side on roll"
                why = (
                    f"{doubler}, {doubler_away}-away, can never have doubled"
                    if top == 1
                    else f"the highest cube the {self.owner!r} side can own here is {top}"
                )
                raise ValueError(
                    f"a cube of {value} owned by {self.owner!r} cannot occur at {away}-away (side on roll) "
                    f"vs {opp_away}-away (opponent): {why} (a side may double only while winning the "
                    "current cube would not already win it the match; see highest_cube_value)"
                )

    @classmethod
    def for_match(
        cls,
        match_length: int,
        score: tuple[int, int] = (0, 0),
        value: int = 1,
        owner: str = CENTRED,
        crawford: bool = False,
    ) -> CubeState:
        """A match-play cube state (``score`` = points won by side on roll, opponent)."""
        return cls(value=value, owner=owner, match_length=match_length, score=score, crawford=crawford)

    @classmethod
    def from_away(
        cls, away: int, opp_away: int, value: int = 1, owner: str = CENTRED, crawford: bool = False
    ) -> CubeState:
        """A match-play state from away counts: the match length is the larger count.

        Raises:
            ValueError: if a count is not an integer 1..25, or on anything
                :class:`CubeState` rejects.
        """
        for name, count in (("away", away), ("opp_away", opp_away)):
            if not _is_int(count) or not 1 <= count <= MAX_AWAY:
                raise ValueError(f"{name} must be an integer number of points 1..{MAX_AWAY}, got {count!r}")
        away, opp_away = int(away), int(opp_away)
        length = max(away, opp_away)
        return cls.for_match(length, (length - away, length - opp_away), value, owner, crawford)

    @property
    def is_money(self) -> bool:
        """Money play (no match)."""
        return self.match_length == 0

    @property
    def away(self) -> int:
        """Points the side on roll still needs (match play; 0 for money)."""
        return self.match_length - self.score[0] if self.match_length else 0

    @property
    def opp_away(self) -> int:
        """Points the opponent still needs (match play; 0 for money)."""
        return self.match_length - self.score[1] if self.match_length else 0

    @property
    def post_crawford(self) -> bool:
        """A side is 1-away and this is not the Crawford game (doubling allowed again)."""
        return not self.is_money and not self.crawford and 1 in (self.away, self.opp_away)

    @property
    def has_access(self) -> bool:
        """The cube is centred or owned by the side on roll."""
        return self.owner != OPPONENT

    @property
    def can_double(self) -> bool:
        """The side on roll may (usefully) double now.

        Money: it has access and the cube is below :data:`MAX_CUBE` (the
        largest value nard_ai represents, as gnubg's Match ID). Match: it has
        access, this is not the Crawford game, and winning the current cube
        would not already win it the match (a cube dead for the doubler; this
        covers the post-Crawford leader).
        """
        code = CUBE_OWNERS.index(self.owner)  # OWNER_BY_CODE's order
        if self.is_money:
            return bool(may_double(code, self.value))
        return bool(may_double(code, self.value, self.away, self.crawford))

    def doubled(self) -> CubeState:
        """The state after the side on roll doubles and the opponent takes (still before the roll)."""
        return CubeState(
            value=2 * self.value,
            owner=OPPONENT,
            match_length=self.match_length,
            score=self.score,
            jacoby=self.jacoby,
            beavers=self.beavers,
        )

    def swapped(self) -> CubeState:
        """The same cube and match from the opponent's side (owner and score swapped)."""
        owner = {CENTRED: CENTRED, ON_ROLL: OPPONENT, OPPONENT: ON_ROLL}[self.owner]
        return CubeState(
            value=self.value,
            owner=owner,
            match_length=self.match_length,
            score=(self.score[1], self.score[0]),
            crawford=self.crawford,
            jacoby=self.jacoby,
            beavers=self.beavers,
        )


def check_cube(cube) -> None:
    if not isinstance(cube, CubeState):
        raise ValueError(
            f"cube must be a CubeState (nard_ai.cube.decision.CubeState(value=..., owner=..., ...)), got {cube!r}"
        )


def cube_state_from_match(state: MatchState | None, **overrides: Any) -> CubeState:
    """The cube and match of a :class:`~nard_ai.formats.match_id.MatchState`, seen from its player on roll.

    Args:
        state: a match state (its board's mover is ``state.player_on_roll``);
            ``None`` (a bare Position ID) gives money play with the cube
            centred at 1.
        overrides: ``value``, ``owner``, ``match_length``, ``score``,
            ``crawford``, ``jacoby`` or ``beavers`` to replace; ``None``
            values are ignored.

    Returns:
        A :class:`~nard_ai.cube.decision.CubeState`: owner ``"on_roll"`` when the
        player on roll owns the cube, ``"opponent"`` when the other seat
        does; score ``(player on roll, other)``; the Crawford flag; the
        Jacoby rule and beavers in money play (an XGID's Jacoby field:
        ``1`` Jacoby, ``2`` beavers, ``3`` both). While a double awaits an answer the cube
        value is the one before the double (the Match ID's convention).

    Raises:
        ValueError: when the cube or match cannot be expressed (a match
            longer than 25 points, a score at or above the match length,
            a centred cube above 1 in match play; in money play it is kept).
    """
    fields: dict[str, Any] = {}
    if state is not None:
        me = state.player_on_roll
        owner = OWNER_BY_CODE[int(owner_codes(state.cube_owner, me))]
        money = state.match_length == 0
        fields = {
            "value": state.cube_value,
            "owner": owner,
            "match_length": state.match_length,
            "score": (0, 0) if money else (state.score[me], state.score[1 - me]),
            "crawford": state.crawford,
            "jacoby": state.jacoby and money,
            "beavers": state.beavers and money,
        }
    fields.update({k: v for k, v in overrides.items() if v is not None})
    return CubeState(**fields)


# --------------------------------------------------------------------------- the cube owner, two views
#
# A game keeps its cube's owner by seat: CENTERED (-1) or the owning seat 0/1 (core.game, the drivers,
# the env, the terminal game, MatchState's player numbers). A decision names it from the side on roll
# (CubeState.owner: centred, on_roll, opponent; gnubg's cubeinfo view). These are the one conversion.

#: ``CubeState.owner`` by owner code: 0 centred, 1 the side on roll, 2 its opponent.
OWNER_BY_CODE = (CENTRED, ON_ROLL, OPPONENT)


def owner_codes(owner, mover) -> np.ndarray:
    """The owner codes (:data:`OWNER_BY_CODE`) of cubes kept by seat, from each mover's view.

    The drivers keep a cube's owner as :mod:`nard_ai.core.game` does: ``CENTERED`` (-1) or the
    owning seat (0 or 1); a :class:`~nard_ai.cube.CubeState` names it from the side on roll.

    Args:
        owner: ``(N,)`` (or scalar) int, -1 or a seat.
        mover: ``(N,)`` (or scalar) int, the seat on roll.

    Returns:
        ``(N,)`` int64 codes 0, 1 or 2.
    """
    owner = np.asarray(owner)
    return np.where(owner == CENTERED, 0, np.where(owner == np.asarray(mover), 1, 2)).astype(np.int64)


def owner_seat(cube: CubeState, mover: int) -> int:
    """A :class:`~nard_ai.cube.CubeState`'s owner as a seat (``CENTERED`` = -1, 0 or 1), the side on roll in seat ``mover``."""
    if cube.owner == CENTRED:
        return CENTERED
    return mover if cube.owner == ON_ROLL else 1 - mover


def may_double(codes, value, away=None, crawford=None) -> np.ndarray:
    """:attr:`CubeState.can_double`, batched: the one test of the drivers, the env and ``CubeState`` itself.

    Args:
        codes: ``(N,)`` owner codes (:data:`OWNER_BY_CODE`: 0 centred, 1 the side on roll, 2 its
            opponent), e.g. from :func:`owner_codes`.
        value: ``(N,)`` cube values.
        away: match play: ``(N,)`` points the side on roll still needs; ``None`` for money play.
        crawford: match play: ``(N,)`` bool, this is the Crawford game.

    Returns:
        ``(N,)`` bool. Money: access (not the opponent's cube) and a double keeps the cube at most
        :data:`nard_ai.cube.MAX_CUBE`. Match: access, not the Crawford game, and winning the current
        cube would not already win the match.
    """
    codes = np.asarray(codes)
    value = np.asarray(value, dtype=np.int64)
    access = codes != 2
    if away is None:
        return access & (
            value < MAX_CUBE
        )  # cube values are powers of two: below MAX_CUBE, doubling stays within it
    return access & ~np.asarray(crawford, dtype=bool) & (np.asarray(away) > value)
