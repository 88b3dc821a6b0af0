"""Standard move notation (``24/18 13/11*``): written by diffing two positions, read back by :func:`parse_play`.

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

:func:`play_notation` does not check that a play is *legal* (most dice
used, larger die, RULES.md section 3.4): that is the move generator's job.
It only checks that each single-die move is possible, and that ``-`` (no
move) is written only for a roll that cannot be played at all.

:func:`parse_play` goes the other way: it reads a user's play (any of the
usual spellings), finds the afterstates its moves can produce with the dice,
and returns the one that is among ``legal_plays(board, dice, rules)``, or
raises a ``ValueError`` saying whether the text is malformed, impossible
with these dice, or possible but not legal, and why.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import numpy as np

from nard_ai.core.board import BAR, NUM_POINTS, validate_board, validate_dice
from nard_ai.core.checker_moves import Board, Move, single_moves
from nard_ai.core.movegen import legal_plays
from nard_ai.core.rules import Rules

EMPTY_PLAY = "-"
OFF = 0  # destination "point" of a checker borne off


def _mover_above(board: Board) -> list[int]:
    """``above[q]`` = mover checkers on point ``q`` or higher (bar = 25), for ``q`` in 0..25."""
    above = [0] * (BAR + 2)
    for q in range(BAR, -1, -1):
        above[q] = above[q + 1] + (board[q] if q and board[q] > 0 else 0)
    return above[: BAR + 1]


def move_sequences(board: Board, target: Board, dice: tuple[int, ...]) -> set[tuple[Move, ...]]:
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
            for (src, dst), after in single_moves(state, die):
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
        ``"13/7*/5"``; ``"-"`` when the afterstate equals the board and no
        die can be played.

    Raises:
        ValueError: if a board or the dice are invalid, if no sequence of
            single-die moves with these dice (each used at most once) takes
            ``board`` to ``afterstate``, or if the afterstate equals the
            board although a die can be played (the roll must be played,
            RULES.md 3.4, so moving nothing is not a play of it).
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
        playable = sorted({d for d in all_dice if single_moves(start, d)}, reverse=True)
        if playable:
            # RULES.md 3.4: a roll that can be played must be; the unchanged board is no play of it
            raise ValueError(
                f"the afterstate is the board itself (no move), but {d1}-{d2} can be played here "
                f"(a {playable[0]} moves); '-' is only the play of a roll with no legal move"
            )
        return EMPTY_PLAY
    return _written(start, target, all_dice)[1]


def _written(
    start: Board, target: Board, all_dice: tuple[int, ...], move_sets: set[tuple[Move, ...]] | None = None
) -> tuple[list[Move], str]:
    """The smallest single-move sequence (as :func:`move_sequences` orders them) and the notation of a play.

    ``move_sets``: :func:`move_sequences` of the play when the caller has them.

    Raises:
        ValueError: if no sequence of single-die moves takes ``start`` to ``target``.
    """
    if move_sets is None:
        move_sets = move_sequences(start, target, all_dice)
    if not move_sets:
        dice = f"{all_dice[0]}-{all_dice[0] if len(all_dice) == 4 else all_dice[1]}"
        raise ValueError(f"no sequence of moves with dice {dice} turns the board into the afterstate")
    # The blots hit: points where the opponent had a checker and has none after.
    hit_points = frozenset(p for p in range(1, BAR) if start[p] < 0 and target[p] >= 0)
    ranked = (_format(chains, hit_points) for moves in move_sets for chains in _chainings(moves))
    return list(min(move_sets)), min(ranked)[-1]


def _all_move_sequences(start: Board, all_dice: tuple[int, ...]) -> dict[Board, set[tuple[Move, ...]]]:
    """:func:`move_sequences` of every board reachable from ``start``, in one forward search.

    Level by level (one die more each), each ``(board, dice left)`` keeps the multisets of moves
    (sorted highest first, as :func:`move_sequences`) that reach it; a board's entry gathers
    them over every level, as :func:`move_sequences` counts a sequence that reaches its target
    with dice left. One search for all the plays of a roll, instead of one per play.
    """
    found: dict[Board, set[tuple[Move, ...]]] = {start: {()}}
    frontier: dict[tuple[Board, tuple[int, ...]], set[tuple[Move, ...]]] = {
        (start, tuple(sorted(all_dice))): {()}
    }
    while frontier:
        following: dict[tuple[Board, tuple[int, ...]], set[tuple[Move, ...]]] = {}
        for (state, remaining), sequences in frontier.items():
            for die in set(remaining):
                rest = list(remaining)
                rest.remove(die)
                left = tuple(rest)
                for move, after in single_moves(state, die):
                    bucket = following.setdefault((after, left), set())
                    for seq in sequences:
                        bucket.add(tuple(sorted((*seq, move), reverse=True)))
        for (state, _), sequences in following.items():
            found.setdefault(state, set()).update(sequences)
        frontier = following
    return found


def describe_plays(
    board: np.ndarray, afterstates: np.ndarray, dice: tuple[int, int]
) -> list[tuple[list[Move], str]]:
    """Each play of a roll as single checker moves and as notation, one search per play.

    For each afterstate: the sequence of single checker moves ``(from, to)``
    (mover's numbering, 25 = bar, 0 = off; the smallest of the sorted sequences
    :func:`move_sequences` finds, highest source first; ``[]`` for no move) and
    :func:`play_notation`'s text, both from the same search, the board and
    dice validated once, and one forward search for all the plays
    (:func:`_all_move_sequences`) instead of one search per play: for the
    plays of the move generator (the HTTP ``/move`` answer), where
    :func:`play_notation` plus a second search for the moves cost two
    searches a play.

    Args:
        board: ``(26,)`` integer board before the play, mover's view.
        afterstates: ``(M, 26)`` integer boards after each play, still the mover's view.
        dice: the two dice, each 1..6.

    Returns:
        ``M`` pairs ``(moves, notation)`` in the order of ``afterstates``.

    Raises:
        ValueError: as :func:`play_notation`, for the first afterstate no move
            sequence reaches, or one equal to the board although a die can be played.
    """
    before = np.asarray(board)
    if before.ndim != 1:
        raise ValueError(f"describe_plays takes a single board, got shape {before.shape}")
    start: Board = tuple(int(c) for c in validate_board(before))
    after = validate_board(np.asarray(afterstates)).reshape(-1, len(start))
    d1, d2 = (int(d) for d in validate_dice(np.asarray(dice))[0])
    all_dice = (d1,) * 4 if d1 == d2 else (d1, d2)
    reached = _all_move_sequences(start, all_dice)
    out: list[tuple[list[Move], str]] = []
    for row in after.tolist():
        target: Board = tuple(row)
        if target == start:
            out.append(([], play_notation(before, before, (d1, d2))))  # '-', or the error of a playable roll
        else:
            out.append(_written(start, target, all_dice, reached.get(target, set())))
    return out


# --------------------------------------------------------------------------
# Reading a written play
# --------------------------------------------------------------------------

_POINT_NAMES = {"bar": BAR, "off": OFF}
_GROUP_RE = re.compile(r"(?P<path>[^()]+?)(?:\((?P<count>[^()]*)\))?")
_STEP_RE = re.compile(r"(?P<name>[A-Za-z]+|\d+)(?P<star>\*?)")

STANDARD_RULES = Rules()
Path = tuple[int, ...]  # a checker's written path: source, named landings, destination


def _parse_point(name: str, token: str, first: bool, last: bool) -> int:
    """One point name of a written path: 1-24, ``bar``/25 (source only), ``off``/0 (destination only)."""
    lowered = name.lower()
    if lowered in _POINT_NAMES:
        point = _POINT_NAMES[lowered]
    elif name.isdigit() and name.isascii():
        point = int(name)
        if point > BAR:
            raise ValueError(f"move {token!r}: point {name} is outside 1-24 (25 = bar, 0 = off)")
    else:
        raise ValueError(f"move {token!r}: {name!r} is not a point (1-24, bar/25, off/0)")
    if point == BAR and not first:
        raise ValueError(f"move {token!r}: the bar can only be where a checker starts")
    if point == OFF and not last:
        raise ValueError(f"move {token!r}: 'off' can only be where a checker ends")
    return point


def _parse_text(text: str) -> tuple[list[Path], frozenset[int]]:
    """Split a written play into checker paths (one per checker, repeats expanded) and starred points.

    Raises:
        ValueError: naming the token, when a group is not ``from/to[/to...][*][(n)]``
            with points moving forward.
    """
    paths: list[Path] = []
    starred: set[int] = set()
    for token in text.replace(",", " ").split():
        match = _GROUP_RE.fullmatch(token)
        if not match:
            raise ValueError(f"move {token!r} is not of the form from/to (e.g. 24/18, bar/22, 6/off, 8/2(2))")
        count_text = match.group("count")
        if count_text is None:
            count = 1
        elif count_text.isdigit() and count_text.isascii() and 1 <= int(count_text) <= 4:
            count = int(count_text)
        else:
            raise ValueError(f"move {token!r}: the repeat count ({count_text}) must be 1-4")
        steps = match.group("path").split("/")
        if len(steps) < 2:
            raise ValueError(f"move {token!r} needs a source and a destination separated by '/'")
        points = []
        for i, step in enumerate(steps):
            step_match = _STEP_RE.fullmatch(step)
            if not step_match:
                raise ValueError(
                    f"move {token!r}: {step!r} is not a point (1-24, bar/25, off/0, optional '*')"
                )
            point = _parse_point(step_match.group("name"), token, first=i == 0, last=i == len(steps) - 1)
            if step_match.group("star"):
                if i == 0:
                    raise ValueError(
                        f"move {token!r}: a '*' marks a hit where a checker lands, not its source"
                    )
                if point == OFF:
                    raise ValueError(f"move {token!r}: nothing can be hit off the board")
                starred.add(point)
            points.append(point)
        for a, b in zip(points, points[1:], strict=False):
            if b >= a:
                raise ValueError(f"move {token!r}: {_point_name(a)}/{_point_name(b)} does not move forward")
        paths.extend([tuple(points)] * count)
    if len(paths) > 4:
        raise ValueError(f"{text!r} moves {len(paths)} checkers; a roll moves at most 4")
    return paths, frozenset(starred)


def _realisations(
    start: Board, paths: list[Path], dice: tuple[int, ...], need_home: bool = True, need_highest: bool = True
) -> dict[Board, int]:
    """Every afterstate the written paths can produce with these dice, with the most dice it can use.

    Each path is one checker that must land on each named point in turn,
    moving by single dice (RULES.md 3.2: every landing point open; 4: the bar
    first; 5: bearing off). Dice may be left over; whether that is legal is
    for the legal-play generator to say. ``need_home``/``need_highest`` as in
    :func:`~nard_ai.core.checker_moves.single_moves` (both on for the rules as they are).
    """
    found: dict[Board, int] = {}
    total = len(dice)

    @cache
    def search(state: Board, remaining: tuple[int, ...], pending: tuple[Path, ...]) -> None:
        if not pending:
            used = total - len(remaining)
            if all(c <= 0 for c in state[1:]):
                used = total  # RULES.md 3.6: bearing off the last checker uses every die
            found[state] = max(found.get(state, 0), used)
            return
        for die in sorted(set(remaining)):
            rest = list(remaining)
            rest.remove(die)
            moves = dict(single_moves(state, die, need_home, need_highest))
            for k, path in enumerate(pending):
                if k and path == pending[k - 1]:
                    continue  # identical checkers: one is enough
                src, target = path[0], path[1]
                dst = src - die
                if target != OFF and dst < target:
                    continue  # would overshoot the named point
                after = moves.get((src, max(dst, OFF)))
                if after is None:
                    continue
                if dst <= OFF:
                    advanced: Path = ()
                elif dst == target:
                    advanced = path[1:] if len(path) > 2 else ()
                else:
                    advanced = (dst, *path[1:])
                others = pending[:k] + pending[k + 1 :]
                new_pending = tuple(sorted((*others, advanced) if advanced else others, reverse=True))
                search(after, tuple(rest), new_pending)

    search(start, tuple(sorted(dice)), tuple(sorted(paths, reverse=True)))
    return found


def _max_dice(start: Board, dice: tuple[int, ...]) -> tuple[int, frozenset[int]]:
    """The most dice any sequence can play (docs/RULES.md 3.4, 3.6), and which single dice can open it when that is 1."""

    @cache
    def most(state: Board, remaining: tuple[int, ...]) -> int:
        if all(c <= 0 for c in state[1:]):
            return len(remaining)  # the last checker is off: every die counts as used
        best = 0
        for die in set(remaining):
            rest = list(remaining)
            rest.remove(die)
            for _, after in single_moves(state, die):
                best = max(best, 1 + most(after, tuple(rest)))
                if best == len(remaining):
                    return best
        return best

    remaining = tuple(sorted(dice))
    playable = frozenset(d for d in set(dice) if single_moves(start, d))
    return most(start, remaining), playable


def _leg_reason(board: Board, a: int, b: int, dice: tuple[int, ...], token: str) -> str | None:
    """Why one leg ``a -> b`` of a path cannot be played on its own, or ``None`` if it might be."""
    d1, d2 = dice[0], dice[-1]
    if len(dice) == 4:
        reach = [d1 * k for k in range(1, 5)]
    else:
        reach = sorted({d1, d2, d1 + d2})
    if b != OFF:
        pips = a - b
        if pips not in reach:
            return (
                f"{token}: {_point_name(a)}/{_point_name(b)} moves {pips} pip{'s' if pips != 1 else ''}, "
                f"but with {d1}-{d2} one checker moves {', '.join(map(str, reach))} pips"
            )
        if board[b] < -1:
            return f"{token}: point {b} is closed ({-board[b]} opposing checkers)"
    else:
        # Whether the other checkers are home by then is for _bear_off_reason:
        # the checker itself, or another one of the play, may come home first.
        if a > reach[-1]:
            return f"{token}: {_point_name(a)}/off needs {a} pips, but {d1}-{d2} moves one checker at most {reach[-1]}"
    return None


def _bear_off_reason(start: Board, path: Path, dice: tuple[int, ...], token: str) -> str | None:
    """Why a path that ends ``off`` cannot be played, when a bearing-off rule (docs/RULES.md 5) is what stops it.

    Tried by dropping one condition at a time: if the checker can be played
    once "all checkers home" is dropped, that rule stops it; if once "from
    point ``d``, or the highest point" is dropped, that one does. ``None``
    when neither is the reason (a closed landing point, say).
    """
    if path[-1] != OFF:
        return None
    d1, d2 = dice[0], dice[-1]
    home_rule = (
        f"{token}: you cannot bear off until all your checkers are in your home board (points 1-6) "
        "and none is on the bar (docs/RULES.md 5)"
    )
    if _realisations(start, [path], dice, need_home=False):
        outside = ["the bar" if p == BAR else f"the {p}-point" for p in range(BAR, 6, -1) if start[p] > 0]
        return f"{home_rule}; you have checkers on {' and '.join(outside)}"
    if _realisations(start, [path], dice, need_highest=False):
        point = path[-2]
        higher = [p for p in range(NUM_POINTS, point, -1) if start[p] > 0]
        where = f"the {point}-point" if point != BAR else "the bar"
        above = ""
        if higher and point != BAR:
            count = start[higher[0]]
            checkers = "a checker" if count == 1 else f"{count} checkers"
            above = f"; you have {checkers} on the {higher[0]}-point, higher than the {point}-point"
        return (
            f"{token}: with {d1}-{d2} no die bears a checker off from {where}: a die bears off a checker "
            "from the point of its own number, and a larger die only from the highest point that holds "
            f"your checkers (docs/RULES.md 5){above}"
        )
    if _realisations(start, [path], dice, need_home=False, need_highest=False):
        return home_rule
    return None


def _why_impossible(start: Board, paths: list[Path], text: str, dice: tuple[int, ...]) -> str:
    """A reason, as specific as can be found, why no sequence of single-die moves plays ``text``."""
    d1, d2 = dice[0], dice[-1]
    ends = {path[-1] for path in paths}
    on_bar = start[BAR]
    from_bar = sum(1 for path in paths if path[0] == BAR)
    if on_bar and from_bar < min(on_bar, len(dice)) and any(path[0] != BAR for path in paths):
        return (
            f"you have {on_bar} checker(s) on the bar: they must enter (bar/...) "
            "before any other checker moves (docs/RULES.md 4)"
        )
    if on_bar and from_bar > on_bar:
        return (
            f"you have only {on_bar} checker{'s' if on_bar != 1 else ''} on the bar, but {text!r} "
            f"enters {from_bar}"
        )
    starts = Counter(path[0] for path in paths)
    arrivals = Counter(path[-1] for path in paths)
    for src, count in sorted(starts.items(), reverse=True):
        have = start[src]
        if src != BAR and have > 0 and count > have + arrivals[src]:
            return (
                f"you have only {have} checker{'s' if have != 1 else ''} on the {src}-point, but "
                f"{text!r} moves {count} from it"
            )
    for path in paths:
        token = "/".join(_point_name(p) for p in path)
        src = path[0]
        if src == BAR and on_bar == 0:
            return f"{token}: you have no checker on the bar"
        if src != BAR and start[src] <= 0 and src not in ends:
            owner = "the opponent's checkers" if start[src] < 0 else "no checker"
            return f"{token}: point {src} holds {owner}, none of yours"
        for a, b in zip(path, path[1:], strict=False):
            reason = _leg_reason(start, a, b, dice, token)
            if reason:
                return reason
        alone = _realisations(start, [path], dice)
        # A path that another written move makes possible (6/off first, then
        # 3/off with the 5) is not what is wrong.
        if not alone and not any(
            _realisations(start, [other, path], dice) for other in paths if other is not path
        ):
            reason = _bear_off_reason(start, path, dice, token)
            if reason:
                return reason
            steps = {dice[0] * k for k in range(1, len(dice))} if len(dice) == 4 else set(dice)
            landings = {
                a - step for a, b in zip(path, path[1:], strict=False) for step in steps if b < a - step
            }
            closed = sorted((p for p in landings if 0 < p < BAR and start[p] < -1), reverse=True)
            where = f" ({', '.join(map(str, closed))})" if closed else ""
            return (
                f"{token} cannot be played with {d1}-{d2} from this position: every way to move the checker "
                f"lands on a closed point{where} (docs/RULES.md 3.2)"
            )
    return f"{text!r} cannot be played with {d1}-{d2} from this position: the moves together need other dice"


def parse_play(
    board: np.ndarray, text: str, dice: tuple[int, int], rules: Rules = STANDARD_RULES
) -> np.ndarray:
    """Read a play written in standard notation and return its afterstate, if it is legal.

    Accepted, case-insensitively: moves ``from/to`` separated by spaces (or
    commas); points 1-24 in the mover's numbering, ``bar`` or ``25`` as a
    source, ``off`` or ``0`` as a destination; one checker's moves joined
    (``13/7/5``, ``13/7*/5``); a repeat count (``8/2(2)``) or the move
    repeated (``8/2 8/2``); ``*`` on a hit, optional; ``-`` for a roll that
    cannot be played. Identical afterstates are one play (RULES.md 3.5), so
    any way of writing a play is accepted.

    A named point is a landing of that checker. Unnamed intermediate landings
    are read as not hitting, as gnubg writes them (it marks ``13/7*/5``), so
    when both readings are legal ``24/18`` means the one that passes a blot
    by; a ``*`` on a point requires a hit there.

    Args:
        board: ``(26,)`` board before the play, mover's view.
        text: the play, e.g. ``"24/18 13/11*"``, ``"bar/22"``, ``"6/off"``,
            ``"8/2(2)"``, ``"13/7*/5"``, ``"25/22"``.
        dice: the two dice, each 1-6 (a double gives four moves).
        rules: the rule settings (the Iranian variant restricts the legal plays).

    Returns:
        ``(26,)`` int8 afterstate, mover's view (not swapped): one of
        ``legal_plays(board, dice, rules)``.

    Raises:
        ValueError: if the board or dice are invalid; if the text is malformed
            (naming the token); if it cannot be played with these dice (saying
            which move and why: no checker there, wrong distance, a closed
            point, the bar first, or the bearing-off rule of RULES.md 5 --
            not all checkers home yet, or a die that may bear off neither
            from its own point nor, with no checker higher, from the
            highest point); or if it can be
            played but is not a legal play (saying why: it does not use as
            many dice as possible, it must play the larger die, or the
            Iranian no-hit-and-continue rule).
    """
    if not isinstance(text, str):
        raise ValueError(f"a play must be written as a str, got {type(text).__name__}")
    before = np.asarray(board)
    if before.ndim != 1:
        raise ValueError(f"parse_play takes one board of shape (26,), got shape {before.shape}")
    start: Board = tuple(int(c) for c in validate_board(before))
    d1, d2 = (int(d) for d in validate_dice(np.asarray(dice))[0])
    d1, d2 = max(d1, d2), min(d1, d2)
    all_dice = (d1,) * 4 if d1 == d2 else (d1, d2)
    legal = legal_plays(np.asarray(start, dtype=np.int8), (d1, d2), rules)
    legal_set = {tuple(int(c) for c in row) for row in legal}
    written = text.strip()
    if not written:
        raise ValueError("the play is empty; write '-' for a roll that cannot be played")
    if written == EMPTY_PLAY:
        if start in legal_set:
            return np.asarray(start, dtype=np.int8)
        raise ValueError(
            f"'-' (no move) is not legal: {d1}-{d2} can be played here, e.g. {_example(start, legal, (d1, d2))}"
        )
    paths, starred = _parse_text(written)
    reachable = _realisations(start, paths, all_dice)
    blots = frozenset(p for p in range(1, BAR) if start[p] == -1)
    missing = sorted(starred - blots)
    if missing:
        raise ValueError(
            f"{written!r} marks a hit ('*') on point(s) {', '.join(map(str, missing))}, "
            "where there is no opposing blot to hit"
        )

    def hits(after: Board) -> frozenset[int]:
        return frozenset(p for p in blots if after[p] >= 0)

    candidates = {after: used for after, used in reachable.items() if starred <= hits(after)}
    if not candidates:
        if reachable:
            raise ValueError(f"{written!r} cannot hit on every point marked '*' with {d1}-{d2}")
        raise ValueError(_why_impossible(start, paths, written, all_dice))
    good = [after for after in candidates if after in legal_set]
    if good:
        fewest = min(len(hits(after)) for after in good)
        best = [after for after in good if len(hits(after)) == fewest]
        if len(best) > 1:
            options = " or ".join(
                repr(play_notation(np.asarray(start), np.asarray(after), (d1, d2))) for after in sorted(best)
            )
            raise ValueError(f"{written!r} is ambiguous with {d1}-{d2}: write {options}")
        return np.asarray(best[0], dtype=np.int8)
    # Possible with these dice, but not a legal play: say which rule it breaks.
    used = max(candidates.values())
    most, playable = _max_dice(start, all_dice)
    if used < most:
        return _raise_not_legal(
            written,
            f"it plays {used} {'die' if used == 1 else 'dice'} but {most} can be played, "
            "and as many dice as possible must be "
            "played (docs/RULES.md 3.4)",
            start,
            legal,
            (d1, d2),
        )
    if d1 != d2 and most == 1 and d1 in playable:
        return _raise_not_legal(
            written,
            f"only one die can be played, and then it must be the larger one ({d1}) (docs/RULES.md 3.4)",
            start,
            legal,
            (d1, d2),
        )
    if rules.no_hit_and_continue is not None:
        return _raise_not_legal(
            written,
            f"the Iranian no-hit-and-continue rule (form {rules.no_hit_and_continue}, docs/RULES.md 7) forbids it "
            "here: a checker that hits in your home board may not move on",
            start,
            legal,
            (d1, d2),
        )
    return _raise_not_legal(written, "it is not among the legal plays", start, legal, (d1, d2))


def _example(start: Board, legal: np.ndarray, dice: tuple[int, int]) -> str:
    return repr(play_notation(np.asarray(start), legal[0], dice))


def _raise_not_legal(
    written: str, reason: str, start: Board, legal: np.ndarray, dice: tuple[int, int]
) -> np.ndarray:
    raise ValueError(
        f"{written!r} can be played with {dice[0]}-{dice[1]} but is not legal: {reason}; "
        f"a legal play is {_example(start, legal, dice)}"
    )
