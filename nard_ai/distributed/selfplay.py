"""TD(lambda) self-play on Ray actors: the same games and weights as the threads of one process.

:func:`nard_ai.play.selfplay.play_round` with ``workers = W > 1`` cuts a round's
game slots into ``W`` shards, each with its own dice generator, and plays them in
epochs of :data:`~nard_ai.play.selfplay.EPOCH_PLIES` plies with a fixed exchange
with the learner between epochs (that module's docstring, "Workers").
:class:`RayShardRunner` plays those shards on Ray instead of in threads:

* **One actor per shard** (``num_cpus=1``), started once and kept from round
  to round (:meth:`RayShardRunner.shutdown` ends them). At the start of every
  round (:meth:`RayShardRunner.open`) the driver puts the network in Ray's
  object store once (``ray.put``) and hands each actor its shard (boards,
  trajectories, dice generator), which it keeps with a search copy of the
  network for the round.
* **Epochs.** Each epoch the driver sends every actor still playing the call
  "play ``EPOCH_PLIES`` plies"; meanwhile it takes the gradient steps due at the
  epoch's start on the finished games' samples (the learner lives in the
  driver, which also writes the checkpoints, the progress bar and TensorBoard).
  The actors answer with the plies' finished games (states and lambda-return
  targets: the samples stream to the learner once per epoch).
* **Staleness** (documented, fixed, the same as with threads): weights changed by
  the steps taken during epoch ``e`` are put in the object store once, after
  it, and every actor loads them before playing epoch ``e + 1``. A sample is
  therefore searched with weights at most two epochs (``2 * EPOCH_PLIES`` plies)
  old, and because every exchange happens at a fixed ply, the run is
  deterministic: **the same seed and ``--workers`` give bit-for-bit the same
  weights with threads, on a local Ray cluster or on N nodes**
  (``tests/test_ray.py``). torch runs on one thread in the actors and in the
  driver's training, as in the threaded runner.
* **A dead actor** (killed, out of memory, node lost) raises
  :class:`~nard_ai.play.selfplay.WorkerLost`; :func:`play_round` then plays the
  round again from its start with fresh actors (the learner, the generator and
  the counters put back), so nothing is lost or counted twice. A killed
  *driver* resumes from its last checkpoint (``train.py --resume``): rounds end
  with no game in flight, so the resumed run replays the same rounds.

Ray's documentation of actors and their failures:
https://docs.ray.io/en/latest/ray-core/actors.html,
https://docs.ray.io/en/latest/ray-core/fault_tolerance/actors.html.
"""

from __future__ import annotations

import copy
from typing import Any

from nard_ai.distributed.executor import RayExecutor
from nard_ai.play.selfplay import WorkerLost, search_copy, sync_weights

__all__ = ["RayShardRunner"]


class _ShardActor:
    """A Ray actor's body: one shard and a search copy of the network (torch on one thread)."""

    def __init__(self) -> None:
        import torch

        torch.set_num_threads(1)

    def start(self, shard: Any, network: Any) -> bool:
        """Take a round's shard and network (the whole state: nothing is kept from a previous round)."""
        from nard_ai.eval.evaluator import NetworkEvaluator

        self.shard = copy.deepcopy(shard)  # Ray hands its arrays over read-only (zero-copy)
        self.network = search_copy(network)
        self.evaluator = NetworkEvaluator(self.network)
        return True

    def play(self, weights: list | None, plies: int) -> tuple[list, bool]:
        """Load ``weights`` (the learner's parameters, in order) if given, then play ``plies`` plies."""
        if weights is not None:
            sync_weights(self.network, weights)
        return self.shard.play(self.evaluator, plies), self.shard.running


class RayShardRunner:
    """A :class:`nard_ai.play.selfplay.ShardRunner` whose shards are Ray actors (module docstring).

    Args:
        executor: the :class:`~nard_ai.distributed.RayExecutor` whose cluster to use (it owns the
            connection: close it when training ends).
        start_timeout: seconds :meth:`open` waits for the actors to start (each needs a free CPU).

    Raises:
        ValueError: ``executor`` is not a :class:`RayExecutor`, or a bad ``start_timeout``; at
            :meth:`open`, more shards than the cluster has CPUs (the actors could never all start).
        TimeoutError: at :meth:`open`, the actors did not all start within ``start_timeout`` (the
            cluster's CPUs are held by other work): an error naming the free CPUs, not a hang.
    """

    def __init__(self, executor: RayExecutor, start_timeout: float = 300.0) -> None:
        if not isinstance(executor, RayExecutor):
            raise ValueError(f"RayShardRunner needs a RayExecutor, got {executor!r}")
        if (
            isinstance(start_timeout, bool)
            or not isinstance(start_timeout, (int, float))
            or not start_timeout > 0
        ):
            raise ValueError(f"start_timeout must be a positive number of seconds, got {start_timeout!r}")
        import ray

        self.start_timeout = float(start_timeout)
        self.executor = executor
        self._ray = ray
        self._actor_class = ray.remote(num_cpus=1, max_restarts=0)(_ShardActor)
        self.actors: list = []
        self.weight_puts = 0  # weight sets put in the object store (one per epoch that trained)

    def open(self, shards: list, network: Any) -> None:
        import torch

        ray = self._ray
        if len(shards) > self.executor.workers:
            raise ValueError(
                f"{len(shards)} self-play shards need as many CPUs, one actor each; the Ray cluster has "
                f"{self.executor.workers}: use fewer workers or a larger cluster"
            )
        self.network = network
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the driver's gradient steps, as the threaded runner takes them
        if len(self.actors) != len(shards):
            self.shutdown()
            self.actors = [self._actor_class.remote() for _ in shards]  # kept for the next rounds
        ref = ray.put(network)
        try:
            ray.get(
                [actor.start.remote(shard, ref) for actor, shard in zip(self.actors, shards, strict=True)],
                timeout=self.start_timeout,
            )
        except ray.exceptions.GetTimeoutError:
            self.shutdown()
            free = ray.available_resources().get("CPU", 0)
            raise TimeoutError(
                f"the {len(shards)} self-play actors did not all start within {self.start_timeout:g} s: each needs "
                f"a free CPU, and the Ray cluster has {free:g} of {self.executor.workers} free (other work "
                "holds the rest?)"
            ) from None
        except ray.exceptions.RayActorError as exc:
            self.shutdown()
            raise WorkerLost(f"a self-play actor died: {exc}") from exc
        self._weights = None

    def epoch(self, indices: list[int], plies: int, train) -> list[tuple[list, bool]]:
        ray = self._ray
        refs = [self.actors[i].play.remote(self._weights, plies) for i in indices]
        self._weights = None
        try:
            if train is not None:
                from nard_ai.core.movegen import serial_kernels

                with serial_kernels():
                    train()
            results = ray.get(refs)
        except ray.exceptions.RayActorError as exc:
            self.shutdown()  # the next open starts fresh actors
            raise WorkerLost(f"a self-play actor died: {exc}") from exc
        if train is not None:
            self._weights = ray.put([p.detach().clone() for p in self.network.parameters()])
            self.weight_puts += 1
        return results

    def close(self) -> None:
        """End a round: the actors stay for the next one (starting them costs seconds: a process,
        torch, the network); :meth:`shutdown` ends them."""
        import torch

        if hasattr(self, "threads"):
            torch.set_num_threads(self.threads)

    def shutdown(self) -> None:
        """Kill the actors (they also end with the driver)."""
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []

    def __repr__(self) -> str:
        return f"RayShardRunner({self.executor!r})"
