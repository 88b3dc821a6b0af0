"""``nard_ai.core.movegen`` against the slow reference (``tests/reference.py``).

* Standard rules: 10,000 random positions (random play, bear-off-heavy,
  scattered) x all 21 rolls = 210,000 turns, every afterstate set compared.
* Iranian rule, both forms (RULES.md 7): 1,500 positions with opponent blots
  in the mover's home board plus 500 random ones (2,000 per form), x all 21 rolls.

The reference is pure Python, so it runs in worker processes, each returning
a digest (BLAKE2b of the sorted afterstates as int8 bytes) per turn; the
generator's sorted rows are digested the same way. A digest mismatch is
re-checked in this process as sets, and reported with the board, the dice
and the differing afterstates (so a mere ordering bug is told apart from a
wrong set).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pytest
import reference
from conftest import (
    ALL_ROLLS,
    describe_difference,
    import_movegen,
    mixed_positions,
    play_set,
    random_home_hit_positions,
)

from nard_ai.core.rules import Rules

N_STANDARD = 10_000
N_IRANIAN_HOME_HITS = 1_500
N_IRANIAN_RANDOM = 500
CHUNK = 250  # positions per worker task
ROLLS = np.array(ALL_ROLLS, dtype=np.int8)


def _digest(sorted_rows_int8: bytes) -> bytes:
    return hashlib.blake2b(sorted_rows_int8, digest_size=8).digest()


def _reference_digests(boards: np.ndarray, form: str | None) -> list[bytes]:
    """Digests of the reference's plays for each board x each of the 21 rolls (worker side)."""
    out = []
    for board in boards:
        bt = reference.as_tuple(board)
        for d1, d2 in ALL_ROLLS:
            rows = sorted(reference.legal_play_set(bt, d1, d2, form))
            out.append(_digest(np.array(rows, dtype=np.int8).tobytes()))
        reference.legal_play_set.cache_clear()
        if reference.single_die_moves.cache_info().currsize > 500_000:
            reference.single_die_moves.cache_clear()
    return out


def _all_reference_digests(boards: np.ndarray, form: str | None) -> list[bytes]:
    chunks = [boards[i : i + CHUNK] for i in range(0, len(boards), CHUNK)]
    workers = max(1, min(4, os.cpu_count() or 1))
    try:
        context = get_context("fork")  # workers inherit the imported modules; no re-import
    except ValueError:  # no fork on this platform
        workers = 1
    if workers == 1:
        return [d for chunk in chunks for d in _reference_digests(chunk, form)]
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        results = pool.map(_reference_digests, chunks, [form] * len(chunks))
        return [d for r in results for d in r]


def _movegen_turns(movegen, boards: np.ndarray, rules: Rules):
    """Yield (position index, roll, sorted afterstates) for each board x each roll."""
    for start in range(0, len(boards), CHUNK):
        chunk = boards[start : start + CHUNK]
        reps = np.repeat(chunk, len(ROLLS), axis=0)
        dice = np.tile(ROLLS, (len(chunk), 1))
        afterstates, owner = movegen.legal_plays_batch(reps, dice, rules)
        assert afterstates.dtype == np.int8 and afterstates.shape[1:] == (26,)
        assert owner.dtype == np.int64 and len(owner) == len(afterstates)
        assert np.all(np.diff(owner) >= 0), "owner must be ascending"
        bounds = np.searchsorted(owner, np.arange(len(reps) + 1))
        for k in range(len(reps)):
            yield start + k // len(ROLLS), ALL_ROLLS[k % len(ROLLS)], afterstates[bounds[k] : bounds[k + 1]]


def _compare(boards: np.ndarray, rules: Rules) -> tuple[list[str], int]:
    """Compare every turn; return (failure reports, number of turns compared)."""
    movegen = import_movegen()
    form = rules.no_hit_and_continue
    expected = _all_reference_digests(boards, form)
    failures = []
    n = 0
    for (i, roll, rows), want in zip(_movegen_turns(movegen, boards, rules), expected, strict=True):
        n += 1
        if len(rows) == 0:
            failures.append(f"board={boards[i].tolist()} dice={roll}: no row (a turn always has one)")
            continue
        if _digest(np.ascontiguousarray(rows).tobytes()) == want:
            continue
        ref = set(reference.legal_play_set(reference.as_tuple(boards[i]), *roll, form))
        got = play_set(rows)
        if got == ref:
            problem = "duplicate rows" if len(rows) != len(got) else "rows not sorted lexicographically"
            failures.append(f"board={boards[i].tolist()} dice={roll}: right set, {problem}")
        else:
            failures.append(describe_difference(boards[i], roll, ref, got))
    return failures, n


def _report(failures: list[str], n: int, what: str) -> str:
    return f"{len(failures)} of {n} turns differ from the reference ({what}); first ones:\n" + "\n".join(
        failures[:8]
    )


@pytest.fixture(scope="module")
def standard_positions() -> np.ndarray:
    return mixed_positions(np.random.default_rng(20240611), N_STANDARD)


def test_movegen_equals_reference_on_10000_positions_times_21_rolls(standard_positions):
    """Standard rules (RULES.md 3-5): 10,000 positions x 21 rolls, identical afterstate sets."""
    failures, n = _compare(standard_positions, Rules())
    assert n == N_STANDARD * 21
    assert not failures, _report(failures, n, "standard rules")


@pytest.mark.parametrize("form", ["000", "002"])
def test_movegen_equals_reference_under_the_iranian_rule(form):
    """RULES.md 7, both forms: positions with blots in the mover's home board x 21 rolls."""
    rng = np.random.default_rng(7 if form == "000" else 8)
    boards = np.concatenate(
        [random_home_hit_positions(rng, N_IRANIAN_HOME_HITS), mixed_positions(rng, N_IRANIAN_RANDOM)]
    )
    failures, n = _compare(boards, Rules.iranian(form))
    assert not failures, _report(failures, n, f"Iranian form {form}")


def test_iranian_positions_do_exercise_the_rule():
    """Guard for the test above: in the home-hit positions the rule removes plays often."""
    boards = random_home_hit_positions(np.random.default_rng(7), 200)
    changed = {"000": 0, "002": 0}
    for board in boards:
        bt = reference.as_tuple(board)
        for roll in ALL_ROLLS:
            standard = reference.legal_play_set(bt, *roll)
            for form in changed:
                changed[form] += reference.legal_play_set(bt, *roll, form) != standard
    assert changed["000"] > 300 and changed["002"] > 100, changed


def test_single_legal_plays_matches_the_batch_and_is_sorted_and_distinct(standard_positions):
    """The contract of ``legal_plays``: ``(M, 26)`` int8, distinct rows sorted lexicographically,
    the same plays as ``legal_plays_batch``; the batch's owner indexes its input."""
    movegen = import_movegen()
    boards = standard_positions[:150]
    for rules in (Rules(), Rules.iranian("000"), Rules.iranian("002")):
        reps = np.repeat(boards, len(ROLLS), axis=0)
        dice = np.tile(ROLLS, (len(boards), 1))
        afterstates, owner = movegen.legal_plays_batch(reps, dice, rules)
        assert set(np.unique(owner).tolist()) == set(range(len(reps)))
        for k in range(0, len(reps), 7):
            single = movegen.legal_plays(reps[k], tuple(int(x) for x in dice[k]), rules)
            assert single.dtype == np.int8 and single.ndim == 2 and single.shape[1] == 26
            rows = [tuple(r) for r in single.tolist()]
            assert rows == sorted(set(rows)), "rows must be distinct and sorted lexicographically"
            assert np.array_equal(single, afterstates[owner == k])
            # Dice order does not matter.
            swapped = movegen.legal_plays(reps[k], (int(dice[k][1]), int(dice[k][0])), rules)
            assert np.array_equal(single, swapped)
