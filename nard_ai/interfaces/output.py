"""The ``nard`` commands' text and JSON output: probability rows, the hint table, the cube text, the match state.

Everything here is the side on roll's view (``X``): probabilities are
gnubg's five (win, win-g, win-bg, lose-g, lose-bg), equities in points per
game at cube 1 unless said otherwise.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

__all__ = [
    "PROBS_HEADER",
    "print_json",
    "num",
    "probs_dict",
    "probs_text",
    "describe_state",
    "game_over_text",
    "scored_plays",
    "format_hint",
    "match_text",
    "money_rules_text",
    "owner_text",
    "format_cube",
]


def print_json(obj: Any) -> None:
    """``obj`` as indented JSON on stdout (NaN refused: :func:`num` turns it into null first)."""
    print(json.dumps(obj, indent=2, allow_nan=False))


def num(value: float | None) -> float | None:
    """A float for JSON (NaN and None become null)."""
    return None if value is None or not np.isfinite(value) else round(float(value), 6)


def probs_dict(p) -> dict[str, float]:
    """gnubg's five probabilities ``p`` (``(5,)``) by name (``win``, ``win_gammon``, ...: ``nard_ai.model.network.GNUBG_OUTPUTS``), rounded to 6 places."""
    from nard_ai.core.outcomes import GNUBG_OUTPUTS

    return {name: round(float(v), 6) for name, v in zip(GNUBG_OUTPUTS, p, strict=True)}


def probs_text(p) -> str:
    """gnubg's five probabilities ``p`` as percentages in the columns of :data:`PROBS_HEADER`."""
    return " ".join(f"{100 * float(v):>6.1f}%" for v in p)


#: The column heads of :func:`probs_text`'s five numbers.
PROBS_HEADER = f"{'win':>7} {'w-g':>7} {'w-bg':>7} {'l-g':>7} {'l-bg':>7}"


_RESULT_WORDS = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


def game_over_text(result: int) -> str:
    """The line of a board whose game is over, ``result`` its :func:`~nard_ai.core.board.game_result` (X's
    view, nonzero): ``"The game is over: X has borne off all 15 checkers and won a gammon; no one is on roll"``."""
    winner = "X" if result > 0 else "O"
    return (
        f"The game is over: {winner} has borne off all 15 checkers and won {_RESULT_WORDS[abs(int(result))]}; "
        "no one is on roll"
    )


def describe_state(state, result: int = 0) -> list[str]:
    """Lines describing the cube, score, dice and turn of a Match ID/XGID state, from the mover's side (X).

    A game that is not being played (over, resigned, dropped, not started: gnubg's game state) has no
    one on roll and no offer pending: its state is told instead of the turn. While a resignation awaits
    its answer, that offer is the turn (as a double awaiting its answer is). ``result``: the board's
    :func:`~nard_ai.core.board.game_result`; a board whose game is over (a side has borne off all 15) has
    no one on roll either, whatever the state says: :func:`game_over_text` is told instead of the turn.
    """
    from nard_ai.core.game import CENTERED
    from nard_ai.formats.match_id import game_state_text

    if state is None:
        if result:
            return [
                "No match state: a money game, cube 1 centred (a Match ID or XGID sets them).",
                game_over_text(result),
            ]
        return [
            "No match state: X is on roll in a money game, cube 1 centred (a Match ID or XGID sets them)."
        ]
    me = state.player_on_roll
    lines = []
    if state.match_length:
        mine, theirs = state.score[me], state.score[1 - me]
        crawford = ", Crawford game" if state.crawford else ""
        lines.append(
            f"{state.match_length}-point match, score X {mine}, O {theirs} "
            f"(X {state.match_length - mine}-away, O {state.match_length - theirs}-away){crawford}"
        )
    else:
        lines.append(
            "Money game"
            + (", Jacoby rule" if state.jacoby else "")
            + (", beavers allowed" if state.beavers else "")
        )
    if state.cube_owner == CENTERED:
        lines.append(f"Cube {state.cube_value}, centred")
    else:
        lines.append(f"Cube {state.cube_value}, owned by {'X' if state.cube_owner == me else 'O'}")
    ended = game_state_text(state)
    if ended is not None:
        return [*lines, f"Game state {state.game_state.name}: {ended}; no one is on roll"]
    if result:
        return [*lines, game_over_text(result)]
    if state.resignation:
        # the Match ID's resigner is its player on roll (X here); it offers to lose that many points x the cube
        kind = _RESULT_WORDS[int(state.resignation)]
        points = int(state.resignation) * state.cube_value
        lines.append(
            f"X offers to resign {kind} ({points} point{'s' if points != 1 else ''} at cube "
            f"{state.cube_value}); O must accept or reject"
        )
    if state.double_offered:
        lines.append(f"X has doubled to {2 * state.cube_value}; O must take or pass")
    elif state.resignation:
        pass  # the offer above is the turn
    elif state.dice != (0, 0):
        lines.append(f"X has rolled {state.dice[0]}-{state.dice[1]}")
    else:
        lines.append("X is on roll, before rolling")
    return lines


def scored_plays(ranked: Any, cube=None):
    """``ranked`` as :class:`~nard_ai.reports.analysis.ScoredPlays` (a :class:`~nard_ai.search.lookahead.RankedPlays`
    is ranked for ``cube``: money when ``None``)."""
    from nard_ai.reports.analysis import ScoredPlays, score_plays

    return ranked if isinstance(ranked, ScoredPlays) else score_plays(ranked, cube)


def format_hint(board: np.ndarray, dice: tuple[int, int], ranked: Any, top: int = 0, ply: int = 0) -> str:
    """The ranked plays as a table, side on roll's view, best first.

    Args:
        board: ``(26,)`` int8, side on roll's view.
        dice: the roll.
        ranked: a :class:`~nard_ai.search.lookahead.RankedPlays` (money: cubeless
            equity) or a :class:`~nard_ai.reports.analysis.ScoredPlays` (match play:
            ranked by cubeless MWC at the score).
        top: show only the best ``top`` plays (0: all).
        ply: the depth the search was asked for (gnubg numbering); above 0 the
            table has a ``ply`` column with the depth each play was valued at,
            which is less for plays the move filters dropped, and for a play
            left alone by a filter (gnubg does not search a decided play deeper).

    Returns:
        The table: money play ``equity`` (cubeless, points per game) and
        ``diff``; match play ``mwc``, ``diff`` (in MWC) and ``emg`` (the MWC
        as normalised equity); then the five probabilities. ``diff`` is the
        play's value minus the best play's, negative, gnubg's convention
        (blank for the best).
    """
    from nard_ai.formats.notation import play_notation

    scored = scored_plays(ranked)
    plies = scored.plies
    deep = ply > 0 or (len(plies) and int(np.max(plies)) > 0)  # show each play's depth
    ply_head = "ply  " if deep else ""
    if scored.by_mwc:
        head = f"{'mwc':>7} {'diff':>7} {'emg':>7}"
    else:
        head = f"{'equity':>7} {'diff':>7}"
    rows = [f"{'#':>3}  {'play':<24} {ply_head}{head} {PROBS_HEADER}"]
    n = len(scored) if top <= 0 else min(top, len(scored))
    diff = scored.diff
    for i in range(n):
        # the board left as it is: no legal play ("-" in play_notation, the JSON and HTTP /move)
        same = np.array_equal(scored.afterstates[i], board)
        move = "(no move)" if same else play_notation(board, scored.afterstates[i], dice)
        depth = f"{int(plies[i]):>3}  " if deep else ""
        if scored.by_mwc:
            d = "" if i == 0 else f"{100 * diff[i]:+.1f}%"
            values = f"{100 * scored.mwc[i]:>6.1f}% {d:>7} {scored.emg[i]:>+7.3f}"
        else:
            d = "" if i == 0 else f"{diff[i]:+.3f}"
            values = f"{scored.equity[i]:>+7.3f} {d:>7}"
        rows.append(f"{i + 1:>3}  {move:<24} {depth}{values} {probs_text(scored.probs[i])}")
    if n < len(scored):
        rows.append(f"     ... {len(scored) - n} more")
    return "\n".join(rows)


def owner_text(cube) -> str:
    """Who owns a :class:`~nard_ai.cube.CubeState`'s cube, in words: ``centred``, ``owned by X`` (on roll) or ``owned by O``."""
    return {"centred": "centred", "on_roll": "owned by X", "opponent": "owned by O"}[cube.owner]


def money_rules_text(cube) -> str:
    """The money-play rules of a :class:`~nard_ai.cube.CubeState` that its equities apply, both named either way:
    ``"Jacoby rule, beavers allowed"``, ``"no Jacoby rule, no beavers"``, ..."""
    jacoby = "Jacoby rule" if cube.jacoby else "no Jacoby rule"
    beavers = "beavers allowed" if cube.beavers else "no beavers"
    return f"{jacoby}, {beavers}"


def match_text(cube) -> str:
    """A match :class:`~nard_ai.cube.CubeState` in words: length, score (X, O), Crawford, the cube and its owner."""
    crawford = ", Crawford game" if cube.crawford else ""
    return (
        f"{cube.match_length}-point match, X {cube.score[0]}, O {cube.score[1]}{crawford}, "
        f"cube {cube.value} {owner_text(cube)}"
    )


def _cube_unavailable_reason(cube) -> str:
    """Why X (on roll) cannot double at ``cube`` (a :class:`nard_ai.cube.CubeState`): O owns it, the
    Crawford game, in money play a cube at :data:`nard_ai.cube.MAX_CUBE` (the largest nard_ai plays, as
    gnubg), else in match play a cube dead for X."""
    from nard_ai.cube import MAX_CUBE, OPPONENT

    if cube.owner == OPPONENT:
        return "O owns the cube"
    if cube.crawford:
        return "this is the Crawford game"
    if cube.is_money:
        return f"the cube is at {cube.value}, and {MAX_CUBE} is the largest cube nard_ai plays"
    return "the cube is dead for X (winning the current cube already wins X the match)"


def format_cube(decision, cube) -> str:
    """gnubg-style cube analysis text for the side on roll (X)."""
    from nard_ai.reports.analysis import cube_action_text
    from nard_ai.reports.position import cube_errors_text

    d = decision
    lines = [
        f"Cubeless probabilities for X: {'  '.join(f'{n} {100 * v:.1f}%' for n, v in zip(('win', 'w-g', 'w-bg', 'l-g', 'l-bg'), d.probs, strict=True))}",
        f"Cubeless equity {d.cubeless_equity:+.3f}" + ("" if cube.is_money else " (normalised match equity)"),
    ]
    mwc = {"no_double": d.no_double_mwc, "double_take": d.double_take_mwc, "double_pass": d.double_pass_mwc}
    if not d.cube_available:
        lines.append(f"X cannot double: {_cube_unavailable_reason(cube)}.")
        extra = "" if cube.is_money else f"  (MWC {100 * d.no_double_mwc:.1f}%)"
        lines.append(f"Cubeful equity (no double): {d.no_double:+.3f}{extra}")
        return "\n".join(lines)
    unit = "per unit of the current cube" if cube.is_money else "normalised match equity at the current cube"
    lines.append(f"Cubeful equities for X ({unit}):")
    names = {"no_double": "No double", "double_take": "Double, take", "double_pass": "Double, pass"}
    if cube.owner == "on_roll":  # gnubg: "Redouble" when the side on roll owns the cube
        names = {
            k: v.replace("Double", "Redouble").replace("No double", "No redouble") for k, v in names.items()
        }
    right = "no_double" if d.action.startswith(("no_double", "too_good")) else d.action
    # gnubg's order: the right action first, then the two doubles, then no double
    order = {
        "no_double": ["no_double", "double_take", "double_pass"],
        "double_take": ["double_take", "double_pass", "no_double"],
        "double_pass": ["double_pass", "double_take", "no_double"],
    }[right]
    top = d.equities[right]
    for i, key in enumerate(order, start=1):
        value = d.equities[key]
        diff = "" if i == 1 else f"  ({value - top:+.3f})"
        extra = "" if mwc[key] is None else f"  MWC {100 * mwc[key]:.1f}%"
        lines.append(f"{i}. {names[key]:<16} {value:+.3f}{diff}{extra}")
    lines.append(f"Proper cube action: {cube_action_text(d)} (take point {100 * d.take_point:.1f}%)")
    if d.beaver:
        # beavers (money): O answers a double by beavering, the cube goes to 4x and O keeps it
        lines.append(f"O beavers a double: X's equity after double, beaver {2 * d.double_take:+.3f}")
    lines.append(f"Errors: {cube_errors_text(d)}")
    return "\n".join(lines)
