"""Cubeful lookahead: cube decisions at 1 and 2 ply the way gnubg's ``EvaluatePositionCubeful`` makes them.

At 0-ply a cube decision applies :mod:`nard_ai.cube.decision`'s model (Janowski's
cubeful equity, or the match-play version) to the position's cubeless
probabilities. At ``n >= 1`` ply gnubg does not put the model on top of
``n``-ply probabilities; it carries cubeful values through the search, and
so does this module:

* a position whose side on roll does **not** double is worth the average,
  over the 21 rolls (doubles 1/36, others 2/36), of the value to it of the
  position after its best 0-ply play (the search's play), where the opponent
  is on roll with the same cube (seen from its side) and acts on the cube
  optimally;
* a side on roll that may double acts by the one cube rule of every decision
  (:func:`nard_ai.cube.decision.cube_actions`, gnubg's ``FindBestCubeDecision``):
  it doubles when ``min(double/take, double/pass) >= no double`` (the opponent
  then takes, or beavers where beavers are on, or passes, whichever is worse
  for the doubler), and plays on otherwise or when too good;
* at 0 ply the values are the model's: money equity (points, times the cube
  value) or match-winning chance for each cube state, from the 0-ply
  probabilities and the position's cube efficiency
  (:func:`nard_ai.cube.decision.cube_efficiency`);
* finished games are worth their exact result (RULES.md §6; with the Jacoby
  rule and the cube centred a gammon or backgammon counts one).

Every level of the tree (the ``21`` positions after the root's rolls, the
``21 x 21`` after those) is built once with one move-generator and one
evaluator call (:func:`nard_ai.search.lookahead.select_plays`), and every cube state
is valued on the same tree; at 2 ply that is the work of a 2-ply position
evaluation. The root's no double and double/take values come from this
tree; double/pass is exact. Beavers (money) are applied by that one rule at
the root and inside the tree alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from nard_ai.core.board import game_result, swap_sides_unchecked
from nard_ai.core.outcomes import invert_probs, result_probs
from nard_ai.cube.decision import (
    DOUBLE_PASS,
    DOUBLE_TAKE,
    CubeDecision,
    cube_action,
    cube_actions,
    cube_decision_from_probs,
)
from nard_ai.cube.equity import (
    DEFAULT_EFFICIENCY,
    CubeEfficiency,
    efficiencies,
    match_cubeful,
    money_cubeful,
    mwc_at_score,
    mwc_to_equity,
)
from nard_ai.cube.state import CENTRED, CubeState, finished_points
from nard_ai.search.lookahead import ROLL_WEIGHTS, ROLLS_21, select_plays

__all__ = ["lookahead_cube_decision"]


@dataclass
class _Node:
    """The positions of one level of the tree, side on roll's view."""

    over: np.ndarray  # (M,) bool: the game is over
    points: np.ndarray  # (M,) int: its result for the side on roll (0 while live)
    live: np.ndarray  # (L,) indices of the live positions
    probs: np.ndarray | None  # leaf: (L, 5) 0-ply probabilities of the live positions
    x: np.ndarray | None  # leaf: (L,) their cube efficiencies
    child: _Node | None  # inner node: the positions after each live position's 21 rolls, rows 21 i + r
    # (M,) bool, the side on roll can win a gammon (cube_actions' test), computed on demand
    gammon: np.ndarray | None = None


def _build(evaluator, rules, boards: np.ndarray, ply: int, params: CubeEfficiency | float) -> _Node:
    points = game_result(boards)
    over = points != 0
    live = np.flatnonzero(~over)
    if ply == 0:
        probs = (
            np.asarray(evaluator.evaluate(boards[live]), dtype=np.float64) if len(live) else np.zeros((0, 5))
        )
        x = efficiencies(boards[live], params) if len(live) else np.zeros(0)
        return _Node(over, points, live, probs, x, None)
    rolled = np.repeat(boards[live], len(ROLLS_21), axis=0)
    dice = np.tile(ROLLS_21, (len(live), 1))
    child = None
    if len(live):
        sel = select_plays(evaluator, rolled, dice, rules, ply=0)
        child = _build(evaluator, rules, swap_sides_unchecked(sel.afterstates), ply - 1, params)
    return _Node(over, points, live, None, None, child)


def _exact(points: np.ndarray, cube: CubeState) -> np.ndarray:
    """Value of finished games (result ``points`` for the side on roll) at ``cube``."""
    if cube.is_money:
        return finished_points(points, cube.value, cube.owner == CENTRED, cube.jacoby).astype(np.float64)
    return np.array(
        [mwc_at_score(cube.away, cube.opp_away, int(p) * cube.value, cube.crawford) for p in points]
    )


def _pass_value(cube: CubeState) -> float:
    """The doubler's value when its double is passed: it wins the current cube."""
    if cube.is_money:
        return float(cube.value)
    return mwc_at_score(cube.away, cube.opp_away, cube.value, cube.crawford)


def _no_double(node: _Node, cube: CubeState) -> np.ndarray:
    """``(M,)`` value for the side on roll when it does not double now (money: points; match: MWC)."""
    out = np.empty(len(node.over))
    if node.over.any():
        out[node.over] = _exact(node.points[node.over], cube)
    if len(node.live) == 0:
        return out
    if node.child is None:
        if cube.is_money:
            out[node.live] = cube.value * money_cubeful(node.probs, cube, node.x)
        else:
            out[node.live] = match_cubeful(node.probs, cube, node.x)
        return out
    theirs = _optimal(node.child, cube.swapped())
    mine = -theirs if cube.is_money else 1.0 - theirs
    out[node.live] = mine.reshape(len(node.live), len(ROLLS_21)) @ ROLL_WEIGHTS
    return out


def _optimal(node: _Node, cube: CubeState) -> np.ndarray:
    """``(M,)`` value for the side on roll acting on the cube before it rolls by the one cube rule,
    :func:`nard_ai.cube.decision.cube_actions` (double, take, pass, beaver, too good), as at the root.

    Its gammon test is the root's: a win gammon chance above zero in the node's cubeless
    probabilities on the same tree.
    """
    nd = _no_double(node, cube)
    if not cube.can_double:
        return nd
    dt = _no_double(node, cube.doubled())
    dp = np.full(len(nd), _pass_value(cube))
    if node.gammon is None:
        node.gammon = np.zeros(len(node.over), dtype=bool)
        node.gammon[~node.over] = _cubeless(node)[~node.over, 1] > 0.0
    codes, beaver = cube_actions(nd, dt, dp, cube, node.gammon)
    value = np.where(
        codes == DOUBLE_TAKE, np.where(beaver, 2.0 * dt, dt), np.where(codes == DOUBLE_PASS, dp, nd)
    )
    return np.where(node.over, nd, value)


def _cubeless(node: _Node) -> np.ndarray:
    """``(M, 5)`` cubeless probabilities for the side on roll on the same tree (gnubg's n-ply value)."""
    out = np.empty((len(node.over), 5))
    if node.over.any():
        out[node.over] = result_probs(node.points[node.over])
    if len(node.live):
        if node.child is None:
            out[node.live] = node.probs
        else:
            theirs = invert_probs(_cubeless(node.child)).reshape(len(node.live), len(ROLLS_21), 5)
            out[node.live] = np.einsum("r,nrf->nf", ROLL_WEIGHTS, theirs)
    return out


def lookahead_cube_decision(
    board: np.ndarray, cube: CubeState, agent, ply: int, efficiency: CubeEfficiency | float | None = None
) -> CubeDecision:
    """The cube decision for the side on roll at ``ply >= 1`` with cubeful lookahead (module docstring).

    Args:
        board: ``(26,)`` int8 valid board, side on roll's view, game not over
            (checked by the caller, :func:`nard_ai.cube.decision.cube_decision`).
        cube: the cube state (checked by the caller).
        agent: a :class:`nard_ai.search.lookahead.Agent` (its ``evaluator`` values the
            leaves, its ``rules`` generate the plays).
        ply: 1 or 2.
        efficiency: cube efficiency parameters (default :data:`nard_ai.cube.decision.DEFAULT_EFFICIENCY`),
            or one fixed ``x`` for every position of the tree.

    Returns:
        A :class:`~nard_ai.cube.decision.CubeDecision`: no double and double/take from
        the lookahead (money: points per game at the current cube, for the side
        on roll; match: also as MWC), double/pass exact, the action from them;
        ``probs``, ``cubeless_equity`` and ``take_point`` from the ``ply``-ply
        cubeless probabilities (the same tree's, equal to the agent's
        ``ply``-ply evaluation), as at 0-ply.
    """
    params = DEFAULT_EFFICIENCY if efficiency is None else efficiency
    tree = _build(agent.evaluator, agent.rules, np.asarray(board, dtype=np.int8)[None], ply, params)
    probs = _cubeless(tree)[0]  # the agent's ply-ply probabilities, from the same tree
    base = cube_decision_from_probs(probs, cube, float(efficiencies(board[None], params)[0]), ply=ply)
    nan = float("nan")
    nd = float(_no_double(tree, cube)[0])
    if cube.can_double:
        dt, dp = float(_no_double(tree, cube.doubled())[0]), _pass_value(cube)
    else:
        dt = dp = nan
    if cube.is_money:
        nd, dt, dp = nd / cube.value, dt / cube.value, (dp / cube.value if cube.can_double else nan)
        mwcs = (None, None, None)
    else:
        mwcs = (nd, dt, dp)
        nd, dt = float(mwc_to_equity(nd, cube)), float(mwc_to_equity(dt, cube)) if cube.can_double else nan
        dp = 1.0 if cube.can_double else nan
    action, beaver = cube_action(nd, dt, dp, cube, bool(probs[1] > 0.0))
    return dataclasses.replace(
        base,
        action=action,
        no_double=nd,
        double_take=dt,
        double_pass=dp,
        beaver=beaver,
        no_double_mwc=mwcs[0],
        double_take_mwc=mwcs[1],
        double_pass_mwc=mwcs[2],
    )
