"""The checks and helpers several layers share (issue 13 step 5): one ply check, one set of argparse
types, one atomic file write.

* :func:`nard_ai.core.ply.check_ply`: the search depths 0..2 in gnubg's numbering, one message;
* :mod:`nard_ai.training.argtypes`: the whole-number and seconds types of ``nard`` and
  ``python -m nard_ai.training``, one wording;
* :mod:`nard_ai.model.atomic`: temporary file, lock, fsync, ``os.replace``; a killed writer's
  unlocked leftovers are removed, a live writer's locked file never.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import stat

import numpy as np
import pytest

from nard_ai.core.ply import MAX_PLY, check_ply
from nard_ai.model.atomic import (
    TMP_SUFFIX,
    atomic_write,
    atomic_write_bytes,
    remove_unlocked_temporaries,
)
from nard_ai.training.argtypes import non_negative_int, positive_int, positive_seconds

# --------------------------------------------------------------------------- ply


@pytest.mark.parametrize("ply", [0, 1, 2, np.int64(2), np.int8(0)])
def test_check_ply_takes_every_depth_the_engine_searches(ply):
    # MAX_PLY = 2: the engine searches 0-, 1- and 2-ply (gnubg numbering; nard_ai.search.lookahead)
    assert check_ply(ply) == int(ply) and type(check_ply(ply)) is int
    assert MAX_PLY == 2


@pytest.mark.parametrize("ply", [3, -1, True, 1.0, "1", None, np.float64(1)])
def test_check_ply_refuses_anything_else_with_one_message(ply):
    with pytest.raises(ValueError) as info:
        check_ply(ply)
    assert str(info.value) == f"ply must be an integer 0..2 (gnubg numbering), got {ply!r}"


def test_every_layer_refuses_a_bad_ply_in_the_same_words():
    """The search's move filters, the cube decision and agent specs say what check_ply says
    (each checks before it loads a network)."""
    from nard_ai.agents import agent_from_spec
    from nard_ai.core.board import starting_board
    from nard_ai.cube.position import cube_decision
    from nard_ai.search.filters import DEFAULT_FILTERS

    message = r"ply must be an integer 0\.\.2 \(gnubg numbering\), got 3$"
    with pytest.raises(ValueError, match="^" + message):
        DEFAULT_FILTERS.levels(3)
    with pytest.raises(ValueError, match="^" + message):
        cube_decision(starting_board(), ply=3)
    with pytest.raises(ValueError, match=r"^agent spec 'default:3': " + message):
        agent_from_spec("default:3")


# --------------------------------------------------------------------------- argparse types


@pytest.mark.parametrize(
    "kind, text, message",
    [
        (non_negative_int, "x", "invalid int value: 'x'"),
        (non_negative_int, "-1", "must be >= 0, got -1"),
        (positive_int, "1.5", "invalid int value: '1.5'"),
        (positive_int, "0", "must be >= 1, got 0"),
        (positive_seconds, "soon", "invalid number of seconds: 'soon'"),
        (positive_seconds, "0", "must be a number of seconds > 0, got 0"),
        (positive_seconds, "inf", "must be a number of seconds > 0, got inf"),
        (positive_seconds, "nan", "must be a number of seconds > 0, got nan"),
    ],
)
def test_argument_types_name_what_is_wrong(kind, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as info:
        kind(text)
    assert str(info.value) == message


def test_argument_types_take_their_ranges():
    assert non_negative_int("0") == 0 and positive_int("7") == 7 and positive_seconds("0.5") == 0.5


def test_both_command_lines_use_the_same_types():
    """``nard``'s commands and ``python -m nard_ai.training`` share nard_ai.training.argtypes."""
    from nard_ai.interfaces.commands import common

    assert common.positive_int is positive_int and common.non_negative_int is non_negative_int


def test_the_training_command_line_refuses_a_bad_count_in_the_shared_words(capsys):
    from nard_ai.training.cli import main

    with pytest.raises(SystemExit) as info:
        main(["positions", "--count", "0", "--out", "unused"])
    assert info.value.code == 2
    assert "argument --count: must be >= 1, got 0" in capsys.readouterr().err


# --------------------------------------------------------------------------- atomic writes


def test_atomic_write_leaves_the_whole_file_with_a_normal_mode_and_no_temporary(tmp_path):
    path = tmp_path / "a.bin"
    assert atomic_write_bytes(path, b"one") == path and path.read_bytes() == b"one"
    atomic_write(path, lambda f: f.write(b"two"))
    assert path.read_bytes() == b"two"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's private 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["a.bin"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path):
    path = tmp_path / "a.bin"
    atomic_write_bytes(path, b"old")

    def half(f):
        f.write(b"ne")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, half)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["a.bin"]


def test_a_folders_sweep_removes_dead_writers_files_but_not_a_live_writers(tmp_path):
    """remove_unlocked_temporaries (a run that owns its folder, at its start): any ``.*.tmp`` nobody
    holds locked goes, whatever its age; a locked one (a live writer's) and other files stay."""
    dead = tmp_path / f".labels-00002.csv.abc{TMP_SUFFIX}"
    dead.write_bytes(b"partial")
    live = tmp_path / f".labels-00003.csv.Xy12_abc{TMP_SUFFIX}"
    live.write_bytes(b"partial")
    other = tmp_path / "labels-00001.csv"
    other.write_bytes(b"data")
    with open(live, "rb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        assert remove_unlocked_temporaries(tmp_path) == [dead]
    assert live.exists() and other.exists() and not dead.exists()
    assert remove_unlocked_temporaries(tmp_path) == [live]  # its writer closed it without finishing
