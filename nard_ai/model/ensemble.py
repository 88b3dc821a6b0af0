"""Logit ensembles: several networks as one ordinary :class:`~nard_ai.model.network.Network`.

An ensemble of networks that share an encoder and an activation is built
exactly as one wider network: for each MLP (:data:`~nard_ai.model.network.NETS`)
the members' hidden layers are put side by side (the first layer's weights
stacked, each deeper layer's weights block-diagonal, so member ``i``'s units
see only member ``i``'s units), and the output layer's weights are the
members' side by side, divided by the member count ``k``, its bias the mean of
theirs. The new network's logits are then the **mean of the members'
logits**, exactly (up to float32 rounding; tested to 1e-5), so its outcome
probabilities are the members' probabilities' normalized geometric mean,
``softmax(mean_i z_i) ∝ prod_i p_i ** (1/k)``. Averaging logits is the usual
way to average classifiers that output a softmax; here it needs no code in
the evaluators, the search, the ONNX export or the checkpoint contract: the
result is an ordinary one-, two- or three-net network, of width the sum of
the members' widths.

An MLP that every member has bit for bit the same (a race net the members
share, say) is kept once, not widened: its mean is itself. The contact and
crashed nets share :attr:`NetworkConfig.hidden`, so they are merged together
(one of them identical across the members is merged too: ``k`` copies of one
net average to it, exactly).

What it costs: a one-hidden-layer net of width ``k * w`` evaluates in about
the time of ``k`` nets of width ``w`` for its matrix products; the encoding,
which dominates a 1-ply move with the expert inputs, is done once. Deeper
members pay for the block-diagonal zeros (``k`` times the products of a
deeper layer).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from nard_ai.model.atomic import file_sha256
from nard_ai.model.network import NETS, Checkpoint, Network, load_checkpoint, save_checkpoint

__all__ = ["ensemble_network", "ensemble_checkpoint", "ENSEMBLE_RULE"]

ENSEMBLE_RULE = "mean of the members' logits (hidden layers side by side, output weights / k)"
"""What an ensemble checkpoint's ``extra["ensemble"]["rule"]`` says."""


def _linears(mlp: nn.Sequential) -> list[nn.Linear]:
    return [m for m in mlp if isinstance(m, nn.Linear)]


def _same(mlps: Sequence[nn.Sequential]) -> bool:
    first = mlps[0].state_dict()
    for m in mlps[1:]:
        other = m.state_dict()
        if other.keys() != first.keys() or not all(torch.equal(first[k], other[k]) for k in first):
            return False
    return True


def _merge(mlps: Sequence[nn.Sequential], into: nn.Sequential) -> None:
    """Write the logit-mean merge of ``mlps`` (same depth) into ``into`` (of the summed widths)."""
    k = len(mlps)
    layers = [_linears(m) for m in mlps]
    target = _linears(into)
    with torch.no_grad():
        for depth, out in enumerate(target):
            parts = [member[depth] for member in layers]
            if depth == 0:  # the inputs are shared: hidden units stacked
                weight = torch.cat([p.weight for p in parts], dim=0)
                bias = torch.cat([p.bias for p in parts])
            elif depth < len(target) - 1:  # member i's units read only member i's units
                weight = torch.block_diag(*[p.weight for p in parts])
                bias = torch.cat([p.bias for p in parts])
            else:  # the output layer: the mean of the members' logits
                weight = torch.cat([p.weight for p in parts], dim=1) / k
                bias = torch.stack([p.bias for p in parts]).mean(dim=0)
            out.weight.copy_(weight)
            out.bias.copy_(bias)


def _widths(mlps: Sequence[nn.Sequential], name: str) -> tuple[int, ...]:
    depths = {len(_linears(m)) for m in mlps}
    if len(depths) != 1:
        raise ValueError(
            f"the members' {name} nets have different depths ({sorted(d - 1 for d in depths)} hidden "
            "layers): a logit ensemble puts layers side by side, so every member needs the same depth"
        )
    return tuple(sum(_linears(m)[d].out_features for m in mlps) for d in range(depths.pop() - 1))


def ensemble_network(networks: Sequence[Network]) -> Network:
    """One network whose logits are the mean of ``networks``' logits (module docstring).

    Args:
        networks: two or more networks with the same encoder (name and version), activation, and
            nets (``race_net``, ``crashed_net``). Their widths may differ; each net's depth must be
            the same across the members unless that net is identical in all of them.

    Returns:
        A new :class:`Network` in eval mode: the contact (and crashed) nets of width the sum of the
        members' per layer; the race net kept when identical in every member, else merged the same
        way (``race_hidden`` the summed widths).

    Raises:
        ValueError: fewer than two networks; members that differ in encoder, activation or nets;
            nets of different depths.
    """
    nets = list(networks)
    if len(nets) < 2:
        raise ValueError(f"an ensemble needs at least two networks, got {len(nets)}")
    first = nets[0].config
    for i, net in enumerate(nets[1:], start=2):
        c = net.config
        for attr in ("encoder", "encoder_version", "activation", "race_net", "crashed_net"):
            if getattr(c, attr) != getattr(first, attr):
                raise ValueError(
                    f"member {i} has {attr} {getattr(c, attr)!r}, member 1 {getattr(first, attr)!r}: "
                    "the members of an ensemble must share the encoder, activation and nets"
                )
    groups = {name: [getattr(n, name) for n in nets] for name in NETS if getattr(nets[0], name) is not None}
    contact = [name for name in ("mlp", "crashed_mlp") if name in groups]
    contact_shared = all(_same(groups[name]) for name in contact)
    race_shared = "race_mlp" not in groups or _same(groups["race_mlp"])
    hidden = first.hidden if contact_shared else _widths(groups["mlp"], "contact")
    race_hidden = first.race_hidden
    if not race_shared:
        race_hidden = _widths(groups["race_mlp"], "race")
    elif "race_mlp" in groups:
        race_hidden = first.net_hidden("race_mlp")
    config = replace(first, hidden=hidden, race_hidden=race_hidden)
    out = Network(config)
    for name, mlps in groups.items():
        shared = race_shared if name == "race_mlp" else contact_shared
        if shared:
            getattr(out, name).load_state_dict(mlps[0].state_dict())
        else:
            _merge(mlps, getattr(out, name))
    out.eval()
    return out


def ensemble_checkpoint(members: Sequence[str | os.PathLike], out: str | os.PathLike) -> Checkpoint:
    """Build the ensemble of the checkpoints ``members`` and save it to ``out`` (atomically).

    The checkpoint is an ordinary one (the module docstring of :mod:`nard_ai.model.network`):
    ``args`` ``{"ensemble": [member file names]}``, ``games_trained`` the largest of the members',
    and ``extra["ensemble"]`` recording the rule (:data:`ENSEMBLE_RULE`), the member count and,
    per member, its file name (``path``), SHA-256 and ``extra`` (its own training records). Only
    the file name is kept, not its folder: the checkpoint may ship to other machines, where a
    folder of this one means nothing, and the SHA-256 identifies the file.

    Args:
        members: two or more checkpoint files (:func:`ensemble_network`'s conditions).
        out: the file to write; it must not exist (no checkpoint is overwritten).

    Returns:
        The written checkpoint, loaded back (so the file is known to load).

    Raises:
        FileNotFoundError: a member does not exist.
        ValueError: fewer than two members; ``out`` empty, existing or a member; a member named
            twice, or two members that are the same file's bytes (the same SHA-256: the ensemble of
            a network with itself is that network, at twice the cost); a member is not a readable
            checkpoint; members that cannot be merged (:func:`ensemble_network`).
    """
    paths = [Path(m) for m in members]
    if not str(out).strip():
        raise ValueError("the ensemble's output file is empty: name a file")
    out = Path(out)
    if len(paths) < 2:
        raise ValueError(f"an ensemble needs at least two member checkpoints, got {len(paths)}")
    if out.exists():
        raise ValueError(f"{out} already exists: an ensemble is written to a new file (remove it first)")
    seen: dict[Path, int] = {}
    for i, p in enumerate(paths, start=1):
        key = p.resolve()
        if key in seen:
            raise ValueError(f"member {i} ({p}) is member {seen[key]} again: name each member once")
        seen[key] = i
    loaded = [load_checkpoint(p) for p in paths]
    digests = [file_sha256(p) for p in paths]
    for i, digest in enumerate(digests):
        if digest in digests[:i]:
            j = digests.index(digest)
            raise ValueError(
                f"member {i + 1} ({paths[i]}) is the same checkpoint as member {j + 1} ({paths[j]}): the "
                "same SHA-256; the ensemble of a network with itself is that network"
            )
    network = ensemble_network([c.network for c in loaded])
    record: dict[str, Any] = {
        "rule": ENSEMBLE_RULE,
        "k": len(paths),
        "members": [
            {"path": p.name, "sha256": digest, "extra": c.extra}
            for p, c, digest in zip(paths, loaded, digests, strict=True)
        ],
    }
    save_checkpoint(
        out,
        network,
        games_trained=max(c.games_trained for c in loaded),
        args={"ensemble": [p.name for p in paths]},
        extra={"ensemble": record},
    )
    return load_checkpoint(out)
