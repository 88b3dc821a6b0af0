"""Position sets for supervised training: seeded self-play with exploration, gnubg's classes, dedup, strata.

Every position is a board **before its side on roll rolls**, from that side's
view (:mod:`nard_ai.core.board`), the state a label is the value of
(:func:`nard_ai.search.position_probs`).

Classes (gnubg ``ClassifyPosition``, eval.c)
--------------------------------------------
Each board is in one of :data:`CLASS_NAMES` (``over``, ``bearoff``, ``race``, ``crashed``,
``contact``) by :func:`classify_positions`; the classes, gnubg's crashed test among them, are
defined in :mod:`nard_ai.core.classes` and re-exported here.

Generation (:func:`generate_positions`)
---------------------------------------
``pool`` games in lockstep, self-play of one network at 0-ply from the
starting position; every pre-roll position of every game is a candidate.
Each play is the network's best (highest cubeless equity, ties to the first
play in generator order) except for **exploration**, decided per play:

* with probability ``epsilon``, a uniformly random legal play;
* otherwise, with ``temperature > 0``, a play drawn with probability
  proportional to ``exp(equity / temperature)`` (softmax over the legal
  plays' 0-ply equities, sampled by the Gumbel-max trick); with
  ``temperature = 0`` the best play.

Random plays are what bring the rarer classes (crashed boards, back games,
gammonish positions) into a set, at a cost: they are not positions either
side would steer to. ``epsilon = 0.05`` (the default) is one random play in
twenty, a few per game.

Candidates are **deduplicated** by position (a Position ID is a one-to-one
image of the board, so equal boards are equal IDs), minus those of
``exclude`` (another set's positions: a benchmark never overlaps training
data). Per class the quota is ``round(count * proportion)``; a class keeps
up to ``oversample * quota`` distinct candidates, and generation stops when
every class has its quota (or ``max_games`` games have started). Each class's
quota is then a seeded random sample of its candidates (or, with
``disagreement_ply``, the candidates where the ``disagreement_ply``-ply and
0-ply cubeless equities differ most: that needs ``oversample * quota``
candidates per class and costs one ``disagreement_ply``-ply evaluation of
each), and the whole set is shuffled so that every shard is a stratified
sample. A class that falls short gets all its candidates; the shortfall is
in the result.

Everything random comes from ``np.random.default_rng(seed)``: the same
network, arguments and seed give the same set, on one thread (torch and
numba thread counts change the last bits of network outputs, and so, rarely,
a play).

Shards (``shard_games``, ``--shard-games``, ``--ray``)
------------------------------------------------------
With ``shard_games = S`` the games are played in shards of ``S`` games
instead of one lockstep run: shard ``i`` plays its games from
``np.random.default_rng([seed, i])`` alone and returns every distinct
pre-roll position in the order first seen (:func:`_game_shard`), so a shard
is a pure function of its index and can run anywhere (an executor of
:mod:`nard_ai.distributed`: this process, or a Ray cluster). The driver runs
the shards in waves of twice the executor's workers and takes their
candidates **in shard order**, by the same per-class caps, deduplication and
exclusion as above, until every class has what it needs; shards after the
one that filled the last class are not used, so the set depends on the seed
and ``S``, never on the executor or the wave size (``tests/test_ray.py``).
The quota sample and the shuffle then use ``np.random.default_rng(seed)`` as
in the lockstep run. The set differs from the lockstep run's (other dice);
a shard plays all its games, so a sharded run plays up to one wave of games
more than it needs.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nard_ai.core.board import BOARD_SIZE, starting_board
from nard_ai.core.classes import (  # re-exported: the classes of a position set
    BEAROFF,
    CLASS_NAMES,
    CONTACT,
    CRASHED,
    OVER,
    RACE,
    classify_positions,
    crashed_sides,
)
from nard_ai.core.game import opening_roll, roll_dice
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.core.outcomes import cubeless_equity
from nard_ai.formats.position_id import boards_from_position_ids, position_id
from nard_ai.play.lockstep import Lockstep
from nard_ai.search import STANDARD_RULES, afterstate_probs, position_probs
from nard_ai.training.argtypes import MAX_SEED, TRAINING_LIMITS
from nard_ai.training.store import (
    FORMAT_VERSION,
    POSITIONS_FORMAT,
    atomic_write_bytes,
    atomic_write_json,
    check_out_folder,
    code_version,
    file_sha256,
    format_positions_csv,
    make_out_folder,
    parse_positions_csv,
    remove_created_folders,
    remove_stale_temporaries,
)

__all__ = [
    "CLASS_NAMES",
    "OVER",
    "BEAROFF",
    "RACE",
    "CRASHED",
    "CONTACT",
    "DEFAULT_PROPORTIONS",
    "PositionSet",
    "classify_positions",
    "crashed_sides",
    "disagreement",
    "generate_positions",
    "parse_proportions",
    "position_keys",
    "read_position_set",
    "read_positions_shard",
    "write_position_set",
]

_CLASS_OF_NAME = {name: k for k, name in enumerate(CLASS_NAMES)}

DEFAULT_PROPORTIONS = {"contact": 0.55, "crashed": 0.15, "race": 0.25, "bearoff": 0.05}
"""Default strata: mostly contact, crashed boards over-represented (about 8% of the distinct
positions of self-play of ``nard-rich.pt`` with ``epsilon = 0.05``, and hard for a network), races,
and a few bear-offs (the evaluator takes those from the bear-off database anyway)."""

MANIFEST = "positions.json"


def position_keys(boards: np.ndarray) -> list[bytes]:
    """Hashable keys of ``(N, 26)`` int8 boards (their bytes): equal keys, equal boards, equal Position IDs."""
    b = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
    return [bytes(row) for row in b.view(np.uint8)]


def parse_proportions(spec: str | dict) -> dict[str, float]:
    """Class proportions from ``"contact=0.55,crashed=0.15,..."`` (or a dict), normalised to sum 1.

    Raises:
        ValueError: an unknown class, ``over`` (no pre-roll position is over), a proportion that is
            not a number >= 0, or all zero.
    """
    if isinstance(spec, str):
        items = {}
        for part in spec.split(","):
            if not part.strip():
                continue
            name, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"class proportions must be CLASS=NUMBER,..., got {part.strip()!r}")
            items[name.strip()] = value.strip()
    elif isinstance(spec, dict):
        items = dict(spec)
    else:
        raise ValueError(f"class proportions must be a string or a dict, got {spec!r}")
    out = {}
    for name, value in items.items():
        if name not in _CLASS_OF_NAME or name == "over":
            raise ValueError(
                f"unknown position class {name!r}; one of {', '.join(n for n in CLASS_NAMES if n != 'over')}"
            )
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"the proportion of {name} must be a number, got {value!r}") from None
        if not math.isfinite(x) or x < 0:
            raise ValueError(f"the proportion of {name} must be a finite number >= 0, got {value!r}")
        out[name] = x
    total = sum(out.values())
    if total <= 0:
        raise ValueError("class proportions: at least one must be > 0")
    return {k: v / total for k, v in out.items() if v > 0}


def _quotas(count: int, proportions: dict[str, float]) -> dict[str, int]:
    # largest remainder: the quotas sum to count exactly
    raw = {k: count * v for k, v in proportions.items()}
    q = {k: int(math.floor(v)) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: (q[k] - raw[k], k))[: count - sum(q.values())]:
        q[k] += 1
    return q


# --------------------------------------------------------------------------- generation


@dataclass
class PositionSet:
    """A deduplicated, stratified set of positions.

    Attributes:
        boards: ``(N, 26)`` int8, side on roll's view, in the set's (shuffled) order.
        classes: ``(N,)`` int8 class numbers.
        info: how it was made (JSON-able): requested quotas, candidates found per class,
            shortfalls, games and plies played, settings.
    """

    boards: np.ndarray
    classes: np.ndarray
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.boards)

    def counts(self) -> dict[str, int]:
        """Positions per class name."""
        return {name: int((self.classes == k).sum()) for k, name in enumerate(CLASS_NAMES)}


def _segment_argmax(score: np.ndarray, owner: np.ndarray) -> np.ndarray:
    # owner ascending and contiguous; ties go to the first row (lexsort is stable)
    order = np.lexsort((-score, owner))
    first = np.flatnonzero(np.r_[True, owner[order][1:] != owner[order][:-1]])
    return order[first]


def _check_int(name: str, value, low: int, allow_none: bool = False, high: int | None = None):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be an integer <= {high:,}, got {value!r}")
    return int(value)


def _check_float(name: str, value, low: float, high: float = math.inf) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not (low <= x <= high) or not math.isfinite(x):
        bounds = f"a finite number >= {low:g}" if high == math.inf else f"a number in [{low:g}, {high:g}]"
        raise ValueError(f"{name} must be {bounds}, got {value!r}")
    return x


def disagreement(evaluator, boards: np.ndarray, ply: int = 2, rules=STANDARD_RULES) -> np.ndarray:
    """``|equity at ply - equity at 0-ply|`` of positions (cubeless, side on roll), ``(N,)`` float64.

    Where the search and the static evaluation disagree most, the network has the most to learn.
    """
    e0 = cubeless_equity(position_probs(evaluator, boards, 0, rules).astype(np.float64))
    ek = cubeless_equity(position_probs(evaluator, boards, ply, rules).astype(np.float64))
    return np.abs(ek - e0)


def _choose(evaluator, boards, dice, rng, epsilon, temperature, rules) -> np.ndarray:
    """Every board's play (module docstring, "Generation"): ``(n, 26)`` int8 afterstates, mover's view."""
    afterstates, owner = legal_plays_batch(boards, dice, rules, sort=False)
    equity = cubeless_equity(afterstate_probs(evaluator, afterstates).astype(np.float64))
    score = equity
    if temperature > 0:
        score = equity / temperature - np.log(-np.log(rng.random(len(equity)) + 1e-300) + 1e-300)
    explore = rng.random(len(boards)) < epsilon
    if explore.any():
        rows = explore[owner]
        score = np.where(rows, 0.0, score)
        score[rows] = rng.random(int(rows.sum()))
    return afterstates[_segment_argmax(score, owner)]


def _self_play(evaluator, visit, rng, games, pool, epsilon, temperature, rules) -> tuple[int, int, int]:
    """``games`` games of exploring self-play, ``pool`` at a time on the lockstep engine
    (:class:`nard_ai.play.lockstep.Lockstep`: its turn end, its ply limit); a finished game's slot
    takes the next game. Before every ply, ``visit(boards)`` gets the pre-roll positions of the
    running games (side on roll's view) and may stop the run by returning True. The dice and the
    exploration draw from ``rng`` only. Returns ``(games started, games finished, plies)``."""
    slots = min(pool, games)
    lock = Lockstep(slots, what="self-play game")
    lock.start(np.arange(slots), starting_board())
    dice = np.empty((slots, 2), dtype=np.int8)
    _, dice[:] = opening_roll(slots, rng)
    started, finished = slots, 0
    while True:
        idx = np.flatnonzero(lock.running)
        if len(idx) == 0 or visit(lock.boards[idx]):
            break
        ended, _ = lock.play(
            idx, _choose(evaluator, lock.boards[idx], dice[idx], rng, epsilon, temperature, rules)
        )
        going = idx[~ended]
        dice[going] = roll_dice(len(going), rng)
        finished += int(ended.sum())
        new = idx[ended][: max(0, games - started)]
        if len(new):
            lock.start(new, starting_board())
            _, dice[new] = opening_roll(len(new), rng)
            started += len(new)
    return started, finished, lock.plies


def _game_shard(evaluator, task: tuple) -> tuple[np.ndarray, np.ndarray, int]:
    """Shard ``index`` of a sharded generation: ``games`` games of seeded self-play, all their pre-roll
    positions. ``task = (seed, index, games, pool, epsilon, temperature, rules)``; the dice and
    exploration come from ``np.random.default_rng([seed, index])`` only. Returns ``(boards (n, 26)
    int8, classes (n,) int8, plies)``: each distinct position once, in the order first seen."""
    seed, index, games, pool, epsilon, temperature, rules = task
    rng = np.random.default_rng([seed, index])
    seen: dict[bytes, int] = {}

    def record(boards: np.ndarray) -> bool:
        for key, c in zip(position_keys(boards), classify_positions(boards).tolist(), strict=True):
            seen.setdefault(key, c)
        return False

    _, _, plies = _self_play(evaluator, record, rng, games, pool, epsilon, temperature, rules)
    keys = np.frombuffer(b"".join(seen), dtype=np.int8).reshape(-1, BOARD_SIZE)
    return keys, np.fromiter(seen.values(), dtype=np.int8, count=len(seen)), plies


def _sharded_candidates(
    evaluator, take, seed, max_games, shard_games, pool, epsilon, temperature, rules, executor
):
    """Run game shards in waves (``2 x`` the executor's workers) and ``take`` their candidates in shard
    order until every class has what it needs or ``max_games`` games are played; the shards of a wave
    after the one that filled the classes are not used, so the set does not depend on the wave size.
    Returns ``(games started, games finished, plies)`` of the shards used."""
    if executor is None:
        from nard_ai.distributed import LocalExecutor

        executor = LocalExecutor()
    sizes = [min(shard_games, max_games - first) for first in range(0, max_games, shard_games)]
    wave = max(1, 2 * int(getattr(executor, "workers", 1)))
    started = plies = 0
    for w in range(0, len(sizes), wave):
        tasks = [
            (seed, i, sizes[i], pool, epsilon, temperature, rules)
            for i in range(w, min(w + wave, len(sizes)))
        ]
        for task, (boards, classes, shard_plies) in zip(
            tasks, executor.map(_game_shard, tasks, evaluator), strict=True
        ):
            started += task[2]
            plies += shard_plies
            if take(position_keys(boards), classes.tolist()):
                return started, started, plies
    return started, started, plies


def generate_positions(
    evaluator,
    count: int,
    seed: int,
    *,
    proportions: dict[str, float] | str | None = None,
    epsilon: float = 0.05,
    temperature: float = 0.0,
    pool: int = 256,
    oversample: float = 2.0,
    max_games: int | None = None,
    exclude: set[bytes] | None = None,
    disagreement_ply: int | None = None,
    rules=STANDARD_RULES,
    progress: bool = False,
    executor=None,
    shard_games: int = 0,
) -> PositionSet:
    """Positions from seeded self-play of ``evaluator`` at 0-ply (module docstring, "Generation").

    Args:
        evaluator: a network evaluator (anything with ``evaluate(boards) -> (N, 5)``).
        count: positions wanted, >= 1.
        seed: seed of the dice, the exploration and the sampling (an integer >= 0).
        proportions: class proportions (:func:`parse_proportions`); :data:`DEFAULT_PROPORTIONS`
            when ``None``.
        epsilon: chance of a uniformly random play, 0..1.
        temperature: softmax temperature of the other plays, in points per game; 0 plays the best.
        pool: games in lockstep (the batch of each network call).
        oversample: candidates kept per class, as a multiple of its quota (>= 1).
        max_games: stop after this many games have started; ``None``: ``max(1000, count)``.
        (``count``, ``pool``, ``oversample``, ``max_games``, ``shard_games`` and ``count x
        oversample`` are bounded by :data:`nard_ai.training.argtypes.TRAINING_LIMITS`, ``seed`` by
        ``2**64 - 1``.)
        exclude: keys (:func:`position_keys`) of positions that must not be in the set.
        disagreement_ply: choose each class's quota among its candidates by :func:`disagreement`
            at this ply (1 or 2) instead of at random; ``None`` (default): at random.
        rules: rule settings.
        progress: show a tqdm bar of candidates found.
        executor: with ``shard_games``, where the game shards run (a
            :class:`nard_ai.distributed.LocalExecutor` or ``RayExecutor``; ``None``: a local one).
        shard_games: play the games in shards of this many (module docstring, "Shards"), each
            seeded by its index, so that any executor gives the same set; 0 (default): one
            lockstep run in this process, stopped as soon as every class has its candidates.

    Returns:
        A :class:`PositionSet` of at most ``count`` positions (fewer when a class fell short;
        ``info["shortfall"]`` says by how much).

    Raises:
        ValueError: on a bad argument (out of its range, or above its bound).
    """
    limits = TRAINING_LIMITS
    count = _check_int("count", count, 1, high=limits["count"])
    seed = _check_int("seed", seed, 0, high=MAX_SEED)
    pool = _check_int("pool", pool, 1, high=limits["pool"])
    epsilon = _check_float("epsilon", epsilon, 0.0, 1.0)
    temperature = _check_float("temperature", temperature, 0.0)
    oversample = _check_float("oversample", oversample, 1.0, limits["oversample"])
    if count * oversample > limits["candidates"]:
        raise ValueError(
            f"count x oversample must be at most {limits['candidates']:,} candidates, got "
            f"{count:,} x {oversample:g}"
        )
    max_games = _check_int("max_games", max_games, 1, allow_none=True, high=limits["max_games"])
    if max_games is None:
        max_games = max(1000, count)
    if disagreement_ply is not None and disagreement_ply not in (1, 2):
        raise ValueError(f"disagreement_ply must be 1, 2 or None, got {disagreement_ply!r}")
    props = parse_proportions(DEFAULT_PROPORTIONS if proportions is None else proportions)
    quota = _quotas(count, props)
    cap = {k: max(q, int(math.ceil(oversample * q))) for k, q in quota.items()}
    need = cap if disagreement_ply is not None else quota
    quota_c = np.zeros(len(CLASS_NAMES), dtype=np.int64)
    cap_c = np.zeros(len(CLASS_NAMES), dtype=np.int64)
    need_c = np.zeros(len(CLASS_NAMES), dtype=np.int64)
    for name in quota:
        k = _CLASS_OF_NAME[name]
        quota_c[k], cap_c[k], need_c[k] = quota[name], cap[name], need[name]
    exclude = exclude or set()

    shard_games = _check_int("shard_games", shard_games, 0, high=limits["shard_games"])
    rng = np.random.default_rng(seed)
    found: list[dict[bytes, None]] = [{} for _ in CLASS_NAMES]  # insertion-ordered sets
    excluded = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=int(need_c.sum()), desc="positions", unit="pos", smoothing=0.05)

    def take(keys, classes) -> bool:
        # add candidates in order; True once every class has what it needs
        nonlocal excluded
        for key, c in zip(keys, classes, strict=True):
            bucket = found[c]
            if len(bucket) >= cap_c[c] or key in bucket:
                continue
            if key in exclude:
                excluded += 1
                continue
            bucket[key] = None
            if bar is not None and len(bucket) <= need_c[c]:
                bar.update(1)
        return all(len(found[k]) >= need_c[k] for k in range(len(CLASS_NAMES)))

    settings = {
        "count": count, "seed": seed, "proportions": props, "epsilon": epsilon, "temperature": temperature,
        "pool": pool, "oversample": oversample, "max_games": max_games, "disagreement_ply": disagreement_ply,
        "rules": rules.code if hasattr(rules, "code") else None,
    }  # fmt: skip
    try:
        if shard_games:
            started, games, plies = _sharded_candidates(
                evaluator, take, seed, max_games, shard_games, pool, epsilon, temperature, rules, executor
            )
            settings["shard_games"] = shard_games
        else:
            started, games, plies = _lockstep_candidates(
                evaluator, take, rng, max_games, pool, epsilon, temperature, rules
            )
    finally:
        if bar is not None:
            bar.close()
    return _selected(
        evaluator,
        found,
        quota,
        quota_c,
        rng,
        disagreement_ply,
        rules,
        excluded,
        started,
        games,
        plies,
        settings,
    )


def _lockstep_candidates(evaluator, take, rng, max_games, pool, epsilon, temperature, rules):
    """One lockstep run of ``pool`` games in this process, ``take``-ing every ply's pre-roll positions
    until it says every class has what it needs. Returns ``(games started, finished, plies)``."""

    def visit(boards: np.ndarray) -> bool:
        return take(position_keys(boards), classify_positions(boards).tolist())

    return _self_play(evaluator, visit, rng, max_games, pool, epsilon, temperature, rules)


def _selected(
    evaluator, found, quota, quota_c, rng, disagreement_ply, rules, excluded, started, games, plies, settings
) -> PositionSet:
    """Each class's quota out of its candidates ``found`` (at random, or by disagreement), shuffled."""
    chosen_boards, chosen_classes = [], []
    shortfall = {}
    for name in quota:
        k = _CLASS_OF_NAME[name]
        cand = np.frombuffer(b"".join(found[k]), dtype=np.int8).reshape(-1, BOARD_SIZE)
        q = int(quota_c[k])
        if len(cand) < q:
            shortfall[name] = q - len(cand)
        take = min(q, len(cand))
        if disagreement_ply is not None and len(cand) > take:
            gap = disagreement(evaluator, cand, disagreement_ply, rules)
            pick = np.sort(np.argsort(-gap, kind="stable")[:take])
        else:
            pick = (
                np.sort(rng.choice(len(cand), size=take, replace=False))
                if len(cand) > take
                else np.arange(take)
            )
        chosen_boards.append(cand[pick])
        chosen_classes.append(np.full(take, k, dtype=np.int8))
    all_boards = np.concatenate(chosen_boards) if chosen_boards else np.zeros((0, BOARD_SIZE), np.int8)
    all_classes = np.concatenate(chosen_classes) if chosen_classes else np.zeros(0, np.int8)
    order = rng.permutation(len(all_boards))
    info = {
        "requested": quota,
        "candidates": {
            CLASS_NAMES[k]: len(found[k]) for k in range(len(CLASS_NAMES)) if CLASS_NAMES[k] in quota
        },
        "shortfall": shortfall,
        "excluded_seen": excluded,
        "games_started": int(started),
        "games_finished": int(games),
        "plies": int(plies),
        "settings": settings,
    }
    return PositionSet(all_boards[order], all_classes[order], info)


# --------------------------------------------------------------------------- files


def _shard_name(k: int) -> str:
    return f"positions-{k:05d}.csv"


def write_position_set(
    folder: str | os.PathLike, positions: PositionSet, *, shard_size: int = 1000, extra: dict | None = None
) -> dict:
    """Write a position set as shards and a manifest (:mod:`nard_ai.training.store`).

    Args:
        folder: created if needed; must not hold another position set.
        positions: the set.
        shard_size: rows per shard (the unit of labelling work), >= 1.
        extra: more manifest entries (the network, exclusions).

    Returns:
        The manifest written.

    Shards without a manifest (a write that was killed) are replaced.

    Raises:
        ValueError: ``folder`` is empty or a file, cannot be created, or already holds a complete
            position set (a manifest); a ``shard_size`` out of ``1 ..``
            ``TRAINING_LIMITS["shard_size"]``.
    """
    shard_size = _check_int("shard_size", shard_size, 1, high=TRAINING_LIMITS["shard_size"])
    folder = check_new_set_folder(folder)
    make_out_folder(folder)
    remove_stale_temporaries(folder)
    for stale in folder.glob("positions-*.csv"):
        stale.unlink()
    ids = [position_id(b) for b in positions.boards]
    names = [CLASS_NAMES[c] for c in positions.classes.tolist()]
    shards = []
    for k, start in enumerate(range(0, len(ids), shard_size)):
        stop = min(start + shard_size, len(ids))
        path = atomic_write_bytes(
            folder / _shard_name(k), format_positions_csv(ids[start:stop], names[start:stop])
        )
        shards.append({"file": path.name, "rows": stop - start, "sha256": file_sha256(path)})
    manifest = {
        "format": POSITIONS_FORMAT,
        "format_version": FORMAT_VERSION,
        "perspective": "side on roll, before it rolls (gnubg Position ID, player on roll)",
        "count": len(ids),
        "shard_size": shard_size,
        "shards": shards,
        "classes": positions.counts(),
        "generation": positions.info,
        "code": code_version(),
        **(extra or {}),
    }
    atomic_write_json(folder / MANIFEST, manifest)
    return manifest


def check_new_set_folder(folder: str | os.PathLike) -> Path:
    """``folder`` as a Path, if a new position set can be written there (it need not exist yet: it is
    created and removed again, to know it can be, so a run that is stopped leaves nothing behind).

    Raises:
        ValueError: ``folder`` is empty, it (or a folder on its path) is a file, it cannot be created
            (:func:`nard_ai.training.store.make_out_folder`), or it already holds a complete position
            set (a manifest).
    """
    folder = check_out_folder(folder)
    if (folder / MANIFEST).exists():
        raise ValueError(f"{folder} already holds a position set; choose another --out")
    remove_created_folders(make_out_folder(folder))
    return folder


def read_position_set(folder: str | os.PathLike) -> dict:
    """The manifest of a complete position set (``positions.json``), checked against its shards.

    Every shard listed must exist, have the SHA-256 the manifest records and as many rows as its
    ``rows`` (a CSV that parses: :func:`nard_ai.training.store.parse_positions_csv`); the Position IDs
    and classes are checked when a shard is read (:func:`read_positions_shard`).

    Raises:
        FileNotFoundError: no such folder.
        ValueError: no manifest (an incomplete or foreign folder), or one of another format; a shard
            missing, changed (its SHA-256), malformed, or of a row count other than the manifest's.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no positions folder {folder}")
    path = folder / MANIFEST
    if not path.is_file():
        raise ValueError(f"{folder} holds no {MANIFEST}: not a (complete) position set")
    try:
        manifest = json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != POSITIONS_FORMAT:
        raise ValueError(f"{path}: not a nard_ai position set (format {POSITIONS_FORMAT!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: format version {manifest.get('format_version')!r}, this code reads {FORMAT_VERSION}"
        )
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not all(isinstance(s, dict) and "file" in s for s in shards):
        raise ValueError(f"{path}: no list of shards")
    for s in shards:
        _check_shard_file(folder, s)
    return manifest


def _check_shard_file(folder: Path, shard: dict) -> None:
    """A manifest's shard entry against its file: present, its SHA-256 (if recorded), its ``rows``."""
    import hashlib

    path = folder / str(shard["file"])
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(
            f"{path}: listed in {MANIFEST} but cannot be read ({exc.strerror or exc}); the set is damaged"
        ) from None
    if "sha256" in shard and hashlib.sha256(data).hexdigest() != shard["sha256"]:
        raise ValueError(f"{path}: its SHA-256 does not match the manifest (the file changed)")
    rows = len(parse_positions_csv(data, str(path))[0])
    if shard.get("rows") != rows or isinstance(shard.get("rows"), bool):
        raise ValueError(
            f"{path}: {rows} rows, but {MANIFEST} says {shard.get('rows')!r} (the manifest was edited "
            "or damaged since the set was written)"
        )


def read_positions_shard(
    path: str | os.PathLike, sha256: str | None = None
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """One positions shard: ``(Position IDs, (N, 26) int8 boards, (N,) int8 classes)``.

    Args:
        path: the CSV file.
        sha256: if given, the file's bytes must have this digest.

    Raises:
        FileNotFoundError: no such file.
        ValueError: a digest mismatch, a malformed file or Position ID, a class that is not the
            position's own (:func:`classify_positions`).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no positions file {path}")
    data = path.read_bytes()
    if sha256 is not None:
        import hashlib

        if hashlib.sha256(data).hexdigest() != sha256:
            raise ValueError(f"{path}: its SHA-256 does not match the manifest (the file changed)")
    ids, names = parse_positions_csv(data, str(path))
    boards = boards_from_position_ids(ids, where=lambda i: f"{path}, line {i + 2}")
    classes = classify_positions(boards) if len(boards) else np.zeros(0, np.int8)
    for i, (name, c) in enumerate(zip(names, classes.tolist(), strict=True)):
        if name != CLASS_NAMES[c]:
            raise ValueError(f"{path}, line {i + 2}: class {name!r}, but the position is {CLASS_NAMES[c]!r}")
    return ids, boards, classes


def load_keys(folders) -> set[bytes]:
    """Keys (:func:`position_keys`) of every position of the given position sets (for ``exclude``)."""
    keys: set[bytes] = set()
    for folder in folders:
        manifest = read_position_set(folder)
        for s in manifest["shards"]:
            _, boards, _ = read_positions_shard(Path(folder) / s["file"], s.get("sha256"))
            keys.update(position_keys(boards))
    return keys
