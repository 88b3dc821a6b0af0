"""The request batcher of the HTTP server: concurrent requests evaluated together.

Requests that arrive within a short window (``window_ms``, ``nard serve
--batch-window-ms``) are gathered into one batch, and the batch is computed in
one call (:class:`Batcher`; where, see below): :mod:`nard_ai.interfaces.http` then makes one move
generation and one evaluator call per ply for all the ``/move`` requests of a
search depth (:func:`nard_ai.search.lookahead.rank_plays_batch`), and one for
all the ``/eval`` requests. While a batch is computed, the next one gathers,
so under load batches grow by themselves and throughput grows with them.

Answers are the same as for each request alone, to the last digit: the
server's evaluator rounds each board alike in any batch
(:class:`nard_ai.eval.aligned.BatchInvariantEvaluator`), and
``tests/test_batching.py`` compares the JSON bytes.

Where a batch is computed: on the worker thread, so that the event loop keeps serving while a
deep search runs; or, for groups the ``inline`` predicate calls cheap (the server's 0-ply
``/move`` and ``/eval``: a few milliseconds a batch), on the event loop itself, when nothing runs
on the worker thread. A Python thread that computes holds the interpreter lock, and the event
loop, waking for each socket read and write, waits for it up to the switch interval (5 ms) each
time: measured with 32 clients (``benchmarks/load_test.py``, 2026-12-02), computing 0-ply
batches on the loop raised ``/move`` from 546 to 708 requests/s and ``/eval`` from 656 to 851.

Bounds (README "Serving the engine"): at most ``max_batch`` requests a batch
(more wait for the next one) and at most ``max_queue`` requests waiting; one
more is refused with :class:`QueueFull` (the server's 503). All engine work
runs on the one worker thread or, when that thread is idle, on the event loop's, so the
evaluators, which are not promised to be thread-safe, are never used by two threads at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["BatchSettings", "Batcher", "Job", "QueueFull", "WINDOW_MS", "MAX_BATCH", "MAX_QUEUE"]

log = logging.getLogger(__name__)

WINDOW_MS = 0.0
"""Default gathering window, ms. A batch already gathers while the one before it is computed, so a
window only adds latency unless requests trickle in; a 10 s sweep of 0, 2 and 5 ms at 32 clients
(``benchmarks/load_test.py --serve-args="--batch-window-ms N"``, 2026-12-02, a heavily loaded 2-core
machine) gave 0.12, 0.09 and 0.16 of ``/health``'s rate: no difference the machine's drift does not
explain, so the window that adds no latency is the default (README "Serving the engine")."""
MAX_BATCH = 64
"""Requests in one batch at most (a 2-ply batch of 64 is a few seconds of work)."""
MAX_QUEUE = 256
"""Requests waiting for a batch at most; one more is answered 503."""


@dataclasses.dataclass(frozen=True)
class BatchSettings:
    """How the batcher gathers requests.

    Attributes:
        window_ms: milliseconds to wait after the first request of a batch for more to arrive
            (0: take what is already waiting). Finite, 0 <= window_ms <= 1000.
        max_batch: requests in one batch at most, >= 1.
        max_queue: requests waiting at most, >= 1; one more raises :class:`QueueFull`.

    Raises:
        ValueError: naming the field that is out of range.
    """

    window_ms: float = WINDOW_MS
    max_batch: int = MAX_BATCH
    max_queue: int = MAX_QUEUE

    def __post_init__(self) -> None:
        w = self.window_ms
        if (
            isinstance(w, bool)
            or not isinstance(w, (int, float))
            or not math.isfinite(w)
            or not 0 <= w <= 1000
        ):
            raise ValueError(f"window_ms must be a number of milliseconds 0..1000, got {w!r}")
        for name in ("max_batch", "max_queue"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


class QueueFull(Exception):
    """More requests wait than ``max_queue`` allows (the server answers 503)."""


@dataclasses.dataclass
class Job:
    """One request's work: ``kind`` and ``key`` say which jobs may be computed together.

    Attributes:
        kind: what to compute (the compute function's business, e.g. ``"move"``).
        key: jobs of one kind and equal key form one group (e.g. the agent's ply).
        payload: the request's data.
        future: resolved with the answer or the exception.
    """

    kind: str
    key: Any
    payload: Any
    future: asyncio.Future


Compute = Callable[[str, Any, Sequence[Any]], Sequence[Any]]
"""``compute(kind, key, payloads) -> answers``, one per payload, in order; run on the worker thread.
An answer that is an exception instance is raised to that request."""


class Batcher:
    """Gathers jobs from the event loop and computes them in groups on one worker thread.

    Args:
        compute: the group computation (:data:`Compute`). If it raises for a group, each job of
            the group is computed alone, so one bad request gets its own error and no other does.
        settings: the window and bounds.
        inline: ``inline(kind, key) -> bool``, whether a group may be computed on the event loop
            (cheap work); a batch is computed there when all its groups may and the worker thread
            is idle. ``None``: every batch on the worker thread.

    Works on whichever event loop submits to it (a test client may start a new loop per
    request): a loop that has not submitted before gets its own gathering task.
    """

    def __init__(
        self,
        compute: Compute,
        settings: BatchSettings = BatchSettings(),
        inline: Callable[[str, Any], bool] | None = None,
    ) -> None:
        self.compute = compute
        self.settings = settings
        self.inline = inline
        self._in_executor = 0  # calls running or queued on the worker thread
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nard-engine")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[Job] = []
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self.batches = 0  # batches computed (for tests and logs)
        self.jobs = 0  # jobs computed
        self.inline_batches = 0  # of them, computed on the event loop

    async def submit(self, kind: str, key: Any, payload: Any) -> Any:
        """The answer of one job, computed with whatever else arrives within the window.

        Raises:
            QueueFull: when ``max_queue`` jobs already wait.
            Exception: the job's own error, as the compute function gave it.
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._task is None or self._task.done():
            self._loop, self._pending, self._wakeup = loop, [], asyncio.Event()
            self._task = loop.create_task(self._gather())
        if len(self._pending) >= self.settings.max_queue:
            raise QueueFull(f"server busy: {self.settings.max_queue} requests are waiting; try again later")
        future = loop.create_future()
        self._pending.append(Job(kind, key, payload, future))
        self._wakeup.set()
        return await future

    async def run(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn()`` on the worker thread, between batches (for work that is not batched)."""
        return await self._on_worker(fn)

    async def _on_worker(self, fn: Callable[..., Any], *args: Any) -> Any:
        self._in_executor += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        finally:
            self._in_executor -= 1

    async def _gather(self) -> None:
        wakeup = self._wakeup
        while True:
            await wakeup.wait()
            wakeup.clear()
            if not self._pending:
                continue
            if self.settings.window_ms > 0:
                await asyncio.sleep(self.settings.window_ms / 1000)
            while self._pending:
                batch = self._pending[: self.settings.max_batch]
                del self._pending[: self.settings.max_batch]
                batch = [job for job in batch if not job.future.done()]  # a client that went away
                if not batch:
                    continue
                if (
                    self.inline is not None
                    and self._in_executor == 0
                    and all(self.inline(job.kind, job.key) for job in batch)
                ):
                    self.inline_batches += 1
                    answers = self._compute_batch(batch)  # cheap, and no other thread computes
                else:
                    answers = await self._on_worker(self._compute_batch, batch)
                for job, answer in zip(batch, answers, strict=True):
                    if job.future.done():
                        continue
                    if isinstance(answer, BaseException):
                        job.future.set_exception(answer)
                    else:
                        job.future.set_result(answer)

    def _compute_batch(self, batch: list[Job]) -> list[Any]:
        """Answers of a batch, grouped by ``(kind, key)`` (worker thread)."""
        self.batches += 1
        self.jobs += len(batch)
        groups: dict[tuple[str, Any], list[int]] = {}
        for i, job in enumerate(batch):
            groups.setdefault((job.kind, job.key), []).append(i)
        answers: list[Any] = [None] * len(batch)
        for (kind, key), members in groups.items():
            try:
                got = list(self.compute(kind, key, [batch[i].payload for i in members]))
                if len(got) != len(members):
                    raise RuntimeError(f"compute gave {len(got)} answers for {len(members)} jobs")
            except Exception:  # computed alone, each job gets its own answer or error
                if len(members) > 1:
                    log.debug("batch of %d %s jobs failed; computing each alone", len(members), kind)
                got = []
                for i in members:
                    try:
                        got.append(self.compute(kind, key, [batch[i].payload])[0])
                    except Exception as exc:  # noqa: BLE001 - handed to the request, which answers it
                        got.append(exc)
            for i, answer in zip(members, got, strict=True):
                answers[i] = answer
        return answers
