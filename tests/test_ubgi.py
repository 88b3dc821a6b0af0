"""``nard ubgi``: the Universal Backgammon Interface v0.2 (:mod:`nard_ai.interfaces.ubgi`).

Where the expected values come from:

* the protocol's words (``ubgiok``, ``proto 0.2``, ``bestmove``, the ``key``
  line format, the four error codes): the UBGI v0.2 specification
  (``docs/ubgi-v0.2-spec.md`` of ``bungogood/bgci``);
* the plays: ``nard hint``'s top play of the same position, dice and ply
  (``test_bestmove_is_the_top_play_of_nard_hint``), and opening theory for the
  scripted session (3-1 makes the 5-point, 6-5 runs a back checker 24/13);
* the cube: ``nard cube``'s ``action`` (``test_go_cube_is_the_action_of_nard_cube``);
* legality: :func:`nard_ai.legal_plays` of the rules core, against which every
  move of the duels is checked after applying it checker by checker here.
"""

from __future__ import annotations

import io
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from nard_ai.core.board import BAR, OPP_BAR, game_result, pos, starting_board, swap_sides
from nard_ai.core.movegen import legal_plays
from nard_ai.formats.notation import parse_play
from nard_ai.formats.position import parse_position
from nard_ai.formats.position_id import position_id
from nard_ai.interfaces.ubgi import MAX_LINE_BYTES, UbgiEngine, UbgiError
from nard_ai.model.network import default_checkpoint_path

REPO = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
START_52_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"  # the starting position, X rolled 5-2
#: X on the bar (and 5 more on the 13-point) against O's closed board: no 6-6 enters ("pass").
DANCE_ID = position_id(pos(me={25: 1, 6: 5, 8: 3, 13: 6}, opp={1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}))
#: X has a checker on the bar in an otherwise starting-like position: every play enters first.
BAR_ID = position_id(pos(me={25: 1, 6: 5, 8: 3, 13: 5, 24: 1}, opp={6: 5, 8: 3, 13: 5, 24: 2}))
#: Races: X well ahead (double, take at 0-ply), X far ahead (too good: play on), even (no double).
RACE_AHEAD = pos(me={6: 4, 5: 4, 4: 3, 3: 2, 2: 2}, opp={6: 4, 5: 4, 4: 3, 3: 2, 2: 1, 8: 1})
RACE_FAR_AHEAD = pos(me={6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, opp={13: 3, 12: 3, 11: 3, 10: 2, 9: 2, 8: 2})
RACE_EVEN = pos(me={6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, opp={6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2})
FINISHED_ID = position_id(pos(opp={6: 15}))  # the side on roll has borne off all 15: the game is over
#: the RACE_AHEAD board as an XGID, X on roll in money play, and variants of its cube fields
RACE_AHEAD_XGID = "XGID=--BBCDD----------a-ddcba--:0:0:1:00:0:0:0:0:10"
RACE_AHEAD_O_OWNS = "XGID=--BBCDD----------a-ddcba--:1:-1:1:00:0:0:0:0:10"  # cube 2 on O's side
RACE_AHEAD_DOUBLED = "XGID=--BBCDD----------a-ddcba--:0:0:1:D:0:0:0:0:10"  # X doubled; O must answer
DMP_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:2:2:0:3:10"  # 3-point match at 2-2: double match point

needs_network = pytest.mark.skipif(
    not default_checkpoint_path().is_file(), reason="the shipped checkpoint is missing"
)
pytestmark = needs_network


@pytest.fixture(scope="module")
def agents():
    """The shipped network at nard plies 0 and 1, loaded once (the engine's factory returns them)."""
    from nard_ai.agents import load_agent

    return {(0, "normal"): load_agent(None, ply=0), (1, "normal"): load_agent(None, ply=1)}


@pytest.fixture
def engine(agents):
    return UbgiEngine(lambda ply, filters: agents[(ply, filters)])


def session(engine: UbgiEngine, script: str) -> list[str]:
    """Run ``script`` (lines) through :meth:`UbgiEngine.run` on StringIO; the reply lines."""
    out = io.StringIO()
    assert engine.run(io.StringIO(script), out) == 0
    return out.getvalue().splitlines()


def without_info(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("info ")]


# --------------------------------------------------------------------------- a scripted session

SCRIPT = f"""\
ubgi
isready
keys
get engine.ply
newgame
position gnubgid {START_ID}
dice 3 1
go
dice 5 6
go chequer
go cube
go turn
position gnubgid {DANCE_ID}
dice 6 6
go
position xgid {START_52_XGID}
go role chequer
set engine.ply 2
get engine.ply
setoption name engine.filter value tiny
get engine.filter
stop

frobnicate
dice 3
set engine.ply
position
go chequer cube
position gnubgid zzz
dice 0 7
set engine.ply 4
set game.variant nackgammon
position gnubgid {START_52_XGID}
newgame
go
position gnubgid {START_ID}
go
position gnubgid {FINISHED_ID}
go cube
position fibs board:a:b
go rollout
get engine.threads
set engine.threads 4
quit
isready
"""

# every reply of SCRIPT, in order ("info" lines left out: their time_ms varies)
EXPECTED = [
    # ubgi: id lines, the protocol version, the settings, ubgiok (spec section 4)
    "id name nard_ai",
    "id author the nard_ai developers",
    f"id version {UbgiEngine().version}",  # the installed distribution's version (pyproject: 0.2.0)
    "proto 0.2",
    "key engine.ply int 1..3 1 root-inclusive checker-play depth; UBGI 1 = nard/gnubg 0-ply",
    "key engine.filter enum tiny|narrow|normal|large|huge normal ! move filter of deeper searches (gnubg's presets)",
    "key game.variant enum backgammon backgammon standard backgammon",
    "ubgiok",
    "readyok",
    "key engine.ply int 1..3 1 root-inclusive checker-play depth; UBGI 1 = nard/gnubg 0-ply",
    "key engine.filter enum tiny|narrow|normal|large|huge normal ! move filter of deeper searches (gnubg's presets)",
    "key game.variant enum backgammon backgammon standard backgammon",
    "value engine.ply 1",
    "bestmove 8/5 6/5",  # opening 3-1: make the 5-point
    "bestmove 24/18 18/13",  # opening 6-5 (given low die first): 24/13, written one die at a time
    "bestcube nodouble",  # the opening position: nobody doubles
    "bestturn cube=nodouble move=24/18 18/13",
    "bestmove pass",  # on the bar against a closed board
    "bestmove 24/22 13/8",  # the XGID's own 5-2 (nard hint's top play)
    "value engine.ply 2",
    "value engine.filter tiny",
    # errors, one line each, and the engine reads on (spec section 5)
    "error bad_command unknown command 'frobnicate'",
    "error bad_command expected: dice <d1> <d2> (two dice, e.g. dice 3 1)",
    "error bad_command expected: set <key> <value>",
    "error bad_command expected: position gnubgid <ID> | position xgid <XGID>",
    "error bad_command expected: go [chequer|cube|turn], got 'chequer cube'",
    "error bad_value gnubgid 'zzz': a Position ID has 14 characters, got 3: 'zzz'",
    "error bad_value each die must be 1..6, got '0'",
    "error bad_value engine.ply must be 1..3, got '4'",
    "error bad_value game.variant must be backgammon, got 'nackgammon'",
    "error bad_value 'XGID=-b----E-C---eE---c-e----B-:0:0:1:52...' is an XGID: send it as position xgid",
    "error bad_state missing position (send position gnubgid <ID>)",
    "error bad_state missing dice (send dice <d1> <d2>)",  # a bare Position ID has no dice
    "error bad_state the game in this position is over",
    "error unsupported position format 'fibs' (this engine reads gnubgid and xgid)",
    "error unsupported go 'rollout' (this engine answers go chequer, go cube, go turn)",
    "error unsupported key 'engine.threads' (keys: engine.ply, engine.filter, game.variant)",
    "error unsupported key 'engine.threads' (keys: engine.ply, engine.filter, game.variant)",
    # quit: nothing more is read (the isready after it gets no readyok)
]


def test_a_scripted_session_answers_every_command_and_every_error_code(engine):
    lines = session(engine, SCRIPT)
    assert without_info(lines) == EXPECTED
    codes = {line.split()[1] for line in lines if line.startswith("error ")}
    assert codes == {"bad_command", "bad_value", "bad_state", "unsupported"}  # the spec's four
    # an info line precedes each bestmove/bestturn: depth in UBGI plies, then the play as pv
    infos = [line for line in lines if line.startswith("info ")]
    assert len(infos) == 5  # four bestmove lines and one bestturn
    assert infos[0].startswith("info depth 1 score ") and infos[0].endswith(" pv 8/5 6/5")


def _nard(args: list[str], stdin: str) -> subprocess.CompletedProcess:
    """``nard ARGS`` as a real process (``python -m nard_ai.interfaces.cli``), ``stdin`` piped in."""
    return subprocess.run(
        [sys.executable, "-m", "nard_ai.interfaces.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )


def test_the_scripted_session_over_a_real_nard_ubgi_process():
    r = _nard(["ubgi"], SCRIPT)
    assert r.returncode == 0, r.stderr
    assert without_info(r.stdout.splitlines()) == EXPECTED
    assert "Traceback" not in r.stderr


def test_the_help_examples_run_as_written(capsys, monkeypatch):
    """``nard ubgi --help``'s examples are ``printf SCRIPT | nard ubgi OPTIONS``: each runs through ``main``."""
    from nard_ai.interfaces.commands import ubgi as command

    outputs = []
    for example in command.EXAMPLES:
        printf, args = (part.strip() for part in example.split("| nard ubgi"))
        script = shlex.split(printf)[1].encode().decode("unicode_escape")  # printf's \n escapes
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(script.encode())))
        status, out, err = run_cli(["ubgi", *shlex.split(args)], capsys)
        assert status == 0, err
        outputs.append(out.splitlines())
    assert without_info(outputs[0])[-3:] == ["ubgiok", "readyok", "bestmove 8/5 6/5"]
    # engine.ply 2 = nard 1-ply; the XGID's own 5-2 is played (nard hint --ply 1's top play, tested above)
    assert outputs[1][-2].startswith("info depth 2 ")
    assert outputs[1][-1] == "bestturn cube=nodouble move=24/22 13/8"


def test_the_end_of_input_is_quit(engine):
    assert session(engine, "isready") == ["readyok"]  # no newline at the end, no quit: served, then exit
    assert engine.finished


# --------------------------------------------------------------------------- the play and the cube


def _hint_top(capsys, position: str, dice: str, ply: int) -> str:
    status, out, err = run_cli(
        ["hint", position, "--dice", dice, "--ply", str(ply), "--json", "--top", "1"], capsys
    )
    assert status == 0, err
    return json.loads(out)["plays"][0]["play"]


@pytest.mark.parametrize(
    ("position", "dice", "ply"),
    [
        (START_ID, "31", 0),
        (START_ID, "66", 0),
        (BAR_ID, "43", 0),
        (BAR_ID, "64", 1),
        (START_52_XGID, "52", 1),
        (DMP_XGID, "52", 0),  # match play: ranked by MWC at the score, as nard hint ranks it
        (position_id(RACE_AHEAD), "21", 0),
    ],
)
def test_bestmove_is_the_top_play_of_nard_hint(engine, capsys, position, dice, ply):
    kind = "xgid" if position.startswith("XGID=") else "gnubgid"
    d1, d2 = dice
    lines = engine.handle(f"set engine.ply {ply + 1}")  # UBGI ply = nard ply + 1
    lines += engine.handle(f"position {kind} {position}")
    lines += engine.handle(f"dice {d1} {d2}")
    lines += engine.handle("go")
    assert lines[0].startswith(f"info depth {ply + 1} ")
    assert lines[1].startswith("bestmove ")
    board, _ = parse_position(position)
    roll = (max(int(d1), int(d2)), min(int(d1), int(d2)))
    ubgi_after = parse_play(board, lines[1].removeprefix("bestmove "), roll)
    hint_after = parse_play(board, _hint_top(capsys, position, dice, ply), roll)
    assert np.array_equal(ubgi_after, hint_after)


def _cube_json(capsys, position: str) -> dict:
    status, out, err = run_cli(["cube", position, "--json"], capsys)
    assert status == 0, err
    return json.loads(out)


@pytest.mark.parametrize(
    "position",
    [
        START_ID,  # no double
        position_id(RACE_AHEAD),  # double, take
        position_id(RACE_FAR_AHEAD),  # too good: no double (play on for the gammon)
        position_id(RACE_FAR_AHEAD) + ":cAkAAAAAAAAA",  # the same with the Jacoby rule (gnubg's default)
        position_id(RACE_EVEN),
        RACE_AHEAD_XGID,
        RACE_AHEAD_O_OWNS,  # the cube is not X's to turn
        DMP_XGID,  # double match point: the cube is dead
    ],
)
def test_go_cube_is_the_action_of_nard_cube(engine, capsys, position):
    kind = "xgid" if position.startswith("XGID=") else "gnubgid"
    assert engine.handle(f"position {kind} {position}") == []
    d = _cube_json(capsys, position)
    expected = (
        "double" if d["cube_available"] and d["action"] in ("double_take", "double_pass") else "nodouble"
    )
    assert engine.handle("go cube") == [f"bestcube {expected}"]
    assert engine.handle("dice 2 1") == []
    turn = without_info(engine.handle("go turn"))
    assert turn[0].startswith(f"bestturn cube={expected} move=")


def test_the_cube_cases_cover_double_and_nodouble(engine):
    """The positions above exercise both answers (nard cube at 0-ply: RACE_AHEAD is double/take)."""
    engine.handle(f"position gnubgid {position_id(RACE_AHEAD)}")
    assert engine.handle("go cube") == ["bestcube double"]
    engine.handle(f"position xgid {RACE_AHEAD_O_OWNS}")
    assert engine.handle("go cube") == ["bestcube nodouble"]


def test_a_pending_double_is_answered_take_or_pass_and_blocks_the_play(engine, capsys):
    engine.handle(f"position xgid {RACE_AHEAD_DOUBLED}")
    d = _cube_json(capsys, RACE_AHEAD_XGID)  # the doubler's view, before the double: the same decision
    # O takes when double/take is no better for X than double/pass (nard cube's equities for X)
    expected = "take" if d["equities"]["double_take"] <= d["equities"]["double_pass"] else "pass"
    assert expected == "take"  # 0-ply: double, take
    assert engine.handle("go cube") == [f"bestcube {expected}"]
    assert engine.handle("dice 3 1") == []
    assert engine.handle("go") == [
        "error bad_state a double awaits its answer: the doubled side takes or passes before the doubler rolls"
    ]


# --------------------------------------------------------------------------- limits and bad bytes


def test_an_overlong_line_is_answered_and_the_session_goes_on(engine):
    script = "x" * (MAX_LINE_BYTES + 10) + "\nisready\n" + "y" * MAX_LINE_BYTES + "\nquit\n"
    assert session(engine, script) == [
        f"error bad_command line longer than {MAX_LINE_BYTES} bytes",
        "readyok",
        "error bad_command unknown command '" + "y" * 40 + "...'",  # exactly the limit: read, unknown
    ]


def test_bytes_that_are_not_utf8_are_quoted_escaped(engine):
    out = io.StringIO()
    engine.run(io.BytesIO(b"caf\xe9\nposition gnubgid 4HPwATDgc/ABM\xff\nisready\n"), out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "error bad_command unknown command 'caf\\xe9'"
    assert lines[1].startswith("error bad_value gnubgid '4HPwATDgc/ABM\\xff': ")
    assert lines[2:] == ["readyok"]
    assert out.getvalue().isascii()


def test_an_engine_failure_is_an_error_line_not_a_crash():
    class Broken:
        def rank_plays(self, board, dice):
            raise RuntimeError("boom")

    engine = UbgiEngine(lambda ply, filters: Broken())
    engine.handle(f"position gnubgid {START_ID}")
    engine.handle("dice 3 1")
    assert engine.handle("go") == ["error bad_state internal error (RuntimeError); see the engine's stderr"]
    assert engine.handle("isready") == ["readyok"]


def test_a_network_that_cannot_load_is_bad_state():
    def missing(ply, filters):
        raise FileNotFoundError("no checkpoint nowhere.pt")

    assert UbgiEngine(missing).handle("isready") == [
        "error bad_state the engine cannot load its network: no checkpoint nowhere.pt"
    ]


def test_constructor_and_error_arguments_are_checked():
    with pytest.raises(ValueError, match="engine.ply must be 1..3"):
        UbgiEngine(ply=0)
    with pytest.raises(ValueError, match="engine.filter must be one of"):
        UbgiEngine(filters="wide")
    with pytest.raises(ValueError, match="UBGI error code must be one of"):
        UbgiError("oops", "x")


def test_the_command_line_rejects_bad_options(capsys):
    status, _, err = run_cli(["ubgi", "--checkpoint", "nowhere.pt"], capsys)
    assert (
        status == 2 and "nard ubgi: error: no checkpoint file 'nowhere.pt' (the path does not exist)" in err
    )
    status, _, err = run_cli(["ubgi", "--checkpoint", str(REPO / "checkpoints")], capsys)
    assert status == 2 and f"no checkpoint file '{REPO / 'checkpoints'}' (the path is a directory)" in err
    status, _, err = run_cli(["ubgi", "--ply", "3"], capsys)
    assert status == 2 and "nard ubgi: error: argument --ply" in err


# --------------------------------------------------------------------------- duels through the protocol


def apply_ubgi_play(board: np.ndarray, text: str, dice: tuple[int, int]) -> np.ndarray:
    """The afterstate of a UBGI play, applied one ``from/to`` token at a time (mover's view).

    Each token moves one checker by one die: ``bar`` is index 25, ``off`` 0; a
    lone opponent checker on the landing point goes to the opponent's bar.
    Raises AssertionError on a token no die or checker allows.
    """
    after = board.astype(np.int64).copy()
    if text == "pass":
        return after.astype(np.int8)
    dice_left = [dice[0]] * 4 if dice[0] == dice[1] else list(dice)
    for token in text.split():
        a, b = token.split("/")
        src = BAR if a == "bar" else int(a)
        dst = 0 if b == "off" else int(b)
        assert 1 <= src <= 25 and 0 <= dst < src, token
        distance = src - dst
        die = distance if distance in dice_left else (max(dice_left) if dst == 0 else None)
        assert die is not None and die >= distance, f"{token}: no die left for it ({dice_left})"
        dice_left.remove(die)
        assert after[src] > 0, f"{token}: no checker of the mover on {src}"
        after[src] -= 1
        if dst:
            assert after[dst] >= -1, f"{token}: point {dst} is blocked"
            if after[dst] == -1:  # a hit
                after[dst] = 0
                after[OPP_BAR] -= 1
            after[dst] += 1
    return after.astype(np.int8)


class _Process:
    """A ``nard ubgi`` subprocess: send lines, read replies (with a timeout, from a reader thread)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nard_ai.interfaces.cli", "ubgi"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            cwd=REPO,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def ask(self, commands: list[str], until: str) -> list[str]:
        for command in commands:
            self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        replies = []
        while True:
            line = self.lines.get(timeout=120)
            replies.append(line)
            if line.startswith(until) or line.startswith("error "):
                return replies

    def close(self) -> int:
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        return self.proc.wait(timeout=60)


class _InProcess:
    def __init__(self, engine: UbgiEngine) -> None:
        self.engine = engine

    def ask(self, commands: list[str], until: str) -> list[str]:
        return [line for command in commands for line in self.engine.handle(command)]


def duel(players, games: int, seed: int, max_turns: int = 400) -> list[list[str]]:
    """Play cubeless money games between two UBGI engines; every move is checked legal.

    Dice come from ``np.random.default_rng(seed)``; the opening roll re-rolls
    doubles and the first player alternates by game. Returns each game's moves.
    """
    rng = np.random.default_rng(seed)
    record = []
    for player in players:
        assert player.ask(["ubgi"], "ubgiok")[-1] == "ubgiok"
        assert player.ask(["isready"], "readyok") == ["readyok"]
    for game in range(games):
        for player in players:
            assert player.ask(["newgame", "isready"], "readyok") == ["readyok"]
        board, side, moves = starting_board(), game % 2, []
        first = True
        for _ in range(max_turns):
            d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
            while first and d1 == d2:
                d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
            first = False
            replies = players[side].ask(
                [f"position gnubgid {position_id(board)}", f"dice {d1} {d2}", "go"], "bestmove"
            )
            assert replies[-1].startswith("bestmove "), replies
            play = replies[-1].removeprefix("bestmove ")
            dice = (max(d1, d2), min(d1, d2))
            after = apply_ubgi_play(board, play, dice)
            legal = legal_plays(board, dice)
            assert any(np.array_equal(after, row) for row in legal), (
                f"illegal {play} for {dice} in {position_id(board)}"
            )
            assert (play == "pass") == (len(legal) == 1 and np.array_equal(legal[0], board))
            moves.append(f"{d1}{d2}:{play}")
            if game_result(after) != 0:
                break
            board, side = swap_sides(after), 1 - side
        else:
            pytest.fail(f"game {game} did not finish in {max_turns} turns")
        record.append(moves)
    return record


def test_a_duel_between_two_nard_ubgi_processes_finishes_with_legal_moves(agents):
    players = [_Process(), _Process()]
    try:
        record = duel(players, games=3, seed=17)
    finally:
        statuses = [p.close() for p in players]
    assert statuses == [0, 0]
    assert len(record) == 3 and all(len(moves) >= 10 for moves in record)
    # the processes play as the in-process engine does: the same seed gives the same games
    local = [_InProcess(UbgiEngine(lambda ply, f: agents[(ply, f)])) for _ in range(2)]
    assert duel(local, games=3, seed=17) == record


def test_a_duel_is_fixed_by_its_seed(agents):
    def players():
        return [_InProcess(UbgiEngine(lambda ply, f: agents[(ply, f)])) for _ in range(2)]

    first = duel(players(), games=2, seed=5)
    assert duel(players(), games=2, seed=5) == first
    assert duel(players(), games=2, seed=6) != first


def test_a_pending_resignation_blocks_the_play_and_the_cube(engine):
    from nard_ai.formats.match_id import MatchState, Resignation, gnubg_id

    # X (player 0, on roll) offers to resign a single game; player 1 must answer: no decision for X now
    resigning = gnubg_id(starting_board(), MatchState(resignation=Resignation(1), turn=1))
    assert engine.handle(f"position gnubgid {resigning}") == []
    assert engine.handle("dice 3 1") == []
    assert engine.handle("go") == [
        "error bad_state a resignation awaits its answer: it is accepted or rejected before play goes on"
    ]
    # the shared check's words (nard_ai.formats.match_id.not_playing), as nard cube and /cube answer
    assert engine.handle("go cube") == [
        "error bad_state a resignation awaits its answer: it is accepted or rejected before play goes on"
    ]


def test_get_reads_back_every_key_that_keys_lists(engine):
    keys = [line.split()[1] for line in engine.handle("keys")]
    assert keys == ["engine.ply", "engine.filter", "game.variant"]
    # the defaults of the key lines (spec section 4: key NAME TYPE [RANGE] DEFAULT)
    assert [engine.handle(f"get {k}")[0] for k in keys] == [
        "value engine.ply 1",
        "value engine.filter normal",
        "value game.variant backgammon",
    ]
    assert engine.handle("set game.variant backgammon") == []
    assert engine.handle("get engine.ply extra") == ["error bad_command expected: get <key>"]


def test_info_depth_is_the_depth_the_best_play_was_valued_at(engine):
    # The opening 3-1 at UBGI ply 2 (nard 1-ply): gnubg's normal filter keeps only 8/5 6/5 (the next
    # play is 0.177 behind at 0-ply, beyond its 0.16), so the play is decided and valued at nard 0-ply:
    # the info line says depth 1, not 2 (found by a review of issue 15); a real choice reports depth 2.
    lines = engine.handle("set engine.ply 2") + engine.handle("position gnubgid 4HPwATDgc/ABMA")
    lines += engine.handle("dice 3 1") + engine.handle("go")
    assert lines[0].startswith("info depth 1 ") and lines[1] == "bestmove 8/5 6/5"
    lines = engine.handle(f"position xgid {START_52_XGID}") + engine.handle("dice 5 2") + engine.handle("go")
    assert lines[0].startswith("info depth 2 ")


@pytest.mark.parametrize(
    "bad",
    [
        "position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10 extra",  # bad_command
        "position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:99:0:0:0:0:10",  # bad_value: dice 9-9
        "position gnubgid notanid",  # bad_value
        "position fen something",  # unsupported
    ],
)
def test_a_refused_position_leaves_none_so_go_never_answers_for_the_one_before(engine, bad):
    """Review of issue 17: after a refused ``position`` a ``go`` still answered for the previous
    position and dice, so a controller that missed the error line got a move for another position."""
    lines = without_info(session(engine, f"position gnubgid {START_ID}\ndice 3 1\n{bad}\ngo\n"))
    assert lines[0].startswith("error ") and len(lines) == 2
    assert lines[1] == "error bad_state missing position (send position gnubgid <ID>)"


def test_a_refused_roll_leaves_no_dice_so_go_never_plays_the_roll_before(engine):
    """Second review of issue 17: after ``dice 7 1`` was refused, ``go`` played the previous 3-1."""
    lines = without_info(session(engine, f"position gnubgid {START_ID}\ndice 3 1\ndice 7 1\ngo\n"))
    assert lines[0] == "error bad_value each die must be 1..6, got '7'"
    assert lines[1].startswith("error bad_state missing dice")


def test_an_id_whose_game_has_ended_is_refused_in_the_shared_words(engine):
    # gnubg's Match ID cAwAAAAAAAAE holds game state DROPPED (a passed double ended the game): no
    # play and no cube decision to make; the words are nard_ai.formats.match_id.not_playing's,
    # the same nard hint and the HTTP endpoints answer
    assert engine.handle("position gnubgid 4HPwATDgc/ABMA:cAwAAAAAAAAE") == []
    assert engine.handle("dice 3 1") == []
    refusal = (
        "error bad_state the ID's game state is dropped, not playing (the game ended by a passed double)"
    )
    assert engine.handle("go") == [refusal]
    assert engine.handle("go cube") == [refusal]
