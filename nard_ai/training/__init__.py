"""Supervised training data made by nard_ai itself: position sets and their labels (issue 14).

Every target is nard_ai's own: positions from self-play of its network
(:mod:`nard_ai.training.positions`), labels from its n-ply search and its
rollouts (:mod:`nard_ai.training.labels`). Other engines (gnubg) stay
opponents and referees; none of their labels, weights or data sets is used.

Modules:

* :mod:`nard_ai.training.store`: the on-disk formats (CSV shards of
  ``position_id,class`` and ``position_id,win,win_g,win_bg,lose_g,lose_bg``,
  JSON manifests and sidecars), atomic writes.
* :mod:`nard_ai.training.positions`: gnubg's position classes
  (``classify_positions``), generation by seeded self-play with exploration
  (``generate_positions``), dedup, strata, shards.
* :mod:`nard_ai.training.labels`: label methods and plans (``make_plan``),
  shard tasks (``ShardTask``, ``label_shard``), resumable runs on worker
  processes (``run_labels``).
* :mod:`nard_ai.training.cli`: ``python -m nard_ai.training positions|label|overlap``.

Submodules are imported on use (``import nard_ai.training`` loads nothing heavy).
"""
