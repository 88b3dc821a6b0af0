"""Shared helpers for the rules-core tests: random positions, gnubg conversion, hypothesis strategies.

Every board here uses the layout of :mod:`nard_ai.core.board` (``(26,)`` int8,
the mover's view). Randomness always comes from an explicit
``np.random.Generator`` (STYLE.md rule 5); nothing is seeded at import.

Position sources:

* :func:`random_play_positions`: positions met in random games from the
  starting position. Each turn rolls two dice and moves random checkers one
  die at a time with :func:`reference.single_die_moves` (bar first, bear-off
  rules, hits), so every position is one real play could reach; the forced
  play rules are not needed to *reach* positions, only to test them.
* :func:`random_bearoff_positions`: bear-off-heavy positions: the mover has
  every checker (or all but one) in its home board, some already off; the
  opponent sometimes keeps checkers on the mover's home board or the bar
  (hits during bear-off, blocked points).
* :func:`random_scattered_positions`: any valid board: each side's checkers
  dropped on random points, the bar or off (deep stress: several checkers on
  the bar, primes, odd bear-offs).
* :func:`random_home_hit_positions`: opponent blots in the mover's home
  board within reach (the Iranian rule of RULES.md 7 matters).
* :func:`mixed_positions`: random play, bear-off and scattered, de-duplicated.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

# The package is not installed; make ``import nard_ai`` work under plain ``pytest``.
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

import reference  # noqa: E402

from nard_ai.core.board import BAR, NUM_CHECKERS, starting_board, swap_sides  # noqa: E402
from nard_ai.core.rules import Rules  # noqa: E402

STANDARD = Rules()

#: The 21 distinct rolls, larger die first.
ALL_ROLLS: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(1, 7) for b in range(1, a + 1))


# --------------------------------------------------------------------------
# The generators under test
# --------------------------------------------------------------------------


def import_movegen():
    """``nard_ai.core.movegen``, or skip the test with a clear message while it does not exist."""
    return pytest.importorskip("nard_ai.core.movegen", reason="nard_ai/movegen.py is not written yet")


@pytest.fixture(params=["reference", "movegen"])
def generate(request):
    """``generate(board, dice, rules=Rules()) -> (M, 26) int8`` for each implementation.

    ``reference`` is :func:`reference.legal_plays`; ``movegen`` is
    ``nard_ai.core.movegen.legal_plays`` (skipped while the module is missing).
    """
    if request.param == "reference":
        return reference.legal_plays
    movegen = import_movegen()

    def movegen_legal_plays(board, dice, rules: Rules = STANDARD):
        return movegen.legal_plays(np.asarray(board, dtype=np.int8), np.asarray(dice, dtype=np.int8), rules)

    return movegen_legal_plays


def play_set(afterstates) -> set[tuple[int, ...]]:
    """``(M, 26)`` afterstates -> a set of board tuples."""
    return {tuple(row) for row in np.asarray(afterstates, dtype=np.int64).tolist()}


def theirs(points: dict[int, int]) -> dict[int, int]:
    """Opponent checkers given on the **mover's** point numbers, renumbered for ``pos(opp=...)``.

    The mover's point ``p`` is the opponent's point ``25 - p`` (RULES.md 1);
    key 25 (the bar) stays 25.
    """
    return {(25 - p if p != 25 else 25): n for p, n in points.items()}


# --------------------------------------------------------------------------
# Random positions
# --------------------------------------------------------------------------


def _mover_left(board) -> int:
    return int(np.clip(board[1:26], 0, None).sum())


def _opp_left(board) -> int:
    return int(np.clip(-board[0:25], 0, None).sum())


def random_turn(board: np.ndarray, dice: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Move random checkers one die at a time (not necessarily a maximal play).

    Each single-die move is legal on its own (RULES.md 3.2, 4, 5); a die that
    cannot move is skipped. Returns the afterstate (mover's view).
    """
    b = reference.as_tuple(board)
    d1, d2 = dice
    order = [d1] * 4 if d1 == d2 else ([d1, d2] if rng.random() < 0.5 else [d2, d1])
    for die in order:
        if reference.mover_checkers_left(b) == 0:
            break
        steps = reference.single_die_moves(b, die)
        if steps:
            b = steps[rng.integers(len(steps))].after
    return np.array(b, dtype=np.int8)


def random_play_positions(rng: np.random.Generator, n: int, max_turns: int = 400) -> np.ndarray:
    """``(n, 26)`` int8 positions (mover's view) met in random games from the start.

    Each game is sampled at random turns; a finished game restarts. Only
    positions where both sides still have checkers in play are returned.
    """
    out = []
    board = starting_board()
    turns = 0
    while len(out) < n:
        dice = tuple(int(x) for x in rng.integers(1, 7, size=2))
        board = swap_sides(random_turn(board, dice, rng))
        turns += 1
        if _mover_left(board) == 0 or _opp_left(board) == 0 or turns > max_turns:
            board, turns = starting_board(), 0
            continue
        if rng.random() < 0.5:
            out.append(board.copy())
    return np.array(out, dtype=np.int8)


def random_bearoff_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 26)`` int8 bear-off-heavy positions (mover's view)."""
    out = []
    while len(out) < n:
        b = np.zeros(26, dtype=np.int64)
        in_play = int(rng.integers(1, 16))
        # Mostly all home; sometimes one straggler outside or on the bar.
        straggler = rng.random() < 0.2 and in_play >= 1
        points = rng.integers(1, 7, size=in_play)
        if rng.random() < 0.5:  # bunch checkers on few, low points (overshoot cases)
            points = rng.integers(1, int(rng.integers(1, 7)) + 1, size=in_play)
        for p in points:
            b[p] += 1
        if straggler:
            lowest = int(np.flatnonzero(b[1:7] > 0)[0] + 1)
            b[lowest] -= 1
            b[int(rng.choice([7, 8, 9, 12, 20, 25]))] += 1
        # The opponent: mostly in its own home board (mover's 19..24), some
        # checkers off; sometimes checkers on the mover's home board or its bar.
        opp_in_play = int(rng.integers(1, 16))
        free = [i for i in range(1, 25) if b[i] == 0]
        opp_points = [i for i in free if i >= 19] or free
        for _ in range(opp_in_play):
            r = rng.random()
            if r < 0.15:
                b[0] -= 1
            elif r < 0.45:
                home_free = [i for i in free if i <= 6] or free
                b[int(rng.choice(home_free))] -= 1
            else:
                b[int(rng.choice(opp_points))] -= 1
        if _mover_left(b) > 0:
            out.append(b.astype(np.int8))
    return np.array(out, dtype=np.int8)


def random_scattered_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 26)`` int8 arbitrary valid boards: checkers dropped on random points, bar or off."""
    out = []
    while len(out) < n:
        b = np.zeros(26, dtype=np.int64)
        p_off, p_bar = rng.random() * 0.5, rng.random() * 0.15
        for side in (1, -1):
            bar = 25 if side == 1 else 0
            for _ in range(15):
                r = rng.random()
                if r < p_off:
                    continue
                if r < p_off + p_bar:
                    b[bar] += side
                    continue
                free = [i for i in range(1, 25) if b[i] * side >= 0]
                b[int(rng.choice(free))] += side
        if _mover_left(b) > 0 and _opp_left(b) > 0:
            out.append(b.astype(np.int8))
    return np.array(out, dtype=np.int8)


def random_home_hit_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 26)`` int8 positions where the mover can hit blots in its home board (RULES.md 7).

    The mover has checkers on points 1..12 (some off); the opponent has one to
    four blots and a few made points on the mover's points 1..9, the rest far
    away or on its bar. These are the positions where the Iranian
    no-hit-and-continue rule changes the legal plays.
    """
    out = []
    while len(out) < n:
        b = np.zeros(26, dtype=np.int64)
        for p in rng.integers(1, 13, size=int(rng.integers(2, 15))):
            b[p] += 1
        if rng.random() < 0.15:
            b[int(rng.choice([13, 18, 25]))] += 1
        free_home = [p for p in range(1, 10) if b[p] == 0]
        rng.shuffle(free_home)
        opp_left = 15
        for p in free_home[: int(rng.integers(1, 5))]:
            b[p] = -1
            opp_left -= 1
        for p in free_home[4:6]:
            if rng.random() < 0.5:
                b[p] = -2
                opp_left -= 2
        far = [p for p in range(13, 25) if b[p] == 0]
        for _ in range(opp_left):
            if rng.random() < 0.1:
                b[0] -= 1
            elif rng.random() < 0.2:
                continue  # borne off
            else:
                b[int(rng.choice(far))] -= 1
        if _mover_left(b) > 0 and _opp_left(b) > 0:
            out.append(b.astype(np.int8))
    return np.array(out, dtype=np.int8)


def mixed_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 26)`` distinct positions: about 60% random play, 25% bear-off, 15% scattered."""
    n_play, n_bear = int(n * 0.6), int(n * 0.25)
    seen = set()
    out = []
    sources = [
        (random_play_positions, n_play),
        (random_bearoff_positions, n_bear),
        (random_scattered_positions, n - n_play - n_bear),
    ]
    for make, count in sources:
        target = len(out) + count
        while len(out) < target:
            for row in make(rng, target - len(out) + 8):
                key = row.tobytes()
                if key not in seen and len(out) < target:
                    seen.add(key)
                    out.append(row)
    return np.array(out, dtype=np.int8)


@pytest.fixture(scope="session")
def mixed_boards() -> np.ndarray:
    """2,000 distinct valid boards (``(N, 26)`` int8, side on roll's view): opening-like play positions and
    scattered ones, races among them (over 100 race boards and over 100 others, checked)."""
    from nard_ai.core.classes import race_flags

    rng = np.random.default_rng(41)
    out = np.unique(
        np.concatenate([random_play_positions(rng, 1000), random_scattered_positions(rng, 1000)]), axis=0
    )
    race = np.asarray(race_flags(out), dtype=bool)
    assert 100 < race.sum() < len(out) - 100
    return out


# --------------------------------------------------------------------------
# train.py in a subprocess, as a user runs it
# --------------------------------------------------------------------------


def train_py_args(argv: list[str]) -> dict:
    """``subprocess`` arguments (``args``, ``env``) running the repository's train.py with ``argv``."""
    return {
        "args": [sys.executable, os.path.join(_REPO_ROOT, "train.py"), *argv],
        "env": {**os.environ, "PYTHONPATH": _REPO_ROOT},
    }


def run_train_py(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """Run train.py with ``argv`` in ``cwd`` to the end (10 minutes at most), its output captured as text."""
    return subprocess.run(**train_py_args(argv), cwd=cwd, capture_output=True, text=True, timeout=600)


#: How many independent subprocesses :func:`run_at_once` runs at a time. Most of a short script run is
#: its start-up (importing torch and nard_ai: about 3 s of one core), so on the 2-core CI machine two
#: or three at once finish in about half the time of one after the other.
AT_ONCE = max(3, min(4, os.cpu_count() or 1))


def run_at_once(calls: list[dict]) -> list[subprocess.CompletedProcess]:
    """Run independent processes concurrently (:data:`AT_ONCE` at a time), each given by its
    ``subprocess.run`` keyword arguments (``args``, ``cwd``, ``env``, ...), each to its end (10 minutes at
    most), its output captured as text; the results in the order of ``calls``.

    Only for processes that do not depend on each other's files: each one is exactly the process a
    test would otherwise run on its own, so what a test asserts of its result is unchanged.
    """
    from concurrent.futures import ThreadPoolExecutor

    def one(kwargs: dict) -> subprocess.CompletedProcess:
        return subprocess.run(**{"capture_output": True, "text": True, "timeout": 600, **kwargs})

    with ThreadPoolExecutor(max_workers=min(AT_ONCE, max(1, len(calls)))) as pool:
        return list(pool.map(one, calls))


def run_train_py_at_once(runs: list[tuple[list[str], Path]]) -> list[subprocess.CompletedProcess]:
    """:func:`run_train_py` for each ``(argv, cwd)`` of ``runs``, concurrently (:func:`run_at_once`); the
    results in the order of ``runs``. The runs must not depend on each other's files; two runs that
    both write TensorBoard (``runs/NAME__SEED__SECOND``) need different working folders."""
    return run_at_once([{**train_py_args(argv), "cwd": cwd} for argv, cwd in runs])


# --------------------------------------------------------------------------
# gnubg's two-row board (RULES.md section 1, "gnubg's two-row form")
# --------------------------------------------------------------------------


def to_gnubg(board) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Our board -> gnubg's ``(opponent row, mover row)``; gnubg's row 1 is the side on roll.

    Each row is in its own player's numbering: column ``i`` = point ``i + 1``,
    column 24 = that player's bar. Our index ``p`` is the opponent's point ``25 - p``.
    """
    b = [int(x) for x in np.asarray(board)]
    mover = [max(b[p], 0) for p in range(1, 25)] + [b[25]]
    opp = [max(-b[25 - q], 0) for q in range(1, 25)] + [-b[0]]
    return tuple(opp), tuple(mover)


def from_gnubg(rows) -> np.ndarray:
    """gnubg's ``(opponent row, mover row)`` -> our ``(26,)`` int8 board (mover's view)."""
    opp, mover = rows
    b = np.zeros(26, dtype=np.int64)
    for p in range(1, 25):
        b[p] = mover[p - 1] - opp[24 - p]
    b[25] = mover[24]
    b[0] = -opp[24]
    return b.astype(np.int8)


def gnubg_play_set(gnubg_nn, board, dice) -> set[tuple[int, ...]]:
    """gnubg's legal afterstates (mover's view) as a set of tuples; ``{board}`` if it has none."""
    keys = gnubg_nn.moves(to_gnubg(board), int(dice[0]), int(dice[1]))
    if not keys:
        return {reference.as_tuple(board)}
    return {reference.as_tuple(from_gnubg(gnubg_nn.boardfromkey(k))) for k in keys}


# --------------------------------------------------------------------------
# Comparison helpers
# --------------------------------------------------------------------------


def describe_difference(board, dice, expected: set, actual: set, limit: int = 6) -> str:
    """A readable report of two afterstate sets that differ."""
    b = reference.as_tuple(board)

    def moved(after):
        return {i: after[i] - b[i] for i in range(26) if after[i] != b[i]}

    missing = sorted(expected - actual)[:limit]
    extra = sorted(actual - expected)[:limit]
    lines = [f"board={list(b)} dice={tuple(dice)}: expected {len(expected)} plays, got {len(actual)}"]
    lines += [f"  missing {list(a)} (changes {moved(a)})" for a in missing]
    lines += [f"  extra   {list(a)} (changes {moved(a)})" for a in extra]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Hypothesis strategies
# --------------------------------------------------------------------------


@st.composite
def scattered_boards(draw) -> np.ndarray:
    """Any valid board: each checker of each side drawn on a point, the bar or off.

    Location codes: 0 = off, 1..24 = own point, 25 = own bar. The opponent's
    checkers go only where the mover has none. The mover keeps >= 1 checker.
    """
    b = np.zeros(26, dtype=np.int64)
    mover_locations = draw(st.lists(st.integers(0, 25), min_size=15, max_size=15))
    if all(loc == 0 for loc in mover_locations):
        mover_locations[0] = 1
    for loc in mover_locations:
        if loc:
            b[loc] += 1
    opp_allowed = [0] + [q for q in range(1, 25) if b[25 - q] == 0] + [25]
    opp_locations = draw(st.lists(st.sampled_from(opp_allowed), min_size=15, max_size=15))
    if all(q == 0 for q in opp_locations):
        opp_locations[0] = 25  # keep the game going: the opponent keeps one checker (on its bar)
    for q in opp_locations:
        if q:
            b[25 - q if q < 25 else 0] -= 1
    return b.astype(np.int8)


@st.composite
def finished_boards(draw) -> np.ndarray:
    """A finished game: the mover has borne off all 15; the opponent has 1..15 in play
    anywhere (its bar, the mover's home board, its own home board...). Use
    ``swap_sides`` for the other winner."""
    b = np.zeros(26, dtype=np.int64)
    locations = draw(st.lists(st.integers(0, 25), min_size=15, max_size=15))
    if all(q == 0 for q in locations):
        locations[0] = 1
    for q in locations:  # the opponent's own numbering; 25 = its bar (our index 0)
        if q:
            b[25 - q if q < 25 else 0] -= 1
    return b.astype(np.int8)


@st.composite
def played_boards(draw) -> np.ndarray:
    """A position from random play (seeded by hypothesis)."""
    seed = draw(st.integers(0, 2**32 - 1))
    return random_play_positions(np.random.default_rng(seed), 1, max_turns=120)[0]


@st.composite
def bearoff_boards(draw) -> np.ndarray:
    """A bear-off-heavy position (seeded by hypothesis)."""
    seed = draw(st.integers(0, 2**32 - 1))
    return random_bearoff_positions(np.random.default_rng(seed), 1)[0]


def boards() -> st.SearchStrategy[np.ndarray]:
    """Valid boards with at least one mover checker in play, from all sources."""
    return st.one_of(scattered_boards(), played_boards(), bearoff_boards())


def dice() -> st.SearchStrategy[tuple[int, int]]:
    """Two dice, 1..6 each, in any order."""
    return st.tuples(st.integers(1, 6), st.integers(1, 6))


def random_board(rng: np.random.Generator) -> np.ndarray:
    """A random valid board: each side's 15 checkers scattered on free points, some on the bar, some off."""
    board = np.zeros(26, dtype=np.int64)
    for side in (1, -1):
        off = int(rng.integers(0, 6)) if rng.random() < 0.3 else 0
        on_bar = int(rng.integers(1, 4)) if rng.random() < 0.3 else 0
        board[BAR if side == 1 else 0] = side * on_bar
        left = NUM_CHECKERS - off - on_bar
        while left:
            point = int(rng.integers(1, 25))
            if board[point] * side >= 0:  # empty or already this side's
                board[point] += side
                left -= 1
    if (board == 0).all():
        board[1] = 1
    return board.astype(np.int8)


@contextlib.contextmanager
def cli_server(args: list[str], port_pattern: str, timeout: float = 240.0):
    """Run ``python -m nard_ai.interfaces.cli ARGS`` and yield the port it logs on stderr (``port_pattern``'s group 1).

    The process is terminated on exit. Fails the test with what it logged when no port shows in time.
    """
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "nard_ai.interfaces.cli", *args], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        port, deadline, seen = None, time.monotonic() + timeout, []
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            match = re.search(port_pattern, line)
            if match:
                port = int(match.group(1))
        assert port and port != 0, "".join(seen)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def run_cli(argv, capsys) -> tuple[int, str, str]:
    """``nard_ai.interfaces.cli.main(argv)`` -> (exit status, stdout, stderr); argparse's exits become statuses."""
    from nard_ai.interfaces import cli

    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def one_error_line(argv, capsys) -> str:
    """The one stderr line of a ``nard`` command refused with status 2 and nothing on stdout."""
    status, out, err = run_cli(argv, capsys)
    assert status == 2 and out == "", (status, out, err)
    assert err.count("\n") == 1, err
    return err.rstrip("\n")


def load_script(monkeypatch, filename: str):
    """A script of the repository's root (``train.py``, ``evaluate.py``) as a module, registered for the
    test only."""
    import importlib.util

    name = Path(filename).stem + "_script"
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent.parent / filename)
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, script)
    spec.loader.exec_module(script)
    return script


def load_evaluate_script(monkeypatch):
    """The repository's ``evaluate.py`` as a module (registered for the test only)."""
    return load_script(monkeypatch, "evaluate.py")


def check_first_layer_against_plain(boards, x, name: str, threads: int) -> list[int]:
    """The embedding first layer (:func:`nard_ai.model.embedding.first_layer`) of encoder ``name`` on
    ``boards`` equals a plain ``torch.nn.Linear`` over their encoded rows ``x``; returns the dense columns.

    The dense inputs must be the encoder's own units, and lookup plus dense product the plain layer
    (float32 sums in another order: within 2e-5).
    """
    import torch

    from nard_ai.model.embedding import CONSTANT_UNIT, SLOTS, dense_columns, first_layer, unit_values

    torch.manual_seed(0)
    layer = torch.nn.Linear(x.shape[1], 32)
    w = layer.weight.detach()
    groups = w[:, : 4 * SLOTS].reshape(32, SLOTS, 4)
    table = torch.einsum("nk,hsk->snh", torch.from_numpy(unit_values()), groups).contiguous().numpy()
    bias = (layer.bias.detach() + w[:, CONSTANT_UNIT]).numpy()
    pre, dense = first_layer(
        boards,
        name == "rich",
        table,
        bias,
        threads,
        expert=name == "expert",
        race_inputs=name == "expert_race",
    )
    cols = dense_columns(name)
    np.testing.assert_array_equal(dense, x[:, cols])  # the dense inputs are the encoder's own units
    got = pre + dense @ w[:, cols].T.numpy()
    want = layer(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, atol=2e-5)
    return cols


def write_label_shard(folder: Path, name: str, boards: np.ndarray, probs: np.ndarray) -> None:
    """One label shard ``folder/labels-NAME.csv`` of ``boards`` (their Position IDs) and gnubg's five
    ``probs``, with the sidecar ``labels-NAME.json`` that :func:`nard_ai.training.store.read_labels` checks
    (the CSV's SHA-256); ``folder`` is created if needed."""
    import json

    from nard_ai.formats.position_id import position_id
    from nard_ai.training.store import atomic_write_bytes, file_sha256, format_labels_csv

    folder.mkdir(parents=True, exist_ok=True)
    csv = folder / f"labels-{name}.csv"
    atomic_write_bytes(csv, format_labels_csv([position_id(b) for b in boards], probs))
    (folder / f"labels-{name}.json").write_text(json.dumps({"csv_sha256": file_sha256(csv)}))


#: A 3-point match whose game 2 names other players (its lines counted from 1 in the comments):
#: read_mat keeps game 1's names and warns, naming line 10 (tests/test_analyze_mat_lines.py,
#: test_web.py and test_browser.py read it).
RENAMED_MAT = "\n".join(
    [
        " 3 point match",  # line 1
        "",  # line 2
        " Game 1",  # line 3
        " alice : 0                      bob : 0",  # line 4
        "  1) 31: 8/5 6/5                 52: 13/8 13/11",  # line 5
        "  2)  Doubles => 2                Drops",  # line 6
        "      Wins 1 point",  # line 7
        "",  # line 8
        " Game 2",  # line 9
        " carol : 1                      dave : 0",  # line 10: other names
        "  1)                             42: 8/4 6/4",  # line 11
    ]
)
