"""Batched legal-play generation (RULES.md sections 3-5 and 7), compiled with numba.

Boards follow :mod:`nard_ai.core.board` (``(26,)`` int8, the mover's view). A *play*
is identified by the position it produces (RULES.md §3.5), so the generator
returns **afterstates**: the boards just after the mover's whole turn, still
in the mover's view (not swapped).

Long because the search kernels, the batch drivers and the random-game
kernels call one another as compiled code: numba's on-disk cache does not see
a callee in another file change, so they stay in one file
(``tests/test_architecture.py`` lists the few cross-file kernel calls).

How a turn is enumerated
------------------------
A depth-first search over single-die moves, with the board changed in place
and undone on the way back. At each step the legal sources for the die are
one bit mask (a bit per point the mover occupies, less the points whose
destination holds 2+ opposing checkers, less the bear-offs RULES.md §5
does not allow yet), and the highest remaining source is played next:

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

Under standard rules the search is written out as nested loops, two for a
non-double (:func:`_search_pair`) and four for a double
(:func:`_search_quad`), whose state stays in registers; the Iranian rule
takes the general search over a DFS stack (:func:`_search`). Both give the
same leaves in the same order (tested). The three are compiled functions of
their own, called once per position, not inlined into each kernel that
enumerates: inlined copies took numba about three times as long to compile
(115 s against 37 s for the module) for about 5% of speed.

Every leaf (no further die playable, all dice used, or the mover's last
checker borne off, RULES.md §3.6) is recorded once per distinct afterstate
(its Zobrist hash picks a slot of an open-addressing table; equal boards are
found by comparing the board as four 64-bit words), with the *class* of the
sequence that reached it. The class orders sequences by RULES.md §3.4:

* non-doubles: 3 = both dice, 2 = the larger die only, 1 = the smaller die
  only, 0 = no move;
* doubles: the number of dice used, 0..4.

The legal plays are the afterstates reached by a sequence of the highest
class present (so "use as many dice as possible" and "if only one die can be
played, play the larger"). With the Iranian rule on (RULES.md §7), a play
respects the rule if a sequence of that class reaching it does; when some
legal play respects it, only those remain.

Sorted output (the default of the public functions) orders each position's
afterstates lexicographically, index 0 first, as signed bytes.

Speed
-----
The kernels reuse per-thread buffers (:class:`nard_ai.core.workspace.Workspace`,
output rows included; how many threads they start is :mod:`nard_ai.core.threads`'s
policy, and the batch entry points' input checks are :mod:`nard_ai.core.batch_checks`) and run on views of them that numba does not reference count
(:func:`unowned`): numba's atomic reference counting of arrays passed
around inside the search used to take half of the time. A kernel that is
not inlined re-wraps its array arguments the same way (it cannot know they
have no owner: counting them took more than half of a non-double's time).

:func:`random_games` keeps each game's board in the search buffer from turn
to turn (swapped and summarised in one pass, no hash of the root: only hash
differences within a turn matter) and picks the play in the enumeration's own
order: when the search found one class of sequence (most turns under standard
rules) every recorded afterstate is a legal play and the drawn number is the
entry itself, with no list of legal plays, sort or output rows. Each node's
legal sources are computed once, not on every resume.
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from numba import njit, types
from numba.cpython.unsafe.numbers import leading_zeros
from numba.extending import intrinsic

from nard_ai.core.batch_checks import (  # re-exported: checked_batch (its compiled checks for the tests)
    _boards_in_play,  # noqa: F401
    _dice_in_range,  # noqa: F401
    checked_batch,
)
from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS, starting_board, validate_board, validate_dice
from nard_ai.core.dice import splitmix64
from nard_ai.core.rules import NO_HIT_AND_CONTINUE_000, NO_HIT_AND_CONTINUE_002, Rules
from nard_ai.core.threads import parallel_threads, serial_kernels  # noqa: F401 - re-exported: their old home
from nard_ai.core.workspace import (  # re-exported: their old home
    ENTRY_CAPACITY,
    TABLE_BITS,
    TABLE_SIZE,
    Workspace,
    process_workspace,
    workspace_in_use,
)

_TABLE_BITS = TABLE_BITS  # the kernels' names of the workspace's constants
_TABLE_SIZE = TABLE_SIZE
_LITTLE_ENDIAN = sys.byteorder == "little"
_GAMES_PER_GROUP = 4  # random_games hands games to threads in groups of this many
_workspace = process_workspace  # the tests' name
PARALLEL_MIN_BATCH = 256  # smaller batches run on one thread (thread start-up costs more)


def _zobrist_table() -> np.ndarray:
    """Fixed pseudo-random 64-bit keys, one per (index, count + 15) pair: ``(26, 32)`` uint64.

    Key ``k`` (row-major) is splitmix64's output for the state
    ``(k + 2) * 0x9E3779B97F4A7C15`` (mod 2**64): the generator seeded with
    that constant, from its first step on (Steele, Lea & Flood 2014).
    """
    z = splitmix64(0, np.arange(2, BOARD_SIZE * 32 + 2, dtype=np.uint64))
    return z.reshape(BOARD_SIZE, 32)


ZOBRIST = _zobrist_table()


@intrinsic
def _void_pointer(typingctx, address):
    """The integer ``address`` as a ``void *`` (for :func:`numba.carray`)."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return types.voidptr(address), codegen


@njit(cache=True, inline="always")
def unowned(a):
    """A view of the C-contiguous array ``a`` that numba does not reference count.

    numba counts references to every array a compiled function receives,
    slices or takes from a tuple, with atomic operations; in the search they
    cost more than the search itself (measured: half the time). The kernels
    therefore work on views without an owner, of buffers that stay alive for
    the whole call (held by the Python caller).

    A kernel that is not inlined into its caller (``_enumerate``, the three
    searches, ``_play_random_game``, ``_sort_keep``) re-wraps its array
    arguments with this first thing: numba cannot know that an argument has no owner, so
    every use of it would go through the runtime's reference counting
    (measured: 2.3x the time of a non-double's enumeration, 1.7x that of a
    random game).
    """
    return numba.carray(_void_pointer(a.ctypes.data), a.shape, a.dtype)


@njit(cache=True, inline="always")
def unowned_views(ws):
    """:func:`unowned` views of one thread's buffers (a tuple as :meth:`Workspace.views` gives)."""
    return (
        unowned(ws[0]),
        unowned(ws[1]),
        unowned(ws[2]),
        unowned(ws[3]),
        unowned(ws[4]),
        unowned(ws[5]),
        unowned(ws[6]),
        unowned(ws[7]),
        unowned(ws[8]),
        unowned(ws[9]),
        unowned(ws[10]),
        unowned(ws[11]),
        unowned(ws[12]),
    )


@njit(cache=True, inline="always")
def _thread_views(wsa, t):
    return (
        wsa[0][t],
        wsa[1][t],
        wsa[2][t],
        wsa[3][t],
        wsa[4][t][:1],
        wsa[5][t],
        wsa[6][t][:11],
        wsa[7][t][:BOARD_SIZE],
        wsa[8][t][:BOARD_SIZE],
        wsa[9][t][:4],
        wsa[10][t],
        wsa[11][t][:5],
        wsa[6][t][11],
    )


# Rows of the DFS stack (one column per depth).
_NEXT_SRC, _NEXT_VAR, _MOVED, _SRC, _DST, _HIT, _TAG, _TAG_DST, _VIOL, _OCC, _CAND = range(11)


@njit(cache=True, inline="always")
def _apply(b, zob, src, dst, h, occ, off, outside):
    """Move one checker ``src -> dst`` on ``b`` (dst <= 0: bear off); returns ``(h, occ, off, outside, hit)``."""
    v = b[src]
    h ^= zob[src, v + 15] ^ zob[src, v + 14]
    b[src] = v - 1
    if v == 1:
        occ ^= np.int64(1) << src
    hit = False
    if dst >= 1:
        v = b[dst]
        if v == -1:
            hit = True
            h ^= zob[dst, 14] ^ zob[dst, 16]
            b[dst] = 1
            v = b[0]
            h ^= zob[0, v + 15] ^ zob[0, v + 14]
            b[0] = v - 1
        else:
            h ^= zob[dst, v + 15] ^ zob[dst, v + 16]
            b[dst] = v + 1
        occ |= np.int64(1) << dst
    else:
        off += 1
    if src > 6 and dst <= 6:
        outside -= 1
    return h, occ, off, outside, hit


@njit(cache=True, inline="always")
def _undo(b, src, dst, hit):
    """Take back :func:`_apply`'s change to ``b``."""
    if dst >= 1:
        if hit:
            b[dst] = -1
            b[0] += 1
        else:
            b[dst] -= 1
    b[src] += 1


@njit(cache=True, inline="always")
def _record(h, bw, words, masks, table, tag, count, bit, respects):
    """Record the board in ``bw`` (Zobrist hash ``h``), reached by a sequence of class bit ``bit``.

    ``respects``: the sequence respects the Iranian rule (always true under
    standard rules). The board is looked up by its hash's slot of ``table``
    (open addressing; a slot belongs to this position when its high 32 bits
    are ``tag``) and a compare of its four 64-bit words; a new board becomes
    entry ``count``. Returns the new entry count.
    """
    w0 = bw[0]
    w1 = bw[1]
    w2 = bw[2]
    w3 = bw[3]
    slot = np.int64(h >> np.uint64(64 - _TABLE_BITS))
    while True:
        t = table[slot]
        if (t & ~np.int64(0xFFFFFFFF)) != tag:
            if count >= ENTRY_CAPACITY:
                raise RuntimeError("legal-play enumeration overflowed its entry buffer")
            table[slot] = tag | count
            words[count, 0] = w0
            words[count, 1] = w1
            words[count, 2] = w2
            words[count, 3] = w3
            masks[count, 0] = bit
            masks[count, 1] = bit if respects else np.uint8(0)
            return count + 1
        e = t & 0xFFFFFFFF
        if words[e, 0] == w0 and words[e, 1] == w1 and words[e, 2] == w2 and words[e, 3] == w3:
            masks[e, 0] |= bit
            if respects:
                masks[e, 1] |= bit
            return count
        slot = (slot + 1) & (_TABLE_SIZE - 1)


@njit(cache=True, inline="always")
def _search(seq, ndice, is_double, larger, rule, zob, ws, count, skip_mask, h, occ, off, outside, blocks):
    """Depth-first search over the dice ``seq[:ndice]`` from the board in ``ws``, recording leaves.

    ``skip_mask`` (non-doubles, second order only): a bit per source point
    whose move with ``seq[1]`` was legal in the original position. Such a
    second move commutes with the first (same afterstate in the other
    order, already searched), so it is not searched again, only noted as
    "a move exists here" so that its parent is not taken for a leaf.

    ``h``, ``occ``, ``off``, ``outside`` and ``blocks`` describe the board in
    ``ws`` (see :func:`_board_summary`); ``blocks`` does not change during a
    turn (hits only take blots).

    Returns:
        ``(count, root_mask, classes)``: the new entry count, a bit per source
        point with a legal first move (used to build ``skip_mask``) and a bit
        per class of the leaves found.

    The board is modified in place and restored before returning.
    """
    _entries, words, masks, table, stamp_arr, _keep, st, tags, b, bw, _keys, hst, _seq = ws
    tag = stamp_arr[0] << 32  # the table slots of this position
    if rule != 0:
        tags[:] = 0

    violations = 0
    classes = 0
    root_mask = np.int64(0)
    depth = 0
    st[_NEXT_SRC, 0] = BAR
    st[_NEXT_VAR, 0] = 0
    st[_CAND, 0] = -1
    st[_MOVED, 0] = 0
    while True:
        found = False
        if depth < ndice and off < NUM_CHECKERS:
            die = seq[depth]
            src = st[_NEXT_SRC, depth]
            resume = src
            var0 = st[_NEXT_VAR, depth]
            # The legal sources at or below the resume point; the highest is played next.
            cand = st[_CAND, depth]
            if cand < 0:  # first visit of this node: its legal sources (the board is the same on resumes)
                cand = _legal_sources(occ, blocks, die, outside)
                st[_CAND, depth] = cand
            cand &= (np.int64(2) << src) - 1
            if depth == 1 and (cand & skip_mask) != 0:
                st[_MOVED, depth] = 1  # these commute with the first move: found by the other order
                cand &= ~skip_mask
            if cand != 0:
                src = 63 - leading_zeros(cand)
                var = var0 if src == resume else 0
                dst = src - die  # from the bar (25) die d enters on point 25 - d; dst <= 0 bears off
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
                hst[depth] = h
                st[_OCC, depth] = occ
                h, occ, off, outside, hit = _apply(b, zob, src, dst, h, occ, off, outside)
                tag_dst = 0
                if rule != 0:
                    if use_tag == 1:
                        tags[src] -= 1
                    if dst >= 1 and (
                        (hit and dst <= 6) or (use_tag == 1 and rule == NO_HIT_AND_CONTINUE_002)
                    ):
                        tags[dst] += 1
                        tag_dst = 1
                    if viol:
                        violations += 1
                st[_SRC, depth] = src
                st[_DST, depth] = dst
                st[_HIT, depth] = hit
                if rule != 0:
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
        if found:
            depth += 1
            # Doubles: non-increasing source order; non-doubles: any source. Under
            # seed 002's rule the order matters (a point the hitter would move onto
            # may be vacated first), so doubles are searched in every order there.
            ordered = is_double and rule != NO_HIT_AND_CONTINUE_002
            st[_NEXT_SRC, depth] = st[_SRC, depth - 1] if ordered else BAR
            st[_NEXT_VAR, depth] = 0
            st[_MOVED, depth] = 0
            st[_CAND, depth] = -1
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
            classes |= 1 << cls
            count = _record(h, bw, words, masks, table, tag, count, np.uint8(1 << cls), violations == 0)
        if depth == 0:
            break
        # Undo the move that led here.
        depth -= 1
        src = st[_SRC, depth]
        dst = st[_DST, depth]
        _undo(b, src, dst, st[_HIT, depth] != 0)
        if dst < 1:
            off -= 1
        h = hst[depth]
        occ = st[_OCC, depth]
        if src > 6 and dst <= 6:
            outside += 1
        if rule != 0:
            if st[_TAG_DST, depth] == 1:
                tags[dst] -= 1
            if st[_TAG, depth] == 1:
                tags[src] += 1
            if st[_VIOL, depth]:
                violations -= 1
    return count, root_mask, classes


@njit(cache=True, inline="always")
def _board_summary(b, zob):
    """``(hash, occ, off, outside, blocks)`` of board ``b``, as :func:`_search` takes them (no branches).

    ``hash``: the Zobrist hash; ``occ``: a bit per point the mover occupies
    (bit 25: the bar); ``off``: the mover's checkers borne off; ``outside``:
    the mover's checkers on the bar or on points 7..24 (RULES.md §5: bear off
    only when 0); ``blocks``: a bit per point with 2+ opposing checkers.
    """
    h = np.uint64(0)
    blocks = np.int64(0)
    on_board = np.int64(0)  # not 0: a literal's type would make numba compile the callers twice
    outside = np.int64(0)
    occ = np.int64(0)
    for i in range(BOARD_SIZE):
        v = np.int64(b[i])
        h ^= zob[i, v + 15]
        mine = max(v, np.int64(0))
        on_board += mine
        occ |= np.int64(v > 0) << i
        outside += mine * np.int64(i > 6)
        blocks |= np.int64(v <= -2) << i
    blocks &= ~np.int64(1)
    return h, occ, NUM_CHECKERS - on_board, outside, blocks


@njit(cache=True, inline="always")
def _legal_sources(occ, blocks, die, outside):
    """A bit per point (25: the bar) from which the mover may move a checker ``die`` pips.

    ``occ``: a bit per point holding the mover's checkers; ``blocks``: a bit
    per point holding 2+ opposing checkers (RULES.md §3.2: closed);
    ``outside``: the mover's checkers on the bar or on points 7..24.
    """
    if occ >> BAR:
        # RULES.md §4: checkers on the bar enter (on point 25 - d) before any other move.
        return (np.int64(1) << BAR) & ~(blocks << die)
    legal = occ & ~(blocks << die) & ~((np.int64(2) << die) - 1)  # moves that land on points 1..24
    if outside == 0:
        # RULES.md §5: bear off from point d exactly; a higher die only from the highest occupied point.
        if (occ >> die) != 0:
            legal |= occ & (np.int64(1) << die)
        else:
            legal |= np.int64(1) << (63 - leading_zeros(occ))
    return legal


@njit(cache=True)
def _enumerate(board, d1, d2, rule, zob, ws):
    """Enumerate one position; the legal plays are left as indices ``ws.keep[:n]``; returns ``n``."""
    ws = unowned_views(ws)
    zob = unowned(zob)
    b = ws[8]
    for i in range(BOARD_SIZE):
        b[i] = board[i]
    h, occ, off, outside, blocks = _board_summary(b, zob)
    count, union = _search_turn(d1, d2, rule, zob, ws, h, occ, off, outside, blocks)
    return _keep_best(ws[2], ws[5], count, union, rule)


@njit(cache=True)
def _search_pair(d1, d2, zob, ws, h, occ, off, outside, blocks):
    """:func:`_search_turn` for a non-double under standard rules, as two nested loops.

    Same leaves in the same order as the general search (:func:`_search`):
    both orders of the dice, sources highest first, and in the second order
    no second move from a source that had a legal first move in the first
    (it commutes with that first move: its afterstate was found already).
    Class bits as in the module docstring: 1 no move, 2 the smaller die
    only, 4 the larger only, 8 both dice (or the last checker borne off).
    The locals stay in registers (no DFS stack in memory), which is what
    makes this faster than the general search. Returns ``(count, union)``.
    """
    ws = unowned_views(ws)
    zob = unowned(zob)
    _entries, words, masks, table, stamp_arr, _keep, _st, _tags, b, bw, _keys, _hst, _seq = ws
    tag = stamp_arr[0] << 32
    larger = max(d1, d2)
    count = 0
    union = 0
    skip = np.int64(0)
    for order in range(2):
        da = d1 if order == 0 else d2
        db = d2 if order == 0 else d1
        one = 2 if da == larger else 1
        cand1 = _legal_sources(occ, blocks, da, outside)
        roots = cand1
        if cand1 == 0:
            union |= 1
            count = _record(h, bw, words, masks, table, tag, count, np.uint8(1), True)
        while cand1 != 0:
            s1 = 63 - leading_zeros(cand1)
            cand1 ^= np.int64(1) << s1
            t1 = s1 - da
            h1, occ1, off1, out1, hit1 = _apply(b, zob, s1, t1, h, occ, off, outside)
            if off1 == NUM_CHECKERS:
                union |= 8  # RULES.md §3.6: the last checker off uses every die
                count = _record(h1, bw, words, masks, table, tag, count, np.uint8(8), True)
            else:
                cand2 = _legal_sources(occ1, blocks, db, out1)
                skipped = (cand2 & skip) != 0
                cand2 &= ~skip
                if cand2 == 0 and not skipped:
                    union |= 1 << one
                    count = _record(h1, bw, words, masks, table, tag, count, np.uint8(1 << one), True)
                if cand2 != 0:
                    union |= 8
                while cand2 != 0:
                    s2 = 63 - leading_zeros(cand2)
                    cand2 ^= np.int64(1) << s2
                    t2 = s2 - db
                    h2, _o, _f, _u, hit2 = _apply(b, zob, s2, t2, h1, occ1, off1, out1)
                    count = _record(h2, bw, words, masks, table, tag, count, np.uint8(8), True)
                    _undo(b, s2, t2, hit2)
            _undo(b, s1, t1, hit1)
        skip = roots
    return count, union


@njit(cache=True, inline="always")
def _quad_node(k, h, occ, off, outside, below, d, blocks, bw, words, masks, table, tag, count, union):
    """A node of :func:`_search_quad` after ``k`` moves (``k`` < 4), the last from point ``below``.

    Records the board as a leaf when the sequence stops here (the mover's
    last checker is off: class bit 16, RULES.md §3.6; or no move of ``d``
    from ``below`` or lower: class bit ``1 << k``). Returns ``(count, union,
    sources)``, ``sources`` a bit per point to move from next (0 at a leaf).
    """
    if off == NUM_CHECKERS:
        return _record(h, bw, words, masks, table, tag, count, np.uint8(16), True), union | 16, np.int64(0)
    sources = _legal_sources(occ, blocks, d, outside) & ((np.int64(2) << below) - 1)
    if sources == 0:
        bit = np.uint8(1 << k)
        return _record(h, bw, words, masks, table, tag, count, bit, True), union | bit, sources
    return count, union, sources


@njit(cache=True)
def _search_quad(d, zob, ws, h, occ, off, outside, blocks):
    """:func:`_search_turn` for a double under standard rules, as four nested loops.

    Same leaves in the same order as the general search (:func:`_search`):
    the moves of a sequence in non-increasing order of source point, highest
    first (module docstring: nothing is lost). Class bit ``1 << k`` for a
    sequence of ``k`` moves; 16 also when the last checker is borne off
    (RULES.md §3.6). Returns ``(count, union)``.
    """
    ws = unowned_views(ws)
    zob = unowned(zob)
    _entries, words, masks, table, stamp_arr, _keep, _st, _tags, b, bw, _keys, _hst, _seq = ws
    tag = stamp_arr[0] << 32
    count, union, c1 = _quad_node(0, h, occ, off, outside, BAR, d, blocks, bw, words, masks, table, tag, 0, 0)
    while c1 != 0:
        s1 = 63 - leading_zeros(c1)
        c1 ^= np.int64(1) << s1
        h1, occ1, off1, out1, hit1 = _apply(b, zob, s1, s1 - d, h, occ, off, outside)
        count, union, c2 = _quad_node(
            1, h1, occ1, off1, out1, s1, d, blocks, bw, words, masks, table, tag, count, union
        )
        while c2 != 0:
            s2 = 63 - leading_zeros(c2)
            c2 ^= np.int64(1) << s2
            h2, occ2, off2, out2, hit2 = _apply(b, zob, s2, s2 - d, h1, occ1, off1, out1)
            count, union, c3 = _quad_node(
                2, h2, occ2, off2, out2, s2, d, blocks, bw, words, masks, table, tag, count, union
            )
            while c3 != 0:
                s3 = 63 - leading_zeros(c3)
                c3 ^= np.int64(1) << s3
                h3, occ3, off3, out3, hit3 = _apply(b, zob, s3, s3 - d, h2, occ2, off2, out2)
                count, union, c4 = _quad_node(
                    3, h3, occ3, off3, out3, s3, d, blocks, bw, words, masks, table, tag, count, union
                )
                while c4 != 0:  # the fourth move: every die used
                    s4 = 63 - leading_zeros(c4)
                    c4 ^= np.int64(1) << s4
                    h4, _o, _f, _u, hit4 = _apply(b, zob, s4, s4 - d, h3, occ3, off3, out3)
                    count = _record(h4, bw, words, masks, table, tag, count, np.uint8(16), True)
                    union |= 16
                    _undo(b, s4, s4 - d, hit4)
                _undo(b, s3, s3 - d, hit3)
            _undo(b, s2, s2 - d, hit2)
        _undo(b, s1, s1 - d, hit1)
    return count, union


@njit(cache=True, inline="always")
def _search_turn(d1, d2, rule, zob, ws, h, occ, off, outside, blocks):
    """Record every leaf of the turn with dice ``d1, d2`` from the board already in ``ws``.

    ``h, occ, off, outside, blocks`` describe that board (:func:`_board_summary`;
    ``h`` may be any fixed value: only the differences of hashes within a turn
    matter). Returns ``(count, union)``: the number of distinct afterstates
    recorded (``ws`` entries ``0..count-1``, in the order first reached) and a
    bit per class of sequence found.

    Standard rules take the nested-loop searches (:func:`_search_pair`,
    :func:`_search_quad`); the Iranian rule the general one
    (:func:`_search_general`). All three record the same leaves in the same
    order for standard rules (tested).
    """
    d1 = np.int64(d1)  # one signature for the searches, whatever the callers' dice type
    d2 = np.int64(d2)
    table, stamp_arr = ws[3], ws[4]
    stamp_arr[0] += 1  # a new tag for the table's slots: no clearing per position
    if stamp_arr[0] >= 1 << 30:
        table[:] = 0
        stamp_arr[0] = 1
    if rule == 0:
        if d1 == d2:
            return _search_quad(d1, zob, ws, h, occ, off, outside, blocks)
        return _search_pair(d1, d2, zob, ws, h, occ, off, outside, blocks)
    return _search_general(d1, d2, rule, zob, ws, h, occ, off, outside, blocks)


@njit(cache=True)
def _search_general(d1, d2, rule, zob, ws, h, occ, off, outside, blocks):
    """:func:`_search_turn` by the general search (:func:`_search`), any rule, without a new table tag."""
    ws = unowned_views(ws)
    zob = unowned(zob)
    seq = ws[12]
    is_double = d1 == d2
    larger = max(d1, d2)
    count = 0
    union = 0
    skip = np.int64(0)
    # One search for doubles, one per order of the dice otherwise (a single call site, so
    # that the inlined search is compiled once).
    for order in range(1 if is_double else 2):
        if is_double:
            for i in range(4):
                seq[i] = d1
        else:
            seq[0] = d1 if order == 0 else d2
            seq[1] = d2 if order == 0 else d1
        count, roots, classes = _search(
            seq,
            4 if is_double else 2,
            is_double,
            larger,
            rule,
            zob,
            ws,
            count,
            skip,
            h,
            occ,
            off,
            outside,
            blocks,
        )
        union |= classes
        # With the Iranian rule the order of moves matters (which checker hit), so search it all.
        if rule == 0:
            skip = roots
    return count, union


@njit(cache=True, inline="always")
def _best_class(union):
    """The highest class whose bit is set in ``union`` (RULES.md §3.4: it decides), 0 if none."""
    return 0 if union == 0 else 63 - leading_zeros(np.int64(union))


@njit(cache=True, inline="always")
def _keep_best(masks, keep, count, union, rule):
    """The legal plays among ``count`` recorded afterstates: their indices in ``keep[:n]``, ascending; returns ``n``.

    Those reached by a sequence of the best class in ``union``; with the
    Iranian rule, only those that respect it when some do (RULES.md §7.3).
    """
    bit = np.uint8(1 << _best_class(union))
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


@njit(cache=True, inline="always")
def _sort_word(w):
    """A word of a 32-byte row as a sort key: unsigned order of keys = lexicographic order of the 8 signed bytes.

    Flipping each byte's sign bit maps -128..127 to 0..255 in order; the
    bytes are then put first-byte-highest (a byte swap on little-endian
    machines).
    """
    x = w ^ np.uint64(0x8080808080808080)
    if _LITTLE_ENDIAN:
        x = ((x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8)) | (
            (x >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)
        )
        x = ((x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16)) | (
            (x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)
        )
        x = (x << np.uint64(32)) | (x >> np.uint64(32))
    return x


@njit(cache=True)
def _sort_keep(words, keep, keys, n):
    """Sort ``keep[:n]`` by the rows they point at: lexicographic, index 0 first, signed bytes.

    An insertion sort on four 64-bit keys per row (:func:`_sort_word`), kept
    in ``keys[:n]`` alongside ``keep``.
    """
    words = unowned(words)
    keep = unowned(keep)
    keys = unowned(keys)
    for j in range(n):
        e = keep[j]
        k0 = _sort_word(words[e, 0])
        k1 = _sort_word(words[e, 1])
        k2 = _sort_word(words[e, 2])
        k3 = _sort_word(words[e, 3])
        i = j
        while i > 0:
            p = i - 1
            if k0 != keys[p, 0]:
                less = k0 < keys[p, 0]
            elif k1 != keys[p, 1]:
                less = k1 < keys[p, 1]
            elif k2 != keys[p, 2]:
                less = k2 < keys[p, 2]
            else:
                less = k3 < keys[p, 3]  # rows are distinct
            if not less:
                break
            keys[i, 0] = keys[p, 0]
            keys[i, 1] = keys[p, 1]
            keys[i, 2] = keys[p, 2]
            keys[i, 3] = keys[p, 3]
            keep[i] = keep[p]
            i = p
        keys[i, 0] = k0
        keys[i, 1] = k1
        keys[i, 2] = k2
        keys[i, 3] = k3
        keep[i] = e


@njit(cache=True, inline="always")
def _emit(entries, keep, nkeep, out, m):
    """Copy the rows ``entries[keep[:nkeep]]`` to ``out[m:]``; returns the new row count."""
    for j in range(nkeep):
        e = keep[j]
        for i in range(BOARD_SIZE):
            out[m, i] = entries[e, i]
        m += 1
    return m


@njit(cache=True)
def _owner_from_counts(counts, total):
    """``(total,)`` int64: index ``i`` repeated ``counts[i]`` times."""
    owner = np.empty(total, dtype=np.int64)
    m = 0
    for i in range(counts.shape[0]):
        for _ in range(counts[i]):
            owner[m] = i
            m += 1
    return owner


@njit(cache=True, nogil=True)
def _batch(boards, dice, rule, sort, zob, ws, out):
    """Every position's legal plays, one after another, on the calling thread.

    ``out`` is a reusable buffer of rows; when it is too small a larger one
    is allocated for this call. Returns ``(afterstates, owner)``, new arrays.
    """
    n = boards.shape[0]
    ws = unowned_views(ws)
    boards = unowned(boards)
    zob = unowned(zob)
    out = unowned(out)
    entries, words, keep, keys = ws[0], ws[1], ws[5], ws[10]
    counts = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        nkeep = _enumerate(boards[i], dice[i, 0], dice[i, 1], rule, zob, ws)
        if sort:
            _sort_keep(words, keep, keys, nkeep)
        if m + nkeep > out.shape[0]:
            grown = np.empty((max(2 * out.shape[0], m + nkeep), BOARD_SIZE), dtype=np.int8)
            grown[:m] = out[:m]
            out = grown
        m = _emit(entries, keep, nkeep, out, m)
        counts[i] = nkeep
    return out[:m].copy(), _owner_from_counts(counts, m)


@njit(cache=True, parallel=True)
def _batch_parallel(boards, dice, rule, sort, zob, wsa, outs, threads):
    """:func:`_batch` split into ``threads`` chunks of consecutive positions.

    Chunk ``c`` writes its rows into ``outs[c]``; returns ``ok = False`` if a
    chunk overflows it (the caller then runs the serial kernel).
    """
    n = boards.shape[0]
    chunks = threads
    per = (n + chunks - 1) // chunks
    region = outs.shape[1]
    counts = np.empty(n, dtype=np.int64)
    used = np.zeros(chunks * 8, dtype=np.int64)  # one cache line per chunk
    boards_u = unowned(boards)
    zob_u = unowned(zob)
    for c in numba.prange(chunks):
        ws = unowned_views(_thread_views(wsa, numba.get_thread_id()))
        entries, words, keep, keys = ws[0], ws[1], ws[5], ws[10]
        out = unowned(outs[c])
        m = 0
        for i in range(c * per, min(n, (c + 1) * per)):
            nkeep = _enumerate(boards_u[i], dice[i, 0], dice[i, 1], rule, zob_u, ws)
            if m + nkeep > region:
                m = -1
                break
            if sort:
                _sort_keep(words, keep, keys, nkeep)
            m = _emit(entries, keep, nkeep, out, m)
            counts[i] = nkeep
        used[c * 8] = m
    total = 0
    for c in range(chunks):
        if used[c * 8] < 0:
            return outs[0, :0], counts[:0], False
        total += used[c * 8]
    result = np.empty((total, BOARD_SIZE), dtype=np.int8)
    pos = 0
    for c in range(chunks):
        k = used[c * 8]
        result[pos : pos + k] = outs[c, :k]
        pos += k
    return result, _owner_from_counts(counts, total), True


@njit(cache=True, nogil=True)
def _count_batch(boards, dice, rule, zob, ws):
    """Number of legal plays per position, without writing the afterstates out."""
    n = boards.shape[0]
    counts = np.empty(n, dtype=np.int64)
    ws = unowned_views(ws)
    boards = unowned(boards)
    zob = unowned(zob)
    for i in range(n):
        counts[i] = _enumerate(boards[i], dice[i, 0], dice[i, 1], rule, zob, ws)
    return counts


def run_batch(boards: np.ndarray, dice: np.ndarray, rule: int, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    with workspace_in_use() as ws:
        return _run_batch_in(ws, boards, dice, rule, sort)


def _run_batch_in(
    ws: Workspace, boards: np.ndarray, dice: np.ndarray, rule: int, sort: bool
) -> tuple[np.ndarray, np.ndarray]:
    threads = min(parallel_threads(), ws.threads)
    n = len(boards)
    if n >= PARALLEL_MIN_BATCH and threads > 1:
        # Room for 48 plays per position on average (random play averages about 20).
        outs = ws.ensure_out(-(-n // threads) * 48 + 4096)
        out, owner, ok = _batch_parallel(boards, dice, rule, sort, ZOBRIST, ws.arrays(), outs, threads)
        if ok:
            return out, owner
    out, owner = _batch(boards, dice, rule, sort, ZOBRIST, ws.views(0), ws.out[0])
    ws.ensure_out(len(out))
    return out, owner


def legal_plays_batch(
    boards: np.ndarray, dice: np.ndarray, rules: Rules = Rules(), sort: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Legal plays of a batch of positions, as afterstates.

    Args:
        boards: ``(N, 26)`` int8 boards, each from its mover's view
            (:mod:`nard_ai.core.board`).
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
        ValueError: on invalid boards (see :func:`nard_ai.core.board.validate_board`),
            a game already over, or dice outside 1..6.
    """
    boards, dice, rules = checked_batch(boards, dice, rules)
    return run_batch(boards, dice, rules.code, sort)


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
        raise ValueError(
            f"legal_plays takes one board of shape (26,), got {board.shape}; use legal_plays_batch"
        )
    dice = validate_dice(dice)
    if len(dice) != 1:
        raise ValueError(f"legal_plays takes one roll of two dice, got shape {np.shape(dice)}")
    plays, _ = legal_plays_batch(board[None], dice, rules, sort=True)
    return plays


def count_plays_batch(boards: np.ndarray, dice: np.ndarray, rules: Rules = Rules()) -> np.ndarray:
    """Number of legal plays of each position (``(N,)`` int64); same checks as :func:`legal_plays_batch`."""
    boards, dice, rules = checked_batch(boards, dice, rules)
    with workspace_in_use() as ws:
        return _count_batch(boards, dice, rules.code, ZOBRIST, ws.views(0))


@njit(cache=True, inline="always")
def _next_random(state, g):
    """splitmix64 step of game ``g``'s generator (Steele, Lea & Flood 2014); returns 64 random bits.

    The constants are :mod:`nard_ai.core.dice`'s ``SPLITMIX_*``, written out here: a compiled
    kernel does not read another file's globals at run time (numba bakes them in at compile time,
    and its cache would not see them change)."""
    s = state[g] + np.uint64(0x9E3779B97F4A7C15)
    state[g] = s
    z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _below(state, g, k):
    """A uniform integer in ``0..k-1`` from game ``g``'s generator (multiply-shift, Lemire 2019)."""
    return np.int64(((_next_random(state, g) >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _load_swapped(b, entries, e):
    """Put row ``e`` of ``entries`` into ``b`` with the sides swapped (the opponent on roll); summarise it.

    Returns ``(occ, off, outside, blocks, left)``: the first four as
    :func:`_board_summary` gives them for the new mover (no hash), ``left``
    the previous mover's checkers still on the board or the bar.
    """
    # without branches (comparisons as 0/1 integers): the board's pattern defeats branch prediction
    occ = np.int64(0)
    blocks = np.int64(0)
    on_board = np.int64(0)
    outside = np.int64(0)
    left = np.int64(0)
    for i in range(BOARD_SIZE):
        v = -np.int64(entries[e, BOARD_SIZE - 1 - i])
        b[i] = v
        mine = max(v, np.int64(0))
        on_board += mine
        occ |= np.int64(v > 0) << i
        outside += mine * np.int64(i > 6)
        left += max(-v, np.int64(0))
        blocks |= np.int64(v <= -2) << i
    blocks &= ~np.int64(1)  # index 0 is the opponent's bar, not a point
    return occ, NUM_CHECKERS - on_board, outside, blocks, left


@njit(cache=True, inline="always")
def _pick_play(d1, d2, rule, zob, ws, occ, off, outside, blocks, rng_state, g):
    """A legal play of the board in ``ws``, uniform over the distinct ones: its entry index in ``ws``.

    ``occ, off, outside, blocks`` describe the board (:func:`_board_summary`).
    The plays are numbered in the order the search first reached them and
    one number is drawn from game ``g``'s generator. When the search found a
    single class of sequence, every recorded afterstate is a legal play and
    the number is the entry index itself (standard rules); otherwise the
    legal ones are listed first (:func:`_keep_best`).
    """
    count, union = _search_turn(d1, d2, rule, zob, ws, np.uint64(0), occ, off, outside, blocks)
    if rule == 0 and (union & (union - 1)) == 0:
        return _below(rng_state, g, count)
    keep = ws[5]
    return keep[_below(rng_state, g, _keep_best(ws[2], keep, count, union, rule))]


@njit(cache=True)
def _random_plays(board, d1, d2, rule, zob, ws, seed, n):
    """``n`` plays of ``board`` (``(26,)`` int8) with dice ``d1, d2``, each picked as :func:`random_games` picks.

    For tests of the pick's distribution: ``(n, 26)`` int8 afterstates (not
    swapped), drawn from one splitmix64 generator seeded with ``seed``;
    ``ws`` is one thread's buffers (:meth:`Workspace.views`).
    """
    ws = unowned_views(ws)
    zob = unowned(zob)
    state = np.full(1, seed, dtype=np.uint64)
    out = np.empty((n, BOARD_SIZE), dtype=np.int8)
    entries, b = ws[0], ws[8]
    for k in range(n):
        for i in range(BOARD_SIZE):
            b[i] = board[i]
        _h, occ, off, outside, blocks = _board_summary(b, zob)
        e = _pick_play(d1, d2, rule, zob, ws, occ, off, outside, blocks, state, 0)
        for i in range(BOARD_SIZE):
            out[k, i] = entries[e, i]
    return out


@njit(cache=True)
def _play_random_game(g, plies, points, rng_state, start, rule, zob, ws):
    """Game ``g`` from the opening roll (RULES.md §2) to its end, both sides playing at random.

    The board stays in the workspace's search board from turn to turn; each
    turn's pick is uniform over the distinct legal plays, taken in the order
    the search first reached them.
    """
    ws = unowned_views(ws)  # arguments: re-wrapped, else reference counted on every use (unowned)
    zob = unowned(zob)
    rng_state = unowned(rng_state)
    entries, b = ws[0], ws[8]
    for i in range(BOARD_SIZE):
        b[i] = start[i]  # core.board.starting_board(), passed in: a frozen global would go stale in the cache
    _h, occ, off, outside, blocks = _board_summary(b, zob)
    # Each player rolls one die, ties roll again; the starter plays both numbers.
    d1 = 1 + _below(rng_state, g, 6)
    d2 = 1 + _below(rng_state, g, 6)
    while d1 == d2:
        d1 = 1 + _below(rng_state, g, 6)
        d2 = 1 + _below(rng_state, g, 6)
    sign = 1
    n = 0
    while True:
        n += 1
        e = _pick_play(d1, d2, rule, zob, ws, occ, off, outside, blocks, rng_state, g)
        occ, off, outside, blocks, left = _load_swapped(b, entries, e)
        if left == 0:
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
            points[g] = sign * result
            plies[g] = n
            return
        sign = -sign
        d1 = 1 + _below(rng_state, g, 6)
        d2 = 1 + _below(rng_state, g, 6)


@njit(cache=True)
def _game_arrays(seeds, start):
    """``(rng_state, points, plies, start)`` of ``n`` games, allocated by the caller of the kernels;
    ``start`` is :func:`nard_ai.core.board.starting_board`, where every game begins."""
    n = seeds.shape[0]
    return (seeds.copy(), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), start.copy())


@njit(cache=True, parallel=True)
def _random_games_parallel(games, rule, zob, wsa):
    """Random games to completion, in groups of consecutive games, each group played by one thread.

    Each game owns a splitmix64 generator seeded from ``seeds[g]``, so the
    results do not depend on the number of threads or on which thread plays
    which group. Threads never wait for each other until the end (no per-turn
    barrier); with a parallel chunk size of 1 (set by :func:`random_games`)
    a thread takes the next group as soon as it is done, so a thread slowed
    down by other work on its core does not hold the others up.
    """
    rng_state, points, plies, start = _unowned_games(games)
    n = rng_state.shape[0]
    zob = unowned(zob)
    groups = (n + _GAMES_PER_GROUP - 1) // _GAMES_PER_GROUP
    for group in numba.prange(groups):
        ws = unowned_views(_thread_views(wsa, numba.get_thread_id()))
        for g in range(group * _GAMES_PER_GROUP, min(n, (group + 1) * _GAMES_PER_GROUP)):
            _play_random_game(g, plies, points, rng_state, start, rule, zob, ws)


@njit(cache=True, nogil=True)
def _random_games_serial(games, rule, zob, wsa):
    """:func:`_random_games_parallel` on the calling thread only."""
    rng_state, points, plies, start = _unowned_games(games)
    zob = unowned(zob)
    ws = unowned_views(_thread_views(wsa, 0))
    for g in range(rng_state.shape[0]):
        _play_random_game(g, plies, points, rng_state, start, rule, zob, ws)


@njit(cache=True, inline="always")
def _unowned_games(games):
    """:func:`unowned` views of the arrays of :func:`_game_arrays`."""
    return (unowned(games[0]), unowned(games[1]), unowned(games[2]), unowned(games[3]))


def random_games(
    n_games: int, rng: np.random.Generator, rules: Rules = Rules()
) -> tuple[np.ndarray, np.ndarray]:
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
    threads = parallel_threads()
    games = _game_arrays(seeds, starting_board())  # held here: the kernels use views without an owner
    with workspace_in_use() as ws:
        threads = min(threads, ws.threads)
        if threads > 1 and n_games >= 2 * threads:
            previous = numba.set_parallel_chunksize(1)  # hand out groups of games one at a time
            try:
                _random_games_parallel(games, rules.code, ZOBRIST, ws.arrays())
            finally:
                numba.set_parallel_chunksize(previous)
        else:
            _random_games_serial(games, rules.code, ZOBRIST, ws.arrays())
    return games[1], games[2]
