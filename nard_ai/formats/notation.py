"""Standard move notation (``24/18 13/11*``), derived by diffing two positions.

As in wildbg, the engine's plays are afterstates; a written move exists only
for output. :func:`play_notation` finds single-die move sequences that take a
board to an afterstate (a small depth-first search, RULES.md sections 3-5)
and writes the play the way GNU Backgammon does:

* each move is ``from/to`` in the mover's numbering, ``bar`` for the bar and
  ``off`` for bearing off: ``bar/22``, ``6/off``;
* a landing that hits a blot is marked ``*``: ``13/11*``;
* the moves of one checker that continue are joined, keeping only the
  intermediate points where it hit: ``24/13`` (6-5 run), ``13/7*/5``;
* moves are sorted by source point, highest first;
* identical moves are written once with a count: ``8/2(2)``;
* a play that moves nothing is ``-``.

Among the sequences and groupings that give the afterstate, the notation
with the fewest move groups is chosen, so ``8/2(2)`` beats ``8/5(2) 5/2(2)``;
ties go to the fewest checker paths, the fewest ``*``, then the longest
paths first. On all legal plays of thousands of random positions this gives
the same text as gnubg's ``FormatMove`` applied to gnubg's own move list.

This module does not check that a play is *legal* (most dice used, larger
die, RULES.md section 3.4): that is the move generator's job. It only checks
that each single-die move is possible.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np

from nard_ai.board import BAR, NUM_POINTS, validate_board, validate_dice

EMPTY_PLAY = "-"
OFF = 0  # destination "point" of a checker borne off

Move = tuple[int, int]  # (source, destination): 25 = bar, 0 = off
Board = tuple[int, ...]  # a board as a hashable tuple of 26 ints, mover's view


def _single_moves(board: Board, die: int) -> list[tuple[Move, Board]]:
    """Every move of one checker by ``die`` pips, with the board it leaves.

    RULES.md section 4: checkers on the bar enter first, on point ``25 - die``.
    Section 3.2: a checker may land on a point holding at most one opposing
    checker (a blot), which it hits. Section 5: bearing off needs every
    checker in the home board; ``die`` bears off from point ``die``, or from
    the highest point when no checker stands higher than ``die``.
    """
    if board[BAR] > 0:
        sources: list[int] = [BAR]
    else:
        sources = [p for p in range(NUM_POINTS, 0, -1) if board[p] > 0]
    all_home = board[BAR] == 0 and all(board[p] <= 0 for p in range(7, NUM_POINTS + 1))
    highest = sources[0] if sources else 0
    result = []
    for src in sources:
        dst = src - die
        if dst >= 1:
            if board[dst] < -1:
                continue  # a closed point
        elif not (all_home and (dst == 0 or src == highest)):
            continue
        after = list(board)
        after[src] -= 1
        if dst >= 1:
            if after[dst] == -1:
                after[dst] = 0
                after[0] -= 1  # the hit blot goes to the opponent's bar
            after[dst] += 1
        result.append(((src, max(dst, OFF)), tuple(after)))
    return result


def _mover_above(board: Board) -> list[int]:
    """``above[q]`` = mover checkers on point ``q`` or higher (bar = 25), for ``q`` in 0..25."""
    above = [0] * (BAR + 2)
    for q in range(BAR, -1, -1):
        above[q] = above[q + 1] + (board[q] if q and board[q] > 0 else 0)
    return above[: BAR + 1]


def _sequences(board: Board, target: Board, dice: tuple[int, ...]) -> set[tuple[Move, ...]]:
    """The multisets of moves (sorted tuples) of single-die sequences from ``board`` to ``target``.

    ``dice`` is the multiset of dice still available; a sequence may stop
    before using all of them (the legal-play generator decides whether that
    was allowed).
    """
    target_above = _mover_above(target)

    @cache
    def search(state: Board, remaining: tuple[int, ...]) -> frozenset[tuple[Move, ...]]:
        found: set[tuple[Move, ...]] = set()
        if state == target:
            found.add(())
        # Checkers never move up, so the count on or above a point never grows:
        # a move from `src` to `dst` needs a spare checker above each point it leaves.
        above = _mover_above(state)
        spare = [a - t for a, t in zip(above, target_above, strict=True)]
        for die in sorted(set(remaining)):
            rest = list(remaining)
            rest.remove(die)
            for (src, dst), after in _single_moves(state, die):
                if min(spare[dst + 1 : src + 1]) < 1:
                    continue
                # A hit cannot be undone: the blot must be gone in the target too.
                if dst and state[dst] < 0 and target[dst] < 0:
                    continue
                for tail in search(after, tuple(rest)):
                    found.add(tuple(sorted(((src, dst), *tail), reverse=True)))
        return frozenset(found)

    return set(search(board, tuple(sorted(dice))))


def _chainings(moves: tuple[Move, ...]) -> list[list[list[Move]]]:
    """Every way to join the moves (sorted by source, highest first) into checker paths.

    A move may continue a path that ends on its source point: the same
    checker moving on.
    """
    results: list[list[list[Move]]] = []

    def extend(i: int, chains: list[list[Move]]) -> None:
        if i == len(moves):
            results.append([list(c) for c in chains])
            return
        move = moves[i]
        extend(i + 1, [*chains, [move]])
        for k, chain in enumerate(chains):
            if chain[-1][1] == move[0]:
                extend(i + 1, [*chains[:k], [*chain, move], *chains[k + 1 :]])

    extend(0, [])
    return results


def _point_name(point: int) -> str:
    if point == BAR:
        return "bar"
    if point == OFF:
        return "off"
    return str(point)


def _format(
    chains: list[list[Move]], hit_points: frozenset[int]
) -> tuple[int, int, int, tuple[int, ...], str]:
    """Write one grouping of moves.

    Returns:
        ``(groups, paths, stars, spans, text)``, ranked in that order: the
        fewest groups, then the fewest checker paths, then the fewest ``*``,
        then (as gnubg, which extends the first path as far as it goes) the
        longest paths first; ``spans`` is minus each written path's length.
    """
    # A path is its source, the hit points it passes through, and its end.
    paths = []
    first_step: dict[tuple[int, ...], int] = {}
    for chain in chains:
        stops = [m[1] for m in chain[:-1] if m[1] in hit_points]
        path = (chain[0][0], *stops, chain[-1][1])
        paths.append(path)
        first_step[path] = max(first_step.get(path, OFF), chain[0][1])
    # Identical moves are written once: `8/2(2)` (gnubg's FormatMove).
    counts = Counter(paths)
    # As gnubg orders moves: highest source first, then the highest first
    # landing (`7/6 7/1`), then the path that goes farther (`12/10 12/11` with 1-1).
    ordered = sorted(
        counts,
        key=lambda path: (-path[0], -first_step[path], path[-1], tuple(-p for p in path[1:-1])),
    )
    starred: set[int] = set()
    stars = 0
    parts = []
    for path in ordered:
        names = [_point_name(path[0])]
        for point in path[1:-1]:
            names.append(f"{_point_name(point)}*")
            starred.add(point)
            stars += 1
        end = path[-1]
        if end in hit_points and end not in starred:
            names.append(f"{_point_name(end)}*")
            starred.add(end)
            stars += 1
        else:
            names.append(_point_name(end))
        text = "/".join(names)
        if counts[path] > 1:
            text += f"({counts[path]})"
        parts.append(text)
    spans = tuple(path[-1] - path[0] for path in ordered for _ in range(counts[path]))
    return len(parts), len(paths), stars, spans, " ".join(parts)


def play_notation(board: np.ndarray, afterstate: np.ndarray, dice: tuple[int, int]) -> str:
    """The standard notation of the play that turns ``board`` into ``afterstate``.

    Args:
        board: ``(26,)`` integer board before the play, mover's view.
        afterstate: ``(26,)`` integer board after the play, **still the
            mover's view** (not swapped).
        dice: the two dice, each 1..6 (a double gives four moves).

    Returns:
        The play in gnubg's style, in the mover's numbering, e.g. ``"8/5 6/5"``,
        ``"24/18 13/11*"``, ``"bar/22"``, ``"6/off"``, ``"8/2(2)"``,
        ``"13/7*/5"``; ``"-"`` when the afterstate equals the board.

    Raises:
        ValueError: if a board or the dice are invalid, or no sequence of
            single-die moves with these dice (each used at most once) takes
            ``board`` to ``afterstate``.
    """
    before = np.asarray(board)
    after = np.asarray(afterstate)
    if before.ndim != 1 or after.ndim != 1:
        raise ValueError(f"play_notation takes single boards, got shapes {before.shape} and {after.shape}")
    start: Board = tuple(int(c) for c in validate_board(before))
    target: Board = tuple(int(c) for c in validate_board(after))
    d1, d2 = (int(d) for d in validate_dice(np.asarray(dice))[0])
    all_dice = (d1,) * 4 if d1 == d2 else (d1, d2)
    if start == target:
        return EMPTY_PLAY
    move_sets = _sequences(start, target, all_dice)
    if not move_sets:
        raise ValueError(f"no sequence of moves with dice {d1}-{d2} turns the board into the afterstate")
    # The blots hit: points where the opponent had a checker and has none after.
    hit_points = frozenset(p for p in range(1, BAR) if start[p] < 0 and target[p] >= 0)
    ranked = (_format(chains, hit_points) for moves in move_sets for chains in _chainings(moves))
    return min(ranked)[-1]
