"""Parallel workloads on one process or on a Ray cluster, behind one small executor interface.

See :mod:`nard_ai.distributed.executor` (sharded workloads) and
:mod:`nard_ai.distributed.selfplay` (TD self-play on Ray actors,
:class:`RayShardRunner`, loaded on first use: it needs torch). Nothing here
imports ``ray`` until a :class:`~nard_ai.distributed.executor.RayExecutor` is made.
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
    "RayShardRunner",
]


def __getattr__(name: str):
    if name == "RayShardRunner":
        from nard_ai.distributed.selfplay import RayShardRunner

        return RayShardRunner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
