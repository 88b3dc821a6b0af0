"""GNU Backgammon as an agent, a referee and a cube analyst (the optional ``gnubg`` module).

``pip install gnubg`` gives the ``gnubg`` Python module: GNU Backgammon's
neural networks, bear-off databases and cube analysis as a library. Without
it nothing here works, and :func:`gnubg_agent` says so with a ``ValueError``.

What this module uses of gnubg, and why
---------------------------------------
* **Evaluation**: ``gnubg.evaluate(board, cubeinfo, evalcontext(0, ply))``
  gives the cubeless probabilities of a position for its side on roll at
  ``ply`` 0, 1 or 2 (gnubg's numbering, the same as ours: 0-ply = the static
  evaluation). The board is gnubg's two-row form, **row 1 = the side on
  roll** (:func:`nard_ai.formats.to_tanboard`). gnubg_nn's
  ``probabilities(board, ply)`` gives the same numbers (checked in the tests).
* **Move choice**: gnubg's ``findbestmove(s)`` return move tuples that stop
  at the first checker borne off, so the play they name cannot always be
  rebuilt. Instead :class:`GnubgAgent` enumerates the legal plays with our
  generator (:func:`nard_ai.core.movegen.legal_plays_batch`), values each
  afterstate with gnubg at ``ply`` (the afterstate turned to the opponent,
  evaluated, inverted: exactly how gnubg scores a play at n-ply in
  ``ScoreMove``) and takes the best cubeless equity. At 0-ply this is
  gnubg's own 0-ply choice; at 1 and 2 plies it values every play at full
  depth, where gnubg's own play would first cut the list down with move
  filters (so it is at least as thorough, and slower).
* **The one rules difference** (RULES.md §3.6, README "Rules notes"): a play
  that bears off the mover's last checker ends the game and counts as using
  every die; gnubg instead still demands the most dice. Because the plays
  come from our generator, the extra finished plays are there, and every
  finished afterstate is valued by its exact result (win, gammon,
  backgammon) rather than by gnubg. Inside gnubg's own 1- and 2-ply
  lookahead its rule applies; it can only change which finished position a
  lookahead line reaches.
* **Cube analysis**: the library has no cube-hint function
  (``gnubg.hint()`` answers "Hints for cube actions not yet implemented",
  and the command ``hint`` hangs in the library build), but its ``eval``
  command prints gnubg's full cube analysis at the configured ply (it too
  hangs unless ``set threads 1`` comes first).
  :func:`gnubg_cube_analysis` runs it in a child Python process (gnubg
  prints to ``stdout``, and a hang or crash must not take the caller down)
  and parses the numbers (printed with 5 decimals).
* **Threads**: the library crashes (segmentation fault) when a 1-ply or
  deeper evaluation runs off the main thread, so every call here checks
  that it is on the main thread and raises ``RuntimeError`` otherwise.

Perspective: boards are the side on roll's view (:mod:`nard_ai.core.board`);
probabilities and equities are for the side on roll (``value``) or for
the mover (plays), in gnubg's five-number order; equity is cubeless money
equity in points per game at cube 1.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import threading
from dataclasses import dataclass

import numpy as np

from nard_ai.core.board import game_result, validate_board
from nard_ai.core.game import CENTERED
from nard_ai.core.outcomes import cubeless_equity, result_probs
from nard_ai.core.rules import Rules
from nard_ai.cube import CENTRED, DEFAULT_EFFICIENCY, ON_ROLL, CubeEfficiency, CubeState
from nard_ai.formats.match_id import MatchState, gnubg_id
from nard_ai.formats.tanboard import to_tanboard
from nard_ai.search.lookahead import (
    STANDARD_RULES,
    RankedPlays,
    Selection,
    Valuation,
    ValuingAgent,
    choose_plays,
    rank_plays,
    select_plays,
)

__all__ = [
    "GNUBG_PLIES",
    "GnubgEvaluator",
    "GnubgAgent",
    "GnubgCubeAnalysis",
    "gnubg_available",
    "gnubg_agent",
    "gnubg_agent_from_spec",
    "gnubg_cube_analysis",
    "gnubg_id_for_cube",
]

#: The plies a gnubg agent searches at (gnubg's numbering).
GNUBG_PLIES = (0, 1, 2)
INSTALL_HINT = "pip install gnubg"


def gnubg_available() -> bool:
    """Whether the optional ``gnubg`` module imports."""
    try:
        importlib.import_module("gnubg")
    except ImportError:
        return False
    return True


def _import_gnubg(what: str):
    try:
        return importlib.import_module("gnubg")
    except ImportError:
        raise ValueError(f"{what} needs the optional gnubg package: {INSTALL_HINT}") from None


def _check_ply(ply: object) -> int:
    if isinstance(ply, bool) or not isinstance(ply, int | np.integer) or int(ply) not in GNUBG_PLIES:
        raise ValueError(f"gnubg agents search at ply 0, 1 or 2, got {ply!r}")
    return int(ply)


def _check_main_thread() -> None:
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError(
            "the gnubg library crashes when it evaluates off the main thread; "
            "call gnubg agents from the main thread only"
        )


class GnubgEvaluator:
    """An :class:`~nard_ai.eval.evaluator.Evaluator` backed by gnubg's n-ply evaluation.

    Args:
        ply: 0, 1 or 2 (gnubg's numbering).

    Raises:
        ValueError: on another ply, or if the ``gnubg`` module is not installed.
    """

    def __init__(self, ply: int = 0) -> None:
        self.ply = _check_ply(ply)
        self._gnubg = _import_gnubg(f"gnubg:{ply}")
        # Money play, cube centred. Cubeless evaluation: the cube value and
        # owner do not change the probabilities (only match scores would, by
        # the gammon prices gnubg's lookahead uses to pick replies).
        self._cubeinfo = self._gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0)
        self._context = self._gnubg.evalcontext(0, self.ply, 1, 0)  # cubeless, deterministic, no pruning

    def __getstate__(self) -> dict:
        # pickled as its ply (for a Ray worker, say): the module and its handles are made again there
        return {"ply": self.ply}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["ply"])

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """gnubg's probabilities for the side on roll.

        Args:
            boards: ``(N, 26)`` int8, each in its side on roll's view.

        Returns:
            ``(N, 5)`` float32 gnubg-order probabilities (win, win-gammon,
            win-backgammon, lose-gammon, lose-backgammon) for the side on
            roll at this evaluator's ply. Finished games get their exact
            result.

        Raises:
            ValueError: on invalid boards.
            RuntimeError: when called off the main thread.
        """
        _check_main_thread()
        boards = validate_board(np.asarray(boards).reshape(-1, 26))
        out = np.empty((len(boards), 5), dtype=np.float32)
        result = game_result(boards)
        over = result != 0
        if over.any():
            out[over] = result_probs(result[over])
        live = np.flatnonzero(~over)
        evaluate, ci, ec = self._gnubg.evaluate, self._cubeinfo, self._context
        for i, rows in zip(live, to_tanboard(boards[live]).tolist(), strict=True):
            out[i] = evaluate(rows, ci, ec)[:5]
        return out


class GnubgAgent(ValuingAgent):
    """gnubg at a fixed ply as an agent, with the methods of :class:`nard_ai.search.lookahead.Agent`.

    Plays are enumerated by our generator and valued by gnubg at ``ply`` (see
    the module docstring); the best cubeless equity wins, ties going to the
    first play in generator order.

    Args:
        ply: 0, 1 or 2 (gnubg's numbering).
        rules: rule settings of the move generator. The Iranian variant
            (RULES.md §7) is allowed only at 0-ply: gnubg's lookahead knows
            only the standard rules.

    Attributes:
        ply: gnubg's ply (inside its evaluation, not a search over it).
        name: ``"gnubg:PLY"``.
        rules: the rule settings.

    The :class:`GnubgEvaluator` is kept private on purpose: code that finds
    ``evaluator`` and ``ply`` on an agent (rollouts' variance reduction)
    takes ``ply`` as a search depth over that evaluator, which here would
    stack a search on top of gnubg's own lookahead.

    Raises:
        ValueError: on a ply other than 0, 1, 2, non-standard rules above
            0-ply, or if the ``gnubg`` module is not installed.
    """

    def __init__(self, ply: int = 0, rules: Rules = STANDARD_RULES) -> None:
        ply = _check_ply(ply)
        if ply > 0 and rules != STANDARD_RULES:
            raise ValueError(
                f"gnubg:{ply} cannot play {rules}: gnubg's lookahead knows only the standard rules "
                "(gnubg:0 can, its plays come from our generator)"
            )
        self._evaluator = GnubgEvaluator(ply)
        self.ply = ply
        self.rules = rules
        self.name = f"gnubg:{ply}"

    def choose_plays(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """``(N, 26)`` int8 boards (side on roll's view) and ``(N, 2)`` dice -> ``(N, 26)`` int8 chosen afterstates (mover's view).

        Raises:
            ValueError: on invalid boards or dice.
            RuntimeError: when called off the main thread.
        """
        return choose_plays(self._evaluator, boards, dice, self.rules)

    def select_plays(self, boards: np.ndarray, dice: np.ndarray) -> Selection:
        """Like :meth:`choose_plays`, with the chosen plays' probabilities (:class:`nard_ai.search.lookahead.Selection`)."""
        return select_plays(self._evaluator, boards, dice, self.rules)

    def rank_plays(self, board: np.ndarray, dice) -> RankedPlays:
        """Every legal play of one position with gnubg's probabilities and equity for the mover, best first."""
        return rank_plays(self._evaluator, board, dice, self.rules)

    def value(self, boards: np.ndarray) -> Valuation:
        """``(N, 26)`` boards -> a :class:`~nard_ai.search.lookahead.Valuation`: ``(N, 5)`` float32
        probabilities and ``(N,)`` float32 cubeless equity for the side on roll."""
        probs = self._evaluator.evaluate(boards)
        return Valuation(probs, cubeless_equity(probs))

    def __repr__(self) -> str:
        return f"GnubgAgent(ply={self.ply})"


def gnubg_agent(ply: int = 0, rules: Rules = STANDARD_RULES) -> GnubgAgent:
    """The ``gnubg:PLY`` agent (see :class:`GnubgAgent`).

    Raises:
        ValueError: ``"gnubg:1 needs the optional gnubg package: pip install gnubg"``
            when the module is missing; on a bad ply or rules.
    """
    return GnubgAgent(ply, rules)


def gnubg_agent_from_spec(spec: str, rules: Rules = STANDARD_RULES) -> GnubgAgent:
    """The agent of a ``"gnubg"`` (0-ply) or ``"gnubg:PLY"`` spec (:func:`nard_ai.agents.agent_from_spec`).

    Raises:
        ValueError: on another spec, a ply other than 0, 1, 2, or if the
            ``gnubg`` module is not installed.
    """
    head, sep, tail = spec.partition(":")
    if head != "gnubg" or (sep and not (tail.isdigit() and tail.isascii())):
        raise ValueError(f"a gnubg agent spec is 'gnubg' or 'gnubg:PLY' with PLY 0, 1 or 2, got {spec!r}")
    ply = int(tail) if sep else 0
    if ply not in GNUBG_PLIES:
        raise ValueError(f"gnubg agents search at ply 0, 1 or 2, got {spec!r}")
    return GnubgAgent(ply, rules)


# --------------------------------------------------------------------------- cube analysis


@dataclass(frozen=True, eq=False)
class GnubgCubeAnalysis:
    """gnubg's cube analysis of one position, for the side on roll before it rolls.

    Equities are gnubg's as it prints them with ``set output mwc off``: money
    play in points per game per unit of the current cube, match play as
    normalised money equity (double/pass = +1), the units of
    :class:`nard_ai.cube.CubeDecision`.

    Attributes:
        action: one of :data:`nard_ai.cube.ACTIONS` (gnubg's "optional double"
            counts as a double; "never double" and a cube the side on roll
            cannot turn as ``"no_double"``).
        gnubg_action: gnubg's own words ("Proper cube action: ..."), or
            ``""`` when gnubg shows no cube analysis (the cube is not
            available to the side on roll).
        no_double: cubeful equity without a double (when the cube is not
            available: gnubg's cubeful equity of the position).
        double_take: equity after double/take; NaN without a cube analysis.
        double_pass: equity after double/pass (+1); NaN without a cube analysis.
        optimal: equity with the proper cube action on both sides.
        probs: ``(5,)`` float64 gnubg's cubeless probabilities at the ply.
        cubeless_equity: gnubg's cubeless equity (normalised in match play).
        ply: the ply of the analysis.
    """

    action: str
    gnubg_action: str
    no_double: float
    double_take: float
    double_pass: float
    optimal: float
    probs: np.ndarray
    cubeless_equity: float
    ply: int


#: gnubg's cube recommendations (``GetCubeRecommendation``), longest first when matched.
_GNUBG_ACTIONS = {
    "too good to double, pass": "too_good_pass",
    "too good to redouble, pass": "too_good_pass",
    "too good to double, take": "too_good_take",
    "too good to redouble, take": "too_good_take",
    "optional double, take": "double_take",
    "optional redouble, take": "double_take",
    "optional double, pass": "double_pass",
    "optional redouble, pass": "double_pass",
    "double, take": "double_take",
    "redouble, take": "double_take",
    "double, pass": "double_pass",
    "redouble, pass": "double_pass",
    "double, beaver": "double_take",
    "redouble, beaver": "double_take",
    "never double": "no_double",
    "never redouble": "no_double",
    "no double": "no_double",
    "no redouble": "no_double",
}

_DRIVER = r"""
import json, sys
import gnubg
job = json.loads(sys.stdin.read())
for c in ["set player 0 human", "set player 1 human", "set threads 1", "new session"] + job["settings"]:
    gnubg.command(c)
for key, gid, jacoby, beavers in job["items"]:
    gnubg.command("set jacoby on" if jacoby else "set jacoby off")
    gnubg.command("set beavers %d" % beavers)
    gnubg.set_gnubg_id(gid)
    print("\n@@BEGIN", key, flush=True)
    gnubg.command("eval")
    print("\n@@END", key, flush=True)
"""

_NUMBER = r"([+-]?\d+\.\d+)"


def gnubg_id_for_cube(board: np.ndarray, cube: CubeState) -> str:
    """gnubg's ``PositionID:MatchID`` of a board and cube state, side on roll to roll (no dice yet).

    The side on roll is gnubg's player 1 (seat numbers do not matter to the
    analysis). Beavers are not part of a Match ID; :func:`gnubg_cube_analysis`
    sets them with a command.

    Raises:
        ValueError: on an invalid board or a state a Match ID cannot hold.
    """
    owner = {CENTRED: CENTERED, ON_ROLL: 1}.get(cube.owner, 0)
    state = MatchState(
        cube_value=cube.value,
        cube_owner=owner,
        player_on_roll=1,
        turn=1,
        crawford=cube.crawford,
        match_length=cube.match_length,
        score=(cube.score[1], cube.score[0]) if cube.match_length else (0, 0),
        jacoby=cube.jacoby,
    )
    return gnubg_id(board, state)


def _efficiency_settings(eff: CubeEfficiency) -> list[str]:
    return [
        f"set cubeefficiency os {eff.bearoff}",
        f"set cubeefficiency contact {eff.contact}",
        f"set cubeefficiency crashed {eff.contact}",
        f"set cubeefficiency race factor {eff.race_factor}",
        f"set cubeefficiency race coefficient {eff.race_coefficient}",
        f"set cubeefficiency race max {eff.race_max}",
        f"set cubeefficiency race min {eff.race_min}",
    ]


def _parse_analysis(block: str, ply: int) -> GnubgCubeAnalysis:
    """One ``eval`` output -> :class:`GnubgCubeAnalysis` (ValueError if the text is not what gnubg prints)."""
    label = "static" if ply == 0 else f"{ply} ply"
    row = re.search(rf"^\s*{label}:\s+" + r"\s+".join([_NUMBER] * 7) + r"\s*$", block, re.M)
    if row is None:
        raise ValueError(f"gnubg printed no {label!r} evaluation row")
    values = [float(v) for v in row.groups()]
    probs = np.array(values[:5], dtype=np.float64)
    cubeless, cubeful = values[5], values[6]
    nan = float("nan")
    proper = re.search(r"Proper cube action:\s*(.+)", block)
    if proper is None:  # the cube is not the side on roll's to turn
        return GnubgCubeAnalysis("no_double", "", cubeful, nan, nan, cubeful, probs, cubeless, ply)
    words = proper.group(1).strip()
    lower = words.lower()
    action = next(
        (v for k, v in sorted(_GNUBG_ACTIONS.items(), key=lambda kv: -len(kv[0])) if lower.startswith(k)),
        None,
    )
    if action is None:
        raise ValueError(f"unknown gnubg cube action {words!r}")
    columns = {}
    for name, pattern in (
        ("nd", r"No (?:re)?double"),
        ("dt", r"(?:Re)?[Dd]ouble, take"),
        ("dp", r"(?:Re)?[Dd]ouble, pass"),
    ):
        m = re.search(r"^\s*\d\.\s+" + pattern + r"\s+" + _NUMBER, block, re.M)
        if m is None:
            raise ValueError(f"gnubg's cube analysis has no {name!r} line")
        columns[name] = float(m.group(1))
    nd, dt, dp = columns["nd"], columns["dt"], columns["dp"]
    return GnubgCubeAnalysis(action, words, nd, dt, dp, max(nd, min(dt, dp)), probs, cubeless, ply)


def gnubg_cube_analysis(
    positions: list[tuple[np.ndarray, CubeState]],
    ply: int = 0,
    efficiency: CubeEfficiency = DEFAULT_EFFICIENCY,
    timeout: float | None = None,
) -> list[GnubgCubeAnalysis]:
    """gnubg's own cube analysis of positions at ``ply`` (its ``eval`` command, in a child process).

    gnubg is set to: cube decisions at ``ply`` plies, equities (not MWC)
    shown, the given cube efficiencies (default: gnubg's documented values,
    the defaults of :mod:`nard_ai.cube.decision`, so the two differ only by their
    probabilities and by gnubg's cubeful n-ply recursion), the Jacoby rule
    and beavers as in each :class:`CubeState`. gnubg uses its exact bear-off
    databases where they apply.

    Args:
        positions: ``(board, cube)`` pairs: ``(26,)`` int8 board of the side
            on roll (game not over) and its cube state.
        ply: 0, 1 or 2.
        efficiency: cube efficiency settings for gnubg.
        timeout: seconds for the whole run (default 60 + 2 per position).

    Returns:
        One :class:`GnubgCubeAnalysis` per position, in order.

    Raises:
        ValueError: if gnubg is not installed, on a bad ply or board.
        RuntimeError: if gnubg fails, times out, or prints something unexpected.
    """
    _import_gnubg(f"gnubg cube analysis at ply {ply}")
    ply = _check_ply(ply)
    items = []
    for k, (board, cube) in enumerate(positions):
        board = validate_board(np.asarray(board).reshape(-1))
        if game_result(board) != 0:
            raise ValueError(f"position {k}: the game is over, there is no cube decision")
        items.append([k, gnubg_id_for_cube(board, cube), bool(cube.jacoby), 1 if cube.beavers else 0])
    if not items:
        return []
    settings = [
        "set output mwc off",
        "set output digits 5",
        f"set evaluation cubedecision evaluation plies {ply}",
        "set evaluation cubedecision evaluation prune off",
        *_efficiency_settings(efficiency),
    ]
    job = json.dumps({"settings": settings, "items": items})
    limit = 60.0 + 2.0 * len(items) if timeout is None else timeout
    try:
        run = subprocess.run(
            [sys.executable, "-c", _DRIVER], input=job, capture_output=True, text=True, timeout=limit
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"gnubg's cube analysis did not finish in {limit:.0f} s") from None
    preamble = run.stdout.split("\n@@BEGIN ")[0]
    if "Unknown keyword" in preamble:
        bad = [line for line in preamble.splitlines() if "Unknown keyword" in line]
        raise RuntimeError(f"gnubg refused a setting: {bad[0]}")
    blocks = {}
    for chunk in run.stdout.split("\n@@BEGIN ")[1:]:
        key, _, rest = chunk.partition("\n")
        body, end, _ = rest.partition("\n@@END")
        if end:
            blocks[int(key)] = body
    if len(blocks) != len(items):
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        raise RuntimeError(
            f"gnubg analysed {len(blocks)} of {len(items)} positions (exit status {run.returncode}): "
            + " | ".join(tail)
        )
    out = []
    for k in range(len(items)):
        try:
            out.append(_parse_analysis(blocks[k], ply))
        except ValueError as exc:
            raise RuntimeError(f"position {k}: cannot read gnubg's analysis: {exc}") from None
    return out
