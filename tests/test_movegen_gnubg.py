"""``nard_ai.core.movegen`` and the reference against GNU Backgammon's move generator.

gnubg (through the ``gnubg_nn`` package) writes a position as two rows of 25
counts, each in its own player's numbering, column 24 = that player's bar;
``gnubg_nn.moves(board, die1, die2)`` takes ``(opponent row, mover row)`` -- row
1 is the side on roll (RULES.md 1, "gnubg's two-row form") -- and returns one
position key per distinct afterstate, still in the mover's orientation
(decoded with ``gnubg_nn.boardfromkey``). No legal move: an empty tuple, which
we read as the unchanged board.

One documented difference: RULES.md 3.6 says a play that bears off the mover's
last checker ends the game and the dice it did not need are not owed. gnubg
instead still demands the most dice, so with a lone checker on 5, a blot on
3 and 5-2 it allows only 5/3*/off, where we also allow 5/off. Both sets then
hold only finished positions (the mover has no checker left); every other
afterstate must be identical. The tests check exactly that and nothing looser.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference
from conftest import (
    ALL_ROLLS,
    describe_difference,
    from_gnubg,
    import_movegen,
    mixed_positions,
    play_set,
    random_bearoff_positions,
    random_play_positions,
    to_gnubg,
)

from nard_ai.core.board import pos, starting_board

gnubg_nn = pytest.importorskip(
    "gnubg_nn", reason="gnubg_nn (GNU Backgammon's engine, pip install gnubg-nn) is not installed"
)

N_POSITIONS = 10_000
ROLLS = np.array(ALL_ROLLS, dtype=np.int8)


def gnubg_afterstates(board: np.ndarray, dice) -> np.ndarray:
    """gnubg's legal afterstates of one position as ``(M, 26)`` int8 (mover's view), sorted."""
    afterstates, _ = gnubg_legal_plays_batch(np.asarray(board, dtype=np.int8)[None], np.asarray([dice]))
    return afterstates


def decode_position_keys(keys: list[str]) -> np.ndarray:
    """gnubg position keys -> ``(K, 2, 25)`` counts, as ``gnubg_nn.boardfromkey`` gives them.

    A key is 20 letters ``'A' + nibble``: 10 bytes, high nibble first, holding
    a bit string read least significant bit first: for row 0 then row 1, for
    each of the 25 columns, one 1-bit per checker followed by a 0-bit. The
    counts are the gaps between the first 50 zero bits (checked against
    ``boardfromkey`` in the round-trip test).
    """
    nibbles = np.frombuffer("".join(keys).encode("ascii"), dtype=np.uint8).reshape(-1, 10, 2) - ord("A")
    key_bytes = ((nibbles[:, :, 0] << 4) | nibbles[:, :, 1]).astype(np.uint8)
    bits = np.unpackbits(key_bytes, axis=1, bitorder="little")
    zeros = np.argsort(bits, axis=1, kind="stable")[:, :50].astype(np.int16)  # the first 50 zero bits
    return (np.diff(zeros, axis=1, prepend=-1) - 1).reshape(-1, 2, 25)


def gnubg_legal_plays_batch(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gnubg's legal plays, shaped like ``movegen.legal_plays_batch``'s result.

    Returns:
        ``(afterstates, owner)``: ``(M, 26)`` int8 in our layout (mover's view),
        sorted by owner and then lexicographically; ``(M,)`` int64 owner. A
        turn with no legal move (gnubg returns no key) gives the unchanged board.
    """
    boards = np.asarray(boards, dtype=np.int64)
    # gnubg's rows (RULES.md 1): the mover's row is column i = our index i + 1, then its bar;
    # the opponent's column q - 1 is its point q = our index 25 - q, then its bar (our index 0).
    mover_rows = np.concatenate([np.clip(boards[:, 1:25], 0, None), boards[:, 25:26]], axis=1).tolist()
    opp_rows = np.concatenate([np.clip(-boards[:, 24:0:-1], 0, None), -boards[:, 0:1]], axis=1).tolist()
    keys, counts = [], []
    for opp_row, mover_row, (d1, d2) in zip(opp_rows, mover_rows, np.asarray(dice).tolist(), strict=True):
        turn_keys = gnubg_nn.moves([opp_row, mover_row], d1, d2)
        keys.extend(turn_keys)
        counts.append(len(turn_keys))
    counts = np.array(counts)
    rows = decode_position_keys(keys) if keys else np.zeros((0, 2, 25), dtype=np.int16)
    decoded = np.empty((len(rows), 26), dtype=np.int8)
    # Our index p (1..24) is the mover's point p and the opponent's point 25 - p.
    decoded[:, 1:25] = rows[:, 1, :24] - rows[:, 0, 23::-1]
    decoded[:, 25] = rows[:, 1, 24]
    decoded[:, 0] = -rows[:, 0, 24]
    stuck = np.flatnonzero(counts == 0)
    afterstates = np.concatenate([decoded, boards[stuck].astype(np.int8)])
    owner = np.concatenate([np.repeat(np.arange(len(boards)), counts), stuck])
    order = np.lexsort([afterstates[:, i] for i in range(25, -1, -1)] + [owner])
    return afterstates[order], owner[order].astype(np.int64)


def _finished(plays: set) -> set:
    """The afterstates in which the mover has borne off every checker."""
    return {b for b in plays if max(b[1:26]) <= 0}


def same_up_to_last_checker_rule(ours: set, gnubg: set) -> bool:
    """Equal sets, except that RULES.md 3.6 may add finished positions to gnubg's finished ones."""
    if ours == gnubg:
        return True
    ours_done, gnubg_done = _finished(ours), _finished(gnubg)
    return ours - ours_done == gnubg - gnubg_done and bool(gnubg_done) and gnubg_done <= ours_done


def test_gnubg_orientation_and_conversion_round_trip():
    """Our board <-> gnubg's rows: the starting position has gnubg's well-known Position ID."""
    start = starting_board()
    opp_row, mover_row = to_gnubg(start)
    assert gnubg_nn.position_id([list(opp_row), list(mover_row)]) == "4HPwATDgc/ABMA"
    rng = np.random.default_rng(3)
    for board in mixed_positions(rng, 300):
        assert np.array_equal(from_gnubg(to_gnubg(board)), board)
        rows = to_gnubg(board)
        key = gnubg_nn.key_of_board([list(rows[0]), list(rows[1])])
        assert np.array_equal(from_gnubg(gnubg_nn.boardfromkey(key)), board)
        assert np.array_equal(decode_position_keys([key])[0], np.array(gnubg_nn.boardfromkey(key)))
    # The vectorized decoder agrees with boardfromkey on many afterstate keys.
    start_rows = [list(r) for r in to_gnubg(start)]
    keys = [k for d1, d2 in ALL_ROLLS for k in gnubg_nn.moves(start_rows, d1, d2)]
    assert np.array_equal(decode_position_keys(keys), np.array([gnubg_nn.boardfromkey(k) for k in keys]))
    # An asymmetric check of who is on roll: all 15 of the mover's checkers on its 24-point,
    # the opponent's on its 6-point (our 19): 6-5 can only be played 24/18/13.
    board = pos(me={24: 15}, opp={6: 15})
    assert play_set(gnubg_afterstates(board, (6, 5))) == {reference.apply_moves(board, [(24, 18), (18, 13)])}


def test_gnubg_and_our_last_checker_rule_differ_only_as_documented():
    """RULES.md 3.6: lone checker on 5, opponent blot on 3, roll 5-2: we allow 5/off and
    5/3*/off, gnubg only 5/3*/off (it still wants both dice)."""
    board = pos(me={5: 1}, opp={22: 1, 6: 14})
    ours = set(reference.legal_play_set(reference.as_tuple(board), 5, 2))
    theirs = play_set(gnubg_afterstates(board, (5, 2)))
    assert theirs == {reference.apply_moves(board, [(5, 3), (3, 0)])}
    assert ours == theirs | {reference.apply_moves(board, [(5, 0)])}
    assert same_up_to_last_checker_rule(ours, theirs)


def test_reference_agrees_with_gnubg_on_random_positions():
    """The slow reference, checked independently: 800 positions x 21 rolls against gnubg."""
    rng = np.random.default_rng(11)
    boards = mixed_positions(rng, 800)
    failures, differ_by_rule = [], 0
    for board in boards:
        bt = reference.as_tuple(board)
        for roll in ALL_ROLLS:
            ours = set(reference.legal_play_set(bt, *roll))
            theirs = play_set(gnubg_afterstates(board, roll))
            differ_by_rule += ours != theirs
            if not same_up_to_last_checker_rule(ours, theirs):
                failures.append(describe_difference(board, roll, theirs, ours))
    assert not failures, f"{len(failures)} turns differ from gnubg:\n" + "\n".join(failures[:6])
    assert differ_by_rule < 0.01 * len(boards) * 21


def test_movegen_equals_gnubg_on_10000_positions_times_21_rolls():
    """10,000 positions (6,000 from random play, 4,000 bear-off-heavy) x 21 rolls:
    identical afterstate sets, apart from RULES.md 3.6's extra finished positions."""
    movegen = import_movegen()
    rng = np.random.default_rng(20240612)
    boards = np.concatenate([random_play_positions(rng, 6_000), random_bearoff_positions(rng, 4_000)])
    assert len(boards) == N_POSITIONS
    failures, compared, differ_by_rule = [], 0, 0
    for start in range(0, len(boards), 500):
        chunk = boards[start : start + 500]
        reps = np.repeat(chunk, len(ROLLS), axis=0)
        dice = np.tile(ROLLS, (len(chunk), 1))
        ours, ours_owner = movegen.legal_plays_batch(reps, dice)
        theirs, theirs_owner = gnubg_legal_plays_batch(reps, dice)
        compared += len(reps)
        if np.array_equal(ours_owner, theirs_owner) and np.array_equal(ours, theirs):
            continue
        ours_bounds = np.searchsorted(ours_owner, np.arange(len(reps) + 1))
        theirs_bounds = np.searchsorted(theirs_owner, np.arange(len(reps) + 1))
        for k in range(len(reps)):
            ours_k = ours[ours_bounds[k] : ours_bounds[k + 1]]
            theirs_k = theirs[theirs_bounds[k] : theirs_bounds[k + 1]]
            if ours_k.tobytes() == theirs_k.tobytes():
                continue
            ours_set, theirs_set = play_set(ours_k), play_set(theirs_k)
            differ_by_rule += ours_set != theirs_set
            if not same_up_to_last_checker_rule(ours_set, theirs_set):
                roll = ALL_ROLLS[k % len(ROLLS)]
                failures.append(describe_difference(reps[k], roll, theirs_set, ours_set))
    assert compared == N_POSITIONS * 21
    assert not failures, f"{len(failures)} of {compared} turns differ from gnubg:\n" + "\n".join(failures[:6])
    assert differ_by_rule < 0.01 * compared
