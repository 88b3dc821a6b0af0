"""Old flat module paths (``nard_ai.board``, ``nard_ai.network``, ...) as deprecated aliases of their new homes.

nard_ai 0.2 moved its modules into layered subpackages (README, "Architecture").
For one release, importing an old path gives the new module itself (the same
module object, so attributes and monkeypatching behave as before) with a
:class:`DeprecationWarning`. Paths that are now packages of their own
(``nard_ai.cube``, ``nard_ai.search``, ``nard_ai.play``) or a function
(``nard_ai.rollout``) are not aliased; ``nard_ai.arena``'s agent loaders live
in :mod:`nard_ai.agents`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: old module name (under ``nard_ai.``) -> its new home
MOVED = {
    "board": "core.board",
    "rules": "core.rules",
    "movegen": "core.movegen",
    "game": "core.game",
    "checker_moves": "core.checker_moves",
    "encoding": "model.encoding",
    "embedding": "model.embedding",
    "network": "model.network",
    "learn": "model.learn",
    "evaluator": "eval.evaluator",
    "bearoff": "eval.bearoff",
    "cubeful_search": "cube.lookahead",
    "met": "cube.met",
    "arena": "play.arena",
    "cubeplay": "play.sessions",
    "selfplay": "play.selfplay",
    "gnubg_agent": "gnubg.agent",
    "analysis": "reports.analysis",
    "position_report": "reports.position",
    "error_rate": "reports.error_rate",
    "cli": "interfaces.cli",
    "server": "interfaces.http",
    "external": "interfaces.external",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.spec = module.__spec__  # the import system sets __spec__ to the alias's: put it back
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        head, _, leaf = fullname.partition(".")
        if head != "nard_ai" or leaf not in MOVED:
            return None
        new = f"nard_ai.{MOVED[leaf]}"
        warnings.warn(f"{fullname} moved to {new}; the old path goes in nard_ai 0.3", DeprecationWarning, 2)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` once (called by ``import nard_ai``)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
