"""The move generator's scratch buffers: one :class:`Workspace` per process (or per serial thread).

The compiled search of :mod:`nard_ai.core.movegen` keeps, per thread, a hash table of the
afterstates found so far, the boards being searched, the DFS stack and the output rows. They
are allocated once per process (one set for every thread numba may start) and reused, under a
lock, by every call; a Python thread in a :func:`nard_ai.core.threads.serial_kernels` block gets a
one-thread workspace of its own instead.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

import numba
import numpy as np

from nard_ai.core.board import BOARD_SIZE
from nard_ai.core.threads import in_serial_block, thread_local

__all__ = [
    "ENTRY_CAPACITY",
    "TABLE_BITS",
    "TABLE_SIZE",
    "ROW_BYTES",
    "Workspace",
    "process_workspace",
    "workspace_in_use",
]

ENTRY_CAPACITY = 1 << 14
"""The most distinct afterstates kept while enumerating one position (all classes together). The
largest number of legal plays known for backgammon is a few thousand (doubles with many checkers
spread out), far below this."""
TABLE_BITS = 15
"""log2 of the afterstate hash table's slots."""
TABLE_SIZE = 1 << TABLE_BITS
ROW_BYTES = 32
"""Bytes per stored board: the 26 counts, then zeros (four 64-bit words)."""


class Workspace:
    """Scratch buffers of the generator, one set per thread, reused across calls.

    Every array has a leading axis of length ``threads``; :meth:`views` gives
    the tuple of one thread's buffers that the kernels take. Boards being
    searched and recorded are stored in 32-byte rows (the 26 counts, then
    zeros) so that they can also be read as four 64-bit words.
    """

    def __init__(self, threads: int = 1) -> None:
        t = threads
        self.threads = t
        self.entries = np.zeros((t, ENTRY_CAPACITY, ROW_BYTES), dtype=np.int8)  # distinct leaves
        self.masks = np.empty((t, ENTRY_CAPACITY, 2), dtype=np.uint8)  # [class mask, respecting-class mask]
        self.table = np.zeros((t, TABLE_SIZE), dtype=np.int64)  # (stamp << 32) | entry index
        # Small per-thread buffers are padded to separate cache lines (no false sharing).
        self.stamp = np.zeros((t, 16), dtype=np.int64)
        self.keep = np.empty((t, ENTRY_CAPACITY), dtype=np.int64)  # indices of the legal plays
        self.stack = np.zeros((t, 16, 5), dtype=np.int64)  # the DFS stack, one column per depth
        self.tags = np.zeros((t, 128), dtype=np.int8)  # Iranian rule: tagged hitters per point
        self.board = np.zeros((t, 128), dtype=np.int8)  # the board searched, bytes 26..31 stay 0
        self.sort_keys = np.empty(
            (t, ENTRY_CAPACITY, 4), dtype=np.uint64
        )  # of the legal plays, in keep order
        self.hash_stack = np.zeros((t, 16), dtype=np.uint64)  # the hash before each depth's move
        # Output rows of each chunk of a batch, kept between calls and grown when a batch needs more.
        self.out = np.empty((t, 4096, BOARD_SIZE), dtype=np.int8)
        self._arrays = self._make_arrays()
        self._views = [self._make_views(i) for i in range(t)]

    def ensure_out(self, rows: int) -> np.ndarray:
        """The per-chunk output buffers, grown to at least ``rows`` rows each (``(threads, R, 26)`` int8)."""
        if self.out.shape[1] < rows:
            self.out = np.empty((self.threads, max(rows, 2 * self.out.shape[1]), BOARD_SIZE), dtype=np.int8)
        return self.out

    def arrays(self) -> tuple:
        """All buffers, thread axis first (for the parallel kernels)."""
        return self._arrays

    def views(self, thread: int = 0) -> tuple:
        """One thread's buffers (for the serial kernels); the same views as ``_thread_views``."""
        return self._views[thread]

    def _make_arrays(self) -> tuple:
        return (
            self.entries,
            self.entries.view(np.uint64),
            self.masks,
            self.table,
            self.stamp,
            self.keep,
            self.stack,
            self.tags,
            self.board,
            self.board.view(np.uint64),
            self.sort_keys,
            self.hash_stack,
        )

    def _make_views(self, t: int) -> tuple:
        return (
            self.entries[t],
            self.entries.view(np.uint64)[t],
            self.masks[t],
            self.table[t],
            self.stamp[t][:1],
            self.keep[t],
            self.stack[t][:11],
            self.tags[t][:BOARD_SIZE],
            self.board[t][:BOARD_SIZE],
            self.board.view(np.uint64)[t][:4],
            self.sort_keys[t],
            self.hash_stack[t][:5],
            self.stack[t][11],
        )


_WORKSPACE: Workspace | None = None
_WORKSPACE_PID = 0

_LOCK = threading.Lock()
"""Serialises the kernels that use the process's :class:`Workspace`: numba's threads index its
buffers by their thread id, which starts at 0 in every call, so two Python threads calling at
once would write into the same buffers (found by review: wrong plays, and random games that
never ended). A forked child gets a new one (``os.register_at_fork`` below): a lock held by
another thread at the fork would never be released there."""


def _reset_after_fork() -> None:
    global _LOCK, _WORKSPACE
    _LOCK = threading.Lock()
    _WORKSPACE = None


os.register_at_fork(after_in_child=_reset_after_fork)


def process_workspace() -> Workspace:
    """The process's workspace, one buffer set for every thread numba may start."""
    global _WORKSPACE, _WORKSPACE_PID
    if _WORKSPACE is None or _WORKSPACE_PID != os.getpid():
        _WORKSPACE = Workspace(numba.config.NUMBA_NUM_THREADS)
        _WORKSPACE_PID = os.getpid()
    return _WORKSPACE


@contextlib.contextmanager
def workspace_in_use() -> Iterator[Workspace]:
    """The workspace this thread's call may use: its own in a serial block, else the process's, held
    under :data:`_LOCK` for the duration."""
    if in_serial_block():
        local = thread_local()
        ws = getattr(local, "workspace", None)
        if ws is None:
            ws = local.workspace = Workspace(1)
        yield ws
        return
    with _LOCK:
        yield process_workspace()
