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
  :func:`consistent_probs`).
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
  the label command relabels it when rerun.
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
import os
import subprocess
from pathlib import Path

import numpy as np

from nard_ai.model.atomic import atomic_write_bytes, file_sha256, remove_unlocked_temporaries

__all__ = [
    "LabelValues",
    "DECIMALS",
    "LABEL_COLUMNS",
    "POSITION_COLUMNS",
    "POSITIONS_FORMAT",
    "LABELS_FORMAT",
    "FORMAT_VERSION",
    "atomic_write_bytes",
    "atomic_write_json",
    "code_version",
    "consistent_probs",
    "file_provenance",
    "file_sha256",
    "format_labels_csv",
    "format_positions_csv",
    "parse_labels_csv",
    "parse_positions_csv",
    "read_labels",
]

POSITIONS_FORMAT = "nard_ai.positions"
LABELS_FORMAT = "nard_ai.labels"
FORMAT_VERSION = 1
POSITION_COLUMNS = ("position_id", "class")
LABEL_COLUMNS = ("position_id", "win", "win_g", "win_bg", "lose_g", "lose_bg")
DECIMALS = 6
"""Digits after the decimal point of a label (rounding error at most 5e-7)."""


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


def format_labels_csv(ids: list[str], probs: np.ndarray) -> bytes:
    """A label shard's bytes: header ``position_id,win,win_g,win_bg,lose_g,lose_bg``, :data:`DECIMALS` digits.

    Args:
        ids: ``N`` Position IDs.
        probs: ``(N, 5)`` gnubg-order probabilities for each position's side on roll.
    """
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    if len(ids) != len(probs):
        raise ValueError(f"{len(ids)} position IDs but {len(probs)} rows of probabilities")
    fmt = ",".join([f"%.{DECIMALS}f"] * 5)
    lines = [",".join(LABEL_COLUMNS)]
    # +0.0 turns -0.0 (from rounding a tiny negative) into 0.0
    lines += [
        f"{pid},{fmt % tuple(row)}" for pid, row in zip(ids, np.round(probs, DECIMALS) + 0.0, strict=True)
    ]
    return ("\n".join(lines) + "\n").encode()


def parse_labels_csv(data: bytes | str, what: str = "labels file") -> tuple[list[str], np.ndarray]:
    """Rows of a label shard: ``(position IDs, (N, 5) float64 probabilities)``.

    Raises:
        ValueError: a wrong header, a row without six fields, a number that does not parse or is
            outside ``[0, 1]``.
    """
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
    if len(probs) and (~np.isfinite(probs) | (probs < 0) | (probs > 1)).any():
        bad = int(np.argwhere(~np.isfinite(probs) | (probs < 0) | (probs > 1))[0, 0])
        raise ValueError(f"{what}, line {bad + 2}: probabilities must lie in [0, 1]")
    return ids, probs


def read_labels(folder: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """All complete label shards of a folder, in shard order: ``(position IDs, (N, 5) float64)``.

    Unfinished shards (a CSV without a sidecar) are left out; a damaged one (module docstring) is an error.

    Raises:
        FileNotFoundError: ``folder`` does not exist.
        ValueError: ``folder`` is a file; a damaged shard (a sidecar that cannot be read, its CSV missing,
            or a CSV that does not match the sidecar's SHA-256 or row count); a shard that does not parse.
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
    for side in sorted(folder.glob("labels-*.json")):
        i, p = _read_label_shard(side)
        ids += i
        parts.append(p)
    return ids, (np.concatenate(parts) if parts else np.zeros((0, 5)))


_RELABEL = (
    "rerun the label command with the same settings (its resume relabels this shard) or remove both files"
)


def _read_label_shard(side: Path) -> tuple[list[str], np.ndarray]:
    """The rows of the label shard whose sidecar is ``side``, checked against it (:func:`read_labels`)."""
    csv_path = side.with_suffix(".csv")
    try:
        meta = json.loads(side.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{side}: the sidecar cannot be read ({exc}); {_RELABEL}") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{side}: the sidecar is not a JSON object (damaged or edited); {_RELABEL}")
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
    return ids, probs


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
