"""What the benchmark files share (:mod:`nard_ai.reports.benchmark`, :mod:`nard_ai.reports.cube_benchmark`):
a table row, the quota parser, the checked reader of a CSV and its JSON sidecar, the decimals stored."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

from nard_ai.training.store import file_sha256

__all__ = ["EQUITY_DECIMALS", "ClassFigures", "network_record", "parse_counts", "read_checked"]

EQUITY_DECIMALS = 6
"""Decimals of the equities a benchmark CSV stores (ppg; 1e-6 is far below any error reported)."""

NUMBER_COLUMNS = {
    "equity": ("equity", 3.0),
    "no_double": ("no-double equity", 6.0),
    "double_take": ("double/take equity", 6.0),
    "double_pass": ("double/pass equity", 6.0),
}
"""The number columns of the benchmark CSVs: column -> (its name in errors, the largest magnitude). A move's
cubeless money equity is at most a backgammon, 3 ppg; a cube benchmark's cubeful equities, per unit of the
cube before the decision, at most 6 (a backgammon at a doubled cube). :func:`read_checked` refuses any other
value (NaN, inf, out of range): a damaged file, not a figure."""

WHOLE_NUMBER_COLUMNS = ("case",)
"""The columns of the benchmark CSVs that hold an integer >= 0 (ASCII digits)."""


@dataclass(frozen=True)
class ClassFigures:
    """One row of a benchmark table: a class (or ``all``), its cases and the figures."""

    name: str
    cases: int
    figures: dict

    def to_dict(self) -> dict:
        """The row for ``--json``: ``class``, ``cases`` and the figures, a figure with no value (NaN:
        the 95% interval of a class of one case, the mean of none) as ``None``, JSON's ``null``,
        since NaN is not JSON (RFC 8259) and strict parsers refuse it."""
        figures = {
            k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in self.figures.items()
        }
        return {"class": self.name, "cases": self.cases, **figures}


def parse_counts(spec: str, names: tuple[str, ...], word: str) -> dict[str, int]:
    """``"NAME=COUNT,..."`` with each NAME one of ``names`` -> counts (the quotas of both benchmarks)."""
    out: dict[str, int] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise ValueError(
                f"quotas must be {word}=COUNT,... with {word} one of {', '.join(names)}; got {part!r}"
            )
        if not value.strip().isdigit():
            raise ValueError(f"quota {part!r}: the count must be an integer >= 0")
        out[name] = int(value)
    if not out or sum(out.values()) == 0:
        raise ValueError(f"quotas {spec!r}: give at least one {word.lower()} a count above 0")
    return out


def read_checked(
    path, what: str, fmt: str, version: int, columns: tuple
) -> tuple[Path, list[list[str]], dict]:
    """A benchmark CSV and its sidecar, checked: ``(path, rows with the header first, sidecar)``.

    Raises:
        FileNotFoundError: no CSV or no sidecar.
        ValueError: a sidecar of another format or version, a CSV whose SHA-256 is not the sidecar's,
            a wrong header, a row with another number of fields, a bad number (``PATH, line N: bad
            equity 'nan' ...``: not finite or out of the range of :data:`NUMBER_COLUMNS`, or not a whole
            number in a column of :data:`WHOLE_NUMBER_COLUMNS`).
    """
    path = Path(path)
    side = path.with_suffix(".json")
    if not path.is_file():
        raise FileNotFoundError(f"no {what} {path}")
    if not side.is_file():
        raise FileNotFoundError(f"{path} has no sidecar {side.name}")
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
    except ValueError as exc:  # not UTF-8, not JSON
        raise ValueError(f"{side}: not a readable sidecar ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != fmt or meta.get("format_version") != version:
        raise ValueError(f"{side}: not a {fmt} v{version} sidecar")
    if file_sha256(path) != meta.get("csv_sha256"):
        raise ValueError(f"{path} does not match its sidecar's SHA-256 (edited or damaged)")
    try:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    except (ValueError, csv.Error) as exc:  # not UTF-8, a field over csv's size limit
        raise ValueError(f"{path}: not a readable CSV ({exc})") from None
    if not rows or tuple(rows[0]) != columns:
        raise ValueError(f"{path}: the header must be {','.join(columns)!r}")
    numbers = [(j, *NUMBER_COLUMNS[c]) for j, c in enumerate(columns) if c in NUMBER_COLUMNS]
    whole = [(j, c) for j, c in enumerate(columns) if c in WHOLE_NUMBER_COLUMNS]
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(columns):
            raise ValueError(f"{path}, line {n}: expected {len(columns)} fields, got {len(row)}")
        for j, name in whole:
            if not (row[j].isascii() and row[j].isdigit()):
                raise ValueError(f"{path}, line {n}: bad {name} {row[j]!r} (must be a whole number >= 0)")
        for j, name, most in numbers:
            if not -most <= _number(row[j]) <= most:  # NaN compares False
                raise ValueError(
                    f"{path}, line {n}: bad {name} {row[j]!r} (must be a number in -{most:g} .. {most:g})"
                )
    return path, rows, meta


def _number(text: str) -> float:
    """``float(text)``, or NaN where it does not parse (refused by the range test as NaN is)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def network_record(key: str, spec: str) -> dict:
    """``{key: {"file": name, "sha256": digest}}`` of the checkpoint an agent spec plays, or ``{}``
    (pubeval, random, gnubg, or no such file): for a sidecar, since ``default`` names a different
    network in each generation (:func:`nard_ai.agents.checkpoint_of_spec`)."""
    from nard_ai.agents import checkpoint_of_spec

    path = checkpoint_of_spec(spec)
    if path is None or not path.is_file():
        return {}
    return {key: {"file": path.name, "sha256": file_sha256(path)}}
