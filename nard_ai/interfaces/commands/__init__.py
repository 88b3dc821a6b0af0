"""The ``nard`` subcommands, one module each (issue 13: the CLI is one module per command).

A command module holds everything of one command and nothing of another:

* ``NAME`` (``str``): the word after ``nard``;
* ``SUMMARY`` (``str``): one line for ``nard --help``;
* ``DESCRIPTION`` (``str``): the paragraph of ``nard NAME --help``;
* ``EXAMPLES`` (sequence of ``str``): runnable command lines, printed under ``examples:``;
* ``configure(parser: argparse.ArgumentParser) -> None``: adds the command's arguments;
* ``run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int``: does the
  command and returns the exit status (bad input: ``parser.error(...)``, status 2).

:data:`COMMANDS` lists the modules in the order ``nard --help`` shows them;
:func:`nard_ai.interfaces.cli.build_parser` adds each one. What several commands share is
:mod:`~nard_ai.interfaces.commands.common` (argument types, the position, agent and cube
arguments, the examples' positions) and :mod:`nard_ai.interfaces.output` (text and JSON
output). A command module imports
what its ``run`` needs inside ``run`` where the import is slow (torch, the web stack),
so that ``nard --help`` and the other commands stay fast.
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMANDS: tuple[str, ...] = (
    "show", "hint", "eval", "cube", "rollout", "play", "analyze", "serve", "ubgi", "export",
)  # fmt: skip
"""Module names under :mod:`nard_ai.interfaces.commands`, in ``nard --help`` order."""


def command_modules() -> list[ModuleType]:
    """The command modules of :data:`COMMANDS`, imported, in order."""
    return [importlib.import_module(f"{__name__}.{name}") for name in COMMANDS]
