"""Cube decisions from cubeless probabilities: no double, double/take, double/pass, too good, beaver.

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

from dataclasses import dataclass

import numpy as np

from nard_ai.core.outcomes import cubeless_equity
from nard_ai.core.ply import check_ply  # re-exported: nard_ai.cube.check_ply
from nard_ai.cube.equity import (
    DEFAULT_EFFICIENCY,
    _Match,
    _match_dead,
    _outcome_ratios,
    as_probs,
    match_cubeful,
    money_cubeful,
    mwc_at_score,
    mwc_to_equity,
)
from nard_ai.cube.state import MAX_CUBE, CubeState, _is_real, check_cube
from nard_ai.search.lookahead import values_positions

__all__ = [
    "CubeDecision",
    "cube_decision_from_probs",
    "cube_action",
    "cube_actions",
    "answers",
    "beavers",
    "CUBE_ACTIONS",
    "DOUBLE_TAKE",
    "DOUBLE_PASS",
    "check_ply",
    "check_efficiency",
]


# --------------------------------------------------------------------------- decisions


def check_efficiency(efficiency) -> float:
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
    if not values_positions(agent):
        raise ValueError(
            "agent needs value(boards) -> (probs (N, 5), equity (N,)), as a nard_ai.search.lookahead.Agent "
            f"(build one with nard_ai.agents.agent_from_spec); got {agent!r}"
        )
    # As nard_ai.reports.error_rate refuses a referee and nard_ai.search.lookahead refuses lookahead: an
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
    (double/pass = +1 too), with the MWC themselves in the ``*mwc_at_score`` fields.

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
    def taker_takes(self) -> bool:
        """The doubled side's answer, for its advice: take when double/take costs the doubler no more
        than a pass (``double_take <= double_pass``, equities for the doubler), and when the side on roll
        cannot double (``cube_available`` false, no double to answer) or its equities are not finite.
        ``nard cube``, UBGI's ``bestcube take|pass`` and HTTP ``/cube``'s ``accept`` give this; the
        players' own takers follow :func:`answers` (the same rule, with beavers), which differs only on
        an exact tie."""
        return bool(
            not self.cube_available
            or not np.isfinite(self.double_take)
            or self.double_take <= self.double_pass
        )

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
        win = mwc_at_score(c.away, c.opp_away, c.value, c.crawford)
        lose = mwc_at_score(c.away, c.opp_away, -c.value, c.crawford)
        return (win - lose) / 2.0


#: The cube actions :func:`cube_actions` tells apart, by their codes 0..4.
CUBE_ACTIONS = ("no_double", "double_take", "double_pass", "too_good_take", "too_good_pass")
NO_DOUBLE, DOUBLE_TAKE, DOUBLE_PASS, TOO_GOOD_TAKE, TOO_GOOD_PASS = range(len(CUBE_ACTIONS))


def cube_actions(nd, dt, dp, cube: CubeState, can_gammon) -> tuple[np.ndarray, np.ndarray]:
    """The cube action of many positions at one cube state: the one rule of every cube decision.

    gnubg's ``FindBestCubeDecision``: the side on roll doubles when the opponent's best answer
    ``min(double_take, double_pass)`` is worth at least ``no_double`` to it, and the opponent
    takes when ``double_take < double_pass``; a position where not doubling is better than the
    pass it would get is "too good" (play on), unless no gammon can be won: gnubg never calls a
    position too good without a gammon to play for, so the side doubles (and the opponent passes,
    or takes, and then not doubling was right). Money with beavers: a taker whose take is worth
    more than nothing to it (``dt < 0`` for the doubler) beavers, redoubling at once and keeping
    the cube, as long as the cube stays at or under :data:`~nard_ai.cube.state.MAX_CUBE`; the
    double is then worth ``2 dt``. Used by :func:`cube_action` (one position, the scalar decision
    and the cubeful lookahead) and :mod:`nard_ai.play.cube_policy` (cube sessions, rollouts).

    Args:
        nd, dt, dp: ``(N,)`` (or scalar) cubeful equities of no double, double/take and
            double/pass for the side on roll, in current-cube units (money: points per game per
            cube; match: MWC), ``dt`` as the take leaves it (before any beaver).
        cube: the cube state (the side on roll's view); where it cannot double every action is
            ``"no_double"``.
        can_gammon: ``(N,)`` (or scalar) bool, whether the side on roll can still win a gammon.

    Returns:
        ``(codes, beaver)``: ``(N,)`` int8 indices into :data:`CUBE_ACTIONS` and ``(N,)`` bool
        (a double would be beavered).
    """
    nd, dt, dp = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (nd, dt, dp)))
    can_gammon = np.broadcast_to(np.asarray(can_gammon, dtype=bool), nd.shape)
    codes = np.zeros(nd.shape, dtype=np.int8)
    if not cube.can_double:
        return codes, np.zeros(nd.shape, dtype=bool)
    take, beaver, taken = answers(dt, dp, cube)
    double = np.minimum(taken, dp) >= nd
    too_good = ~double & (dp < nd)
    codes[double] = np.where(take[double], DOUBLE_TAKE, DOUBLE_PASS)
    # too good: play on (3, 4); without a gammon to win, double (the opponent passes) or, had it
    # taken, not doubling was right (0)
    codes[too_good & can_gammon] = np.where(take[too_good & can_gammon], TOO_GOOD_TAKE, TOO_GOOD_PASS)
    codes[too_good & ~can_gammon & ~take] = DOUBLE_PASS
    return codes, beaver


def answers(dt, dp, cube: CubeState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The answer to a double (:func:`cube_actions`' rule, also of a driver's taker): ``(take, beaver,
    taken)``, ``(N,)`` each.

    The taker beavers by :func:`beavers`; the double is then worth ``2 dt`` to the doubler
    (``taken``, else ``dt``), and the taker takes when that costs it less than the pass
    (``taken < dp``, equities for the doubler in current-cube units). ``beaver`` is returned as
    the rule gives it, whatever the take (a beaver is only made with a take).
    """
    dt = np.asarray(dt, dtype=np.float64)
    beaver = beavers(dt, cube)
    taken = np.where(beaver, 2.0 * dt, dt)
    return taken < np.asarray(dp, dtype=np.float64), beaver, taken


def beavers(dt, cube: CubeState) -> np.ndarray:
    """Whether a double is beavered (:func:`cube_actions`' rule): money with beavers on, the take worth
    more than nothing to the taker (``dt < 0`` for the doubler), and the cube at most
    :data:`~nard_ai.cube.state.MAX_CUBE` after the beaver.

    Args:
        dt: ``(N,)`` (or scalar) double/take equities for the doubler, current-cube units.
        cube: the doubler's cube state.

    Returns:
        ``(N,)`` bool (shape of ``dt``).
    """
    dt = np.asarray(dt, dtype=np.float64)
    if cube.is_money and cube.beavers and 4 * cube.value <= MAX_CUBE:
        return dt < 0.0
    return np.zeros(dt.shape, dtype=bool)


def cube_action(nd: float, dt: float, dp: float, cube: CubeState, can_gammon: bool) -> tuple[str, bool]:
    """``(action, beaver)`` of one position from its three cubeful equities (:func:`cube_actions`).

    Returns:
        the action's name (one of :data:`CUBE_ACTIONS`) and whether the double is beavered.
    """
    codes, beaver = cube_actions(nd, dt, dp, cube, can_gammon)
    return CUBE_ACTIONS[int(codes.reshape(-1)[0])], bool(beaver.reshape(-1)[0])


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
            return 2.0 * money_cubeful(_scaled_probs(p, w), doubled, x)
    else:
        pass_value = mwc_at_score(cube.away, cube.opp_away, cube.value, cube.crawford)

        def take_value(w):
            return match_cubeful(_scaled_probs(p, w), doubled, x)

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
    p = as_probs(probs)
    if p.shape != (5,):
        raise ValueError(
            f"cube_decision_from_probs takes one position's (5,) probabilities, got shape {p.shape}"
        )
    check_cube(cube)
    x = check_efficiency(efficiency)
    if ply is not None:
        ply = check_ply(ply)
    nan = float("nan")
    available = cube.can_double
    if cube.is_money:
        nd = float(money_cubeful(p, cube, x))
        cubeless = float(cubeless_equity(p))
        dt, dp = (float(2.0 * money_cubeful(p, cube.doubled(), x)), 1.0) if available else (nan, nan)
        mwcs = (None, None, None)
    else:
        nd_mwc = float(match_cubeful(p, cube, x))
        cubeless = float(mwc_to_equity(_match_dead(p, _Match(cube, _outcome_ratios(p)), cube.value), cube))
        if available:
            dt_mwc = float(match_cubeful(p, cube.doubled(), x))
            dp_mwc = mwc_at_score(cube.away, cube.opp_away, cube.value, cube.crawford)
        else:
            dt_mwc = dp_mwc = nan
        mwcs = (nd_mwc, dt_mwc, dp_mwc)
        nd, dt, dp = (float(mwc_to_equity(v, cube)) for v in mwcs)
        if available:
            dp = 1.0  # exactly, by construction of the conversion
    action, beaver = cube_action(nd, dt, dp, cube, bool(p[1] > 0.0))
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
