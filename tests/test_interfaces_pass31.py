"""Regression tests of a black-box pass over the UBGI engine, the gnubg external player and the ONNX export.

Each test names the right value and where it comes from: the README ("UBGI", "Serving the engine",
"ONNX export"), the modules' own docstrings, gnubg's behaviour (recorded board lines in
``tests/data/gnubg_board_lines.txt``), and what the project's ID readers already refuse.
"""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

import pytest

from nard_ai.interfaces.external import (
    MAX_IDLE_TIMEOUT,
    ExternalPlayer,
    make_server,
    parse_fibs_board,
)
from nard_ai.interfaces.ubgi import UbgiEngine

RECORDED = Path(__file__).parent / "data" / "gnubg_board_lines.txt"


def _recorded(state: str) -> list[str]:
    return [
        line.split("\t", 1)[1].strip()
        for line in RECORDED.read_text().splitlines()
        if line and not line.startswith("#") and line.split("\t", 1)[0] == state
    ]


def _never_called(*args, **kwargs):
    raise AssertionError("the network must not be needed to refuse this request")


# --------------------------------------------------------------------------- UBGI


@pytest.mark.parametrize(("line", "kind"), [(None, "NoneType"), (5, "int"), (["go"], "list")])
def test_ubgi_handle_answers_a_non_string_with_an_error_line(line, kind):
    """UbgiEngine.handle's docstring: "Never raises: a request that cannot be served is one ``error CODE
    DETAIL`` line". Before the fix, None/5/a list raised AttributeError out of handle."""
    engine = UbgiEngine(agent_factory=_never_called)
    assert engine.handle(line) == [f"error bad_command a command line is a str, got {kind}"]


def test_ubgi_handle_reads_bytes_as_run_does():
    """``run`` takes a binary stream (README: bytes that are not UTF-8 are quoted escaped); handle(bytes)
    raised TypeError from its own error path (``ord()`` of an int) before the fix."""
    engine = UbgiEngine(agent_factory=_never_called)
    assert engine.handle(b"dice 3 1") == []
    assert engine.dice == (3, 1)
    assert engine.handle(b"\xff") == ["error bad_command unknown command '\\xff'"]
    assert engine.handle(bytearray(b"get engine.ply")) == ["value engine.ply 1"]


# --------------------------------------------------------------------------- external player


def test_external_refuses_a_double_offered_in_the_crawford_game():
    """README ("Serving the engine"): "a cube and score no game can have (a turned cube in the Crawford
    game)" is an ``Error:`` answer. Nobody may double in the Crawford game, and the XGID and Match ID
    readers refuse a double offered in it; the board line (gnubg 1.07's recorded Crawford line, field 39
    set) was answered ``take`` before the fix."""
    fields = _recorded("crawford")[0].split(":")
    fields[33:37] = ["0"] * 4  # not rolled
    fields[40] = "1"  # field 39 (doubled); 'board' is fields[0]
    line = ":".join(fields)
    assert parse_fibs_board(line).crawford
    reply = ExternalPlayer(agent=None).respond(line)
    assert (
        reply
        == "Error: FIBS board: cube and score: a double offered in the Crawford game (nobody may double)"
    )


def test_external_still_answers_a_double_outside_the_crawford_game():
    """The same recorded line with nobody 1-away (an ordinary match game): a take/drop question, answered."""
    fields = _recorded("crawford")[0].split(":")
    fields[4], fields[5] = "1", "2"  # scores 1 and 2 of 5: not the Crawford game
    fields[33:37] = ["0"] * 4
    fields[40] = "1"
    line = ":".join(fields)
    assert not parse_fibs_board(line).crawford

    class Agent:
        def evaluate(self, boards):
            import numpy as np

            return np.tile(np.array([0.5, 0.1, 0.0, 0.1, 0.0], dtype=np.float32), (len(boards), 1))

    assert ExternalPlayer(Agent()).respond(line) in ("take", "drop")


@pytest.mark.parametrize("timeout", [1e10, 1e12, 1e300])
def test_external_refuses_an_idle_timeout_no_socket_can_take(timeout):
    """``--idle-timeout 1e12`` was accepted, then every connection died in ``sock.settimeout``
    (OverflowError: a socket timeout must fit in 64-bit nanoseconds, about 9.2e9 s) with a traceback on
    the server and an empty reply for the client. It is refused at start-up now, as 0, NaN and inf are."""
    with pytest.raises(ValueError, match=r"idle_timeout must be at most 1e\+09 seconds"):
        make_server(agent=None, port=0, idle_timeout=timeout)


def test_external_serves_a_connection_at_the_largest_idle_timeout():
    """MAX_IDLE_TIMEOUT itself is a timeout a socket takes: a connection gets its answer
    (README: an empty line is answered ``Error: expected a FIBS 'board:' line, got an empty line``)."""
    server = make_server(agent=None, port=0, idle_timeout=MAX_IDLE_TIMEOUT)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(server.server_address, timeout=30) as conn:
            conn.sendall(b"\n")
            reply = conn.makefile("rb").readline()
        assert reply == b"Error: expected a FIBS 'board:' line, got an empty line\n"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


# --------------------------------------------------------------------------- ONNX export


@pytest.fixture()
def export_onnx():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    from nard_ai.model.onnx_export import export_onnx

    return export_onnx


def test_export_refuses_to_overwrite_its_own_checkpoint(export_onnx, tmp_path):
    """README ("ONNX export"): "a path that cannot be written ... is one ``nard export: error: ...`` line".
    ``nard export --onnx c.pt --checkpoint c.pt`` replaced the checkpoint with the ONNX file before the
    fix (the network was lost); now the checkpoint is left byte for byte as it was."""
    from nard_ai.model.network import resolve_checkpoint

    checkpoint = tmp_path / "c.pt"
    shutil.copyfile(resolve_checkpoint("nard-td198.pt"), checkpoint)
    before = checkpoint.read_bytes()
    with pytest.raises(ValueError, match="it is the checkpoint being exported"):
        export_onnx(checkpoint, checkpoint)
    link = tmp_path / "link.onnx"
    link.symlink_to(checkpoint)
    with pytest.raises(ValueError, match="it is the checkpoint being exported"):
        export_onnx(link, checkpoint)
    assert checkpoint.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.pt", "link.onnx"]  # no temporary left


def test_export_refuses_a_path_ending_in_a_slash(export_onnx, tmp_path):
    """``--onnx out/`` names a folder (as for cp or open); pathlib drops the slash, and a file named ``out``
    was written before the fix."""
    target = f"{tmp_path}/out.onnx/"
    with pytest.raises(ValueError, match="a path ending in '/' names a folder"):
        export_onnx(target)
    assert not (tmp_path / "out.onnx").exists()


def test_export_takes_a_shipped_network_by_its_file_name_from_any_folder(export_onnx, tmp_path, monkeypatch):
    """README ("ONNX export"): "a shipped network also by its file name alone, ``nard-td198.pt``, from any
    folder". The Python function raised FileNotFoundError for it outside the checkpoints folder."""
    monkeypatch.chdir(tmp_path)
    result = export_onnx(tmp_path / "td198.onnx", "nard-td198.pt")
    assert result.metadata["checkpoint"] == "nard-td198.pt"
    assert result.metadata["encoder"] == "td198"
    assert (tmp_path / "td198.onnx").is_file()
