"""A slow, obviously correct reference for the legal plays of RULES.md sections 3-5 and 7.

This module is written independently of ``nard_ai.core.movegen`` and only for the
tests: it favours clarity over speed. It never imports the generator it checks.

Positions use the layout of :mod:`nard_ai.core.board` (mover's view, index 1..24 =
the mover's points, positive = mover checkers, 25 = the mover's bar, 0 = the
opponent's bar stored negative), held here as plain ``tuple`` s of 26 ints so
they can be hashed and cached.

How the legal plays are found (:func:`legal_play_set`):

1. Enumerate every sequence of single-die moves: the two dice in both orders
   (four moves of the same number for doubles). A sequence stops when the
   next die cannot be moved. Identical intermediate states are merged (a
   state is the board plus, for the Iranian variant, where the hitting
   checkers stand and whether the rule was already broken), which is what
   keeps doubles tractable; it loses no sequence, because what can happen
   next depends only on the state.
2. RULES.md 3.6: a sequence that bears off the mover's last checker counts as
   using every die.
3. RULES.md 3.4: keep the sequences that use the most dice; if that is one
   die of a non-double, keep those that use the larger die when there are
   any.
4. RULES.md 3.5: a play is the position a kept sequence produces.
5. RULES.md 7 (opt-in): a play respects the Iranian rule if at least one of
   its kept sequences does; when no play respects it, all stay legal.
6. No legal move: the one play is the unchanged board.

Public API:

* :func:`legal_plays` ``(board, dice, rules=Rules()) -> (M, 26) int8``, rows
  sorted lexicographically (the contract of ``nard_ai.core.movegen.legal_plays``).
* :func:`legal_play_set` ``(board_tuple, die1, die2, form=None) ->
  frozenset[tuple]``, cached; ``form`` is ``None``, ``"000"`` or ``"002"``.
* :func:`single_die_moves` ``(board_tuple, die) -> tuple[Step, ...]``: every
  legal move of one checker by one die (RULES.md 3.2, 4, 5).
* :func:`apply_move` ``(board, from_point, to_point) -> board``: move one
  checker, hitting a blot on the landing point (no legality check; used to
  write expected afterstates in tests). ``from_point`` 25 = the bar,
  ``to_point`` 0 = borne off.
* :func:`dice_used` ``(board, die1, die2) -> tuple[int, ...]``: the dice the
  legal plays use, largest first.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from nard_ai.core.rules import Rules

BAR = 25  # the mover's bar
OPP_BAR = 0  # the opponent's bar, stored negative
OFF = 0  # as a ``to_point``: the checker is borne off
HOME = range(1, 7)  # the mover's home board
STANDARD = Rules()  # the default rules

Board = tuple[int, ...]


class Step(NamedTuple):
    """One checker moved by one die, from the mover's view."""

    from_point: int  # 1..24, or 25 for the bar
    to_point: int  # 1..24, or 0 (OFF) for borne off
    hit: bool  # the checker landed on an opposing blot
    after: Board  # the board after this single move


def as_tuple(board) -> Board:
    """A board as a hashable tuple of 26 Python ints."""
    if type(board) is tuple:
        return board
    return tuple(int(x) for x in np.asarray(board).reshape(26))


def apply_move(board, from_point: int, to_point: int) -> Board:
    """Move one mover checker from ``from_point`` to ``to_point`` (no legality check).

    ``from_point`` 25 is the bar; ``to_point`` 0 (or less) is borne off. A
    single opposing checker on the landing point is hit: it goes to the
    opponent's bar (index 0, stored negative).
    """
    b = list(as_tuple(board))
    if b[from_point] <= 0:
        raise ValueError(f"no mover checker on {from_point}")
    b[from_point] -= 1
    if to_point >= 1:
        if b[to_point] == -1:  # hit: the blot goes to the opponent's bar
            b[to_point] = 0
            b[OPP_BAR] -= 1
        if b[to_point] < 0:
            raise ValueError(f"point {to_point} is closed")
        b[to_point] += 1
    return tuple(b)


def apply_moves(board, moves) -> Board:
    """Apply ``[(from, to), ...]`` in order with :func:`apply_move`."""
    b = as_tuple(board)
    for from_point, to_point in moves:
        b = apply_move(b, from_point, to_point)
    return b


def mover_checkers_left(board: Board) -> int:
    """The mover's checkers still on the board or the bar."""
    return sum(x for x in board[1:26] if x > 0)


def _all_home(board: Board) -> bool:
    """RULES.md 5: bearing off needs every mover checker in play on points 1-6, none on the bar."""
    return max(board[7:26]) <= 0


def _moved(board: Board, from_point: int, to_point: int) -> Board:
    """:func:`apply_move` without its checks (the caller has checked legality)."""
    b = list(board)
    b[from_point] -= 1
    if to_point >= 1:
        if b[to_point] == -1:  # hit
            b[to_point] = 0
            b[OPP_BAR] -= 1
        b[to_point] += 1
    return tuple(b)


@lru_cache(maxsize=1_000_000)
def single_die_moves(board: Board, die: int) -> tuple[Step, ...]:
    """Every legal move of one mover checker by ``die`` pips (RULES.md 3.2, 4, 5).

    Args:
        board: a board tuple (mover's view).
        die: 1..6.

    Returns:
        One :class:`Step` per checker that can move (checkers on the same point
        give one step).
    """
    # RULES.md 4: checkers on the bar must enter first; die d enters on 25 - d.
    if board[BAR] > 0:
        sources = [BAR]
    else:
        sources = [p for p in range(1, 25) if board[p] > 0]
    home = _all_home(board)
    steps = []
    for p in sources:
        target = p - die if p != BAR else 25 - die
        if target >= 1:
            # RULES.md 3.2: a point with two or more opposing checkers is closed.
            if board[target] >= -1:
                steps.append(Step(p, target, board[target] == -1, _moved(board, p, target)))
        elif home:
            # RULES.md 5: bear off from the exact point; with a larger die only
            # when no mover checker stands on a higher point.
            exact = target == 0
            nothing_higher = max(board[p + 1 : 7], default=0) <= 0
            if exact or nothing_higher:
                steps.append(Step(p, OFF, False, _moved(board, p, OFF)))
    return tuple(steps)


# A sequence's state: the board, the points where checkers that hit in the
# mover's home board now stand (sorted, with repeats; only tracked for the
# Iranian variant), and whether the sequence already broke the Iranian rule.
_State = tuple[Board, tuple[int, ...], bool]


def _advance(state: _State, die: int, form: str | None) -> set[_State]:
    """All states one more die can reach from ``state``."""
    board, hitters, broken = state
    out = set()
    if form is None:
        return {(step.after, (), False) for step in single_die_moves(board, die)}
    for step in single_die_moves(board, die):
        # Which checker of the point moves matters for the Iranian rule:
        # a tracked hitter, or (when the point holds more) an untracked one.
        on_point = board[step.from_point]
        tracked_here = hitters.count(step.from_point)
        choices = []
        if tracked_here > 0:
            choices.append(True)
        if on_point - tracked_here > 0:
            choices.append(False)
        for moves_hitter in choices:
            new_hitters = list(hitters)
            new_broken = broken
            if moves_hitter:
                new_hitters.remove(step.from_point)
                if form == "000":
                    # 000: the hitter may not move on from the point it hit on.
                    new_broken = True
                elif step.to_point >= 1 and board[step.to_point] > 0:
                    # 002: the hitter may not continue onto a point the mover holds.
                    new_broken = True
            hit_at_home = step.hit and step.to_point in HOME
            if step.to_point >= 1 and (moves_hitter or hit_at_home):
                new_hitters.append(step.to_point)
            out.add((step.after, tuple(sorted(new_hitters)), new_broken))
    return out


class _Sequence(NamedTuple):
    final: Board
    dice: tuple[int, ...]  # the dice used, in order (all of them if the last checker came off)
    broken: bool  # broke the Iranian rule


def _all_sequences(board: Board, die1: int, die2: int, form: str | None) -> set[_Sequence]:
    """Every maximal sequence of single-die moves, in both dice orders."""
    orders = [(die1,) * 4] if die1 == die2 else [(die1, die2), (die2, die1)]
    done: set[_Sequence] = set()
    for order in orders:
        frontier: set[_State] = {(board, (), False)}
        for k, die in enumerate(order):
            next_frontier: set[_State] = set()
            for state in frontier:
                if max(state[0][1:26]) <= 0:
                    # RULES.md 3.6: bearing off the last checker counts as using every die.
                    done.add(_Sequence(state[0], order, state[2]))
                    continue
                successors = _advance(state, die, form)
                if not successors:
                    done.add(_Sequence(state[0], order[:k], state[2]))
                next_frontier |= successors
            frontier = next_frontier
        for state in frontier:
            done.add(_Sequence(state[0], order, state[2]))
    return done


def _kept_sequences(board: Board, die1: int, die2: int, form: str | None) -> list[_Sequence]:
    """The sequences that play the dice legally (RULES.md 3.4)."""
    sequences = _all_sequences(board, die1, die2, form)
    most = max(len(s.dice) for s in sequences)
    kept = [s for s in sequences if len(s.dice) == most]
    if most == 1 and die1 != die2:
        # RULES.md 3.4: if either die could be played but not both, the larger must be played.
        larger = [s for s in kept if s.dice == (max(die1, die2),)]
        if larger:
            kept = larger
    return kept


@lru_cache(maxsize=200_000)
def legal_play_set(board: Board, die1: int, die2: int, form: str | None = None) -> frozenset[Board]:
    """The legal plays as a set of afterstates (mover's view, not swapped).

    Args:
        board: a board tuple (mover's view).
        die1, die2: the dice, 1..6 each.
        form: ``None`` (standard), ``"000"`` or ``"002"`` (RULES.md 7).

    Returns:
        The distinct afterstates; ``{board}`` when nothing is legal.
    """
    kept = _kept_sequences(board, die1, die2, form)
    plays = frozenset(s.final for s in kept)
    if form is not None:
        # RULES.md 7: keep the plays with a respecting sequence, unless there are none.
        respecting = frozenset(s.final for s in kept if not s.broken)
        if respecting:
            plays = respecting
    return plays


def dice_used(board: Board, die1: int, die2: int) -> tuple[int, ...]:
    """The dice the legal plays use, largest first (RULES.md 3.4).

    Every legal play uses the same dice: both (or four of a double), a
    prefix of a double's four, or one die (the larger when it fits). A play
    that bears off the last checker counts as using all (RULES.md 3.6).
    ``()`` when nothing is legal.
    """
    used = {tuple(sorted(s.dice, reverse=True)) for s in _kept_sequences(as_tuple(board), die1, die2, None)}
    assert len(used) == 1, used
    return used.pop()


def legal_plays(board, dice, rules: Rules = STANDARD) -> np.ndarray:
    """The reference for ``nard_ai.core.movegen.legal_plays``.

    Args:
        board: ``(26,)`` board (mover's view).
        dice: two dice, 1..6.
        rules: standard or Iranian (RULES.md 7).

    Returns:
        ``(M, 26)`` int8 distinct afterstates sorted lexicographically by row.
    """
    die1, die2 = (int(d) for d in dice)
    plays = legal_play_set(as_tuple(board), die1, die2, rules.no_hit_and_continue)
    return np.array(sorted(plays), dtype=np.int8).reshape(-1, 26)
