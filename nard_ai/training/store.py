"""The on-disk formats of position sets and labelled positions: CSV shards with JSON sidecars.

Everything here is plain text that any tool can read (a spreadsheet, pandas,
``csv`` in any language); a position is its gnubg Position ID
(:mod:`nard_ai.formats.position_id`), always from the view of **the side on
roll, before it rolls** (gnubg's player on roll).

Position set (a folder, written by :mod:`nard_ai.training.positions`)
----------------------------------------------------------------------
* ``positions-00000.csv``, ``positions-00001.csv``, ...: one row per
  position, header ``position_id,class``; ``class`` is one of
  :data:`~nard_ai.training.positions.CLASS_NAMES` (gnubg's
  ``ClassifyPosition``; redundant, since it follows from the position, and
  checked on reading). Every shard but the last holds ``shard_size`` rows;
  rows are in a seeded random order, so each shard is a stratified sample of
  the whole set.
* ``positions.json``: the manifest, written last (its presence means the set
  is complete): ``format = "nard_ai.positions"``, ``format_version``, the
  shards (``file``, ``rows``, ``sha256`` of the file's bytes), counts per
  class, and how the set was made (network file and SHA-256, seed,
  exploration, games played, exclusions).

Labels (a folder, written by :mod:`nard_ai.training.labels`)
------------------------------------------------------------
* ``labels-00000.csv``, ...: label shard ``k`` labels positions shard ``k``,
  row for row, header ``position_id,win,win_g,win_bg,lose_g,lose_bg``: gnubg's
  five **cumulative** probabilities for the side on roll (win; win a gammon
  or backgammon; win a backgammon; lose a gammon or backgammon; lose a
  backgammon; cubeless), as decimal numbers with :data:`DECIMALS` digits.
  They satisfy ``0 <= win_bg <= win_g <= win <= 1`` and ``0 <= lose_bg <=
  lose_g <= 1 - win`` (rollout means are clipped to that, see
  :func:`consistent_probs`); the writer refuses probabilities that are not
  finite (a network with NaN weights) and the reader refuses rows that break
  that order by more than :data:`ORDER_TOLERANCE` (the rounding to
  :data:`DECIMALS` digits), naming the file and line.
* ``labels-00000.json``, ...: the shard's sidecar, written after its CSV (a
  shard is complete when its sidecar exists and the CSV's SHA-256 matches the
  sidecar's ``csv_sha256``): ``format = "nard_ai.labels"``, ``format_version``,
  ``shard``, ``rows``, the input positions file and its SHA-256, the label
  method of each position class (``method``: ``exact``, ``0ply``, ``1ply``,
  ``2ply`` or ``rollout``; ``ply``; ``games``, ``play_ply``, ``truncate``,
  ``variance_reduction`` for rollouts), rows per method, the network (file
  name and SHA-256 of its bytes), the seed and the code version. Sidecars
  hold no timestamps, so the same inputs give byte-identical shards.
  A CSV without a sidecar is *unfinished* (a labelling run killed mid-shard
  leaves it): :func:`read_labels` leaves it out and the next run labels it.
  A sidecar that cannot be read, whose CSV is missing, or whose
  ``csv_sha256`` or ``rows`` the CSV does not match is *damaged* (the files
  were edited, truncated or deleted since they were written):
  :func:`read_labels` refuses the folder with an error naming the shard, and
  the label command relabels it when rerun. So is a sidecar of another
  ``format`` or a later ``format_version``, and one whose ``shard`` or ``csv``
  is not its file name's (a shard copied or renamed: its rows would be read
  twice). Every shard of a folder must come from one run: a shard whose label
  methods (``labels``), ``seed`` or network SHA-256 differ from the folder's
  ``run.json`` (without one, from its first shard) is an error naming it,
  since shards of two runs would train as one data set (put each run in a
  folder of its own; training takes several). Those keys are compared only
  where both record them: a hand-made sidecar may hold ``csv_sha256`` alone.
  A folder whose ``run.json`` counts
  more shards than are complete is read (its complete shards), with a one-line
  note of how many of how many (logger ``nard_ai.training.store``); so is a
  folder in which a Position ID appears more than once (the label command
  never writes one: each row trains).
* ``run.json``: the settings of the run that writes the folder; a second run
  into it must have the same settings (it then only adds missing shards).
* ``run.log``: one line per shard finished, with its time (not part of the
  data).

Files are written atomically (:mod:`nard_ai.model.atomic`): a locked temporary
file in the same folder, fsync, then ``os.replace``; a process killed
mid-write leaves at most a ``.tmp`` file, which the next run deletes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import os
import subprocess
from pathlib import Path

import numpy as np

from nard_ai.model.atomic import (
    atomic_write_bytes,
    file_sha256,
    nearest_existing,
    remove_unlocked_temporaries,
)

__all__ = [
    "LabelValues",
    "DECIMALS",
    "LABEL_COLUMNS",
    "POSITION_COLUMNS",
    "POSITIONS_FORMAT",
    "LABELS_FORMAT",
    "FORMAT_VERSION",
    "atomic_write_bytes",
    "ORDER_TOLERANCE",
    "atomic_write_json",
    "check_out_folder",
    "code_version",
    "consistent_probs",
    "file_provenance",
    "file_sha256",
    "format_labels_csv",
    "format_positions_csv",
    "labels_provenance",
    "make_out_folder",
    "parse_labels_csv",
    "parse_positions_csv",
    "read_labels",
    "remove_created_folders",
]

log = logging.getLogger(__name__)

POSITIONS_FORMAT = "nard_ai.positions"
LABELS_FORMAT = "nard_ai.labels"
FORMAT_VERSION = 1
POSITION_COLUMNS = ("position_id", "class")
LABEL_COLUMNS = ("position_id", "win", "win_g", "win_bg", "lose_g", "lose_bg")
DECIMALS = 6
"""Digits after the decimal point of a label (rounding error at most 5e-7)."""
ORDER_TOLERANCE = 10.0**-DECIMALS + 1e-9
"""How far a label row may break the cumulative order (``win_bg <= win_g <= win``, ``lose_bg <=
lose_g <= 1 - win``) and still be read: rounding each of two numbers to :data:`DECIMALS` digits
moves their sum or difference by up to ``10**-DECIMALS`` (``lose_g = 1 - win`` can be written as
``0.666667`` and ``0.333334``); the ``1e-9`` is the parsing's float error."""
RUN_FILE = "run.json"
"""The settings of the label run that writes a labels folder (:mod:`nard_ai.training.labels`)."""


# --------------------------------------------------------------------------- files


def file_provenance(path: str | os.PathLike) -> dict:
    """A manifest's record of an input file: ``{"file": name, "path": resolved path, "sha256": digest}``."""
    path = Path(path)
    return {"file": path.name, "path": str(path.resolve()), "sha256": file_sha256(path)}


def atomic_write_json(path: str | os.PathLike, obj) -> Path:
    """:func:`atomic_write_bytes` of ``obj`` as indented JSON with sorted keys (byte-stable)."""
    return atomic_write_bytes(path, (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode())


def remove_stale_temporaries(folder: str | os.PathLike) -> int:
    """Delete the ``.NAME.*.tmp`` files a killed writer left in ``folder`` (at the start of a run that
    owns the folder; a live writer's locked file stays: :func:`nard_ai.model.atomic.remove_unlocked_temporaries`);
    returns how many."""
    return len(remove_unlocked_temporaries(folder))


def check_out_folder(folder: str | os.PathLike, flag: str = "--out") -> Path:
    """``folder`` as a Path, if an output folder can be there: not empty, and neither it nor a folder
    on its path is a file (it need not exist yet).

    Raises:
        ValueError: ``folder`` is empty (``""`` would be the current folder), or it, or the nearest
            existing part of its path, is a file (``X is a file, not a folder; choose another --out``).
    """
    if not str(folder).strip():
        raise ValueError(f"{flag} is empty: name a folder")
    folder = Path(folder)
    # the folder itself, or the nearest part of its path that exists (a dangling link counts as missing)
    nearest = nearest_existing(folder, follow_symlinks=True)
    if not nearest.is_dir() and nearest.exists():  # exists(): '.' or the root comes back even if missing
        raise ValueError(f"{nearest} is a file, not a folder; choose another {flag}")
    return folder


def make_out_folder(folder: str | os.PathLike, flag: str = "--out") -> list[Path]:
    """Create the output folder ``folder`` and the missing folders of its path
    (:func:`check_out_folder` first).

    Returns:
        The folders it created, outermost first (empty when ``folder`` existed): what
        :func:`remove_created_folders` may remove again.

    Raises:
        ValueError: :func:`check_out_folder`'s errors, or the folder cannot be created (``cannot
            create the folder X (REASON); choose another --out``; anything it created is removed).
    """
    folder = check_out_folder(folder, flag)
    chain = (folder, *folder.parents)  # the folders below the nearest existing one are missing
    missing = list(chain[: chain.index(nearest_existing(folder, follow_symlinks=True))])[::-1]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_created_folders(missing)
        raise ValueError(
            f"cannot create the folder {folder} ({exc.strerror or exc}); choose another {flag}"
        ) from None
    return missing


def remove_created_folders(created: list[Path]) -> None:
    """Remove the folders :func:`make_out_folder` created (innermost first; only those, and only if
    empty: a folder that existed before, or that now holds anything, stays)."""
    for path in reversed(created):
        try:
            path.rmdir()
        except OSError:
            pass


def code_version() -> dict:
    """``{"nard_ai": package version, "git": commit or None}`` of the code that is running."""
    from importlib import metadata

    try:
        version = metadata.version("nard_ai")
    except metadata.PackageNotFoundError:
        version = None
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10, check=True
        )
        commit = out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"nard_ai": version, "git": commit}


# --------------------------------------------------------------------------- probabilities


def consistent_probs(probs: np.ndarray) -> np.ndarray:
    """gnubg-order probabilities made consistent: each in ``[0, 1]``, ``wb <= wg <= win``, ``lb <= lg <= 1 - win``.

    A no-op for values a search returns; luck-adjusted rollout means can stray
    a little outside (:mod:`nard_ai.play.rollout`), and a training target should not.

    Args:
        probs: ``(N, 5)`` gnubg-order probabilities.

    Returns:
        ``(N, 5)`` float64, a new array.
    """
    p = np.array(probs, dtype=np.float64).reshape(-1, 5)
    win = np.clip(p[:, 0], 0.0, 1.0)
    wg = np.clip(p[:, 1], 0.0, win)
    wb = np.clip(p[:, 2], 0.0, wg)
    lg = np.clip(p[:, 3], 0.0, 1.0 - win)
    lb = np.clip(p[:, 4], 0.0, lg)
    return np.stack([win, wg, wb, lg, lb], axis=1)


# --------------------------------------------------------------------------- CSV


def _header_error(what: str, header, expected) -> ValueError:
    return ValueError(f"{what}: the header must be {','.join(expected)!r}, got {','.join(header or [])!r}")


def format_positions_csv(ids: list[str], classes: list[str]) -> bytes:
    """A positions shard's bytes: header ``position_id,class`` and one row per position (``\\n`` line ends)."""
    if len(ids) != len(classes):
        raise ValueError(f"{len(ids)} position IDs but {len(classes)} classes")
    lines = [",".join(POSITION_COLUMNS)] + [f"{p},{c}" for p, c in zip(ids, classes, strict=True)]
    return ("\n".join(lines) + "\n").encode()


def parse_positions_csv(data: bytes | str, what: str = "positions file") -> tuple[list[str], list[str]]:
    """Rows of a positions shard: ``(position IDs, class names)``.

    Raises:
        ValueError: a wrong header, a row without exactly two fields, an empty ID.
    """
    text = data.decode() if isinstance(data, bytes) else data
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(rows[0]) != POSITION_COLUMNS:
        raise _header_error(what, rows[0] if rows else None, POSITION_COLUMNS)
    ids, classes = [], []
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != 2 or not row[0]:
            raise ValueError(f"{what}, line {n}: expected 'position_id,class', got {','.join(row)!r}")
        ids.append(row[0].strip())
        classes.append(row[1].strip())
    return ids, classes


def _first_bad_row(probs: np.ndarray) -> tuple[int, str] | None:
    """The first row of ``(N, 5)`` gnubg-order probabilities a label file may not hold, and why: a
    number outside ``[0, 1]`` (NaN among them), or the cumulative order (module docstring) broken by
    more than :data:`ORDER_TOLERANCE`; ``None`` when every row is fine."""
    if not len(probs):
        return None
    with np.errstate(invalid="ignore"):
        in_range = ((probs >= 0) & (probs <= 1)).all(axis=1)  # False for NaN
        win, wg, wb, lg, lb = probs.T
        t = ORDER_TOLERANCE
        ordered = (wg <= win + t) & (wb <= wg + t) & (lg <= 1 - win + t) & (lb <= lg + t)
    out_of_range = int(np.argmin(in_range)) if not in_range.all() else len(probs)
    row = int(np.argmin(ordered)) if not ordered.all() else len(probs)
    if out_of_range <= row:  # NaN breaks the order too: the range is said first
        return None if out_of_range == len(probs) else (out_of_range, "probabilities must lie in [0, 1]")
    win, wg, wb, lg, lb = probs[row].tolist()
    broken = [
        text
        for holds, text in (
            (wg <= win + t, f"win_g {wg:g} > win {win:g}"),
            (wb <= wg + t, f"win_bg {wb:g} > win_g {wg:g}"),
            (lg <= 1 - win + t, f"lose_g {lg:g} > 1 - win {1 - win:g}"),
            (lb <= lg + t, f"lose_bg {lb:g} > lose_g {lg:g}"),
        )
        if not holds
    ]
    return row, (
        f"the probabilities contradict each other ({'; '.join(broken)}): gnubg's cumulative order "
        "needs win_bg <= win_g <= win and lose_bg <= lose_g <= 1 - win"
    )


def format_labels_csv(ids: list[str], probs: np.ndarray) -> bytes:
    """A label shard's bytes: header ``position_id,win,win_g,win_bg,lose_g,lose_bg``, :data:`DECIMALS` digits.

    Args:
        ids: ``N`` Position IDs.
        probs: ``(N, 5)`` gnubg-order probabilities for each position's side on roll
            (:func:`consistent_probs` makes rollout means so).

    Raises:
        ValueError: as many IDs as rows; probabilities :func:`parse_labels_csv` would refuse (not
            finite, e.g. from a network with NaN weights; outside ``[0, 1]``; out of the cumulative
            order), naming the first such position: nothing is returned to write.
    """
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    if len(ids) != len(probs):
        raise ValueError(f"{len(ids)} position IDs but {len(probs)} rows of probabilities")
    finite = np.isfinite(probs).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        raise ValueError(
            f"position {ids[row]} (row {row + 1}): probabilities must be finite numbers (not NaN or "
            f"infinite), got {probs[row].tolist()}"
        )
    # +0.0 turns -0.0 (from rounding a tiny negative) into 0.0
    rounded = np.round(probs, DECIMALS) + 0.0
    bad = _first_bad_row(rounded)
    if bad is not None:
        row, why = bad
        raise ValueError(f"position {ids[row]} (row {row + 1}): {why}, got {probs[row].tolist()}")
    fmt = ",".join([f"%.{DECIMALS}f"] * 5)
    lines = [",".join(LABEL_COLUMNS)]
    lines += [f"{pid},{fmt % tuple(row)}" for pid, row in zip(ids, rounded, strict=True)]
    return ("\n".join(lines) + "\n").encode()


def parse_labels_csv(data: bytes | str, what: str = "labels file") -> tuple[list[str], np.ndarray]:
    """Rows of a label shard: ``(position IDs, (N, 5) float64 probabilities)``.

    Raises:
        ValueError: ``"WHAT, line N: ..."``: a wrong header, a row without six fields, a malformed
            Position ID, a number that does not parse, is not finite or is outside ``[0, 1]``, or
            probabilities that break the cumulative order ``win_bg <= win_g <= win``, ``lose_bg <=
            lose_g <= 1 - win`` by more than :data:`ORDER_TOLERANCE`.
    """
    from nard_ai.formats.position_id import boards_from_position_ids

    text = data.decode() if isinstance(data, bytes) else data
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(rows[0]) != LABEL_COLUMNS:
        raise _header_error(what, rows[0] if rows else None, LABEL_COLUMNS)
    ids = []
    probs = np.empty((len(rows) - 1, 5), dtype=np.float64)
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != 6 or not row[0]:
            raise ValueError(
                f"{what}, line {n}: expected 6 fields ({','.join(LABEL_COLUMNS)}), got {len(row)}"
            )
        ids.append(row[0].strip())
        try:
            probs[n - 2] = [float(x) for x in row[1:]]
        except ValueError:
            raise ValueError(f"{what}, line {n}: not numbers: {','.join(row[1:])!r}") from None
    bad = _first_bad_row(probs)
    if bad is not None:
        raise ValueError(f"{what}, line {bad[0] + 2}: {bad[1]}")
    boards_from_position_ids(ids, where=lambda i: f"{what}, line {i + 2}")  # each ID decodes
    return ids, probs


def read_labels(folder: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """All complete label shards of a folder, in shard order: ``(position IDs, (N, 5) float64)``.

    Unfinished shards (a CSV without a sidecar) are left out; a damaged one (module docstring) is an error.
    When the folder's ``run.json`` counts more shards than are complete (a run stopped by
    ``--max-shards``, ``--shards`` or a signal), a one-line note says how many of how many are read
    (a warning of the logger ``nard_ai.training.store``).

    Returns:
        Empty lists when the folder holds no complete shard.

    Raises:
        FileNotFoundError: ``folder`` does not exist.
        ValueError: ``folder`` is a file; a damaged shard (a sidecar that cannot be read, its CSV missing,
            or a CSV that does not match the sidecar's SHA-256 or row count); a sidecar of another format
            or version, or whose ``shard`` or ``csv`` is not its file's; a shard of another run than the
            folder's (label methods, seed or network SHA-256 other than ``run.json``'s or the first
            shard's); a shard that does not parse (:func:`parse_labels_csv`); complete shards that all
            hold no rows (header only).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(
            f"{folder} is a file, not a labels folder (a folder holding labels-*.csv shards and their sidecars)"
        )
    if not folder.is_dir():
        raise FileNotFoundError(f"no labels folder {folder}")
    ids: list[str] = []
    parts = []
    sides = sorted(folder.glob("labels-*.json"))
    reference = _run_settings(folder)
    for side in sides:
        i, p, meta = _read_label_shard(side)
        reference = _check_same_run(side, meta, reference)
        ids += i
        parts.append(p)
    if sides and not ids:
        raise ValueError(
            f"{folder}: its {len(sides)} complete label shard{'s' if len(sides) > 1 else ''} hold no rows "
            "(a header only): there are no labels to read"
        )
    repeated = len(ids) - len(set(ids))
    if repeated:
        seen: set[str] = set()
        first = next(pid for pid in ids if pid in seen or seen.add(pid))
        log.warning(
            f"note: {folder}: {repeated} row{'s repeat' if repeated > 1 else ' repeats'} a position of another row "
            f"(the first {first}); each row trains (the label command never writes a position twice)"
        )
    total = _run_shards(folder)
    if total is not None and len(sides) < total:
        log.warning(
            f"note: {folder}: {len(sides)} of the {total} label shards of its position set are complete; "
            f"reading those {len(sides)} (rerun its label command to label the rest)"
        )
    return ids, (np.concatenate(parts) if parts else np.zeros((0, 5)))


_RUN_KEYS = ("labels", "seed")
"""The settings a shard's sidecar and its folder's ``run.json`` both record as they are (the
network is compared by its SHA-256: the sidecar names the file, ``run.json`` its path)."""


def _run_settings(folder: Path) -> tuple[str, dict] | None:
    """``("run.json", its label settings)`` of a labels folder (:func:`_shard_settings`'s keys), or
    ``None`` without a readable one."""
    try:
        run = json.loads((folder / RUN_FILE).read_text())
    except (OSError, ValueError):
        return None
    return (RUN_FILE, _shard_settings(run)) if isinstance(run, dict) else None


def _shard_settings(meta: dict) -> dict:
    """The settings of a sidecar or ``run.json`` that every shard of one folder shares: the label
    plan, the seed and the network's SHA-256 (those it records)."""
    out = {k: meta[k] for k in _RUN_KEYS if k in meta}
    network = meta.get("network")
    if isinstance(network, dict) and "sha256" in network:
        out["network"] = network["sha256"]
    return out


def _check_same_run(side: Path, meta: dict, reference: tuple[str, dict] | None) -> tuple[str, dict] | None:
    """Refuse a shard labelled with other settings than its folder's ``run.json`` (or, without one, than
    the folder's first shard): shards of two runs mixed in one folder would train as one data set.
    Only the settings both record are compared (a hand-made sidecar may hold ``csv_sha256`` alone).
    Returns the reference for the next shard."""
    mine = _shard_settings(meta)
    if reference is None:
        return (side.name, mine) if mine else None
    name, theirs = reference
    differ = sorted(k for k in mine.keys() & theirs.keys() if mine[k] != theirs[k])
    if differ:
        what = {"labels": "label methods", "seed": "seed", "network": "network (SHA-256)"}
        raise ValueError(
            f"{side}: labelled with other settings ({', '.join(what[k] for k in differ)}) than {name} of its "
            "folder: "
            "a labels folder holds the shards of one label run; move the shards of each run to a folder "
            "of its own (train.py --supervised takes several, comma-separated)"
        )
    return reference


def labels_provenance(folder: str | os.PathLike) -> dict:
    """What a supervised run records of a labels folder it read (:func:`read_labels` checked it):
    ``{"path": resolved path, "shards": complete shards, "rows": rows, "sha256": digest}``; the digest
    is the SHA-256 of one line ``NAME SHA256`` per complete shard (its CSV's name and ``csv_sha256``),
    in shard order, so it names the exact rows read wherever the folder is moved. ``rows`` is the sum of
    the sidecars' ``rows`` (checked against each CSV by :func:`read_labels`; counted from the CSV where a
    hand-made sidecar leaves it out), so the CSVs are not read a second time."""
    folder = Path(folder)
    lines, rows = [], 0
    for side in sorted(folder.glob("labels-*.json")):
        meta = json.loads(side.read_text())
        lines.append(f"{side.with_suffix('.csv').name} {meta['csv_sha256']}\n")
        if isinstance(meta.get("rows"), int):  # read_labels checked it against the CSV
            rows += meta["rows"]
        else:  # a hand-made sidecar without it: count the CSV's lines below its header
            rows += max(0, len(side.with_suffix(".csv").read_bytes().splitlines()) - 1)
    digest = hashlib.sha256("".join(lines).encode()).hexdigest()
    return {"path": str(folder.resolve()), "shards": len(lines), "rows": rows, "sha256": digest}


def _run_shards(folder: Path) -> int | None:
    """The shard count ``run.json`` of a labels folder records (its position set's), or ``None``."""
    try:
        shards = json.loads((folder / RUN_FILE).read_text()).get("shards")
    except (OSError, ValueError, AttributeError):
        return None
    return shards if isinstance(shards, int) and not isinstance(shards, bool) else None


_RELABEL = (
    "rerun the label command with the same settings (its resume relabels this shard) or remove both files"
)


def _read_label_shard(side: Path) -> tuple[list[str], np.ndarray, dict]:
    """The rows of the label shard whose sidecar is ``side``, checked against it (:func:`read_labels`),
    and the sidecar."""
    csv_path = side.with_suffix(".csv")
    try:
        meta = json.loads(side.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{side}: the sidecar cannot be read ({exc}); {_RELABEL}") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{side}: the sidecar is not a JSON object (damaged or edited); {_RELABEL}")
    # the keys a hand-made sidecar may leave out are checked when present
    if (
        meta.get("format", LABELS_FORMAT) != LABELS_FORMAT
        or meta.get("format_version", FORMAT_VERSION) != FORMAT_VERSION
    ):
        raise ValueError(
            f"{side}: a sidecar of format {meta.get('format')!r} version {meta.get('format_version')!r}; this "
            f"code reads {LABELS_FORMAT!r} version {FORMAT_VERSION} (relabel with this code, or read it with "
            "the code that wrote it)"
        )
    number = side.stem.removeprefix("labels-")
    if (
        "shard" in meta
        and not (number.isdigit() and meta["shard"] == int(number))
        or meta.get("csv", csv_path.name) != csv_path.name
    ):
        raise ValueError(
            f"{side}: the sidecar of shard {meta.get('shard')!r} ({meta.get('csv')!r}) under the name of "
            f"{csv_path.name} (copied or renamed since it was written: its rows would be read twice or "
            "in the wrong place); remove both files and rerun the label command"
        )
    try:
        data = csv_path.read_bytes()
    except FileNotFoundError:
        raise ValueError(
            f"{side}: its shard {csv_path.name} is missing (deleted since it was written); "
            "rerun the label command with the same settings (its resume relabels this shard) or remove the sidecar"
        ) from None
    except OSError as exc:
        raise ValueError(f"{csv_path}: cannot be read ({exc.strerror or exc})") from None
    if hashlib.sha256(data).hexdigest() != meta.get("csv_sha256"):
        raise ValueError(
            f"{csv_path}: its SHA-256 does not match {side.name} (damaged or edited since it was written); "
            + _RELABEL
        )
    ids, probs = parse_labels_csv(data, str(csv_path))
    if "rows" in meta and meta["rows"] != len(ids):
        raise ValueError(
            f"{csv_path}: {len(ids)} rows, but {side.name} says {meta['rows']!r} (damaged or edited since "
            f"it was written); {_RELABEL}"
        )
    return ids, probs, meta


class LabelValues:
    """A label folder as an agent: ``value(boards)`` gives each position's labelled probabilities.

    Lets :func:`nard_ai.reports.benchmark.score_equities` score one label method against another
    (a cheap label against long rollouts of the same positions).

    Args:
        folder: a label folder of this module's format; its complete shards are read.

    Raises:
        FileNotFoundError: no such folder.
        ValueError: a file, not a folder; it holds no complete label shard; a damaged shard or one that
            does not parse (:func:`read_labels`).
    """

    def __init__(self, folder: str | Path):
        ids, probs = read_labels(folder)
        if not ids:
            raise ValueError(f"{folder} holds no complete label shard")
        self.folder = str(folder)
        self._row = {pid: k for k, pid in enumerate(ids)}
        self._probs = probs

    def __contains__(self, pid: str) -> bool:
        """Whether the folder labels the position with this gnubg Position ID (side on roll)."""
        return pid in self._row

    def value(self, boards: np.ndarray):
        """``(probs (N, 5) float64, cubeless equity (N,))`` of ``(N, 26)`` int8 boards, side on roll.

        Raises:
            ValueError: a board the folder does not label.
        """
        from nard_ai.core.outcomes import cubeless_equity
        from nard_ai.formats.position_id import position_id

        rows = []
        for board in np.asarray(boards, dtype=np.int8).reshape(-1, 26):
            pid = position_id(board)
            if pid not in self._row:
                raise ValueError(f"{self.folder} does not label position {pid}")
            rows.append(self._row[pid])
        probs = self._probs[rows]
        return probs, cubeless_equity(probs)
