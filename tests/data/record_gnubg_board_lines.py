"""Record the board lines GNU Backgammon writes to an external player, into gnubg_board_lines.txt.

For each state below, gnubg (``/usr/games/gnubg -t``, a fresh ``HOME``) is
told: both players human, ``set seed``, the state's commands (a new match or
session, a score, the Crawford flags), ``show score`` (its own words for the
state go into the file's header), then ``set player 0 gnubg`` at 0-ply,
``set player 1 external localhost:PORT`` and ``play``; ``set automatic game
off`` stops it after one game. This script serves PORT with the engine
(:class:`nard_ai.interfaces.external.ExternalPlayer`) and writes down each
line gnubg sends, as sent (less the newline and gnubg's trailing NUL), up to
``--max-lines`` a state.

Run from the repository root: ``PYTHONPATH=$PWD python tests/data/record_gnubg_board_lines.py``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

from nard_ai.agents import load_agent
from nard_ai.interfaces.external import ExternalPlayer

GNUBG = "/usr/games/gnubg"
OUT = Path(__file__).with_name("gnubg_board_lines.txt")

#: state -> gnubg commands that set it up (``set score A B``: gnubg, player 0, has A; root, player 1, B).
STATES: dict[str, list[str]] = {
    "crawford": ["new match 5", "set score 4 2", "set crawford on"],
    "post_crawford": ["new match 5", "set score 4 2", "set postcrawford on"],
    "ordinary": ["new match 5", "set score 1 2"],
    "one_point": ["new match 1"],
    "money": ["new session"],
}


def _serve(server: socket.socket, player: ExternalPlayer, lines: list[str], limit: int) -> None:
    conn, _ = server.accept()
    buffer = b""
    with conn:
        while chunk := conn.recv(65536):
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = raw.replace(b"\0", b"").decode("ascii").strip()
                if not line:
                    continue
                if len(lines) < limit:
                    lines.append(line)
                conn.sendall(player.respond(line).encode("ascii") + b"\n")


def record(state: str, commands: list[str], player: ExternalPlayer, seed: int, limit: int):
    """(gnubg's ``show score`` line for the state, the board lines it sent)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    lines: list[str] = []
    thread = threading.Thread(target=_serve, args=(server, player, lines, limit), daemon=True)
    thread.start()
    script = [
        "set display off",
        "set automatic game off",
        "set player 0 human",
        "set player 1 human",
        f"set seed {seed}",
        *commands,
        "show score",
        "set player 0 gnubg",
        "set player 0 chequerplay evaluation plies 0",
        "set player 0 cubedecision evaluation plies 0",
        f"set player 1 external localhost:{port}",
        "play",
        "quit",
        "y",
        "",
    ]
    with tempfile.TemporaryDirectory() as home:
        result = subprocess.run(
            [GNUBG, "-t", "-q", "-r"],
            input="\n".join(script),
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "HOME": home},
        )
    thread.join(timeout=30)
    server.close()
    said = re.findall(r"The score \(after 0 games\) is: [^\n]*?\)", result.stdout)
    if not said or not lines:
        raise SystemExit(f"{state}: gnubg said\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}")
    return said[-1], lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-lines", type=int, default=30)
    args = parser.parse_args()
    version = subprocess.run([GNUBG, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    player = ExternalPlayer(load_agent())
    header = [
        f"# Board lines that {version} wrote to its external player 1 ('root', colour 1),",
        f"# recorded {datetime.date.today().isoformat()} by tests/data/record_gnubg_board_lines.py "
        f"(seed {args.seed}, the engine answering).",
        "# One game a state, at most the first lines of it; each line is: state<TAB>board line.",
        "# The states, the gnubg commands that set them up, and gnubg's own words for them:",
    ]
    body = []
    for state, commands in STATES.items():
        said, lines = record(state, commands, player, args.seed, args.max_lines)
        header.append(f"#   {state}: {'; '.join(commands)} -> {said}")
        body += [f"{state}\t{line}" for line in lines]
    OUT.write_text("\n".join(header + body) + "\n")
    print(f"wrote {len(body)} lines to {OUT}")


if __name__ == "__main__":
    main()
