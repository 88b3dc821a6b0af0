"""Compiled play description: :func:`describe_plays_batch`, the twin of :func:`~nard_ai.formats.notation.describe_plays` for a batch.

The HTTP ``/move`` answer writes every legal play of every request as single
checker moves and as notation (``24/18 13/11*``). In Python
(:func:`nard_ai.formats.notation.describe_plays`) that cost about 0.6 ms a
request, ten times the 0-ply search behind it; this module does the same
search and the same choice of notation in one numba kernel for the whole
batch, and gives the same answers (``tests/test_notation_fast.py`` compares
them on thousands of random positions and every roll).

What the kernel does, per position (RULES.md sections 3-5 for the moves):

1. A depth-first search over the single-die moves of the roll, in
   *canonical order*: the sources of a sequence never increase. Every
   multiset of moves that some order can play, this order can play too:
   checkers only move down, so by the time a checker bears off every move
   from a higher point (and from outside the home board) has been made, as in
   any valid order; bar entries come first in both; a point closed by the
   opponent stays closed and a hit blot never blocked. The Python search
   tries every order and keeps the multisets in a set: the same multisets.
2. Every board the search reaches (after one die or more, as the Python
   search records every level) is looked up among the position's afterstates
   by a 40-bit hash and then compared in full.
3. For each multiset reaching an afterstate: the smallest multiset (sorted
   highest first, compared as Python compares tuples) is the play's ``moves``;
   every way of joining the moves into checker paths is written as
   :func:`~nard_ai.formats.notation._format` writes it, and the best by
   (fewest groups, fewest paths, fewest ``*``, longest paths first, then the
   text as a byte string, which for ASCII is Python's ``str`` order) is the
   play's notation.

The kernels live in this file only (numba's cache does not notice when a
compiled callee in another file changes).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nard_ai.core.board import BAR, BOARD_SIZE, validate_board, validate_dice
from nard_ai.formats.notation import Move, describe_plays

__all__ = ["describe_plays_batch"]

_TEXT = 64  # bytes of one play's notation; the longest (four paths, or a 4-move path with stars) is under 40
_SLASH, _STAR, _SPACE, _OPEN, _CLOSE = ord("/"), ord("*"), ord(" "), ord("("), ord(")")


@njit(cache=True)
def _board_hash(board: np.ndarray) -> np.int64:
    """A 40-bit hash of a ``(26,)`` board (no int64 overflow; a match is then compared in full)."""
    h = np.int64(0)
    for k in range(BOARD_SIZE):
        h = ((h * np.int64(1000003)) + np.int64(board[k] + 16)) & np.int64(0xFFFFFFFFFF)
    return h


@njit(cache=True)
def _write_point(buf: np.ndarray, n: int, point: int) -> int:
    """Write a point's name (``bar``, ``off`` or its number) at ``buf[n:]``; the new length."""
    if point == BAR:
        buf[n] = ord("b")
        buf[n + 1] = ord("a")
        buf[n + 2] = ord("r")
        return n + 3
    if point == 0:
        buf[n] = ord("o")
        buf[n + 1] = ord("f")
        buf[n + 2] = ord("f")
        return n + 3
    if point >= 10:
        buf[n] = ord("0") + point // 10
        buf[n + 1] = ord("0") + point % 10
        return n + 2
    buf[n] = ord("0") + point
    return n + 1


@njit(cache=True)
def _path_before(src, first, end, stops, nstops, a: int, b: int) -> bool:
    """Whether path ``a`` is written before path ``b``: gnubg's order, as ``_format`` sorts.

    Key ``(-source, -first landing, end, tuple(-stop for stop in stops))``: the highest
    source first, then the highest first landing, then the lower end, then the stops.
    """
    if src[a] != src[b]:
        return src[a] > src[b]
    if first[a] != first[b]:
        return first[a] > first[b]
    if end[a] != end[b]:
        return end[a] < end[b]
    for k in range(min(nstops[a], nstops[b])):
        if stops[a, k] != stops[b, k]:
            return stops[a, k] > stops[b, k]
    return nstops[a] < nstops[b]


@njit(cache=True)
def _format_chaining(moves, nmoves, chain_of, hit, key, buf) -> int:
    """Write one grouping of the moves into checker paths; its ranking key and text.

    Args:
        moves: ``(4, 2)`` the moves ``(from, to)``, sorted highest first; ``nmoves`` used.
        chain_of: ``(4,)`` the chain (0..) each move belongs to; a chain's moves are in order.
        hit: ``(26,)`` bool, the points whose blot the play hit.
        key: ``(7,)`` int64 out: groups, paths, stars, then each written path's span
            (end minus source, repeated by its count; unused entries 0).
        buf: ``(_TEXT,)`` uint8 out: the text.

    Returns:
        The text's length. As :func:`nard_ai.formats.notation._format`.
    """
    nchains = 0
    for i in range(nmoves):
        nchains = max(nchains, chain_of[i] + 1)
    # each chain as a path: source, the hit points it stops on, end; and its first landing
    psrc = np.zeros(4, np.int64)
    pend = np.zeros(4, np.int64)
    pfirst = np.zeros(4, np.int64)
    pstops = np.zeros((4, 3), np.int64)
    pnstops = np.zeros(4, np.int64)
    for c in range(nchains):
        started = False
        last = -1
        for i in range(nmoves):
            if chain_of[i] != c:
                continue
            if not started:
                psrc[c] = moves[i, 0]
                pfirst[c] = moves[i, 1]
                started = True
            elif hit[last]:
                pstops[c, pnstops[c]] = last
                pnstops[c] += 1
            last = moves[i, 1]
        pend[c] = last
    # identical paths are written once with a count; first landing = the largest of theirs
    gsrc = np.zeros(4, np.int64)
    gend = np.zeros(4, np.int64)
    gfirst = np.zeros(4, np.int64)
    gstops = np.zeros((4, 3), np.int64)
    gnstops = np.zeros(4, np.int64)
    gcount = np.zeros(4, np.int64)
    ngroups = 0
    for c in range(nchains):
        found = -1
        for g in range(ngroups):
            if gsrc[g] == psrc[c] and gend[g] == pend[c] and gnstops[g] == pnstops[c]:
                same = True
                for k in range(pnstops[c]):
                    if gstops[g, k] != pstops[c, k]:
                        same = False
                if same:
                    found = g
                    break
        if found < 0:
            found = ngroups
            ngroups += 1
            gsrc[found] = psrc[c]
            gend[found] = pend[c]
            gnstops[found] = pnstops[c]
            for k in range(pnstops[c]):
                gstops[found, k] = pstops[c, k]
            gfirst[found] = 0
        gcount[found] += 1
        gfirst[found] = max(gfirst[found], pfirst[c])
    order = np.arange(4)
    for i in range(1, ngroups):  # insertion sort, gnubg's order
        j = i
        while j > 0 and _path_before(gsrc, gfirst, gend, gstops, gnstops, order[j], order[j - 1]):
            t = order[j]
            order[j] = order[j - 1]
            order[j - 1] = t
            j -= 1
    starred = np.zeros(BOARD_SIZE, np.bool_)
    stars = 0
    n = 0
    nspan = 0
    for k in range(7):
        key[k] = 0
    for gi in range(ngroups):
        g = order[gi]
        if gi:
            buf[n] = _SPACE
            n += 1
        n = _write_point(buf, n, gsrc[g])
        for s in range(gnstops[g]):
            buf[n] = _SLASH
            n = _write_point(buf, n + 1, gstops[g, s])
            buf[n] = _STAR
            n += 1
            starred[gstops[g, s]] = True
            stars += 1
        buf[n] = _SLASH
        n = _write_point(buf, n + 1, gend[g])
        if gend[g] > 0 and hit[gend[g]] and not starred[gend[g]]:
            buf[n] = _STAR
            n += 1
            starred[gend[g]] = True
            stars += 1
        if gcount[g] > 1:
            buf[n] = _OPEN
            buf[n + 1] = ord("0") + gcount[g]
            buf[n + 2] = _CLOSE
            n += 3
        for _ in range(gcount[g]):
            key[3 + nspan] = gend[g] - gsrc[g]
            nspan += 1
    key[0] = ngroups
    key[1] = nchains
    key[2] = stars
    return n


@njit(cache=True)
def _better(key, buf, n, best_key, best_buf, best_n) -> bool:
    """Whether ``(key, text)`` ranks before the best so far (keys compared in order, then the bytes)."""
    for k in range(7):
        if key[k] != best_key[k]:
            return key[k] < best_key[k]
    for k in range(min(n, best_n)):
        if buf[k] != best_buf[k]:
            return buf[k] < best_buf[k]
    return n < best_n


@njit(cache=True)
def _visit(level, seq, row, out_moves, out_nmoves, out_text, out_len, out_key, hit, key, buf):
    """Score one multiset of moves ``seq[:level]`` that reaches afterstate ``row``."""
    moves = np.zeros((4, 2), np.int64)
    for i in range(level):
        moves[i, 0] = seq[i, 0]
        moves[i, 1] = seq[i, 1]
    for i in range(1, level):  # sort highest first, as the Python search's sorted(..., reverse=True)
        j = i
        while j > 0 and (
            moves[j, 0] > moves[j - 1, 0]
            or (moves[j, 0] == moves[j - 1, 0] and moves[j, 1] > moves[j - 1, 1])
        ):
            for c in range(2):
                t = moves[j, c]
                moves[j, c] = moves[j - 1, c]
                moves[j - 1, c] = t
            j -= 1
    # the smallest multiset, compared as tuples of (from, to) pairs
    if out_nmoves[row] < 0:
        smaller = True
    else:
        smaller = False
        decided = False
        for i in range(min(level, out_nmoves[row])):
            for c in range(2):
                if not decided and moves[i, c] != out_moves[row, i, c]:
                    smaller = moves[i, c] < out_moves[row, i, c]
                    decided = True
        if not decided:
            smaller = level < out_nmoves[row]
    if smaller:
        for i in range(level):
            out_moves[row, i, 0] = moves[i, 0]
            out_moves[row, i, 1] = moves[i, 1]
        out_nmoves[row] = level
    # every chaining: move i starts a new chain (choice 0) or continues chain choice-1
    choice = np.zeros(4, np.int64)
    chain_of = np.zeros(4, np.int64)
    chain_end = np.zeros(4, np.int64)
    total = 1
    for i in range(level):
        total *= i + 1
    for code in range(total):
        rest = code
        for i in range(level):
            choice[i] = rest % (i + 1)
            rest //= i + 1
        nchains = 0
        ok = True
        for i in range(level):
            if choice[i] == 0:
                chain_of[i] = nchains
                chain_end[nchains] = moves[i, 1]
                nchains += 1
            else:
                c = choice[i] - 1
                if c >= nchains or chain_end[c] != moves[i, 0]:
                    ok = False
                    break
                chain_of[i] = c
                chain_end[c] = moves[i, 1]
        if not ok:
            continue
        n = _format_chaining(moves, level, chain_of, hit, key, buf)
        if out_len[row] < 0 or _better(key, buf, n, out_key[row], out_text[row], out_len[row]):
            for k in range(7):
                out_key[row, k] = key[k]
            for k in range(n):
                out_text[row, k] = buf[k]
            out_len[row] = n


@njit(cache=True)
def _describe_kernel(boards, dice, after, offsets, out_moves, out_nmoves, out_text, out_len):
    """For each position ``i`` and each afterstate row in ``offsets[i]:offsets[i+1]``: moves and notation.

    Writes ``out_moves[row, :out_nmoves[row]]`` (the smallest multiset, highest first) and
    ``out_text[row, :out_len[row]]``; rows no sequence reaches keep ``out_nmoves[row] = -1``.
    """
    out_key = np.zeros((after.shape[0], 7), np.int64)
    key = np.zeros(7, np.int64)
    buf = np.zeros(_TEXT, np.uint8)
    state = np.zeros((5, BOARD_SIZE), np.int64)
    seq = np.zeros((4, 2), np.int64)
    child = np.zeros((4, 64, 3), np.int64)  # per level: (die slot, from, to) of each move to try
    nchild = np.zeros(5, np.int64)
    nextc = np.zeros(5, np.int64)
    used = np.zeros(4, np.bool_)
    hit_all = np.zeros((after.shape[0], BOARD_SIZE), np.bool_)
    for i in range(boards.shape[0]):
        lo, hi = offsets[i], offsets[i + 1]
        if lo == hi:
            continue
        m = hi - lo
        hashes = np.empty(m, np.int64)
        for r in range(m):
            hashes[r] = _board_hash(after[lo + r])
            for p in range(1, BAR):  # the blots hit: the opponent's checker there is gone
                hit_all[lo + r, p] = boards[i, p] < 0 and after[lo + r, p] >= 0
        order = np.argsort(hashes)
        sorted_hashes = hashes[order]
        d1, d2 = dice[i, 0], dice[i, 1]
        ndice = 4 if d1 == d2 else 2
        die_of = np.empty(4, np.int64)
        for k in range(4):
            die_of[k] = d1 if (k % 2 == 0 or d1 == d2) else d2
        for k in range(ndice):
            used[k] = False
        for p in range(BOARD_SIZE):
            state[0, p] = boards[i, p]
        level = 0
        expand = True
        while True:
            if expand:
                # the moves from this node: every unused die, sources not above the last one
                nchild[level] = 0
                nextc[level] = 0
                if level < ndice:
                    s = state[level]
                    top = BAR if level == 0 else seq[level - 1, 0]
                    all_home = s[BAR] == 0
                    highest = 0
                    for p in range(BAR, 0, -1):
                        if s[p] > 0:
                            if highest == 0:
                                highest = p
                            if p >= 7:
                                all_home = False
                    for k in range(ndice):
                        if used[k]:
                            continue
                        if d1 == d2 and k > 0 and not used[k - 1]:
                            continue  # equal dice: one slot stands for all
                        die = die_of[k]
                        for src in range(top, 0, -1):
                            if s[src] <= 0 or (s[BAR] > 0 and src != BAR):
                                continue
                            dst = src - die
                            if dst >= 1:
                                if s[dst] < -1:
                                    continue
                            elif not (all_home and (dst == 0 or src == highest)):
                                continue
                            c = nchild[level]
                            child[level, c, 0] = k
                            child[level, c, 1] = src
                            child[level, c, 2] = max(dst, 0)
                            nchild[level] = c + 1
                expand = False
            if nextc[level] < nchild[level]:
                c = nextc[level]
                nextc[level] = c + 1
                k, src, dst = child[level, c, 0], child[level, c, 1], child[level, c, 2]
                for p in range(BOARD_SIZE):
                    state[level + 1, p] = state[level, p]
                nxt = state[level + 1]
                nxt[src] -= 1
                if dst >= 1:
                    if nxt[dst] == -1:
                        nxt[dst] = 0
                        nxt[0] -= 1  # the hit blot goes to the opponent's bar
                    nxt[dst] += 1
                seq[level, 0] = src
                seq[level, 1] = dst
                used[k] = True
                level += 1
                h = _board_hash(nxt)
                j = np.searchsorted(sorted_hashes, h)
                while j < m and sorted_hashes[j] == h:
                    row = lo + order[j]
                    same = True
                    for p in range(BOARD_SIZE):
                        if after[row, p] != nxt[p]:
                            same = False
                            break
                    if same:
                        _visit(
                            level,
                            seq,
                            row,
                            out_moves,
                            out_nmoves,
                            out_text,
                            out_len,
                            out_key,
                            hit_all[row],
                            key,
                            buf,
                        )
                    j += 1
                expand = True
            else:
                if level == 0:
                    break
                level -= 1
                used[child[level, nextc[level] - 1, 0]] = False


def _describe_arrays(boards, dice, afterstates, owner):
    """Validate :func:`describe_plays_batch`'s arguments and run the kernel.

    Returns ``(start, rolls, after, own, out_moves, out_nmoves, out_text, out_len, redo)``: the
    validated arrays, the kernel's outputs, and ``redo``, a list of the rows the kernel does not
    describe (the board unchanged, or an afterstate no sequence reaches) for
    :func:`~nard_ai.formats.notation.describe_plays` to describe or refuse.

    Raises:
        ValueError: as :func:`describe_plays_batch`, for its arguments.
    """
    start = validate_board(np.asarray(boards)).reshape(-1, BOARD_SIZE)
    rolls = validate_dice(np.asarray(dice)).reshape(-1, 2)
    after = validate_board(np.asarray(afterstates)).reshape(-1, BOARD_SIZE)
    own = np.asarray(owner)
    if rolls.shape[0] != start.shape[0]:
        raise ValueError(f"{start.shape[0]} boards but {rolls.shape[0]} rolls")
    if own.shape != (after.shape[0],) or (own.size and own.dtype.kind not in "iu"):
        raise ValueError(
            f"owner must be {after.shape[0]} integers, one per afterstate, got shape {own.shape}"
        )
    own = own.astype(np.int64)
    if own.size and (own.min() < 0 or own.max() >= start.shape[0] or (np.diff(own) < 0).any()):
        raise ValueError("owner must be non-decreasing indices into the boards")
    offsets = np.searchsorted(own, np.arange(start.shape[0] + 1)).astype(np.int64)
    m = after.shape[0]
    out_moves = np.zeros((m, 4, 2), np.int64)
    out_nmoves = np.full(m, -1, np.int64)
    out_text = np.zeros((m, _TEXT), np.uint8)
    out_len = np.full(m, -1, np.int64)
    _describe_kernel(start, rolls.astype(np.int64), after, offsets, out_moves, out_nmoves, out_text, out_len)
    redo = np.flatnonzero((after == start[own]).all(axis=1) | (out_nmoves < 0)).tolist() if m else []
    return start, rolls, after, own, out_moves, out_nmoves, out_text, out_len, redo


def _slow(start, rolls, after, own, j: int) -> tuple[list[Move], str]:
    """Row ``j`` by :func:`~nard_ai.formats.notation.describe_plays`: ``-``, or its error."""
    i = int(own[j])
    return describe_plays(start[i], after[j : j + 1], (int(rolls[i, 0]), int(rolls[i, 1])))[0]


def describe_plays_batch(
    boards: np.ndarray, dice: np.ndarray, afterstates: np.ndarray, owner: np.ndarray
) -> list[tuple[list[Move], str]]:
    """:func:`~nard_ai.formats.notation.describe_plays` of many positions at once, compiled.

    Args:
        boards: ``(N, 26)`` integer boards before the play, each from its mover's view.
        dice: ``(N, 2)`` integers 1..6, each board's roll.
        afterstates: ``(M, 26)`` integer boards after the plays, still the mover's view
            (not swapped), grouped by position.
        owner: ``(M,)`` integers, the position (0..N-1) of each afterstate, non-decreasing.

    Returns:
        ``M`` pairs ``(moves, notation)`` in the order of ``afterstates``, each equal to
        what ``describe_plays(boards[owner[j]], <its rows>, dice[owner[j]])`` gives for it:
        ``moves`` a list of ``(from, to)`` int pairs (25 = bar, 0 = off), ``notation`` e.g.
        ``"24/18 13/11*"``.

    Raises:
        ValueError: on a board, afterstate or dice that fails validation, an ``owner`` that
            is not a non-decreasing index into ``boards`` of length M, or (as ``describe_plays``)
            an afterstate no move sequence with the dice reaches, or one equal to its board
            although the roll can be played.
    """
    start, rolls, after, own, out_moves, out_nmoves, out_text, out_len, redo = _describe_arrays(
        boards, dice, afterstates, owner
    )
    texts = out_text.tobytes().decode("ascii")  # NUL-padded rows of _TEXT characters
    flat = out_moves.reshape(-1).tolist()  # one flat list: nested .tolist() costs more than the kernel
    counts = out_nmoves.tolist()
    lengths = out_len.tolist()
    out: list[tuple[list[Move], str]] = []
    for j in range(after.shape[0]):
        first = j * 8
        stop = first + 2 * counts[j]
        steps = list(zip(flat[first:stop:2], flat[first + 1 : stop : 2], strict=True))
        out.append((steps, texts[j * _TEXT : j * _TEXT + lengths[j]]))
    for j in redo:
        out[j] = _slow(start, rolls, after, own, j)
    return out


@njit(cache=True)
def _write_number(buf: np.ndarray, n: int, value: int) -> int:
    """Write ``value`` (0..99) in decimal at ``buf[n:]``; the new length."""
    if value >= 10:
        buf[n] = ord("0") + value // 10
        n += 1
    buf[n] = ord("0") + value % 10
    return n + 1


@njit(cache=True)
def _moves_json_kernel(out_moves, out_nmoves, buf, lengths):
    """Write each row's checker moves as the JSON array ``[{"from":A,"to":B},...]`` into ``buf[row]``.

    ``out_moves``/``out_nmoves`` are :func:`_describe_kernel`'s; rows with ``out_nmoves < 0`` get
    ``lengths[row] = 0`` (their text comes from the slow path).
    """
    for row in range(out_moves.shape[0]):
        n = 0
        if out_nmoves[row] >= 0:
            buf[row, n] = 91  # [
            n += 1
            for k in range(out_nmoves[row]):
                if k:
                    buf[row, n] = 44  # ,
                    n += 1
                for part in range(2):
                    label = _FROM if part == 0 else _TO
                    for c in range(label.shape[0]):
                        buf[row, n] = label[c]
                        n += 1
                    n = _write_number(buf[row], n, out_moves[row, k, part])
                buf[row, n] = 125  # }
                n += 1
            buf[row, n] = 93  # ]
            n += 1
        lengths[row] = n


_FROM = np.frombuffer(b'{"from":', dtype=np.uint8).copy()
_TO = np.frombuffer(b',"to":', dtype=np.uint8).copy()
_MOVES_JSON = 4 * 22 + 2  # bytes of the longest array: four moves of {"from":25,"to":25} and commas


def moves_json(moves: list[Move]) -> str:
    """The JSON array of checker moves ``[{"from":A,"to":B},...]`` (compact, as ``json.dumps`` writes it)."""
    return "[" + ",".join(f'{{"from":{int(a)},"to":{int(b)}}}' for a, b in moves) + "]"


def describe_plays_json(
    boards: np.ndarray, dice: np.ndarray, afterstates: np.ndarray, owner: np.ndarray
) -> tuple[list[str], list[str]]:
    """:func:`describe_plays_batch` with each play's checker moves as JSON text, for answers written as JSON.

    Args: as :func:`describe_plays_batch`.

    Returns:
        ``(moves, notations)``, two lists of ``M`` strings: ``moves[j]`` is :func:`moves_json` of
        play ``j``'s checker moves (e.g. ``[{"from":24,"to":18},{"from":13,"to":11}]``),
        ``notations[j]`` its notation, both as :func:`describe_plays_batch` gives them.

    Raises:
        ValueError: as :func:`describe_plays_batch`.
    """
    start, rolls, after, own, out_moves, out_nmoves, out_text, out_len, redo = _describe_arrays(
        boards, dice, afterstates, owner
    )
    m = after.shape[0]
    buf = np.zeros((m, _MOVES_JSON), np.uint8)
    lengths = np.zeros(m, np.int64)
    _moves_json_kernel(out_moves, out_nmoves, buf, lengths)
    texts, arrays = out_text.tobytes().decode("ascii"), buf.tobytes().decode("ascii")
    notations = [texts[j * _TEXT : j * _TEXT + n] for j, n in enumerate(out_len.tolist())]
    moves = [arrays[j * _MOVES_JSON : j * _MOVES_JSON + n] for j, n in enumerate(lengths.tolist())]
    for j in redo:
        steps, notations[j] = _slow(start, rolls, after, own, j)
        moves[j] = moves_json(steps)
    return moves, notations
