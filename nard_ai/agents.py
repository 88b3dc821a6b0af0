"""Agents by spec: the top of the library's agent stack (network, pubeval, random, gnubg).

=====================  ======================================================
spec                   agent
=====================  ======================================================
``PATH[:PLY]``         a checkpoint (:func:`nard_ai.model.network.load_checkpoint`)
                       searched at ``PLY`` (gnubg numbering, default 0); a shipped
                       network also by its file name alone (``nard-td198.pt:1``,
                       :func:`nard_ai.model.network.resolve_checkpoint`)
``default[:PLY]``      the default network (``checkpoints/nard-expert.pt``)
``pubeval``            Tesauro's pubeval (:class:`~nard_ai.eval.evaluator.PubevalEvaluator`)
``random``             a uniformly random legal play
``gnubg[:PLY]``        GNU Backgammon at ``PLY`` 0..2 (:mod:`nard_ai.gnubg.agent`;
                       needs the optional ``gnubg`` package)
=====================  ======================================================

:func:`load_agent`, :func:`pubeval_agent` and :func:`random_agent` live in
:mod:`nard_ai.search.loading` (the cube and play layers use the default
network as their default agent) and are re-exported here.
"""

from __future__ import annotations

from pathlib import Path

from nard_ai.core.ply import check_ply
from nard_ai.core.rules import Rules
from nard_ai.search.loading import load_agent, pubeval_agent, random_agent
from nard_ai.search.lookahead import STANDARD_RULES, Agent

__all__ = ["agent_from_spec", "checkpoint_of_spec", "load_agent", "pubeval_agent", "random_agent"]


def agent_from_spec(spec: str, seed: int = 0, rules: Rules = STANDARD_RULES) -> Agent:
    """Build an agent from a spec (table in the module docstring).

    Args:
        spec: ``"pubeval"``, ``"random"``, ``"gnubg[:PLY]"``, ``"default[:PLY]"`` or ``"PATH[:PLY]"``.
        seed: seed of the random agent.
        rules: rule settings for move generation.

    Raises:
        ValueError: on a bad ply or a bad checkpoint file.
        FileNotFoundError: if a checkpoint path does not exist (``"no checkpoint at PATH; the shipped
            networks are in DIR: ..."``: :func:`nard_ai.model.network.shipped_checkpoints_note`).
    """
    _check_spec(spec)
    if spec == "pubeval":
        return pubeval_agent(rules)
    if spec == "random":
        return random_agent(seed, rules)
    if _is_gnubg(spec):
        from nard_ai.gnubg.agent import gnubg_agent_from_spec  # optional dependency, imported on use

        return gnubg_agent_from_spec(spec, rules)
    path, ply = _network_spec(spec)
    if path == "default":
        return load_agent(None, ply=ply, rules=rules)
    from nard_ai.model.network import resolve_checkpoint, shipped_checkpoints_note  # torch, on first use

    try:
        return load_agent(resolve_checkpoint(path), ply=ply, rules=rules)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{exc}; {shipped_checkpoints_note()}") from None


def _check_spec(spec) -> None:
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(
            f"an agent spec must be pubeval, random, gnubg[:PLY], default[:PLY] or PATH[:PLY], got {spec!r}"
        )


def _is_gnubg(spec: str) -> bool:
    return spec == "gnubg" or spec.startswith("gnubg:")


def _network_spec(spec: str) -> tuple[str, int]:
    """``"PATH[:PLY]"`` or ``"default[:PLY]"`` -> ``(PATH or "default", ply)``; ValueError on a bad ply."""
    path, ply = spec, 0
    head, sep, tail = spec.rpartition(":")
    if sep and head in ("pubeval", "random"):
        raise ValueError(f"agent spec {spec!r}: {head} has no lookahead (no ply); use {head!r}")
    numeric = tail.lstrip("+-").isdigit()
    if sep and (numeric or head == "default"):  # PATH:PLY or default:PLY; another colon is part of PATH
        try:
            ply = check_ply(int(tail) if numeric else tail)
        except ValueError as exc:
            raise ValueError(f"agent spec {spec!r}: {exc}") from None
        path = head
    return path, ply


def checkpoint_of_spec(spec: str) -> Path | None:
    """The checkpoint file a network agent spec loads, or ``None`` for pubeval, random and gnubg.

    ``default[:PLY]`` gives the default network's file (``checkpoints/nard-expert.pt``), whichever
    generation it holds: a record of what played (a benchmark's sidecar) should name the file's
    SHA-256 too. A path is resolved as :func:`agent_from_spec` resolves it (a shipped network's bare
    file name is its file in the shipped folder). Nothing is loaded and the file's existence is not checked.

    Raises:
        ValueError: an empty spec or a bad ply, as :func:`agent_from_spec`.
    """
    _check_spec(spec)
    if spec in ("pubeval", "random") or _is_gnubg(spec):
        return None
    path, _ = _network_spec(spec)
    from nard_ai.model.network import default_checkpoint_path, resolve_checkpoint  # torch, on first use

    return Path(default_checkpoint_path()) if path == "default" else resolve_checkpoint(path)
