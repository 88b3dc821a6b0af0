"""The TD(lambda) update: lambda-return targets and a gradient step on them.

Formulation (the forward view, "offline lambda-return")
--------------------------------------------------------
A game is a sequence of pre-roll states ``s_0, s_1, ..., s_{T-1}``, each a
board from its side on roll (the sides alternate). At ``s_t`` the mover rolls,
search picks the afterstate with the best equity, and that afterstate's value
for the mover is recorded as ``y_t`` (6 exclusive outcome probabilities,
:mod:`nard_ai.model.network`). For ``t < T - 1`` the afterstate swapped to the
opponent *is* ``s_{t+1}``, so ``y_t = invert(V(s_{t+1}))``: the one-step TD
target of ``s_t``, already in ``s_t``'s perspective. The last play ends the
game and ``y_{T-1}`` is the actual result as a one-hot vector (single, gammon
or backgammon, RULES.md §6), the only reward.

The lambda-return of each state is built backwards, flipping perspective at
every ply (``invert`` swaps wins and losses)::

    G_{T-1} = y_{T-1}
    G_t     = (1 - lambda) * y_t + lambda * invert(G_{t+1})

``lambda = 0`` is TD(0) (target = next state's value), ``lambda = 1`` is
Monte Carlo (target = the final result). Training then minimises the
cross-entropy between the network's softmax at ``s_t`` and ``G_t``. This is the
forward view of TD(lambda) (Sutton & Barto 2018, §12.1): with the weights held
fixed during a game it gives the same total update as accumulating
eligibility traces; here the ``y_t`` come from the weights at the time each
move was chosen, and the update happens when the game ends. It needs no
per-game trace copies of the weights, so many games run in lockstep and each
finished game's states go into ordinary minibatches.

Divergence
----------
A learning rate far too large (``train.py --lr 1e30``) sends the weights to
infinity and the loss to NaN within a few steps, and every step after that
keeps them there. :meth:`Learner.update` raises :class:`TrainingDiverged` on
a non-finite loss, before its step, and :func:`check_finite_weights` on
weights that are not all finite (a step with a finite loss can still
overflow them), so a caller stops and keeps its last good checkpoint
(:func:`nard_ai.model.network.save_checkpoint` refuses non-finite weights
anyway).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numba import njit

from nard_ai.model.network import Network, nonfinite_tensors

__all__ = ["lambda_returns", "td_loss", "Learner", "TrainingDiverged", "check_finite_weights"]


class TrainingDiverged(FloatingPointError):
    """The loss or the weights of a training run became non-finite (NaN or infinity): the run
    diverged (a learning rate far too large), and no later step can bring it back."""


def check_finite_weights(network: Network, when: str) -> None:
    """Raise :class:`TrainingDiverged` (``"non-finite weights in NAMES WHEN"``) when a weight of
    ``network`` is NaN or infinite (:func:`nard_ai.model.network.nonfinite_tensors`; well under a
    millisecond for a network of 128 hidden units)."""
    bad = nonfinite_tensors(dict(network.named_parameters()))
    if bad:
        names = ", ".join(bad[:4]) + (" ..." if len(bad) > 4 else "")
        raise TrainingDiverged(f"non-finite weights in {names} {when}")


@njit(cache=True, nogil=True)
def _lambda_returns(y, lengths, lam, out):
    for g in range(y.shape[0]):
        n = lengths[g]
        if n == 0:
            continue
        for k in range(6):
            out[g, n - 1, k] = y[g, n - 1, k]
        for t in range(n - 2, -1, -1):
            for k in range(6):
                # invert(G_{t+1}): win outcome k <-> lose outcome k (index k +- 3)
                flipped = out[g, t + 1, (k + 3) % 6]
                out[g, t, k] = (1.0 - lam) * y[g, t, k] + lam * flipped


def lambda_returns(y: np.ndarray, lengths: np.ndarray, lam: float) -> np.ndarray:
    """Lambda-return targets for finished games (formulation in the module docstring).

    Args:
        y: ``(G, L, 6)`` float32; ``y[g, t]`` is game ``g``'s recorded value of
            the afterstate chosen at ply ``t``, for the side on roll at ply
            ``t``; ``y[g, lengths[g] - 1]`` is the one-hot final result.
        lengths: ``(G,)`` plies of each game (``<= L``).
        lam: lambda in ``[0, 1]``.

    Returns:
        ``(G, L, 6)`` float32 targets ``G_t`` (zeros past each game's length).
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lambda must be in [0, 1], got {lam}")
    out = np.zeros(y.shape, dtype=np.float32)
    _lambda_returns(
        np.ascontiguousarray(y, dtype=np.float32), np.asarray(lengths, dtype=np.int64), np.float32(lam), out
    )
    return out


def td_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy between softmax(logits) ``(B, 6)`` and target distributions ``(B, 6)``."""
    return -(targets * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


class Learner:
    """Holds a network and its optimizer; one :meth:`update` is one gradient step.

    The optimizer is Adam with torch's fused CPU kernel (one kernel per
    parameter instead of about ten small tensor operations: about 15% off an
    update of 512 samples here); the arithmetic is Adam's (Kingma & Ba 2015).

    Args:
        network: the network to train.
        lr: Adam learning rate.
    """

    def __init__(self, network: Network, lr: float = 1e-3) -> None:
        self.network = network
        self.optimizer = torch.optim.Adam(network.parameters(), lr=lr, fused=True)
        self.steps = 0

    def load_optimizer_state(self, state: dict, lr: float | None = None) -> None:
        """Restore a saved optimizer ``state_dict`` (moments and step counts), keeping the fused kernel.

        ``load_state_dict`` also restores the saved implementation flags;
        checkpoints written before the fused kernel was used say
        ``fused=None``, so the flags are set back here. ``lr``, if given,
        replaces the saved learning rate.
        """
        self.optimizer.load_state_dict(state)
        for group in self.optimizer.param_groups:
            group["fused"], group["foreach"] = True, None
            if lr is not None:
                group["lr"] = lr

    def update(self, boards: np.ndarray, targets: np.ndarray) -> float:
        """One gradient step towards the targets.

        Args:
            boards: ``(B, 26)`` int8 pre-roll boards, side on roll's view.
            targets: ``(B, 6)`` float32 target outcome distributions for that side.

        Returns:
            The loss before the step.

        Raises:
            TrainingDiverged: the loss is NaN or infinite (the weights are, or the targets came
                from weights that were); the step is not taken.
        """
        self.network.train()
        x = torch.from_numpy(self.network.encoder.encode(boards))
        loss = td_loss(self.network(x), torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32)))
        value = float(loss.detach())
        if not math.isfinite(value):
            raise TrainingDiverged(f"non-finite loss ({value}) at gradient step {self.steps + 1} of this run")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.network.weights_changed()  # the fused step does not bump the weights' version counters
        self.steps += 1
        return value
