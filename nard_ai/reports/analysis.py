"""Analysis of a played match: every checker play and cube action checked against the engine.

Input is a :class:`~nard_ai.formats.mat.Match` (read with
:func:`~nard_ai.formats.mat.read_mat`, so every record already carries its
position and :class:`~nard_ai.formats.match_id.MatchState`); output is a
:class:`MatchAnalysis`: one :class:`Decision` per checker play and cube
decision, with the equity it lost, its skill mark, and per-player totals
and error rates.

What is measured, and in which units
------------------------------------
All losses are **normalised equity per unit of the current cube** for the
player who decided (GNU Backgammon's "EMG", *equivalent to money game*), so
money and match decisions share one scale and one set of thresholds:

=====================  =====================================================
decision               loss
=====================  =====================================================
checker play, money    cubeless equity (points per game at cube 1) of the
                       best play minus that of the play made, both at the
                       agent's search depth (``rank_plays``), for the mover
checker play, match    the same with each play's *cubeless match-winning
                       chance at the score* (the six outcomes' MWC from the
                       Kazaross-XG2 table, :func:`nard_ai.cube.met.match_equity_after`,
                       weighted by the play's probabilities) converted to
                       normalised equity at the current cube:
                       ``2 (mwc - L) / (W - L) - 1``, ``W``/``L`` the MWC
                       after winning/losing the cube's value
missed double /        :attr:`nard_ai.cube.CubeDecision.errors` of
double / take / pass   :func:`nard_ai.cube.cube_decision` at the match
                       score and cube (money: cubeful equity per unit cube;
                       match: the cubeful MWC as normalised equity), from the
                       agent's probabilities at its ply
=====================  =====================================================

"Best" is the best of the plays valued deepest: a 1- or 2-ply search values
only the plays its move filter keeps at that depth and the rest at a
shallower one (:mod:`nard_ai.search.lookahead`), and gnubg's analysis, too, measures
against the top of that list.

In match play every loss is also given in MWC (``loss_mwc``; for checker
plays ``loss * (W - L) / 2``). Checker play is judged cubeless (no cube
ownership value), a simplification against gnubg, whose checker analysis is
cubeful; cube decisions use the cube model of :mod:`nard_ai.cube.decision`.

Which decisions count (gnubg's ``analysis.c``, ``AnalyzeMove`` and
``updateStatcontext``):

* every roll with a play is a checker decision; it is *unforced* when the
  roll has more than one legal play, and only unforced plays enter the
  checker error rate;
* before every roll except the opening roll, the roller had a cube decision
  when it could double (:attr:`nard_ai.cube.CubeState.can_double`); not
  doubling is then checked ("missed double"), and the decision is *close*
  when ``optimal - min(double/take, 1) < 0.16`` (gnubg's
  ``isCloseCubedecision``); every double, take and pass is a close decision;
* error rates are ``1000 x`` the summed loss over the counted decisions, in
  millipoints (mEMG) per decision: checker play per unforced move, cube per
  close cube decision, overall per (unforced move + close cube decision),
  as gnubg's ``formatgs.c`` computes them.

Skill marks (:class:`SkillThresholds`): a loss **above** a threshold is
*doubtful*, *bad* or *very bad* (gnubg's ``Skill()``: ``r < -threshold``).
The defaults are GNU Backgammon 1.07's: 0.03, 0.06 and 0.12 (``show
analysis`` of gnubg 1.07.001 with no settings file prints "-0.030 doubtful,
-0.060 bad, -0.120 very bad"); releases before 1.07 shipped 0.04, 0.08, 0.16
(``arSkillLevel`` in their ``gnubg.c``), kept as :data:`GNUBG_LEGACY_SKILL`.

Also here, shared by the command line: :func:`read_position` (a Position
ID, ``PositionID:MatchID`` or XGID to a board and match state) and
:func:`cube_state_of` (a :class:`MatchState` to the
:class:`~nard_ai.cube.CubeState` of its player on roll).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nard_ai.core.board import game_result
from nard_ai.core.outcomes import cubeless_equity
from nard_ai.cube import CubeDecision, CubeState, cube_decision
from nard_ai.cube.met import match_equity_after
from nard_ai.cube.state import cube_state_from_match as cube_state_of
from nard_ai.formats.mat import ActionKind, MatAction, Match
from nard_ai.formats.match_id import gnubg_id
from nard_ai.formats.notation import play_notation
from nard_ai.formats.position import parse_position as read_position

__all__ = [
    "SkillThresholds",
    "GNUBG_SKILL",
    "GNUBG_LEGACY_SKILL",
    "CLOSE_CUBE_THRESHOLD",
    "read_position",
    "cube_state_of",
    "checker_mwc",
    "mwc_to_emg",
    "checker_values",
    "ScoredPlays",
    "score_plays",
    "Decision",
    "PlayerStats",
    "MatchAnalysis",
    "cube_action_text",
    "analyze_match",
    "count_records",
    "format_analysis",
]

CLOSE_CUBE_THRESHOLD = 0.16
"""gnubg's ``isCloseCubedecision``: a cube decision is close when ``optimal - min(DT, 1)`` is below this."""

CHECKER = "checker"
NO_DOUBLE = "no_double"
DOUBLE = "double"
TAKE = "take"
PASS = "pass"
KINDS = (CHECKER, NO_DOUBLE, DOUBLE, TAKE, PASS)
_MARKS = {"": "", "doubtful": "?!", "bad": "?", "very bad": "??"}  # gnubg's annotation marks


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class SkillThresholds:
    """Equity losses that mark a decision (gnubg's ``set analysis threshold``).

    Attributes:
        doubtful, bad, very_bad: normalised equity per unit cube (EMG); a
            loss strictly above one gets its mark. Must satisfy
            ``0 <= doubtful <= bad <= very_bad``.

    Raises:
        ValueError: on negative or unordered thresholds.
    """

    doubtful: float = 0.03
    bad: float = 0.06
    very_bad: float = 0.12

    def __post_init__(self) -> None:
        values = (self.doubtful, self.bad, self.very_bad)
        if not all(isinstance(v, int | float) and np.isfinite(v) and v >= 0 for v in values):
            raise ValueError(f"skill thresholds must be finite numbers >= 0, got {values}")
        if not self.doubtful <= self.bad <= self.very_bad:
            raise ValueError(f"skill thresholds must rise: doubtful <= bad <= very bad, got {values}")

    def classify(self, loss: float) -> str:
        """``"very bad"``, ``"bad"``, ``"doubtful"`` or ``""`` for an equity loss (>= 0, EMG)."""
        if loss > self.very_bad:
            return "very bad"
        if loss > self.bad:
            return "bad"
        if loss > self.doubtful:
            return "doubtful"
        return ""


GNUBG_SKILL = SkillThresholds()
"""GNU Backgammon 1.07's defaults: 0.03 / 0.06 / 0.12."""

GNUBG_LEGACY_SKILL = SkillThresholds(0.04, 0.08, 0.16)
"""GNU Backgammon's defaults before 1.07 (``arSkillLevel`` in ``gnubg.c``): 0.04 / 0.08 / 0.16."""


# --------------------------------------------------------------------------- positions


def _match_units(cube: CubeState) -> tuple[float, float]:
    """MWC of the side on roll after winning / losing the cube's value (the ends of the EMG scale)."""
    win = match_equity_after(cube.away, cube.opp_away, cube.value, cube.crawford)
    lose = match_equity_after(cube.away, cube.opp_away, -cube.value, cube.crawford)
    return win, lose


def _check_probs(probs: np.ndarray) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 5:
        raise ValueError(f"probabilities must have shape (M, 5), got {p.shape}")
    return p


def checker_mwc(probs: np.ndarray, cube: CubeState) -> np.ndarray:
    """The cubeless match-winning chance at the score of afterstates, for the side that played.

    Args:
        probs: ``(M, 5)`` gnubg-order probabilities of ``M`` afterstates for
            the side that just moved.
        cube: that side's cube and match state (match play).

    Returns:
        ``(M,)`` float64 MWC in ``[0, 1]``: the six exclusive outcomes
        (single, gammon, backgammon for either side; RULES.md §6) each
        weighted by its probability and valued by the MWC after the game
        ends with that many points times the cube value (Kazaross-XG2,
        :func:`nard_ai.cube.met.match_equity_after`).

    Raises:
        ValueError: on probabilities not shaped ``(M, 5)`` or a money-play ``cube``.
    """
    p = _check_probs(probs)
    if cube.is_money:
        raise ValueError("checker_mwc needs a match-play cube state (match_length > 0)")
    w, wg, wb, lg, lb = p.T
    c = cube.value

    def mwc(points: int) -> float:
        return match_equity_after(cube.away, cube.opp_away, points, cube.crawford)

    return (
        (w - wg) * mwc(c)
        + (wg - wb) * mwc(2 * c)
        + wb * mwc(3 * c)
        + (1.0 - w - lg) * mwc(-c)
        + (lg - lb) * mwc(-2 * c)
        + lb * mwc(-3 * c)
    )


def mwc_to_emg(mwc: np.ndarray, cube: CubeState) -> np.ndarray:
    """MWC at the score as normalised equity per unit cube (EMG): ``2 (mwc - L) / (W - L) - 1``.

    ``W`` and ``L`` are the MWC of the side on roll after winning / losing
    the cube's value (so winning the cube is +1, losing it -1).
    """
    win, lose = _match_units(cube)
    return 2.0 * (np.asarray(mwc, dtype=np.float64) - lose) / (win - lose) - 1.0


def checker_values(probs: np.ndarray, cube: CubeState | None = None) -> np.ndarray:
    """The value of afterstates to the side that played, in normalised equity per unit cube.

    Args:
        probs: ``(M, 5)`` gnubg-order probabilities of ``M`` afterstates for
            the side that just moved.
        cube: that side's cube and match state (``None``: money play).

    Returns:
        ``(M,)`` float64. Money: the cubeless equity (points per game at
        cube 1; the cube value and the Jacoby rule do not enter). Match: the
        cubeless MWC at the score (:func:`checker_mwc`) converted to
        normalised equity ``2 (mwc - L) / (W - L) - 1`` (:func:`mwc_to_emg`).

    Raises:
        ValueError: on probabilities not shaped ``(M, 5)``.
    """
    p = _check_probs(probs)
    if cube is None or cube.is_money:
        return cubeless_equity(p)
    return mwc_to_emg(checker_mwc(p, cube), cube)


@dataclass(frozen=True)
class ScoredPlays:
    """Every legal play of one position, ranked for money or for the match score (best first).

    Built by :func:`score_plays` from a :class:`nard_ai.search.lookahead.RankedPlays`;
    everything is the mover's (the side that plays).

    Attributes:
        afterstates: ``(M, 26)`` int8.
        probs: ``(M, 5)`` gnubg-order probabilities.
        equity: ``(M,)`` cubeless money equity, points per game at cube 1.
        plies: ``(M,)`` int64, the depth each play was valued at.
        mwc: ``(M,)`` float64 cubeless MWC at the score (match play), else ``None``.
        emg: ``(M,)`` float64 the ranking value as normalised equity per
            unit cube: ``equity`` in money play, :func:`mwc_to_emg` of ``mwc``
            in match play.
        cube: the cube and match state the plays were ranked for (``None``: money).

    Order: plays valued deeper first (gnubg's hint order), then by MWC in
    match play, by cubeless equity in money play.
    """

    afterstates: np.ndarray
    probs: np.ndarray
    equity: np.ndarray
    plies: np.ndarray
    mwc: np.ndarray | None
    emg: np.ndarray
    cube: CubeState | None = None

    def __len__(self) -> int:
        return len(self.afterstates)

    @property
    def by_mwc(self) -> bool:
        """Whether the plays are ranked by MWC at the match score (else by cubeless money equity)."""
        return self.mwc is not None

    @property
    def ranked_by(self) -> str:
        """What the order follows, in words."""
        return "cubeless MWC at the score" if self.by_mwc else "cubeless equity"

    @property
    def diff(self) -> np.ndarray:
        """``(M,)`` each play's value minus the best play's (``<= 0`` for plays valued as deep as it;
        gnubg's sign): MWC in match play, cubeless equity in money play."""
        values = self.mwc if self.mwc is not None else np.asarray(self.equity, dtype=np.float64)
        return values - values[0] if len(values) else values


def score_plays(ranked: Any, cube: CubeState | None = None) -> ScoredPlays:
    """Rank the plays of a search for money or for the match score.

    Args:
        ranked: a :class:`nard_ai.search.lookahead.RankedPlays` (``afterstates``,
            ``probs`` ``(M, 5)``, ``equity`` and optional ``plies``, best first
            by cubeless equity).
        cube: the mover's cube and match state; ``None`` or money play keeps
            the search's order (cubeless equity). In match play the plays are
            ordered by their cubeless MWC at the score (:func:`checker_mwc`),
            so a gammon counts only as much as it is worth in the match (at
            double match point not at all).

    Returns:
        A :class:`ScoredPlays`, best first.

    Raises:
        ValueError: on probabilities not shaped ``(M, 5)``.
    """
    probs = np.asarray(ranked.probs)
    plies = getattr(ranked, "plies", None)
    plies = np.zeros(len(probs), dtype=np.int64) if plies is None else np.asarray(plies, dtype=np.int64)
    equity = np.asarray(ranked.equity, dtype=np.float64)
    if cube is None or cube.is_money:
        return ScoredPlays(
            afterstates=np.asarray(ranked.afterstates),
            probs=probs,
            equity=equity,
            plies=plies,
            mwc=None,
            emg=equity,
            cube=cube,
        )
    mwc = checker_mwc(probs, cube)
    order = np.lexsort((-mwc, -plies))  # deepest first, then the higher MWC; stable for ties
    return ScoredPlays(
        afterstates=np.asarray(ranked.afterstates)[order],
        probs=probs[order],
        equity=equity[order],
        plies=plies[order],
        mwc=mwc[order],
        emg=mwc_to_emg(mwc[order], cube),
        cube=cube,
    )


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Decision:
    """One decision of the match and what it cost the player who made it.

    Attributes:
        game: 1-based game number (the record's ``Game N``).
        turn: 1-based number of the roll in the game the decision belongs
            to (a cube decision gets the number of the roll that follows it).
        player: the seat that decided: 0 = the ``.mat`` file's left column,
            1 = its right column.
        kind: ``"checker"``, ``"no_double"`` (the roller did not double),
            ``"double"``, ``"take"`` or ``"pass"``.
        dice: the roll of a checker decision, ``None`` for cube decisions.
        played: the play in gnubg's notation, or the cube action made.
        best: the best play at the agent's ply, or the right cube action.
        loss: normalised equity per unit cube (EMG) the decision gave up
            (>= 0; see the module docstring for the measure).
        loss_mwc: the same in match-winning chances (match play), else ``None``.
        skill: ``""``, ``"doubtful"``, ``"bad"`` or ``"very bad"``.
        plays: number of legal plays of a checker decision (0 for cube).
        counted: whether the decision enters the error rate (an unforced
            checker play, a close cube decision).
        position: ``PositionID:MatchID`` of the decision (gnubg's ID, the
            board seen from the roller or doubler), to look at it again
            with ``nard hint`` or ``nard cube``.
        cube: the :class:`~nard_ai.cube.CubeDecision` behind a cube decision.
        move: the ``N)`` move number of the record's line in the ``.mat``
            (:attr:`~nard_ai.formats.mat.MatAction.move`; a missed double
            gets its roll's); 0 when unknown. JSON ``"mat_move"`` (``null``
            when unknown).
        line: the 1-based line of the ``.mat`` file holding the record
            (the roll's for a missed double); 0 when unknown. JSON
            ``"line"`` (``null`` when unknown).
    """

    game: int
    turn: int
    player: int
    kind: str
    dice: tuple[int, int] | None
    played: str
    best: str
    loss: float
    loss_mwc: float | None
    skill: str
    plays: int
    counted: bool
    position: str
    cube: CubeDecision | None = field(default=None, repr=False, compare=False)
    move: int = 0
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (no cube details beyond the three equities): the attributes by name,
        ``dice`` as a list, ``move`` as ``"mat_move"``, 0 for ``mat_move`` / ``line`` as ``null``."""
        out = {
            "game": self.game,
            "turn": self.turn,
            "player": self.player,
            "kind": self.kind,
            "dice": list(self.dice) if self.dice else None,
            "played": self.played,
            "best": self.best,
            "loss": round(self.loss, 6),
            "loss_mwc": None if self.loss_mwc is None else round(self.loss_mwc, 6),
            "skill": self.skill,
            "plays": self.plays,
            "counted": self.counted,
            "position": self.position,
            "mat_move": self.move or None,
            "line": self.line or None,
        }
        if self.cube is not None:
            out["equities"] = {k: _finite(v) for k, v in self.cube.equities.items()}
            if not self.cube.cube.is_money:
                c = self.cube
                out["mwc"] = {
                    "no_double": _finite(c.no_double_mwc),
                    "double_take": _finite(c.double_take_mwc),
                    "double_pass": _finite(c.double_pass_mwc),
                }
        return out


def _finite(value: float | None) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 6)


@dataclass(frozen=True)
class PlayerStats:
    """One player's totals (losses in EMG, per unit cube; MWC totals in match play).

    Attributes:
        name: the player's name in the record.
        moves: checker decisions (rolls played, forced ones included).
        unforced: checker decisions with more than one legal play.
        checker_loss: summed loss of the checker decisions.
        cube_decisions: cube decisions met (doubles, takes, passes and
            possible doubles not made).
        close_cube: the close ones among them (counted in the cube rate).
        cube_loss: summed loss of the cube decisions.
        marks: how many decisions got each mark (``doubtful``, ``bad``,
            ``very bad``), checker and cube together.
        loss_mwc: checker plus cube loss in MWC (match play), else ``None``.
    """

    name: str
    moves: int
    unforced: int
    checker_loss: float
    cube_decisions: int
    close_cube: int
    cube_loss: float
    marks: dict[str, int]
    loss_mwc: float | None

    @property
    def checker_rate(self) -> float:
        """Checker-play error rate: mEMG per unforced move (NaN without one)."""
        return 1000.0 * self.checker_loss / self.unforced if self.unforced else float("nan")

    @property
    def cube_rate(self) -> float:
        """Cube error rate: mEMG per close cube decision (NaN without one)."""
        return 1000.0 * self.cube_loss / self.close_cube if self.close_cube else float("nan")

    @property
    def error_rate(self) -> float:
        """Overall error rate: mEMG per decision (unforced moves + close cube decisions)."""
        n = self.unforced + self.close_cube
        return 1000.0 * (self.checker_loss + self.cube_loss) / n if n else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "moves": self.moves,
            "unforced": self.unforced,
            "checker_loss": round(self.checker_loss, 6),
            "cube_decisions": self.cube_decisions,
            "close_cube": self.close_cube,
            "cube_loss": round(self.cube_loss, 6),
            "marks": dict(self.marks),
            "loss_mwc": None if self.loss_mwc is None else round(self.loss_mwc, 6),
            "checker_rate": _finite(self.checker_rate),
            "cube_rate": _finite(self.cube_rate),
            "error_rate": _finite(self.error_rate),
        }


@dataclass(frozen=True)
class MatchAnalysis:
    """The analysis of a match.

    Attributes:
        length: match length (0 = money play).
        players: the two names, seat 0 then seat 1.
        games: number of games.
        ply: the agent's search depth (gnubg numbering), if it has one.
        agent: the agent's name.
        thresholds: the skill thresholds used.
        decisions: every decision in match order.
        stats: per-player totals, seat 0 then seat 1.
    """

    length: int
    players: tuple[str, str]
    games: int
    ply: int | None
    agent: str
    thresholds: SkillThresholds
    decisions: tuple[Decision, ...]
    stats: tuple[PlayerStats, PlayerStats]

    def to_dict(self, errors_only: bool = False) -> dict[str, Any]:
        """A JSON-ready dict: settings, units, the decisions, per-player totals.

        Keys: ``match_length``, ``players`` (left column first), ``games``, ``ply``, ``agent``,
        ``thresholds``, ``units``, ``errors_only``, ``decisions`` (:meth:`Decision.to_dict`; its
        ``game``, ``mat_move``, ``player`` and ``line`` say where the record is), ``stats``
        (:meth:`PlayerStats.to_dict`). One mark has two spellings, each kept for the readers that
        use it: ``"very_bad"``, a key of ``thresholds`` (the :class:`SkillThresholds` field), and
        ``"very bad"`` (gnubg's words), a value of ``decisions[].skill`` and a key of ``stats[].marks``.

        Args:
            errors_only: list only the decisions with a skill mark (as
                :func:`format_analysis` does); the totals stay complete.
        """
        decisions = [d for d in self.decisions if d.skill or not errors_only]
        return {
            "match_length": self.length,
            "players": list(self.players),
            "games": self.games,
            "ply": self.ply,
            "agent": self.agent,
            "thresholds": {
                "doubtful": self.thresholds.doubtful,
                "bad": self.thresholds.bad,
                "very_bad": self.thresholds.very_bad,
            },
            "units": {
                "loss": "normalised equity per unit cube (EMG), the deciding player's",
                "checker": "money: cubeless equity; match: cubeless MWC at the score as EMG",
                "cube": "nard_ai.cube.cube_decision at the score and cube (cubeful, Janowski / Kazaross-XG2)",
                "rates": "millipoints (mEMG) per counted decision",
            },
            "errors_only": errors_only,
            "decisions": [d.to_dict() for d in decisions],
            "stats": [s.to_dict() for s in self.stats],
        }


# --------------------------------------------------------------------------- the analysis

_CUBE_ACTION_TEXT = {
    "no_double": "No double, take",
    "double_take": "Double, take",
    "double_pass": "Double, pass",
    "too_good_take": "Too good to double, take",
    "too_good_pass": "Too good to double, pass",
}


def cube_action_text(decision: CubeDecision) -> str:
    """gnubg's words for the right cube action ("Double, take", "No double, beaver", ...).

    "Redouble" instead of "Double" when the side on roll owns the cube, as gnubg says.
    """
    if not decision.cube_available:
        return "No double (the cube is not available)"
    if decision.beaver and decision.action in ("no_double", "double_take"):
        words = "No double, beaver" if decision.action == "no_double" else "Double, beaver"
    else:
        words = _CUBE_ACTION_TEXT[decision.action]
    if decision.cube is not None and decision.cube.owner == "on_roll":
        words = words.replace("Double", "Redouble").replace(" double", " redouble")
    return words


def _skill_fields(loss: float, thresholds: SkillThresholds) -> tuple[float, str]:
    loss = max(0.0, float(loss))  # rounding can give -1e-9 for the best choice
    return loss, thresholds.classify(loss)


def _checker_decision(
    agent, action: MatAction, game: int, turn: int, thresholds: SkillThresholds
) -> Decision:
    board, after, dice = action.board, action.afterstate, action.dice
    cube = cube_state_of(action.state)
    ranked = agent.rank_plays(board, dice)
    played_at = np.flatnonzero((ranked.afterstates == after).all(axis=1))
    if len(played_at) == 0:
        raise ValueError(
            f"game {game}: the agent's ranking of {dice[0]}{dice[1]} lacks the play made ({action.play!r})"
        )
    values = checker_values(np.asarray(ranked.probs, dtype=np.float64), cube)
    # The best play is the best of those valued deepest (a 1- or 2-ply search values the plays its
    # move filter drops at a shallower ply only; gnubg's analysis compares against its top play the same way).
    plies = getattr(ranked, "plies", None)
    depth = np.zeros(len(values), dtype=np.int64) if plies is None else np.asarray(plies)
    deepest = np.flatnonzero(depth == depth.max())
    best_index = int(deepest[np.argmax(values[deepest])])
    played_index = int(played_at[0])
    loss, skill = _skill_fields(values[best_index] - values[played_index], thresholds)
    n = len(ranked)
    loss_mwc = None
    if not cube.is_money:
        win, lose = _match_units(cube)
        loss_mwc = loss * (win - lose) / 2.0
    return Decision(
        game=game,
        turn=turn,
        player=action.player,
        kind=CHECKER,
        dice=(int(dice[0]), int(dice[1])),
        played=action.play or "-",
        best=play_notation(board, ranked.afterstates[best_index], dice) or "-",
        loss=loss,
        loss_mwc=loss_mwc,
        skill=skill,
        plays=n,
        counted=n > 1,
        position=gnubg_id(board, action.state),
        move=action.move,
        line=action.line,
    )


def _cube_decision(
    decision: CubeDecision, kind: str, action: MatAction, game: int, turn: int, thresholds: SkillThresholds
) -> Decision:
    """The ``kind`` cube decision of ``action`` (the roll of a missed double, the double, the take or the
    pass: its board, state, player, move and line)."""
    errors = decision.errors
    key = {NO_DOUBLE: "no_double", DOUBLE: "double", TAKE: "take", PASS: "pass"}[kind]
    loss, skill = _skill_fields(errors[key], thresholds)
    loss_mwc = None
    if decision.errors_mwc is not None:
        loss_mwc = max(0.0, float(decision.errors_mwc[key]))
    if kind == NO_DOUBLE:
        # gnubg isCloseCubedecision: optimal - min(double/take, 1) below 0.16
        double_take = 2.0 * decision.double_take if decision.beaver else decision.double_take
        counted = decision.optimal - min(double_take, 1.0) < CLOSE_CUBE_THRESHOLD
    else:
        counted = True
    played = {NO_DOUBLE: "No double", DOUBLE: "Double", TAKE: "Take", PASS: "Pass"}[kind]
    return Decision(
        game=game,
        turn=turn,
        player=action.player,
        kind=kind,
        dice=None,
        played=played,
        best=cube_action_text(decision),
        loss=loss,
        loss_mwc=loss_mwc,
        skill=skill,
        plays=0,
        counted=counted,
        position=gnubg_id(action.board, action.state),
        cube=decision,
        move=action.move,
        line=action.line,
    )


def count_records(match: Match) -> int:
    """The number of records :func:`analyze_match` reports progress over (rolls, doubles, takes, passes)."""
    kinds = (ActionKind.ROLL, ActionKind.DOUBLE, ActionKind.TAKE, ActionKind.DROP)
    return sum(1 for g in match.games for a in g.actions if a.kind in kinds)


def analyze_match(
    match: Match,
    agent,
    thresholds: SkillThresholds = GNUBG_SKILL,
    progress: Callable[[int], None] | None = None,
) -> MatchAnalysis:
    """Check every checker play and cube decision of a match against an agent.

    Args:
        match: a match as :func:`~nard_ai.formats.mat.read_mat` returns it
            (every record with its ``board`` and ``state``).
        agent: anything with ``rank_plays(board, dice)`` (every legal play
            with ``(M, 5)`` probabilities for the mover, best first) and
            ``evaluate(boards) -> (probs, equity)`` for the side on roll, such
            as :class:`nard_ai.search.lookahead.Agent` at any ply; its ``ply`` and
            ``name`` are reported.
        thresholds: the skill thresholds.
        progress: called with the number of records done so far (for a
            progress bar); :func:`count_records` gives the total.

    Returns:
        A :class:`MatchAnalysis` (units in the module docstring).

    Raises:
        ValueError: if a record lacks its position (a match not built by
            ``read_mat``), or the match cannot be expressed as a cube state
            (longer than 25 points).
    """
    decisions: list[Decision] = []
    done = 0
    for g, game in enumerate(match.games, start=1):
        turn = 0
        pending: CubeDecision | None = None  # the double awaiting its take or pass
        for index, action in enumerate(game.actions):
            if action.kind == ActionKind.WIN:
                continue
            if action.board is None or action.state is None:
                raise ValueError(
                    f"game {g}: record {index + 1} has no position; read the match with read_mat"
                )
            if action.kind == ActionKind.ROLL:
                turn += 1
                cube = cube_state_of(action.state)
                if index > 0 and cube.can_double and game_result(action.board) == 0:
                    # The roller could have doubled first and did not (gnubg: not before the opening roll).
                    d = cube_decision(action.board, cube, agent=agent)
                    if d.cube_available:
                        decisions.append(_cube_decision(d, NO_DOUBLE, action, g, turn, thresholds))
                if action.afterstate is not None:  # None: rolled, then resigned without playing
                    decisions.append(_checker_decision(agent, action, g, turn, thresholds))
            elif action.kind == ActionKind.DOUBLE:
                cube = cube_state_of(action.state)
                pending = cube_decision(action.board, cube, agent=agent)
                if pending.cube_available:
                    decisions.append(_cube_decision(pending, DOUBLE, action, g, turn + 1, thresholds))
                else:
                    pending = None  # a double the model cannot value (a dead cube for the doubler)
            else:  # TAKE or DROP: the answer to `pending`, from the doubler's board
                if pending is not None:
                    kind = TAKE if action.kind == ActionKind.TAKE else PASS
                    decisions.append(_cube_decision(pending, kind, action, g, turn + 1, thresholds))
                pending = None
            done += 1
            if progress is not None:
                progress(done)
    stats = tuple(
        _player_stats(match.players[p], [d for d in decisions if d.player == p], match.length) for p in (0, 1)
    )
    return MatchAnalysis(
        length=match.length,
        players=tuple(match.players),
        games=len(match.games),
        ply=getattr(agent, "ply", None),
        agent=getattr(agent, "name", type(agent).__name__),
        thresholds=thresholds,
        decisions=tuple(decisions),
        stats=stats,  # type: ignore[arg-type]
    )


def _player_stats(name: str, decisions: list[Decision], length: int) -> PlayerStats:
    checker = [d for d in decisions if d.kind == CHECKER]
    cube = [d for d in decisions if d.kind != CHECKER]
    marks = {m: sum(1 for d in decisions if d.skill == m) for m in ("doubtful", "bad", "very bad")}
    return PlayerStats(
        name=name,
        moves=len(checker),
        unforced=sum(d.counted for d in checker),
        checker_loss=float(sum(d.loss for d in checker if d.counted)),
        cube_decisions=len(cube),
        close_cube=sum(d.counted for d in cube),
        cube_loss=float(sum(d.loss for d in cube)),
        marks=marks,
        loss_mwc=float(sum(d.loss_mwc or 0.0 for d in decisions)) if length else None,
    )


# --------------------------------------------------------------------------- text report


def format_analysis(analysis: MatchAnalysis, errors_only: bool = False) -> str:
    """The analysis as text: one line per decision, then the per-player summary.

    A decision's line starts with the record's own numbering, as gnubg's: the ``N)`` move number of
    its ``.mat`` line, then ``line L``, the file's 1-based line holding it (a missed double: its
    roll's; ``-`` for either when unknown), then the player (the header says whose is which column).

    Args:
        analysis: the :class:`MatchAnalysis`.
        errors_only: list only decisions with a skill mark (the summary is
            always complete).
    """
    a = analysis
    kind = f"{a.length}-point match" if a.length else "money session"
    units = (
        "Loss in normalised equity per unit cube (EMG) for the player deciding; checker plays "
        + ("by cubeless equity; " if not a.length else "by cubeless match equity at the score; ")
        + "cube actions by nard_ai.cube.decision at the score. Shown as gnubg does, as the difference from the "
        + "best (negative); the JSON's loss is the same amount as a positive number."
    )
    marks = (
        f"Marks: ?! doubtful > {a.thresholds.doubtful:.3f}, ? bad > {a.thresholds.bad:.3f}, "
        f"?? very bad > {a.thresholds.very_bad:.3f}."
    )
    lines = [
        f"{kind}: {a.players[0]} (left column) vs {a.players[1]} (right column), {a.games} "
        f"game{'s' if a.games != 1 else ''}, analysed at {a.ply}-ply ({a.agent})",
        *textwrap.wrap(units, 100),
        marks,
        "Each decision: its move N) and line in the .mat record (a missed double: its roll's), the player.",
    ]
    game = 0
    name_width = max(12, *(len(p) for p in a.players))
    line_width = max((len(str(d.line)) for d in a.decisions), default=1)
    for d in a.decisions:
        if errors_only and not d.skill:
            continue
        if d.kind == NO_DOUBLE and not d.counted and not d.skill:
            continue  # a clear no double: not worth a line (it is in the JSON and the counts)
        if d.game != game:
            game = d.game
            lines.append("")
            lines.append(f"Game {game}")
        who = a.players[d.player]
        roll = f"{d.dice[0]}{d.dice[1]}" if d.dice else "  "
        best = "" if d.loss <= 0.0 else f"   best: {d.best}"
        if d.kind != CHECKER:
            best = f"   right: {d.best}" if d.loss > 0.0 else ""
        forced = "  (forced)" if d.kind == CHECKER and d.plays == 1 else ""
        # gnubg's sign: the difference from the best, negative; a loss below 0.0005 prints as 0.000, not -0.000
        loss = f"{-d.loss:+.3f}" if round(d.loss, 3) > 0.0 else " 0.000"
        move = f"{d.move})" if d.move else "-"  # the .mat's own numbering, then the file's line
        where = f"{move:>4} line {d.line or '-':<{line_width}}"
        lines.append(
            f"{where} {who:<{name_width}} {roll} {d.played:<24} {loss} {_MARKS[d.skill]:<2}{best}{forced}".rstrip()
        )
    lines.append("")
    # names are never cut: two players sharing a long prefix must stay told apart
    col = max(16, *(len(p) for p in a.players))
    lines.append(f"{'':<34}{a.players[0]:>{col}}  {a.players[1]:>{col}}")

    def row(label: str, values: list[str]) -> None:
        lines.append(f"{label:<34}{values[0]:>{col}}  {values[1]:>{col}}")

    s = a.stats
    row("checker decisions (unforced)", [f"{p.moves} ({p.unforced})" for p in s])
    row("checker loss, EMG", [f"{p.checker_loss:.3f}" for p in s])
    row("checker error rate, mEMG/move", [_rate(p.checker_rate) for p in s])
    row("cube decisions (close)", [f"{p.cube_decisions} ({p.close_cube})" for p in s])
    row("cube loss, EMG", [f"{p.cube_loss:.3f}" for p in s])
    row("cube error rate, mEMG/decision", [_rate(p.cube_rate) for p in s])
    row("overall error rate, mEMG/decision", [_rate(p.error_rate) for p in s])
    row(
        "doubtful / bad / very bad",
        [f"{p.marks['doubtful']} / {p.marks['bad']} / {p.marks['very bad']}" for p in s],
    )
    if a.length:
        row("total loss, MWC", [f"{100 * (p.loss_mwc or 0.0):.2f}%" for p in s])
    return "\n".join(lines)


def _rate(value: float) -> str:
    return "-" if not np.isfinite(value) else f"{value:.1f}"
