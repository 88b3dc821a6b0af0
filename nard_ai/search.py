"""Move choice over any :class:`~nard_ai.evaluator.Evaluator` (0-ply for now).

0-ply (gnubg's numbering; TD-Gammon called it "1-ply"): every legal play of
every position in the batch is generated at once
(:func:`nard_ai.movegen.legal_plays_batch`), all afterstates go to the
evaluator in **one** call, and each position takes the play with the highest
cubeless equity for the mover. 1-ply and 2-ply will wrap this.

Perspective: ``boards`` are in the side on roll's view; afterstates stay in
the mover's view; all probabilities and equities returned here are for the
**mover** (the side choosing the play).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .board import game_result, swap_sides_unchecked
from .evaluator import Evaluator
from .movegen import legal_plays_batch
from .network import cubeless_equity, invert_probs, result_probs
from .rules import Rules

STANDARD_RULES = Rules()  # the default rule settings (a frozen dataclass, shared)

__all__ = [
    "Selection",
    "RankedPlays",
    "Agent",
    "afterstate_probs",
    "select_plays",
    "choose_plays",
    "rank_plays",
]


@njit(cache=True)
def _segment_argmax(scores, owner, n):
    best = np.full(n, -1, dtype=np.int64)
    for i in range(scores.shape[0]):
        o = owner[i]
        if best[o] < 0 or scores[i] > scores[best[o]]:
            best[o] = i
    return best


def _mover_finished(afterstates: np.ndarray) -> np.ndarray:
    # the mover has borne off all 15 checkers (only the mover can finish on its own play)
    return ~(afterstates > 0).any(axis=1)


def afterstate_probs(evaluator: Evaluator, afterstates: np.ndarray) -> np.ndarray:
    """Probabilities of afterstates for the side that just moved.

    Swaps each afterstate so the opponent is on roll, evaluates in one call,
    and inverts (gnubg's ``InvertEvaluation``). Afterstates where the mover
    has borne off everything get the exact result instead (RULES.md §6).

    Args:
        evaluator: any evaluator.
        afterstates: ``(M, 26)`` int8, the mover's view.

    Returns:
        ``(M, 5)`` float32 gnubg-order probabilities for the mover.
    """
    probs = invert_probs(np.asarray(evaluator.evaluate(swap_sides_unchecked(afterstates)), dtype=np.float32))
    done = _mover_finished(afterstates)
    if done.any():
        probs[done] = result_probs(game_result(afterstates[done]))
    return probs


@dataclass(frozen=True)
class Selection:
    """The play chosen for each position of a batch (mover's view).

    Attributes:
        afterstates: ``(N, 26)`` int8 chosen afterstates (not swapped).
        probs: ``(N, 5)`` float32 their gnubg-order probabilities for the mover.
        equity: ``(N,)`` float32 their cubeless equity for the mover.
        finished: ``(N,)`` bool, the play bears off the mover's last checker.
        num_plays: ``(N,)`` int64 legal plays each position had.
    """

    afterstates: np.ndarray
    probs: np.ndarray
    equity: np.ndarray
    finished: np.ndarray
    num_plays: np.ndarray


def _scores(evaluator, boards, afterstates, owner):
    probs = afterstate_probs(evaluator, afterstates)
    equity = cubeless_equity(probs).astype(np.float32)
    score_plays = getattr(evaluator, "score_plays", None)
    scores = equity if score_plays is None else score_plays(boards, afterstates, owner)
    return probs, equity, scores


def select_plays(
    evaluator: Evaluator, boards: np.ndarray, dice: np.ndarray, rules: Rules = STANDARD_RULES
) -> Selection:
    """0-ply move choice for a batch, with the chosen plays' probabilities.

    Args:
        evaluator: any evaluator; one ``evaluate`` call for all afterstates.
        boards: ``(N, 26)`` int8, side on roll's view, games not over.
        dice: ``(N, 2)`` the rolls.
        rules: rule settings.

    Returns:
        A :class:`Selection`. Ties go to the first play in generator order.

    Raises:
        ValueError: on invalid boards or dice (from the move generator).
    """
    boards = np.asarray(boards, dtype=np.int8)
    afterstates, owner = legal_plays_batch(boards, dice, rules, sort=False)
    score_plays = getattr(evaluator, "score_plays", None)
    if score_plays is None:
        probs = afterstate_probs(evaluator, afterstates)
        equity = cubeless_equity(probs).astype(np.float32)
        best = _segment_argmax(equity.astype(np.float64), owner, len(boards))
        probs, equity = probs[best], equity[best]
    else:
        # the evaluator ranks plays itself: evaluate only the chosen afterstates
        best = _segment_argmax(
            np.asarray(score_plays(boards, afterstates, owner), dtype=np.float64), owner, len(boards)
        )
        probs = afterstate_probs(evaluator, afterstates[best])
        equity = cubeless_equity(probs).astype(np.float32)
    chosen = afterstates[best]
    return Selection(
        afterstates=chosen,
        probs=probs,
        equity=equity,
        finished=_mover_finished(chosen),
        num_plays=np.bincount(owner, minlength=len(boards)),
    )


def choose_plays(
    evaluator: Evaluator, boards: np.ndarray, dice: np.ndarray, rules: Rules = STANDARD_RULES
) -> np.ndarray:
    """0-ply move choice: ``(N, 26)`` boards and ``(N, 2)`` dice -> ``(N, 26)`` chosen afterstates (mover's view)."""
    return select_plays(evaluator, boards, dice, rules).afterstates


@dataclass(frozen=True)
class RankedPlays:
    """Every legal play of one position, best first (mover's view).

    Attributes:
        afterstates: ``(M, 26)`` int8.
        probs: ``(M, 5)`` float32 gnubg-order probabilities for the mover.
        equity: ``(M,)`` float32 cubeless equity for the mover.
    """

    afterstates: np.ndarray
    probs: np.ndarray
    equity: np.ndarray

    def __len__(self) -> int:
        return len(self.afterstates)


def rank_plays(evaluator: Evaluator, board: np.ndarray, dice, rules: Rules = STANDARD_RULES) -> RankedPlays:
    """All legal plays of one position ranked by the evaluator at 0-ply, best first.

    Args:
        evaluator: any evaluator.
        board: ``(26,)`` int8, side on roll's view.
        dice: two integers 1..6.
        rules: rule settings.

    Raises:
        ValueError: on an invalid board or dice.
    """
    board = np.asarray(board, dtype=np.int8).reshape(1, -1)
    afterstates, owner = legal_plays_batch(board, np.asarray(dice).reshape(1, 2), rules, sort=True)
    probs, equity, scores = _scores(evaluator, board, afterstates, owner)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return RankedPlays(afterstates=afterstates[order], probs=probs[order], equity=equity[order])


class Agent:
    """An evaluator plus a search depth: the thing that plays.

    Args:
        evaluator: any evaluator.
        ply: search depth in gnubg's numbering; only 0 exists so far.
        rules: rule settings for move generation.
        name: label for reports.
    """

    def __init__(
        self, evaluator: Evaluator, ply: int = 0, rules: Rules = STANDARD_RULES, name: str = ""
    ) -> None:
        if ply != 0:
            raise ValueError(f"only 0-ply search is implemented so far, got ply={ply}")
        self.evaluator = evaluator
        self.ply = ply
        self.rules = rules
        self.name = name or type(evaluator).__name__

    def choose_plays(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """``(N, 26)`` boards and ``(N, 2)`` dice -> ``(N, 26)`` chosen afterstates (mover's view)."""
        return choose_plays(self.evaluator, boards, dice, self.rules)

    def rank_plays(self, board: np.ndarray, dice) -> RankedPlays:
        """Every legal play of one position with probabilities and equity, best first."""
        return rank_plays(self.evaluator, board, dice, self.rules)

    def evaluate(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(N, 26)`` boards -> ``(N, 5)`` probabilities and ``(N,)`` cubeless equity for the side on roll."""
        probs = np.asarray(self.evaluator.evaluate(np.asarray(boards, dtype=np.int8)), dtype=np.float32)
        return probs, cubeless_equity(probs)
