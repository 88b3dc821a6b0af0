"""The fast paths of ``nard_ai.core.movegen``: reused buffers, the compiled input check, the sort, the tables.

The generator's afterstate *sets* are checked against the slow reference in
``test_movegen_reference.py``; here the paths added for speed are checked
against plain definitions:

* the Zobrist keys are splitmix64's outputs (Steele, Lea & Flood 2014; the
  published first output for seed 0 is 0xE220A8397B1DCDAF);
* the compiled input check accepts exactly what :func:`nard_ai.core.board.validate_board`
  accepts (and no finished game), with the same error messages;
* the output buffers are reused across calls but every result is a new
  array, whatever the batch size and however many plays a batch has;
* sorted output is lexicographic, index 0 first, as signed bytes (Python's
  tuple order on the rows as ints), and unsorted output holds the same rows;
* the nested-loop searches of standard rules (``_search_pair``,
  ``_search_quad``) record the same leaves, in the same order and with the
  same classes, as the general DFS search that the Iranian rule uses.
"""

from __future__ import annotations

import time

import numba
import numpy as np
import pytest
from conftest import mixed_positions

from nard_ai.core import movegen
from nard_ai.core.board import pos, starting_board, validate_board
from nard_ai.core.movegen import legal_plays, legal_plays_batch, random_games
from nard_ai.core.rules import Rules

MASK64 = (1 << 64) - 1


def _splitmix64(n: int, seed: int = 0) -> list[int]:
    """The first ``n`` outputs of splitmix64 seeded with ``seed``, in plain Python integers."""
    out = []
    state = seed
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        out.append(z ^ (z >> 31))
    return out


def test_zobrist_keys_are_splitmix64_outputs_from_its_second_on():
    """Seed 0's first output is the published 0xE220A8397B1DCDAF; the table (row-major) starts at the second."""
    outputs = _splitmix64(26 * 32 + 1)
    assert outputs[0] == 0xE220A8397B1DCDAF
    expected = np.array(outputs[1:], dtype=np.uint64).reshape(26, 32)
    assert movegen.ZOBRIST.dtype == np.uint64
    assert np.array_equal(movegen.ZOBRIST, expected)


def _bad_boards() -> list[np.ndarray]:
    """One int8 board per way of being rejected (each alone in an otherwise valid batch)."""
    boards = []
    b = starting_board().copy()
    b[13] = 16  # more than 15 on a point
    boards.append(b)
    b = starting_board().copy()
    b[6], b[25] = 4, -1  # mover's bar negative
    boards.append(b)
    b = starting_board().copy()
    b[19], b[0] = -4, 1  # opponent's bar positive
    boards.append(b)
    b = starting_board().copy()
    b[7] = 1  # 16 mover checkers
    boards.append(b)
    b = starting_board().copy()
    b[1] = -3  # 16 opposing checkers
    boards.append(b)
    boards.append(pos(me={}, opp={6: 3}))  # the mover has borne off all 15: a finished game
    boards.append(pos(me={6: 3}, opp={}))  # the opponent has: a finished game
    return boards


@pytest.mark.parametrize("index", range(7))
def test_fast_input_check_gives_the_same_errors_as_the_full_checks(index):
    """An int8 C-contiguous batch takes the compiled check; a bad board still gets the full check's message."""
    bad = _bad_boards()[index]
    batch = np.stack([starting_board(), bad, starting_board()]).astype(np.int8)
    dice = np.array([[3, 1]] * 3, dtype=np.int8)
    assert not movegen._boards_in_play(batch)
    with pytest.raises(ValueError) as fast:
        legal_plays_batch(batch, dice)
    # the same batch as int64 never takes the fast path: the full checks decide
    with pytest.raises(ValueError) as full:
        legal_plays_batch(batch.astype(np.int64), dice)
    assert str(fast.value) == str(full.value)


def test_fast_dice_check_accepts_exactly_dice_1_to_6_with_the_full_checks_message():
    """Every int8 value in either die of an int8 (N, 2) batch: the compiled check passes 1..6 only, and a bad
    die gets validate_dice's message (the int64 copy of the same dice takes the full check)."""
    boards = np.stack([starting_board()] * 3).astype(np.int8)
    for value in range(-128, 128):
        for column in (0, 1):
            dice = np.array([[3, 1], [6, 6], [2, 5]], dtype=np.int8)
            dice[1, column] = value
            assert movegen._dice_in_range(dice) == (1 <= value <= 6)
            if 1 <= value <= 6:
                plays, owner = legal_plays_batch(boards, dice)
                assert np.array_equal(plays, legal_plays_batch(boards, dice.astype(np.int64))[0])
                continue
            with pytest.raises(ValueError) as fast:
                legal_plays_batch(boards, dice)
            with pytest.raises(ValueError) as full:
                legal_plays_batch(boards, dice.astype(np.int64))
            assert str(fast.value) == str(full.value) == f"each die must be 1..6, got {value}"


def test_fast_input_check_accepts_valid_boards_of_every_kind():
    """Random-play, bear-off and scattered positions all pass both checks."""
    boards = mixed_positions(np.random.default_rng(11), 400).astype(np.int8)
    validate_board(boards)  # the full check accepts them
    assert movegen._boards_in_play(np.ascontiguousarray(boards))


def test_wide_or_strided_boards_give_the_same_plays_as_int8():
    """int64 boards and a non-contiguous view (the slow path) give the rows of an int8 contiguous batch."""
    rng = np.random.default_rng(5)
    boards = mixed_positions(rng, 300).astype(np.int8)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    expected, expected_owner = legal_plays_batch(boards, dice)
    wide, wide_owner = legal_plays_batch(boards.astype(np.int64), dice)
    spaced = np.zeros((len(boards), 52), dtype=np.int8)
    spaced[:, ::2] = boards
    strided, strided_owner = legal_plays_batch(spaced[:, ::2], dice)
    for rows, owner in ((wide, wide_owner), (strided, strided_owner)):
        assert np.array_equal(rows, expected)
        assert np.array_equal(owner, expected_owner)


def _as_tuples(rows: np.ndarray) -> list[tuple[int, ...]]:
    return [tuple(r) for r in rows.astype(int).tolist()]


@pytest.mark.parametrize("rules", [Rules(), Rules("000"), Rules("002")])
def test_sorted_rows_are_in_signed_lexicographic_order_and_match_unsorted(rules):
    """Each position's rows strictly increase under Python's tuple order on signed ints.

    The positions include doubles with well over a hundred plays (scattered
    positions), so both short and long sorts are exercised.
    """
    rng = np.random.default_rng(7)
    boards = mixed_positions(rng, 600).astype(np.int8)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    dice[::3, 1] = dice[::3, 0]  # a third doubles
    rows, owner = legal_plays_batch(boards, dice, rules, sort=True)
    plain, plain_owner = legal_plays_batch(boards, dice, rules, sort=False)
    assert np.array_equal(owner, plain_owner)
    counts = np.bincount(owner, minlength=len(boards))
    assert counts.max() > 100
    start = 0
    for count in counts:
        mine = _as_tuples(rows[start : start + count])
        assert mine == sorted(mine)
        assert len(set(mine)) == count  # distinct, so strictly increasing
        assert set(mine) == set(_as_tuples(plain[start : start + count]))
        start += count


def test_results_are_new_arrays_not_views_of_reused_buffers():
    """A result stays unchanged after later calls (serial and parallel sizes) and owns its memory."""
    rng = np.random.default_rng(3)
    boards = mixed_positions(rng, 600).astype(np.int8)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    for n in (1, 40, 600):
        rows, owner = legal_plays_batch(boards[:n], dice[:n])
        kept = rows.copy(), owner.copy()
        legal_plays_batch(boards[::-1].copy(), dice[::-1].copy())
        legal_plays_batch(boards[:n], (dice[:n] % 6) + 1)
        assert np.array_equal(rows, kept[0]) and np.array_equal(owner, kept[1])
        ws = movegen._workspace()
        assert not np.shares_memory(rows, ws.out) and not np.shares_memory(rows, ws.entries)
        assert rows.flags.c_contiguous and rows.dtype == np.int8 and owner.dtype == np.int64


def test_serial_kernel_grows_a_too_small_output_buffer():
    """With a one-row buffer the serial kernel still returns every position's plays, in order."""
    rng = np.random.default_rng(8)
    boards = mixed_positions(rng, 60).astype(np.int8)
    dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
    ws = movegen._workspace()
    tiny = np.empty((1, 26), dtype=np.int8)
    rows, owner = movegen._batch(boards, dice, 0, True, movegen.ZOBRIST, ws.views(0), tiny)
    expected = [legal_plays(b, d) for b, d in zip(boards, dice, strict=True)]
    assert np.array_equal(rows, np.concatenate(expected))
    assert np.array_equal(owner, np.repeat(np.arange(len(boards)), [len(e) for e in expected]))


def test_parallel_kernel_reports_an_overflowing_chunk():
    """Chunks that do not fit their output rows give ``ok = False`` (the caller then runs the serial kernel)."""
    boards = np.repeat(starting_board()[None], 8, axis=0)
    dice = np.array([[1, 1]] * 8, dtype=np.int8)
    plays = legal_plays(starting_board(), (1, 1))
    n = len(plays)
    ws = movegen._workspace()
    threads = min(2, ws.threads)
    small = np.empty((ws.threads, n, 26), dtype=np.int8)  # room for one position's plays per chunk
    _, _, ok = movegen._batch_parallel(boards, dice, 0, True, movegen.ZOBRIST, ws.arrays(), small, threads)
    assert not ok
    room = np.empty((ws.threads, 8 * n, 26), dtype=np.int8)
    rows, owner, ok = movegen._batch_parallel(
        boards, dice, 0, True, movegen.ZOBRIST, ws.arrays(), room, threads
    )
    assert ok
    assert np.array_equal(rows, np.tile(plays, (8, 1)))
    assert np.array_equal(owner, np.repeat(np.arange(8), n))


def test_random_games_do_not_depend_on_the_thread_count():
    """The same seed gives the same games on one thread and on all of numba's threads."""
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = random_games(64, np.random.default_rng(21), Rules("002"))
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = random_games(64, np.random.default_rng(21), Rules("002"))
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one[0], many[0]) and np.array_equal(one[1], many[1])
    assert set(np.abs(one[0]).tolist()) <= {1, 2, 3}  # RULES.md §6: single, gammon, backgammon


# A position where the search finds sequences of several classes (RULES.md §3.4), so only some
# recorded afterstates are legal plays: the mover has a checker on the bar and blots to hit.
_MIXED_CLASSES = np.array(
    [0, -1, 1, 0, 0, -1, 3, 0, 3, 0, 0, 0, -4, 5, -1, 0, 0, -2, 0, -6, 0, 0, 0, 0, 2, 1], dtype=np.int8
)


@pytest.mark.parametrize(
    ("board", "dice", "rules"),
    [
        (starting_board(), (6, 5), Rules()),  # one class found: every afterstate is a play
        (starting_board(), (2, 2), Rules()),
        (_MIXED_CLASSES, (3, 3), Rules()),  # sequences of 2, 3 and 4 dice found, only 4-dice plays legal
        (_MIXED_CLASSES, (6, 3), Rules()),  # the unchanged board (class 0) and both-dice plays
        (_MIXED_CLASSES, (2, 1), Rules("000")),  # Iranian rules: plays breaking the rule dropped
        (_MIXED_CLASSES, (4, 4), Rules("002")),
    ],
)
def test_random_games_pick_every_distinct_play_equally_often(board, dice, rules):
    """random_games' pick is uniform over the M distinct legal plays: each with probability 1/M.

    RULES.md §3.5: a play is identified by its resulting position. 300·M picks
    (seeded) must hit every play of :func:`legal_plays` and nothing else, with
    a chi-square statistic below df + 6·sqrt(2·df) (df = M - 1; the normal
    approximation puts a uniform pick above it with probability about 1e-6).
    """
    plays = _as_tuples(legal_plays(board, dice, rules))
    m = len(plays)
    assert m >= 4
    n = 300 * m
    ws = movegen._workspace()
    picks = movegen._random_plays(
        np.ascontiguousarray(board, dtype=np.int8),
        dice[0],
        dice[1],
        rules.code,
        movegen.ZOBRIST,
        ws.views(0),
        99,
        n,
    )
    index = {row: k for k, row in enumerate(plays)}
    counts = np.zeros(m)
    for row in _as_tuples(picks):
        assert row in index, "picked a position that is not a legal play"
        counts[index[row]] += 1
    assert counts.min() > 0
    chi2 = float(((counts - 300) ** 2 / 300).sum())
    df = m - 1
    assert chi2 < df + 6 * np.sqrt(2 * df)


@pytest.mark.parametrize("rules", [Rules(), Rules("000"), Rules("002")])
def test_random_games_pick_only_legal_plays(rules):
    """Over many positions and rolls (a third doubles), every pick is one of legal_plays' rows."""
    rng = np.random.default_rng(12)
    boards = mixed_positions(rng, 300).astype(np.int8)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    dice[::3, 1] = dice[::3, 0]
    ws = movegen._workspace()
    for k, (board, roll) in enumerate(zip(boards, dice, strict=True)):
        plays = set(_as_tuples(legal_plays(board, roll, rules)))
        picks = movegen._random_plays(board, roll[0], roll[1], rules.code, movegen.ZOBRIST, ws.views(0), k, 8)
        assert set(_as_tuples(picks)) <= plays


# ---------------------------------------------------------------- calls from several Python threads


def _in_threads(fn, n_threads: int = 2, timeout: float = 120.0) -> list:
    import threading

    results: list = [None] * n_threads
    errors: list = []

    def work(k: int) -> None:
        try:
            results[k] = fn()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a call never returned"
    assert not errors, errors
    return results


def test_concurrent_batches_from_python_threads_equal_one_call():
    # the kernels' per-thread buffers are shared by the process: concurrent calls must not mix them
    rng = np.random.default_rng(0)
    boards = mixed_positions(rng, 1200)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    ref = legal_plays_batch(boards, dice)

    def calls():
        return [legal_plays_batch(boards, dice) for _ in range(3)]

    for per_thread in _in_threads(calls):
        for out, owner in per_thread:
            np.testing.assert_array_equal(out, ref[0])
            np.testing.assert_array_equal(owner, ref[1])


def test_concurrent_random_games_from_python_threads_equal_one_call():
    ref = random_games(300, np.random.default_rng(42))
    for points, plies in _in_threads(lambda: random_games(300, np.random.default_rng(42))):
        np.testing.assert_array_equal(points, ref[0])
        np.testing.assert_array_equal(plies, ref[1])


def test_input_errors_keep_their_order_boards_dice_lengths_then_finished_games():
    finished = starting_board()
    finished[finished > 0] = 0  # the mover has borne off everything
    with pytest.raises(ValueError, match="each die must be 1..6, got 0"):
        legal_plays_batch(finished[None], [[0, 4]])
    with pytest.raises(ValueError, match="got 1 boards but 2 rolls"):
        legal_plays_batch(finished[None], [[1, 4], [2, 3]])
    with pytest.raises(ValueError, match="finished game"):
        legal_plays_batch(finished[None], [[1, 4]])


@numba.njit
def _compare_searches(boards, dice, zob, ws):
    """For each position: 1 if the standard-rule search and the general search (rule 0) record the same
    afterstates in the same order with the same class masks and classes, else 0."""
    ws = movegen.unowned_views(ws)
    entries, masks, stamp, b = ws[0], ws[2], ws[4], ws[8]
    same = np.zeros(boards.shape[0], dtype=np.int8)
    first = np.empty((movegen.ENTRY_CAPACITY, 26), dtype=np.int8)
    first_masks = np.empty((movegen.ENTRY_CAPACITY, 2), dtype=np.uint8)
    for i in range(boards.shape[0]):
        for k in range(26):
            b[k] = boards[i, k]
        h, occ, off, outside, blocks = movegen._board_summary(b, zob)
        d1, d2 = np.int64(dice[i, 0]), np.int64(dice[i, 1])  # the searches' compiled signature
        n1, union1 = movegen._search_turn(d1, d2, 0, zob, ws, h, occ, off, outside, blocks)
        first[:n1] = entries[:n1, :26]
        first_masks[:n1] = masks[:n1]
        stamp[0] += 1  # a new table tag, as _search_turn starts with
        n2, union2 = movegen._search_general(d1, d2, 0, zob, ws, h, occ, off, outside, blocks)
        ok = n1 == n2 and union1 == union2
        if ok:
            for e in range(n1):
                for k in range(26):
                    if first[e, k] != entries[e, k]:
                        ok = False
                if first_masks[e, 0] != masks[e, 0] or first_masks[e, 1] != masks[e, 1]:
                    ok = False
        for k in range(26):
            if b[k] != boards[i, k]:
                ok = False  # both searches must leave the board as they found it
        same[i] = ok
    return same


def test_nested_loop_searches_record_what_the_general_search_records():
    """On 3,000 mixed positions (random play, bear-offs, scattered) x all 36 rolls: same afterstates, order, classes."""
    boards = mixed_positions(np.random.default_rng(11), 3000)
    rolls = np.array([(i, j) for i in range(1, 7) for j in range(1, 7)], dtype=np.int8)
    all_boards = np.repeat(boards, len(rolls), axis=0)
    all_dice = np.tile(rolls, (len(boards), 1))
    with movegen.workspace_in_use() as ws:
        same = _compare_searches(all_boards, all_dice, movegen.ZOBRIST, ws.views(0))
    assert same.all(), f"{int((same == 0).sum())} positions differ, first: {all_boards[np.argmin(same)]}"


def test_a_child_forked_while_another_thread_generates_plays_can_generate_its_own():
    """The process's workspace lock held by another thread at a fork would never be released in the
    child: the child gets a fresh lock (review finding: the child hung)."""
    import os
    import threading

    from nard_ai.core import workspace

    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    legal_plays(starting_board(), (3, 1))
    held, release = threading.Event(), threading.Event()

    def hold():
        with workspace.workspace_in_use():
            held.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(30)
    try:
        pid = os.fork()
        if pid == 0:  # the child: generate plays, then leave at once
            try:
                ok = len(legal_plays(starting_board(), (3, 1))) == 16
            finally:
                os._exit(0 if ok else 1)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on the move generator's lock")
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        release.set()
        t.join()
