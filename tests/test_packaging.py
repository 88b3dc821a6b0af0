"""The shipped network reaches non-editable installs (README: "every feature works on a fresh clone")."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import nard_ai.model.network as network

REPO = Path(__file__).resolve().parent.parent


def test_pyproject_installs_the_shipped_checkpoints_where_the_loader_looks():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    data_files = config["tool"]["setuptools"]["data-files"]["share/nard_ai/checkpoints"]
    assert f"checkpoints/{network.DEFAULT_CHECKPOINT_NAME}" in data_files
    for name in data_files:
        assert (REPO / name).is_file(), name


def test_a_wheel_install_finds_the_checkpoint_under_sys_prefix(tmp_path, monkeypatch):
    # a wheel puts the package in site-packages (no checkpoints/ beside it) and the data file under
    # <prefix>/share/nard_ai/checkpoints
    site = tmp_path / "lib" / "site-packages" / "nard_ai"
    site.mkdir(parents=True)
    installed = tmp_path / "share" / "nard_ai" / "checkpoints" / network.DEFAULT_CHECKPOINT_NAME
    installed.parent.mkdir(parents=True)
    installed.write_bytes(b"x")
    monkeypatch.setattr(network, "__file__", str(site / "network.py"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert network.default_checkpoint_path() == installed


def test_a_source_tree_prefers_its_own_checkpoints_directory():
    assert network.default_checkpoint_path() == REPO / "checkpoints" / network.DEFAULT_CHECKPOINT_NAME
