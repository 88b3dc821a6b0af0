"""The batched engine behind both environments: ``N`` games as arrays, one generator per game.

:class:`BackgammonEnv` is this engine with ``N = 1``; :class:`BackgammonVectorEnv`
holds ``N`` games. Both only delegate, so a vector env and ``N`` single envs
seeded alike play the same games.

Every game draws its randomness from its own ``np.random.Generator``, in a
fixed per-game order that does not depend on the other games: the opening
roll (:func:`nard_ai.core.game.new_games`), then per turn the random opponent's
choice (``integers(M)``, if any) followed by the next roll
(:func:`nard_ai.core.game.roll_dice`, only when the game goes on).

A turn starts with the dice rolled; its legal plays are found for all games
at a turn start in one :func:`nard_ai.core.movegen.legal_plays_batch` call. Then,
per game: no legal move passes the turn at once; the agent's turns wait for an
action; the opponent's are played on the spot. Chosen plays are applied for
all those games in one :func:`nard_ai.core.game.step` call, and the loop repeats
for the games now at a new turn start.

With the cube (``cube=True``, RULES.md §8), a turn other than a game's first
(whose opening roll is thrown before anyone could double) starts with a cube
phase when the side on roll has access to the cube (centred or its own) and
doubling keeps the cube at or under :data:`nard_ai.cube.MAX_CUBE`: that side
chooses "roll" or "double"; after a double the other side chooses "take"
(the cube doubles and it owns it) or "pass" (the game ends, the doubler wins
the cube value before the double). The turn's dice are drawn from the game's
generator when the previous turn ends, as without the cube, but stay hidden
(dice units 0) until the cube phase is over, so the cube option changes no
game's dice. The random opponent's cube choices draw ``integers(2)`` from the
game's generator, before its play's draw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields

import numpy as np

from nard_ai.core.board import BAR, BOARD_SIZE, pip_count, swap_sides, validate_board, validate_dice
from nard_ai.core.checker_moves import (
    MAX_DICE,
    checker_action_parts,
    checker_mask,
    play_checker_move,
    play_targets,
)
from nard_ai.core.game import CENTERED, GameState, new_games, roll_dice, step
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.core.rules import Rules
from nard_ai.play.cube_policy import may_double, owner_codes, taken_cube

from ._checks import check_arguments, check_cube_options, named_option, option_int, show
from .spaces import (
    CUBE_ACTIONS,
    MAX_PLAYS,
    PHASE_DOUBLE,
    PHASE_MOVE,
    PHASE_TAKE,
    cube_action_ids,
    cube_units,
    encode_observations,
    num_move_actions,
)

#: The agent's player number when it plays against an opponent.
AGENT = 0

_TURN_START = 0  # dice rolled, legal plays not yet generated
_WAITING = 1  # waiting for the agent's action
_DONE = 2  # the game is over

Opponent = Callable[[np.ndarray, dict], int]

#: ``reset(options=...)`` keys, in the order of :meth:`Games.reset`'s arguments.
RESET_OPTIONS = ("board", "dice", "player", "cube_value", "cube_owner")


def _take(state: GameState, idx: np.ndarray) -> GameState:
    return GameState(**{f.name: getattr(state, f.name)[idx] for f in fields(state)})


def _put(state: GameState, idx: np.ndarray, sub: GameState) -> None:
    for f in fields(state):
        getattr(state, f.name)[idx] = getattr(sub, f.name)


class Games:
    """``N`` backgammon games stepped together (see the module docstring).

    Attributes:
        state: the :class:`nard_ai.core.game.GameState` (``boards`` are turn-start
            boards of the side on roll; finished games keep the last mover's board).
        rngs: one generator per game; the env sets them before resetting.
        current: ``(N, 26)`` int8 board of the side on roll as it stands now
            (mid-turn in checker mode).
        dice_left: ``(N, 4)`` int8 unplayed dice, larger first, 0-padded.
        masks: ``(N, A)`` int8 legal actions of the side to act.
        illegal: ``(N,)`` bool, the game's last action was outside the mask.
        cube_phase: ``(N,)`` int8 :data:`~env.spaces.PHASE_MOVE`,
            :data:`~env.spaces.PHASE_DOUBLE` or :data:`~env.spaces.PHASE_TAKE`.
        cube_open: ``(N,)`` bool, the cube decision of the turn is still to come.
        started: ``(N,)`` bool, the game has been reset at least once.
        interrupted: per game, ``None`` or the error that cut the game off in
            the middle of :meth:`act` (``"the opponent's error (ValueError: ...)"``);
            such a game is inert (as a finished one: no mask, no dice) until it is reset.
    """

    def __init__(
        self,
        n: int,
        action_mode: str = "play",
        opponent: str | Opponent = "random",
        rules: Rules | None = None,
        max_plays: int = MAX_PLAYS,
        illegal_action: str = "lose",
        cube: bool = False,
        jacoby: bool = False,
    ) -> None:
        rules = Rules() if rules is None else rules
        check_arguments(action_mode, opponent, rules, max_plays, illegal_action, cube, jacoby)
        self.n = n
        self.action_mode = action_mode
        self.opponent = opponent
        self.rules = rules
        self.max_plays = int(max_plays)
        self.illegal_action = illegal_action
        self.cube = bool(cube)
        self.jacoby = bool(jacoby)
        self.num_move_actions = num_move_actions(action_mode, self.max_plays)
        self.cube_ids = cube_action_ids(action_mode, self.max_plays) if self.cube else {}
        self.num_actions = self.num_move_actions + (len(CUBE_ACTIONS) if self.cube else 0)
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
        self.cube_phase = np.zeros(n, dtype=np.int8)
        self.cube_open = np.zeros(n, dtype=bool)
        self.started = np.zeros(n, dtype=bool)
        self.interrupted: list[str | None] = [None] * n
        self._opponent_failed = False  # set by _callable_action when the callable opponent fails

    # ------------------------------------------------------------------
    # Reset and step
    # ------------------------------------------------------------------

    def check_reset(
        self,
        board=None,
        dice=None,
        player: int | None = None,
        cube_value: int | None = None,
        cube_owner: int | None = None,
    ) -> tuple:
        """Validate the reset options of :meth:`reset` without changing anything.

        The envs call it before they seed or touch any game, so a refused
        ``reset`` leaves the env as it was (still usable, its generator unchanged).

        Returns:
            ``(board, dice, player, cube_value, cube_owner)``, validated
            (``board`` ``(26,)`` int8, ``dice`` ``(2,)`` larger first; ``None``
            where not given).

        Raises:
            ValueError: as :meth:`reset`, naming the option.
        """
        if board is not None:
            board = named_option("board", validate_board, board)
            if board.shape != (BOARD_SIZE,):
                raise ValueError(f"options['board'] must be one (26,) board, got shape {board.shape}")
            left = np.clip(board, 0, None).sum(), np.clip(-board.astype(np.int64), 0, None).sum()
            if min(left) == 0:
                raise ValueError("options['board'] is a finished game: both sides need checkers left")
        if dice is not None:
            checked = named_option("dice", validate_dice, dice)
            if np.shape(dice) != (2,):  # validate_dice also takes (N, 2): not read as its first row
                raise ValueError(
                    f"options['dice'] must be one roll of shape (2,), got shape {np.shape(dice)}"
                )
            dice = checked[0]
        if player is not None:
            player = option_int("player", player, (0, 1), "0 or 1")
        cube_value, cube_owner = check_cube_options(self.cube, cube_value, cube_owner)
        return board, dice, player, cube_value, cube_owner

    def check_actions(self, actions) -> np.ndarray:
        """Refuse actions outside the action space ``Discrete(self.num_actions)``.

        An action inside the space but outside the mask is not refused here:
        that is an illegal action (lost game or ``ValueError`` by ``illegal_action``).

        Args:
            actions: array-like of actions, any shape.

        Returns:
            the actions as a flat int64 array.

        Raises:
            ValueError: on a non-integer action (a bool or a float included) or
                one outside ``0..num_actions-1``, naming the action and the space.
        """
        arr = np.asarray(actions)
        space = f"the action space Discrete({self.num_actions}) (0..{self.num_actions - 1})"
        if arr.dtype == object:
            # Python ints past int64 (2**70): integers outside the space, not "not integers"
            flat = arr.reshape(-1)
            ints = [type(x) is int and not 0 <= x < self.num_actions for x in flat]  # bool is not int
            past = np.flatnonzero(ints)
            if len(past):
                where = f" (game {past[0]})" if flat.size > 1 else ""
                raise ValueError(f"action {flat[past[0]]!r}{where} is outside {space}")
        if arr.dtype.kind not in "iu":
            # a wrong type is the caller's bug, not a move: never silently truncated or forfeited
            raise ValueError(
                f"actions must be integers of {space}, got {arr.dtype} ({arr.reshape(-1)[:4].tolist()!r})"
            )
        flat = arr.reshape(-1).astype(np.int64)
        bad = (flat < 0) | (flat >= self.num_actions)
        if arr.dtype.kind == "u":
            bad |= arr.reshape(-1) >= self.num_actions  # an unsigned value past int64 wraps in the cast
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            where = f" (game {j})" if flat.size > 1 else ""
            raise ValueError(f"action {arr.reshape(-1)[j].item()!r}{where} is outside {space}")
        return flat

    def reset(
        self,
        idx,
        board=None,
        dice=None,
        player: int | None = None,
        cube_value: int | None = None,
        cube_owner: int | None = None,
    ) -> None:
        """Start new games ``idx`` from the starting position with the opening roll.

        Args:
            idx: game indices; each draws from ``self.rngs[i]``.
            board: optional ``(26,)`` board to start from instead, from the
                view of the side on roll (a running game: both sides have
                checkers left). With the cube and no ``dice``, the first turn
                starts before the roll: a cube phase, then dice drawn with
                :func:`nard_ai.core.game.roll_dice` (doubles possible).
            dice: optional roll ``(2,)`` for the first turn instead of the opening roll.
            player: optional side on roll (0 or 1) instead of the opening roll's starter.
            cube_value: optional cube value (``cube=True`` only).
            cube_owner: optional cube owner: -1 centred, or player 0 or 1 (``cube=True`` only).

        Raises:
            ValueError: on an invalid board (a dead one included, where both
                sides are on the bar against closed boards and neither could
                ever move: :func:`nard_ai.core.board.validate_board`), a
                finished position (or one the opponent finishes before the
                agent acts), bad dice, player or cube.
            Exception: whatever a callable opponent raises (or its
                ``ValueError`` for an action outside its mask), and the
                ``RuntimeError`` of a position with more than ``max_plays``
                plays. On any error games ``idx`` are restored as they were
                before this call (their generators' states included).
        """
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        board, dice, player, cube_value, cube_owner = self.check_reset(
            board, dice, player, cube_value, cube_owner
        )
        saved = self._save(idx)
        try:
            self._reset(idx, board, dice, player, cube_value, cube_owner)
        except BaseException:
            self._restore(idx, saved)  # refused: the games are as they were before this reset
            raise
        if board is not None and self.done(idx).any():
            self._restore(idx, saved)
            raise ValueError("options['board'] gives a game that ends before the agent's first decision")

    def _reset(self, idx: np.ndarray, board, dice, player, cube_value, cube_owner) -> None:
        """:meth:`reset` with checked options, without the restore on an error."""
        before_roll = self.cube and board is not None and dice is None
        for i in idx:
            sub = new_games(1, self.rngs[i])
            if board is not None:
                sub.boards[0] = board
            if dice is not None:
                sub.dice[0] = dice
            elif before_roll:
                sub.dice[0] = roll_dice(1, self.rngs[i])[0]
            if player is not None:
                sub.turn[0] = player
            if cube_value is not None:
                sub.cube_value[0], sub.cube_owner[0] = cube_value, cube_owner
            _put(self.state, np.array([i]), sub)
            self.phase[i] = _TURN_START
            self.illegal[i] = False
            self.masks[i] = 0
            self.current[i] = sub.boards[0]
            self.cube_phase[i] = PHASE_MOVE
            self.cube_open[i] = before_roll
            self.started[i] = True
            self.interrupted[i] = None
        self._advance(idx)

    def _save(self, idx: np.ndarray) -> tuple:
        """Everything :meth:`reset` changes in games ``idx`` (their generators' states included)."""
        per_game = [
            (
                self.plays[i],
                self.targets[i],
                self.caches[i],
                self.interrupted[i],
                None if self.rngs[i] is None else self.rngs[i].bit_generator.state,
            )
            for i in idx
        ]
        arrays = tuple(
            a[idx].copy()
            for a in (
                self.phase,
                self.current,
                self.dice_left,
                self.masks,
                self.illegal,
                self.cube_phase,
                self.cube_open,
                self.started,
            )
        )
        return _take(self.state, idx), arrays, per_game

    def _restore(self, idx: np.ndarray, saved: tuple) -> None:
        state, arrays, per_game = saved
        _put(self.state, idx, state)
        for a, old in zip(
            (
                self.phase,
                self.current,
                self.dice_left,
                self.masks,
                self.illegal,
                self.cube_phase,
                self.cube_open,
                self.started,
            ),
            arrays,
            strict=True,
        ):
            a[idx] = old
        for i, (plays, targets, caches, interrupted, rng_state) in zip(idx, per_game, strict=True):
            self.plays[i], self.targets[i], self.caches[i] = plays, targets, caches
            self.interrupted[i] = interrupted
            if rng_state is not None:
                self.rngs[i].bit_generator.state = rng_state

    def act(self, idx, actions) -> np.ndarray:
        """Apply one agent action per game of ``idx`` and play on to the agent's next decision.

        Args:
            idx: ``(k,)`` game indices, each waiting for the agent.
            actions: ``(k,)`` integer actions.

        Returns:
            ``(k,)`` float64 rewards (see :meth:`reward_of`), 0 for games still running.

        Raises:
            RuntimeError: if a game of ``idx`` is not waiting for the agent: it
                is over, was never reset, or was interrupted by an earlier
                error (:meth:`not_waiting` says which; reset it first).
            ValueError: on actions outside the action space (not integers, or
                outside ``0..num_actions-1``: :meth:`check_actions`, always), and on an action
                outside the mask when ``illegal_action="raise"``. These errors change nothing.
            Exception: an error raised once the games have begun to change (a
                callable opponent's own error, or its ``ValueError`` for an
                action outside its mask; the ``RuntimeError`` of a position with
                more than ``max_plays`` plays) leaves every game of ``idx``
                interrupted (mid-turn; with several games, those done with
                their part of the step too, whose results were lost): inert,
                and refused by the next ``act`` with that error named, until it is reset.
        """
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        actions = self.check_actions(actions)
        waiting = self.phase[idx] == _WAITING
        if not waiting.all():
            raise RuntimeError(self.not_waiting(int(idx[np.flatnonzero(~waiting)[0]])))
        legal = np.array([self._is_legal(i, a) for i, a in zip(idx, actions, strict=True)], dtype=bool)
        if self.illegal_action == "raise" and not legal.all():
            j = int(np.flatnonzero(~legal)[0])
            raise ValueError(
                f"action {int(actions[j])} is not legal in game {int(idx[j])} "
                f"(legal: {np.flatnonzero(self.masks[idx[j]]).tolist()})"
            )
        self._opponent_failed = False
        try:
            self._act(idx, actions, legal)
        except BaseException as error:
            self._interrupt(idx, error)
            raise
        return np.array([self.reward_of(i) if self.phase[i] == _DONE else 0.0 for i in idx], dtype=np.float64)

    def not_waiting(self, i: int) -> str:
        """Why game ``i`` cannot take an action now (the message of :meth:`act`'s ``RuntimeError``)."""
        game = "the game" if self.n == 1 else f"game {i}"
        if self.interrupted[i] is not None:
            return (
                f"step() called on {game} after {self.interrupted[i]} interrupted it in the middle of "
                f"{self._middle()}: it did not finish and cannot go on; call reset() to start a new game"
            )
        if not self.started[i]:
            return f"step() called on {game} before it was ever reset; call reset() first"
        return f"step() called on a finished game ({game}); call reset() first"

    def _interrupt(self, idx: np.ndarray, error: BaseException) -> None:
        """Mark games ``idx`` cut off by ``error`` in the middle of :meth:`act`: inert until reset."""
        text = f"{type(error).__name__}: {error}"
        if len(text) > 160:
            text = text[:157] + "..."
        source = "the opponent's" if self._opponent_failed else "an"
        text = f"{source} error ({text})"
        for i in idx:
            self.interrupted[i] = text
            self.phase[i] = _DONE  # observed as a finished game: no mask, no dice
            self.cube_phase[i] = PHASE_MOVE
            self.cube_open[i] = False
            self.masks[i] = 0
            self.dice_left[i] = 0
        games = "the game" if self.n == 1 else "game " + ", ".join(str(int(i)) for i in idx)
        error.add_note(
            f"{games} stopped in the middle of {self._middle()} (not finished): "
            "call reset() before stepping it again"
        )

    def _middle(self) -> str:
        """Where an interrupted game stopped: a turn (one game), or a step (a vector step, some games maybe done)."""
        return "a turn" if self.n == 1 else "a step"

    def _act(self, idx: np.ndarray, actions: np.ndarray, legal: np.ndarray) -> None:
        """:meth:`act` with checked actions: apply them and play on."""
        apply_idx, apply_boards, rolled = [], [], []
        for i, a, ok in zip(idx, actions, legal, strict=True):
            self.illegal[i] = not ok
            if not ok:
                self._forfeit(i)
                continue
            if self.cube_phase[i] != PHASE_MOVE:
                self._apply_cube_action(i, int(a))
                if self._play_cube(i) == "move":
                    self.phase[i] = _TURN_START
                    rolled.append(i)
                continue
            done_turn = self._apply_action(i, int(a))
            if done_turn is not None:
                apply_idx.append(i)
                apply_boards.append(done_turn)
        self._apply_plays(apply_idx, apply_boards)
        self._advance(apply_idx + rolled)

    def reward_of(self, i: int) -> float:
        """The points of finished game ``i`` for the side the env rewards.

        Against an opponent: player 0's (the agent's) points, ``±1/2/3``
        (times the cube value with the cube). With ``opponent="self"``: the
        points of the side that made the last action (the winner; or the loser
        of an illegal action, or the side that passed a double).
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
        is for (player 0 against an opponent, the last actor with ``"self"``).
        """
        if self.phase[i] != _DONE:
            return self.actor(i)
        return int(self.state.turn[i]) if self.opponent == "self" else AGENT

    def actor(self, i: int) -> int:
        """The player to act in running game ``i``: the doubled side when it must take or pass, else the side on roll."""
        turn = int(self.state.turn[i])
        return 1 - turn if self.cube_phase[i] == PHASE_TAKE else turn

    def _view(
        self, idx: np.ndarray, players: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Boards, dice, dice left, masks and players of ``idx`` from each viewer's side.

        ``players`` chooses the side each game is seen from (default :meth:`viewer`);
        a side that is not to act gets an all-zero mask.
        """
        boards = self.current[idx].copy()
        dice = np.sort(self.state.dice[idx], axis=1)[:, ::-1].copy()
        dice_left = self.dice_left[idx].copy()
        masks = self.masks[idx].copy()
        if players is None:
            players = np.array([self.viewer(i) for i in idx], dtype=np.int64)
        else:
            players = np.asarray(players, dtype=np.int64).reshape(len(idx))
        done = self.phase[idx] == _DONE
        # The board is the side on roll's (at the end, the last actor's, state.turn); turn it to the viewer.
        flip = players != self.state.turn[idx]
        if flip.any():
            boards[flip] = swap_sides(boards[flip])
        hidden = done | (self.cube_phase[idx] != PHASE_MOVE)  # no dice before the roll
        dice[hidden] = 0
        dice_left[hidden] = 0
        masks[~self._acting(idx, players)] = 0
        return boards, dice, dice_left, masks, players

    def _acting(self, idx: np.ndarray, players: np.ndarray) -> np.ndarray:
        """``(k,)`` bool: ``players[j]`` is to act in running game ``idx[j]``."""
        turn = self.state.turn[idx].astype(np.int64)
        actors = np.where(self.cube_phase[idx] == PHASE_TAKE, 1 - turn, turn)  # :meth:`actor`, batched
        return (self.phase[idx] != _DONE) & (actors == players)

    def observe(self, idx, players=None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Observations and info arrays of games ``idx`` (layout in :mod:`env.spaces`).

        ``players`` (optional, ``(k,)``) gives the side each observation is for
        instead of :meth:`viewer`; a side that is not to act gets an all-zero
        ``action_mask`` and the phase :data:`~env.spaces.PHASE_MOVE` (no cube
        decision of its own).

        Returns:
            ``(obs, info)``: ``(k, D)`` float32 and a dict of ``(k, ...)`` arrays:
            ``action_mask`` ``(k, A)`` int8, ``player`` ``(k,)`` int64,
            ``dice`` ``(k, 2)`` int8 (larger first), ``board`` ``(k, 26)`` int8,
            ``illegal_action`` ``(k,)`` bool, in checker mode
            ``dice_left`` ``(k, 4)`` int8, and with the cube ``phase``
            ``(k,)`` int64 (:data:`~env.spaces.PHASE_MOVE` also at the end),
            ``cube_value`` ``(k,)`` int64 and ``cube_owner`` ``(k,)`` int64
            (-1 centred, else the owning player).
        """
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        boards, dice, dice_left, masks, players = self._view(idx, players)
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
        if self.cube:
            value = self.state.cube_value[idx].copy()
            # int64 as the single env's Python ints batch in gymnasium's SyncVectorEnv (cube_value too)
            owner = self.state.cube_owner[idx].astype(np.int64)
            phase = np.where(self._acting(idx, players), self.cube_phase[idx], PHASE_MOVE).astype(np.int64)
            relative = owner_codes(owner, players)
            obs = np.concatenate([obs, cube_units(value, relative, phase)], axis=1)
            info["phase"] = phase
            info["cube_value"] = value
            info["cube_owner"] = owner
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
        done = self.phase[i] == _DONE
        cube = ""
        if self.cube:
            owner = int(self.state.cube_owner[i])
            cube = f"cube {int(self.state.cube_value[i])} " + (
                "centred" if owner == CENTERED else f"owned by player {owner}"
            )
        text = render_text(
            boards[0],
            int(players[0]),
            dice[0],
            dice_left[0],
            done,
            self.action_mode == "checker",
            cube=cube,
            phase=PHASE_MOVE if done else int(self.cube_phase[i]),
        )
        if self.interrupted[i] is not None:
            # not "game over": an error cut the game off mid-turn (the board may be mid-turn too)
            picture = text.split("\n", 1)[1]
            text = f"game interrupted in the middle of {self._middle()} by {self.interrupted[i]}: reset it\n{picture}"
        return text

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
        return self.opponent == "self" or self.actor(i) == AGENT

    def _forfeit(self, i: int) -> None:
        """An action outside the mask with ``illegal_action="lose"``: the actor loses a single game (times the cube)."""
        self._finish(i, self.actor(i), -int(self.state.cube_value[i]))

    def _finish(self, i: int, actor: int, actor_points: int) -> None:
        """End game ``i`` with ``actor_points`` for ``actor``, the side that took the final action.

        The final board and ``state.turn`` become the actor's, as after a play
        (``reward_of`` and ``viewer`` read them).
        """
        if actor != self.state.turn[i]:
            self.current[i] = swap_sides(self.current[i])
            self.state.turn[i] = actor
        self.state.boards[i] = self.current[i]
        self.state.done[i] = True
        self.state.points[i] = actor_points if actor == 0 else -actor_points
        self.phase[i] = _DONE
        self.cube_phase[i] = PHASE_MOVE
        self.cube_open[i] = False
        self.masks[i] = 0

    # ------------------------------------------------------------------
    # The cube (RULES.md §8)
    # ------------------------------------------------------------------

    def _may_double(self, i: int) -> bool:
        """The side on roll has access (centred or its own cube) and a double keeps the cube at most MAX_CUBE."""
        code = owner_codes(int(self.state.cube_owner[i]), int(self.state.turn[i]))
        return bool(may_double(code, int(self.state.cube_value[i])))

    def _set_cube_phase(self, i: int, phase: int) -> None:
        self.cube_phase[i] = phase
        self.masks[i] = 0
        if phase == PHASE_DOUBLE:
            self.masks[i, [self.cube_ids["roll"], self.cube_ids["double"]]] = 1
        elif phase == PHASE_TAKE:
            self.masks[i, [self.cube_ids["take"], self.cube_ids["pass"]]] = 1

    def _apply_cube_action(self, i: int, action: int) -> None:
        """Apply a legal cube action of the side to act in game ``i``."""
        name = CUBE_ACTIONS[action - self.num_move_actions]
        roller = int(self.state.turn[i])
        if name == "roll":
            self._set_cube_phase(i, PHASE_MOVE)
        elif name == "double":
            self._set_cube_phase(i, PHASE_TAKE)
        elif name == "take":
            # "the game value doubles and the taker now owns the cube" (no beavers in the env)
            value, owner = taken_cube(np.array([self.state.cube_value[i]]), np.array([False]), 1 - roller)
            self.state.cube_value[i], self.state.cube_owner[i] = value[0], owner[0]
            self._set_cube_phase(i, PHASE_MOVE)
        else:
            # "or passes and loses the current value at once"
            self._finish(i, 1 - roller, -int(self.state.cube_value[i]))

    def _opponent_cube_action(self, i: int) -> int:
        """The opponent's cube action: uniform over the two allowed (random), or the callable's choice."""
        legal = np.flatnonzero(self.masks[i])
        if self.opponent == "random":
            return int(legal[self.rngs[i].integers(len(legal))])
        return self._callable_action(i)

    def _callable_action(self, i: int) -> int:
        """The callable opponent's action in game ``i`` (its own view and mask), checked against the mask.

        Raises:
            ValueError: an action outside the opponent's mask (or not an integer).
            Exception: whatever the callable raises. Either way the error is
                marked as the opponent's (:meth:`act` names it so).
        """
        obs, info = self.observe_one(i)
        try:
            action = self.opponent(obs, info)
        except BaseException:
            self._opponent_failed = True
            raise
        if not self._is_legal(i, action):
            self._opponent_failed = True
            raise ValueError(
                f"the opponent chose action {show(action)}, outside its action_mask "
                f"(legal: {np.flatnonzero(self.masks[i]).tolist()})"
            )
        return int(action)

    def _play_cube(self, i: int) -> str:
        """Run game ``i``'s cube phase on: ``"wait"`` for the agent, ``"move"`` (the roll is played) or ``"done"``."""
        while self.phase[i] != _DONE and self.cube_phase[i] != PHASE_MOVE:
            if self._agent_to_act(i):
                self.phase[i] = _WAITING
                return "wait"
            self._apply_cube_action(i, self._opponent_cube_action(i))
        return "done" if self.phase[i] == _DONE else "move"

    def _cube_turn_starts(self, pending: np.ndarray) -> np.ndarray:
        """Open the cube phase of the games at a turn start that have one; returns the games that go on to roll."""
        go = []
        for i in pending:
            if self.cube_open[i]:
                self.cube_open[i] = False
                if self._may_double(i):
                    self._set_cube_phase(i, PHASE_DOUBLE)
                    if self._play_cube(i) != "move":
                        continue
            go.append(i)
        return np.asarray(go, dtype=np.int64)

    def _apply_action(self, i: int, action: int) -> np.ndarray | None:
        """Apply a legal action; returns the turn's afterstate once the turn is complete, else ``None``."""
        if self.action_mode == "play":
            return self.plays[i][action]
        source, die = checker_action_parts(action)
        self.current[i], self.dice_left[i] = play_checker_move(
            self.current[i], self.dice_left[i], source, die
        )
        self.masks[i, : self.num_move_actions] = checker_mask(
            self.current[i], self.dice_left[i], self.targets[i], self.caches[i]
        )
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
            self.masks[i, : self.num_move_actions] = checker_mask(
                self.current[i], self.dice_left[i], self.targets[i], self.caches[i]
            )

    def _ask_opponent(self, i: int) -> np.ndarray:
        """Let a callable opponent play game ``i``'s turn; returns the afterstate."""
        while True:
            self._build_mask(i)
            if self.action_mode == "checker" and not self.masks[i].any():
                return self.current[i].copy()
            afterstate = self._apply_action(i, self._callable_action(i))
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
        # step scores a finished game by the one rule, Jacoby included (core.game.finished_points)
        sub = step(_take(self.state, idx), afterstates, next_dice=next_dice, jacoby=self.jacoby)
        _put(self.state, idx, sub)
        self.current[idx] = sub.boards
        self.masks[idx] = 0
        self.dice_left[idx] = 0
        self.phase[idx] = np.where(sub.done, _DONE, _TURN_START)
        self.cube_open[idx] = self.cube & ~sub.done

    def _advance(self, idx) -> None:
        """Play every game of ``idx`` at a turn start on to the agent's next decision or the game's end."""
        pending = np.asarray(
            [i for i in np.asarray(idx).reshape(-1) if self.phase[i] == _TURN_START], dtype=np.int64
        )
        while len(pending):
            if self.cube:
                pending = self._cube_turn_starts(pending)
                if not len(pending):
                    break
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
    cube: str = "",
    phase: int = PHASE_MOVE,
) -> str:
    """A plain-text picture of a board from ``player``'s side (``X`` = ``player``, ``O`` = the other).

    ``cube`` (e.g. ``"cube 2 owned by player 1"``) is appended to the status
    line; ``phase`` says whether ``player`` decides a double or a take.

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
    elif phase == PHASE_DOUBLE:
        status = f"player {player} (X) to double or roll"
    elif phase == PHASE_TAKE:
        status = f"player {player} (X) is doubled: take or pass"
    else:
        status = f"player {player} (X) to act, roll {dice[0]}-{dice[1]}"
        left = [int(d) for d in dice_left if d]
        if left and checker_mode:
            status += f", dice left {' '.join(map(str, left))}"
    if cube:
        status += f"; {cube}"
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
