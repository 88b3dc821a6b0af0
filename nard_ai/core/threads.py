"""The kernels' thread policy: how many threads a parallel kernel may start, and serial blocks.

nard_ai's parallel kernels (move generation, encoding, the network's first layer) run on numba's
thread pool. This module says how many threads they may use (:func:`parallel_threads`), lets a
Python thread run them on one thread each (:func:`serial_kernels`, for self-play's worker
threads), and sets OpenMP's wait policy before any pool starts (below).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

# GNU OpenMP threads spin while they wait by default; on a shared 2-core
# machine that makes every parallel call wait for a descheduled spinner
# (measured here: 20x slower with one core busy). Sleeping waiters cost
# on an idle machine (self-play: about 650-760 games/s sleeping, 1,020 with
# GOMP_SPINCOUNT=200000), so a dedicated machine may choose to spin: set
# OMP_WAIT_POLICY=ACTIVE or GOMP_SPINCOUNT before importing nard_ai.
if "GOMP_SPINCOUNT" not in os.environ:  # an explicit spin count is the user's choice (PASSIVE would zero it)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402

__all__ = ["parallel_threads", "serial_kernels", "in_serial_block", "thread_local"]

_PARENT_PID = os.getpid()

_LOCAL = threading.local()
"""Per Python thread: ``serial`` (inside :func:`serial_kernels`) and that thread's own move-generator
workspace (:mod:`nard_ai.core.workspace`)."""


def parallel_threads() -> int:
    """Threads for the parallel kernels: numba's current setting, 1 in a forked child or in a
    :func:`serial_kernels` block.

    GNU OpenMP (numba's default threading layer on Linux) is not fork-safe,
    so a process forked from one that may have started the thread pool runs
    the kernels on one thread.
    """
    if _PARENT_PID != os.getpid() or getattr(_LOCAL, "serial", False):
        return 1
    return numba.get_num_threads()


def in_serial_block() -> bool:
    """Whether this Python thread is inside a :func:`serial_kernels` block."""
    return getattr(_LOCAL, "serial", False)


def thread_local() -> threading.local:
    """This module's per-thread record (:data:`_LOCAL`), where a serial thread keeps its own workspace."""
    return _LOCAL


@contextlib.contextmanager
def serial_kernels() -> Iterator[None]:
    """Within the block, this Python thread runs nard_ai's kernels on one thread each, side by side
    with other Python threads.

    For callers that run several searches at once in Python threads (self-play's workers,
    :mod:`nard_ai.play.selfplay`): inside the block :func:`parallel_threads` is 1 for this thread
    (no numba thread pool is started from it), and the move generator uses a workspace
    of this thread's own instead of the process's, so it does not wait for the process's lock
    (:mod:`nard_ai.core.workspace`). The kernels of the search release the GIL, so such threads
    do run at the same time. Blocks nest.
    """
    previous = getattr(_LOCAL, "serial", False)
    _LOCAL.serial = True
    try:
        yield
    finally:
        _LOCAL.serial = previous
