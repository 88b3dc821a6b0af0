"""SIGTERM as Ctrl-C: one way for the long-running commands to stop cleanly on ``kill PID``.

Python's default action for SIGTERM ends the process at once: ``finally``
blocks do not run, worker processes are orphaned and Python's resource tracker
warns of leaked semaphores. :func:`sigterm_as_interrupt` makes SIGTERM raise
:class:`KeyboardInterrupt` in the main thread for a block instead, so the same
clean-up path serves both signals. Used by the training command line (which
also tells the two apart for its exit status: 143 against 130) and the HTTP
server (which removes its rollout jobs folder and stops its workers).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["SigtermFlag", "sigterm_as_interrupt"]


class SigtermFlag:
    """Whether SIGTERM arrived inside a :func:`sigterm_as_interrupt` block (``signalled``)."""

    def __init__(self) -> None:
        self.signalled = False


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[SigtermFlag]:
    """For the block, SIGTERM raises KeyboardInterrupt in the main thread, as Ctrl-C (SIGINT) does.

    Yields a :class:`SigtermFlag` whose ``signalled`` becomes True when the
    KeyboardInterrupt came from SIGTERM (False: Ctrl-C, or no signal), so a
    command can exit 143 for ``kill`` and 130 for Ctrl-C (the shells'
    128 + signal number). The previous handler is restored on exit. Off the
    main thread (a caller running a command from a worker thread) a handler
    cannot be installed: nothing changes and the flag stays False.
    """
    flag = SigtermFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handle(signum, frame) -> None:
        flag.signalled = True
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGTERM, previous)
