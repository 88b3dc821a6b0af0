"""The batched engine behind both environments: ``N`` games as arrays, one generator per game.

:class:`BackgammonEnv` is this engine with ``N = 1``; :class:`BackgammonVectorEnv`
holds ``N`` games. Both only delegate, so a vector env and ``N`` single envs
seeded alike play the same games.

Every game draws its randomness from its own ``np.random.Generator``, in a
fixed per-game order that does not depend on the other games: the opening
roll (:func:`nard_ai.game.new_games`), then per turn the random opponent's
choice (``integers(M)``, if any) followed by the next roll
(:func:`nard_ai.game.roll_dice`, only when the game goes on).

A turn starts with the dice rolled; its legal plays are found for all games
at a turn start in one :func:`nard_ai.movegen.legal_plays_batch` call. Then,
per game: no legal move passes the turn at once; the agent's turns wait for an
action; the opponent's are played on the spot. Chosen plays are applied for
all those games in one :func:`nard_ai.game.step` call, and the loop repeats
for the games now at a new turn start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields

import numpy as np

from nard_ai.board import BAR, BOARD_SIZE, pip_count, swap_sides, validate_board, validate_dice
from nard_ai.checker_moves import (
    MAX_DICE,
    NUM_CHECKER_ACTIONS,
    checker_action_parts,
    checker_mask,
    play_checker_move,
    play_targets,
)
from nard_ai.game import GameState, new_games, roll_dice, step
from nard_ai.movegen import legal_plays_batch
from nard_ai.rules import Rules

from .spaces import ACTION_MODES, MAX_PLAYS, encode_observations

#: The agent's player number when it plays against an opponent.
AGENT = 0

_TURN_START = 0  # dice rolled, legal plays not yet generated
_WAITING = 1  # waiting for the agent's action
_DONE = 2  # the game is over

Opponent = Callable[[np.ndarray, dict], int]


def _take(state: GameState, idx: np.ndarray) -> GameState:
    return GameState(**{f.name: getattr(state, f.name)[idx] for f in fields(state)})


def _put(state: GameState, idx: np.ndarray, sub: GameState) -> None:
    for f in fields(state):
        getattr(state, f.name)[idx] = getattr(sub, f.name)


def check_arguments(action_mode: str, opponent, rules, max_plays: int, illegal_action: str) -> None:
    """Validate the environment arguments (see :class:`env.backgammon.BackgammonEnv`).

    Raises:
        ValueError: on an unknown action mode, opponent, rules object,
            ``max_plays`` outside ``1 .. MAX_PLAYS`` or unknown ``illegal_action``.
    """
    if action_mode not in ACTION_MODES:
        raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
    if not (opponent in ("random", "self") or callable(opponent)):
        raise ValueError(
            f"opponent must be 'random', 'self' or a callable (obs, info) -> action, got {opponent!r}"
        )
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a nard_ai.rules.Rules, got {type(rules).__name__}")
    if not 1 <= int(max_plays) <= MAX_PLAYS:
        raise ValueError(f"max_plays must be 1..{MAX_PLAYS}, got {max_plays}")
    if illegal_action not in ("lose", "raise"):
        raise ValueError(f"illegal_action must be 'lose' or 'raise', got {illegal_action!r}")


def check_render_mode(render_mode: str | None, modes: list[str]) -> None:
    """Raise ValueError unless ``render_mode`` is None or one of ``modes`` (single and vector env alike)."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {modes}, got {render_mode!r}")


class Games:
    """``N`` backgammon games stepped together (see the module docstring).

    Attributes:
        state: the :class:`nard_ai.game.GameState` (``boards`` are turn-start
            boards of the side on roll; finished games keep the last mover's board).
        rngs: one generator per game; the env sets them before resetting.
        current: ``(N, 26)`` int8 board of the side on roll as it stands now
            (mid-turn in checker mode).
        dice_left: ``(N, 4)`` int8 unplayed dice, larger first, 0-padded.
        masks: ``(N, A)`` int8 legal actions of the side to act.
        illegal: ``(N,)`` bool, the game's last action was outside the mask.
    """

    def __init__(
        self,
        n: int,
        action_mode: str = "play",
        opponent: str | Opponent = "random",
        rules: Rules | None = None,
        max_plays: int = MAX_PLAYS,
        illegal_action: str = "lose",
    ) -> None:
        rules = Rules() if rules is None else rules
        check_arguments(action_mode, opponent, rules, max_plays, illegal_action)
        self.n = n
        self.action_mode = action_mode
        self.opponent = opponent
        self.rules = rules
        self.max_plays = int(max_plays)
        self.illegal_action = illegal_action
        self.num_actions = self.max_plays if action_mode == "play" else NUM_CHECKER_ACTIONS
        self.rngs: list[np.random.Generator | None] = [None] * n
        self.state = new_games(n, np.random.default_rng(0))  # placeholder until reset
        self.phase = np.full(n, _DONE, dtype=np.int8)
        self.current = self.state.boards.copy()
        self.dice_left = np.zeros((n, MAX_DICE), dtype=np.int8)
        self.masks = np.zeros((n, self.num_actions), dtype=np.int8)
        self.illegal = np.zeros(n, dtype=bool)
        self.plays: list[np.ndarray | None] = [None] * n
        self.targets: list[frozenset | None] = [None] * n
        self.caches: list[dict | None] = [None] * n

    # ------------------------------------------------------------------
    # Reset and step
    # ------------------------------------------------------------------

    def reset(self, idx, board=None, dice=None, player: int | None = None) -> None:
        """Start new games ``idx`` from the starting position with the opening roll.

        Args:
            idx: game indices; each draws from ``self.rngs[i]``.
            board: optional ``(26,)`` board to start from instead, from the
                view of the side on roll (a running game: both sides have
                checkers left).
            dice: optional roll ``(2,)`` for the first turn instead of the opening roll.
            player: optional side on roll (0 or 1) instead of the opening roll's starter.

        Raises:
            ValueError: on an invalid board, a finished position (or one the
                opponent finishes before the agent acts), bad dice or player.
        """
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        if board is not None:
            board = validate_board(board)
            if board.shape != (BOARD_SIZE,):
                raise ValueError(f"options['board'] must be one (26,) board, got shape {board.shape}")
            left = np.clip(board, 0, None).sum(), np.clip(-board.astype(np.int64), 0, None).sum()
            if min(left) == 0:
                raise ValueError("options['board'] is a finished game: both sides need checkers left")
        if dice is not None:
            dice = validate_dice(dice)[0]
        if player is not None and player not in (0, 1):
            raise ValueError(f"options['player'] must be 0 or 1, got {player!r}")
        for i in idx:
            sub = new_games(1, self.rngs[i])
            if board is not None:
                sub.boards[0] = board
            if dice is not None:
                sub.dice[0] = dice
            if player is not None:
                sub.turn[0] = player
            _put(self.state, np.array([i]), sub)
            self.phase[i] = _TURN_START
            self.illegal[i] = False
            self.masks[i] = 0
        self._advance(idx)
        if board is not None and self.done(idx).any():
            raise ValueError("options['board'] gives a game that ends before the agent's first decision")

    def act(self, idx, actions) -> np.ndarray:
        """Apply one agent action per game of ``idx`` and play on to the agent's next decision.

        Args:
            idx: ``(k,)`` game indices, each waiting for the agent.
            actions: ``(k,)`` integer actions.

        Returns:
            ``(k,)`` float64 rewards (see :meth:`reward_of`), 0 for games still running.

        Raises:
            RuntimeError: if a game of ``idx`` is over (reset it first).
            ValueError: on an action outside the mask when ``illegal_action="raise"``.
        """
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        actions = np.asarray(actions).reshape(-1)
        if (self.phase[idx] != _WAITING).any():
            raise RuntimeError("step() called on a finished game; call reset() first")
        legal = np.array([self._is_legal(i, a) for i, a in zip(idx, actions, strict=True)], dtype=bool)
        if self.illegal_action == "raise" and not legal.all():
            j = int(np.flatnonzero(~legal)[0])
            raise ValueError(
                f"action {actions[j]!r} is not legal in game {idx[j]} "
                f"(legal: {np.flatnonzero(self.masks[idx[j]]).tolist()})"
            )
        apply_idx, apply_boards = [], []
        for i, a, ok in zip(idx, actions, legal, strict=True):
            self.illegal[i] = not ok
            if not ok:
                self._forfeit(i)
                continue
            done_turn = self._apply_action(i, int(a))
            if done_turn is not None:
                apply_idx.append(i)
                apply_boards.append(done_turn)
        self._apply_plays(apply_idx, apply_boards)
        self._advance(apply_idx)
        return np.array([self.reward_of(i) if self.phase[i] == _DONE else 0.0 for i in idx], dtype=np.float64)

    def reward_of(self, i: int) -> float:
        """The points of finished game ``i`` for the side the env rewards.

        Against an opponent: player 0's (the agent's) points, ``±1/2/3``.
        With ``opponent="self"``: the points of the side that made the last
        action (the winner, or the loser of an illegal action).
        """
        points = float(self.state.points[i])
        if self.opponent == "self" and self.state.turn[i] == 1:
            return -points
        return points

    def done(self, idx) -> np.ndarray:
        """``(k,)`` bool: the games are over."""
        return self.phase[np.asarray(idx, dtype=np.int64)] == _DONE

    # ------------------------------------------------------------------
    # Observations
    # ------------------------------------------------------------------

    def viewer(self, i: int) -> int:
        """The player whose view game ``i``'s observation is from.

        The side to act while the game runs; at the end, the side the reward
        is for (player 0 against an opponent, the last mover with ``"self"``).
        """
        if self.phase[i] != _DONE:
            return int(self.state.turn[i])
        return int(self.state.turn[i]) if self.opponent == "self" else AGENT

    def _view(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Boards, dice, dice left, masks and players of ``idx`` from each viewer's side."""
        boards = self.current[idx].copy()
        dice = np.sort(self.state.dice[idx], axis=1)[:, ::-1].copy()
        dice_left = self.dice_left[idx].copy()
        masks = self.masks[idx].copy()
        players = np.array([self.viewer(i) for i in idx], dtype=np.int64)
        done = self.phase[idx] == _DONE
        if done.any():
            # A finished game's board is the last mover's (state.turn); turn it to the viewer.
            flip = done & (players != self.state.turn[idx])
            boards[flip] = swap_sides(boards[flip])
            dice[done] = 0
            dice_left[done] = 0
            masks[done] = 0
        return boards, dice, dice_left, masks, players

    def observe(self, idx) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Observations and info arrays of games ``idx`` (layout in :mod:`env.spaces`).

        Returns:
            ``(obs, info)``: ``(k, D)`` float32 and a dict of ``(k, ...)`` arrays:
            ``action_mask`` ``(k, A)`` int8, ``player`` ``(k,)`` int64,
            ``dice`` ``(k, 2)`` int8 (larger first), ``board`` ``(k, 26)`` int8,
            ``illegal_action`` ``(k,)`` bool, and in checker mode
            ``dice_left`` ``(k, 4)`` int8.
        """
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        boards, dice, dice_left, masks, players = self._view(idx)
        obs = encode_observations(boards, dice, dice_left, self.action_mode)
        info = {
            "action_mask": masks,
            "player": players,
            "dice": dice,
            "board": boards,
            "illegal_action": self.illegal[idx].copy(),
        }
        if self.action_mode == "checker":
            info["dice_left"] = dice_left
        return obs, info

    def observe_one(self, i: int) -> tuple[np.ndarray, dict]:
        """:meth:`observe` of one game, unbatched (``info`` values are scalars or 1-D arrays)."""
        obs, info = self.observe([i])
        out = {}
        for key, value in info.items():
            item = value[0]
            out[key] = item.item() if np.ndim(item) == 0 else item
        return obs[0], out

    def render(self, i: int) -> str:
        """A text picture of game ``i`` from its viewer's side (:func:`render_text`)."""
        boards, dice, dice_left, _, players = self._view(np.array([i]))
        return render_text(
            boards[0],
            int(players[0]),
            dice[0],
            dice_left[0],
            self.phase[i] == _DONE,
            self.action_mode == "checker",
        )

    # ------------------------------------------------------------------
    # Internals
    # ------------------------------------------------------------------

    def _is_legal(self, i: int, action) -> bool:
        # Only an integer scalar is an action: 0.5 or [0] is not silently truncated to 0.
        arr = np.asarray(action)
        if arr.ndim != 0 or arr.dtype.kind not in "iu" or isinstance(action, bool):
            return False
        a = int(arr)
        return 0 <= a < self.num_actions and bool(self.masks[i, a])

    def _agent_to_act(self, i: int) -> bool:
        return self.opponent == "self" or self.state.turn[i] == AGENT

    def _forfeit(self, i: int) -> None:
        """An action outside the mask with ``illegal_action="lose"``: the actor loses a single game."""
        mover = int(self.state.turn[i])
        self.state.boards[i] = self.current[i]
        self.state.done[i] = True
        self.state.points[i] = (-1 if mover == 0 else 1) * self.state.cube_value[i]
        self.phase[i] = _DONE

    def _apply_action(self, i: int, action: int) -> np.ndarray | None:
        """Apply a legal action; returns the turn's afterstate once the turn is complete, else ``None``."""
        if self.action_mode == "play":
            return self.plays[i][action]
        source, die = checker_action_parts(action)
        self.current[i], self.dice_left[i] = play_checker_move(
            self.current[i], self.dice_left[i], source, die
        )
        self.masks[i] = checker_mask(self.current[i], self.dice_left[i], self.targets[i], self.caches[i])
        if self.masks[i].any():
            return None
        return self.current[i].copy()

    def _start_turns(self, idx: np.ndarray) -> None:
        """Reset the per-turn arrays of games ``idx`` at a turn start (their dice are rolled)."""
        self.current[idx] = self.state.boards[idx]
        self.masks[idx] = 0
        dice = self.state.dice[idx]
        high, low = dice.max(axis=1), dice.min(axis=1)
        left = np.zeros((len(idx), MAX_DICE), dtype=np.int8)
        left[:, 0], left[:, 1] = high, low
        double = high == low
        left[double, 2:] = high[double, None]  # RULES.md §3.3: doubles give four moves
        self.dice_left[idx] = left
        for i in idx:
            self.targets[i] = None  # built on demand: only turns the agent or a callable plays
            self.caches[i] = None

    def _build_mask(self, i: int) -> None:
        if self.action_mode == "play":
            m = len(self.plays[i])
            if m > self.max_plays:
                raise RuntimeError(
                    f"the position has {m} legal plays, more than max_plays={self.max_plays}; "
                    f"use a larger max_plays (at most MAX_PLAYS={MAX_PLAYS}, never exceeded)"
                )
            self.masks[i] = 0
            self.masks[i, :m] = 1
        else:
            if self.targets[i] is None:
                self.targets[i] = play_targets(self.plays[i])
                self.caches[i] = {}
            self.masks[i] = checker_mask(self.current[i], self.dice_left[i], self.targets[i], self.caches[i])

    def _ask_opponent(self, i: int) -> np.ndarray:
        """Let a callable opponent play game ``i``'s turn; returns the afterstate."""
        while True:
            self._build_mask(i)
            if self.action_mode == "checker" and not self.masks[i].any():
                return self.current[i].copy()
            obs, info = self.observe_one(i)
            action = self.opponent(obs, info)
            if not self._is_legal(i, action):
                raise ValueError(
                    f"the opponent chose action {action!r}, outside its action_mask "
                    f"(legal: {np.flatnonzero(self.masks[i]).tolist()})"
                )
            afterstate = self._apply_action(i, int(action))
            if afterstate is not None:
                return afterstate

    def _apply_plays(self, idx: list[int], afterstates: list[np.ndarray]) -> None:
        """End the turn of games ``idx`` with the given afterstates (mover's view) in one :func:`step`."""
        if not idx:
            return
        idx = np.asarray(idx, dtype=np.int64)
        afterstates = np.asarray(afterstates, dtype=np.int8).reshape(len(idx), BOARD_SIZE)
        next_dice = np.tile(np.array([1, 2], dtype=np.int8), (len(idx), 1))  # ignored for finished games
        for j, i in enumerate(idx):
            if (afterstates[j, 1:] > 0).any():  # the mover has checkers left: the game goes on
                next_dice[j] = roll_dice(1, self.rngs[i])[0]
        sub = step(_take(self.state, idx), afterstates, next_dice=next_dice)
        _put(self.state, idx, sub)
        self.current[idx] = sub.boards
        self.masks[idx] = 0
        self.dice_left[idx] = 0
        self.phase[idx] = np.where(sub.done, _DONE, _TURN_START)

    def _advance(self, idx) -> None:
        """Play every game of ``idx`` at a turn start on to the agent's next decision or the game's end."""
        pending = np.asarray(
            [i for i in np.asarray(idx).reshape(-1) if self.phase[i] == _TURN_START], dtype=np.int64
        )
        while len(pending):
            afterstates, owner = legal_plays_batch(
                self.state.boards[pending], self.state.dice[pending], self.rules
            )
            bounds = np.searchsorted(owner, np.arange(len(pending) + 1))
            self._start_turns(pending)
            apply_idx, apply_boards = [], []
            for j, i in enumerate(pending):
                plays = afterstates[bounds[j] : bounds[j + 1]]
                self.plays[i] = plays
                if len(plays) == 1 and np.array_equal(plays[0], self.state.boards[i]):
                    # RULES.md §3.4: "If nothing is legal, the turn is lost."
                    chosen = plays[0]
                elif self._agent_to_act(i):
                    self._build_mask(i)
                    self.phase[i] = _WAITING
                    continue
                elif self.opponent == "random":
                    chosen = plays[self.rngs[i].integers(len(plays))]
                else:
                    chosen = self._ask_opponent(i)
                apply_idx.append(i)
                apply_boards.append(chosen)
            self._apply_plays(apply_idx, apply_boards)
            pending = np.asarray([i for i in apply_idx if self.phase[i] == _TURN_START], dtype=np.int64)


def render_text(
    board: np.ndarray,
    player: int,
    dice: np.ndarray,
    dice_left: np.ndarray,
    done: bool,
    checker_mode: bool = False,
) -> str:
    """A plain-text picture of a board from ``player``'s side (``X`` = ``player``, ``O`` = the other).

    The board is drawn by :func:`nard_ai.formats.ascii.render_board` (gnubg
    style, the board's mover as ``X``) when that module is there, else by a
    compact two-row listing with the same symbols.
    """
    try:
        from nard_ai.formats.ascii import render_board
    except ImportError:
        picture = _plain_board(board)
    else:
        picture = render_board(board)
    if done:
        status = f"game over, seen by player {player} (X)"
    else:
        status = f"player {player} (X) to act, roll {dice[0]}-{dice[1]}"
        left = [int(d) for d in dice_left if d]
        if left and checker_mode:
            status += f", dice left {' '.join(map(str, left))}"
    return f"{status}\n{picture}\n"


def _plain_board(board: np.ndarray) -> str:
    def cell(i: int) -> str:
        v = int(board[i])
        return f"{'X' if v > 0 else 'O'}{abs(v)}".rjust(3) if v else "  ."

    top = " ".join(cell(p) for p in range(13, 25))
    bottom = " ".join(cell(p) for p in range(12, 0, -1))
    pips = pip_count(board)
    off_x = 15 - int(np.clip(board, 0, None).sum())
    off_o = 15 - int(np.clip(-board.astype(np.int64), 0, None).sum())
    return (
        " 13  14  15  16  17  18  19  20  21  22  23  24\n"
        f"{top}\n{bottom}\n"
        " 12  11  10   9   8   7   6   5   4   3   2   1\n"
        f"bar X{int(board[BAR])} O{-int(board[0])}  off X{off_x} O{off_o}  pips X{pips[0]} O{pips[1]}"
    )
