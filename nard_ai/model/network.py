"""The torch evaluator network, outcome-probability views, and checkpoints with a contract.

Outcomes
--------
The network predicts the 6 *exclusive* outcomes of :mod:`nard_ai.core.outcomes` with a
softmax, for the side on roll in the encoded board; the evaluators turn them into gnubg's 5
cumulative probabilities (:func:`~nard_ai.core.outcomes.exclusive_to_gnubg`). The outcome
algebra (inverting, cubeless equity, finished games) lives in that torch-free module and is
re-exported here.

Checkpoints
-----------
:func:`save_checkpoint` writes one ``torch.save`` dict atomically (a temporary
file ``.NAME.XXXXXXXX.tmp`` in the same folder, fsync, ``os.replace``), so a
crash never leaves a half-written checkpoint. The writer holds an advisory
lock (``flock``) on its temporary file; one left behind by a killed writer
(SIGKILL, a power cut) has no lock, and :func:`remove_stale_temporaries`
removes it (every save does, and ``train.py`` at start); :mod:`nard_ai.model.atomic`
does both. Its contract:

==================  ============================================================
key                 value
==================  ============================================================
``format``          ``"nard_ai.checkpoint"``
``format_version``  :data:`CHECKPOINT_VERSION`
``layout_version``  :data:`nard_ai.core.board.LAYOUT_VERSION` of the boards trained on
``encoder``         ``{"name": str, "version": int, "size": int}``
``network``         :class:`NetworkConfig` as a dict
``state_dict``      the network's tensors
``games_trained``   self-play games behind these weights
``args``            the training hyperparameters (a plain dict)
``optimizer``       the optimizer's ``state_dict`` or ``None``
``rng``             RNG state (JSON text of numpy's bit-generator state, and
                    torch's CPU RNG state) or ``None``
``extra``           free-form dict (e.g. last benchmark), or ``{}``
``digest``          ``{"algorithm": "sha256", "state_dict": HEX, "optimizer": HEX
                    or None, "metadata": HEX}``: SHA-256 of the tensors (names,
                    dtypes, shapes, bytes) and plain values of ``state_dict``
                    and ``optimizer``, and of every other entry above
                    (:data:`METADATA_KEYS`)
==================  ============================================================

:func:`load_checkpoint` checks every key and raises ``ValueError`` naming the
file and the problem on a corrupt, truncated or mismatched file. ``digest`` is
verified when present (``ValueError("corrupt checkpoint PATH: digest
mismatch ...")``): a checkpoint whose tensor bytes were damaged, or whose
network description was edited (say, another activation), would otherwise
load silently with wrong outputs. Files written before the digest existed (no
``digest`` key), or before it covered the metadata (no ``"metadata"``), still
load, checked as far as their digest goes; every new save writes all three.

Weights that are not all finite (NaN or infinity: a training run that diverged) are refused both
ways: :func:`save_checkpoint` does not write them and :func:`load_checkpoint` raises
``ValueError("PATH: non-finite weights ...")`` (:func:`nonfinite_tensors`), so no command plays,
labels or continues a broken network.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from nard_ai.core.board import BOARD_SIZE, LAYOUT_VERSION
from nard_ai.core.classes import crashed_any, side_crashed
from nard_ai.core.movegen import parallel_threads
from nard_ai.core.outcomes import (
    GNUBG_OUTPUTS,
    OUTCOME_POINTS,
    OUTCOMES,
    cubeless_equity,
    cumulative_parts,
    gnubg_to_exclusive,
    invert_exclusive,
    invert_probs,
    result_probs,
)
from nard_ai.model.atomic import STALE_AFTER_S, TMP_SUFFIX, atomic_write, remove_stale_temporaries
from nard_ai.model.embedding import CONSTANT_UNIT, SLOTS, dense_columns, first_layer, unit_values
from nard_ai.model.encoding import PARALLEL_MIN_BOARDS, Encoder, contact_first_order, get_encoder

__all__ = [
    "OUTCOMES",
    "OUTCOME_POINTS",
    "GNUBG_OUTPUTS",
    "NetworkConfig",
    "Network",
    "Checkpoint",
    "NETS",
    "CONTACT_ROUTE",
    "CRASHED_ROUTE",
    "CRASHED_ENCODERS",
    "RACE_ROUTE",
    "config_dict",
    "route_rows",
    "route_boards",
    "exclusive_to_gnubg",
    "gnubg_to_exclusive",
    "invert_probs",
    "invert_exclusive",
    "cubeless_equity",
    "result_probs",
    "save_checkpoint",
    "load_checkpoint",
    "remove_stale_temporaries",
    "TMP_SUFFIX",
    "STALE_AFTER_S",
    "default_checkpoint_path",
    "SHIPPED_CHECKPOINTS",
    "shipped_checkpoints",
    "resolve_checkpoint",
    "shipped_checkpoints_note",
    "missing_checkpoint_message",
    "nonfinite_tensors",
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
]


CHECKPOINT_FORMAT = "nard_ai.checkpoint"
CHECKPOINT_VERSION = 1
DEFAULT_CHECKPOINT_NAME = "nard-expert.pt"
"""The default network's file (README, "The default network"; docs/GENERATIONS.md, "Generation 16"); ``nard-rich.pt`` (TD, the
default until 2026-12-04), ``nard-expert-gen10.pt`` (generation 10, the default on 2026-12-04),
``nard-expert-gen11.pt`` (generation 11, the default from 2026-12-05 to 2026-12-06), ``nard-expert-gen14.pt``
(generation 14, the default on 2026-12-06 until generation 15), ``nard-expert-gen15.pt`` (generation 15, the
default from 2026-12-06 to 2026-12-07), ``nard-sup256.pt`` and ``nard-td198.pt`` ship beside it and load by
path, or by their file name alone (:func:`resolve_checkpoint`)."""

SHIPPED_CHECKPOINTS = (
    DEFAULT_CHECKPOINT_NAME,
    "nard-expert-gen15.pt",
    "nard-expert-gen14.pt",
    "nard-expert-gen11.pt",
    "nard-expert-gen10.pt",
    "nard-rich.pt",
    "nard-sup256.pt",
    "nard-td198.pt",
)
"""The networks shipped in ``checkpoints/`` (and in a wheel's ``share/nard_ai/checkpoints/``: pyproject.toml's
data files), the default first: the file names :func:`resolve_checkpoint` finds from any folder."""


def exclusive_to_gnubg(p6):
    """6 exclusive outcome probabilities -> gnubg's 5 cumulative ones (same side), numpy or torch.

    :func:`nard_ai.core.outcomes.exclusive_to_gnubg` (numpy) that also takes a torch tensor, as the
    network's forward pass and the ONNX export use it; the formula is
    :func:`nard_ai.core.outcomes.cumulative_parts`.

    Args:
        p6: ``(..., 6)`` numpy array or torch tensor in :data:`OUTCOMES` order.

    Returns:
        ``(..., 5)`` of the same kind: win, win-gammon, win-backgammon, lose-gammon, lose-backgammon.
    """
    if isinstance(p6, torch.Tensor):
        return torch.stack(cumulative_parts(p6), dim=-1)
    return np.stack(cumulative_parts(p6), axis=-1)


@dataclass(frozen=True)
class NetworkConfig:
    """Architecture of a :class:`Network` (stored in checkpoints).

    Attributes:
        encoder: name of the input encoder (:mod:`nard_ai.model.encoding`).
        encoder_version: its version.
        hidden: sizes of the hidden layers.
        activation: ``"sigmoid"`` (TD-Gammon's), ``"tanh"`` or ``"relu"``.
        race_net: a second MLP for race positions (no contact; of
            ``hidden``'s shape unless ``race_hidden`` is set), chosen by the encoder's ``race_unit``; the first MLP then
            sees only contact positions (gnubg likewise keeps separate contact
            and race networks).
        crashed_net: a third MLP of ``hidden``'s shape for gnubg's *crashed*
            contact positions (:func:`nard_ai.core.classes.crashed_sides`: a
            side with at most 6 checkers left in play, counting its deep
            points as gnubg's ``ClassifyPosition`` does), as gnubg's crashed
            net. Needs ``race_net`` and an encoder with TD-Gammon's point
            units (``rich``, ``expert``): the class is read from them
            (:func:`route_rows`). Written to a checkpoint only when True.
        race_hidden: sizes of the race net's hidden layers when they differ
            from ``hidden`` (``None``: the race net has ``hidden``'s shape; a
            value equal to ``hidden`` is stored as ``None``).
            Needs ``race_net``. Races are a minority of the positions a
            search values, so a wider race net costs little there; self-play
            and race rollouts pay for it (docs/GENERATIONS.md, "Generation 11"). Written
            to a checkpoint only when set.
    """

    encoder: str = "td198"
    encoder_version: int = 1
    hidden: tuple[int, ...] = (80,)
    activation: str = "sigmoid"
    race_net: bool = False
    crashed_net: bool = False
    race_hidden: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {self.activation!r}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"hidden must be one or more positive sizes, got {self.hidden}")
        if self.crashed_net and not self.race_net:
            raise ValueError("crashed_net needs race_net (gnubg's three nets: contact, crashed, race)")
        if self.race_hidden is not None:
            object.__setattr__(self, "race_hidden", tuple(int(h) for h in self.race_hidden))
            if not self.race_hidden or min(self.race_hidden) < 1:
                raise ValueError(f"race_hidden must be one or more positive sizes, got {self.race_hidden}")
            if not self.race_net:
                raise ValueError("race_hidden needs race_net (it is the race net's shape)")
            if self.race_hidden == self.hidden:  # the common shape: described as before race_hidden existed
                object.__setattr__(self, "race_hidden", None)

    def net_hidden(self, name: str) -> tuple[int, ...]:
        """The hidden layer sizes of MLP ``name`` (:data:`NETS`): ``race_hidden`` for ``race_mlp``
        when set, else ``hidden``."""
        if name == "race_mlp" and self.race_hidden is not None:
            return self.race_hidden
        return self.hidden


NETS = ("mlp", "crashed_mlp", "race_mlp")
"""The MLPs of a :class:`Network` by route number: 0 contact, 1 crashed, 2 race (:func:`route_rows`)."""
CONTACT_ROUTE, CRASHED_ROUTE, RACE_ROUTE = range(3)
CRASHED_ENCODERS = ("rich", "expert", "expert_race")
"""Encoders whose layout :func:`route_rows` reads a crashed position from (TD-Gammon's units and a race unit)."""

_OFF_UNITS = (194, 195)  # td198: checkers borne off / 15, side on roll then opponent
_POINT1_UNITS = (0, 96)  # td198: first unit of each side's point 1 (its own numbering)


def route_rows(x: torch.Tensor, race_unit: int, crashed: bool) -> torch.Tensor:
    """The MLP each encoded row goes to: ``(N,)`` int64, 0 contact, 1 crashed, 2 race (:data:`NETS`).

    Race rows are those whose ``race_unit`` is set. With ``crashed``, a contact row is crashed when
    either side is crashed by gnubg's rule (:func:`nard_ai.core.classes.crashed_sides`, source: gnubg
    ``eval.c`` ``ClassifyPosition``, ``N = 6``), read from TD-Gammon's units of the encoding (a side's
    checkers left = 15 - 15 * its borne-off unit; on a point, ``u1 + u2 + u3 + 2 u4``): the same
    answer as :func:`nard_ai.core.classes.classify_positions` on the board (tested), in torch ops
    only, so the ONNX export routes alike.

    Args:
        x: ``(N, S)`` float32 inputs of a ``td198``-family encoder (``rich``, ``expert``).
        race_unit: the encoder's race unit.
        crashed: route crashed rows to 1 (else they stay 0, contact).
    """
    route = (x[:, race_unit] > 0.5).long() * RACE_ROUTE
    if crashed:
        sides = []
        for first, off in zip(_POINT1_UNITS, _OFF_UNITS, strict=True):
            tot = 15.0 - torch.round(x[:, off] * 15.0)
            p1, p2 = x[:, first : first + 4], x[:, first + 4 : first + 8]
            a1 = p1[:, 0] + p1[:, 1] + p1[:, 2] + 2.0 * p1[:, 3]
            a2 = p2[:, 0] + p2[:, 1] + p2[:, 2] + 2.0 * p2[:, 3]
            sides.append(side_crashed(tot, a1, a2))
        route = torch.where((route == CONTACT_ROUTE) & (sides[0] | sides[1]), CRASHED_ROUTE, route)
    return route


def route_boards(boards: np.ndarray, race: np.ndarray, crashed: bool) -> np.ndarray:
    """:func:`route_rows` from boards: ``(N,)`` int8 routes for ``(N, 26)`` int8 boards (side on roll's
    view) and their ``(N,)`` bool race flags (the encoder's ``race_fn``)."""
    race = np.asarray(race, dtype=np.bool_)  # a mask, whatever the caller's dtype
    route = np.where(race, RACE_ROUTE, CONTACT_ROUTE).astype(np.int8)
    if crashed:
        route[~race & crashed_any(boards)] = CRASHED_ROUTE
    return route


_ACTIVATIONS = {"sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "relu": nn.ReLU}


def _mlp(width: int, config: NetworkConfig, name: str = "mlp") -> nn.Sequential:
    # MLP `name` of NETS: its own hidden sizes (NetworkConfig.net_hidden), the config's activation
    layers: list[nn.Module] = []
    for h in config.net_hidden(name):
        layers += [nn.Linear(width, h), _ACTIVATIONS[config.activation]()]
        width = h
    layers.append(nn.Linear(width, len(OUTCOMES)))
    return nn.Sequential(*layers)


_IN_PLACE = {nn.Sigmoid: torch.sigmoid_, nn.Tanh: torch.tanh_, nn.ReLU: torch.relu_}


def _predict_t(mlp: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    # softmax probabilities transposed, (6, N): torch's CPU softmax over a last axis of 6 is ~20x slower.
    # Activations are applied in place (no second (N, hidden) array): about 15% faster rollouts here.
    return _outputs_t(list(mlp), x)


def _outputs_t(layers: list[nn.Module], h: torch.Tensor) -> torch.Tensor:
    # the remaining (linear, activation) pairs of an MLP, then the transposed softmax output layer
    for linear, activation in zip(layers[:-1:2], layers[1:-1:2], strict=True):
        h = _IN_PLACE[type(activation)](nn.functional.linear(h, linear.weight, linear.bias))
    last = layers[-1]
    return torch.softmax(torch.addmm(last.bias[:, None], last.weight, h.T), dim=0)


class Network(nn.Module):
    """An MLP (or contact, race and optionally crashed MLPs) from encoded boards to the 6 exclusive outcomes.

    Outcomes are for the side on roll. ``forward`` returns logits ``(N, 6)``
    in :data:`OUTCOMES` order; a softmax gives the probabilities. With
    ``config.race_net`` each row goes to ``race_mlp`` when its encoder's race
    unit is set, else to ``mlp``; with ``config.crashed_net`` too, gnubg's
    crashed contact rows go to ``crashed_mlp`` (:func:`route_rows`). Use
    :class:`nard_ai.eval.evaluator.NetworkEvaluator` to evaluate boards (it encodes
    and converts to gnubg's 5 numbers).

    Raises:
        ValueError: ``race_net`` with an encoder that has no race unit; ``crashed_net`` with an
            encoder without TD-Gammon's point units.
    """

    def __init__(self, config: NetworkConfig = NetworkConfig()) -> None:
        super().__init__()
        self.config = config
        self.encoder: Encoder = get_encoder(config.encoder, config.encoder_version)
        self.mlp = _mlp(self.encoder.size, config)
        self.race_mlp: nn.Sequential | None = None
        self.crashed_mlp: nn.Sequential | None = None
        if config.race_net:
            if self.encoder.race_unit is None:
                raise ValueError(
                    f"encoder {self.encoder.key} has no race unit: it cannot route to a race net"
                )
            self.race_mlp = _mlp(self.encoder.size, config, "race_mlp")
        if config.crashed_net:
            if self.encoder.name not in CRASHED_ENCODERS:  # pragma: no cover - the others lack a race unit
                raise ValueError(f"encoder {self.encoder.key}: a crashed net needs one of {CRASHED_ENCODERS}")
            self.crashed_mlp = _mlp(self.encoder.size, config, "crashed_mlp")

    def _routes(self, x: torch.Tensor) -> torch.Tensor | None:
        # (N,) route numbers of encoded rows (route_rows), None with a single MLP
        if self.race_mlp is None:
            return None
        return route_rows(x, self.encoder.race_unit, self.crashed_mlp is not None)

    def routes(self, boards: np.ndarray) -> np.ndarray | None:
        """The MLP each board goes to, from the boards (no encoding): ``(N,)`` int8 route numbers
        (:data:`NETS`: 0 contact, 1 crashed, 2 race), or ``None`` when the network has one MLP. The
        same routes as ``forward`` takes from the encoded rows (:func:`route_rows`).

        Args:
            boards: ``(N, 26)`` int8 boards, side on roll's view.
        """
        if self.race_mlp is None:
            return None
        boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
        if self.encoder.race_fn is None:
            return self._routes(torch.from_numpy(self.encoder.encode(boards))).numpy().astype(np.int8)
        race = np.asarray(self.encoder.race_fn(boards), dtype=bool)
        return route_boards(boards, race, self.crashed_mlp is not None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, encoder.size)`` float32 inputs -> ``(N, 6)`` logits."""
        routes = self._routes(x)
        if routes is None:
            return self.mlp(x)
        out = torch.empty((x.shape[0], len(OUTCOMES)), dtype=x.dtype)
        for route, name in enumerate(NETS):
            mlp = getattr(self, name)
            rows = routes == route
            if mlp is not None and rows.any():
                out = out.index_put((rows,), mlp(x[rows]))
        return out

    @torch.no_grad()
    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """Softmax probabilities ``(N, 6)`` for encoded inputs ``(N, size)``, without gradients.

        The output layer is computed transposed, ``(6, N)``, and the softmax
        taken over its first axis: torch's CPU softmax over a last axis of
        length 6 is about 20 times slower. The result is a transposed view.
        """
        routes = self._routes(x)
        if routes is None:
            return _predict_t(self.mlp, x).T
        out = None
        for route, name in enumerate(NETS):
            mlp = getattr(self, name)
            rows = routes == route
            if mlp is None or not rows.any():
                continue
            if bool(rows.all()):
                return _predict_t(mlp, x).T
            if out is None:
                out = torch.empty((len(OUTCOMES), x.shape[0]), dtype=x.dtype)
            out[:, rows] = _predict_t(mlp, x[rows])
        if out is None:  # no rows
            return _predict_t(self.mlp, x).T
        return out.T

    @torch.no_grad()
    def predict_grouped(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Softmax probabilities of boards, transposed and grouped by network (the fast path of search).

        With a race net (and a crashed net), the boards are put in route order (contact, crashed,
        race; stable: :func:`nard_ai.model.encoding.contact_first_order` when there are two nets)
        *before* they are encoded, so each MLP runs on a contiguous slice of the inputs and no
        encoded row is copied; with one net, the order is the identity.

        Args:
            boards: ``(N, 26)`` int8 boards, each from its side on roll's view.

        Returns:
            ``(probs (6, N) float32, order (N,) int64)``: column ``i`` of
            ``probs`` holds the :data:`OUTCOMES` probabilities of board
            ``order[i]`` for its side on roll.
        """
        boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
        n = len(boards)
        if self.race_mlp is None or self.encoder.race_fn is None:
            if self.race_mlp is not None:  # no race_fn: route on the encoded race unit
                probs = self.predict(torch.from_numpy(self.encoder.encode(boards))).T
                return np.ascontiguousarray(probs.numpy()), np.arange(n, dtype=np.int64)
            return self._predict_boards_t("mlp", boards).numpy(), np.arange(n, dtype=np.int64)
        race = np.asarray(self.encoder.race_fn(boards), dtype=bool)
        routes = None if self.crashed_mlp is None else route_boards(boards, race, True)
        if routes is None or not (routes == CRASHED_ROUTE).any():  # two nets, or no crashed board
            order, contact = contact_first_order(race)
            bounds = [0, contact, contact, n]
        else:
            order = np.argsort(routes, kind="stable").astype(np.int64)
            bounds = [0, *np.cumsum(np.bincount(routes, minlength=len(NETS))).tolist()]
        grouped = boards[order]
        parts = [(name, bounds[r], bounds[r + 1]) for r, name in enumerate(NETS) if bounds[r + 1] > bounds[r]]
        if len(parts) == 1:
            return self._predict_boards_t(parts[0][0], grouped).numpy(), order
        probs = torch.empty((len(OUTCOMES), n), dtype=torch.float32)
        for name, lo, hi in parts:
            probs[:, lo:hi] = self._predict_boards_t(name, grouped[lo:hi])
        return probs.numpy(), order

    def _embedding(self, name: str):
        """``(table, bias, dense weights (D, H))`` of MLP ``name``'s first layer for
        :func:`nard_ai.model.embedding.first_layer`, rebuilt whenever its parameters change: an optimizer
        step or ``load_state_dict`` bumps a tensor's version counter. torch's *fused* optimizers
        update weights in place without bumping it (torch 2.13), so code that uses one calls
        :meth:`weights_changed` after each step (:class:`nard_ai.model.learn.Learner` does)."""
        linear = getattr(self, name)[0]
        weight, bias = linear.weight, linear.bias
        key = (id(weight), weight._version, weight.data_ptr(), id(bias), bias._version, bias.data_ptr())
        cache = self.__dict__.setdefault("_embedding_cache", {})
        cached = cache.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        w = weight.detach()
        groups = w[:, : 4 * SLOTS].reshape(w.shape[0], SLOTS, 4)
        table = torch.einsum("nk,hsk->snh", torch.from_numpy(unit_values()), groups).contiguous().numpy()
        fused_bias = (bias.detach() + w[:, CONSTANT_UNIT]).numpy()
        dense = w[:, dense_columns(self.encoder.name)].T.contiguous()
        cache[name] = (key, (table, fused_bias, dense))
        return cache[name][1]

    def weights_changed(self) -> None:
        """Drop the cached first-layer tables (call after changing weights in a way that does not bump
        their version counters, such as a step of a fused torch optimizer)."""
        self.__dict__.pop("_embedding_cache", None)

    def build_tables(self) -> None:
        """Build the cached first-layer tables now rather than on first use (for example before several
        threads evaluate with this network: they then only read them). No-op for other encoders."""
        if self._embeddable:
            for name in NETS:
                if getattr(self, name) is not None:
                    self._embedding(name)

    def _predict_boards_t(self, name: str, boards: np.ndarray) -> torch.Tensor:
        # softmax probabilities transposed, (6, N), of MLP `name` for boards (side on roll's view)
        mlp = getattr(self, name)
        if not self._embeddable:
            return _predict_t(mlp, torch.from_numpy(self.encoder.encode(boards)))
        table, bias, dense_w = self._embedding(name)
        threads = parallel_threads() if len(boards) >= PARALLEL_MIN_BOARDS else 1
        encoder = self.encoder.name
        pre, dense = first_layer(
            boards, encoder == "rich", table, bias, threads, expert=encoder == "expert",
            race_inputs=encoder == "expert_race",
        )  # fmt: skip
        h = torch.from_numpy(pre).addmm_(torch.from_numpy(dense), dense_w)
        layers = list(mlp)
        return _outputs_t(layers[2:], _IN_PLACE[type(layers[1])](h))

    @property
    def _embeddable(self) -> bool:
        # the first layer can be computed by nard_ai.model.embedding (td198-family encoders at version 1)
        return self.encoder.name in ("td198", "rich", "expert", "expert_race") and self.encoder.version == 1

    def probs6(self, boards: np.ndarray) -> np.ndarray:
        """Exclusive outcome probabilities ``(N, 6)`` float32 for the side on roll of each ``(N, 26)`` board."""
        probs, order = self.predict_grouped(boards)
        out = np.empty((probs.shape[1], len(OUTCOMES)), dtype=np.float32)
        out[order] = probs.T
        return out


@dataclass
class Checkpoint:
    """A loaded checkpoint (see the module docstring for the file's contract).

    Attributes:
        network: the network, in eval mode, on the CPU.
        games_trained: self-play games behind the weights.
        args: training hyperparameters as saved.
        optimizer_state: the optimizer's ``state_dict``, or ``None``.
        rng_state: saved RNG state, or ``None``.
        extra: free-form metadata.
        path: where it was read from.
    """

    network: Network
    games_trained: int = 0
    args: dict[str, Any] = field(default_factory=dict)
    optimizer_state: dict[str, Any] | None = None
    rng_state: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None


DIGEST_ALGORITHM = "sha256"


def _feed(h: Any, obj: Any) -> None:
    """Feed a canonical, type-tagged serialization of ``obj`` to the hash ``h``.

    Handles what checkpoints hold: tensors, dicts (keys sorted by their repr),
    lists and tuples (hashed alike: pickling may turn one into the other),
    str, bytes, bool, int, float and None.
    """
    if isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}:".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(obj, dict):
        h.update(f"D{len(obj)}:".encode())
        for key in sorted(obj, key=repr):
            _feed(h, key)
            _feed(h, obj[key])
    elif isinstance(obj, (list, tuple)):
        h.update(f"L{len(obj)}:".encode())
        for item in obj:
            _feed(h, item)
    elif isinstance(obj, (bytes, bytearray)):
        h.update(f"B{len(obj)}:".encode() + bytes(obj))
    elif obj is None or isinstance(obj, (bool, int, float, str)):
        text = repr(obj).encode()
        h.update(f"{type(obj).__name__[0]}{len(text)}:".encode() + text)
    else:
        raise TypeError(f"cannot digest a {type(obj).__name__} in a checkpoint")


METADATA_KEYS = (
    "format",
    "format_version",
    "layout_version",
    "encoder",
    "network",
    "games_trained",
    "args",
    "rng",
    "extra",
)
"""The checkpoint entries covered by the digest's ``"metadata"`` hash (everything but the tensors'
own entries and the digest)."""


def _metadata(payload: dict) -> dict:
    return {key: payload.get(key) for key in METADATA_KEYS}


def _digest(obj: Any) -> str | None:
    """SHA-256 hex digest of a state dict (``None`` for ``None``)."""
    if obj is None:
        return None
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()


def config_dict(config: NetworkConfig) -> dict:
    """A :class:`NetworkConfig` as checkpoints and the ONNX metadata store it (plain values; ``hidden`` a
    list; ``crashed_net`` and ``race_hidden`` only when set, so a network without them is described as
    before they existed)."""
    out = {**asdict(config), "hidden": list(config.hidden)}
    if not out["crashed_net"]:
        del out["crashed_net"]
    if config.race_hidden is None:
        del out["race_hidden"]
    else:
        out["race_hidden"] = list(config.race_hidden)
    return out


def nonfinite_tensors(state_dict: dict[str, torch.Tensor]) -> list[str]:
    """The names of the floating-point tensors of ``state_dict`` that hold a NaN or an infinity.

    Each tensor is summed in float64, one pass without a temporary: a NaN or an infinity makes the
    sum NaN or infinite, and finite float32 values cannot overflow it (``1e9 x 3.4e38`` is far below
    float64's ``1.8e308``), so the test is exact. About 1 ms for the 1.08 million weights of
    ``nard-expert.pt``, whose whole load takes about 20 ms (two CPU threads).
    """
    return [
        name
        for name, t in state_dict.items()
        if t.is_floating_point() and not math.isfinite(float(t.detach().sum(dtype=torch.float64)))
    ]


def _nonfinite_message(names: list[str]) -> str:
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"non-finite weights (NaN or infinity) in {shown}: the training run that made them diverged"


def save_checkpoint(
    path: str | os.PathLike,
    network: Network,
    *,
    games_trained: int = 0,
    args: dict[str, Any] | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    rng_state: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write a checkpoint atomically (temporary file in the same folder, fsync, ``os.replace``).

    The temporary file is locked while it is written; after the write, the unlocked temporary
    files that killed writes of the same checkpoint left are removed (:func:`remove_stale_temporaries`).
    Both are :mod:`nard_ai.model.atomic`'s (:func:`~nard_ai.model.atomic.atomic_write`).

    Args:
        path: destination file; its folder is created if needed.
        network: the network to save.
        games_trained: self-play games behind the weights.
        args: training hyperparameters (plain, picklable values).
        optimizer: its state is saved for an exact resume.
        rng_state: RNG state to restore on resume (plain values).
        extra: free-form metadata.

    Returns:
        The path written.

    Raises:
        ValueError: the network's weights are not all finite (``"PATH: not written: non-finite
            weights ..."``, :func:`nonfinite_tensors`): :func:`load_checkpoint` would refuse the
            file, so nothing is written and an existing file stays as it was.
        OSError: the folder cannot be made or written (:func:`~nard_ai.model.atomic.atomic_write`).
    """
    path = Path(path)
    state_dict = {k: v.detach().cpu().clone() for k, v in network.state_dict().items()}
    bad = nonfinite_tensors(state_dict)
    if bad:
        raise ValueError(f"{path}: not written: {_nonfinite_message(bad)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    enc = network.encoder
    optimizer_state = optimizer.state_dict() if optimizer is not None else None
    payload = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "layout_version": LAYOUT_VERSION,
        "encoder": {"name": enc.name, "version": enc.version, "size": enc.size},
        "network": config_dict(network.config),
        "state_dict": state_dict,
        "games_trained": int(games_trained),
        "args": dict(args or {}),
        "optimizer": optimizer_state,
        "rng": rng_state,
        "extra": dict(extra or {}),
    }
    payload["digest"] = {
        "algorithm": DIGEST_ALGORITHM,
        "state_dict": _digest(state_dict),
        "optimizer": _digest(optimizer_state),
        "metadata": _digest(_metadata(payload)),
    }
    return atomic_write(path, lambda f: torch.save(payload, f))


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read and check a checkpoint written by :func:`save_checkpoint`.

    Args:
        path: the checkpoint file.

    Returns:
        A :class:`Checkpoint` whose network is in eval mode.

    Raises:
        FileNotFoundError: if the file does not exist.
        ValueError: if the file cannot be read (``"PATH: cannot read the
            checkpoint: ..."``, an OS error such as a permission), is not a
            readable nard_ai checkpoint (``"PATH: not a readable nard_ai
            checkpoint (corrupt or truncated; ...)"`` whatever torch raised on
            its bytes), its digest does not match its contents (``"corrupt checkpoint PATH:
            digest mismatch ..."``), or its format version, board layout
            version or encoder does not match this code, or its tensors do not
            fit the declared network, or its weights are not all finite
            (``"PATH: non-finite weights (NaN or infinity) in NAMES: ..."``:
            :func:`nonfinite_tensors`, a diverged training run).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(missing_checkpoint_message(path))
    try:
        data = path.read_bytes()  # read here: an OSError is then the file's, not torch's on bad bytes
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the checkpoint: {exc.strerror or exc}") from exc
    try:
        # torch raises many kinds on a damaged file, an OSError "Invalid argument" among them when a
        # truncated zip's directory points past the end; its text can mislead
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ValueError(
            f"{path}: not a readable nard_ai checkpoint (corrupt or truncated; "
            f"torch.load failed with {type(exc).__name__})"
        ) from exc
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a nard_ai checkpoint (no 'format': {CHECKPOINT_FORMAT!r} entry)")
    _verify_digest(path, payload)
    if payload.get("format_version") != CHECKPOINT_VERSION:
        raise ValueError(
            f"{path}: checkpoint format version {payload.get('format_version')!r}, this code reads {CHECKPOINT_VERSION}"
        )
    if payload.get("layout_version") != LAYOUT_VERSION:
        raise ValueError(
            f"{path}: trained on board layout version {payload.get('layout_version')!r}, "
            f"this code uses layout version {LAYOUT_VERSION}"
        )
    try:
        enc_info = payload["encoder"]
        net_info = dict(payload["network"])
        enc = get_encoder(enc_info["name"], enc_info["version"])
        if enc.size != enc_info["size"]:
            raise ValueError(
                f"encoder {enc.key} has {enc.size} inputs, the checkpoint says {enc_info['size']}"
            )
        if (net_info["encoder"], net_info["encoder_version"]) != (enc.name, enc.version):
            raise ValueError("the network and encoder entries disagree")
        config = NetworkConfig(
            **{**net_info, "hidden": tuple(net_info["hidden"])}
        )  # race_hidden: a tuple there
        network = Network(config)
        network.load_state_dict(payload["state_dict"], strict=True)
    except (KeyError, TypeError, RuntimeError, ValueError) as exc:
        raise ValueError(f"{path}: checkpoint does not match this code: {exc}") from exc
    bad = nonfinite_tensors(network.state_dict())
    if bad:
        raise ValueError(f"{path}: {_nonfinite_message(bad)}; use an earlier checkpoint")
    network.eval()
    games_trained = payload.get("games_trained", 0)
    if isinstance(games_trained, bool) or not isinstance(games_trained, int) or games_trained < 0:
        raise ValueError(f"{path}: checkpoint does not match this code: games_trained {games_trained!r}")
    try:
        return Checkpoint(
            network=network,
            games_trained=games_trained,
            args=dict(payload.get("args") or {}),
            optimizer_state=payload.get("optimizer"),
            rng_state=payload.get("rng"),
            extra=dict(payload.get("extra") or {}),
            path=path,
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: checkpoint does not match this code: {exc}") from exc


def _verify_digest(path: Path, payload: dict) -> None:
    """Check the ``digest`` entry against the tensors (no entry: an older file, accepted)."""
    if "digest" not in payload:
        return
    digest = payload["digest"]
    if not isinstance(digest, dict) or digest.get("algorithm") != DIGEST_ALGORITHM:
        raise ValueError(f"corrupt checkpoint {path}: digest mismatch (unreadable digest entry)")
    for key in ("state_dict", "optimizer", "metadata"):
        if key == "metadata" and key not in digest:
            continue  # written before the digest covered the metadata
        try:
            actual = _digest(_metadata(payload) if key == "metadata" else payload.get(key))
        except TypeError as exc:
            raise ValueError(f"corrupt checkpoint {path}: digest mismatch ({key}: {exc})") from exc
        if actual != digest.get(key):
            raise ValueError(
                f"corrupt checkpoint {path}: digest mismatch ({key}: the file was damaged or edited)"
            )


def missing_checkpoint_message(path: str | Path) -> str:
    """Why ``path`` is not a checkpoint file to load: ``"no checkpoint at PATH"``, or ``"PATH is a
    directory, not a checkpoint file"`` where it names a directory."""
    path = Path(path)
    if path.is_dir():
        return f"{path} is a directory, not a checkpoint file"
    return f"no checkpoint at {path}"


def default_checkpoint_path() -> Path:
    """The default network, ``nard-expert.pt``: ``checkpoints/`` of the source tree (a clone or an
    editable install), else ``<sys.prefix>/share/nard_ai/checkpoints/`` where a wheel (``pip install
    .``) puts it. Returns the source-tree path when neither exists (loading it then says so)."""
    repo = Path(__file__).resolve().parents[2] / "checkpoints" / DEFAULT_CHECKPOINT_NAME
    if repo.is_file():
        return repo
    installed = Path(sys.prefix) / "share" / "nard_ai" / "checkpoints" / DEFAULT_CHECKPOINT_NAME
    return installed if installed.is_file() else repo


def shipped_checkpoints() -> tuple[Path, tuple[str, ...]]:
    """The folder of the shipped networks (the default network's, :func:`default_checkpoint_path`'s, as an
    absolute path) and the :data:`SHIPPED_CHECKPOINTS` found in it, the default first."""
    folder = default_checkpoint_path().parent
    return folder, tuple(name for name in SHIPPED_CHECKPOINTS if (folder / name).is_file())


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """The checkpoint file a user's ``path`` names: the one place where every command line (``nard
    --checkpoint``, agent specs) turns a path into a file.

    A path that exists is that path, whatever it holds (loading then says what is wrong with it). A path
    that does not exist and is a bare file name (no folder in it, ``./`` included) of a shipped network
    (:data:`SHIPPED_CHECKPOINTS`, ``nard-td198.pt``) is that network's file in the shipped folder
    (:func:`shipped_checkpoints`), so the names work from any folder. Anything else is returned as given
    (loading it says it is missing: :func:`shipped_checkpoints_note` tells the user where the shipped ones
    are).
    """
    text = os.fspath(path)
    given = Path(text)
    if given.exists() or os.path.basename(text) != text or text not in SHIPPED_CHECKPOINTS:
        return given
    folder, names = shipped_checkpoints()
    return folder / text if text in names else given


def shipped_checkpoints_note() -> str:
    """One clause for an error about a missing checkpoint: where the shipped networks are and their names
    (``"the shipped networks are in /abs/checkpoints: nard-expert.pt (the default), ...; give one by its
    file name alone from any folder, e.g. nard-td198.pt"``), or that none was found there."""
    folder, names = shipped_checkpoints()
    if not names:
        return f"no shipped network found (looked in {folder})"
    listed = ", ".join(f"{name} (the default)" if name == DEFAULT_CHECKPOINT_NAME else name for name in names)
    return (
        f"the shipped networks are in {folder}: {listed}; give one by its file name alone from any folder, "
        f"e.g. {names[-1]}"
    )
