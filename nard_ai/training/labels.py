"""Labels of position sets by n-ply search or rollouts, in resumable shards on two worker processes.

A label is gnubg's five cumulative probabilities of a position for its side
on roll, before it rolls (:mod:`nard_ai.training.store` has the file format).

Methods (:class:`LabelMethod`), chosen per position class by a :func:`make_plan`
-------------------------------------------------------------------------------
=============  ==============================================================
``exact``      ``over``: the game's result (:func:`nard_ai.model.network.result_probs`);
               ``bearoff``: the one-sided bear-off database
               (:func:`nard_ai.eval.bearoff.bearoff_probs`; exact up to each side's
               one-sided strategy, as gnubg's). Only for those two classes.
``0ply``       the network's static evaluation (bear-offs from the database).
``1ply``,      :func:`nard_ai.search.position_probs` at 1 or 2 ply (gnubg's
``2ply``       ``EvaluatePositionFull``: the 21 rolls, the roller's best 0-ply
               play, valued at ``ply - 1``).
``rollout``    :func:`nard_ai.play.rollout.rollout` (cubeless) of ``games`` games
               played at ``play_ply`` by the same network: the first two rolls
               rotated over the 36 x 36 (a Latin square; 1296 games cover
               every pair once), optional truncation after ``truncate`` plies
               scored by the network's evaluation, luck adjustment
               (``variance_reduction``; the rollout's default: on at 1-ply
               and in races, off for contact at 0-ply), bear-off positions
               valued and played from the bear-off database. Luck-adjusted
               means are clipped to consistent probabilities
               (:func:`nard_ai.training.store.consistent_probs`).
=============  ==============================================================

Every rollout has its own dice seed, a pure function of the run's seed and
the Position ID (:func:`rollout_seed`), so a position's label does not depend
on the shard it is in or on the order of work.

Shards and resuming
-------------------
Label shard ``k`` labels positions shard ``k`` (the position set's shard size
is the unit of work). A shard is a pure function
:func:`label_shard` of a :class:`ShardTask` (its index, the positions file
and its SHA-256, the plan, the network file and its SHA-256, the seed): it
writes ``labels-k.csv`` and then its sidecar ``labels-k.json``, each
atomically, and returns a summary. :func:`run_labels` plans the tasks of a
folder, skips every shard whose sidecar exists and matches its CSV and the
task, and runs the rest, so a killed run loses at most the shards in flight
(one per worker) and a rerun of the same command finishes the job with the
same files an uninterrupted run writes. A :class:`ShardTask` is a plain,
picklable record and :func:`label_shard` a top-level function: a distributed
backend needs nothing else, given the files on shared storage
(``run_labels(..., executor=RayExecutor(...))``, :mod:`nard_ai.distributed`;
``python -m nard_ai.training label --ray auto``).

Workers: ``workers`` processes (``spawn``; each runs torch and numba on one
thread), one shard each at a time; ``workers = 1`` runs in the calling process
on one thread. A tqdm bar counts positions (its rate is positions per second).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nard_ai.training.argtypes import MAX_SEED, TRAINING_LIMITS
from nard_ai.training.positions import (
    BEAROFF,
    CLASS_NAMES,
    OVER,
    read_position_set,
    read_positions_shard,
)
from nard_ai.training.store import (
    FORMAT_VERSION,
    LABELS_FORMAT,
    RUN_FILE,
    atomic_write_bytes,
    atomic_write_json,
    check_out_folder,
    code_version,
    consistent_probs,
    file_sha256,
    format_labels_csv,
    make_out_folder,
    remove_created_folders,
    remove_stale_temporaries,
)

__all__ = [
    "METHODS",
    "LabelMethod",
    "ShardTask",
    "label_boards",
    "label_shard",
    "make_plan",
    "parse_mix",
    "plan_tasks",
    "rollout_seed",
    "run_labels",
    "shard_complete",
]

METHODS = ("exact", "0ply", "1ply", "2ply", "rollout")
_EXACT_CLASSES = ("over", "bearoff")
LOG_FILE = "run.log"


@dataclass(frozen=True)
class LabelMethod:
    """How a position is labelled (module docstring, "Methods").

    Attributes:
        method: one of :data:`METHODS`.
        games: rollouts: games per position (1296 rotates the first two rolls fully).
        play_ply: rollouts: the depth the games are played at, 0 or 1.
        truncate: rollouts: plies after which a game is scored by the network; ``None`` plays out.
        variance_reduction: rollouts: luck adjustment; ``None``: the rollout's default.

    Raises:
        ValueError: an unknown method, or rollout settings out of range.
    """

    method: str
    games: int | None = None
    play_ply: int | None = None
    truncate: int | None = None
    variance_reduction: bool | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown label method {self.method!r}; one of {', '.join(METHODS)}")
        if self.method != "rollout":
            if (self.games, self.play_ply, self.truncate, self.variance_reduction) != (None,) * 4:
                raise ValueError(f"method {self.method!r} takes no rollout settings")
            return
        games = 1296 if self.games is None else self.games
        play_ply = 0 if self.play_ply is None else self.play_ply
        if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
            raise ValueError(f"rollout games must be an integer >= 1, got {self.games!r}")
        if play_ply not in (0, 1) or isinstance(play_ply, bool):
            raise ValueError(f"rollout play ply must be 0 or 1, got {self.play_ply!r}")
        if self.truncate is not None and (
            isinstance(self.truncate, bool)
            or not isinstance(self.truncate, (int, np.integer))
            or self.truncate < 1
        ):
            raise ValueError(
                f"rollout truncation must be an integer >= 1 plies or None, got {self.truncate!r}"
            )
        if self.variance_reduction not in (None, True, False):
            raise ValueError(
                f"variance_reduction must be True, False or None, got {self.variance_reduction!r}"
            )
        object.__setattr__(self, "games", int(games))
        object.__setattr__(self, "play_ply", int(play_ply))
        if self.truncate is not None:
            object.__setattr__(self, "truncate", int(self.truncate))

    @property
    def ply(self) -> int | None:
        """The search depth behind the label: n for ``nply``, the play ply of a rollout, else ``None``."""
        if self.method.endswith("ply"):
            return int(self.method[0])
        return self.play_ply if self.method == "rollout" else None

    def to_json(self) -> dict:
        """The method as the sidecar records it (``method``, ``ply``, and the rollout's settings)."""
        out = {"method": self.method, "ply": self.ply}
        if self.method == "rollout":
            out.update(
                games=self.games,
                play_ply=self.play_ply,
                truncate=self.truncate,
                variance_reduction=self.variance_reduction,
                first_rolls="rotated over 36 x 36 (Latin square)",
            )
        return out

    @classmethod
    def from_json(cls, d: dict) -> LabelMethod:
        """Inverse of :meth:`to_json`."""
        keys = ("games", "play_ply", "truncate", "variance_reduction")
        return cls(d["method"], **{k: d.get(k) for k in keys})


def parse_mix(spec: str | None) -> dict[str, str]:
    """``"race=rollout,bearoff=exact"`` -> ``{class: method}``.

    Raises:
        ValueError: an unknown class or method, a part without ``=``, or a class named twice.
    """
    out: dict[str, str] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        name, sep, method = (x.strip() for x in part.partition("="))
        if not sep:
            raise ValueError(f"a label mix is CLASS=METHOD,..., got {part.strip()!r}")
        if name not in CLASS_NAMES:
            raise ValueError(
                f"unknown position class {name!r} in the label mix; one of {', '.join(CLASS_NAMES)}"
            )
        if method not in METHODS:
            raise ValueError(f"unknown label method {method!r} for {name}; one of {', '.join(METHODS)}")
        if name in out:
            raise ValueError(
                f"the label mix names {name} twice ({name}={out[name]} and {name}={method}); name each class once"
            )
        out[name] = method
    return out


def make_plan(
    method: str = "2ply",
    mix: dict[str, str] | str | None = None,
    *,
    games: int | None = None,
    play_ply: int | None = None,
    truncate: int | None = None,
    variance_reduction: bool | None = None,
) -> dict[str, LabelMethod]:
    """The label method of every position class.

    Args:
        method: the method of every class the mix does not name, except ``over`` and
            ``bearoff``, which are ``exact`` unless the mix says otherwise.
        mix: per-class overrides (:func:`parse_mix`).
        games, play_ply, truncate, variance_reduction: the settings of every ``rollout``
            (``None``: the rollout's default); given when no class is rolled out, an error.

    Returns:
        ``{class name: LabelMethod}`` for every name in :data:`CLASS_NAMES`.

    Raises:
        ValueError: an unknown method or class, ``exact`` for a class other than ``over`` and
            ``bearoff``, a method other than ``exact`` for ``over``, bad rollout settings, or rollout
            settings (not ``None``) with a plan that rolls out no class.
    """
    if method not in METHODS:
        raise ValueError(f"unknown label method {method!r}; one of {', '.join(METHODS)}")
    mix = parse_mix(mix) if isinstance(mix, str) or mix is None else dict(mix)
    plan = {}
    for name in CLASS_NAMES:
        m = mix.get(name, "exact" if name in _EXACT_CLASSES else method)
        if m == "exact" and name not in _EXACT_CLASSES:
            raise ValueError(
                f"method 'exact' is only for the classes {' and '.join(_EXACT_CLASSES)}, not {name}"
            )
        if name == "over" and m != "exact":
            raise ValueError("a finished game ('over') is always labelled 'exact'")
        if m == "rollout":
            plan[name] = LabelMethod(
                "rollout",
                games=games,
                play_ply=play_ply,
                truncate=truncate,
                variance_reduction=variance_reduction,
            )
        else:
            plan[name] = LabelMethod(m)
    given = {
        k: v
        for k, v in {
            "games": games,
            "play_ply": play_ply,
            "truncate": truncate,
            "variance_reduction": variance_reduction,
        }.items()
        if v is not None
    }
    if given and not any(m.method == "rollout" for m in plan.values()):
        raise ValueError(
            f"rollout settings ({', '.join(given)}) given, but the plan rolls out no class (method "
            f"{method!r}): they would be ignored"
        )
    return plan


def _plan_json(plan: dict[str, LabelMethod]) -> dict:
    return {name: plan[name].to_json() for name in CLASS_NAMES}


def rollout_seed(seed: int, pid: str) -> int:
    """The dice seed of the rollout of position ``pid``: the first 8 bytes of SHA-256 of ``"seed:pid"``."""
    return int.from_bytes(hashlib.sha256(f"{int(seed)}:{pid}".encode()).digest()[:8], "little")


# --------------------------------------------------------------------------- labelling


_AGENTS: dict = {}


def _network_agent(path: str, sha256: str, ply: int):
    """The network of ``path`` as an :class:`~nard_ai.search.Agent` at ``ply``, loaded once per process."""
    key = (path, sha256)
    if key not in _AGENTS:
        from nard_ai.eval.evaluator import NetworkEvaluator
        from nard_ai.model.network import load_checkpoint

        actual = file_sha256(path)
        if actual != sha256:
            raise ValueError(f"{path}: its SHA-256 is {actual[:12]}..., the run expects {sha256[:12]}...")
        _AGENTS.clear()
        _AGENTS[key] = {"evaluator": NetworkEvaluator(load_checkpoint(path).network)}
    agents = _AGENTS[key]
    if ply not in agents:
        from nard_ai.search import Agent

        agents[ply] = Agent(agents["evaluator"], ply=ply, name=f"{Path(path).name}:{ply}")
    return agents[ply]


def label_boards(
    agent_for_ply,
    boards: np.ndarray,
    classes: np.ndarray,
    ids: list[str],
    plan: dict[str, LabelMethod],
    seed: int,
) -> tuple[np.ndarray, dict[str, int]]:
    """Labels of positions by the plan's method for each one's class.

    Args:
        agent_for_ply: ``agent_for_ply(ply) -> Agent`` of the network at that ply.
        boards: ``(N, 26)`` int8, side on roll's view.
        classes: ``(N,)`` their classes (:func:`~nard_ai.core.classes.classify_positions`).
        ids: their Position IDs (the rollouts' seeds come from them).
        plan: ``{class name: LabelMethod}`` (:func:`make_plan`).
        seed: the run's seed.

    Returns:
        ``(N, 5)`` float64 consistent gnubg-order probabilities for the side on roll, and the
        number of positions per method.

    Raises:
        ValueError: a probability the method gave is not finite (a network with NaN or infinite
            weights), naming the first such position; nothing is clipped into a label.
    """
    from nard_ai.search import position_probs

    out = np.zeros((len(boards), 5), dtype=np.float64)
    used: dict[str, int] = {}
    groups: dict[LabelMethod, list[int]] = {}
    for c in np.unique(classes).tolist():
        groups.setdefault(plan[CLASS_NAMES[c]], []).extend(np.flatnonzero(classes == c).tolist())
    for method, rows in groups.items():
        rows = np.array(sorted(rows), dtype=np.int64)
        b = boards[rows]
        used[method.method] = used.get(method.method, 0) + len(rows)
        if method.method == "exact":
            out[rows] = _exact(b, classes[rows])
        elif method.method.endswith("ply"):
            ply = method.ply
            out[rows] = position_probs(agent_for_ply(0).evaluator, b, ply)
        else:
            from nard_ai.play.rollout import rollout

            agent = agent_for_ply(method.play_ply)
            for r, board in zip(rows.tolist(), b, strict=True):
                res = rollout(
                    board,
                    method.games,
                    ply=method.play_ply,
                    seed=rollout_seed(seed, ids[r]),
                    agent=agent,
                    truncate=method.truncate,
                    variance_reduction=method.variance_reduction,
                    batch=min(method.games, 1296),
                )
                out[r] = res.probs
    bad = ~np.isfinite(out).all(axis=1)
    if bad.any():
        first = int(np.argmax(bad))
        raise NonFiniteLabels(
            f"non-finite probabilities (NaN or infinite) for {int(bad.sum())} of {len(out)} positions, "
            f"the first {ids[first]} ({plan[CLASS_NAMES[classes[first]]].method}: {out[first].tolist()}): "
            "are the network's weights finite?"
        )
    return consistent_probs(out), dict(sorted(used.items()))


class NonFiniteLabels(ValueError):
    """:func:`label_boards` got probabilities that are not finite (:func:`label_shard` names the shard)."""


def _exact(boards: np.ndarray, classes: np.ndarray) -> np.ndarray:
    from nard_ai.core.board import game_result_unchecked
    from nard_ai.core.outcomes import result_probs
    from nard_ai.eval.bearoff import bearoff_probs

    out = np.zeros((len(boards), 5), dtype=np.float64)
    over = classes == OVER
    if over.any():
        out[over] = result_probs(game_result_unchecked(boards[over]))
    bo = classes == BEAROFF
    if bo.any():
        out[bo] = bearoff_probs(boards[bo])
    return out


# --------------------------------------------------------------------------- shards


@dataclass(frozen=True)
class ShardTask:
    """One unit of labelling work: everything :func:`label_shard` needs (plain values, picklable).

    Attributes:
        index: the shard's number (``labels-{index:05d}.csv`` labels ``positions-{index:05d}.csv``).
        positions_file: the positions shard (path).
        positions_sha256: its SHA-256.
        out_dir: the labels folder.
        plan: ``{class name: LabelMethod.to_json()}``.
        network: the checkpoint (path).
        network_sha256: the SHA-256 of its bytes.
        seed: the run's seed.
    """

    index: int
    positions_file: str
    positions_sha256: str
    out_dir: str
    plan: dict
    network: str
    network_sha256: str
    seed: int

    @property
    def csv_path(self) -> Path:
        return Path(self.out_dir) / f"labels-{self.index:05d}.csv"

    @property
    def sidecar_path(self) -> Path:
        return Path(self.out_dir) / f"labels-{self.index:05d}.json"

    def provenance(self) -> dict:
        """The sidecar's record of the task (file names, not paths: the same work gives the same bytes)."""
        return {
            "shard": self.index,
            "positions": {"file": Path(self.positions_file).name, "sha256": self.positions_sha256},
            "labels": self.plan,
            "network": {"file": Path(self.network).name, "sha256": self.network_sha256},
            "seed": self.seed,
        }


def shard_complete(task: ShardTask) -> bool:
    """Whether the task's shard is written: a sidecar of this task whose ``csv_sha256`` and ``rows``
    match the CSV (the checks training's reader makes, :func:`nard_ai.training.store.read_labels`, so a
    shard resume keeps is one training reads; any other is labelled again)."""
    try:
        meta = json.loads(task.sidecar_path.read_text())
        data = task.csv_path.read_bytes()
    except (OSError, ValueError):
        return False
    if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in task.provenance().items()):
        return False
    if hashlib.sha256(data).hexdigest() != meta.get("csv_sha256"):
        return False
    return meta.get("rows") == max(0, data.count(b"\n") - 1)  # the header line, then one line a row


def label_shard(task: ShardTask) -> dict:
    """Label one shard and write its CSV, then its sidecar, atomically (module docstring, "Shards").

    Returns:
        ``{"index", "rows", "seconds", "methods": {method: rows}}``.

    Raises:
        FileNotFoundError: a missing positions file or network.
        ValueError: a positions file or network that does not match the task's SHA-256, a
            malformed positions file, or a network that gives probabilities that are not finite
            (``shard N (FILE): the network PATH (SHA-256 ...) gives non-finite probabilities ...``;
            the shard is not written).
    """
    t0 = time.perf_counter()
    ids, boards, classes = read_positions_shard(task.positions_file, task.positions_sha256)
    plan = {name: LabelMethod.from_json(m) for name, m in task.plan.items()}

    def agent_for_ply(ply: int):
        return _network_agent(task.network, task.network_sha256, ply)

    where = f"shard {task.index:05d} ({Path(task.positions_file).name})"
    network = f"{task.network} (SHA-256 {task.network_sha256[:12]}...)"
    try:
        probs, used = label_boards(agent_for_ply, boards, classes, ids, plan, task.seed)
    except NonFiniteLabels as exc:
        raise ValueError(f"{where}: not labelled: the network {network} gave {exc}") from None
    try:
        data = format_labels_csv(ids, probs)
    except ValueError as exc:  # the last line of defence: no shard the reader would refuse is written
        raise ValueError(f"{where}: not labelled: the labels of the network {network}: {exc}") from None
    csv_path = atomic_write_bytes(task.csv_path, data)
    sidecar = {
        "format": LABELS_FORMAT,
        "format_version": FORMAT_VERSION,
        "perspective": "side on roll, before it rolls; gnubg cumulative order, cubeless",
        "columns": ["position_id", "win", "win_g", "win_bg", "lose_g", "lose_bg"],
        "rows": len(ids),
        "rows_by_method": used,
        "csv": csv_path.name,
        "csv_sha256": file_sha256(csv_path),
        "code": code_version(),
        **task.provenance(),
    }
    atomic_write_json(task.sidecar_path, sidecar)
    return {"index": task.index, "rows": len(ids), "seconds": time.perf_counter() - t0, "methods": used}


def plan_tasks(
    positions_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    plan: dict[str, LabelMethod],
    network: str | os.PathLike | None = None,
    seed: int = 0,
) -> tuple[list[ShardTask], dict]:
    """The tasks of labelling a position set, one per positions shard, and the run's settings.

    Args:
        positions_dir: a complete position set (:func:`~nard_ai.training.positions.read_position_set`).
        out_dir: the labels folder.
        plan: :func:`make_plan`.
        network: the checkpoint; ``None``: the one the position set was generated with (the file
            at the path its manifest records, which must still have the SHA-256 it records).
        seed: the run's seed (an integer in ``0 .. 2**64 - 1``).

    Returns:
        ``(tasks, settings)``; ``settings`` is what ``run.json`` records.

    Raises:
        FileNotFoundError: no positions folder or no network file.
        ValueError: an incomplete or damaged position set
            (:func:`~nard_ai.training.positions.read_position_set`), no network given nor recorded,
            a recorded network whose file was replaced (another SHA-256), a bad seed.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an integer in 0 .. 2**64 - 1, got {seed!r}")
    positions_dir = Path(positions_dir).resolve()
    manifest = read_position_set(positions_dir)
    recorded = manifest.get("network") if isinstance(manifest.get("network"), dict) else {}
    if network is None:
        network = recorded.get("path")
        if network is None:
            raise ValueError(f"{positions_dir}: the position set records no network; give one (--network)")
    else:
        recorded = {}  # given explicitly: any network may label the set
    network = Path(network).resolve()
    if not network.is_file():
        raise FileNotFoundError(f"no network file {network}")
    sha = file_sha256(network)
    if recorded.get("sha256") not in (None, sha):
        raise ValueError(
            f"the position set {positions_dir} was made by the network {network} of SHA-256 "
            f"{str(recorded['sha256'])[:12]}... (its positions.json), but that file has changed since (its "
            f"SHA-256 is now {sha[:12]}...); to label with the file as it is now, pass it explicitly: "
            f"--network {network}"
        )
    plan_json = _plan_json(plan)
    out_dir = Path(out_dir).resolve()
    tasks = [
        ShardTask(
            index=k,
            positions_file=str(positions_dir / s["file"]),
            positions_sha256=s.get("sha256") or file_sha256(positions_dir / s["file"]),
            out_dir=str(out_dir),
            plan=plan_json,
            network=str(network),
            network_sha256=sha,
            seed=int(seed),
        )
        for k, s in enumerate(manifest["shards"])
    ]
    settings = {
        "format": LABELS_FORMAT,
        "format_version": FORMAT_VERSION,
        "positions": {
            "path": str(positions_dir),
            "manifest_sha256": file_sha256(positions_dir / "positions.json"),
        },
        "shards": len(tasks),
        "rows": int(sum(s.get("rows", 0) for s in manifest["shards"])),
        "labels": plan_json,
        "network": {"path": str(network), "sha256": sha},
        "seed": int(seed),
    }
    return tasks, settings


def _init_worker() -> None:
    import threading

    import numba
    import torch

    torch.set_num_threads(1)
    numba.set_num_threads(1)
    parent = os.getppid()

    def watch() -> None:
        # a worker whose parent was killed (SIGKILL) would otherwise wait for work forever
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class _OneThread:
    """torch and numba on one thread for the block (the in-process worker); restored after."""

    def __enter__(self):
        import numba
        import torch

        self.saved = (torch.get_num_threads(), numba.get_num_threads())
        torch.set_num_threads(1)
        numba.set_num_threads(1)

    def __exit__(self, *exc):
        import numba
        import torch

        torch.set_num_threads(self.saved[0])
        numba.set_num_threads(self.saved[1])


def run_labels(
    positions_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    plan: dict[str, LabelMethod],
    *,
    network: str | os.PathLike | None = None,
    seed: int = 0,
    workers: int = 2,
    shards: int | range | slice | None = None,
    progress: bool = True,
    max_shards: int | None = None,
    executor=None,
) -> dict:
    """Label a position set into ``out_dir``, skipping the shards already complete (module docstring).

    Every input is checked before ``out_dir`` is created or written: the position set and each shard
    to label (its SHA-256, rows, Position IDs and classes), the network, the shard selection, the
    folder, and a ``run.json`` already there. A run that fails before it labels any shard removes
    the folders it created (never one that existed before it); one stopped by Ctrl-C or SIGTERM keeps
    them, for the rerun to resume.

    Args:
        positions_dir: a complete position set.
        out_dir: the labels folder (created); it must hold no run of other settings.
        plan: :func:`make_plan`.
        network: the checkpoint; ``None``: the position set's.
        seed: the run's seed.
        workers: worker processes (``1 .. TRAINING_LIMITS["workers"]``; 1 works in this process).
        shards: only these shard indices (to split a job by hand); ``None``: all. An ``int``
            (``--shards N``) is that one shard, which must be one of the set's. A ``slice``
            whose ``stop`` is ``None`` (``--shards START:``) runs to the set's last shard. It must
            select at least one of the set's shards, and its ``stop`` may not go beyond them (be
            more than the set's shard count).
        progress: show a tqdm bar (positions; the rate is positions per second).
        max_shards: stop after labelling this many shards (tests, trial runs).
        executor: ``None`` (the default): ``workers`` processes as above; an executor of
            :mod:`nard_ai.distributed` (a Ray cluster) runs :func:`label_shard` of each task
            instead (``workers`` is then ignored). A shard's files are a pure function of its
            task, so the labels are the same bytes on every backend; every worker needs the
            positions, the network and ``out_dir`` at the same paths (shared storage).

    Returns:
        ``{"shards": selected, "skipped": already complete, "done": labelled now, "rows": labelled now,
        "seconds", "set_shards": the set's shards, "complete": the set's shards complete in ``out_dir``
        after the run}``.

    Raises:
        FileNotFoundError, ValueError: bad inputs (:func:`plan_tasks`; a shard to label that does not
            read: :func:`~nard_ai.training.positions.read_positions_shard`), ``workers`` or
            ``max_shards`` out of range, an ``int`` ``shards`` the set lacks (``shard N is not one
            of the position set's shards: DIR has shards 0..M-1``), ``shards`` selecting none of the
            set's shards (``shards A:B select none of the position set's shards: DIR has shards 0..N-1``) or going beyond
            them (``shards A:B go beyond the position set's shards: DIR has N shards, 0..N-1 (use a
            STOP of at most N, or A: for shard A to the last)``), an
            ``out_dir`` that is empty, a file, cannot be created
            (:func:`nard_ai.training.store.make_out_folder`) or holds a run of other settings; a
            shard that fails (:func:`label_shard`).
    """
    limit = TRAINING_LIMITS
    for name, value, low in (("workers", workers, 1), ("max_shards", max_shards, 0)):
        if value is None and name == "max_shards":
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or not low <= value <= limit[name]
        ):
            raise ValueError(f"{name} must be an integer in {low} .. {limit[name]:,}, got {value!r}")
    check_out_folder(out_dir)
    tasks, settings = plan_tasks(positions_dir, out_dir, plan, network, seed)
    all_tasks = tasks
    if isinstance(shards, (int, np.integer)) and not isinstance(shards, bool):  # --shards N: one shard
        n = len(all_tasks)
        tasks = [t for t in tasks if t.index == shards]
        if not tasks:
            held = f"shards 0..{n - 1}" if all_tasks else "no shards"
            raise ValueError(
                f"shard {shards} is not one of the position set's shards: {positions_dir} has {held}"
            )
    elif shards is not None:
        n = len(all_tasks)
        if isinstance(shards, slice):  # stop None: to the last shard (--shards START:)
            named = f"{shards.start or 0}:{'' if shards.stop is None else shards.stop}"
            shards = range(shards.start or 0, n if shards.stop is None else shards.stop, shards.step or 1)
        else:
            named = f"{shards.start}:{shards.stop}"
        tasks = [t for t in tasks if t.index in shards]
        if not tasks:
            held = f"shards 0..{n - 1}" if all_tasks else "no shards"
            raise ValueError(
                f"shards {named} select none of the position set's shards: {positions_dir} has {held}"
            )
        if shards.stop > n:
            raise ValueError(
                f"shards {named} go beyond the position set's shards: {positions_dir} has {n} "
                f"shard{'s' if n != 1 else ''}, 0..{n - 1} (use a STOP of at most {n}, or {shards.start}: "
                f"for shard {shards.start} to the last)"
            )
    out = Path(out_dir)
    run_file = out / RUN_FILE
    if run_file.is_file():
        try:
            previous = json.loads(run_file.read_text())
        except ValueError:
            previous = None
        if previous != settings:
            diff = sorted(
                k for k in set(settings) | set(previous or {}) if (previous or {}).get(k) != settings.get(k)
            )
            raise ValueError(
                f"{out} holds labels of a run with other settings ({', '.join(diff)} differ); "
                "use another --out, or the same settings to resume"
            )
    todo = [t for t in tasks if not shard_complete(t)]
    skipped = len(tasks) - len(todo)
    if max_shards is not None:
        todo = todo[:max_shards]
    for task in todo:  # every shard to label reads, before anything is written
        read_positions_shard(task.positions_file, task.positions_sha256)
    created = make_out_folder(out)
    done = rows = 0
    try:
        if not run_file.is_file():
            atomic_write_json(run_file, settings)
        remove_stale_temporaries(out)
        done, rows, seconds = _label_tasks(out, todo, skipped, workers, progress, executor)
    except Exception:
        # nothing labelled in a folder this run made: remove it (only run.json, run.log, temporaries)
        if created and not any(out.glob("labels-*.json")):
            import shutil

            shutil.rmtree(out, ignore_errors=True)
            remove_created_folders(created)
        raise
    return {
        "shards": len(tasks),
        "skipped": skipped,
        "done": done,
        "rows": rows,
        "seconds": seconds,
        "set_shards": len(all_tasks),
        "complete": sum(shard_complete(t) for t in all_tasks),
    }


def _label_tasks(out: Path, todo: list[ShardTask], skipped: int, workers: int, progress: bool, executor):
    """Label ``todo`` (:func:`run_labels`), logging to ``run.log``; returns ``(shards, rows, seconds)``.
    On an error or interrupt the log's ``stop`` line counts the shards finished so far, and the
    exception propagates."""
    rows_todo = sum(_rows(t) for t in todo)
    t0 = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=rows_todo, unit="pos", desc="labels", smoothing=0.1, mininterval=1.0, file=sys.stderr
        )
    done = rows = 0
    log = open(out / LOG_FILE, "a")
    log.write(
        f"{time.strftime('%Y-%m-%d %H:%M:%S')} start: {len(todo)} shards to label, {skipped} complete\n"
    )
    log.flush()

    def finished(result: dict) -> None:
        nonlocal done, rows
        done += 1
        rows += result["rows"]
        if bar is not None:
            bar.update(result["rows"])
        rate = result["rows"] / max(result["seconds"], 1e-9)
        log.write(
            f"{time.strftime('%Y-%m-%d %H:%M:%S')} shard {result['index']:05d}: {result['rows']} positions "
            f"in {result['seconds']:.1f} s ({rate:.1f}/s) {result['methods']}\n"
        )
        log.flush()

    try:
        if executor is not None:
            if not callable(getattr(executor, "map", None)):
                raise ValueError(f"executor must have map(fn, tasks) (nard_ai.distributed), got {executor!r}")
            executor.map(label_shard, todo, on_result=lambda _i, result: finished(result))
        elif workers == 1 or len(todo) <= 1:
            with _OneThread():
                for task in todo:
                    finished(label_shard(task))
        else:
            _run_pool(todo, int(workers), finished)
    finally:
        if bar is not None:
            bar.close()
        log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} stop: {done} shards labelled\n")
        log.close()
    return done, rows, time.perf_counter() - t0


def _rows(task: ShardTask) -> int:
    with open(task.positions_file, "rb") as f:
        return max(0, sum(1 for _ in f) - 1)


def _run_pool(todo: list[ShardTask], workers: int, finished) -> None:
    import multiprocessing

    saved = {k: os.environ.get(k) for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    os.environ.update({k: "1" for k in saved})  # the spawned workers start with one thread each
    try:
        ctx = multiprocessing.get_context("spawn")
        before = {c.pid for c in multiprocessing.active_children()}
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker) as pool:
            pending: set = set()
            queue = list(todo)
            try:
                while queue and len(pending) < 2 * workers:
                    pending.add(pool.submit(label_shard, queue.pop(0)))
                while pending:
                    complete, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in complete:
                        finished(fut.result())
                        if queue:
                            pending.add(pool.submit(label_shard, queue.pop(0)))
            except BaseException:
                # interrupted (Ctrl-C, or SIGTERM through the command line's handler): stop this
                # pool's workers, so that a shard in flight (a rollout shard can take an hour) is not
                # waited for; its worker writes atomically, so the rerun relabels it. The pool then
                # fails every future not done (no cancel(): Python 3.11's pool raises
                # InvalidStateError on a cancelled one); the shards finished meanwhile are counted.
                for child in multiprocessing.active_children():
                    if child.pid not in before:
                        child.terminate()
                for fut in pending:
                    try:
                        finished(fut.result())
                    except Exception:  # BrokenProcessPool: the worker was stopped mid-shard
                        pass
                raise
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
