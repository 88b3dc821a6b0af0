"""train.py's command line and run loop: TD(lambda) self-play training, and supervised training on labelled
positions (``--supervised``), behind the repository's ``train.py`` script.

:class:`Args` is the command line (one field per flag, its docstring the help text) with its checks
(:meth:`Args.validate`, :func:`check_given`); :func:`main` runs it: a new network or a ``--resume``, self-play
rounds (:func:`nard_ai.play.selfplay.play_round`, TD(lambda) in :class:`nard_ai.model.learn.Learner`,
Ray workers with ``--ray``), a match against pubeval every ``--eval-every`` games
(:func:`nard_ai.play.arena.play_match`), TensorBoard logs (``charts/``, ``losses/``, ``eval/``) and atomic
checkpoints (:func:`nard_ai.model.network.save_checkpoint`); with ``--supervised`` it hands the run to
:func:`nard_ai.training.supervised.run_supervised`.

Errors: bad input is one ``train.py: error: ...`` line on stderr and exit status 2, before anything is written;
a run whose loss or weights turn non-finite stops with status 1 (the last good checkpoint stays); an
interrupted run (Ctrl-C, SIGTERM) saves and exits 130 or 143. It lives in ``interfaces`` (the top rank)
because it builds agents (:mod:`nard_ai.agents`) and parses the command line (:mod:`nard_ai.interfaces.cli`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

import nard_ai  # noqa: F401  (before torch: it sets OpenMP's wait policy that torch's OpenMP reads on loading)

# isort: split
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from nard_ai.agents import agent_from_spec
from nard_ai.eval.evaluator import NetworkEvaluator
from nard_ai.interfaces.cli import check_counts
from nard_ai.model.atomic import check_writable
from nard_ai.model.encoding import ENCODERS
from nard_ai.model.learn import Learner, TrainingDiverged, check_finite_weights
from nard_ai.model.network import (
    CRASHED_ENCODERS,
    Network,
    NetworkConfig,
    load_checkpoint,
    remove_stale_temporaries,
    save_checkpoint,
)
from nard_ai.play.arena import play_match
from nard_ai.play.selfplay import RoundStats, play_round, rng_from_state, rng_state
from nard_ai.search.lookahead import Agent
from nard_ai.training.argtypes import MAX_SEED  # torch.manual_seed takes at most a 64-bit unsigned seed
from nard_ai.training.supervised import LR_SCHEDULES, PHASE_NETS

LIMITS = {
    "hidden": 4096,
    "pool": 16_384,
    "batch_size": 65_536,
    "workers": 64,
    "eval_games": 1_000_000,
    "threads": 256,
    "epochs": 100_000,
    "patience": 100_000,
}
"""Upper bounds of the size arguments (the TD network nard-rich.pt: 128 hidden units, pool 1024, batch 512,
2 workers; supervised runs: 20 epochs, patience 3; the longest run in docs/GENERATIONS.md asked for 300). Beyond them a run would not fit in memory or would take no sensible time; checked
before anything is written."""
MAX_POOL_X_HIDDEN = 4_194_304
"""Each ply the search evaluates the afterstates of every game in the pool (about 30 a game, many
more on doubles), with ``hidden`` float32 activations twice: ``pool * hidden`` up to this
(1024 x 4096, 16,384 x 256) keeps that near 1 GB."""
MAX_BATCH_X_HIDDEN = 16_777_216
"""A gradient step holds several ``(batch_size, hidden)`` float32 tensors: ``batch_size * hidden``
up to this (64 MB each; 4096 x 4096, 65,536 x 256)."""


def _comma_list(text: str) -> list[str]:
    """A comma-separated flag's entries, spaces around each stripped (empty entries kept, for the checks)."""
    return [part.strip() for part in text.split(",")]


def check_sizes(pool: int, hidden: int, batch_size: int, flag: str = "--hidden") -> None:
    """Raise ``ValueError`` (one line naming the flags) when ``pool`` or ``batch_size`` times ``hidden``
    is above :data:`MAX_POOL_X_HIDDEN` or :data:`MAX_BATCH_X_HIDDEN`; ``flag`` names where the width came
    from (``--race-hidden``: the race net's widest layer)."""
    if pool * hidden > MAX_POOL_X_HIDDEN:
        raise ValueError(
            f"argument --pool: --pool x {flag} must be at most {MAX_POOL_X_HIDDEN:,} (each ply evaluates "
            f"about 30 afterstates per game with that many activations), got {pool:,} x {hidden:,}"
        )
    if batch_size * hidden > MAX_BATCH_X_HIDDEN:
        raise ValueError(
            f"argument --batch-size: --batch-size x {flag} must be at most {MAX_BATCH_X_HIDDEN:,}, "
            f"got {batch_size:,} x {hidden:,}"
        )


@dataclass
class Args:
    """TD(lambda) self-play training of a network (greedy move choice at --ply, 0 by default)."""

    exp_name: str = "nard-rich"
    """experiment name, a plain file name (no / or \\, not . or ..); TensorBoard logs go to
    runs/{exp_name}__{seed}__{unix time} under the working directory"""
    seed: int = 1
    """seed of the initial weights, the dice and the sample order, 0 .. 2**64 - 1 (runs are deterministic on
    CPU, for a seed and --workers); on a TD --resume the checkpoint's generator state continues instead (a
    warning says so when --seed differs from the checkpoint's)"""
    games: int = 200_000
    """total self-play games behind the network; with --resume, training continues up to this total (TD only:
    an error with --supervised)"""
    checkpoint: str = ""
    """checkpoint file, written atomically every --checkpoint-every games and at exit, its folder made if missing
    (default: checkpoints/{exp_name}__{seed}.pt under the working directory; the TD network is
    checkpoints/nard-rich.pt)"""
    resume: bool = False
    """continue the network, optimizer, game counter and RNG saved in --checkpoint"""
    force: bool = False
    """start a new network even if --checkpoint exists (it is overwritten); not with --resume"""
    encoder: str = "rich"
    """input encoder (nard_ai.model.encoding: td198 = TD-Gammon's raw inputs, rich = td198 plus hand-made features);
    ignored on --resume"""
    race_net: bool = True
    """a separate network for race positions (needs an encoder with a race unit, e.g. rich); ignored on --resume"""
    crashed_net: bool = False
    """a third network for gnubg's crashed positions (needs --race-net and encoder rich or expert); ignored on
    --resume; with --init-from it starts as a copy of the checkpoint's contact network"""
    hidden: int = 128
    """hidden units of each hidden layer (--layers), 1 .. 4096, with --pool x --hidden <= 4,194,304 and --batch-size x --hidden
    <= 16,777,216; ignored on --resume (the checkpoint's network is used)"""
    layers: int = 1
    """hidden layers, each of --hidden units, 1 .. 4; ignored on --resume"""
    activation: str = "sigmoid"
    """hidden activation: sigmoid, tanh or relu; ignored on --resume"""
    race_hidden: str = ""
    """the race net's own hidden layer sizes (default: --hidden x --layers), comma-separated, e.g. 512,512 (1 .. 4
    layers of 1 .. 4096; the --pool and --batch-size limits apply to its widest layer); with --init-from, a shape
    other than the checkpoint's race net's needs the race net in --fresh-nets; ignored on --resume"""
    lr: float = 1e-3
    """Adam learning rate"""
    lam: float = 0.7
    """TD lambda (0 = TD(0), 1 = Monte Carlo)"""
    ply: int = 0
    """search depth of the self-play move choice, gnubg numbering (0 = greedy on the network; 1 = also average
    over the opponent's 21 replies, and the targets come from that lookahead; about 100x slower with a trained
    network, more with an untrained one, whose games last longer)"""
    pool: int = 1024
    """self-play games in flight at once (the batch of each network call is all their afterstates), 1 .. 16384"""
    workers: int = 2
    """self-play threads, 1 .. 64: the pool is split into this many shards, each played by its own thread while
    another takes the gradient steps (nard_ai.play.selfplay, "Workers"); results depend on it (not on the machine)"""
    batch_size: int = 512
    """training samples (pre-roll states) per gradient step, 1 .. 65536"""
    checkpoint_every: int = 5000
    """games per round; a round ends with no game in flight (its pool drains) and writes the checkpoint, so the
    result depends on it: resume with the same value to continue exactly"""
    eval_every: int = 25_000
    """games between benchmark matches against pubeval (0 = never)"""
    eval_games: int = 1000
    """games per benchmark match against pubeval, even (duplicate-dice pairs: each dice sequence is played
    twice with the sides swapped), 4 .. 1,000,000"""
    threads: int = 0
    """torch CPU threads, 0 .. 256; 0 = torch's default, one per core. With --workers above 1, self-play runs torch on
    one thread in each worker thread, and this applies to the rest (the benchmark matches)"""
    progress: bool = True
    """show a tqdm progress bar"""
    supervised: str = ""
    """instead of self-play, fit the network (--resume: the one in --checkpoint; else a new one) to this
    labels folder, or to several comma-separated, e.g. lab-1,lab-2 (nard_ai.training.supervised; uses --lr
    (default 2e-4 here), --batch-size, --seed)"""
    init_from: str = ""
    """--supervised, new network: start from this checkpoint's weights, widened to --encoder (whose inputs must
    begin with the checkpoint's encoder's, as expert's do with rich's: the new inputs start at zero weight) and
    given a crashed net with --crashed-net (a copy of its contact net); the activation and race net are the
    checkpoint's, and so are the hidden layers unless --hidden (the width) or --layers (the depth) is given, each
    only when given (the other is the checkpoint's; a checkpoint whose layers differ in width needs --hidden): the
    contact and crashed nets are copied and widened where they keep their depth and no layer gets narrower (new
    units start at zero weight to the outputs), else named in --fresh-nets (--race-hidden: the race net's shape)"""
    fresh_nets: str = ""
    """--init-from: comma-separated nets (contact, crashed, race) that start from random weights instead of the
    checkpoint's, e.g. race, to fit a race net anew on --encoder expert_race's race inputs"""
    train_nets: str = ""
    """--supervised: comma-separated nets (contact, crashed, race) that learn (default: all); the others keep
    their weights and the label rows the network routes to them are left out, e.g. contact,crashed to fit
    those nets on contact and crashed labels without touching the race net. The others must come from a
    checkpoint (--resume, or --init-from and not in --fresh-nets): a net left random is an error"""
    epochs: int = 20
    """--supervised: at most this many epochs, 1 .. 100,000 (an error without --supervised)"""
    patience: int = 3
    """--supervised: stop after this many epochs without a better validation loss, 1 .. 100,000 (an error
    without --supervised)"""
    val_fraction: float = 0.05
    """--supervised: share of the positions held out for validation, 0 < F < 1 (by a hash of each Position ID,
    nard_ai.training.supervised.validation_mask; an error without --supervised)"""
    lr_schedule: str = "constant"
    """--supervised: constant (--lr throughout) or cosine (from --lr down to 0 at the last of --epochs)"""
    ray: str = ""
    """play the self-play shards on Ray actors, one per --workers shard: 'local' (a Ray cluster of this machine),
    'auto' (the running cluster: `ray start --head`, or RAY_ADDRESS) or a head's ADDRESS; default: RAY_ADDRESS if
    set, else threads of this process. The same seed and --workers give the same weights either way
    (nard_ai.distributed.selfplay: staleness, dead actors)"""

    @property
    def race_shape(self) -> tuple[int, ...] | None:
        """--race-hidden as a tuple of sizes (None when not given). Raises ValueError on a bad list."""
        if not self.race_hidden.strip():
            return None
        try:
            sizes = tuple(int(h) for h in self.race_hidden.split(","))
        except ValueError:
            raise ValueError(
                f"argument --race-hidden: comma-separated hidden layer sizes, e.g. 512,512, got {self.race_hidden!r}"
            ) from None
        if not 1 <= len(sizes) <= 4 or not all(1 <= h <= LIMITS["hidden"] for h in sizes):
            raise ValueError(
                f"argument --race-hidden: 1 .. 4 layers of 1 .. {LIMITS['hidden']} units, got {self.race_hidden!r}"
            )
        return sizes

    @property
    def fresh_names(self) -> tuple[str, ...]:
        """--fresh-nets as a tuple of names (empty entries dropped)."""
        return tuple(n for n in _comma_list(self.fresh_nets) if n)

    @property
    def train_names(self) -> tuple[str, ...]:
        """--train-nets as a tuple of names (empty entries dropped; empty: every net)."""
        return tuple(n for n in _comma_list(self.train_nets) if n)

    @property
    def label_folders(self) -> list[str]:
        """--supervised as a list of labels folders (so a folder name with a comma, or with spaces at its
        ends, cannot be given)."""
        return _comma_list(self.supervised)

    def validate(self) -> None:
        """Reject impossible values (argparse reports the ValueError and exits 2, before any file is written).

        Raises:
            ValueError: one line, ``argument --FLAG: ...``, naming the first bad value.
        """
        exp = self.exp_name
        if not exp.strip() or exp in (".", "..") or any(c in exp for c in "/\\\0"):
            raise ValueError(
                "argument --exp-name: must be a plain name (no / or \\, not . or ..; it names "
                f"runs/NAME__SEED__TIME and checkpoints/NAME__SEED.pt), got {exp!r}"
            )
        if self.resume and self.force:
            raise ValueError(
                "argument --force: not with --resume (--resume continues --checkpoint, --force starts a new "
                "network over it)"
            )
        check_counts(
            self,
            (
                "games",
                "pool",
                "workers",
                "batch_size",
                "checkpoint_every",
                "hidden",
                "eval_games",
                "epochs",
                "patience",
            ),
            LIMITS,
        )
        if self.ply not in (0, 1, 2):
            raise ValueError(f"argument --ply: must be 0, 1 or 2, got {self.ply}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"argument --seed: must be 0 .. 2**64 - 1, got {self.seed}")
        if self.threads < 0:
            raise ValueError(f"argument --threads: must be >= 0 (0 = one per core), got {self.threads}")
        if self.eval_every < 0:
            raise ValueError(f"argument --eval-every: must be >= 0, got {self.eval_every}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"argument --lr: must be a positive number, got {self.lr}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"argument --lam: must be in [0, 1], got {self.lam}")
        if self.workers > self.pool and not self.resume:  # on --resume: checked with the checkpoint's values
            raise ValueError(
                f"argument --workers: at most --pool ({self.pool}): each worker plays at least one game slot, "
                f"got {self.workers}"
            )
        if self.ray and not self.supervised and self.workers < 2 and not self.resume:
            raise ValueError(
                "argument --ray: needs --workers >= 2 (one Ray actor plays each of the pool's shards)"
            )
        if not 1 <= self.layers <= 4:
            raise ValueError(f"argument --layers: must be 1 .. 4, got {self.layers}")
        if not 0.0 < self.val_fraction < 1.0:  # NaN fails it too
            raise ValueError(f"argument --val-fraction: must be in (0, 1), got {self.val_fraction}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(
                f"argument --lr-schedule: must be one of {', '.join(LR_SCHEDULES)}, got {self.lr_schedule!r}"
            )
        if self.init_from and (not self.supervised or self.resume):
            raise ValueError("argument --init-from: only with --supervised on a new network (not --resume)")
        if self.lr_schedule != "constant" and not self.supervised:
            raise ValueError("argument --lr-schedule: only with --supervised (TD self-play keeps --lr)")
        if self.fresh_nets and not self.init_from:
            raise ValueError(
                "argument --fresh-nets: only with --init-from (the checkpoint whose other nets are kept)"
            )
        for flag, names in (("fresh-nets", self.fresh_nets), ("train-nets", self.train_nets)):
            if names and not all(_comma_list(names)):
                raise ValueError(f"argument --{flag}: an empty name in {names!r}")
            for name in _comma_list(names) if names else ():
                if name not in PHASE_NETS:
                    raise ValueError(f"argument --{flag}: {name!r} is not one of {', '.join(PHASE_NETS)}")
        if self.train_nets and not self.supervised:
            raise ValueError("argument --train-nets: only with --supervised")
        for flag, text, names in (("fresh-nets", self.fresh_nets, self.fresh_names),
                                  ("train-nets", self.train_nets, self.train_names)):  # fmt: skip
            if len(set(names)) < len(names):
                raise ValueError(f"argument --{flag}: a net named twice in {text!r}")
        if self.supervised and not all(self.label_folders):
            raise ValueError(f"argument --supervised: an empty folder name in {self.supervised!r}")
        if self.supervised and self.ray:
            raise ValueError(
                "argument --ray: --supervised fits on this machine; label positions on Ray with "
                "`python -m nard_ai.training label --ray ...`"
            )
        if self.eval_games < 4:
            raise ValueError(
                f"argument --eval-games: at least 4 (two duplicate-dice pairs, for a confidence interval), "
                f"got {self.eval_games}"
            )
        if self.eval_games % 2:
            raise ValueError(
                "argument --eval-games: must be even (duplicate-dice pairs: each dice sequence is played twice "
                f"with the sides swapped), got {self.eval_games}"
            )
        if self.resume:
            return  # the architecture comes from the checkpoint (main checks check_sizes with it)
        race_shape = self.race_shape
        check_sizes(self.pool, self.hidden, self.batch_size)
        if race_shape:
            check_sizes(self.pool, max(race_shape), self.batch_size, "--race-hidden (its widest layer)")
        if race_shape and not self.race_net:
            raise ValueError("argument --race-hidden: needs --race-net (it is the race net's shape)")
        if self.encoder not in ENCODERS:
            raise ValueError(
                f"argument --encoder: must be one of {', '.join(sorted(ENCODERS))}, got {self.encoder!r}"
            )
        if self.race_net and ENCODERS[self.encoder].race_unit is None:
            raise ValueError(
                f"argument --race-net: encoder {self.encoder!r} has no race unit (use --no-race-net)"
            )
        if self.crashed_net and not (self.race_net and self.encoder in CRASHED_ENCODERS):
            raise ValueError(
                f"argument --crashed-net: needs --race-net and --encoder {' or '.join(CRASHED_ENCODERS)}"
            )
        if self.activation not in ("sigmoid", "tanh", "relu"):
            raise ValueError(f"argument --activation: must be sigmoid, tanh or relu, got {self.activation!r}")

    def network_config(self) -> NetworkConfig:
        """The network a new run starts: --encoder, --hidden x --layers, --activation, --race-net,
        --crashed-net, --race-hidden (on --resume the checkpoint's network is used instead)."""
        return NetworkConfig(
            encoder=self.encoder,
            hidden=(self.hidden,) * self.layers,
            activation=self.activation,
            race_net=self.race_net,
            crashed_net=self.crashed_net,
            race_hidden=self.race_shape,
        )

    @property
    def checkpoint_path(self) -> Path:
        """--checkpoint, or checkpoints/{exp_name}__{seed}.pt when it is not given."""
        return Path(self.checkpoint or f"checkpoints/{self.exp_name}__{self.seed}.pt")


_STOP = {"requested": False, "signal": 0}

RESUMED_FIELDS = (
    "lr",
    "lam",
    "ply",
    "pool",
    "workers",
    "batch_size",
    "checkpoint_every",
    "eval_every",
    "eval_games",
)
"""Training settings that --resume takes from the checkpoint unless given on the command line."""


def _request_stop(signum, frame) -> None:
    # only set a flag: self-play checks it once per ply, so weights are never left half-updated
    _STOP["requested"] = True
    _STOP["signal"] = signum


def log_round(writer: SummaryWriter, rs: RoundStats, step: int) -> None:
    """One round's self-play statistics under charts/ and losses/."""
    writer.add_scalar("charts/games_per_s", rs.games / rs.seconds, step)
    writer.add_scalar("charts/positions_per_s", rs.positions / rs.seconds, step)
    writer.add_scalar("charts/plies_per_game", rs.plies / rs.games, step)
    writer.add_scalar("charts/gammon_rate", rs.results[1:].sum() / rs.games, step)
    writer.add_scalar("charts/backgammon_rate", rs.results[2] / rs.games, step)
    writer.add_scalar("charts/first_player_ppg", rs.first_player_points / rs.games, step)
    writer.add_scalar("losses/td_loss", rs.mean_loss, step)


def _fail(message: str, status: int = 2) -> NoReturn:
    """One ``train.py: error: ...`` line on stderr and exit ``status`` (2: bad input; no traceback)."""
    print(f"train.py: error: {message}", file=sys.stderr)
    raise SystemExit(status)


TD_ONLY = ("games", "lam", "ply", "pool", "workers", "checkpoint_every", "eval_every", "eval_games")
"""Self-play settings: given with --supervised (which fits --epochs passes over labels), an error."""
SUPERVISED_ONLY = ("epochs", "patience", "val_fraction")
"""--supervised settings: given without it, an error (as --lr-schedule and --train-nets in validate)."""


def check_given(args: Args, given: set[str] | None) -> None:
    """Exit with one ``train.py: error:`` line (status 2) on an option given on the command line that
    this run would ignore: a :data:`TD_ONLY` one with --supervised, a :data:`SUPERVISED_ONLY` one without.
    ``given`` None (``main(args)``): the fields whose values differ from the defaults count as given."""
    if given is None:
        given = {f.name for f in dataclasses.fields(Args) if getattr(args, f.name) != f.default}
    wrong = [k for k in (TD_ONLY if args.supervised else SUPERVISED_ONLY) if k in given]
    if wrong:
        flag = f"--{wrong[0].replace('_', '-')}"
        _fail(
            f"argument {flag}: not with --supervised (a self-play setting; --supervised fits --epochs passes "
            "over the labels)"
            if args.supervised
            else f"argument {flag}: only with --supervised (self-play runs to --games)"
        )


def check_checkpoint_path(path: Path) -> None:
    """Exit with one ``train.py: error: argument --checkpoint: ...`` line (status 2) when ``path`` could not be
    written at the run's first save (a directory, under a file, an unwritable or read-only folder:
    :func:`nard_ai.model.atomic.check_writable`), before any training."""
    try:
        check_writable(path)
    except ValueError as exc:
        _fail(f"argument --checkpoint: {exc}")


ARCHITECTURE_FIELDS = frozenset(
    {"encoder", "hidden", "layers", "activation", "race_net", "crashed_net", "race_hidden"}
)
"""The network's shape: on --resume it comes from the checkpoint."""


def _with_architecture(args: Args, config: NetworkConfig) -> Args:
    """``args`` describing the checkpoint's network (so the saved hyperparameters say what was trained)."""
    uniform = len(set(config.hidden)) == 1
    return dataclasses.replace(
        args, encoder=config.encoder, hidden=config.hidden[0] if uniform else args.hidden,
        layers=len(config.hidden) if uniform else args.layers, activation=config.activation,
        race_net=config.race_net, crashed_net=config.crashed_net,
        race_hidden=",".join(map(str, config.race_hidden)) if config.race_hidden else "",
    )  # fmt: skip


def _resumed_args(args: Args, saved: dict, given: set[str]) -> Args:
    """``args`` with the checkpoint's training settings (:data:`RESUMED_FIELDS`) for those not in ``given``."""
    restored = {
        k: saved[k] for k in RESUMED_FIELDS if k not in given and k in saved and saved[k] != getattr(args, k)
    }
    if not restored:
        return args
    try:
        resumed = dataclasses.replace(args, **restored)
        resumed.validate()
    except (TypeError, ValueError) as exc:
        _fail(f"cannot resume: the checkpoint's training settings {restored} are not valid here: {exc}")
    logging.info(
        "resuming with the checkpoint's %s (a flag on the command line overrides one)",
        ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in restored.items()),
    )
    return resumed


def _resumed_seed(args: Args, ckpt, given: set[str] | None) -> Args:
    """On a TD --resume: ``args`` with the checkpoint's seed when its saved generator state continues (the
    dice and the sample order are then that generator's, not --seed's), so that the checkpoint and the
    TensorBoard run record the seed that made the run; a warning when a given --seed differs from it. A
    checkpoint without generator state starts one from --seed (main warns), which then counts."""
    if ckpt.rng_state is None:
        return args
    saved = ckpt.args.get("seed")
    if (given is None or "seed" in given) and args.seed != saved:
        logging.warning(
            "ignoring --seed %d on --resume: the checkpoint's generator state continues (its seed: %s)",
            args.seed, "not recorded" if saved is None else saved,
        )  # fmt: skip
    if isinstance(saved, int) and not isinstance(saved, bool) and 0 <= saved <= MAX_SEED:
        return dataclasses.replace(args, seed=saved)
    return args


def _supervised_shapes(args: Args, given: set[str] | None) -> tuple[tuple[int, ...] | None, int]:
    """For --supervised: the contact and crashed nets' new hidden layers with --init-from (None: the
    checkpoint's, or no --init-from), and the widest layer the run will train (for the size limits).

    With --init-from, --hidden gives the width and --layers the depth, each only when given (``given``
    None: every flag counts as given, as for ``main(args)``); the one not given is the checkpoint's
    (a checkpoint whose layers differ in width needs --hidden). Exits with a one-line error (status 2)
    on a checkpoint that cannot be read or such a missing --hidden.
    """

    def named(flag: str) -> bool:
        return given is None or flag in given

    try:
        if args.resume:
            cfg = load_checkpoint(args.checkpoint_path).network.config
        elif args.init_from:
            cfg = load_checkpoint(args.init_from).network.config
        else:
            cfg = None
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    if cfg is None:  # a new network: --hidden x --layers and --race-hidden (validate checked them)
        return None, max((args.hidden, *(args.race_shape or ())))
    if args.resume:
        return None, max((*cfg.hidden, *cfg.net_hidden("race_mlp")))
    new_hidden = None
    if named("hidden") or named("layers"):
        if named("hidden"):
            width = args.hidden
        elif len(set(cfg.hidden)) == 1:
            width = cfg.hidden[0]
        else:
            _fail(
                f"argument --layers: the checkpoint's hidden layers {list(cfg.hidden)} differ in width: "
                "give --hidden too"
            )
        new_hidden = (width,) * (args.layers if named("layers") else len(cfg.hidden))
    race = args.race_shape or (cfg.net_hidden("race_mlp") if cfg.race_net else ())
    return new_hidden, max((*(new_hidden or cfg.hidden), *race))


def supervised(args: Args, given: set[str] | None) -> None:
    """--supervised: nard_ai.training.supervised.run_supervised on --checkpoint. A signal (SIGINT, SIGTERM)
    ends it between two minibatches; it saves what a finished run saves (the best epoch so far) and exits
    130 or 143; a run that diverges exits 1 (:class:`nard_ai.model.learn.TrainingDiverged`)."""
    from nard_ai.training.supervised import SupervisedConfig, run_supervised

    check_checkpoint_path(args.checkpoint_path)
    if not args.resume and args.checkpoint_path.exists() and not args.force:
        _fail(f"{args.checkpoint_path} exists: pass --resume to continue it or --force to start over")
    ignored = sorted(ARCHITECTURE_FIELDS & (given or set()))
    if args.resume and ignored:
        logging.warning(
            "ignoring %s on --resume: the checkpoint's network is used",
            ", ".join(f"--{k.replace('_', '-')}" for k in ignored),
        )
    elif args.init_from and {"activation", "race_net"} & set(ignored):
        logging.warning(
            "ignoring %s with --init-from: the checkpoint's activation and race net are used",
            ", ".join(f"--{k.replace('_', '-')}" for k in sorted({"activation", "race_net"} & set(ignored))),
        )
    new_hidden, widest = _supervised_shapes(args, given)
    try:
        check_sizes(args.pool, widest, args.batch_size, "the network's widest layer")
    except ValueError as exc:
        _fail(str(exc))
    torch.manual_seed(args.seed)
    network = None if args.resume else Network(args.network_config())
    lr = args.lr if given is None or "lr" in given else SupervisedConfig.lr
    config = SupervisedConfig(lr=lr, batch_size=args.batch_size, epochs=args.epochs, patience=args.patience,
                              val_fraction=args.val_fraction, seed=args.seed,
                              lr_schedule=args.lr_schedule)  # fmt: skip
    log_dir = Path(f"runs/{args.exp_name}-supervised__{args.seed}__{int(time.time())}")
    fresh_dir, fresh_root = not log_dir.exists(), not log_dir.parent.exists()
    writer = SummaryWriter(str(log_dir))
    try:
        history = run_supervised(args.label_folders, args.checkpoint_path, config, network=network, writer=writer,
                                 should_stop=lambda: _STOP["requested"],
                                 init_from=args.init_from or None, fresh=args.fresh_names,
                                 hidden=new_hidden,
                                 race_hidden=args.race_shape if args.init_from else None,
                                 train_nets=args.train_names)  # fmt: skip
    except TrainingDiverged as exc:
        _fail(f"training diverged: {exc} (try a smaller --lr)", status=1)
    except (FileNotFoundError, ValueError) as exc:
        writer.close()
        if fresh_dir:  # a run refused before training leaves no TensorBoard run behind
            shutil.rmtree(log_dir, ignore_errors=True)
        if fresh_root:  # nor the runs/ folder it made (removed only if nothing else is in it)
            with contextlib.suppress(OSError):
                log_dir.parent.rmdir()
        _fail(str(exc))
    finally:
        writer.close()
    logging.info("checkpoint %s: best epoch %d, val loss %.5f", args.checkpoint_path, history.best_epoch,
                 history.best_val_loss)  # fmt: skip
    if _STOP["requested"]:  # saved as a finished run saves; --resume starts a new run from it
        logging.info(
            "stopped by a signal: --resume on %s starts a new run from its weights", args.checkpoint_path
        )
        raise SystemExit(128 + _STOP["signal"])


def _ray_runner(args: Args):
    """The Ray shard runner of ``--ray`` (or ``RAY_ADDRESS``), or None for threads of this process."""
    address = args.ray or (os.environ.get("RAY_ADDRESS", "") if not args.supervised else "")
    if not address:
        return None
    if args.workers < 2:
        _fail("argument --ray: needs --workers >= 2 (one Ray actor plays each of the pool's shards)")
    from nard_ai.distributed import RayShardRunner, make_executor

    try:
        executor = make_executor(address)
    except (ValueError, ConnectionError) as exc:
        _fail(f"argument --ray: {exc}")
    if args.workers > executor.workers:
        executor.close()
        _fail(
            f"argument --ray: --workers {args.workers} needs {args.workers} CPUs in the Ray cluster (one actor "
            f"per shard), it has {executor.workers}"
        )
    logging.info(
        "self-play on Ray: %d shards as actors, %d CPUs in the cluster", args.workers, executor.workers
    )
    return RayShardRunner(executor)


def main(args: Args, given: set[str] | None = None) -> None:
    """Train (see :class:`Args`). ``given``: the flags set on the command line; with ``--resume`` the others
    among :data:`RESUMED_FIELDS` come from the checkpoint (``None``: all of them are taken as given)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    # `kill PID` (SIGTERM) and Ctrl-C (SIGINT; ignored in `nohup ... &` jobs) stop at the next ply,
    # save (the interrupted round's finished games count) and exit
    _STOP.update(
        requested=False, signal=0
    )  # a stop belongs to one run (main may be called again in a process)
    signal.signal(signal.SIGTERM, _request_stop)
    signal.signal(signal.SIGINT, _request_stop)
    check_given(args, given)
    if args.threads:
        torch.set_num_threads(args.threads)
    path = args.checkpoint_path
    if args.supervised:
        return supervised(args, given)
    last_saved = None  # games of the checkpoint on disk that this run would leave (None: none yet)
    if args.resume:
        try:
            ckpt = load_checkpoint(path)
        except (FileNotFoundError, ValueError) as exc:
            _fail(f"cannot resume: {exc}")
        if ckpt.games_trained >= args.games:
            # nothing to train: say so and leave the file (and runs/) untouched
            print(
                f"train.py: {path} already has {ckpt.games_trained} games >= --games {args.games}; "
                "nothing to do (pass a larger --games to continue it)"
            )
            return
        check_checkpoint_path(path)
        last_saved = ckpt.games_trained
        args = _resumed_seed(args, ckpt, given)
        if given is not None:
            args = _resumed_args(args, ckpt.args, given)
            ignored = sorted(ARCHITECTURE_FIELDS & given)
            if ignored:
                logging.warning(
                    "ignoring %s on --resume: the checkpoint's network is used",
                    ", ".join(f"--{k.replace('_', '-')}" for k in ignored),
                )
            missing = [k for k in RESUMED_FIELDS if k not in ckpt.args and k not in given]
            if missing:
                logging.info(
                    "not in the checkpoint, so the defaults: %s",
                    ", ".join(f"--{k.replace('_', '-')} {getattr(args, k)}" for k in missing),
                )
        if args.workers > args.pool:
            _fail(f"argument --workers: at most --pool ({args.pool}), got {args.workers}")
        try:
            cfg = ckpt.network.config
            check_sizes(args.pool, max((*cfg.hidden, *(cfg.race_hidden or ()))), args.batch_size)
        except ValueError as exc:
            _fail(f"{exc} (the checkpoint's network)")
        args = _with_architecture(args, ckpt.network.config)
        learner = Learner(ckpt.network, lr=args.lr)
        try:
            if ckpt.optimizer_state is not None:
                learner.load_optimizer_state(ckpt.optimizer_state, lr=args.lr)
            rng = rng_from_state(ckpt.rng_state) if ckpt.rng_state else np.random.default_rng(args.seed)
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            _fail(f"cannot resume: {path}: {exc}")
        for what, state in (("optimizer", ckpt.optimizer_state), ("RNG", ckpt.rng_state)):
            if state is None:
                logging.warning(
                    "%s has no %s state: starting a fresh one (not an exact continuation)", path, what
                )
        games_done, extra = ckpt.games_trained, ckpt.extra
    else:
        check_checkpoint_path(path)
        if path.exists() and not args.force:
            _fail(f"{path} exists: pass --resume to continue it or --force to start over")
        torch.manual_seed(args.seed)
        learner = Learner(
            Network(args.network_config()),
            lr=args.lr,
        )
        rng, games_done, extra = np.random.default_rng(args.seed), 0, {}
    hyper = {
        **dataclasses.asdict(args),
        "checkpoint": str(path),
        "network": dataclasses.asdict(learner.network.config),
    }
    for tmp in remove_stale_temporaries(path):
        logging.info("removed %s, left by an interrupted checkpoint write", tmp)
    writer = SummaryWriter(f"runs/{args.exp_name}__{args.seed}__{int(time.time())}")
    writer.add_text(
        "hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in hyper.items())
    )

    def save() -> None:
        nonlocal last_saved
        save_checkpoint(
            path,
            learner.network,
            games_trained=games_done,
            args=hyper,
            optimizer=learner.optimizer,
            rng_state=rng_state(rng),
            extra=extra,
        )
        last_saved = games_done

    runner = _ray_runner(args)
    bar = tqdm(total=args.games, initial=games_done, unit="game", disable=not args.progress, smoothing=0.05)
    # whole: the weights are those of games_done games (False inside a round); saved: and on disk
    whole, saved = True, False
    try:
        while games_done < args.games and not _STOP["requested"]:
            whole = saved = False
            # rounds end on multiples of checkpoint_every, so a resumed run replays the same rounds
            n = min(args.checkpoint_every - games_done % args.checkpoint_every, args.games - games_done)
            rs = play_round(
                learner,
                n,
                rng,
                pool=args.pool,
                workers=args.workers,
                lam=args.lam,
                batch_size=args.batch_size,
                ply=args.ply,
                on_games=bar.update,
                should_stop=lambda: _STOP["requested"],
                runner=runner,
            )
            games_done += rs.games  # an interrupted round's finished games are in the weights too
            check_finite_weights(learner.network, f"after {games_done:,} games")  # never saved so
            whole = True
            if rs.interrupted:
                logging.info("stopped by a signal; saving at %d games", games_done)
                break
            log_round(writer, rs, games_done)
            postfix = {"games/s": f"{rs.games / rs.seconds:.0f}", "loss": f"{rs.mean_loss:.3f}"}
            if args.eval_every and games_done % args.eval_every < n and games_done >= args.eval_every:
                agent = Agent(NetworkEvaluator(learner.network), name="net")
                res = play_match(agent, agent_from_spec("pubeval"), args.eval_games, seed=10_007)
                writer.add_scalar("eval/ppg_vs_pubeval", res.ppg, games_done)
                writer.add_scalar("eval/ci95_vs_pubeval", res.ci95, games_done)
                extra = {**extra, "last_eval": {"opponent": "pubeval", "games": res.games, "ppg": res.ppg,
                                                "ci95": res.ci95, "games_trained": games_done}}  # fmt: skip
                logging.info("games %d: %+.3f ppg vs pubeval ± %.3f", games_done, res.ppg, res.ci95)
            if "last_eval" in extra:
                last = extra["last_eval"]
                at = (
                    f" (at {last['games_trained']:,} games)"
                    if last.get("games_trained") != games_done
                    else ""
                )
                postfix["vs pubeval"] = f"{last['ppg']:+.3f}{at}"
            bar.set_postfix(postfix)
            if not args.progress:
                logging.info("games %d: %s", games_done, "  ".join(f"{k} {v}" for k, v in postfix.items()))
            save()
            saved = True
        if not saved:
            save()  # stopped by a signal: the interrupted round's finished games count
    except BaseException as exc:
        if isinstance(exc, TrainingDiverged):  # NaN or infinity (learn.py, "Divergence"): none of it is saved
            kept = f"keeps its save at {last_saved:,} games" if last_saved is not None else "not written"
            _fail(f"training diverged: {exc}; {path} {kept} (try a smaller --lr)", status=1)
        # an error inside a round leaves weights that no game count describes: the checkpoint stays
        # the last finished round's; one that ended after its round (the benchmark, say) saves it
        if whole and not saved:
            save()
        if isinstance(exc, TimeoutError) and runner is not None:
            _fail(f"--ray: {exc}; the checkpoint keeps the last finished round")
        if isinstance(exc, MemoryError) or (
            isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc)
        ):
            what = (str(exc).splitlines() or [type(exc).__name__])[0]
            _fail(
                f"out of memory ({what}); the checkpoint keeps the last finished round: "
                "try a smaller --pool or --hidden"
            )
        raise
    finally:
        bar.close()
        writer.close()
        if runner is not None:
            runner.shutdown()
            runner.executor.close()
    logging.info("checkpoint %s: %d games", path, games_done)
    if _STOP["requested"]:
        # saved, but not finished: the shell's convention for a process ended by a signal (130, 143)
        raise SystemExit(128 + _STOP["signal"])
