"""Outcome probabilities of a game and their algebra, torch-free: exclusive <-> gnubg's cumulative, inverting, equity.

Whose perspective
-----------------
Every probability here is for **the side on roll in the encoded board**
(the network's input, :mod:`nard_ai.model.encoding`), unless a function's name says it inverts.

Internally the network predicts 6 *exclusive* outcomes with a softmax
(the wildbg choice), in the order of :data:`OUTCOMES`::

    win single, win gammon, win backgammon, lose single, lose gammon, lose backgammon
    points:  +1,  +2,  +3,  -1,  -2,  -3

so the probabilities are always consistent (non-negative, summing to 1, a
backgammon is a gammon is a win). At the edges the project uses gnubg's 5
*cumulative* numbers, in gnubg's order (``WIN, WINGAMMON, WINBACKGAMMON,
LOSEGAMMON, LOSEBACKGAMMON``)::

    win = ws + wg + wb,  win_gammon = wg + wb,  win_backgammon = wb,
    lose_gammon = lg + lb,  lose_backgammon = lb

Cubeless money equity, for the same side (gnubg ``eval.c``, ``Utility()``)::

    equity = 2 win - 1 + win_gammon + win_backgammon - lose_gammon - lose_backgammon

which equals the expected points ``ws + 2 wg + 3 wb - ls - 2 lg - 3 lb``.

Every function takes numpy arrays (:func:`cumulative_parts` and :func:`cubeless_equity` torch
tensors too, for the network's own use) and needs nothing above :mod:`nard_ai.core`, so the
cube, search and reports layers do this arithmetic without loading torch.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "OUTCOMES",
    "OUTCOME_POINTS",
    "GNUBG_OUTPUTS",
    "cumulative_parts",
    "exclusive_to_gnubg",
    "gnubg_to_exclusive",
    "invert_probs",
    "invert_exclusive",
    "cubeless_equity",
    "result_probs",
]

#: The 6 exclusive outcomes, in the network's output order.
OUTCOMES = ("win_single", "win_gammon", "win_backgammon", "lose_single", "lose_gammon", "lose_backgammon")
#: ``(6,)`` float32: the points of each outcome for the side the probabilities belong to.
OUTCOME_POINTS = np.array([1, 2, 3, -1, -2, -3], dtype=np.float32)
#: gnubg's 5 cumulative outputs, in its order (``WIN, WINGAMMON, WINBACKGAMMON, LOSEGAMMON, LOSEBACKGAMMON``).
GNUBG_OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")

_INVERT6 = [3, 4, 5, 0, 1, 2]


def cumulative_parts(p6) -> list:
    """gnubg's 5 cumulative probabilities as 5 expressions of the 6 exclusive ones (same side).

    The one formula of :func:`exclusive_to_gnubg` (and of the torch network's own,
    :func:`nard_ai.model.network.exclusive_to_gnubg`, which stacks them as a tensor): element-wise
    sums that work on numpy arrays and torch tensors alike.

    Args:
        p6: ``(..., 6)`` array or tensor in :data:`OUTCOMES` order.

    Returns:
        ``[win, win_gammon, win_backgammon, lose_gammon, lose_backgammon]``, each ``(...)``.
    """
    ws, wg, wb, _ls, lg, lb = (p6[..., i] for i in range(6))
    return [ws + wg + wb, wg + wb, wb, lg + lb, lb]


def exclusive_to_gnubg(p6: np.ndarray) -> np.ndarray:
    """6 exclusive outcome probabilities -> gnubg's 5 cumulative ones (same side).

    Args:
        p6: ``(..., 6)`` numpy array in :data:`OUTCOMES` order.

    Returns:
        ``(..., 5)`` array: win, win-gammon, win-backgammon, lose-gammon, lose-backgammon.
    """
    return np.stack(cumulative_parts(p6), axis=-1)


def gnubg_to_exclusive(p5: np.ndarray) -> np.ndarray:
    """gnubg's 5 cumulative probabilities -> the 6 exclusive outcomes (same side).

    Small negative values from rounding are clipped to 0.

    Args:
        p5: ``(..., 5)`` array in gnubg order.

    Returns:
        ``(..., 6)`` array in :data:`OUTCOMES` order.
    """
    p5 = np.asarray(p5)
    w, wg, wb, lg, lb = (p5[..., i] for i in range(5))
    out = np.stack([w - wg, wg - wb, wb, 1.0 - w - lg, lg - lb, lb], axis=-1)
    return np.clip(out, 0.0, None).astype(p5.dtype, copy=False)


def invert_probs(p5: np.ndarray) -> np.ndarray:
    """gnubg-order probabilities for one side -> the same for the other side.

    ``win' = 1 - win``, ``win_gammon' = lose_gammon``, ``win_backgammon' =
    lose_backgammon`` and vice versa (gnubg ``InvertEvaluation``).

    Args:
        p5: ``(..., 5)`` array.

    Returns:
        A new ``(..., 5)`` array.
    """
    p5 = np.asarray(p5)
    out = np.empty_like(p5)
    out[..., 0] = 1.0 - p5[..., 0]
    out[..., 1] = p5[..., 3]
    out[..., 2] = p5[..., 4]
    out[..., 3] = p5[..., 1]
    out[..., 4] = p5[..., 2]
    return out


def invert_exclusive(p6):
    """6 exclusive outcome probabilities for one side -> for the other side (wins <-> losses)."""
    return p6[..., _INVERT6]


def cubeless_equity(p5):
    """Cubeless money equity from gnubg-order probabilities (gnubg ``Utility()``).

    ``equity = 2 win - 1 + win_gammon + win_backgammon - lose_gammon - lose_backgammon``,
    in points per game at cube 1, for the side the probabilities belong to.

    Args:
        p5: ``(..., 5)`` numpy array or torch tensor.

    Returns:
        ``(...)`` equities.
    """
    return 2.0 * p5[..., 0] - 1.0 + p5[..., 1] + p5[..., 2] - p5[..., 3] - p5[..., 4]


def result_probs(points: np.ndarray) -> np.ndarray:
    """Exact gnubg-order probabilities of finished games.

    Args:
        points: ``(N,)`` results ``+-1, +-2, +-3`` (from :func:`nard_ai.core.board.game_result`),
            for the side the probabilities are wanted for.

    Returns:
        ``(N, 5)`` float32 of zeros and ones.
    """
    points = np.asarray(points)
    out = np.zeros((len(points), 5), dtype=np.float32)
    out[:, 0] = points > 0
    out[:, 1] = points >= 2
    out[:, 2] = points >= 3
    out[:, 3] = points <= -2
    out[:, 4] = points <= -3
    return out
