"""One checker move at a time, restricted so that every turn ends in a legal play.

A *play* (RULES.md §3.5) is the position a whole turn produces; the legal
plays of a turn are :func:`nard_ai.core.movegen.legal_plays` of the turn's
starting board and roll (every forced-play rule and, if set, the Iranian
variant of RULES.md §7 already applied). This module lets a player reach one
of those plays by single-die moves, the way a person moves checkers, without
ever being able to stop on a position that is not a legal play.

Boards use the layout of :mod:`nard_ai.core.board` (``(26,)`` int8, the mover's
view; index 25 is the mover's bar, index 0 the opponent's bar stored
negative). Everything here is from the mover's view.

Checker actions
---------------
A single-die move is a pair ``(source, die)``: the board index the checker
leaves (1..24 a point, 25 the bar; 0 is never a source) and the die value
1..6 it is moved by. As one integer: ``action = 6 * source + (die - 1)``,
``0 <= action < NUM_CHECKER_ACTIONS = 156`` (:func:`checker_action`,
:func:`checker_action_parts`). The target is ``source - die``; at or below 0
the checker is borne off.

The whole-turn restriction
--------------------------
A *state* of a turn is the current board and the dice not yet played
(:func:`dice_for_turn`: both dice of a non-double, four of a double). Let
``L`` be the turn's legal plays. A state is *good* if its board is in ``L``
or some single-die move (RULES.md §3.2, §4, §5) leads to a good state. A move
is allowed (:func:`checker_mask`) exactly when it leads to a good state, i.e.
when it is the first move of some sequence, from the current state, that
produces a legal play of the turn. The turn is over when no move is allowed:
then the board is in ``L`` (a good state without good successors must be in
``L``). Every play of ``L`` can be reached: the sequence the generator used
to find it ends where no die is playable.

Consequences, all the rules of RULES.md §3.4 carried over: a die that could
be played but would leave the other die unplayable while a play using both
exists is masked; if only one die of a non-double can be played, only the
larger is offered when the larger can be played; a player with a checker on
the bar is offered only entering moves. Because a play is identified by its
position (§3.5), any sequence producing a legal play is accepted: with the
Iranian rule on, a play that respects the rule may also be reached by a
sequence that hits and continues (the rule filters plays, §7.2, not orders).

These are plain Python functions over tuples and arrays; they are meant for
one position at a time (the environment's checker mode), not for the
batched hot path. Memoisation (``cache``) keeps a turn's search to one visit
per distinct state.
"""

from __future__ import annotations

import numpy as np

from nard_ai.core.board import BAR, BOARD_DTYPE, BOARD_SIZE

NUM_DIE_VALUES = 6
#: Size of the checker action space: 26 sources (index 0 never legal) x 6 die values.
NUM_CHECKER_ACTIONS = BOARD_SIZE * NUM_DIE_VALUES
#: Most dice one turn can play (a double): the length of a padded ``dice_left`` array.
MAX_DICE = 4

Board = tuple[int, ...]
DiceLeft = tuple[int, ...]
Move = tuple[int, int]  # (source, destination): 25 = bar, 0 = off


def checker_action(source: int, die: int) -> int:
    """The integer action of moving a checker from board index ``source`` by ``die``.

    Raises:
        ValueError: if ``source`` is not 1..25 or ``die`` not 1..6.
    """
    if not 1 <= source <= BAR:
        raise ValueError(f"source must be a point 1..24 or the bar 25, got {source}")
    if not 1 <= die <= NUM_DIE_VALUES:
        raise ValueError(f"die must be 1..6, got {die}")
    return NUM_DIE_VALUES * source + die - 1


def checker_action_parts(action: int) -> tuple[int, int]:
    """``(source, die)`` of an integer checker action (inverse of :func:`checker_action`).

    Raises:
        ValueError: if ``action`` is outside ``0 .. NUM_CHECKER_ACTIONS - 1``.
    """
    action = int(action)
    if not 0 <= action < NUM_CHECKER_ACTIONS:
        raise ValueError(f"a checker action must be 0..{NUM_CHECKER_ACTIONS - 1}, got {action}")
    return action // NUM_DIE_VALUES, action % NUM_DIE_VALUES + 1


def dice_for_turn(dice) -> DiceLeft:
    """The dice a turn plays, larger first: ``(5, 2)`` for 5-2, ``(3, 3, 3, 3)`` for 3-3 (RULES.md §3.3).

    Raises:
        ValueError: unless ``dice`` is two integers 1..6.
    """
    d1, d2 = (int(x) for x in np.asarray(dice).reshape(2))
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise ValueError(f"each die must be 1..6, got {(d1, d2)}")
    if d1 == d2:
        return (d1,) * MAX_DICE
    return (max(d1, d2), min(d1, d2))


def dice_left_array(dice_left: DiceLeft) -> np.ndarray:
    """Unplayed dice as a ``(4,)`` int8 array, larger first, padded with 0."""
    out = np.zeros(MAX_DICE, dtype=np.int8)
    values = sorted((int(d) for d in dice_left), reverse=True)
    out[: len(values)] = values
    return out


def _as_board(board) -> Board:
    if type(board) is tuple:
        return board
    return tuple(int(x) for x in np.asarray(board).reshape(BOARD_SIZE))


def _as_dice_left(dice_left) -> DiceLeft:
    values = tuple(sorted((int(d) for d in np.asarray(dice_left).reshape(-1) if d != 0), reverse=True))
    if any(not 1 <= d <= NUM_DIE_VALUES for d in values) or len(values) > MAX_DICE:
        raise ValueError(f"dice_left must be up to 4 dice 1..6 (0 = used), got {values}")
    return values


def single_moves(
    board: Board, die: int, need_home: bool = True, need_highest: bool = True
) -> list[tuple[Move, Board]]:
    """Every move of one checker by ``die`` pips, with the board it leaves: the single-die rule, once.

    The one Python statement of which single-die moves are legal, used by this
    module (the environment's checker moves) and by the notation reader and
    writer (:mod:`nard_ai.formats.notation`). The compiled move generator
    (:mod:`nard_ai.core.movegen`, bit masks) and the compiled play describer
    (:mod:`nard_ai.formats.notation_fast`) state it again in their own data
    layouts for speed. ``tests/test_classes.py`` checks this one against the
    independent reference of ``tests/reference.py`` (``single_die_moves``), which
    ``tests/test_movegen_reference.py`` checks the move generator against;
    ``tests/test_notation_fast.py`` checks the describer against the Python
    notation built on this one.

    RULES.md §4: checkers on the bar enter first, on point ``25 - die``.
    §3.2: a checker may land on a point holding at most one opposing checker
    (a blot), which it hits (the blot goes to the opponent's bar, index 0).
    §5: bearing off needs every checker in the home board; ``die`` bears off
    from point ``die``, or from the highest point when no checker stands
    higher than ``die``.

    Args:
        board: a board as a tuple of 26 ints, mover's view (:mod:`nard_ai.core.board`).
        die: the die value 1..6.
        need_home, need_highest: ``False`` drops one of the two bearing-off
            conditions (the home board, the highest point): only to find out
            which rule stops a written play (:func:`nard_ai.formats.notation.parse_play`).

    Returns:
        ``[((source, destination), board_after), ...]``, sources from the bar
        and the highest point down; the destination ``0`` is off.
    """
    if board[BAR] > 0:
        sources: list[int] = [BAR]
    else:
        sources = [p for p in range(BAR - 1, 0, -1) if board[p] > 0]
    all_home = board[BAR] == 0 and all(board[p] <= 0 for p in range(7, BAR))
    highest = sources[0] if sources else 0
    result = []
    for src in sources:
        dst = src - die
        if dst >= 1:
            if board[dst] < -1:
                continue  # a closed point
        elif not ((all_home or not need_home) and (dst == 0 or src == highest or not need_highest)):
            continue
        after = list(board)
        after[src] -= 1
        if dst >= 1:
            if after[dst] == -1:
                after[dst] = 0
                after[0] -= 1  # the hit blot goes to the opponent's bar
            after[dst] += 1
        result.append(((src, max(dst, 0)), tuple(after)))
    return result


def legal_single_moves(board: np.ndarray, die: int) -> np.ndarray:
    """Sources of every legal single-die move, ignoring the whole-turn rules.

    RULES.md §3.2 (open landing points), §4 (bar first, entering on
    ``25 - die``) and §5 (bearing off, the higher-point rule).

    Args:
        board: ``(26,)`` int8 board, mover's view.
        die: the die value 1..6.

    Returns:
        ``(K,)`` int64 board indices (1..25), ascending.
    """
    return np.asarray(sorted(src for (src, _), _ in single_moves(_as_board(board), int(die))), dtype=np.int64)


def apply_checker_move(board: np.ndarray, source: int, die: int) -> np.ndarray:
    """The board after moving one checker from ``source`` by ``die`` (hitting a blot it lands on).

    Args:
        board: ``(26,)`` int8 board, mover's view.
        source: board index 1..25 (25 = the bar).
        die: 1..6.

    Returns:
        A new ``(26,)`` int8 board, mover's view (not swapped).

    Raises:
        ValueError: if the move is not a legal single-die move (:func:`legal_single_moves`).
    """
    after = {src: b for (src, _), b in single_moves(_as_board(board), int(die))}.get(int(source))
    if after is None:
        raise ValueError(f"moving a checker from index {source} by {die} is not a legal single move here")
    return np.asarray(after, dtype=BOARD_DTYPE)


def play_targets(plays: np.ndarray) -> frozenset[Board]:
    """The set form of a turn's legal plays, for :func:`checker_mask` (``(M, 26)`` afterstates)."""
    return frozenset(tuple(int(x) for x in row) for row in np.asarray(plays).reshape(-1, BOARD_SIZE))


def _remove_die(dice_left: DiceLeft, die: int) -> DiceLeft:
    i = dice_left.index(die)
    return dice_left[:i] + dice_left[i + 1 :]


def _good(b: Board, dice_left: DiceLeft, targets: frozenset[Board], cache: dict) -> bool:
    """True if some sequence of single moves from this state ends on a legal play (module docstring)."""
    key = (b, dice_left)
    hit = cache.get(key)
    if hit is not None:
        return hit
    result = b in targets
    if not result:
        for die in set(dice_left):
            rest = _remove_die(dice_left, die)
            if any(_good(after, rest, targets, cache) for _, after in single_moves(b, die)):
                result = True
                break
    cache[key] = result
    return result


def allowed_moves(
    board: np.ndarray, dice_left, targets: frozenset[Board], cache: dict | None = None
) -> list[tuple[int, int]]:
    """The single-die moves that keep the turn on course for a legal play.

    Args:
        board: ``(26,)`` int8 current board of the turn, mover's view.
        dice_left: the dice not yet played (values 1..6; zeros are ignored).
        targets: the turn's legal plays, from :func:`play_targets` of
            :func:`nard_ai.core.movegen.legal_plays` of the turn's *starting* board and roll.
        cache: a dict reused across the calls of **one** turn (same ``targets``)
            to avoid searching a state twice; ``None`` for a fresh one.

    Returns:
        ``(source, die)`` pairs, ascending; empty when the turn is over.
    """
    b = _as_board(board)
    left = _as_dice_left(dice_left)
    cache = {} if cache is None else cache
    out = []
    for die in sorted(set(left)):
        rest = _remove_die(left, die)
        for (s, _), after in single_moves(b, die):
            if _good(after, rest, targets, cache):
                out.append((s, die))
    return sorted(out)


def checker_mask(
    board: np.ndarray, dice_left, targets: frozenset[Board], cache: dict | None = None
) -> np.ndarray:
    """The allowed checker actions of a turn's current state, as a mask.

    Args:
        board, dice_left, targets, cache: as for :func:`allowed_moves`.

    Returns:
        ``(NUM_CHECKER_ACTIONS,)`` int8, 1 where ``checker_action(source, die)``
        is allowed; all zeros when the turn is over.
    """
    mask = np.zeros(NUM_CHECKER_ACTIONS, dtype=np.int8)
    for source, die in allowed_moves(board, dice_left, targets, cache):
        mask[NUM_DIE_VALUES * source + die - 1] = 1
    return mask


def play_checker_move(board: np.ndarray, dice_left, source: int, die: int) -> tuple[np.ndarray, np.ndarray]:
    """Play one die of the turn: the new board and the dice still to play.

    Only checks that the move is a legal single-die move and that ``die`` is
    among ``dice_left``; use :func:`checker_mask` to keep to the whole-turn rules.

    Returns:
        ``(board, dice_left)``: ``(26,)`` int8 (mover's view) and ``(4,)`` int8
        (larger first, 0-padded).

    Raises:
        ValueError: if ``die`` is not among ``dice_left`` or the move is not legal.
    """
    left = _as_dice_left(dice_left)
    if int(die) not in left:
        raise ValueError(f"die {die} is not among the dice left to play {left}")
    new_board = apply_checker_move(board, source, die)
    return new_board, dice_left_array(_remove_die(left, int(die)))
