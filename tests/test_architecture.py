"""The import graph follows STYLE.md: rules -> encoding -> network -> ... -> interfaces.

Checked statically (every ``import`` statement, module level or inside a
function) and dynamically (what ``import nard_ai`` pulls in).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "nard_ai"

# STYLE.md rule 1: "The rules core is pure functions over arrays ... no torch, no gymnasium imports in it."
RULES_CORE = ["board", "rules", "movegen", "game", "checker_moves", "encoding"]
HEAVY = {"torch", "gymnasium", "fastapi", "uvicorn", "tensorboard", "env"}


def imported_roots(path: Path) -> set[str]:
    """Top-level names of absolute imports, and ``nard_ai`` sibling modules of relative ones (as ``.name``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
            elif node.level >= 1:
                names.add("." + (node.module or "").split(".")[0])
    return names


@pytest.mark.parametrize("module", RULES_CORE)
def test_rules_core_imports_no_torch_gymnasium_or_server(module):
    heavy = imported_roots(PACKAGE / f"{module}.py") & HEAVY
    assert not heavy, f"nard_ai/{module}.py imports {sorted(heavy)}"


def test_formats_import_no_learning_or_interface_code():
    for path in sorted((PACKAGE / "formats").glob("*.py")):
        heavy = imported_roots(path) & HEAVY
        assert not heavy, f"{path.relative_to(PACKAGE.parent)} imports {sorted(heavy)}"


def test_the_library_never_imports_the_env_package():
    # STYLE.md rule 3: "The library never imports `env`."
    for path in sorted(PACKAGE.rglob("*.py")):
        assert "env" not in imported_roots(path), f"{path.relative_to(PACKAGE.parent)} imports env"


def test_rules_core_does_not_import_upper_layers():
    upper = {".network", ".evaluator", ".search", ".arena", ".cube", ".rollout", ".server", ".cli", ".selfplay"}
    for module in RULES_CORE:
        bad = imported_roots(PACKAGE / f"{module}.py") & upper
        assert not bad, f"nard_ai/{module}.py imports {sorted(bad)}"


def test_import_nard_ai_stays_light():
    """``import nard_ai`` and a first legal_plays load no torch or gymnasium (agents are imported lazily)."""
    code = (
        "import sys, nard_ai\n"
        "nard_ai.legal_plays(nard_ai.starting_board(), (3, 1))\n"
        "print(sorted(m for m in ('torch', 'gymnasium', 'fastapi') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
