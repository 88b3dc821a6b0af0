"""A newcomer's install: what a wheel holds and where, and what the first run says.

The shipped network reaches non-editable installs (README: "every feature
works on a fresh clone"); ``env/`` installs as ``nard_ai_env``, never as a
top-level ``env`` (README, "Gymnasium environment"); a first run on a cold
numba cache says so on the terminal and a warm one says nothing (README,
the setup passage).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

import nard_ai.model.network as network

REPO = Path(__file__).resolve().parent.parent


def test_pyproject_installs_the_shipped_checkpoints_where_the_loader_looks():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    data_files = config["tool"]["setuptools"]["data-files"]["share/nard_ai/checkpoints"]
    assert f"checkpoints/{network.DEFAULT_CHECKPOINT_NAME}" in data_files
    for name in data_files:
        assert (REPO / name).is_file(), name
    # every network in checkpoints/ ships: the README's comparisons load the earlier defaults by path
    assert sorted(data_files) == sorted(f"checkpoints/{p.name}" for p in (REPO / "checkpoints").glob("*.pt"))


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


# --------------------------------------------------------------------------- the Gymnasium package's name


def _library_packages() -> list[str]:
    return sorted(".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "nard_ai").rglob("__init__.py"))


def test_pyproject_installs_every_library_package_and_env_as_nard_ai_env():
    # the list is explicit (the package-dir mapping renames a folder), so it must not miss a new package
    setuptools_config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert sorted(setuptools_config["packages"]) == sorted(_library_packages() + ["nard_ai_env"])
    assert setuptools_config["package-dir"] == {"nard_ai_env": "env"}
    assert "env" not in setuptools_config["packages"]


def test_env_registers_its_entry_points_under_the_name_it_was_imported_as():
    # a checkout imports the folder as `env`, an install as `nard_ai_env`: gymnasium must import that one
    import gymnasium as gym

    import env

    spec = gym.spec(env.ENV_ID)
    # make_env builds BackgammonEnv inside the checker that recovers from a refused first reset (env/backgammon.py)
    assert spec.entry_point == f"{env.__name__}.backgammon:make_env" == "env.backgammon:make_env"
    assert spec.vector_entry_point == "env.vector:BackgammonVectorEnv"


def _build_wheel(tmp_path: Path) -> Path:
    """A wheel built from a copy of the sources (an in-tree build/ could carry stale files into it)."""
    pytest.importorskip("setuptools")
    src = tmp_path / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.tmp", "*__*.pt")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for name in ("nard_ai", "env", "checkpoints", "docs"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    dist = tmp_path / "dist"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run(
        [*pip_wheel, "-w", str(dist), "."],
        cwd=src,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = dist.glob("nard_ai-*.whl")
    return wheel


def test_a_wheel_in_a_fresh_venv_installs_nard_ai_env_not_env_and_it_registers_the_ids(tmp_path):
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    tops = {name.split("/")[0] for name in names}
    assert {"nard_ai", "nard_ai_env"} <= tops and "env" not in tops, tops
    # the explicit package list still carries the package data (the match equity tables, pubeval)
    data = {p.relative_to(REPO).as_posix() for p in (REPO / "nard_ai" / "data").iterdir() if p.is_file()}
    assert data and data <= names, data - names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # -P and no PYTHONPATH: neither the working directory nor this checkout is on sys.path. The dependencies (gymnasium,
    # numba, torch) come from this interpreter's site-packages, appended after the venv's own, and only
    # once `env` has been looked up; that directory's .pth files (an editable install) are not run.
    script = textwrap.dedent(
        f"""
        import importlib.util, json, sys
        found = {{"env": importlib.util.find_spec("env") is not None}}
        found["nard_ai_env"] = importlib.util.find_spec("nard_ai_env").origin
        sys.path.append({sysconfig.get_paths()["purelib"]!r})
        import gymnasium as gym
        import nard_ai_env
        spec = gym.spec("nard/Backgammon-v0")
        single = gym.make("nard/Backgammon-v0")
        vector = gym.make_vec("nard/Backgammon-v0", num_envs=2, vectorization_mode="vector_entry_point")
        by_module = gym.make("nard_ai_env:nard/Backgammon-v0")
        found.update(
            entry_point=spec.entry_point,
            vector_entry_point=spec.vector_entry_point,
            single=type(single.unwrapped).__module__,
            vector=type(vector).__module__,
            by_module=type(by_module.unwrapped).__name__,
            nard_ai=importlib.util.find_spec("nard_ai").origin,
        )
        print(json.dumps(found))
        """
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    run = subprocess.run(
        [str(python), "-P", "-c", script],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.strip().splitlines()[-1])
    site = Path(found["nard_ai_env"]).parent.parent
    assert found["env"] is False and not (site / "env").exists()
    assert Path(found["nard_ai_env"]) == site / "nard_ai_env" / "__init__.py"
    assert Path(found["nard_ai"]).is_relative_to(venv)
    assert found["entry_point"] == "nard_ai_env.backgammon:make_env"
    assert found["vector_entry_point"] == "nard_ai_env.vector:BackgammonVectorEnv"
    assert (found["single"], found["vector"], found["by_module"]) == (
        "nard_ai_env.backgammon",
        "nard_ai_env.vector",
        "BackgammonEnv",
    )
    checkpoints = venv / "share" / "nard_ai" / "checkpoints"
    assert (checkpoints / network.DEFAULT_CHECKPOINT_NAME).is_file()


# --------------------------------------------------------------------------- the first run's compile notice

HINT = ["hint", "4HPwATDgc/ABMA", "--dice", "3", "1"]


def _fresh_kernel(module: str):
    """A new (uncached) numba function whose module is ``module``: calling it compiles it."""
    import numba

    def kernel(x):
        return x + 1

    kernel.__module__ = module
    return numba.njit(kernel)


def test_the_notice_fires_once_at_the_first_compile_of_a_nard_ai_kernel_only():
    from nard_ai.core.compile_notice import FirstCompileNotice

    calls = []
    notice = FirstCompileNotice(lambda: calls.append(1)).install()
    try:
        _fresh_kernel("somebody_else")(1)
        assert calls == []  # not ours
        _fresh_kernel("nard_ai.core.movegen")(1)
        _fresh_kernel("nard_ai.model.encoding")(2)
        assert calls == [1]  # once per process
    finally:
        notice.uninstall()


def test_the_notice_is_not_printed_when_stderr_is_not_a_terminal(capsys):
    from nard_ai.interfaces import cli

    cli._announce_compile()  # capsys's stderr is not a terminal: scripts reading stderr see nothing
    assert capsys.readouterr().err == ""


def _nard_on_a_terminal(argv, env, until_first_line: bool) -> tuple[str, int | None]:
    """Run ``nard argv`` with stderr on a pseudo-terminal; its stderr, and its status if it ran to the end."""
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nard_ai.interfaces.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        cwd=REPO,
        env=env,
    )
    os.close(slave)
    data = b""
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                data += chunk
                if not chunk or (until_first_line and b"\n" in data):
                    break
            elif proc.poll() is not None:
                break
        if until_first_line:
            return data.decode(), None
        return data.decode(), proc.wait(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


needs_pty = pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal needs POSIX")


@needs_pty
def test_a_cold_numba_cache_says_so_on_the_terminal_before_compiling(tmp_path):
    from nard_ai.core.compile_notice import COMPILE_NOTICE

    # an empty NUMBA_CACHE_DIR is a cold cache (numba then keeps its cache there, not in __pycache__);
    # the notice comes first, within seconds, and the compile is not waited for
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(tmp_path)}
    start = time.monotonic()
    first, _ = _nard_on_a_terminal(HINT, env, until_first_line=True)
    assert first.strip() == f"nard: {COMPILE_NOTICE}"
    assert time.monotonic() - start < 60


@needs_pty
def test_a_warm_numba_cache_prints_no_notice(capsys):
    from conftest import run_cli

    status, out, _ = run_cli(HINT, capsys)  # compiles here if this checkout's cache is cold
    assert status == 0 and "8/5 6/5" in out
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # the same numba cache as this process's run above
    err, status = _nard_on_a_terminal(HINT, env, until_first_line=False)
    assert status == 0 and err == "", err


# --------------------------------------------------------------------------- what a newcomer imports


def test_every_name_in_nard_ai_all_resolves_and_cube_decision_is_the_board_entry_point():
    # README ("Architecture"): "Every name in nard_ai.__all__ is where it was". The restructuring left
    # cube_decision pointing at nard_ai.cube.decision, which has only cube_decision_from_probs: an
    # AttributeError that the README's cube example (na.cube_decision(board)) ran into.
    import nard_ai
    from nard_ai.cube.position import cube_decision

    for name in nard_ai.__all__:
        assert getattr(nard_ai, name) is not None, name
    assert nard_ai.cube_decision is cube_decision
