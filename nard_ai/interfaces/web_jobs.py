"""The web board's rollout jobs, kept as files in one folder, so every worker process sees every job.

``nard serve --workers N`` runs N processes on one listening socket; the kernel hands each new
connection to any of them, so a client's ``GET /web/rollout/{job}`` or ``DELETE`` may reach
another process than the one running the job. :class:`RolloutJobs` keeps each job as
``FOLDER/JOB.json`` (written whole and renamed into place, so a reader never sees half of it) and
a cancel request as ``FOLDER/JOB.cancel``; starting a job takes an exclusive ``flock`` on
``FOLDER/.lock``, so "one rollout at a time" holds across the processes. ``nard serve`` makes the
folder before it forks the workers (:func:`nard_ai.interfaces.http.app.serve`); an app made on
its own gets a temporary folder of its own, removed when the app is.

A job whose process has gone (a worker that was killed) is reported as ``failed`` and no longer
counts as running, so it cannot block new rollouts.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = ["RolloutJobs", "JobBusy"]

_JOB_NAME = re.compile(r"[0-9a-f]{32}")


class JobBusy(Exception):
    """A rollout is already running (in any worker process)."""


class RolloutJobs:
    """The rollout jobs of a server, one JSON file each (module docstring).

    A job is a dict: ``job``, ``state`` (``running``, ``done``, ``cancelled``, ``timed_out`` or
    ``failed``), ``games_done``, ``games``, ``started`` and ``finished`` (Unix times, seconds;
    ``finished`` None while it runs), ``error``, ``result`` (the rollout's outcome when done) and
    ``pid`` (the process running it).

    Args:
        folder: the shared folder (made if missing); ``None``: a temporary folder owned by this
            object, removed with it.
        max_jobs: jobs kept, running or finished; starting one more removes the oldest finished.

    Raises:
        ValueError: ``max_jobs`` below 1.
    """

    def __init__(self, folder: str | Path | None = None, max_jobs: int = 8) -> None:
        if isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or max_jobs < 1:
            raise ValueError(f"max_jobs must be a positive integer, got {max_jobs!r}")
        self._owned = tempfile.TemporaryDirectory(prefix="nard-rollouts-") if folder is None else None
        self.folder = Path(self._owned.name if self._owned is not None else folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.max_jobs = max_jobs

    # ---------------------------------------------------------------- files

    def _path(self, job: str, suffix: str = ".json") -> Path | None:
        return self.folder / f"{job}{suffix}" if _JOB_NAME.fullmatch(job) else None

    def _write(self, record: dict[str, Any]) -> None:
        path = self._path(record["job"])
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record))
        os.replace(tmp, path)

    def _load(self, path: Path) -> dict[str, Any] | None:
        try:
            record = json.loads(path.read_text())
            written = path.stat().st_mtime
        except (OSError, ValueError):
            return None  # removed meanwhile (a newer job made room)
        if record["state"] == "running" and not _alive(record["pid"]):
            # it stopped at its last progress report, at the latest
            record.update(state="failed", error="the server process running it stopped", finished=written)
        return record

    # ---------------------------------------------------------------- the jobs

    def start(self, games: int) -> dict[str, Any]:
        """Record a new running job of ``games`` games (this process runs it); returns its record.

        Raises:
            JobBusy: when a job is running in any process.
        """
        with open(self.folder / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            records = [r for p in self.folder.glob("*.json") if (r := self._load(p)) is not None]
            if any(r["state"] == "running" for r in records):
                raise JobBusy("a rollout is already running: wait for it or cancel it (DELETE)")
            for old in sorted(records, key=lambda r: r["started"])[
                : max(0, len(records) - self.max_jobs + 1)
            ]:
                for suffix in (".json", ".cancel"):
                    self._path(old["job"], suffix).unlink(missing_ok=True)
            record = {
                "job": uuid.uuid4().hex, "state": "running", "games_done": 0, "games": int(games),
                "started": time.time(), "finished": None, "error": None, "result": None, "pid": os.getpid(),
            }  # fmt: skip
            self._write(record)
        return record

    def update(self, record: dict[str, Any], **fields: Any) -> None:
        """Change fields of this process's job ``record`` and write it (``finished`` set with a final state)."""
        record.update(fields)
        if record["state"] != "running" and record["finished"] is None:
            record["finished"] = time.time()
        self._write(record)

    def get(self, job: str) -> dict[str, Any] | None:
        """The job's record, or ``None`` for an unknown (or malformed) job id."""
        path = self._path(job)
        return None if path is None else self._load(path)

    def cancel(self, job: str) -> dict[str, Any] | None:
        """Ask the process running ``job`` to stop it (seen at its next ply); the record, or ``None``."""
        record = self.get(job)
        if record is not None and record["state"] == "running":
            self._path(job, ".cancel").touch()
        return record

    def cancelled(self, job: str) -> bool:
        """Whether a cancel was asked for ``job``."""
        return self._path(job, ".cancel").exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
