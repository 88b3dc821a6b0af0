"""A hook on numba's first compile of a nard_ai kernel in this process (a cold on-disk cache).

numba compiles a ``cache=True`` kernel only when its on-disk cache
(``__pycache__/*.nbi``, ``*.nbc`` beside the source, or ``NUMBA_CACHE_DIR``)
holds no entry for the source as it is now: the first run after an install
or an update. Compiling what one ``nard hint`` needs takes about 30 s (the
move generator's kernels about 28 s of it), loading them from the cache a
fraction of a second. numba fires its ``numba:compile`` event just before a
real compile and never for a load from the cache, so a listener on that
event tells a cold cache from a warm one exactly, at the moment it matters,
and costs nothing on a warm run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from numba.core import event

#: What the command line prints (on a terminal) before the first compile.
COMPILE_NOTICE = (
    "compiling the rules core and the network's kernels with numba (first run only, about 30 s)..."
)


class FirstCompileNotice(event.Listener):
    """Calls ``announce()`` once, just before numba compiles the first nard_ai kernel of the process.

    Kernels loaded from numba's on-disk cache do not count, and neither do
    compiles of functions outside ``nard_ai``. :meth:`install` registers the
    listener with numba, :meth:`uninstall` removes it.
    """

    def __init__(self, announce: Callable[[], None]):
        self._announce = announce
        self._lock = threading.Lock()
        self.fired = False

    def on_start(self, ev: event.Event) -> None:
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
        if module != "nard_ai" and not module.startswith("nard_ai."):
            return
        with self._lock:
            if self.fired:
                return
            self.fired = True
        self._announce()

    def on_end(self, ev: event.Event) -> None:
        pass

    def install(self) -> FirstCompileNotice:
        event.register("numba:compile", self)
        return self

    def uninstall(self) -> None:
        event.unregister("numba:compile", self)
