"""Agents that search with a network, pubeval or random values: :func:`load_agent` and friends.

These sit in the search layer (not in :mod:`nard_ai.agents`) because the
cube and play layers load the default network as their default agent and may
only import downward (README, "Architecture"). Specs (``"gnubg:1"``,
``"default:2"``, ...) are parsed one layer up, in :mod:`nard_ai.agents`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from nard_ai.core.rules import Rules
from nard_ai.eval.evaluator import NetworkEvaluator, PubevalEvaluator, RandomEvaluator
from nard_ai.search.filters import MoveFilters
from nard_ai.search.lookahead import STANDARD_RULES, Agent

__all__ = ["load_agent", "pubeval_agent", "random_agent", "default_agent"]


def load_agent(
    checkpoint: str | Path | None = None,
    ply: int = 0,
    filters: MoveFilters | str | None = None,
    rules: Rules = STANDARD_RULES,
) -> Agent:
    """A network agent; ``checkpoint=None`` loads the default ``checkpoints/nard-expert.pt``.

    Args:
        checkpoint: path of a checkpoint, or ``None`` for the default network. A path is resolved as the
            command lines resolve ``--checkpoint``, by :func:`nard_ai.model.network.resolve_checkpoint`
            (the one resolver): an existing path is that file; a bare file name of a shipped network
            (:data:`~nard_ai.model.network.SHIPPED_CHECKPOINTS`, ``"nard-td198.pt"``) that is not a
            file of the current folder is the shipped one, so it loads from any folder.
        ply: search depth 0..2 (gnubg numbering).
        filters: move filters of the 1- and 2-ply searches
            (:class:`nard_ai.search.lookahead.MoveFilters` or a preset name such as
            ``"normal"``; ``None`` is gnubg's default, ``normal``).
        rules: rule settings for move generation.

    Raises:
        FileNotFoundError: if the checkpoint does not exist.
        ValueError: on a corrupt or mismatched checkpoint, an unsupported ply
            or bad filters.
    """
    from nard_ai.model.network import (  # torch, on first use
        default_checkpoint_path,
        load_checkpoint,
        resolve_checkpoint,
    )

    path = default_checkpoint_path() if checkpoint is None else resolve_checkpoint(checkpoint)
    network = load_checkpoint(path).network
    return Agent(NetworkEvaluator(network), ply=ply, rules=rules, name=f"{path.name}:{ply}", filters=filters)


def pubeval_agent(rules: Rules = STANDARD_RULES) -> Agent:
    """Tesauro's pubeval as an agent (the classic benchmark)."""
    return Agent(PubevalEvaluator(), rules=rules, name="pubeval")


def random_agent(seed: int | np.random.Generator | None = None, rules: Rules = STANDARD_RULES) -> Agent:
    """An agent playing a uniformly random legal play, from its own seeded generator."""
    return Agent(RandomEvaluator(seed), rules=rules, name="random")


@functools.lru_cache(maxsize=4)
def default_agent(ply: int) -> Agent:
    """The default network searched at ``ply`` (cached: the default agent of cube decisions and rollouts)."""
    return load_agent(None, ply=ply)
