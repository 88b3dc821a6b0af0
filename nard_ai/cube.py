"""Cubeful equity and cube decisions, for money play and match play.

The doubling cube (RULES.md §8): "On their own turn, before rolling, a player
who owns the cube (or anyone while it is centred) may double. The opponent
either takes — the game value doubles and the taker now owns the cube, and
only they may redouble — or passes and loses the current value at once."

Perspective
-----------
Everything here is for **the side on roll, before it rolls** (the side that
may double): the board is in its view (:mod:`nard_ai.board`), the cubeless
probabilities are gnubg's five numbers for it (:mod:`nard_ai.network`), and
the cube's owner and the score are named relative to it (:class:`CubeState`).
Take points are in the *opponent's* winning chances, as players quote them.

The model
---------
Cubeful equity comes from the cubeless probabilities with Janowski's
interpolation (R. Janowski, "Take-points in money games", 1993), as GNU
Backgammon applies it (``eval.c``: ``Cl2CfMoney``, ``Cl2CfMatch``): the
equity is ``(1 - x) * dead + x * live``, where *dead* is the cubeless value
(the cube never turns again), *live* is the value with a perfectly efficient
cube (linear in the winning chance ``p`` between the points where someone
cashes, with the game's average win ``W`` and loss ``L``), and ``x`` is the
cube efficiency:

==========================================  ==================================
position (board of the side on roll)        cube efficiency ``x``
==========================================  ==================================
contact                                     0.68
race, both sides bearing in/off (all        0.6 (gnubg's bearoff classes)
checkers in their home boards)
other races                                 ``0.55 + 0.00125 * pips`` of the
                                            side on roll, clamped to 0.6–0.7
game over                                   0 (dead)
==========================================  ==================================

These are gnubg's documented values (used at the leaves of its 2-ply and
deeper searches) and the defaults here (:data:`DEFAULT_EFFICIENCY`). Recent
gnubg releases use other values for 0- and 1-ply evaluations (contact 0.76;
races ``0.6 + 0.0025 * pips`` clamped to 0.6–0.8; ``show cubeefficiency``):
:data:`GNUBG_SHALLOW_EFFICIENCY` reproduces those. Settings are data: pass a
:class:`CubeEfficiency` (or a fixed ``x``) to :func:`cube_decision`.

Money play (equities in points per game for the side on roll, **per unit of
the current cube value**, so double/pass is always +1):

* centred cube: live = ``-L`` at ``p = 0``, ``-1`` at the take point
  ``TP = (L - 1/2) / (W + L + 1/2)``, ``+1`` at the cash point
  ``CP = (L + 1) / (W + L + 1/2)``, ``+W`` at ``p = 1``; with the Jacoby
  rule the ends are ``-1``/``+1`` and the dead part counts no gammons;
* cube owned by the side on roll: ``-L`` .. ``+1`` at ``CP`` .. ``+W``;
* cube owned by the opponent: ``-L`` .. ``-1`` at ``TP`` .. ``+W``.

Solving "double/take = double/pass" in this model gives Janowski's take point
``(W' - 1/2) / (W' + L' + x/2)`` for the taker (``W'``, ``L'``: the doubler's
average win and loss): 25% with a dead cube and no gammons, 21.4% at
``x = 0.68``.

Match play (equities as match-winning chances, MWC, from the Kazaross-XG2
table of :mod:`nard_ai.met`, and as the equivalent normalised money equity
``2 * (mwc - mwc_lose) / (mwc_win - mwc_lose) - 1`` at the current cube):

* dead: the exact expected MWC over the six outcomes at this score (this is
  what gammon values at the score, :func:`gammon_values`, express);
* live: linear in ``p`` between the MWC of losing with gammons, the
  opponent's cash, the side on roll's cash, and winning with gammons; the
  cash points at each cube level come from the level above (gnubg's
  ``GetPoints``, after J. Thyssen), down from the first cube that would be
  dead; at that level an opponent whose take makes the cube dead for the
  doubler redoubles at once, as the taker would;
* the cube is dead, and the equity cubeless, in the Crawford game, when
  both sides would win the match by winning the current cube, and at
  2-away/2-away (as gnubg does);
* the side on roll may double only if the cube is centred or its own, it is
  not the Crawford game, and winning the current cube would not already win
  it the match (doubling then only helps the opponent: a dead cube). The
  post-Crawford leader therefore never doubles, and a cube is never turned
  past what the doubler needs (gnubg 1.07 refuses such a double in play:
  "The cube is dead; you can't double any more"). :class:`CubeState`
  refuses a match cube that no sequence of such doubles reaches
  (:func:`highest_cube_value`; e.g. above 4 in a 3-point match at 0-0). A
  double that cannot cost anything (the opponent already wins the match by
  winning the current cube) is always right: the model finds double/take
  >= no double.

Decisions (gnubg's ``FindBestCubeDecision``)
--------------------------------------------
With ``ND`` (no double), ``DT`` (double, take), ``DP`` (double, pass) for the
side on roll and ``R = min(DT, DP)`` the opponent's best answer:

===========================  ========================  ===================
condition                    action                    equity
===========================  ========================  ===================
``R >= ND`` and ``DT < DP``  ``"double_take"``         ``DT``
``R >= ND`` and ``DT >= DP`` ``"double_pass"``         ``DP``
``DP >= ND > DT``            ``"no_double"``           ``ND``
``ND > R``, ``ND > DP``      ``"too_good_take"`` or    ``ND``
                             ``"too_good_pass"``
===========================  ========================  ===================

"Too good" needs a chance to win a gammon; without one it reads "double_pass"
(or "no_double"). With beavers (money), an opponent who would take with
``DT < 0`` beavers instead, which doubles the stake again: the decision then
uses ``2 * DT`` and :attr:`CubeDecision.beaver` says so.

Search depth: :func:`cube_decision` takes the cubeless probabilities from an
agent's ``evaluate`` (which searches at the agent's ply) and applies the model
to them. gnubg's n-ply cube analysis instead recurses cubefully through the
rolls. At 0-ply, given gnubg's probabilities and the same cube efficiencies,
the two agree (``tests/test_cube.py`` compares them when gnubg is installed).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .board import BAR, OPP_BAR, game_result, pip_count, validate_board
from .met import MAX_AWAY, match_equity_after

# torch-free at import (``import nard_ai`` must stay light): the evaluator
# module (``has_contact``) is imported where it is used.

__all__ = [
    "CENTRED",
    "ON_ROLL",
    "OPPONENT",
    "CUBE_OWNERS",
    "ACTIONS",
    "CubeEfficiency",
    "DEFAULT_EFFICIENCY",
    "GNUBG_SHALLOW_EFFICIENCY",
    "CubeState",
    "highest_cube_value",
    "CubeDecision",
    "cube_efficiency",
    "efficiencies",
    "cubeful_equity",
    "gammon_values",
    "cube_decision_from_probs",
    "cube_decision",
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
            A centred cube has value 1 and a turned (owned) cube at least 2.
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
            power of two, an unknown owner, a centred cube above 1, an owned
            cube of 1, a match length outside 0..25, a score outside the
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
        if self.owner == CENTRED and value != 1:
            raise ValueError(f"a centred cube has value 1, got {value} (a turned cube has an owner)")
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
        if not self.has_access:
            return False
        if self.is_money:
            return self.value < MAX_CUBE
        return not self.crawford and self.away > self.value

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


# --------------------------------------------------------------------------- efficiency


@dataclass(frozen=True)
class CubeEfficiency:
    """Cube efficiency parameters, by position class (gnubg's ``set cubeefficiency``).

    Attributes:
        contact: ``x`` while the sides are in contact (gnubg's contact and
            crashed classes).
        bearoff: ``x`` when both sides have all checkers in their home boards.
        race_coefficient, race_factor: other races use
            ``race_coefficient + race_factor * pips`` (pips of the side on roll),
        race_min, race_max: clamped to ``[race_min, race_max]``.

    Raises:
        ValueError: on a field that is not a finite real number (a bool or
            string is not), ``contact``, ``bearoff``, ``race_min`` or
            ``race_max`` outside ``[0, 1]``, or ``race_min > race_max``.
    """

    contact: float = 0.68
    bearoff: float = 0.6
    race_coefficient: float = 0.55
    race_factor: float = 0.00125
    race_min: float = 0.6
    race_max: float = 0.7

    def __post_init__(self) -> None:
        for name in ("contact", "bearoff", "race_coefficient", "race_factor", "race_min", "race_max"):
            value = getattr(self, name)
            if not _is_real(value) or not np.isfinite(value):
                raise ValueError(f"cube efficiency {name} must be a finite real number, got {value!r}")
        for name in ("contact", "bearoff", "race_min", "race_max"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"cube efficiency {name} must be within [0, 1], got {value}")
        if self.race_min > self.race_max:
            raise ValueError(f"race_min {self.race_min} is above race_max {self.race_max}")


DEFAULT_EFFICIENCY = CubeEfficiency()
"""gnubg's documented values (its 2-ply-and-deeper leaves); the default here."""

GNUBG_SHALLOW_EFFICIENCY = CubeEfficiency(
    contact=0.76, race_coefficient=0.6, race_factor=0.0025, race_max=0.8
)
"""The values recent gnubg releases use for 0- and 1-ply evaluations."""


def cube_efficiency(board: np.ndarray, params: CubeEfficiency = DEFAULT_EFFICIENCY):
    """Cube efficiency ``x`` of positions (gnubg's ``EvalEfficiency``; table in the module docstring).

    Args:
        board: ``(26,)`` or ``(N, 26)`` int8, each in its side on roll's view.
        params: the efficiency parameters.

    Returns:
        A ``float`` for one board, ``(N,)`` float64 for a batch: ``x`` in
        ``[0, 1]``: ``params.contact`` in contact, ``params.bearoff`` when both
        sides have all checkers in their home boards, otherwise
        ``race_coefficient + race_factor * pips`` of the side on roll clamped
        to ``[race_min, race_max]``; 0 when the game is over, and 0 on the
        *last roll* (a bear-off where the opponent bears off all its checkers
        next roll whatever it throws: :func:`nard_ai.bearoff.opponent_finishes_next_roll`),
        where the cube is dead: a taker never gets to use it, so no double is
        worth ``2p - 1`` and double/take ``2 (2p - 1)``, as gnubg's two-sided
        bear-off database gives.

    Raises:
        ValueError: on an invalid board.
    """
    from .evaluator import has_contact

    arr = np.asarray(board)
    single = arr.ndim == 1
    boards = validate_board(arr.reshape(-1, BAR + 1))
    race = np.clip(
        params.race_coefficient + params.race_factor * pip_count(boards)[:, 0],
        params.race_min,
        params.race_max,
    )
    # Home boards: the side on roll's points 1..6, the opponent's are indices 19..24.
    bearoff = ~(boards[:, 7 : BAR + 1] > 0).any(axis=1) & ~(boards[:, OPP_BAR:19] < 0).any(axis=1)
    x = np.where(has_contact(boards), params.contact, np.where(bearoff, params.bearoff, race))
    over = game_result(boards) != 0
    x = np.where(over, 0.0, x)
    if bearoff.any():
        from .bearoff import opponent_finishes_next_roll

        live = bearoff & ~over
        last = np.zeros(len(boards), dtype=bool)
        last[live] = opponent_finishes_next_roll(boards[live])
        x = np.where(last, 0.0, x)
    return float(x[0]) if single else x


def efficiencies(boards: np.ndarray, params: CubeEfficiency | float) -> np.ndarray:
    """Cube efficiency ``x`` of each board: :func:`cube_efficiency` of ``params``, or one fixed ``x``.

    Args:
        boards: ``(N, 26)`` int8 valid boards, side on roll's view.
        params: a :class:`CubeEfficiency`, or a fixed ``x`` for every board.

    Returns:
        ``(N,)`` float64.
    """
    if isinstance(params, CubeEfficiency):
        return cube_efficiency(boards, params)
    return np.full(len(boards), float(params))


# --------------------------------------------------------------------------- money play


def _as_probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.shape[-1:] != (5,):
        raise ValueError(f"probabilities must have shape (..., 5) in gnubg order, got {p.shape}")
    if not np.all(np.isfinite(p)) or (p < -1e-6).any() or (p > 1 + 1e-6).any():
        raise ValueError("probabilities must be finite and within [0, 1]")
    w, wg, wb, lg, lb = np.moveaxis(p, -1, 0)
    tol = 1e-5
    if (wg > w + tol).any() or (wb > wg + tol).any() or (lg > 1 - w + tol).any() or (lb > lg + tol).any():
        raise ValueError(
            "probabilities are inconsistent: need win_backgammon <= win_gammon <= win and "
            "lose_backgammon <= lose_gammon <= 1 - win"
        )
    return np.clip(p, 0.0, 1.0)


def _cubeless_equity(p: np.ndarray) -> np.ndarray:
    """Cubeless money equity (gnubg ``Utility()``, as :func:`nard_ai.network.cubeless_equity`), per unit of cube."""
    return 2.0 * p[..., 0] - 1.0 + p[..., 1] + p[..., 2] - p[..., 3] - p[..., 4]


def _average_win_loss(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Janowski's ``W`` and ``L``: average points of the games won and lost (cube 1)."""
    w = p[..., 0]
    win_w = 1.0 + (p[..., 1] + p[..., 2]) / np.maximum(w, _EPS)
    lose_l = 1.0 + (p[..., 3] + p[..., 4]) / np.maximum(1.0 - w, _EPS)
    return win_w, lose_l


def _money_live(p: np.ndarray, owner: str, jacoby: bool) -> np.ndarray:
    w = p[..., 0]
    win_w, lose_l = _average_win_loss(p)
    take = (lose_l - 0.5) / (win_w + lose_l + 0.5)
    cash = (lose_l + 1.0) / (win_w + lose_l + 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        below_take = -lose_l + (lose_l - 1.0) * w / take
        above_cash = 1.0 + (win_w - 1.0) * (w - cash) / (1.0 - cash)
        if owner == CENTRED:
            window = -1.0 + 2.0 * (w - take) / (cash - take)
            low = -1.0 if jacoby else below_take
            high = 1.0 if jacoby else above_cash
            return np.where(w < take, low, np.where(w < cash, window, high))
        if owner == ON_ROLL:
            return np.where(w < cash, -lose_l + (1.0 + lose_l) * w / cash, above_cash)
        return np.where(w < take, below_take, -1.0 + (win_w + 1.0) * (w - take) / (1.0 - take))


def _money_cubeful(p: np.ndarray, cube: CubeState, x) -> np.ndarray:
    jacoby = cube.jacoby and cube.owner == CENTRED
    w = p[..., 0]
    # Jacoby: with the cube centred a gammon counts as a single game.
    dead = 2.0 * w - 1.0 if jacoby else _cubeless_equity(p)
    live = _money_live(p, cube.owner, jacoby)
    x = np.asarray(x, dtype=np.float64)
    mixed = (1.0 - x) * dead + x * live
    return np.where((w > _EPS) & (w < 1.0 - _EPS), mixed, dead)


# --------------------------------------------------------------------------- match play


@functools.cache
def _mwc(away: int, opp_away: int, points: int, crawford: bool) -> float:
    """MWC of the side on roll after it wins (``points > 0``) or loses ``points``."""
    return match_equity_after(away, opp_away, points, crawford)


def _outcome_ratios(p: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """((gammon, backgammon) shares of the side on roll's wins, the same for the opponent's wins)."""
    w = p[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        g0 = np.where(w > 0, (p[..., 1] - p[..., 2]) / w, 0.0)
        b0 = np.where(w > 0, p[..., 2] / w, 0.0)
        g1 = np.where(w < 1, (p[..., 3] - p[..., 4]) / (1.0 - w), 0.0)
        b1 = np.where(w < 1, p[..., 4] / (1.0 - w), 0.0)
    return (g0, b0), (g1, b1)


class _Match:
    """MWC lookups at one score for either side: ``side`` 0 = on roll, 1 = opponent."""

    def __init__(self, cube: CubeState, ratios) -> None:
        self.away = (cube.away, cube.opp_away)
        self.crawford = cube.crawford
        self.ratios = ratios

    def mwc(self, side: int, winner: int, points: int) -> float:
        """MWC of ``side`` when ``winner`` wins ``points`` this game."""
        on_roll = _mwc(self.away[0], self.away[1], points if winner == 0 else -points, self.crawford)
        return on_roll if side == 0 else 1.0 - on_roll

    def win(self, side: int, cube: int):
        """Expected MWC of ``side`` when it wins at ``cube`` (single, gammon or backgammon)."""
        g, b = self.ratios[side]
        return (
            (1.0 - g - b) * self.mwc(side, side, cube)
            + g * self.mwc(side, side, 2 * cube)
            + b * self.mwc(side, side, 3 * cube)
        )

    def lose(self, side: int, cube: int):
        """Expected MWC of ``side`` when the other side wins at ``cube``."""
        g, b = self.ratios[1 - side]
        other = 1 - side
        return (
            (1.0 - g - b) * self.mwc(side, other, cube)
            + g * self.mwc(side, other, 2 * cube)
            + b * self.mwc(side, other, 3 * cube)
        )

    def cash_points(self, cube: int):
        """Live-cube cash points of both sides at this cube, each in its own winning chances (gnubg ``GetPoints``)."""
        a, b = self.away
        top, levels = cube, 0
        # Up to the first cube whose double would be dead (someone wins the match with it).
        while a > 2 * top and b > 2 * top:
            top, levels = 2 * top, levels + 1
        points = {}
        for level in range(levels, -1, -1):
            value = cube << level
            for side in (0, 1):
                cash = self.mwc(side, side, value)
                if a <= 2 * value or b <= 2 * value:
                    # The doubled cube is dead. If it is dead only for the doubler
                    # (its win of 2 * value wins the match, the taker's does not),
                    # the taker redoubles at once for free.
                    mine, theirs = self.away[side], self.away[1 - side]
                    prime = 2 * value if (mine <= 2 * value < theirs) else value
                    take_win, take_lose = self.win(side, 2 * prime), self.lose(side, 2 * prime)
                    points[side, level] = (take_lose - cash) / (take_lose - take_win)
                else:
                    # The taker owns a live cube at 2 * value: its own cash point there
                    # fixes where it is indifferent between taking and passing.
                    redouble_pass = self.mwc(side, 1 - side, 2 * value)
                    take_win = self.win(side, 2 * value)
                    points[side, level] = 1.0 - points[1 - side, level + 1] * (cash - take_win) / (
                        redouble_pass - take_win
                    )
        return points[0, 0], points[1, 0]


def _cube_is_live(cube: CubeState) -> bool:
    """gnubg ``fDoCubeful``: whether a match-play cube can still turn (else the equity is cubeless)."""
    if cube.crawford:
        return False
    if cube.away <= cube.value and cube.opp_away <= cube.value:
        return False  # whoever wins this cube wins the match
    if cube.away == 2 and cube.opp_away == 2:
        return False  # gnubg treats 2-away/2-away as cubeless
    return True


def _match_dead(p: np.ndarray, m: _Match, cube: int) -> np.ndarray:
    w, wg, wb, lg, lb = np.moveaxis(p, -1, 0)
    return (
        (w - wg) * m.mwc(0, 0, cube)
        + (wg - wb) * m.mwc(0, 0, 2 * cube)
        + wb * m.mwc(0, 0, 3 * cube)
        + (1.0 - w - lg) * m.mwc(0, 1, cube)
        + (lg - lb) * m.mwc(0, 1, 2 * cube)
        + lb * m.mwc(0, 1, 3 * cube)
    )


def _interp(x, x0, y0, x1, y1):
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(x1 > x0, (x - x0) / np.where(x1 > x0, x1 - x0, 1.0), 1.0)
    return y0 + (y1 - y0) * t


def _match_cubeful(p: np.ndarray, cube: CubeState, x) -> np.ndarray:
    m = _Match(cube, _outcome_ratios(p))
    dead = _match_dead(p, m, cube.value)
    if not _cube_is_live(cube):
        return dead
    c = cube.value
    w = p[..., 0]
    my_cash_point, opp_cash_point = m.cash_points(c)
    my_point = my_cash_point  # at or above it the side on roll cashes (doubles the opponent out)
    opp_point = 1.0 - opp_cash_point  # at or below it the opponent cashes
    cash, opp_cash = m.mwc(0, 0, c), m.mwc(0, 1, c)
    win, lose = m.win(0, c), m.lose(0, c)
    if cube.owner == CENTRED:
        live = np.where(
            w <= opp_point,
            _interp(w, 0.0, lose, opp_point, opp_cash),
            np.where(
                w < my_point,
                _interp(w, opp_point, opp_cash, my_point, cash),
                _interp(w, my_point, cash, 1.0, win),
            ),
        )
    elif cube.owner == ON_ROLL:
        live = np.where(
            w <= my_point, _interp(w, 0.0, lose, my_point, cash), _interp(w, my_point, cash, 1.0, win)
        )
    else:
        live = np.where(
            w <= opp_point,
            _interp(w, 0.0, lose, opp_point, opp_cash),
            _interp(w, opp_point, opp_cash, 1.0, win),
        )
    x = np.asarray(x, dtype=np.float64)
    return (1.0 - x) * dead + x * live


def _mwc_to_equity(mwc, cube: CubeState):
    """Normalised money equity of an MWC at the current cube (gnubg ``mwc2eq``): +1 = winning the cube, -1 = losing it."""
    win = _mwc(cube.away, cube.opp_away, cube.value, cube.crawford)
    lose = _mwc(cube.away, cube.opp_away, -cube.value, cube.crawford)
    return (2.0 * np.asarray(mwc) - (win + lose)) / (win - lose)


def gammon_values(cube: CubeState) -> tuple[float, float, float, float]:
    """Gammon values at the score for the side on roll (gnubg's gammon price).

    Returns:
        ``(win_gammon, lose_gammon, win_backgammon, lose_backgammon)``: the
        extra value of winning (losing) a gammon over a single game, and of a
        backgammon over a gammon, in units of half the swing between winning
        and losing a single game at the current cube. Money play: all 1 (all
        0 with the Jacoby rule and a centred cube). Match play: from the MET;
        e.g. 0 when a single win already wins the match.

    Raises:
        ValueError: if ``cube`` is not a :class:`CubeState`.
    """
    _check_cube(cube)
    if cube.is_money:
        v = 0.0 if (cube.jacoby and cube.owner == CENTRED) else 1.0
        return v, v, v, v
    a, b, c, crawford = cube.away, cube.opp_away, cube.value, cube.crawford
    win, win_g, win_b = (_mwc(a, b, k * c, crawford) for k in (1, 2, 3))
    lose, lose_g, lose_b = (_mwc(a, b, -k * c, crawford) for k in (1, 2, 3))
    centre, half = (win + lose) / 2.0, (win - lose) / 2.0
    values = (
        (win_g - centre) / half - 1.0,
        (centre - lose_g) / half - 1.0,
        (win_b - win_g) / half,
        (lose_g - lose_b) / half,
    )
    return tuple(max(0.0, float(v)) for v in values)  # type: ignore[return-value]


def cubeful_equity(probs, cube: CubeState = CubeState(), efficiency=DEFAULT_EFFICIENCY.contact) -> np.ndarray:
    """Cubeful equity of positions for the side on roll, before it rolls.

    Args:
        probs: ``(..., 5)`` gnubg-order cubeless probabilities for the side on roll.
        cube: the cube and match state.
        efficiency: cube efficiency ``x`` (scalar or broadcastable to ``probs[..., 0]``);
            see :func:`cube_efficiency`.

    Returns:
        ``(...)`` float64. Money play: points per game per unit of the cube
        value (so ``+1`` = winning the current cube). Match play: the
        match-winning chance (MWC) of the side on roll.

    Raises:
        ValueError: on probabilities of the wrong shape or inconsistent, a
            ``cube`` that is not a :class:`CubeState`, or an efficiency that
            is not numeric (a bool or string is not) or is outside ``[0, 1]``.
    """
    p = _as_probs(probs)
    _check_cube(cube)
    if _is_real(efficiency):
        in_range = 0.0 <= efficiency <= 1.0
    else:
        x = np.asarray(efficiency)
        if x.dtype.kind not in "iuf":
            raise ValueError(
                f"cube efficiency must be a number or an array of numbers in [0, 1], got {efficiency!r}"
            )
        in_range = bool(np.all((x >= 0.0) & (x <= 1.0)))
    if not in_range:
        raise ValueError(f"cube efficiency must be within [0, 1], got {efficiency!r}")
    if cube.is_money:
        return _money_cubeful(p, cube, efficiency)
    return _match_cubeful(p, cube, efficiency)


# --------------------------------------------------------------------------- decisions

_MAX_PLY = 2  # nard_ai.search.MAX_PLY (not imported: search pulls in the evaluators)


def _check_cube(cube) -> None:
    if not isinstance(cube, CubeState):
        raise ValueError(
            f"cube must be a CubeState (nard_ai.cube.CubeState(value=..., owner=..., ...)), got {cube!r}"
        )


def _check_ply(ply) -> int:
    if not _is_int(ply) or not 0 <= ply <= _MAX_PLY:
        raise ValueError(f"ply must be an integer 0..{_MAX_PLY} (gnubg numbering), got {ply!r}")
    return int(ply)


def _check_efficiency(efficiency) -> float:
    """A fixed efficiency ``x``: a real number (or 0-d numeric array) within ``[0, 1]``."""
    scalar = isinstance(efficiency, np.ndarray) and efficiency.ndim == 0 and efficiency.dtype.kind in "iuf"
    if not (_is_real(efficiency) or scalar):
        raise ValueError(
            f"cube efficiency must be a number in [0, 1] or a CubeEfficiency, got {efficiency!r}"
        )
    x = float(efficiency)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"cube efficiency must be within [0, 1], got {x}")
    return x


def _check_agent(agent) -> None:
    if not callable(getattr(agent, "evaluate", None)):
        raise ValueError(
            "agent needs evaluate(boards) -> (probs (N, 5), equity (N,)), as a nard_ai.search.Agent "
            f"(build one with nard_ai.arena.agent_from_spec); got {agent!r}"
        )
    # As nard_ai.error_rate refuses a referee and nard_ai.search refuses lookahead: an
    # evaluator that ranks plays by its own score (score_plays: pubeval, the random
    # evaluator) has no probabilities to value a cube with.
    for part in (agent, getattr(agent, "evaluator", None)):
        if getattr(part, "score_plays", None) is not None:
            name = getattr(agent, "name", "") or type(part).__name__
            raise ValueError(
                f"{name} has no real probabilities (it ranks plays by its own score, score_plays), "
                "so it cannot make cube decisions; use a network (default[:PLY], PATH[:PLY]) or gnubg[:PLY]"
            )


@dataclass(frozen=True, eq=False)
class CubeDecision:
    """A cube decision for the side on roll, before it rolls.

    Equities are in the side on roll's units: money play, points per game per
    unit of the current cube (double/pass = +1); match play, the normalised
    money equity of the match-winning chances at the current cube
    (double/pass = +1 too), with the MWC themselves in the ``*_mwc`` fields.

    Attributes:
        action: one of :data:`ACTIONS`; ``"no_double"`` when the side on roll
            cannot double (see :attr:`cube_available`).
        no_double: cubeful equity if the side on roll does not double.
        double_take: cubeful equity if it doubles and the opponent takes
            (before any beaver).
        double_pass: equity if it doubles and the opponent passes (+1).
        probs: ``(5,)`` float64 cubeless probabilities used (gnubg order, side on roll).
        cubeless_equity: money: cubeless equity; match: the cubeless MWC as equity.
        take_point: the opponent's minimum winning chances to take a double
            here, with this position's gammon rates and cube efficiency; NaN
            when the side on roll cannot double.
        efficiency: the cube efficiency ``x`` used.
        cube: the cube state.
        cube_available: the side on roll may usefully double (:attr:`CubeState.can_double`);
            when false, ``double_take``/``double_pass`` are NaN.
        beaver: money with beavers: a doubled opponent should beaver
            (``double_take < 0``); decisions then use ``2 * double_take``.
        no_double_mwc, double_take_mwc, double_pass_mwc: match play: the
            same three as MWC; ``None`` for money play.
        ply: the search depth of the probabilities (gnubg numbering), if known.
    """

    action: str
    no_double: float
    double_take: float
    double_pass: float
    probs: np.ndarray
    cubeless_equity: float
    take_point: float
    efficiency: float
    cube: CubeState
    cube_available: bool
    beaver: bool = False
    no_double_mwc: float | None = None
    double_take_mwc: float | None = None
    double_pass_mwc: float | None = None
    ply: int | None = None

    @property
    def _answer(self) -> float:
        dt = 2.0 * self.double_take if self.beaver else self.double_take
        return min(dt, self.double_pass)

    @property
    def optimal(self) -> float:
        """Equity with the right cube action on both sides."""
        if not self.cube_available:
            return self.no_double
        return max(self.no_double, self._answer)

    @property
    def equities(self) -> dict[str, float]:
        """The three columns a gnubg or XG user expects: no double, double/take, double/pass."""
        return {"no_double": self.no_double, "double_take": self.double_take, "double_pass": self.double_pass}

    @property
    def errors(self) -> dict[str, float]:
        """How wrong each alternative is, in equity (>= 0; 0 for the right choice).

        ``"no_double"`` / ``"double"``: what the side on roll gives up by not
        doubling / by doubling (the opponent answering right);
        ``"take"`` / ``"pass"``: what the opponent gives up by taking /
        passing a double (a beaver counts as the take when :attr:`beaver`).
        Only ``{"no_double": 0.0}`` when the side on roll cannot double.
        """
        if not self.cube_available:
            return {"no_double": 0.0}
        dt = 2.0 * self.double_take if self.beaver else self.double_take
        answer = min(dt, self.double_pass)
        best = max(self.no_double, answer)
        return {
            "no_double": best - self.no_double,
            "double": best - answer,
            "take": dt - answer,
            "pass": self.double_pass - answer,
        }

    @property
    def errors_mwc(self) -> dict[str, float] | None:
        """:attr:`errors` in match-winning chances (match play; ``None`` for money)."""
        if self.cube.is_money:
            return None
        scale = self._mwc_per_equity()
        return {k: v * scale for k, v in self.errors.items()}

    def _mwc_per_equity(self) -> float:
        c = self.cube
        win = _mwc(c.away, c.opp_away, c.value, c.crawford)
        lose = _mwc(c.away, c.opp_away, -c.value, c.crawford)
        return (win - lose) / 2.0


def _classify(
    no_double: float, answer: float, double_take: float, double_pass: float, can_gammon: bool
) -> str:
    if answer >= no_double:
        return "double_take" if double_take < double_pass else "double_pass"
    if double_pass >= no_double:
        return "no_double"
    response = "take" if double_take < double_pass else "pass"
    if not can_gammon:
        # gnubg: never "too good" without a gammon to play for
        return "double_pass" if response == "pass" else "no_double"
    return f"too_good_{response}"


def _cube_action(nd: float, dt: float, dp: float, cube: CubeState, can_gammon: bool) -> tuple[str, bool]:
    """``(action, beaver)`` from the three cubeful equities of the side on roll (current cube units).

    Money with beavers: a taker whose take is worth more than nothing to it
    (``dt < 0`` for the doubler) beavers, so the double is worth ``2 dt``.
    """
    if not cube.can_double:
        return "no_double", False
    beaver = bool(cube.is_money and cube.beavers and dt < 0.0)
    taken = 2.0 * dt if beaver else dt
    return _classify(nd, min(taken, dp), taken, dp, can_gammon), beaver


def _scaled_probs(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Probabilities with winning chances ``w`` and the same gammon shares as ``p`` (shape ``w.shape + (5,)``)."""
    (g0, b0), (g1, b1) = _outcome_ratios(p)
    w = np.asarray(w, dtype=np.float64)
    return np.stack([w, w * (g0 + b0), w * b0, (1.0 - w) * (g1 + b1), (1.0 - w) * b1], axis=-1)


def _take_point(p: np.ndarray, cube: CubeState, x: float) -> float:
    """The opponent's winning chances where double/take = double/pass, gammon shares held fixed."""
    doubled = cube.doubled()
    if cube.is_money:
        pass_value = 1.0

        def take_value(w):
            return 2.0 * _money_cubeful(_scaled_probs(p, w), doubled, x)
    else:
        pass_value = _mwc(cube.away, cube.opp_away, cube.value, cube.crawford)

        def take_value(w):
            return _match_cubeful(_scaled_probs(p, w), doubled, x)

    # take_value rises with the doubler's winning chances and is piecewise linear in
    # them: bracket the root on ever finer vector grids, then interpolate linearly.
    lo_w, hi_w = 0.0, 1.0
    for _ in range(3):
        grid = np.linspace(lo_w, hi_w, 201)
        values = take_value(grid) - pass_value
        if values[-1] <= 0.0:
            return 1.0 - hi_w if hi_w < 1.0 else 0.0  # at 1.0: the opponent never passes
        if values[0] >= 0.0:
            return 1.0 - lo_w if lo_w > 0.0 else 1.0  # at 0.0: the opponent always passes
        hi = int(np.argmax(values > 0.0))
        lo_w, hi_w, lo_v, hi_v = grid[hi - 1], grid[hi], values[hi - 1], values[hi]
    root = lo_w + (hi_w - lo_w) * (-lo_v) / (hi_v - lo_v)
    return float(1.0 - root)


def cube_decision_from_probs(
    probs,
    cube: CubeState = CubeState(),
    efficiency: float = DEFAULT_EFFICIENCY.contact,
    ply: int | None = None,
) -> CubeDecision:
    """Cube decision from cubeless probabilities (the model of the module docstring).

    Args:
        probs: ``(5,)`` gnubg-order cubeless probabilities for the side on roll.
        cube: the cube and match state.
        efficiency: cube efficiency ``x`` (:func:`cube_efficiency` of the board),
            a real number in ``[0, 1]``.
        ply: the search depth of the probabilities, ``None`` or an integer
            0..2; recorded in the result.

    Returns:
        A :class:`CubeDecision`.

    Raises:
        ValueError: on probabilities of the wrong shape or inconsistent, a
            ``cube`` that is not a :class:`CubeState`, an efficiency that is
            not a number (a bool or string is not) or is outside ``[0, 1]``,
            or a ``ply`` that is neither ``None`` nor an integer 0..2.
    """
    p = _as_probs(probs)
    if p.shape != (5,):
        raise ValueError(
            f"cube_decision_from_probs takes one position's (5,) probabilities, got shape {p.shape}"
        )
    _check_cube(cube)
    x = _check_efficiency(efficiency)
    if ply is not None:
        ply = _check_ply(ply)
    nan = float("nan")
    available = cube.can_double
    if cube.is_money:
        nd = float(_money_cubeful(p, cube, x))
        cubeless = float(_cubeless_equity(p))
        dt, dp = (float(2.0 * _money_cubeful(p, cube.doubled(), x)), 1.0) if available else (nan, nan)
        mwcs = (None, None, None)
    else:
        nd_mwc = float(_match_cubeful(p, cube, x))
        cubeless = float(_mwc_to_equity(_match_dead(p, _Match(cube, _outcome_ratios(p)), cube.value), cube))
        if available:
            dt_mwc = float(_match_cubeful(p, cube.doubled(), x))
            dp_mwc = _mwc(cube.away, cube.opp_away, cube.value, cube.crawford)
        else:
            dt_mwc = dp_mwc = nan
        mwcs = (nd_mwc, dt_mwc, dp_mwc)
        nd, dt, dp = (float(_mwc_to_equity(v, cube)) for v in mwcs)
        if available:
            dp = 1.0  # exactly, by construction of the conversion
    action, beaver = _cube_action(nd, dt, dp, cube, bool(p[1] > 0.0))
    take_point = _take_point(p, cube, x) if available else nan
    return CubeDecision(
        action=action,
        no_double=nd,
        double_take=dt,
        double_pass=dp,
        probs=p,
        cubeless_equity=cubeless,
        take_point=take_point,
        efficiency=x,
        cube=cube,
        cube_available=available,
        beaver=beaver,
        no_double_mwc=mwcs[0],
        double_take_mwc=mwcs[1],
        double_pass_mwc=mwcs[2],
        ply=ply,
    )


@functools.lru_cache(maxsize=4)
def _default_agent(ply: int):
    # Imported here: the arena sits above this module (it will play with the cube).
    from .arena import load_agent

    return load_agent(None, ply=ply)


def cube_decision(
    board: np.ndarray,
    cube: CubeState = CubeState(),
    ply: int = 0,
    agent=None,
    *,
    efficiency: CubeEfficiency | float | None = None,
) -> CubeDecision:
    """The cube decision for the side on roll in ``board``, before it rolls.

    Args:
        board: ``(26,)`` int8, the side on roll's view (game not over).
        cube: the cube and match state (default: money, cube 1 centred).
        ply: search depth (gnubg numbering), an integer 0..2 (Python or
            numpy; not a bool, float or string): the ply of the shipped
            network when ``agent`` is ``None``; with an agent, 0 or the
            agent's own ply.
        agent: anything with ``evaluate(boards) -> (probs (N, 5), equity (N,))``
            for the side on roll, searching at its own ply (a
            :class:`nard_ai.search.Agent`), with real probabilities (not
            pubeval or the random agent); ``None`` loads the shipped network
            with :func:`nard_ai.arena.load_agent` at ``ply`` (cached).
        efficiency: cube efficiency parameters (default
            :data:`DEFAULT_EFFICIENCY`), or a fixed ``x``, a number in ``[0, 1]``.

    Returns:
        A :class:`CubeDecision` from the agent's cubeless probabilities and the
        Janowski/MET model of the module docstring.

    Raises:
        ValueError: on an invalid board, a finished game, a ``cube`` that is
            not a :class:`CubeState`, a ``ply`` that is not an integer 0..2,
            an agent without ``evaluate`` or without real probabilities (one
            whose evaluator ranks plays by ``score_plays``: pubeval, random),
            an agent whose ``ply`` differs from a non-zero ``ply``, an
            ``evaluate`` that does not return ``(probs, equity)``, or an
            efficiency that is neither a :class:`CubeEfficiency` nor a
            number in ``[0, 1]``.
    """
    board = validate_board(np.asarray(board).reshape(-1))
    if game_result(board) != 0:
        raise ValueError("the game is over: there is no cube decision")
    _check_cube(cube)
    ply = _check_ply(ply)
    if efficiency is None or isinstance(efficiency, CubeEfficiency):
        x = cube_efficiency(board, efficiency or DEFAULT_EFFICIENCY)
    else:
        x = _check_efficiency(efficiency)
    if agent is None:
        agent = _default_agent(ply)
    else:
        _check_agent(agent)
        agent_ply = getattr(agent, "ply", None)
        if ply and agent_ply is not None and agent_ply != ply:
            raise ValueError(f"ply={ply} but the agent searches at ply {agent_ply}")
        ply = agent_ply if agent_ply is not None else ply
    if ply and all(hasattr(agent, a) for a in ("evaluator", "rules")):
        # gnubg's n-ply cube decisions carry cubeful values through the search (its tree also
        # gives the n-ply cubeless probabilities, so the agent's own evaluation is not needed)
        from .cubeful_search import lookahead_cube_decision

        return lookahead_cube_decision(board, cube, agent, ply, efficiency)
    result = agent.evaluate(board[None])
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ValueError(
            f"agent.evaluate(boards) must return (probs (N, 5), equity (N,)), got {type(result).__name__}"
        )
    probs = np.asarray(result[0], dtype=np.float64)
    if probs.size != 5:
        raise ValueError(
            f"agent.evaluate gave probabilities of shape {probs.shape} for one board, expected (1, 5)"
        )
    return cube_decision_from_probs(probs.reshape(5), cube, x, ply=ply)
