"""One executor interface for every sharded workload: this process, or a Ray cluster.

A workload (a rollout, a match, a labelling run) is cut into **shards**: plain,
picklable task records whose results are a pure function of the task and one
*shared* object (the agent or agents, holding the network). The workload's
own module defines the shard function (a top-level function ``fn(shared,
task)`` or ``fn(task)``) and the merge, and hands the tasks to an executor:

=====================  ======================================================
executor               what it does
=====================  ======================================================
:class:`LocalExecutor` runs the shards one after another in this process
                       (the default of every workload; it imports no Ray)
:class:`RayExecutor`   runs each shard as a Ray task (``num_cpus=1``) on a
                       Ray cluster: local (``"local"``), the running one
                       (``"auto"``, or ``RAY_ADDRESS``), or one at an address
=====================  ======================================================

Both run the same shard function on the same tasks and return the results in
task order, so a workload's merged result does not depend on the executor:
the same seed and shard size give the same numbers on one process, on a local
Ray cluster and on N nodes (``tests/test_ray.py`` checks it for a labelling
run, a rollout and a match).

Ray specifics:

* **The shared object goes to the cluster once per call** (one generation:
  the network does not change during a call): :meth:`RayExecutor.map` puts it
  in Ray's object store with ``ray.put`` and each task receives only its
  reference; a worker process fetches and unpickles it on its first shard
  and keeps it for the next shards of the same call (one cached object per
  worker).
* **Retries.** A shard whose worker process dies (killed, out of memory, its
  node lost) is run again, up to ``max_retries`` times (Ray's task retries:
  ``max_retries``; exceptions raised by the shard itself are not retried,
  they are errors). Results are keyed by shard index and each index is taken
  exactly once, so a retried shard is neither lost nor counted twice.
* **Bounded.** At most ``max_in_flight`` shards (default twice the cluster's
  CPUs) are submitted at a time, so a million-shard run does not flood the
  scheduler.
* **Threads.** Each shard runs with torch and numba on ``threads`` threads
  (default 1: one shard per CPU Ray schedules). :class:`LocalExecutor` runs its
  shards on 1 thread by default too: torch's float sums may differ in the last
  bit with the thread count, and the same numbers need the same threads.

Addresses (``--ray`` on the command lines, :func:`make_executor` from
Python): ``local`` starts a Ray cluster in this process (``ray.init()``,
all the machine's cores, shut down at :meth:`RayExecutor.close`); ``auto``
connects to the running cluster (the one ``ray start --head`` started on
this machine, or ``RAY_ADDRESS``); anything else (``HOST:PORT``,
``ray://HOST:10001``) is the address of a cluster's head. Ray's own
documentation: https://docs.ray.io/en/latest/ray-core/tasks.html (tasks,
``max_retries``), https://docs.ray.io/en/latest/ray-core/objects.html (``ray.put``).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "make_executor",
    "add_ray_argument",
    "executor_from_args",
    "shard_ranges",
    "RAY_HELP",
]

RAY_HELP = (
    "run the shards on Ray: 'local' (a Ray cluster of this machine, started for the run), 'auto' "
    "(the running cluster: `ray start --head`, or RAY_ADDRESS), or a head's ADDRESS (HOST:PORT, "
    "ray://HOST:10001); default: the RAY_ADDRESS environment variable if set, else this process "
    "(no Ray). Results are the same either way."
)

_NO_RAY = "the Ray backend needs the optional ray package: pip install 'nard_ai[ray]'"


@runtime_checkable
class Executor(Protocol):
    """What a sharded workload needs of a backend.

    Attributes:
        workers: the CPUs shards can run on at once (1 for :class:`LocalExecutor`).
    """

    workers: int

    def map(
        self,
        fn: Callable,
        tasks: Sequence,
        shared: Any = None,
        *,
        on_result: Callable[[int, Any], object] | None = None,
    ) -> list:
        """``[fn(shared, t) for t in tasks]`` (``fn(t)`` when ``shared`` is ``None``), in task order.

        ``on_result(index, result)`` is told each result as it arrives (for a progress bar or to
        save it: the order of the calls may differ from the task order on Ray).
        """
        ...

    def close(self) -> None:
        """Release the backend (a Ray cluster this executor started is shut down)."""
        ...


def _call(fn: Callable, shared: Any, task: Any) -> Any:
    return fn(task) if shared is None else fn(shared, task)


class _Threads:
    """torch and numba on ``n`` threads for the block (``None``: as they are); restored after."""

    def __init__(self, n: int | None) -> None:
        self.n = n

    def __enter__(self):
        if self.n is None:
            return self
        import sys

        import numba

        self.torch = sys.modules.get("torch")  # a shard that never loaded torch needs no setting
        self.saved = (numba.get_num_threads(), self.torch.get_num_threads() if self.torch else None)
        numba.set_num_threads(min(self.n, numba.config.NUMBA_NUM_THREADS))
        if self.torch is not None:
            self.torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc) -> None:
        if self.n is None:
            return
        import numba

        numba.set_num_threads(self.saved[0])
        if self.torch is not None:
            self.torch.set_num_threads(self.saved[1])


def _check_threads(threads) -> int | None:
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be an integer >= 1 (or None), got {threads!r}")
    return threads


class LocalExecutor:
    """Runs the shards one after another in this process (no Ray).

    Args:
        threads: torch and numba threads while the shards run (default 1, as a Ray worker runs
            them: torch's float sums can differ in the last bit with the thread count, so the
            same numbers as Ray need the same threads per shard; ``None``: as they are).

    Raises:
        ValueError: ``threads`` not an integer >= 1 or ``None``.
    """

    workers = 1

    def __init__(self, threads: int | None = 1) -> None:
        self.threads = _check_threads(threads)

    def map(self, fn, tasks, shared=None, *, on_result=None) -> list:
        """See :meth:`Executor.map`; exceptions of ``fn`` propagate unchanged."""
        out = []
        with _Threads(self.threads):
            for i, task in enumerate(tasks):
                result = _call(fn, shared, task)
                out.append(result)
                if on_result is not None:
                    on_result(i, result)
        return out

    def close(self) -> None:
        return None

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LocalExecutor(threads={self.threads})"


# --------------------------------------------------------------------------- Ray

_worker_shared: dict[str, Any] = {}  # in a Ray worker process: the object of the current call, by id


def _ray_shard(fn: Callable, shared_box: list | None, task: Any, threads: int | None) -> Any:
    """The body of every Ray task: fetch the call's shared object once per worker, run one shard.

    ``shared_box`` is ``[ObjectRef]`` (a list, so Ray does not resolve the reference itself and the
    worker can keep the unpickled object for the call's next shards) or ``None``.
    """
    shared = None
    if shared_box is not None:
        import ray

        ref = shared_box[0]
        key = ref.hex()
        if key not in _worker_shared:
            _worker_shared.clear()  # one generation at a time: drop the previous call's object
            _worker_shared[key] = ray.get(ref)
        shared = _worker_shared[key]
    with _Threads(threads):
        return _call(fn, shared, task)


class RayExecutor:
    """Runs each shard as a Ray task (module docstring: object store, retries, bounds).

    Args:
        address: ``"local"`` (start a cluster in this process), ``"auto"`` (the running one, or
            ``RAY_ADDRESS``), or a head's address; ``None`` joins the Ray session this process
            already has (``ray.init`` called before, as the tests do) or else acts as ``"local"``.
        num_cpus: ``"local"`` only: the CPUs of the cluster started (``None``: all cores).
        threads: torch and numba threads per shard (default 1).
        max_retries: times a shard is run again when its worker dies (default 3).
        max_in_flight: shards submitted at once (``None``: twice the cluster's CPUs).

    Raises:
        ValueError: ray is not installed, or a bad ``threads``, ``max_retries``, ``max_in_flight``
            or ``num_cpus``; or a node of the cluster runs other nard_ai code than this process
            (:func:`check_workers_code`).
        ConnectionError: no Ray cluster at ``address``: nothing answers there within
            :data:`PROBE_TIMEOUT` seconds, or Ray's own error, passed on.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        threads: int | None = 1,
        max_retries: int = 3,
        max_in_flight: int | None = None,
    ) -> None:
        try:
            import ray
        except ImportError as exc:
            raise ValueError(_NO_RAY) from exc
        self.threads = _check_threads(threads)
        for name, value, low in (("max_retries", max_retries, 0), ("max_in_flight", max_in_flight, 1)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if num_cpus is not None and (
            isinstance(num_cpus, bool) or not isinstance(num_cpus, int) or num_cpus < 1
        ):
            raise ValueError(f"num_cpus must be an integer >= 1 (or None), got {num_cpus!r}")
        self._ray = ray
        self.address = address
        self.owns_cluster = False
        if not ray.is_initialized():
            if address in (None, "local"):
                # address="local": a new cluster even where `ray start` left one running
                ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
                self.owns_cluster = True
            else:
                _probe(os.environ.get("RAY_ADDRESS", "") if address == "auto" else address)
                ray.init(address=address, log_to_driver=False)
                self.owns_cluster = True  # the connection is ours to close (the cluster lives on)
        try:
            check_workers_code(ray)
        except BaseException:
            self.close()
            raise
        self.max_retries = int(max_retries)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.max_in_flight = int(max_in_flight) if max_in_flight is not None else 2 * self.workers
        self._remote = ray.remote(num_cpus=1, max_retries=self.max_retries, retry_exceptions=False)(
            _ray_shard
        )
        self.shard_seconds: list[float] = []  # driver-side wall time per finished shard of the last map

    def map(self, fn, tasks, shared=None, *, on_result=None) -> list:
        """See :meth:`Executor.map`. The shared object is put in the object store once for the call.

        Raises:
            the shard's own exception (as Ray's ``RayTaskError`` subclass of it) if a shard fails,
            or ``ray.exceptions.WorkerCrashedError`` once a shard's worker died ``max_retries + 1``
            times. The shards still in flight are cancelled.
        """
        ray = self._ray
        tasks = list(tasks)
        box = None if shared is None else [ray.put(shared)]
        results: list = [None] * len(tasks)
        taken = [False] * len(tasks)
        pending: dict = {}
        started: dict[int, float] = {}
        self.shard_seconds = []
        queue = iter(range(len(tasks)))

        def submit() -> None:
            for i in queue:
                pending[self._remote.remote(fn, box, tasks[i], self.threads)] = i
                started[i] = time.perf_counter()
                if len(pending) >= self.max_in_flight:
                    return

        submit()
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i = pending.pop(ref)
                    result = ray.get(ref)
                    if taken[i]:  # cannot happen (one reference per index); a guard against double counting
                        raise RuntimeError(f"shard {i} returned twice")
                    taken[i] = True
                    results[i] = result
                    self.shard_seconds.append(time.perf_counter() - started[i])
                    if on_result is not None:
                        on_result(i, result)
                submit()
        except BaseException:
            for ref in pending:
                ray.cancel(ref)
            raise
        return results

    def close(self) -> None:
        """Shut Ray down if this executor started or connected it (a session joined is left alone)."""
        if self.owns_cluster and self._ray.is_initialized():
            self._ray.shutdown()
        self.owns_cluster = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r}, workers={self.workers}, threads={self.threads})"


# --------------------------------------------------------------------------- connecting


PROBE_TIMEOUT = 5.0
"""Seconds to wait for a TCP answer from a cluster's address before ``ray.init`` (which otherwise
retries a silent address without end)."""


_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113 §3.4, §6.5)."""


def _probe(address: str, timeout: float = PROBE_TIMEOUT) -> None:
    """Raise ConnectionError unless a gRPC server (Ray's) answers at ``HOST:PORT`` (or ``ray://HOST:PORT``).

    Addresses of another form (none, or no numeric port) are left to Ray, which reports them itself.
    """
    if not address:
        return
    target = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        return
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as conn:
            if os.environ.get("RAY_USE_TLS", "0") in ("0", ""):
                # Ray's GCS (and its client server) speak gRPC: HTTP/2, which answers the client's
                # connection preface with a SETTINGS frame (RFC 9113 §3.4). Another program on the
                # port (an HTTP/1 server, say) does not, and Ray would wait on it without end.
                conn.sendall(_H2_PREFACE)
                reply = b""
                while len(reply) < 9:
                    chunk = conn.recv(9 - len(reply))
                    if not chunk:
                        break
                    reply += chunk
                grpc = len(reply) >= 9 and reply[3] == 0x04
            else:
                grpc = True
    except TimeoutError:
        raise ConnectionError(
            f"no Ray cluster at {address}: no answer on {host}:{port} within {timeout:g} s"
        ) from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConnectionError(
            f"no Ray cluster at {address}: nothing answered on {host}:{port} within {timeout:g} s ({reason})"
        ) from None
    if not grpc:
        raise ConnectionError(
            f"no Ray cluster at {address}: something answers on {host}:{port}, but not as Ray's gRPC server "
            "does (is that the right port? a head's is 6379 by default)"
        )


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The first 16 hex digits of a SHA-256 over nard_ai's source files (relative path and bytes) as
    this process imports them: equal on two machines exactly when they run the same code."""
    import nard_ai

    root = Path(nard_ai.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _code_here() -> tuple[str, str, str]:
    import nard_ai

    return code_fingerprint(), str(Path(nard_ai.__file__).resolve().parent), socket.gethostname()


WORKERS_CHECK_TIMEOUT = 300.0
"""Seconds :func:`check_workers_code` waits for one worker per node to answer."""


def check_workers_code(ray) -> None:
    """Refuse a Ray cluster whose nodes import other nard_ai code than this driver.

    One zero-CPU task per alive node (``NodeAffinitySchedulingStrategy``) reports its
    :func:`code_fingerprint`; a node with another fingerprint would break the promise of the same
    numbers on every backend without a sign (a stale install on one node), so it is an error.

    Raises:
        ValueError: naming the node, its nard_ai folder and fingerprint, and the driver's.
        TimeoutError: no answer from every node within :data:`WORKERS_CHECK_TIMEOUT` seconds.
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = _code_here()
    task = ray.remote(num_cpus=0)(_code_here)
    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
    refs = [
        task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote()
        for node in nodes
    ]
    try:
        answers = ray.get(refs, timeout=WORKERS_CHECK_TIMEOUT)
    except ray.exceptions.GetTimeoutError:
        raise TimeoutError(
            f"the Ray cluster's nodes did not report their nard_ai code within {WORKERS_CHECK_TIMEOUT:g} s"
        ) from None
    for fingerprint, folder, host in answers:
        if fingerprint != here[0]:
            raise ValueError(
                f"Ray node {host} runs other nard_ai code ({folder}, fingerprint {fingerprint}) than this "
                f"driver ({here[1]}, fingerprint {here[0]}): install the same version on every node, or "
                "start the cluster with this checkout on PYTHONPATH"
            )


# --------------------------------------------------------------------------- helpers


def make_executor(address: str | None = None, **kwargs) -> LocalExecutor | RayExecutor:
    """The executor of a ``--ray`` value: ``None`` or ``""`` -> :class:`LocalExecutor`, else :class:`RayExecutor`.

    ``kwargs`` go to the executor. Raises what the executor raises (ValueError, ConnectionError).
    """
    if address is None or address == "":
        return LocalExecutor(**{k: v for k, v in kwargs.items() if k == "threads"})
    if not isinstance(address, str):
        raise ValueError(f"ray address must be a string ('local', 'auto' or HOST:PORT), got {address!r}")
    return RayExecutor(address, **kwargs)


def add_ray_argument(
    parser: argparse.ArgumentParser,
    shard_unit: str | None = None,
    shard_default: int = 0,
    shard_dest: str = "shard_size",
) -> None:
    """Add ``--ray auto|local|ADDRESS`` (default: ``RAY_ADDRESS`` if set, else none) to a parser.

    With ``shard_unit`` (e.g. ``"games"``) also ``--shard-games N`` (``--shard-{unit}``): the
    shard size, default ``shard_default``; given without ``--ray`` it runs the same shards in this
    process (:class:`LocalExecutor`), which gives the numbers a Ray run gives; its value is the
    namespace's ``shard_dest`` (pass the same to :func:`executor_from_args`).
    """
    parser.add_argument(
        "--ray", metavar="auto|local|ADDRESS", default=os.environ.get("RAY_ADDRESS") or None, help=RAY_HELP
    )
    if shard_unit is not None:

        def positive(text: str) -> int:
            try:
                value = int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
            if value < 1:
                raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
            return value

        parser.add_argument(
            f"--shard-{shard_unit}",
            dest=shard_dest,
            type=positive,
            default=None,
            help=f"{shard_unit} per shard (default {shard_default:,}); alone (no --ray) it runs the same "
            "shards in this process: the numbers of a Ray run",
        )


def executor_from_args(
    args: argparse.Namespace, parser: argparse.ArgumentParser | None = None, shard_dest: str = "shard_size"
) -> LocalExecutor | RayExecutor | None:
    """The executor of parsed arguments with ``--ray``: ``None`` when neither ``--ray`` nor
    ``--shard-...`` is given (the workload's own local path), a :class:`LocalExecutor` for a shard
    size alone, else a :class:`RayExecutor`.

    Raises:
        ValueError: ray not installed; ConnectionError: no cluster at the address. With a
        ``parser`` both become ``parser.error`` (the message, exit status 2).
    """
    address = getattr(args, "ray", None)
    try:
        if address:
            return make_executor(address)
        if getattr(args, shard_dest, None) is not None:
            return LocalExecutor()
        return None
    except (ValueError, ConnectionError) as exc:
        if parser is None:
            raise
        parser.error(f"--ray {address}: {exc}")


def shard_ranges(total: int, shard: int, multiple: int = 1) -> list[tuple[int, int]]:
    """``(first, count)`` of each shard of ``total`` items cut every ``shard`` items.

    Args:
        total: items, >= 1.
        shard: items per shard, >= 1 and a multiple of ``multiple`` (duplicate pairs: 2).
        multiple: the unit a shard boundary must respect.

    Returns:
        ``[(0, shard), (shard, shard), ..., (k * shard, total - k * shard)]``.

    Raises:
        ValueError: a ``total`` or ``shard`` below 1, or ``shard`` not a multiple of ``multiple``.
    """
    for name, value in (("total", total), ("shard", shard)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if shard % multiple:
        raise ValueError(f"shard must be a multiple of {multiple}, got {shard}")
    return [(first, min(shard, total - first)) for first in range(0, total, shard)]
