"""A batch of games as arrays: dice, the opening roll, stepping, game end and result.

The state of ``N`` games is a :class:`GameState` of arrays on a leading ``N``
axis. Players are numbered 0 and 1; ``boards[i]`` is always seen from the
player on roll (``turn[i]``), in the layout of :mod:`nard_ai.core.board`.
Randomness is always an explicit ``np.random.Generator`` argument.

Cube bookkeeping (RULES.md §8) is carried here as state only: cube value and
owner, the Crawford flag, the match score and length; a finished game's
points are ``result × cube value``. Cube *decisions* live elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from nard_ai.core.board import (
    BOARD_SIZE,
    game_result_unchecked,
    pip_count,
    starting_board,
    swap_sides_unchecked,
    validate_board,
    validate_dice,
)

CENTERED = -1  # cube owner value for a centred cube


def _check_rng(rng: object) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r}")


def roll_dice(n: int, rng: np.random.Generator) -> np.ndarray:
    """Roll two dice for each of ``n`` turns.

    Returns:
        ``(n, 2)`` int8, each die uniform on 1..6.
    """
    return rng.integers(1, 7, size=(n, 2), dtype=np.int8)


def opening_roll(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The opening roll of ``n`` games (RULES.md §2).

    Each player rolls one die; equal numbers are rolled again; the higher
    number starts and plays the two numbers rolled, so the first play is
    never a double.

    Returns:
        ``(starter, dice)``: ``(n,)`` int8 in {0, 1} (player 0 rolled
        ``dice[:, 0]``, player 1 rolled ``dice[:, 1]``) and ``(n, 2)`` int8
        non-double dice.
    """
    dice = roll_dice(n, rng)
    ties = dice[:, 0] == dice[:, 1]
    while ties.any():
        dice[ties] = roll_dice(int(ties.sum()), rng)
        ties = dice[:, 0] == dice[:, 1]
    starter = (dice[:, 1] > dice[:, 0]).astype(np.int8)
    return starter, dice


@dataclass
class GameState:
    """``N`` games in lockstep, as arrays.

    Attributes:
        boards: ``(N, 26)`` int8, each from the view of the player on roll.
        dice: ``(N, 2)`` int8, the roll the player on roll must play.
        turn: ``(N,)`` int8, the player (0 or 1) on roll.
        done: ``(N,)`` bool, the game is over.
        points: ``(N,)`` int64, the final result in points from player 0's
            view (``±(1|2|3) × cube_value``, RULES.md §6 and §8); 0 while
            the game runs.
        plies: ``(N,)`` int64, turns played so far.
        cube_value: ``(N,)`` int64, 1, 2, 4, ... (RULES.md §8).
        cube_owner: ``(N,)`` int8, ``CENTERED`` (-1) or the owning player.
        crawford: ``(N,)`` bool, this is the Crawford game (no doubling).
        score: ``(N, 2)`` int64, match score before this game, by player.
        match_length: ``(N,)`` int64, points to win the match; 0 = money play.
    """

    boards: np.ndarray
    dice: np.ndarray
    turn: np.ndarray
    done: np.ndarray
    points: np.ndarray
    plies: np.ndarray
    cube_value: np.ndarray
    cube_owner: np.ndarray
    crawford: np.ndarray
    score: np.ndarray
    match_length: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.boards)

    def pip_counts(self) -> np.ndarray:
        """``(N, 2)`` int64 pip counts by player (0, 1), whatever side is on roll."""
        pips = pip_count(self.boards)
        swap = self.turn == 1
        pips[swap] = pips[swap][:, ::-1]
        return pips

    def winner(self) -> np.ndarray:
        """``(N,)`` int8: the winning player of finished games, -1 while running."""
        return np.where(self.done, np.where(self.points > 0, 0, 1), -1).astype(np.int8)


def new_games(
    n: int,
    rng: np.random.Generator,
    match_length: int = 0,
    score: tuple[int, int] = (0, 0),
    crawford: bool = False,
) -> GameState:
    """Start ``n`` games from the starting position with the opening roll.

    Args:
        n: number of games.
        rng: source of the opening dice.
        match_length: points to win the match (0 = money play).
        score: match score ``(player 0, player 1)`` before these games.
        crawford: these are Crawford games (no doubling, RULES.md §8).

    Raises:
        ValueError: on ``n < 0``, a negative match length, or a score that
            already reaches the match length.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    _check_rng(rng)
    if match_length < 0:
        raise ValueError(f"match_length must be >= 0 (0 = money play), got {match_length}")
    if match_length and max(score) >= match_length:
        raise ValueError(f"score {score} already reaches the match length {match_length}")
    starter, dice = opening_roll(n, rng)
    return GameState(
        boards=np.tile(starting_board(), (n, 1)),
        dice=dice,
        turn=starter,
        done=np.zeros(n, dtype=bool),
        points=np.zeros(n, dtype=np.int64),
        plies=np.zeros(n, dtype=np.int64),
        cube_value=np.ones(n, dtype=np.int64),
        cube_owner=np.full(n, CENTERED, dtype=np.int8),
        crawford=np.full(n, crawford, dtype=bool),
        score=np.tile(np.asarray(score, dtype=np.int64), (n, 1)),
        match_length=np.full(n, match_length, dtype=np.int64),
    )


def end_turns(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """End one turn of each game: the game-end test, its result, and the board turned round for the next side.

    The one rule of a turn's end, shared by :func:`step` (the core's pure step, the Gymnasium
    environment's) and :meth:`nard_ai.play.lockstep.Lockstep.play` (the game-playing drivers'):
    a game ends when the mover has borne off every checker (RULES.md §6: +1, +2 gammon, +3
    backgammon for the mover, :func:`nard_ai.core.board.game_result_unchecked`); any other
    board is turned to the next side's view (:func:`nard_ai.core.board.swap_sides_unchecked`).

    Args:
        afterstates: ``(n, 26)`` int8 valid boards after each mover's play, mover's view
            (not checked: the callers have validated or generated them).

    Returns:
        ``(finished, result, boards)``: ``finished`` ``(n,)`` bool, the games the play ended;
        ``result`` ``(n,)`` int64, each ended game's points at cube 1 for the side that made
        the last play (0 for the others); ``boards`` ``(n, 26)`` int8, the ended games'
        afterstates unchanged and the other games' boards from the next side's view.
    """
    after = np.asarray(afterstates, dtype=np.int8)
    finished = ~(after > 0).any(axis=1)
    result = np.zeros(len(after), dtype=np.int64)
    boards = after.copy()
    if finished.any():
        result[finished] = game_result_unchecked(after[finished])
    going = ~finished
    boards[going] = swap_sides_unchecked(after[going])
    return finished, result, boards


def finished_points(result, value, centred, jacoby: bool):
    """Points of finished games at their cube: the one scoring rule of every driver, the env and the lookahead.

    ``result x value``, except under the Jacoby rule (money play only) while
    the cube is centred, where a gammon or backgammon counts as a single game
    (``sign(result) x value``; RULES.md, "Jacoby rule"; gnubg's ``fJacoby``).

    Args:
        result: ``(N,)`` (or scalar) integer results of the games, +-1, +-2, +-3, in any one view.
        value: the cube values, broadcastable to ``result``.
        centred: bool, broadcastable: the cube is centred (not turned yet).
        jacoby: the Jacoby rule is in play (money play; pass False for match play).

    Returns:
        ``result``'s shape, int64, in the same view.
    """
    result = np.asarray(result, dtype=np.int64)
    if jacoby:
        result = np.where(np.asarray(centred, dtype=bool), np.sign(result), result)
    return result * np.asarray(value, dtype=np.int64)


def step(
    state: GameState,
    afterstates: np.ndarray,
    rng: np.random.Generator | None = None,
    next_dice: np.ndarray | None = None,
    jacoby: bool = False,
) -> GameState:
    """Apply one chosen play per running game and pass the turn.

    For each running game: the afterstate (mover's view) becomes the board;
    if the mover has borne off all 15 checkers the game ends with
    :func:`finished_points` of its result at its cube (``game_result × cube_value``,
    RULES.md §6, §8; with ``jacoby``, a money game's gammon at a centred cube counts
    one); otherwise the
    board is turned to the opponent (:func:`swap_sides`), who rolls new dice.
    Finished games are left unchanged (their row of ``afterstates`` is
    ignored).

    The caller is responsible for choosing ``afterstates`` among the legal
    plays (:func:`nard_ai.core.movegen.legal_plays_batch`); this function checks
    only that each is a valid board that keeps both sides' checker counts,
    on which no opposing checker moved except to the bar (a hit).

    Args:
        state: the games.
        afterstates: ``(N, 26)`` int8, the chosen plays, mover's view.
        rng: source of the next dice (rolled for all ``N`` games, used for
            those that continue).
        next_dice: ``(N, 2)`` dice to use instead of ``rng`` (for callers
            that keep one generator per game, such as the vector env).
        jacoby: the Jacoby rule is in play (it applies to money games, ``match_length`` 0).

    Returns:
        A new :class:`GameState` (the input is not modified).

    Raises:
        ValueError: on a wrong shape, an invalid board or bad dice, or if
            neither or both of ``rng`` and ``next_dice`` are given.
    """
    if (rng is None) == (next_dice is None):
        raise ValueError("give exactly one of rng and next_dice")
    if rng is not None:
        _check_rng(rng)
    afterstates = np.asarray(afterstates)
    if afterstates.shape != (len(state), BOARD_SIZE):
        raise ValueError(f"afterstates must have shape ({len(state)}, 26), got {afterstates.shape}")
    running = ~state.done
    boards = state.boards.copy()
    if running.any():
        after = validate_board(afterstates[running]).astype(np.int16)
        before = state.boards[running].astype(np.int16)
        opp_before = np.clip(-before, 0, None)
        opp_after = np.clip(-after, 0, None)
        moved_opp = (opp_after[:, 1:25] > opp_before[:, 1:25]).any(axis=1) | (
            opp_after.sum(axis=1) != opp_before.sum(axis=1)
        )
        mine_grew = np.clip(after, 0, None).sum(axis=1) > np.clip(before, 0, None).sum(axis=1)
        bad = moved_opp | mine_grew
        if bad.any():
            game = int(np.flatnonzero(running)[np.argmax(bad)])
            raise ValueError(
                f"afterstate of game {game} is not a play from its board: the opponent's checkers moved "
                "other than to the bar, or the mover gained checkers"
            )
        boards[running] = after.astype(np.int8)
    dice = roll_dice(len(state), rng) if next_dice is None else validate_dice(next_dice)
    if len(dice) != len(state):
        raise ValueError(f"next_dice must have shape ({len(state)}, 2), got {dice.shape}")
    result = np.zeros(len(state), dtype=np.int64)
    finished = np.zeros(len(state), dtype=bool)
    if running.any():
        finished[running], result[running], boards[running] = end_turns(boards[running])
    points = state.points.copy()
    sign = np.where(state.turn == 0, 1, -1)
    money = state.match_length == 0 if len(state.match_length) == len(state) else np.ones(len(state), bool)
    points[finished] = (
        finished_points(
            result[finished],
            state.cube_value[finished],
            (state.cube_owner[finished] == CENTERED) & money[finished],
            jacoby,
        )
        * sign[finished]
    )
    cont = running & ~finished
    turn = state.turn.copy()
    turn[cont] = 1 - turn[cont]
    new_dice = state.dice.copy()
    new_dice[cont] = dice[cont]
    plies = state.plies + running
    return replace(
        state,
        boards=boards,
        dice=new_dice,
        turn=turn,
        done=state.done | finished,
        points=points,
        plies=plies,
    )
