"""The single-game backgammon environment (``nard/Backgammon-v0``)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import PassiveEnvChecker

from nard_ai.core.rules import Rules

from ._checks import check_options, check_render_mode, check_seed, warn_no_render_mode
from ._games import RESET_OPTIONS, Games, Opponent
from .spaces import MAX_PLAYS, PHASE_MOVE, action_space, observation_space


class RecoveringEnvChecker(PassiveEnvChecker):
    """Gymnasium's ``PassiveEnvChecker`` that survives a refused first ``reset``.

    Gymnasium 1.x's checker marks its reset check done before it calls the
    env's ``reset``; when that first ``reset`` raises (a bad option, a
    ``ValueError``), it keeps no reset data, and every later ``step`` fails in
    its data-reuse check with ``TypeError: cannot unpack non-iterable NoneType
    object``. This subclass runs the check again on the next ``reset`` instead.
    ``gym.make("nard/Backgammon-v0")`` applies it in place of gymnasium's
    checker: the registered entry point is :func:`make_env` (this wrapper around
    :class:`BackgammonEnv`) with ``disable_env_checker=True``;
    ``gym.make(..., disable_env_checker=False)`` adds gymnasium's own on top,
    with that flaw. (Not through ``additional_wrappers``: ``gym.make_vec``
    refuses those with the native vector env.)
    """

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        first = not self.checked_reset
        try:
            return super().reset(seed=seed, options=options)
        except Exception:
            if first:
                self.checked_reset = False  # the check (and its reset data) comes with the next reset
            raise

    @property
    def spec(self):
        # the env's own spec: the entry point adds this wrapper, so gym.make(env.spec) and
        # gym.make_vec(env.spec) rebuild the same stack (not the checker's disable_env_checker=False)
        return self.env.spec


class BackgammonEnv(gym.Env):
    """Backgammon (takhte nard) against an opponent or against itself.

    ## Description
    Money-game backgammon by the rules of ``RULES.md`` (sections 1-7; the
    Iranian no-hit-and-continue variant through ``rules``), without the
    doubling cube by default or with it (section 8) when ``cube=True``. The rules come from :mod:`nard_ai`: legal plays from
    :func:`nard_ai.core.movegen.legal_plays_batch`, game stepping from
    :mod:`nard_ai.core.game`. A game starts with the opening roll (RULES.md §2), so
    the opponent may move first. A turn with no legal move passes by itself:
    the agent is only asked to act when it has at least one move.

    ## Action Space
    ``action_mode="play"`` (default): ``Discrete(max_plays)``, an index into the
    turn's legal plays, given as distinct afterstates sorted lexicographically
    (the order of :func:`nard_ai.core.movegen.legal_plays`). ``info["action_mask"]``
    marks the first ``M`` indices, ``M`` the number of legal plays.
    ``max_plays`` defaults to :data:`env.spaces.MAX_PLAYS` (3060, a proven
    bound; the most seen is 1492); a smaller value shrinks the space and
    raises ``RuntimeError`` on a position with more plays.

    ``action_mode="checker"``: ``Discrete(156)``, one checker moved by one die
    per step, ``action = 6 * source + (die - 1)`` with ``source`` the board
    index the checker leaves (1..24 a point in the mover's numbering, 25 the
    bar) and ``die`` 1..6 (the checker lands on ``source - die``, or is borne
    off). The mask already enforces the whole-turn rules (use both dice, the
    larger die, bar first, ...): a move is allowed only if it starts a sequence
    that ends in one of the turn's legal plays (:mod:`nard_ai.core.checker_moves`).
    The turn passes when no such move remains.

    With ``cube=True`` four cube actions follow the move actions in the same
    ``Discrete`` space (``A`` = the move actions above, so ``Discrete(A + 4)``):
    ``A`` no double (roll), ``A + 1`` double, ``A + 2`` take, ``A + 3`` pass
    (``self.cube_actions`` maps the names to the numbers). Before each roll
    except a game's first (the opening roll is thrown at once), the side on
    roll that has access to the cube (centred, or owned by it) gets a cube
    phase: ``info["phase"] == PHASE_DOUBLE`` and the mask allows only roll and
    double. After a double the other side acts: ``PHASE_TAKE``, the mask
    allows only take (the cube value doubles and the taker owns it) and pass
    (the game ends; the doubler wins the cube value before the double). Then
    the roll is shown and played as usual (``PHASE_MOVE``, only move actions
    allowed). No double takes the cube above 4096
    (:data:`nard_ai.cube.MAX_CUBE`).

    An action outside the action space (not an integer, a bool or a float
    included, or outside ``0..n-1``) always raises ``ValueError`` naming the
    action and the space. An action inside the space but outside the mask
    ends the game as a single-game loss (times the cube value) for the side
    that chose it (``illegal_action="lose"``, ``info["illegal_action"]`` is
    set), or raises ``ValueError`` (``illegal_action="raise"``).

    ## Observation Space
    ``Box(0, high, (210,), float32)`` in play mode, ``(216,)`` in checker mode,
    from the view of the side to act (layout in :mod:`env.spaces`): units
    0-197 TD-Gammon's 198 inputs (:data:`nard_ai.model.encoding.TD198`, ``td198``
    v1) of the board as it stands; 198-203 the larger die one-hot; 204-209 the
    smaller die one-hot; in checker mode 210-215 the unplayed dice, count per
    face / 4. ``info`` holds ``action_mask`` (int8), ``player`` (the side the
    observation is for), ``dice`` (larger first), ``board`` (``(26,)`` int8,
    :mod:`nard_ai.core.board` layout, that side's view), ``illegal_action``, and in
    checker mode ``dice_left`` (``(4,)`` int8, 0-padded).

    With ``cube=True`` six units follow (``(216,)`` in play mode, ``(222,)``
    in checker mode; :mod:`env.spaces`): ``log2(cube value) / 12``, the owner
    one-hot (centred, the observed side, the other side), and flags for the
    double and take phases. In a cube phase the dice units and
    ``info["dice"]`` are 0: the roll is not shown before the cube decision.
    ``info`` adds ``phase`` (``PHASE_MOVE`` 0, ``PHASE_DOUBLE`` 1,
    ``PHASE_TAKE`` 2; 0 at the end), ``cube_value`` and ``cube_owner`` (-1
    centred, else the owning player).

    ## Rewards
    0 on every step but the last. At the end, the game's points (RULES.md §6:
    1 single, 2 gammon, 3 backgammon; with the cube times the cube value, and
    a passed double scores the cube value before the double; with
    ``jacoby=True`` a gammon counts as a single game while the cube is
    centred): against an opponent, from the agent's side (player 0), so ``+``
    for a win and ``-`` for a loss; with ``opponent="self"``, from the side
    that took the final action (the winner, so ``+1/+2/+3`` times the cube;
    negative for an illegal action or for the side that passed a double).

    ## Episode End
    Terminated when a side has borne off all 15 checkers, when a double is
    passed (``cube=True``), or after an illegal action with
    ``illegal_action="lose"``. The final observation is from the
    agent's side (the last actor's with ``"self"``), dice units 0, mask all 0.
    Never truncated by the env (wrap in ``TimeLimit`` if needed).

    ## Arguments
    * ``action_mode``: ``"play"`` or ``"checker"`` (above).
    * ``opponent``: ``"random"`` (uniform over the legal plays, from the env's
      generator; with the cube, uniform over the two allowed cube actions too,
      so it doubles half the times it may and takes half the doubles),
      ``"self"`` (the agent plays both sides and makes both sides' cube
      decisions, observations always from the side to act; ``info["player"]``
      says which), or a callable ``(obs, info) -> action`` called with the
      opponent's own observation and info in the env's action mode (in
      checker mode once per checker move; with the cube also for its cube
      decisions, where ``info["phase"]`` and ``info["action_mask"]`` say
      which cube actions it may choose).
    * ``cube``: play with the doubling cube (default ``False``: cubeless, as
      before; spaces and info unchanged).
    * ``jacoby``: the Jacoby rule (needs ``cube=True``).
    * ``rules``: :class:`nard_ai.core.rules.Rules` (standard by default).
    * ``max_plays``: size of the play-mode action space (above): an int
      ``1 .. MAX_PLAYS`` (a Python or NumPy integer; a bool, float or str is a
      ``TypeError``, out of range a ``ValueError``).
    * ``illegal_action``: ``"lose"`` or ``"raise"`` (above).
    * ``render_mode``: ``None`` or ``"ansi"`` (``render()`` returns a text
      board; with ``None`` it warns and returns ``None``, as gymnasium's envs).

    ``reset(seed=...)`` seeds ``self.np_random``, the source of all dice and of
    the random opponent: ``None`` (go on with the generator) or an int ``>= 0``
    (a NumPy integer too; a bool, float or str is a ``TypeError``). ``reset(options=...)`` accepts ``board`` (``(26,)``,
    the view of the side on roll), ``dice`` (``(2,)``) and ``player`` (0 or 1,
    the side on roll) to start from a given position; what is not given comes
    from the opening roll. With ``cube=True`` also ``cube_value`` and
    ``cube_owner`` (-1 centred, 0 or 1; an owned cube is 2 or more, a
    centred one may be above 1: money play with automatic doubles); and a ``board`` given without
    ``dice`` starts before the roll: the side on roll's cube phase comes
    first, then a roll drawn by :func:`nard_ai.core.game.roll_dice`. Every
    option is checked before the seed or the game changes, so a refused
    ``reset`` (``ValueError``) leaves the env as it was and usable.

    ## Version History
    * v0: initial version (``td198`` v1 observations).
    * v0, later: the ``cube`` and ``jacoby`` options (off by default; with
      them off, spaces, observations and dice are unchanged).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        action_mode: str = "play",
        opponent: str | Opponent = "random",
        rules: Rules | None = None,
        max_plays: int = MAX_PLAYS,
        illegal_action: str = "lose",
        render_mode: str | None = None,
        cube: bool = False,
        jacoby: bool = False,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self._games = Games(
            1,
            action_mode,
            opponent,
            Rules() if rules is None else rules,
            max_plays,
            illegal_action,
            cube=cube,
            jacoby=jacoby,
        )
        self.action_mode = action_mode
        self.opponent = opponent
        self.rules = self._games.rules
        self.cube = self._games.cube
        self.jacoby = self._games.jacoby
        self.cube_actions: dict[str, int] = dict(self._games.cube_ids)
        self.action_space = action_space(action_mode, self._games.max_plays, self.cube)
        self.observation_space = observation_space(action_mode, self.cube)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start a new game (see the class docstring for ``seed`` and ``options``).

        Returns:
            ``(obs, info)``: the first observation (float32, the observation
            space's shape) and info of the side to act.

        Raises:
            TypeError: ``seed`` is not ``None`` nor an integer (a bool, float
                or str included; a NumPy integer is fine); ``options`` is not
                ``None`` nor a dict.
            ValueError: a negative ``seed``, an unknown option or a bad option
                value. Every argument is checked before the seed or the game
                changes: the env stays as it was and usable.
            Exception: a callable opponent's error (or its ``ValueError`` for
                an action outside its mask) while it plays before the agent's
                first decision; the game and the generator are then restored too.
        """
        seed = check_seed(seed)
        options = check_options(options, RESET_OPTIONS)
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; known: {', '.join(RESET_OPTIONS)}")
        # every option is checked before the seed or the game changes: a refused reset leaves the env as it was
        checked = self._games.check_reset(*(options.get(name) for name in RESET_OPTIONS))
        old_rng, old_seed = self._np_random, self._np_random_seed
        old_state = None if old_rng is None else old_rng.bit_generator.state
        super().reset(seed=seed)
        self._games.rngs[0] = self.np_random
        try:
            self._games.reset([0], *checked)
        except BaseException:
            # refused after the roll (a board that ends before the agent acts, an opponent's error):
            # the game (Games.reset restores it) and the generator as they were
            self._np_random, self._np_random_seed = old_rng, old_seed
            if old_rng is not None:
                old_rng.bit_generator.state = old_state
            self._games.rngs[0] = old_rng
            raise
        return self._games.observe_one(0)

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the agent's ``action`` (an integer of the action space) and play on to its next decision.

        Returns:
            ``(obs, reward, terminated, truncated, info)``: ``obs`` float32 of
            the observation space's shape, ``reward`` a float, ``truncated``
            always ``False``.

        Raises:
            ValueError: an action that is not one integer of the action space
                (nothing changes), or outside the mask with ``illegal_action="raise"``
                (nothing changes).
            RuntimeError: the game is finished, was never reset, or was
                interrupted by an earlier error (the message says which): reset it.
            Exception: a callable opponent's error, or its ``ValueError`` for an
                action outside its mask: the game stops mid-turn (it is not
                finished; the next ``step`` raises ``RuntimeError`` saying so)
                and must be reset.
        """
        if np.ndim(action) != 0:
            raise ValueError(f"action must be one integer, got an array of shape {np.shape(action)}")
        self._games.check_actions(action)  # outside the space: ValueError, whatever illegal_action says
        self._games.rngs[0] = self.np_random
        reward = self._games.act([0], [action])[0]
        obs, info = self._games.observe_one(0)
        return obs, float(reward), bool(self._games.done([0])[0]), False, info

    def render(self) -> str | None:
        """The text board (``render_mode="ansi"``); without a render mode a warning and ``None``, as gymnasium's envs."""
        if self.render_mode == "ansi":
            return self._games.render(0)
        warn_no_render_mode("gym.make", self.metadata["render_modes"])
        return None

    def legal_afterstates(self) -> np.ndarray:
        """The legal plays of the turn being played, ``(M, 26)`` int8 afterstates (mover's view), sorted.

        In play mode, action ``a`` chooses row ``a``. Useful for afterstate
        evaluators (score each row with a value network, pick the best).
        Empty at the end of a game and in a cube phase (the roll is not thrown yet).
        """
        plays = self._games.plays[0]
        if plays is None or self._games.done([0])[0] or self._games.cube_phase[0] != PHASE_MOVE:
            return np.empty((0, 26), dtype=np.int8)
        return plays.copy()


def make_env(**kwargs) -> RecoveringEnvChecker:
    """``gym.make``'s entry point: ``RecoveringEnvChecker(BackgammonEnv(**kwargs))``.

    Raises:
        ValueError: as :class:`BackgammonEnv`.
    """
    return RecoveringEnvChecker(BackgammonEnv(**kwargs))


make_env.metadata = BackgammonEnv.metadata  # gym.make reads the render modes from the entry point
