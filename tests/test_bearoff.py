"""The one-sided bear-off database and its two-sided probabilities (nard_ai.eval.bearoff).

Reference values: hand-worked bear-offs (each test says how the rolls were
counted), exact arithmetic for 15 checkers on the 1-point, an independent
loop implementation of the formulas of the module docstring, and GNU
Backgammon itself (``gnubg.evaluate`` at 0-ply and ``gnubg_nn.bearoff_probabilities``,
its one-sided database ``gnubg_os0.bd``), skipped when gnubg is not installed.

Boards are built with ``pos(me=..., opp=...)``, each side in its own numbering
(the opponent's 1-point is the mover's 24-point). In the sketches ``X`` is a
mover checker and ``O`` an opponent checker; each side's home board is drawn
from its 6-point down to its 1-point.
"""

from __future__ import annotations

import logging
from fractions import Fraction

import numpy as np
import pytest
from conftest import ALL_ROLLS, to_gnubg

from nard_ai.core.board import pos, starting_board
from nard_ai.core.dice import ROLL_WEIGHTS
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.eval import bearoff
from nard_ai.eval.bearoff import (
    MAX_ROLLS,
    NUM_POSITIONS,
    BearoffDatabase,
    bearoff_probs,
    is_bearoff,
    load_or_build,
    position_index,
)


@pytest.fixture(scope="session")
def db() -> BearoffDatabase:
    """The process's database (built on first use, then cached in the user's cache folder)."""
    return bearoff.get_database()


def idx(**points: int) -> int:
    """Database index of one side's home board, ``idx(p6=2, p1=1)`` = two on the 6-point, one on the 1-point."""
    counts = [points.get(f"p{p}", 0) for p in range(1, 7)]
    return position_index(np.array(counts))


def random_side(rng: np.random.Generator, checkers: int) -> dict[int, int]:
    """``checkers`` checkers dropped on points 1..top (top random in 1..6), as a ``pos`` mapping."""
    top = int(rng.integers(1, 7))
    counts = np.bincount(rng.integers(1, top + 1, size=checkers), minlength=7)
    return {p: int(counts[p]) for p in range(1, 7) if counts[p]}


def random_bearoffs(
    rng: np.random.Generator, n: int, min_checkers: int = 1, max_checkers: int = 15
) -> np.ndarray:
    """``(n, 26)`` int8 bear-off positions; each side has 15 checkers half the time."""
    boards = []
    for _ in range(n):
        sides = []
        for _ in range(2):
            count = (
                15
                if rng.random() < 0.5 and max_checkers == 15
                else int(rng.integers(min_checkers, max_checkers + 1))
            )
            sides.append(random_side(rng, count))
        boards.append(pos(me=sides[0], opp=sides[1]))
    return np.array(boards)


# --------------------------------------------------------------------------
# The position index
# --------------------------------------------------------------------------


def test_position_index_numbers_every_home_board_once(db):
    """C(21, 6) = 54,264 home boards of 0..15 checkers; the index is a bijection onto 0..54,263."""
    positions = bearoff._all_positions()
    assert NUM_POSITIONS == 54_264
    assert positions.shape == (54_264, 6)
    assert (positions.sum(axis=1) <= 15).all()
    assert len({tuple(row) for row in positions.tolist()}) == NUM_POSITIONS
    np.testing.assert_array_equal(position_index(positions), np.arange(NUM_POSITIONS))
    assert idx() == 0  # everything borne off
    assert idx(p6=15) == NUM_POSITIONS - 1


def test_every_play_lowers_the_position_index():
    """The build fills the database in index order, so every play must lead to a lower index."""
    rng = np.random.default_rng(3)
    positions = bearoff._all_positions()[rng.integers(1, NUM_POSITIONS, size=300)]
    boards = np.zeros((300, 26), dtype=np.int8)
    boards[:, 1:7] = positions
    boards[:, 24] = -1  # an opposing checker out of reach, so the game is not over
    rolls = np.array(ALL_ROLLS)[rng.integers(0, 21, size=300)]
    after, owner = legal_plays_batch(boards, rolls)
    assert (position_index(after[:, 1:7]) < position_index(positions)[owner]).all()


def test_position_index_rejects_bad_counts():
    with pytest.raises(ValueError, match="shape"):
        position_index(np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError, match=">= 0"):
        position_index(np.array([1, -1, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="at most 15"):
        position_index(np.array([8, 8, 0, 0, 0, 0]))


# --------------------------------------------------------------------------
# One-sided distributions, hand-worked
# --------------------------------------------------------------------------


def test_distributions_are_probability_distributions(db):
    assert db.race.shape == db.gammon.shape == (NUM_POSITIONS, MAX_ROLLS)
    assert db.race.dtype == db.gammon.dtype == np.float32
    np.testing.assert_allclose(db.race.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(db.gammon.sum(axis=1), 1.0, atol=1e-5)
    assert (db.race >= 0).all() and (db.gammon >= 0).all()
    # Only the empty board needs 0 rolls; a position short of 15 checkers already has one off.
    assert db.race[0, 0] == 1.0 and (db.race[1:, 0] == 0).all()
    full = bearoff._all_positions().sum(axis=1) == 15
    assert (db.gammon[~full, 0] == 1.0).all()
    assert (db.gammon[full, 0] == 0).all()


def test_the_longest_bear_off_needs_30_rolls(db):
    """15 checkers on the 6-point: 90 pips, and a 2-1 every roll moves 3 (30 rolls, probability ~1e-34 > 0)."""
    assert db.race[idx(p6=15), 30] > 0
    assert (db.race[:, 31] == 0).all()  # MAX_ROLLS = 32 loses nothing


def test_one_checker_on_the_1_point_needs_exactly_one_roll(db):
    """
    X on the 1-point: any die bears it off.
        6 5 4 3 2 1
        . . . . . X
    """
    expected = np.zeros(MAX_ROLLS)
    expected[1] = 1.0
    np.testing.assert_array_equal(db.race[idx(p1=1)], expected)
    assert db.mean_rolls(idx(p1=1)) == pytest.approx(1.0)


def test_two_checkers_on_the_6_point_come_off_in_one_roll_with_4_of_36(db):
    """
    X2 on the 6-point:
        6 5 4 3 2 1
        X2. . . . .
    One roll bears both off only with 3-3 (6/3/off twice), 4-4, 5-5 or 6-6:
    2-2 needs 3 twos per checker and any non-double moves 12 pips only with 6-6.
    P = 4/36 = 0.1111 (gnubg's one-sided database: 0.11112).
    """
    assert db.race[idx(p6=2), 1] == pytest.approx(4 / 36, abs=1e-7)


def test_checkers_on_the_4_and_1_points_come_off_in_one_roll_with_29_of_36(db):
    """
    X on the 4-point and X on the 1-point:
        6 5 4 3 2 1
        . . X . . X
    Any die bears off the 1-point checker; the 4-point checker needs a die of
    4 or more, or 2-2 (4/2/off). The 7 failing rolls: 1-1 (4 pips in four
    moves, but 5 moves needed), 2-1, 3-1, 3-2 (2 ways each). P = 29/36 (not 31/36;
    gnubg's database: 0.80555).
    """
    assert db.race[idx(p4=1, p1=1), 1] == pytest.approx(29 / 36, abs=1e-7)
    assert db.race[idx(p4=1, p1=1), 2] == pytest.approx(7 / 36, abs=1e-7)


def test_fifteen_checkers_on_the_1_point_match_the_exact_recursion(db):
    """
    X15 on the 1-point: there is no choice; a double bears off 4 checkers, any
    other roll 2. With E(n) the expected rolls for n checkers,
    E(n) = 1 + 1/6 E(n - 4) + 5/6 E(n - 2), E(n <= 0) = 0, so E(15) = 6.9796
    (not 15/4: only one roll in six is a double). The fastest finish is four
    doubles in a row: P(4 rolls) = (1/6)^4 = 1/1296.
    """
    dist: dict[int, dict[int, Fraction]] = {}

    def rolls(n: int) -> dict[int, Fraction]:
        if n <= 0:
            return {0: Fraction(1)}
        if n not in dist:
            out: dict[int, Fraction] = {}
            for chance, left in ((Fraction(1, 6), n - 4), (Fraction(5, 6), n - 2)):
                for k, p in rolls(left).items():
                    out[k + 1] = out.get(k + 1, Fraction(0)) + chance * p
            dist[n] = out
        return dist[n]

    exact = rolls(15)
    mean = sum(k * p for k, p in exact.items())
    assert float(mean) == pytest.approx(6.979592, abs=1e-6)
    assert db.mean_rolls(idx(p1=15)) == pytest.approx(float(mean), abs=1e-5)
    for k, p in exact.items():
        assert db.race[idx(p1=15), k] == pytest.approx(float(p), abs=1e-7)
    assert db.race[idx(p1=15), 4] == pytest.approx(1 / 1296, abs=1e-9)


def test_first_checker_off_from_fifteen_on_the_6_point_takes_one_roll_with_17_of_36(db):
    """
    X15 on the 6-point: the first checker comes off this roll with any 6 (11
    rolls), 5-1 (6/1/off), 4-2 (6/2/off), 3-3 (6/3/off) or 2-2 (6/4/2/off): 17/36.
    With 4-4 or 5-5 the checker lands on the 2- or 1-point but cannot bear off
    while checkers stay on the 6-point.
    """
    assert db.gammon[idx(p6=15), 1] == pytest.approx(17 / 36, abs=1e-7)


# --------------------------------------------------------------------------
# Two-sided probabilities, hand-worked
# --------------------------------------------------------------------------


def test_last_roll_with_checkers_on_the_3_and_2_points_wins_25_of_36():
    """
    Mover X on its 3- and 2-points, opponent O on its 1-point (off next roll for sure):
        mover  6 5 4 3 2 1      opponent 6 5 4 3 2 1
               . . . X X .               . . . . . O
    The mover wins only by bearing both off now: one die >= 3 and the other
    >= 2 (20 non-doubles) or 2-2 .. 6-6 (5): 25/36 (the same figure as
    tests/test_gnubg_agent.py's LAST_ROLL).
    """
    probs = bearoff_probs(pos(me={3: 1, 2: 1}, opp={1: 1}))
    np.testing.assert_allclose(probs, [25 / 36, 0, 0, 0, 0], atol=1e-6)


def test_last_roll_with_checkers_on_the_6_and_5_points_wins_6_of_36():
    """
    Mover X on its 6- and 5-points, opponent O on its 1-point:
        mover  6 5 4 3 2 1      opponent 6 5 4 3 2 1
               X X . . . .               . . . . . O
    Both come off in one roll only with 6-5 (2 ways), 3-3 (6/3/off 5/2/off),
    4-4 (5/1 6/2/off 1/off), 5-5 or 6-6: 6/36. 2-2 needs six moves.
    """
    probs = bearoff_probs(pos(me={6: 1, 5: 1}, opp={1: 1}))
    np.testing.assert_allclose(probs, [6 / 36, 0, 0, 0, 0], atol=1e-6)


def test_win_gammon_counts_only_finishes_before_the_opponents_first_checker_comes_off():
    """
    Mover X2 on its 6-point, opponent O15 on its 1-point:
        mover  6 5 4 3 2 1      opponent 6 5 4 3 2 1
               X2. . . . .               . . . . . O15
    The mover needs at most 4 rolls (12 pips, at least 3 a roll) and the
    opponent at least 4 (at most 4 checkers a roll), and the mover rolls
    first, so the mover always wins. The opponent bears off checkers with its
    very first roll, so the mover wins a gammon only by bearing off both with
    its first roll, before the opponent has rolled at all: 4/36. (With the
    off-by-one the other way, counting the opponent's n-th roll before the
    mover's n-th, the gammon chance would be 0.)
    """
    probs = bearoff_probs(pos(me={6: 2}, opp={1: 15}))
    np.testing.assert_allclose(probs, [1.0, 4 / 36, 0, 0, 0], atol=1e-6)


def test_lose_gammon_counts_every_miss_of_the_movers_first_roll():
    """
    Mover X15 on its 6-point, opponent O on its 1-point (off next roll for sure):
        mover  6 5 4 3 2 1      opponent 6 5 4 3 2 1
               X15 . . . .               . . . . . O
    The mover cannot win, and is gammoned unless its one roll bears a checker
    off: 1 - 17/36 = 19/36. No backgammon: nothing of the mover's is in the
    opponent's home board or on the bar (RULES.md 6).
    """
    probs = bearoff_probs(pos(me={6: 15}, opp={1: 1}))
    np.testing.assert_allclose(probs, [0, 0, 0, 19 / 36, 0], atol=1e-6)


def test_a_single_board_gives_five_numbers():
    probs = bearoff_probs(pos(me={1: 1}, opp={6: 15}))
    assert probs.shape == (5,) and probs.dtype == np.float32
    np.testing.assert_array_equal(probs, [1, 1, 0, 0, 0])  # off before the opponent rolls, 15 still on


def reference_probs(db: BearoffDatabase, board: np.ndarray) -> list[float]:
    """The module docstring's formulas as plain loops over rolls (slow, obviously correct)."""
    me_counts = [int(board[p]) for p in range(1, 7)]
    opp_counts = [-int(board[25 - q]) for q in range(1, 7)]
    me, opp = position_index(np.array(me_counts)), position_index(np.array(opp_counts))
    p_me, p_opp = db.race[me].astype(float), db.race[opp].astype(float)
    g_me, g_opp = db.gammon[me].astype(float), db.gammon[opp].astype(float)
    win = win_gammon = lose_gammon = 0.0
    for n in range(1, MAX_ROLLS):
        for m in range(1, MAX_ROLLS):
            if n <= m:  # the mover's n-th roll comes before the opponent's m-th
                win += p_me[n] * p_opp[m]
        if sum(opp_counts) == 15:
            win_gammon += p_me[n] * sum(g_opp[k] for k in range(n, MAX_ROLLS))
        if sum(me_counts) == 15:
            lose_gammon += p_opp[n] * sum(g_me[k] for k in range(n + 1, MAX_ROLLS))
    return [win, win_gammon, 0.0, lose_gammon, 0.0]


def test_batch_kernel_matches_the_formulas_written_as_loops(db):
    boards = random_bearoffs(np.random.default_rng(11), 60)
    got = bearoff_probs(boards)
    expected = np.array([reference_probs(db, b) for b in boards])
    np.testing.assert_allclose(got, expected, atol=2e-6)
    assert (got[:, 1] <= got[:, 0] + 1e-6).all() and (got[:, 3] <= 1 - got[:, 0] + 1e-6).all()


# --------------------------------------------------------------------------
# What is covered, and bad input
# --------------------------------------------------------------------------


def test_is_bearoff_selects_positions_with_both_sides_all_home():
    boards = np.array(
        [
            pos(me={6: 5, 1: 2}, opp={3: 15}),  # covered
            pos(me={7: 1, 6: 4}, opp={3: 15}),  # a mover checker on its 7-point
            pos(me={25: 1, 6: 4}, opp={3: 15}),  # a mover checker on the bar
            pos(me={6: 5}, opp={7: 1, 3: 14}),  # an opponent checker on its 7-point
            pos(me={6: 5}, opp={25: 1, 3: 14}),  # an opponent checker on its bar
            pos(me={}, opp={3: 15}),  # game over: the mover has borne off everything
            pos(me={6: 5}, opp={}),  # game over: the opponent has
            starting_board(),
        ]
    )
    np.testing.assert_array_equal(is_bearoff(boards), [True] + [False] * 7)
    assert is_bearoff(boards[0]) is True


def test_bearoff_probs_rejects_positions_it_does_not_cover():
    with pytest.raises(ValueError, match="board 1 is not a bear-off position"):
        bearoff_probs(np.array([pos(me={1: 1}, opp={1: 1}), starting_board()]))
    with pytest.raises(ValueError, match="shape"):
        bearoff_probs(np.zeros((3, 25), dtype=np.int8))
    with pytest.raises(ValueError, match="integer"):
        is_bearoff(np.zeros(26, dtype=np.float32))


# --------------------------------------------------------------------------
# Against GNU Backgammon
# --------------------------------------------------------------------------


def test_one_sided_distributions_match_gnubgs_database(db):
    """gnubg_os0.bd (gnubg_nn.bearoff_probabilities) for all 54,263 non-empty home boards.

    gnubg stores each probability in 16 bits and rounds while it builds, so a
    near-tie between two plays can go the other way: the expected rolls agree
    within 5e-4 everywhere (measured 2.0e-4), single probabilities within 3e-3
    (measured 2.8e-3, [1, 0, 4, 1, 3, 0]), and for 99% of positions within 1e-4.
    """
    gnubg_nn = pytest.importorskip("gnubg_nn", reason="gnubg_nn is not installed")
    positions = bearoff._all_positions()
    worst, close = 0.0, 0
    turns = np.arange(MAX_ROLLS)
    for i in range(1, NUM_POSITIONS):
        theirs = np.array(gnubg_nn.bearoff_probabilities(tuple(int(c) for c in positions[i])))
        dist = np.zeros(MAX_ROLLS)
        dist[1 : 1 + len(theirs)] = theirs  # gnubg's list starts at 1 roll
        assert float(dist @ turns) == pytest.approx(float(db.race[i] @ turns), abs=5e-4), positions[i]
        diff = float(np.abs(dist - db.race[i]).max())
        worst = max(worst, diff)
        close += diff <= 1e-4
    assert worst < 3e-3
    assert close >= 0.99 * (NUM_POSITIONS - 1)


def gnubg_evaluate(boards: np.ndarray) -> np.ndarray:
    gnubg = pytest.importorskip("gnubg", reason="gnubg is not installed")
    ci, ec = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0), gnubg.evalcontext(0, 0, 1, 0)
    return np.array([gnubg.evaluate([list(row) for row in to_gnubg(b)], ci, ec)[:5] for b in boards])


def test_agrees_with_gnubg_0_ply_on_its_one_sided_bear_offs():
    """gnubg evaluates these (one side with 7..15 checkers) with the same one-sided method: all 5 within 1e-4.

    Measured on these 285 positions: win within 3.6e-5 (median 2.8e-6), gammons within 7.6e-6.
    """
    rng = np.random.default_rng(5)
    boards = random_bearoffs(rng, 300)
    small = (boards[:, 1:7].sum(axis=1) <= 6) & (-boards[:, 19:25].sum(axis=1) <= 6)
    boards = boards[~small]
    assert len(boards) > 250
    np.testing.assert_allclose(bearoff_probs(boards), gnubg_evaluate(boards), atol=1e-4)


def test_is_close_to_gnubgs_two_sided_database_on_small_bear_offs():
    """With at most 6 checkers a side gnubg uses its exact two-sided database (gnubg_ts0.bd).

    Each side's fastest-on-average bear-off is not always the play that wins
    most against this opponent, so the one-sided figures are off by up to
    about 1% there (measured on these 150: at most 4.9e-3, median 1.1e-5, 20 beyond 1e-4).
    """
    boards = random_bearoffs(np.random.default_rng(6), 150, max_checkers=6)
    diff = np.abs(bearoff_probs(boards) - gnubg_evaluate(boards))
    assert diff.max() < 1e-2
    assert np.median(diff[:, 0]) < 1e-4
    assert (diff[:, 1:] == 0).all()  # no gammons with fewer than 15 checkers


# --------------------------------------------------------------------------
# The cache file
# --------------------------------------------------------------------------


@pytest.fixture
def counted_build(monkeypatch, db):
    """Replace the 4-second build by the session's database, counting calls."""
    calls = []

    def fake_build():
        calls.append(1)
        return db

    monkeypatch.setattr(bearoff, "build_database", fake_build)
    return calls


def test_cache_round_trip_writes_atomically_and_loads_without_building(tmp_path, db, counted_build):
    path = tmp_path / "sub" / "bearoff-v1.npz"
    first = load_or_build(path)
    assert counted_build == [1] and path.is_file()
    assert sorted(p.name for p in path.parent.iterdir()) == ["bearoff-v1.npz"]  # no temporary left behind
    second = load_or_build(path)
    assert counted_build == [1]  # loaded, not rebuilt
    np.testing.assert_array_equal(second.race, first.race)
    np.testing.assert_array_equal(second.gammon, db.gammon)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped"])
def test_a_corrupt_cache_file_is_rebuilt(tmp_path, db, counted_build, damage, caplog):
    path = tmp_path / "bearoff-v1.npz"
    bearoff._write(db, path)
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not an npz file")
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    else:  # a readable archive whose numbers changed under the old digest: only the digest notices
        race = db.race.copy()
        race[5, 1] += 0.01
        np.savez(
            path,
            version=np.int64(bearoff.BEAROFF_VERSION),
            digest=np.str_(db.digest()),
            race=race,
            gammon=db.gammon,
        )
    with caplog.at_level(logging.WARNING, logger="nard_ai.eval.bearoff"):
        rebuilt = load_or_build(path)
    assert counted_build == [1]
    assert "ignoring" in caplog.text
    np.testing.assert_array_equal(rebuilt.race, db.race)
    assert bearoff._read(path) is not None  # replaced by a good file


def test_a_cache_file_of_another_version_is_rebuilt(tmp_path, db, counted_build):
    path = tmp_path / "bearoff-v1.npz"
    np.savez(path, version=np.int64(0), digest=np.str_(db.digest()), race=db.race, gammon=db.gammon)
    load_or_build(path)
    assert counted_build == [1]
    with np.load(path) as data:
        assert int(data["version"]) == bearoff.BEAROFF_VERSION


def test_an_unwritable_cache_still_gives_the_database(tmp_path, db, counted_build, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="nard_ai.eval.bearoff"):
        got = load_or_build(blocker / "bearoff-v1.npz")
    assert got is db and counted_build == [1]
    assert "could not save" in caplog.text


def test_cache_path_honours_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bearoff.cache_path() == tmp_path / "nard_ai" / "bearoff-v1.npz"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG spec says to ignore relative paths
    assert bearoff.cache_path() == bearoff.Path.home() / ".cache" / "nard_ai" / "bearoff-v1.npz"


def test_the_overflow_guard_reports_distributions_longer_than_the_table():
    """A chain 2 -> 1 -> 0 (one play per roll) needs 2 rolls from position 2; a 2-column table cannot hold it."""
    n_rolls = len(ROLL_WEIGHTS)
    successors = np.array([0] * n_rolls + [1] * n_rolls, dtype=np.int64)
    pair_start = np.concatenate([[0] * (n_rolls + 1), np.arange(1, 2 * n_rolls + 1)]).astype(np.int64)
    checkers = np.array([0, 1, 2], dtype=np.int64)

    def solve(cap: int) -> tuple[bool, np.ndarray]:
        race = np.zeros((3, cap))
        gammon = np.zeros((3, cap))
        ok = bearoff._solve(
            pair_start, successors, checkers, ROLL_WEIGHTS, race, gammon, np.zeros(3), np.zeros(3)
        )
        return ok, race

    ok, race = solve(3)
    assert ok
    np.testing.assert_allclose(race, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert solve(2)[0] is False
