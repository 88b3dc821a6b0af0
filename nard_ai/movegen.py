"""Batched legal-play generation (RULES.md sections 3-5 and 7), compiled with numba.

Boards follow :mod:`nard_ai.board` (``(26,)`` int8, the mover's view). A *play*
is identified by the position it produces (RULES.md §3.5), so the generator
returns **afterstates**: the boards just after the mover's whole turn, still
in the mover's view (not swapped).

How a turn is enumerated
------------------------
A depth-first search over single-die moves, with the board changed in place
and undone on the way back:

* non-doubles: both orders of the two dice are searched;
* doubles: up to four moves of the same number, the moves of one sequence
  taken in non-increasing order of source point. Any set of same-die moves
  that is legal in some order is legal in that order (checkers only move
  down, opposing points only open as blots are hit, moves from outside the
  home board come before bear-offs), so nothing is lost and far fewer
  duplicate sequences are visited. Under seed 002's Iranian rule the order
  decides whether a hitter moves onto a held point, so there every order is
  searched.
* non-doubles, second order: a second move that was already legal in the
  original position commutes with the first, so its afterstate was found by
  the first order and it is not searched again (standard rules only).

Every leaf (no further die playable, all dice used, or the mover's last
checker borne off, RULES.md §3.6) is recorded once per distinct afterstate
(Zobrist hash plus a byte compare), with the *class* of the sequence that
reached it. The class orders sequences by RULES.md §3.4:

* non-doubles: 3 = both dice, 2 = the larger die only, 1 = the smaller die
  only, 0 = no move;
* doubles: the number of dice used, 0..4.

The legal plays are the afterstates reached by a sequence of the highest
class present (so "use as many dice as possible" and "if only one die can be
played, play the larger"). With the Iranian rule on (RULES.md §7), a play
respects the rule if a sequence of that class reaching it does; when some
legal play respects it, only those remain.
"""

from __future__ import annotations

import os

# GNU OpenMP threads spin while they wait by default; on a shared 2-core
# machine that makes every parallel call wait for a descheduled spinner
# (measured here: 20x slower with one core busy). Sleeping waiters cost
# about 10% on an idle machine. Set OMP_WAIT_POLICY=ACTIVE to override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402
import numpy as np
from numba import njit

from .board import BAR, BOARD_SIZE, NUM_CHECKERS, validate_board, validate_dice
from .rules import NO_HIT_AND_CONTINUE_000, NO_HIT_AND_CONTINUE_002, Rules

# The most distinct afterstates kept while enumerating one position (all
# classes together). The largest number of legal plays known for backgammon
# is a few thousand (doubles with many checkers spread out), far below this.
ENTRY_CAPACITY = 1 << 14
_TABLE_BITS = 15
_TABLE_SIZE = 1 << _TABLE_BITS


def _zobrist_table() -> np.ndarray:
    """Fixed pseudo-random 64-bit keys, one per (index, count) pair (splitmix64)."""
    keys = np.empty((BOARD_SIZE, 32), dtype=np.uint64)
    state = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for i in range(BOARD_SIZE):
            for j in range(32):
                state = np.uint64(state + np.uint64(0x9E3779B97F4A7C15))
                z = state
                z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                keys[i, j] = z ^ (z >> np.uint64(31))
    return keys


ZOBRIST = _zobrist_table()


class Workspace:
    """Scratch buffers of the generator, one set per thread, reused across calls.

    Every array has a leading axis of length ``threads``; :meth:`views` gives
    the tuple of one thread's buffers that the kernels take.
    """

    def __init__(self, threads: int = 1) -> None:
        t = threads
        self.threads = t
        self.entries = np.empty((t, ENTRY_CAPACITY, BOARD_SIZE), dtype=np.int8)  # distinct leaves
        self.hashes = np.empty((t, ENTRY_CAPACITY), dtype=np.uint64)
        self.masks = np.empty((t, ENTRY_CAPACITY, 2), dtype=np.uint8)  # [class mask, respecting-class mask]
        self.table = np.zeros((t, _TABLE_SIZE), dtype=np.int64)  # (stamp << 32) | entry index
        # Small per-thread buffers are padded to separate cache lines (no false sharing).
        self.stamp = np.zeros((t, 16), dtype=np.int64)
        self.keep = np.empty((t, ENTRY_CAPACITY), dtype=np.int64)  # indices of the legal plays
        self.stack = np.zeros((t, 16, 5), dtype=np.int64)  # the DFS stack, one column per depth
        self.tags = np.zeros((t, 128), dtype=np.int8)  # Iranian rule: tagged hitters per point
        self.board = np.zeros((t, 128), dtype=np.int8)
        self.sort_keys = np.empty((t, ENTRY_CAPACITY, 4), dtype=np.uint64)
        self.hash_stack = np.zeros((t, 16), dtype=np.uint64)  # the hash before each depth's move

    def arrays(self) -> tuple:
        """All buffers, thread axis first (for the parallel kernels)."""
        return (
            self.entries, self.hashes, self.masks, self.table, self.stamp,
            self.keep, self.stack, self.tags, self.board, self.sort_keys, self.hash_stack,
        )

    def views(self, thread: int = 0) -> tuple:
        """One thread's buffers (for the serial kernels); the same views as ``_thread_views``."""
        t = thread
        return (
            self.entries[t], self.hashes[t], self.masks[t], self.table[t], self.stamp[t][:1], self.keep[t],
            self.stack[t][:10], self.tags[t][:BOARD_SIZE], self.board[t][:BOARD_SIZE], self.sort_keys[t],
            self.hash_stack[t][:5],
        )


@njit(cache=True, inline="always")
def _thread_views(wsa, t):
    return (
        wsa[0][t], wsa[1][t], wsa[2][t], wsa[3][t], wsa[4][t][:1], wsa[5][t],
        wsa[6][t][:10], wsa[7][t][:BOARD_SIZE], wsa[8][t][:BOARD_SIZE], wsa[9][t], wsa[10][t][:5],
    )


@njit(cache=True, inline="always")
def _set(b, i, v, h, zob):
    """Set ``b[i] = v`` and return the updated Zobrist hash."""
    h ^= zob[i, b[i] + 15] ^ zob[i, v + 15]
    b[i] = v
    return h


@njit(cache=True, inline="always")
def _record(b, h, cls, respects, entries, hashes, masks, table, stamp, count):
    """Record a leaf afterstate of class ``cls``; returns the new number of entries."""
    slot = np.int64(h >> np.uint64(64 - _TABLE_BITS))
    tag = stamp << 32
    while True:
        t = table[slot]
        if (t & ~np.int64(0xFFFFFFFF)) != tag:
            break
        e = t & 0xFFFFFFFF
        if hashes[e] == h:
            same = True
            for i in range(BOARD_SIZE):
                if entries[e, i] != b[i]:
                    same = False
                    break
            if same:
                masks[e, 0] |= np.uint8(1 << cls)
                if respects:
                    masks[e, 1] |= np.uint8(1 << cls)
                return count
        slot = (slot + 1) & (_TABLE_SIZE - 1)
    if count >= ENTRY_CAPACITY:
        raise RuntimeError("legal-play enumeration overflowed its entry buffer")
    table[slot] = tag | count
    hashes[count] = h
    for i in range(BOARD_SIZE):
        entries[count, i] = b[i]
    masks[count, 0] = np.uint8(1 << cls)
    masks[count, 1] = np.uint8(1 << cls) if respects else np.uint8(0)
    return count + 1


# Rows of the DFS stack (one column per depth).
_NEXT_SRC, _NEXT_VAR, _MOVED, _SRC, _DST, _HIT, _TAG, _TAG_DST, _VIOL = range(9)


@njit(cache=True)
def _search(b, seq, ndice, is_double, larger, rule, zob, ws, count, skip_mask):
    """Depth-first search over the dice ``seq[:ndice]``, recording leaves.

    ``skip_mask`` (non-doubles, second order only): a bit per source point
    whose move with ``seq[1]`` was legal in the original position. Such a
    second move commutes with the first (same afterstate in the other
    order, already searched), so it is not searched again, only noted as
    "a move exists here" so that its parent is not taken for a leaf.

    Returns:
        ``(count, root_mask)``: the new entry count and a bit per source
        point with a legal first move (used to build ``skip_mask``).

    ``b`` is modified in place and restored before returning.
    """
    entries, hashes, masks, table, stamp_arr, _keep, st, tags, _board, _keys, hst = ws
    stamp = stamp_arr[0]
    if rule != 0:
        tags[:] = 0

    h = np.uint64(0)
    on_board = 0
    outside = 0  # mover checkers on the bar or on points 7..24 (RULES.md §5: bear off only when 0)
    for i in range(BOARD_SIZE):
        v = b[i]
        h ^= zob[i, v + 15]
        if v > 0:
            on_board += v
            if i > 6:
                outside += v
    off = NUM_CHECKERS - on_board
    violations = 0

    root_mask = np.int64(0)
    depth = 0
    st[_NEXT_SRC, 0] = BAR
    st[_NEXT_VAR, 0] = 0
    st[_MOVED, 0] = 0
    while True:
        found = False
        if depth < ndice and off < NUM_CHECKERS:
            die = seq[depth]
            src = st[_NEXT_SRC, depth]
            var = st[_NEXT_VAR, depth]
            while src >= 1:
                if src != BAR and b[BAR] > 0:
                    break  # RULES.md §4: checkers on the bar enter before any other move
                if b[src] > 0:
                    ok = False
                    if src == BAR:
                        dst = BAR - die  # die d enters on the mover's point 25 - d
                        ok = b[dst] >= -1
                    else:
                        dst = src - die
                        if dst >= 1:
                            ok = b[dst] >= -1  # RULES.md §3.2: open unless 2+ opposing checkers
                        elif outside == 0:
                            ok = True  # exact bear-off from point d (RULES.md §5)
                            if dst < 0:
                                # Overshoot: only from the highest occupied point.
                                for p in range(src + 1, 7):
                                    if b[p] > 0:
                                        ok = False
                                        break
                    if ok and depth == 1 and (skip_mask >> src) & 1:
                        st[_MOVED, depth] = 1  # commutes with the first move: found by the other order
                        ok = False
                    if ok:
                        if depth == 0:
                            root_mask |= np.int64(1) << src
                        # Which checker moves (Iranian rule only): var 0 untagged, var 1 tagged.
                        use_tag = 0
                        viol = False
                        ntag = 0
                        if rule != 0:
                            ntag = tags[src]
                            if ntag > 0 and not (b[src] > ntag and var == 0):
                                use_tag = 1
                                if rule == NO_HIT_AND_CONTINUE_000:
                                    viol = True  # 000: the hitter may not leave its point
                                elif dst >= 1 and b[dst] > 0:
                                    viol = True  # 002: not onto a point the mover holds
                        hit = False
                        hst[depth] = h
                        h = _set(b, src, b[src] - 1, h, zob)
                        if dst >= 1:
                            if b[dst] == -1:
                                hit = True
                                h = _set(b, dst, 1, h, zob)
                                h = _set(b, 0, b[0] - 1, h, zob)
                            else:
                                h = _set(b, dst, b[dst] + 1, h, zob)
                        else:
                            off += 1
                        if src > 6 and dst <= 6:
                            outside -= 1
                        tag_dst = 0
                        if rule != 0:
                            if use_tag == 1:
                                tags[src] -= 1
                            if dst >= 1 and ((hit and dst <= 6) or (use_tag == 1 and rule == NO_HIT_AND_CONTINUE_002)):
                                tags[dst] += 1
                                tag_dst = 1
                            if viol:
                                violations += 1
                        st[_SRC, depth] = src
                        st[_DST, depth] = dst
                        st[_HIT, depth] = hit
                        st[_TAG, depth] = use_tag
                        st[_TAG_DST, depth] = tag_dst
                        st[_VIOL, depth] = viol
                        # Resume point here: the tagged-checker variant (002 only), or the next source.
                        if rule == NO_HIT_AND_CONTINUE_002 and use_tag == 0 and ntag > 0:
                            st[_NEXT_SRC, depth] = src
                            st[_NEXT_VAR, depth] = 1
                        else:
                            st[_NEXT_SRC, depth] = src - 1
                            st[_NEXT_VAR, depth] = 0
                        st[_MOVED, depth] = 1
                        found = True
                        break
                src -= 1
                var = 0
        if found:
            depth += 1
            # Doubles: non-increasing source order; non-doubles: any source. Under
            # seed 002's rule the order matters (a point the hitter would move onto
            # may be vacated first), so doubles are searched in every order there.
            ordered = is_double and rule != NO_HIT_AND_CONTINUE_002
            st[_NEXT_SRC, depth] = st[_SRC, depth - 1] if ordered else BAR
            st[_NEXT_VAR, depth] = 0
            st[_MOVED, depth] = 0
            continue
        # No (further) move from this node: a leaf unless a move was made from it.
        if st[_MOVED, depth] == 0:
            if off == NUM_CHECKERS:
                cls = 4 if is_double else 3  # RULES.md §3.6: the last checker off uses every die
            elif is_double:
                cls = depth
            elif depth == 2:
                cls = 3
            elif depth == 1:
                cls = 2 if seq[0] == larger else 1
            else:
                cls = 0
            count = _record(b, h, cls, violations == 0, entries, hashes, masks, table, stamp, count)
        if depth == 0:
            break
        # Undo the move that led here.
        depth -= 1
        src = st[_SRC, depth]
        dst = st[_DST, depth]
        if dst >= 1:
            if st[_HIT, depth]:
                b[dst] = -1
                b[0] += 1
            else:
                b[dst] -= 1
        else:
            off -= 1
        b[src] += 1
        h = hst[depth]
        if src > 6 and dst <= 6:
            outside += 1
        if rule != 0:
            if st[_TAG_DST, depth] == 1:
                tags[dst] -= 1
            if st[_TAG, depth] == 1:
                tags[src] += 1
            if st[_VIOL, depth]:
                violations -= 1
    return count, root_mask


@njit(cache=True)
def _enumerate(board, d1, d2, rule, zob, ws):
    """Enumerate one position; the legal plays are left as indices ``ws.keep[:n]``; returns ``n``."""
    entries, hashes, masks, table, stamp_arr, keep, _st, _tags, b, _keys, _hst = ws
    stamp_arr[0] += 1
    if stamp_arr[0] >= 1 << 30:
        table[:] = 0
        stamp_arr[0] = 1
    b[:] = board
    seq = np.empty(4, dtype=np.int64)
    count = 0
    if d1 == d2:
        seq[:] = d1
        count, _ = _search(b, seq, 4, True, d1, rule, zob, ws, count, 0)
    else:
        larger = max(d1, d2)
        seq[0] = d1
        seq[1] = d2
        count, first_moves = _search(b, seq, 2, False, larger, rule, zob, ws, count, 0)
        seq[0] = d2
        seq[1] = d1
        # With the Iranian rule the order of moves matters (which checker hit), so search it all.
        skip = first_moves if rule == 0 else np.int64(0)
        count, _ = _search(b, seq, 2, False, larger, rule, zob, ws, count, skip)
    # The highest class present decides (RULES.md §3.4).
    union = 0
    for e in range(count):
        union |= masks[e, 0]
    best = 0
    for c in range(4, -1, -1):
        if union & (1 << c):
            best = c
            break
    bit = np.uint8(1 << best)
    any_respect = False
    if rule != 0:
        for e in range(count):
            if masks[e, 1] & bit:
                any_respect = True
                break
    nkeep = 0
    for e in range(count):
        if masks[e, 0] & bit:
            if any_respect and not (masks[e, 1] & bit):
                continue  # RULES.md §7.3: drop plays that break the rule when some respect it
            keep[nkeep] = e
            nkeep += 1
    return nkeep


@njit(cache=True)
def _sort_keep(entries, keep, keys, n):
    """Sort ``keep[:n]`` by the rows they point at: lexicographic, index 0 first, signed bytes."""
    for j in range(n):
        e = keep[j]
        for w in range(4):
            k = np.uint64(0)
            for i in range(w * 8, min(w * 8 + 8, BOARD_SIZE)):
                k = (k << np.uint64(8)) | np.uint64(entries[e, i] + 128)
            if w == 3:
                k <<= np.uint64(48)
            keys[e, w] = k
    for i in range(1, n):
        e = keep[i]
        j = i - 1
        while j >= 0:
            f = keep[j]
            less = False
            for w in range(4):
                if keys[e, w] != keys[f, w]:
                    less = keys[e, w] < keys[f, w]
                    break
            if not less:
                break
            keep[j + 1] = f
            j -= 1
        keep[j + 1] = e


@njit(cache=True)
def _batch(boards, dice, rule, sort, zob, ws):
    n = boards.shape[0]
    entries = ws[0]
    keep = ws[5]
    keys = ws[9]
    cap = max(64, n * 24)
    out = np.empty((cap, BOARD_SIZE), dtype=np.int8)
    owner = np.empty(cap, dtype=np.int64)
    m = 0
    for i in range(n):
        nkeep = _enumerate(boards[i], dice[i, 0], dice[i, 1], rule, zob, ws)
        if sort:
            _sort_keep(entries, keep, keys, nkeep)
        if m + nkeep > cap:
            newcap = max(cap * 2, m + nkeep)
            out2 = np.empty((newcap, BOARD_SIZE), dtype=np.int8)
            out2[:m] = out[:m]
            owner2 = np.empty(newcap, dtype=np.int64)
            owner2[:m] = owner[:m]
            out = out2
            owner = owner2
            cap = newcap
        for j in range(nkeep):
            e = keep[j]
            out[m] = entries[e]
            owner[m] = i
            m += 1
    return out[:m], owner[:m]


@njit(cache=True, parallel=True)
def _batch_parallel(boards, dice, rule, sort, zob, wsa, threads):
    """:func:`_batch` split into one chunk per thread.

    Each chunk writes into its own region of one buffer sized for 48 plays
    per position on average; returns ``ok = False`` if a chunk overflows its
    region (the caller then runs the serial kernel).
    """
    n = boards.shape[0]
    chunks = threads
    per = (n + chunks - 1) // chunks
    region = per * 48 + 4096
    out = np.empty((chunks * region, BOARD_SIZE), dtype=np.int8)
    owner = np.empty(chunks * region, dtype=np.int64)
    used = np.zeros(chunks, dtype=np.int64)
    overflow = np.zeros(chunks, dtype=np.bool_)
    for c in numba.prange(chunks):
        ws = _thread_views(wsa, numba.get_thread_id())
        entries = ws[0]
        keep = ws[5]
        keys = ws[9]
        base = c * region
        m = 0
        for i in range(c * per, min(n, (c + 1) * per)):
            nkeep = _enumerate(boards[i], dice[i, 0], dice[i, 1], rule, zob, ws)
            if m + nkeep > region:
                overflow[c] = True
                break
            if sort:
                _sort_keep(entries, keep, keys, nkeep)
            for j in range(nkeep):
                out[base + m] = entries[keep[j]]
                owner[base + m] = i
                m += 1
        used[c] = m
    if overflow.any():
        return out[:0], owner[:0], False
    total = used.sum()
    result = np.empty((total, BOARD_SIZE), dtype=np.int8)
    result_owner = np.empty(total, dtype=np.int64)
    pos = 0
    for c in range(chunks):
        result[pos : pos + used[c]] = out[c * region : c * region + used[c]]
        result_owner[pos : pos + used[c]] = owner[c * region : c * region + used[c]]
        pos += used[c]
    return result, result_owner, True


@njit(cache=True)
def _count_batch(boards, dice, rule, zob, ws):
    """Number of legal plays per position, without writing the afterstates out."""
    n = boards.shape[0]
    counts = np.empty(n, dtype=np.int64)
    for i in range(n):
        counts[i] = _enumerate(boards[i], dice[i, 0], dice[i, 1], rule, zob, ws)
    return counts


_WORKSPACE: Workspace | None = None
_WORKSPACE_PID = 0
PARALLEL_MIN_BATCH = 256  # smaller batches run on one thread (thread start-up costs more)


def _workspace() -> Workspace:
    """The process's workspace, one buffer set for every thread numba may start."""
    global _WORKSPACE, _WORKSPACE_PID
    if _WORKSPACE is None or _WORKSPACE_PID != os.getpid():
        _WORKSPACE = Workspace(numba.config.NUMBA_NUM_THREADS)
        _WORKSPACE_PID = os.getpid()
    return _WORKSPACE


def _parallel_threads() -> int:
    """Threads for the parallel kernels: numba's current setting, 1 in a forked child.

    GNU OpenMP (numba's default threading layer on Linux) is not fork-safe,
    so a process forked from one that may have started the thread pool runs
    the kernels on one thread.
    """
    if _PARENT_PID != os.getpid():
        return 1
    return numba.get_num_threads()


_PARENT_PID = os.getpid()


def _run_batch(boards: np.ndarray, dice: np.ndarray, rule: int, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    ws = _workspace()
    threads = _parallel_threads()
    if len(boards) >= PARALLEL_MIN_BATCH and threads > 1:
        out, owner, ok = _batch_parallel(boards, dice, rule, sort, ZOBRIST, ws.arrays(), threads)
        if ok:
            return out, owner
    return _batch(boards, dice, rule, sort, ZOBRIST, ws.views(0))


def legal_plays_batch(
    boards: np.ndarray, dice: np.ndarray, rules: Rules = Rules(), sort: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Legal plays of a batch of positions, as afterstates.

    Args:
        boards: ``(N, 26)`` int8 boards, each from its mover's view
            (:mod:`nard_ai.board`).
        dice: ``(N, 2)`` integers 1..6, the mover's roll for each board (order
            does not matter; equal numbers are doubles).
        rules: the rule settings (standard by default, RULES.md §7 variants).
        sort: sort each position's afterstates lexicographically (index 0
            first, as signed bytes); ``False`` keeps the generator's
            deterministic order and is a little faster.

    Returns:
        ``(afterstates, owner)``: ``(M, 26)`` int8 distinct afterstates, still
        in the mover's view (not swapped), and ``(M,)`` int64 the index of the
        input position each belongs to, ascending. Every position has at
        least one row: a turn with no legal move yields the unchanged board.

    Raises:
        ValueError: on invalid boards (see :func:`nard_ai.board.validate_board`),
            a game already over, or dice outside 1..6.
    """
    boards, dice, rules = _checked_batch(boards, dice, rules)
    return _run_batch(boards, dice, rules.code, sort)


def legal_plays(board: np.ndarray, dice, rules: Rules = Rules()) -> np.ndarray:
    """Legal plays of one position, as sorted distinct afterstates.

    Args:
        board: ``(26,)`` int8 board from the mover's view.
        dice: two integers 1..6 (a tuple, list or ``(2,)`` array).
        rules: the rule settings.

    Returns:
        ``(M, 26)`` int8 afterstates in the mover's view (not swapped), sorted
        lexicographically; ``M >= 1`` (no legal move gives the unchanged board).

    Raises:
        ValueError: on an invalid board, a finished game or bad dice.
    """
    board = validate_board(board)
    if board.ndim != 1:
        raise ValueError(f"legal_plays takes one board of shape (26,), got {board.shape}; use legal_plays_batch")
    dice = validate_dice(dice)
    if len(dice) != 1:
        raise ValueError(f"legal_plays takes one roll of two dice, got shape {np.shape(dice)}")
    plays, _ = legal_plays_batch(board[None], dice, rules, sort=True)
    return plays


def count_plays_batch(boards: np.ndarray, dice: np.ndarray, rules: Rules = Rules()) -> np.ndarray:
    """Number of legal plays of each position (``(N,)`` int64); same checks as :func:`legal_plays_batch`."""
    boards, dice, rules = _checked_batch(boards, dice, rules)
    return _count_batch(boards, dice, rules.code, ZOBRIST, _workspace().views(0))


def _checked_batch(boards, dice, rules) -> tuple[np.ndarray, np.ndarray, Rules]:
    """Validate the inputs of the batch entry points; returns ``(boards (N, 26), dice (N, 2), rules)``."""
    rules = Rules.check(rules)
    boards = validate_board(boards)
    if boards.ndim == 1:
        boards = boards[None]
    dice = validate_dice(dice)
    if len(dice) != len(boards):
        raise ValueError(f"got {len(boards)} boards but {len(dice)} rolls")
    _check_not_over(boards)
    return boards, dice, rules


def _check_not_over(boards: np.ndarray) -> None:
    mine = np.clip(boards, 0, None).sum(axis=1)
    theirs = np.clip(-boards.astype(np.int16), 0, None).sum(axis=1)
    over = (mine == 0) | (theirs == 0)
    if over.any():
        raise ValueError(f"position {int(np.argmax(over))} is a finished game (a side has borne off all 15 checkers)")


@njit(cache=True, inline="always")
def _next_random(state, g):
    """splitmix64 step of game ``g``'s generator (Steele, Lea & Flood 2014); returns 64 random bits."""
    s = state[g] + np.uint64(0x9E3779B97F4A7C15)
    state[g] = s
    z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _below(state, g, k):
    """A uniform integer in ``0..k-1`` from game ``g``'s generator (multiply-shift, Lemire 2019)."""
    return np.int64(((_next_random(state, g) >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


_START = np.zeros(BOARD_SIZE, dtype=np.int8)
for _p, _c in ((24, 2), (13, 5), (8, 3), (6, 5)):
    _START[_p] = _c
    _START[25 - _p] = -_c


@njit(cache=True)
def _play_random_turn(g, boards, dice, sign, plies, points, rng_state, rule, zob, ws):
    """One turn of game ``g``: enumerate, pick a play uniformly, score or pass the turn."""
    entries = ws[0]
    keep = ws[5]
    nkeep = _enumerate(boards[g], dice[g, 0], dice[g, 1], rule, zob, ws)
    e = keep[_below(rng_state, g, nkeep)]
    plies[g] += 1
    on_board = 0
    for i in range(BOARD_SIZE):
        if entries[e, i] > 0:
            on_board += entries[e, i]
    if on_board == 0:
        # RULES.md §6: single, gammon or backgammon, from the winner's board.
        opp_on = 0
        back = False
        for i in range(0, 7):
            if entries[e, i] < 0:
                back = True
        for i in range(BOARD_SIZE):
            if entries[e, i] < 0:
                opp_on -= entries[e, i]
        result = 1 if opp_on < NUM_CHECKERS else (3 if back else 2)
        points[g] = sign[g] * result
        return True
    for i in range(BOARD_SIZE):
        boards[g, i] = -entries[e, BOARD_SIZE - 1 - i]  # swap_sides: the opponent is on roll
    sign[g] = -sign[g]
    dice[g, 0] = 1 + _below(rng_state, g, 6)
    dice[g, 1] = 1 + _below(rng_state, g, 6)
    return False


@njit(cache=True)
def _play_random_game(g, boards, dice, sign, plies, points, rng_state, rule, zob, ws):
    """Game ``g`` from the opening roll (RULES.md §2) to its end, both sides playing at random."""
    for i in range(BOARD_SIZE):
        boards[g, i] = _START[i]
    # Each player rolls one die, ties roll again; the starter plays both numbers.
    d1 = 1 + _below(rng_state, g, 6)
    d2 = 1 + _below(rng_state, g, 6)
    while d1 == d2:
        d1 = 1 + _below(rng_state, g, 6)
        d2 = 1 + _below(rng_state, g, 6)
    dice[g, 0] = d1
    dice[g, 1] = d2
    while not _play_random_turn(g, boards, dice, sign, plies, points, rng_state, rule, zob, ws):
        pass


@njit(cache=True)
def _game_arrays(seeds):
    n = seeds.shape[0]
    return (
        seeds.copy(),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.empty((n, BOARD_SIZE), dtype=np.int8),
        np.empty((n, 2), dtype=np.int8),
        np.ones(n, dtype=np.int64),
    )


@njit(cache=True, parallel=True)
def _random_games_parallel(seeds, rule, zob, wsa, threads):
    """Random games to completion, thread ``t`` playing games ``t, t + threads, ...`` one after another.

    Each game owns a splitmix64 generator seeded from ``seeds[g]``, so the
    results do not depend on the number of threads. Threads never wait for
    each other until the end (no per-turn barrier).
    """
    n = seeds.shape[0]
    rng_state, points, plies, boards, dice, sign = _game_arrays(seeds)
    for t in numba.prange(threads):
        ws = _thread_views(wsa, numba.get_thread_id())
        for g in range(t, n, threads):
            _play_random_game(g, boards, dice, sign, plies, points, rng_state, rule, zob, ws)
    return points, plies


@njit(cache=True)
def _random_games_serial(seeds, rule, zob, wsa):
    """:func:`_random_games_parallel` on the calling thread only."""
    n = seeds.shape[0]
    rng_state, points, plies, boards, dice, sign = _game_arrays(seeds)
    ws = _thread_views(wsa, 0)
    for g in range(n):
        _play_random_game(g, boards, dice, sign, plies, points, rng_state, rule, zob, ws)
    return points, plies


def random_games(n_games: int, rng: np.random.Generator, rules: Rules = Rules()) -> tuple[np.ndarray, np.ndarray]:
    """Play complete games between two uniformly random players, fully compiled.

    The games are spread over numba's threads. Each game draws its dice and
    choices from its own splitmix64 generator seeded from ``rng``, so the
    results depend only on ``rng`` (not on the thread count). Both players
    pick uniformly among the distinct legal plays; the opening roll follows
    RULES.md §2.

    Args:
        n_games: number of games (>= 0).
        rng: seeds the games' generators.
        rules: the rule settings.

    Returns:
        ``(points, plies)``: ``(n_games,)`` int64 each; ``points`` is the
        result at cube 1 from the view of the player who started (±1, ±2,
        ±3, RULES.md §6) and ``plies`` the number of turns the game took.

    Raises:
        ValueError: on a negative ``n_games`` or a non-Generator ``rng``.
    """
    rules = Rules.check(rules)
    if not isinstance(n_games, (int, np.integer)) or isinstance(n_games, bool) or n_games < 0:
        raise ValueError(f"n_games must be an integer >= 0, got {n_games!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    seeds = rng.integers(0, 2**63, size=n_games, dtype=np.int64).astype(np.uint64)
    threads = _parallel_threads()
    if threads > 1 and n_games >= 2 * threads:
        return _random_games_parallel(seeds, rules.code, ZOBRIST, _workspace().arrays(), threads)
    return _random_games_serial(seeds, rules.code, ZOBRIST, _workspace().arrays())
