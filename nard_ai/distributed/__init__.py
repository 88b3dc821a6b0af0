"""Parallel workloads on one process or on a Ray cluster, behind one small executor interface.

See :mod:`nard_ai.distributed.executor`. Nothing here imports ``ray`` until a
:class:`~nard_ai.distributed.executor.RayExecutor` is made.
"""

from nard_ai.distributed.executor import (
    Executor,
    LocalExecutor,
    RayExecutor,
    add_ray_argument,
    executor_from_args,
    make_executor,
    shard_ranges,
)

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "add_ray_argument",
    "executor_from_args",
    "make_executor",
    "shard_ranges",
]
