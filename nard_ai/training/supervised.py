"""Supervised training of a network on labelled positions (issue 14, section 3).

A network (usually a TD(lambda) checkpoint) is fitted to the labels of a
labels folder (:mod:`nard_ai.training.store`): each row is a gnubg Position ID
(side on roll, before it rolls) and gnubg's five cumulative probabilities for
that side; they become the network's 6 exclusive outcomes
(:func:`nard_ai.model.network.gnubg_to_exclusive`) and the loss is the
cross-entropy between that target distribution and the network's softmax
(:func:`nard_ai.model.learn.td_loss`, the same loss TD uses against its
lambda-returns), on the network's own ``forward`` over its encoder's inputs
(contact and race nets routed as in play).

* Validation split: a position is held out when a seeded hash of its
  Position ID falls below ``val_fraction`` (:func:`validation_mask`), so the
  split depends on the position only: the same position is on the same side
  in every shard, every run and every labels folder made with the same seed.
* Optimizer: AdamW, minibatches in a seeded order, one pass over the training
  rows per epoch, at a constant learning rate or on a cosine schedule
  (:attr:`SupervisedConfig.lr_schedule`); early stopping when the validation
  loss has not improved for ``patience`` epochs; the best epoch's weights are kept.
* Logs: TensorBoard scalars ``losses/train``, ``losses/val``,
  ``losses/val_kl`` (cross-entropy minus the targets' entropy: 0 = a
  perfect fit) and ``eval/val_equity_mae`` (mean absolute error of the
  cubeless equity, points per game), per epoch.
* Checkpoint: :func:`nard_ai.model.network.save_checkpoint` (atomic), written at
  each new best epoch. It keeps the source checkpoint's ``games_trained``,
  ``args`` (its TD settings, so ``train.py --resume`` continues TD as before)
  and RNG state; the supervised run is described in
  ``extra["supervised"]`` (one entry per run, appended: its settings, source
  checkpoint, rows and epochs, and ``label_folders``, each folder it read as
  :func:`nard_ai.training.store.labels_provenance` records it: resolved path,
  shards, rows and a SHA-256 of the shards' digests). The AdamW state is
  not saved: TD's Adam must not inherit it.
* Divergence: a non-finite training or validation loss (NaN or infinity: a
  learning rate far too large) ends the run with
  :class:`~nard_ai.model.learn.TrainingDiverged`; the checkpoint keeps the
  last best epoch written (if any) and non-finite weights are never written.
* Interruption: ``should_stop`` (``train.py``: SIGINT, SIGTERM) ends the run
  between two minibatches; the best epoch so far is written as at the end of
  a run (its record says ``"interrupted": true``), and ``--resume`` on that
  checkpoint starts a new run from those weights (epoch 1, a new AdamW state,
  the schedule from its start: README, "Training and evaluation").

Runs are deterministic on the CPU for a seed and a thread count.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nard_ai.formats.position_id import boards_from_position_ids
from nard_ai.model.learn import TrainingDiverged, td_loss
from nard_ai.model.network import (
    NETS,
    OUTCOME_POINTS,
    Network,
    NetworkConfig,
    gnubg_to_exclusive,
    load_checkpoint,
    save_checkpoint,
)
from nard_ai.training.store import file_sha256, labels_provenance, read_labels

__all__ = [
    "LabelledSet",
    "SupervisedConfig",
    "EpochStats",
    "load_labelled",
    "validation_mask",
    "evaluate_loss",
    "train_supervised",
    "run_supervised",
    "widened",
]

log = logging.getLogger(__name__)


@dataclass
class LabelledSet:
    """Labelled positions in memory.

    Attributes:
        ids: Position IDs, ``N`` strings.
        boards: ``(N, 26)`` int8 boards, side on roll's view.
        targets: ``(N, 6)`` float32 exclusive outcome probabilities (rows sum to 1).
    """

    ids: list[str]
    boards: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, mask: np.ndarray) -> LabelledSet:
        idx = np.flatnonzero(mask)
        return LabelledSet([self.ids[i] for i in idx], self.boards[idx], self.targets[idx])


def exclusive_targets(p5: np.ndarray) -> np.ndarray:
    """gnubg cumulative probabilities ``(N, 5)`` -> exclusive targets ``(N, 6)`` float32, renormalised."""
    p6 = gnubg_to_exclusive(np.asarray(p5, dtype=np.float64))
    p6 /= p6.sum(axis=1, keepdims=True)  # the 6-decimal rounding leaves sums off 1 by ~1e-6
    return p6.astype(np.float32)


def load_labelled(folders: str | Path | Sequence[str | Path]) -> LabelledSet:
    """All complete label shards (:func:`nard_ai.training.store.read_labels`) of one labels folder, or of
    several in the order given, as boards and exclusive targets. A position labelled in two folders
    gives two rows (its two targets; both on the same side of the validation split, which depends on
    the position only: :func:`validation_mask`).

    Raises:
        FileNotFoundError: no such folder.
        ValueError: no folder, a folder named twice, a file where a folder is named, a damaged shard (a
            sidecar whose CSV is missing or does not match it: :func:`~nard_ai.training.store.read_labels`;
            an unfinished one, a CSV without a sidecar, is left out), a shard that does not parse, a
            malformed Position ID, or a folder with no labelled rows.
    """
    folders = [folders] if isinstance(folders, (str, Path)) else list(folders)
    if not folders:
        raise ValueError("no labels folder given")
    seen: dict[Path, str | Path] = {}
    ids: list[str] = []
    parts = []
    for folder in folders:
        key = Path(folder).resolve()
        if key in seen:
            raise ValueError(f"labels folder {folder} named twice (as {seen[key]} before)")
        seen[key] = folder
        i, p5 = read_labels(folder)
        if not i:
            raise ValueError(f"{folder}: no complete label shards")
        ids += i
        parts.append(p5)
    boards = boards_from_position_ids(ids)
    return LabelledSet(ids, boards, exclusive_targets(np.concatenate(parts)))


def validation_mask(ids: list[str], fraction: float, seed: int = 0) -> np.ndarray:
    """``(N,)`` bool: True for the held-out rows. A row is held out when the first 8 bytes of
    ``sha256(f"{seed}:{position_id}")``, read as a fraction of 2**64, are below ``fraction``; so the split
    is a function of the position and the seed only (not of the row order or the other rows)."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"fraction must be in [0, 1), got {fraction}")
    limit = int(fraction * 2**64)
    return np.fromiter(
        (int.from_bytes(hashlib.sha256(f"{seed}:{pid}".encode()).digest()[:8], "big") < limit for pid in ids),
        dtype=bool,
        count=len(ids),
    )


LR_SCHEDULES = ("constant", "cosine")
"""Learning-rate schedules of a supervised run (:class:`SupervisedConfig`)."""


def scheduled_lr(config: SupervisedConfig, step: int, total: int) -> float:
    """The learning rate of gradient step ``step`` (0-based) of ``total`` under ``config.lr_schedule``."""
    if config.lr_schedule == "cosine":
        return config.lr * 0.5 * (1.0 + math.cos(math.pi * min(step, total) / max(total, 1)))
    return config.lr


@dataclass(frozen=True)
class SupervisedConfig:
    """Settings of a supervised run (saved in the checkpoint's ``extra["supervised"]``)."""

    lr: float = 2e-4
    """AdamW learning rate"""
    weight_decay: float = 0.0
    """AdamW decoupled weight decay (0: none; the TD network was trained without any)"""
    batch_size: int = 512
    """rows per gradient step"""
    epochs: int = 20
    """at most this many passes over the training rows"""
    patience: int = 3
    """stop after this many epochs without a new best validation loss"""
    val_fraction: float = 0.05
    """share of positions held out for validation (by a hash of the Position ID)"""
    split_seed: int = 0
    """seed of the validation split's hash"""
    seed: int = 1
    """seed of the minibatch order"""
    lr_schedule: str = "constant"
    """``"constant"`` (``lr`` throughout) or ``"cosine"``: step ``t`` of ``T = epochs x steps per epoch``
    uses ``lr x (1 + cos(pi t / T)) / 2``, from ``lr`` down towards 0 at the last step of ``epochs``
    (Loshchilov and Hutter 2017, "SGDR", without restarts); an early stop ends it where it is"""

    def validate(self) -> None:
        if not (self.lr > 0 and np.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number, got {self.lr}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(
                f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {self.lr_schedule!r}"
            )
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        for name in ("batch_size", "epochs", "patience"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 < self.val_fraction < 1.0:
            raise ValueError(f"val_fraction must be in (0, 1), got {self.val_fraction}")


@dataclass
class EpochStats:
    epoch: int
    train_loss: float
    val_loss: float
    val_kl: float
    val_equity_mae: float
    seconds: float


@dataclass
class History:
    epochs: list[EpochStats] = field(default_factory=list)
    initial_val_loss: float = float("nan")
    initial_val_kl: float = float("nan")
    initial_val_equity_mae: float = float("nan")
    best_epoch: int = 0
    """0: no epoch beat the starting network (its weights are kept)"""
    stopped_early: bool = False
    interrupted: bool = False
    """``should_stop`` ended the run in the middle of an epoch (that epoch is not scored)"""

    @property
    def best_val_loss(self) -> float:
        losses = [e.val_loss for e in self.epochs if e.epoch == self.best_epoch]
        return losses[0] if losses else self.initial_val_loss


def _entropy(targets: np.ndarray) -> float:
    t = targets.astype(np.float64)
    return float(-(t * np.log(np.where(t > 0, t, 1.0))).sum(axis=1).mean())


@torch.no_grad()
def evaluate_loss(
    network: Network, x: torch.Tensor, targets: torch.Tensor, chunk: int = 8192
) -> tuple[float, float]:
    """``(mean cross-entropy, mean |equity error|)`` of ``network`` on encoded inputs and targets."""
    was_training = network.training
    network.eval()
    ce, mae = 0.0, 0.0
    points = torch.from_numpy(OUTCOME_POINTS)
    for s in range(0, len(x), chunk):
        logits = network(x[s : s + chunk])
        t = targets[s : s + chunk]
        ce += float(-(t * torch.log_softmax(logits, dim=-1)).sum())
        mae += float((torch.softmax(logits, dim=-1) @ points - t @ points).abs().sum())
    network.train(was_training)
    return ce / len(x), mae / len(x)


def train_supervised(
    network: Network,
    train: LabelledSet,
    val: LabelledSet,
    config: SupervisedConfig = SupervisedConfig(),
    *,
    writer=None,
    on_best: Callable[[History], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> History:
    """Fit ``network`` (in place) to ``train`` with early stopping on ``val``; it ends with the best
    epoch's weights (or its starting ones when no epoch improved the validation loss).

    Args:
        writer: a TensorBoard ``SummaryWriter`` (or ``None``); scalars per epoch, epoch 0 = the start.
        on_best: called after each epoch that sets a new best validation loss (e.g. to save a checkpoint).
        should_stop: polled between minibatches; True ends the run after restoring the best weights.

    Parameters whose ``requires_grad`` is False (the nets :func:`run_supervised` freezes) are left out
    of the optimizer, so they keep their values bit for bit.

    Raises:
        ValueError: a bad ``config``, no training or no validation rows, every parameter frozen, or a
            starting network whose validation loss is not finite (its weights are not).
        TrainingDiverged: a training minibatch's loss or an epoch's validation loss is NaN or
            infinite (the run diverged: a learning rate far too large); the network is put back to
            the best epoch's weights first (``on_best`` was never called with non-finite ones: NaN
            is never a new best).
    """
    config.validate()
    if len(train) == 0 or len(val) == 0:
        raise ValueError(f"need training and validation rows, got {len(train)} and {len(val)}")
    enc = network.encoder
    x_train = torch.from_numpy(enc.encode(train.boards))
    t_train = torch.from_numpy(train.targets)
    x_val = torch.from_numpy(enc.encode(val.boards))
    t_val = torch.from_numpy(val.targets)
    val_entropy = _entropy(val.targets)
    # frozen nets (run_supervised's train_nets) are not the optimizer's: they stay as they are
    trainable = [q for q in network.parameters() if q.requires_grad]
    if not trainable:
        raise ValueError("every parameter of the network is frozen: nothing to train")
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=config.weight_decay)
    generator = torch.Generator().manual_seed(config.seed)
    steps_per_epoch = -(-len(x_train) // config.batch_size)
    total_steps, step = config.epochs * steps_per_epoch, 0

    history = History()
    loss0, mae0 = evaluate_loss(network, x_val, t_val)
    if not math.isfinite(loss0):
        raise ValueError(f"the starting network's validation loss is {loss0}: its weights are not finite")
    history.initial_val_loss, history.initial_val_kl, history.initial_val_equity_mae = (
        loss0,
        loss0 - val_entropy,
        mae0,
    )
    if writer is not None:
        writer.add_scalar("losses/val", loss0, 0)
        writer.add_scalar("losses/val_kl", loss0 - val_entropy, 0)
        writer.add_scalar("eval/val_equity_mae", mae0, 0)
    log.info("start: val loss %.5f (KL %.5f), equity MAE %.4f", loss0, loss0 - val_entropy, mae0)
    best_loss = loss0
    best_state = {k: v.detach().clone() for k, v in network.state_dict().items()}
    since_best = 0
    network.train()
    try:
        for epoch in range(1, config.epochs + 1):
            t0 = time.perf_counter()
            order = torch.randperm(len(x_train), generator=generator)
            total, seen = 0.0, 0
            for s in range(0, len(order), config.batch_size):
                if should_stop():
                    break
                idx = order[s : s + config.batch_size]
                if config.lr_schedule != "constant":
                    for group in optimizer.param_groups:
                        group["lr"] = scheduled_lr(config, step, total_steps)
                step += 1
                loss = td_loss(network(x_train[idx]), t_train[idx])
                value = loss.item()
                if not math.isfinite(value):  # diverged: every later step would stay there
                    raise TrainingDiverged(
                        f"non-finite training loss ({value}) in epoch {epoch}, minibatch "
                        f"{s // config.batch_size + 1}"
                    )
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total += value * len(idx)
                seen += len(idx)
            if seen < len(order):  # interrupted mid-epoch: not a full epoch, not scored
                log.info("stopped in epoch %d", epoch)
                history.interrupted = True
                break
            network.weights_changed()
            val_loss, val_mae = evaluate_loss(network, x_val, t_val)
            if not math.isfinite(val_loss):  # the last step overflowed the weights
                raise TrainingDiverged(f"non-finite validation loss ({val_loss}) after epoch {epoch}")
            stats = EpochStats(
                epoch, total / seen, val_loss, val_loss - val_entropy, val_mae, time.perf_counter() - t0
            )
            history.epochs.append(stats)
            if writer is not None:
                writer.add_scalar("losses/train", stats.train_loss, epoch)
                writer.add_scalar("losses/val", stats.val_loss, epoch)
                writer.add_scalar("losses/val_kl", stats.val_kl, epoch)
                writer.add_scalar("eval/val_equity_mae", stats.val_equity_mae, epoch)
                writer.add_scalar("charts/epoch_seconds", stats.seconds, epoch)
            log.info(
                "epoch %d: train %.5f  val %.5f (KL %.5f)  equity MAE %.4f  %.1fs",
                epoch, stats.train_loss, val_loss, stats.val_kl, val_mae, stats.seconds,
            )  # fmt: skip
            if val_loss < best_loss:
                best_loss, history.best_epoch, since_best = val_loss, epoch, 0
                best_state = {k: v.detach().clone() for k, v in network.state_dict().items()}
                if on_best is not None:
                    network.eval()
                    on_best(history)
                    network.train()
            else:
                since_best += 1
                if since_best >= config.patience:
                    history.stopped_early = True
                    break
    finally:
        network.load_state_dict(best_state)
        network.weights_changed()
        network.eval()
    return history


def run_supervised(
    label_dir: str | Path | Sequence[str | Path],
    checkpoint: str | Path,
    config: SupervisedConfig = SupervisedConfig(),
    *,
    network: Network | None = None,
    writer=None,
    should_stop: Callable[[], bool] = lambda: False,
    init_from: str | Path | None = None,
    fresh: tuple[str, ...] = (),
    hidden: tuple[int, ...] | None = None,
    race_hidden: tuple[int, ...] | None = None,
    train_nets: tuple[str, ...] = (),
) -> History:
    """Train on ``label_dir`` (a labels folder, or several: :func:`load_labelled`) and write
    ``checkpoint`` at each new best epoch.

    ``network=None`` continues the network in ``checkpoint`` (its TD settings, games and RNG state are
    kept); else ``network`` (e.g. a fresh one) is trained and written there. With ``init_from`` (a
    checkpoint path) and ``network``, training starts from that checkpoint's network widened to
    ``network``'s encoder (and given a crashed net when ``network`` has one: :func:`widened`; ``network``
    only names the encoder, the crashed net and, when set, a new race net shape ``race_hidden``, whose
    race net must then be fresh), recorded as the run's
    source; the nets named in ``fresh`` start from random weights instead (torch's seed: :func:`widened`);
    ``hidden`` (with ``init_from``) gives the contact and crashed nets new hidden layers (:func:`widened`:
    wider copies, or fresh nets of any shape; ``None``: the checkpoint's), and ``race_hidden`` the race
    net (``None``: ``network.config.race_hidden``, else the checkpoint's), even where it equals
    ``hidden`` (which ``network``'s config would store as None).

    ``train_nets`` (names from :data:`PHASE_NETS`; empty: every net) are the nets that learn: the
    others are frozen (their weights come out bit for bit as they went in) and the rows the network
    routes to them (:meth:`nard_ai.model.network.Network.routes`) are left out of training and
    validation, so the validation loss is that of the trained nets' positions. For example
    ``("contact", "crashed")`` fits those two nets to contact and crashed labels without the race
    net also training on the labels' few race or bear-off rows (docs/GENERATIONS.md, "Generation 12 trial").

    Raises:
        TrainingDiverged: the run diverged (:func:`train_supervised`); the message says what
            ``checkpoint`` then holds (the last best epoch written, or nothing written by this run).
        ValueError: ``init_from`` without ``network``, or an encoder that does not extend the
            checkpoint's, or nothing to widen (the same encoder, no crashed net added, no fresh net), or
            a crashed net for a checkpoint without a race net, or a ``fresh`` name the network lacks
            (:func:`widened`), or ``fresh`` without ``init_from``, or a ``fresh`` net with no training
            rows of its phase (it would stay random); a ``train_nets`` name the network lacks, a ``fresh``
            net not in ``train_nets`` (when given), ``train_nets`` leaving out a net of a new network
            (neither resumed nor ``init_from``: it would stay random), no training or validation rows of
            the trained nets; a bad labels folder or checkpoint.
    """
    config.validate()
    checkpoint = Path(checkpoint)
    resumed = network is None
    if network is None:
        ckpt = load_checkpoint(checkpoint)
        network, games, args, rng, extra = (
            ckpt.network,
            ckpt.games_trained,
            ckpt.args,
            ckpt.rng_state,
            ckpt.extra,
        )
        source = {"path": str(checkpoint), "sha256": file_sha256(checkpoint)}
    else:
        games, args, rng, extra, source = 0, {}, None, {}, None
    folders = [label_dir] if isinstance(label_dir, (str, Path)) else list(label_dir)
    labels = [str(f) for f in folders]
    where = ", ".join(labels)  # the folders, for messages
    untrained = [name for name in _nets_of(network) if name not in train_nets]
    if train_nets and untrained and not resumed and init_from is None:
        raise ValueError(
            f"train nets {', '.join(train_nets)}: a new network's {', '.join(untrained)} would stay random "
            "(train every net, or start from a checkpoint: resume or init_from, train.py --resume or --init-from)"
        )
    data = load_labelled(folders)
    if init_from is not None:
        if network is None:
            raise ValueError("init_from needs a network naming the encoder to widen to")
        start = load_checkpoint(init_from).network
        network = widened(
            start, network.encoder.name, data.boards[:4096], crashed_net=network.config.crashed_net,
            fresh=fresh, race_hidden=race_hidden if race_hidden is not None else network.config.race_hidden,
            hidden=hidden,
        )  # fmt: skip
        source = {
            "path": str(init_from),
            "sha256": file_sha256(Path(init_from)),
            "widened_to": network.encoder.key,
            "crashed_net": network.config.crashed_net,
            **({"fresh": list(fresh)} if fresh else {}),
            **({"race_hidden": list(network.config.race_hidden)} if network.config.race_hidden else {}),
            **(
                {"hidden": list(network.config.hidden)}
                if network.config.hidden != start.config.hidden
                else {}
            ),
        }
    elif fresh:
        raise ValueError("fresh nets need init_from (the checkpoint whose other nets are kept)")
    elif hidden is not None or race_hidden is not None:
        raise ValueError("hidden and race_hidden need init_from (a new network has the shape of network)")
    held_out = validation_mask(data.ids, config.val_fraction, config.split_seed)
    train, val = data.subset(~held_out), data.subset(held_out)
    frozen, left_out = [], 0
    routes = network.routes(train.boards) if train_nets or fresh else None  # one pass serves both
    if train_nets:
        frozen, (train, val), left_out = _select_nets(network, train_nets, fresh, train, val, routes, where)
    if fresh:  # a fresh net is among train_nets (checked there), so the selection kept these rows
        for name in fresh:
            if routes is None or not (routes == PHASE_NETS.index(name)).any():
                raise ValueError(
                    f"fresh net {name!r} would stay untrained: {where}: no {name} positions "
                    "in its training rows"
                )
    log.info(
        "%s: %d positions, %d for training, %d held out%s", where, len(data), len(train),
        len(val), f", {left_out} of other nets left out" if train_nets else "",
    )  # fmt: skip
    if not len(val) or not len(train):
        raise ValueError(_split_error(where, len(train) + len(val), len(val), config.val_fraction))
    run_info: dict[str, Any] = {
        "labels": labels[0] if len(labels) == 1 else labels,
        "label_folders": [labels_provenance(f) for f in folders],
        "config": asdict(config),
        "source": source,
        "rows": {"train": len(train), "val": len(val), **({"left_out": left_out} if train_nets else {})},
        **({"train_nets": list(train_nets)} if train_nets else {}),
    }

    def save(history: History) -> None:
        entry = {
            **run_info,
            "best_epoch": history.best_epoch,
            "initial_val_loss": history.initial_val_loss,
            "val_loss": history.best_val_loss,
            "epochs": [asdict(e) for e in history.epochs],
            **({"interrupted": True} if history.interrupted else {}),
        }
        runs = [*extra.get("supervised", []), entry]
        save_checkpoint(
            checkpoint, network, games_trained=games, args=args, rng_state=rng,
            extra={**extra, "supervised": runs},
        )  # fmt: skip

    best_saved: list[int] = []  # the epochs on_best wrote

    def on_best(history: History) -> None:
        save(history)
        best_saved.append(history.best_epoch)

    for module in frozen:
        module.requires_grad_(False)
    try:
        history = train_supervised(
            network, train, val, config, writer=writer, on_best=on_best, should_stop=should_stop
        )
    except TrainingDiverged as exc:
        kept = (
            f"{checkpoint} holds epoch {best_saved[-1]}, the best before it"
            if best_saved
            else f"{checkpoint} left as it was"
            if resumed
            else f"nothing written to {checkpoint}"
        )
        raise TrainingDiverged(f"{exc}; {kept}") from exc
    finally:
        for module in frozen:
            module.requires_grad_(True)
    if history.best_epoch:
        save(history)  # the final record (epochs after the best one, early stop)
    elif not resumed:
        save(history)  # a new network (fresh or widened): written as it started, with the run's record
        log.info("no epoch beat the starting network: %s holds it as it started", checkpoint)
    else:
        log.info("no epoch beat the starting network: %s left as it was", checkpoint)
    return history


def _split_error(where: str, rows: int, held: int, fraction: float) -> str:
    """The message of a validation split that leaves no training or no held-out rows (of ``rows``)."""
    need = math.ceil(3 / fraction)  # held out about 3 on average
    return (
        f"{where}: the validation split (a {fraction * 100:g}% share, by a hash of each Position ID) holds out "
        f"{'none' if not held else 'all'} of the {rows} labelled position{'s' if rows != 1 else ''} trained "
        f"here, leaving no {'validation' if not held else 'training'} rows: label more positions (about "
        f"{need:,} or more hold out a few)"
    )


PHASE_NETS = ("contact", "crashed", "race")
"""The nets of a network by phase (``mlp``, ``crashed_mlp``, ``race_mlp``), as :func:`widened`'s
``fresh`` names them."""


def _nets_of(network: Network) -> dict[str, torch.nn.Module]:
    """The nets ``network`` has, by their :data:`PHASE_NETS` name, in that order (route numbers are
    indices into :data:`nard_ai.model.network.NETS`, which :data:`PHASE_NETS` names in the same
    order)."""
    modules = {name: getattr(network, attr) for name, attr in zip(PHASE_NETS, NETS, strict=True)}
    return {name: module for name, module in modules.items() if module is not None}


def _select_nets(
    network: Network,
    train_nets: tuple[str, ...],
    fresh: tuple[str, ...],
    train: LabelledSet,
    val: LabelledSet,
    train_routes: np.ndarray | None,
    where: str,
) -> tuple[list[torch.nn.Module], tuple[LabelledSet, LabelledSet], int]:
    """For :func:`run_supervised`'s ``train_nets``: ``(the modules to freeze, (the training rows, the
    held-out rows) the network routes to the trained nets, how many rows were left out)``.

    ``train_routes`` are ``network.routes(train.boards)`` (computed once by the caller); route numbers
    are indices into :data:`nard_ai.model.network.NETS` (``mlp``, ``crashed_mlp``, ``race_mlp``),
    which :data:`PHASE_NETS` names in the same order.

    Raises:
        ValueError: a name the network lacks, a ``fresh`` net not among ``train_nets``, no training or
            no held-out rows of the trained nets (``where`` names the labels in the message).
    """
    modules = _nets_of(network)
    nets = list(modules)
    for name in train_nets:
        if name not in nets:
            raise ValueError(f"train net {name!r}: the network's nets are {', '.join(nets)}")
    for name in fresh:
        if name not in train_nets:
            raise ValueError(
                f"fresh net {name!r} is not among the trained nets ({', '.join(train_nets)}): it would stay random"
            )
    kept = [PHASE_NETS.index(name) for name in train_nets]

    def rows(part: LabelledSet, routes: np.ndarray | None) -> LabelledSet:
        return part if routes is None else part.subset(np.isin(routes, kept))

    chosen = (rows(train, train_routes), rows(val, network.routes(val.boards)))
    if not len(chosen[0]) or not len(chosen[1]):
        raise ValueError(
            f"{where}: {len(chosen[0])} training and {len(chosen[1])} held-out rows of the nets "
            f"{', '.join(train_nets)}: need both"
        )
    left_out = len(train) + len(val) - len(chosen[0]) - len(chosen[1])
    return [modules[name] for name in nets if name not in train_nets], chosen, left_out


def widened(
    source: Network,
    encoder: str,
    probe: np.ndarray,
    *,
    crashed_net: bool = False,
    fresh: tuple[str, ...] = (),
    race_hidden: tuple[int, ...] | None = None,
    hidden: tuple[int, ...] | None = None,
) -> Network:
    """A network over ``encoder`` that computes exactly what ``source`` computes, to start supervised training from.

    ``encoder``'s inputs must begin with all of ``source``'s encoder's inputs, unit for unit (``expert``
    extends ``rich``: :mod:`nard_ai.model.encoding`), or be the same encoder when only a crashed net
    is added. The new network has ``source``'s shape (hidden layers, activation, race net); each MLP's
    first layer gets ``source``'s weights for the shared inputs and zero weights for the new ones, so
    its outputs equal ``source``'s on every board and training starts where ``source`` is (the
    "net2net" widening of an input layer). With ``crashed_net`` (or a source that has one) the new
    network has a crashed net (:class:`nard_ai.model.network.NetworkConfig`); when ``source`` has
    none, it starts as a copy of ``source``'s contact net, which valued those positions until now.
    The nets named in ``fresh`` are not copied: they keep their new random weights (from torch's
    seed), for a net to be trained anew on the new inputs (a race net over ``expert_race``'s race
    inputs fits better from scratch than from the old race net: docs/GENERATIONS.md, "Generation 9: race inputs").

    ``hidden`` gives the contact and crashed nets new hidden layers. A copied net may only grow: as
    many layers, none narrower, widened the way the inputs are: each layer's old units keep their
    weights and get zero weights from the new units below them; the new units start from torch's
    random initialisation and reach the outputs through zero weights, so the outputs are unchanged
    and the new units differ from the start (Chen, Goodfellow and Shlens 2016, "Net2Net", with zero
    outgoing weights instead of split units). A net of another depth or with a narrower layer must
    be in ``fresh``.

    Args:
        source: the trained network.
        encoder: the new encoder's registered name (its registered version).
        probe: ``(N, 26)`` int8 boards on which the shared inputs are checked to be equal.
        crashed_net: give the new network a crashed net.
        fresh: names from :data:`PHASE_NETS` of the new network's nets to leave at random weights.
        race_hidden: a new shape for the race net (hidden layer sizes,
            :class:`nard_ai.model.network.NetworkConfig`); the race net must then be in ``fresh``
            (weights of another shape cannot be copied). ``None``: the source's race net shape.

    Raises:
        ValueError: the new encoder is not wider (and no crashed net is added: the same encoder and a
            source that already has one is nothing to widen), or its first units differ from
            ``source``'s encoder's on a probe board; a crashed net for a source without a race net;
            a ``fresh`` name that is not one of the new network's nets; a ``race_hidden`` other
            than the source's race net shape without ``"race"`` in ``fresh``, or for a source without
            a race net; a ``hidden`` of another depth, or with a layer narrower than the source's, for a
            contact or crashed net not in ``fresh``.
    """
    cfg = source.config
    hidden = cfg.hidden if hidden is None else tuple(int(h) for h in hidden)
    if race_hidden is not None:
        race_hidden = tuple(int(h) for h in race_hidden)
        if not cfg.race_net:
            raise ValueError(
                "race_hidden (train.py --race-hidden): the checkpoint has no race net to reshape"
            )
        if race_hidden != cfg.net_hidden("race_mlp") and "race" not in fresh:
            raise ValueError(
                f"race net shape {list(race_hidden)} (race_hidden, train.py --race-hidden): the checkpoint's "
                f"race net has hidden layers "
                f"{list(cfg.net_hidden('race_mlp'))}; a race net of another shape starts from random "
                "weights: name it in fresh (--fresh-nets race)"
            )
    else:  # the source's race shape (NetworkConfig stores it as None where it equals the new ``hidden``)
        race_hidden = cfg.net_hidden("race_mlp") if cfg.race_net else None
    crashed = crashed_net or cfg.crashed_net
    nets = ("contact",) + (("crashed",) if crashed else ()) + (("race",) if cfg.race_net else ())
    for name in fresh:
        if name not in nets:
            raise ValueError(
                f"fresh net {name!r}: the new network's nets are {', '.join(nets)}"
                + ("" if name in PHASE_NETS else f" (of {', '.join(PHASE_NETS)})")
            )
    if hidden != cfg.hidden and (
        len(hidden) != len(cfg.hidden) or any(n < o for n, o in zip(hidden, cfg.hidden, strict=True))
    ):
        copied = [name for name in nets if name != "race" and name not in fresh]
        if copied:
            names = " and ".join(copied)
            raise ValueError(
                f"hidden layers {list(hidden)} (train.py --hidden x --layers): the checkpoint's {names} "
                f"{'nets have' if len(copied) > 1 else 'net has'} {list(cfg.hidden)}; a copied net only gets "
                f"wider layers, as many: name {names} in fresh (--fresh-nets {','.join(copied)}) to start "
                f"{'them' if len(copied) > 1 else 'it'} from random weights"
            )
    if crashed_net and not cfg.race_net:
        raise ValueError(
            "the checkpoint has no race net, and a crashed net needs one (gnubg's contact, crashed and race nets)"
        )
    target = Network(
        NetworkConfig(
            encoder=encoder, hidden=hidden, activation=cfg.activation, race_net=cfg.race_net,
            crashed_net=crashed, race_hidden=race_hidden,
        )
    )  # fmt: skip
    old, new = source.encoder, target.encoder
    adds_crashed = crashed and not cfg.crashed_net
    if new.key == old.key and not adds_crashed and not fresh and hidden == cfg.hidden:
        raise ValueError(
            f"encoder {new.key} is the checkpoint's"
            + (
                " and the checkpoint already has a crashed net"
                if cfg.crashed_net
                else " and no crashed net is added"
            )
            + f", no net is fresh and the hidden layers {list(hidden)} are its own (train.py --hidden x --layers)"
            + ": nothing to widen (to fine-tune the checkpoint as it is, copy it and pass the copy to "
            "train.py --supervised --resume --checkpoint COPY)"
        )
    if new.key != old.key and new.size <= old.size:
        raise ValueError(
            f"encoder {new.key} ({new.size} inputs) is not wider than {old.key} ({old.size}), the "
            f"checkpoint's (--init-from widens a network; give --encoder {old.name} or a wider one, or fine-tune "
            "a copy of it with train.py --supervised --resume --checkpoint COPY)"
        )
    probe = np.ascontiguousarray(probe, dtype=np.int8)
    if not np.array_equal(new.encode(probe)[:, : old.size], old.encode(probe)):
        raise ValueError(
            f"encoder {new.key}'s first {old.size} inputs are not {old.key}'s: it does not extend it"
        )
    with torch.no_grad():
        pairs = [("contact", source.mlp, target.mlp)]
        if source.race_mlp is not None:
            pairs.append(("race", source.race_mlp, target.race_mlp))
        if target.crashed_mlp is not None:
            pairs.append(
                (
                    "crashed",
                    source.crashed_mlp if source.crashed_mlp is not None else source.mlp,
                    target.crashed_mlp,
                )
            )
        for name, src, dst in pairs:
            if name in fresh:
                continue
            for a, b in zip(src, dst, strict=True):
                if isinstance(a, torch.nn.Linear):  # old units: old weights, zero from new inputs or units
                    units, inputs = a.weight.shape  # new units (rows beyond ``units``) keep their random init
                    b.weight[:units].zero_()
                    b.weight[:units, :inputs] = a.weight
                    b.bias[:units] = a.bias
    target.weights_changed()
    target.eval()
    return target
