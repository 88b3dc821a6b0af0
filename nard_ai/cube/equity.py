"""Cubeful equity from cubeless probabilities, for money play and match play.

The doubling cube (RULES.md §8): "On their own turn, before rolling, a player
who owns the cube (or anyone while it is centred) may double. The opponent
either takes — the game value doubles and the taker now owns the cube, and
only they may redouble — or passes and loses the current value at once."

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
table of :mod:`nard_ai.cube.met`, and as the equivalent normalised money equity
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
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from nard_ai.core.board import BAR, OPP_BAR, game_result, pip_count, validate_board
from nard_ai.core.outcomes import cubeless_equity
from nard_ai.cube.met import match_equity_after
from nard_ai.cube.state import CENTRED, ON_ROLL, CubeState, _is_real, check_cube

__all__ = [
    "CubeEfficiency",
    "DEFAULT_EFFICIENCY",
    "GNUBG_SHALLOW_EFFICIENCY",
    "cube_efficiency",
    "efficiencies",
    "cubeful_equity",
    "gammon_values",
    "as_probs",
    "money_cubeful",
    "match_cubeful",
    "mwc_at_score",
    "mwc_to_equity",
]

_EPS = 1e-7  # gnubg: below this winning chance (or above 1 - it) the cube is dead


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
        next roll whatever it throws: :func:`nard_ai.eval.bearoff.opponent_finishes_next_roll`),
        where the cube is dead: a taker never gets to use it, so no double is
        worth ``2p - 1`` and double/take ``2 (2p - 1)``, as gnubg's two-sided
        bear-off database gives.

    Raises:
        ValueError: on an invalid board.
    """
    from nard_ai.core.classes import race_flags

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
    x = np.where(~race_flags(boards), params.contact, np.where(bearoff, params.bearoff, race))
    over = game_result(boards) != 0
    x = np.where(over, 0.0, x)
    if bearoff.any():
        from nard_ai.eval.bearoff import opponent_finishes_next_roll

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


def as_probs(probs) -> np.ndarray:
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


def money_cubeful(p: np.ndarray, cube: CubeState, x) -> np.ndarray:
    jacoby = cube.jacoby and cube.owner == CENTRED
    w = p[..., 0]
    # Jacoby: with the cube centred a gammon counts as a single game.
    dead = 2.0 * w - 1.0 if jacoby else cubeless_equity(p)
    live = _money_live(p, cube.owner, jacoby)
    x = np.asarray(x, dtype=np.float64)
    mixed = (1.0 - x) * dead + x * live
    return np.where((w > _EPS) & (w < 1.0 - _EPS), mixed, dead)


# --------------------------------------------------------------------------- match play


@functools.cache
def mwc_at_score(away: int, opp_away: int, points: int, crawford: bool) -> float:
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
        on_roll = mwc_at_score(self.away[0], self.away[1], points if winner == 0 else -points, self.crawford)
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


def match_cubeful(p: np.ndarray, cube: CubeState, x) -> np.ndarray:
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


def mwc_to_equity(mwc, cube: CubeState):
    """Normalised money equity of an MWC at the current cube (gnubg ``mwc2eq``): +1 = winning the cube, -1 = losing it."""
    win = mwc_at_score(cube.away, cube.opp_away, cube.value, cube.crawford)
    lose = mwc_at_score(cube.away, cube.opp_away, -cube.value, cube.crawford)
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
    check_cube(cube)
    if cube.is_money:
        v = 0.0 if (cube.jacoby and cube.owner == CENTRED) else 1.0
        return v, v, v, v
    a, b, c, crawford = cube.away, cube.opp_away, cube.value, cube.crawford
    win, win_g, win_b = (mwc_at_score(a, b, k * c, crawford) for k in (1, 2, 3))
    lose, lose_g, lose_b = (mwc_at_score(a, b, -k * c, crawford) for k in (1, 2, 3))
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
    p = as_probs(probs)
    check_cube(cube)
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
        return money_cubeful(p, cube, efficiency)
    return match_cubeful(p, cube, efficiency)
