"""Atomic file writes: a reader sees the old file or the whole new one, never part of one.

A write goes to a temporary file ``.NAME.XXXXXXXX.tmp`` (``tempfile.mkstemp``:
the prefix ``.NAME.``, 8 random characters, :data:`TMP_SUFFIX`) in the
destination's folder, which the writer locks (``flock``, advisory) as soon as
it exists; then ``flush``, ``fsync`` and ``os.replace`` onto the destination
(POSIX ``rename(2)`` is atomic within one file system). A write that fails
removes its temporary file. A writer killed outright (SIGKILL, a power cut)
leaves its temporary file behind, unlocked: the system drops a dead process's
locks, so an unlocked temporary file is one no live writer is working on.

Used by the checkpoints (:func:`nard_ai.model.network.save_checkpoint`), the
bear-off cache (:mod:`nard_ai.eval.bearoff`) and the training data files
(:mod:`nard_ai.training.store`). Torch-free.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "TMP_SUFFIX",
    "STALE_AFTER_S",
    "atomic_write",
    "atomic_write_bytes",
    "check_writable",
    "file_sha256",
    "nearest_existing",
    "remove_stale_temporaries",
    "remove_unlocked_temporaries",
]

TMP_SUFFIX = ".tmp"
"""The ending of every temporary file (``.NAME.XXXXXXXX.tmp``)."""
STALE_AFTER_S = 10.0
"""A temporary file modified less than this many seconds ago is never removed by
:func:`remove_stale_temporaries`: it may be one that a writer has just created and not yet
locked (a writer locks it right after ``mkstemp``)."""

try:
    import fcntl  # noqa: F401  (POSIX only)

    _HAVE_LOCKS = True
except ImportError:
    _HAVE_LOCKS = False
_RANDOM = r"[A-Za-z0-9_]{8}"  # mkstemp's 8 characters (tempfile._RandomNameSequence)


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Write ``path`` atomically with ``write(f)`` on a locked temporary file in its folder.

    The file gets a normal file's mode (``0o666`` less the umask; ``mkstemp``
    makes it private). After the replace, the stale temporary files of the same
    destination are removed (:func:`remove_stale_temporaries`).

    Args:
        path: the destination; its folder must exist.
        write: writes the whole content to the binary file object it is given.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OSError: the folder is missing or not writable, the disk is full, ...;
            whatever ``write`` raises. The destination is then untouched and
            the temporary file removed.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            _lock(f.fileno(), blocking=True)  # until this process closes it (or dies): not stale
            write(f)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; give it a normal file's mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    remove_stale_temporaries(path)
    return path


def nearest_existing(path: str | os.PathLike, *, follow_symlinks: bool = False) -> Path:
    """The nearest part of ``path`` that exists: ``path`` itself, or the nearest of its parents.

    The walk is lexical (:attr:`pathlib.PurePath.parents`: ``..`` and links are not resolved) and
    ends at the last of the parents: ``.`` for a relative path, the root for an absolute one, which
    is returned even if it does not exist. It never loops and touches nothing but ``lstat``/``stat``.

    Args:
        path: a file or folder path (``str`` or path-like); it need not exist.
        follow_symlinks: ``False`` (the default): ``os.path.lexists`` decides, so a link counts as
            existing even if it dangles, and a part that cannot be examined (``EACCES``, ...) counts
            as missing. ``True``: :meth:`pathlib.Path.exists` decides, so a dangling or looping link
            counts as missing, and an error other than a missing part (``EACCES``, ...) is raised.

    Returns:
        A :class:`~pathlib.Path` that is ``path`` or one of its parents: e.g. ``/tmp`` for
        ``/tmp/new/x.pt`` when ``/tmp/new`` is missing; ``.`` for ``new/x.pt`` when ``new`` is missing
        (also when no part of a relative path exists); a path that exists but is a file (``afile``
        for ``afile/x.pt``) is returned as it is: the caller decides whether it must be a folder.

    Raises:
        OSError: only with ``follow_symlinks=True`` (above).
    """
    path = Path(path)
    exists = Path.exists if follow_symlinks else os.path.lexists
    for part in (path, *path.parents):
        if exists(part):
            return part
    return part  # nothing exists: the last of the parents ('.' or the root), or path itself if it has none


def check_writable(path: str | os.PathLike) -> Path:
    """Check, before a long run, that :func:`atomic_write` of ``path`` will be able to write it once its
    missing folders are made (as :func:`nard_ai.model.network.save_checkpoint` makes them).

    ``path`` must not be a directory, and the nearest of its folders that exists must be a directory in
    which a file can be created: one is created there (named as :func:`atomic_write` names its
    temporary files) and removed at once, since the permission bits say nothing for root, a read-only
    file system or ``/proc``. Nothing is left behind and no folder is made.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: one line naming ``path``: ``"PATH is a directory, not a file"``, ``"cannot write
            PATH: FOLDER is not a directory"`` (a file where a folder of it should be), or ``"cannot
            write PATH: cannot create a file in FOLDER (REASON)"`` (no permission, a read-only or
            special file system, ...).
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a file")
    folder = nearest_existing(path.parent)  # missing folders are made at the write: this one must take them
    if not folder.is_dir():
        raise ValueError(f"cannot write {path}: {folder} is not a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=folder)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ValueError(f"cannot write {path}: cannot create a file in {folder} ({reason})") from None
    os.close(fd)
    os.unlink(tmp)
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """:func:`atomic_write` of ``data``: a reader sees either the old file or the whole new one."""
    return atomic_write(path, lambda f: f.write(data))


def _lock(fd: int, blocking: bool) -> bool:
    """An exclusive advisory lock on ``fd``; ``False`` if another holds it (non-blocking). Where the
    platform has no ``fcntl`` (Windows), nothing is locked and ``False`` is returned."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _remove_unlocked(folder: Path, pattern: re.Pattern[str], min_age_s: float, owned: bool) -> list[Path]:
    """Remove the regular files of ``folder`` whose names match ``pattern``, at least ``min_age_s``
    seconds old, that no process holds locked; a file that cannot be checked or removed is skipped.
    Where there are no locks (no ``fcntl``), a file is removed only if the caller ``owned`` the folder."""
    try:
        names = sorted(n for n in os.listdir(folder) if pattern.fullmatch(n))
    except OSError:
        return []
    removed = []
    for name in names:
        tmp = folder / name
        try:
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue  # gone already, a link, or not ours to read
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or time.time() - info.st_mtime < min_age_s:
                continue
            if not _lock(fd, blocking=False) and not (owned and not _HAVE_LOCKS):
                continue  # a live writer holds it (or no locks here and not our folder: leave it)
            if os.path.samestat(info, os.lstat(tmp)):  # still the file we checked
                os.unlink(tmp)
                removed.append(tmp)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that interrupted writes of ``path`` left behind.

    Only files named as :func:`atomic_write` names them for this very destination
    (``.NAME.`` + mkstemp's 8 characters + ``.tmp``, in the same folder), that are regular files
    (not links), older than :data:`STALE_AFTER_S` seconds, and that no process holds locked (a
    writer keeps its lock until it closes the file, and the system drops it when the writer dies,
    even by SIGKILL). Others' files, a live writer's file and anything else in the folder are left
    alone; a file that cannot be checked or removed is skipped.

    Args:
        path: the destination file (it need not exist).

    Returns:
        The files removed.
    """
    path = Path(path)
    pattern = re.compile(re.escape(f".{path.name}.") + _RANDOM + re.escape(TMP_SUFFIX))
    return _remove_unlocked(path.parent, pattern, STALE_AFTER_S, owned=False)


def remove_unlocked_temporaries(folder: str | os.PathLike) -> list[Path]:
    """Remove every temporary file ``.*.tmp`` in ``folder`` that no process holds locked, of any age.

    For a folder that one run owns, at the start of the run (a training data
    folder: :mod:`nard_ai.training.store`): what a killed earlier run left is
    gone, while a live writer's locked file and anything not a regular file stay. Where the
    platform has no locks (no ``fcntl``), every such file is removed.

    Returns:
        The files removed.
    """
    return _remove_unlocked(Path(folder), re.compile(r"\..+" + re.escape(TMP_SUFFIX)), 0.0, owned=True)


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 hex digest of a file's bytes (read in 1 MiB blocks); ``OSError`` if it cannot be read."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
