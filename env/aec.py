"""A two-player PettingZoo AEC environment of backgammon (``nard_backgammon_v0``).

PettingZoo dropped its own backgammon environment; this one follows the
conventions of its classic board games (chess, go, connect four) and shares
the rules engine with the Gymnasium environment: the game is one
:class:`env._games.Games` (``N = 1``) in self-play, so the rules, the action
encoding and the observation layout are :mod:`env.spaces`' and the move
generation is :mod:`nard_ai.core`'s. Needs ``pip install pettingzoo``
(the project's ``pettingzoo`` extra); ``import env`` does not import it.

::

    from env import aec

    game = aec.env(cube=True)
    game.reset(seed=0)
    for agent in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        if termination or truncation:
            action = None
        else:
            action = game.action_space(agent).sample(observation["action_mask"])
        game.step(action)
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from nard_ai.core.rules import Rules

from ._checks import check_options, check_render_mode, check_seed
from ._games import RESET_OPTIONS, Games
from .spaces import MAX_PLAYS, PHASE_MOVE, action_space, observation_space

#: The two agents; ``player_k`` is :mod:`nard_ai.core.game`'s player ``k``.
AGENTS = ("player_0", "player_1")


def _agent_index(agent) -> int:
    """The player (0 or 1) of an agent name; raises ``ValueError`` naming the agents for any other."""
    if agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r}: the agents are {', '.join(AGENTS)}")
    return AGENTS.index(agent)


def env(**kwargs) -> AECEnv:
    """The environment wrapped as PettingZoo's classic games are (less ``TerminateIllegalWrapper``).

    ``AssertOutOfBoundsWrapper`` (an action outside the ``Discrete`` space is
    an ``AssertionError``) and ``OrderEnforcingWrapper`` (no ``step``,
    ``observe`` or ``render`` before ``reset``). ``TerminateIllegalWrapper`` is
    left out on purpose: the environment itself ends the game on an action
    outside the mask (see :class:`BackgammonAECEnv`, "Illegal actions"), with
    zero-sum rewards that count the cube, where the wrapper would give -1 to
    the offender and 0 to the other side and mark the game truncated too.

    Keyword arguments are :class:`BackgammonAECEnv`'s.
    """
    game = raw_env(**kwargs)
    game = wrappers.AssertOutOfBoundsWrapper(game)
    game = wrappers.OrderEnforcingWrapper(game)
    return game


def raw_env(**kwargs) -> BackgammonAECEnv:
    """The unwrapped :class:`BackgammonAECEnv` (PettingZoo's name for it)."""
    return BackgammonAECEnv(**kwargs)


class BackgammonAECEnv(AECEnv, EzPickle):
    """Backgammon (takhte nard) for two agents, ``player_0`` and ``player_1``.

    ## Description
    Money-game backgammon by the rules of ``docs/RULES.md`` (sections 1-7; the
    Iranian variant through ``rules``), optionally with the doubling cube
    (section 8, ``cube=True``). The dice are part of the environment: the
    opening roll decides who starts (``agent_selection`` after ``reset``), and
    every roll is drawn inside ``step`` from the generator seeded by
    ``reset(seed=...)``. A turn without a legal move passes by itself, so the
    same agent can act twice in a row; in checker mode an agent acts once per
    checker moved; with the cube the doubled side acts between the double and
    the roll. ``agent_selection`` always names the agent to act.

    ## Actions
    As :class:`env.backgammon.BackgammonEnv` (one ``Discrete`` space for both
    agents): ``action_mode="play"`` (the default, as in the Gymnasium env)
    chooses one of the turn's legal plays, an index into the sorted distinct
    afterstates (:meth:`legal_afterstates`), ``Discrete(max_plays)`` with
    ``max_plays`` 3060 by default; ``action_mode="checker"`` moves one checker
    by one die per step, ``6 * source + die - 1`` (``Discrete(156)``), the mask
    enforcing the whole-turn rules. With ``cube=True`` four actions follow the
    move actions: roll, double, take, pass (``self.cube_actions``); before
    each roll but a game's first, the side on roll with access to the cube
    chooses roll or double, and a doubled side take or pass.

    ## Observations
    ``observe(agent)`` gives ``{"observation": ..., "action_mask": ...}``, as
    PettingZoo's classic games: ``observation`` is the Gymnasium env's
    float32 vector (:mod:`env.spaces`: TD-Gammon's 198 inputs and the dice,
    and the cube's 6 units with ``cube=True``) from ``agent``'s side;
    ``action_mask`` (int8) marks its legal actions, all zero when it is not
    its turn and at the end of the game. ``infos[agent]`` holds the same
    position from its side: ``board`` (``(26,)`` int8, its view, the layout
    of :mod:`nard_ai.core.board`), ``dice`` (larger first, 0 before the roll
    and at the end), ``player``, ``illegal_action``, in checker mode
    ``dice_left``, and with the cube ``phase`` (its own cube decision, else
    ``PHASE_MOVE``), ``cube_value`` and ``cube_owner`` (-1 centred, else the
    owning player).

    ## Rewards
    0 until the end; then the game's points (RULES.md §6: 1 single, 2 gammon,
    3 backgammon; times the cube value; a passed double scores the cube value
    before it; with ``jacoby=True`` a gammon counts one while the cube is
    centred): ``+points`` to the winner, ``-points`` to the loser, zero-sum.

    ## Illegal actions
    An action outside the action space (not an integer, or outside
    ``0..n-1``) is the caller's bug: :func:`env` wraps the env in PettingZoo's
    ``AssertOutOfBoundsWrapper``, whose ``AssertionError`` says so first (the
    PettingZoo convention), and :func:`raw_env` raises ``ValueError`` naming
    the action and the space; neither changes the game.
    An action inside the action space but outside the mask ends the game:
    the agent that chose it loses a single game times the cube value, the
    other wins it, both are terminated and ``infos[...]["illegal_action"]``
    is set (``illegal_action="lose"``, the Gymnasium env's rule); with
    ``illegal_action="raise"`` it is a ``ValueError`` and nothing changes.
    Wrap :func:`raw_env` in ``pettingzoo.utils.wrappers.TerminateIllegalWrapper``
    yourself for the classic games' rule (-1 to the offender, 0 to the other).

    ## Episode end
    Terminated when a side has borne off all 15 checkers, a double is passed
    or an illegal action is chosen; never truncated. As in every AEC env,
    each agent then takes ``step(None)`` to leave ``agents``.

    ## Parallel API
    None: ``metadata["is_parallelizable"]`` is False, as for PettingZoo's
    classic board games. The agents take turns in an order the dice decide
    (repeats when a side cannot move, several steps a turn in checker mode,
    the taker's answer between double and roll), which the parallel API's
    "every agent acts each cycle" cannot express.

    ## Arguments
    * ``action_mode``: ``"play"`` (default) or ``"checker"``.
    * ``cube``, ``jacoby``: the doubling cube and the Jacoby rule (off).
    * ``rules``: :class:`nard_ai.core.rules.Rules` (standard by default).
    * ``max_plays``: size of the play-mode action space (above), an int
      ``1 .. 3060`` (a bool, float or str is a ``TypeError``).
    * ``illegal_action``: ``"lose"`` (default) or ``"raise"``.
    * ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns a text
      board) or ``"human"`` (the text board printed after ``reset`` and each step).

    ``reset(seed=None, options=None)``: a seed (an int ``>= 0``, a NumPy
    integer too; a bool, float or str is a ``TypeError``) seeds the generator
    of all the dice (``None`` goes on with the current one, a fresh random one at first).
    ``options`` takes the Gymnasium env's keys (``board``, ``dice``,
    ``player``, ``cube_value``, ``cube_owner``) to start from a position;
    other keys are ignored with a warning (PettingZoo's ``api_test`` passes one).
    Every option is checked before the seed or the game changes: a refused
    ``reset`` (``ValueError``) leaves the env as it was.

    ## Version History
    * v0: initial version.
    """

    metadata = {
        "name": "nard_backgammon_v0",
        "render_modes": ["human", "ansi"],
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(
        self,
        action_mode: str = "play",
        cube: bool = False,
        jacoby: bool = False,
        rules: Rules | None = None,
        max_plays: int = MAX_PLAYS,
        illegal_action: str = "lose",
        render_mode: str | None = None,
    ) -> None:
        EzPickle.__init__(self, action_mode, cube, jacoby, rules, max_plays, illegal_action, render_mode)
        super().__init__()
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self._games = Games(
            1,
            action_mode,
            "self",
            Rules() if rules is None else rules,
            max_plays,
            illegal_action,
            cube=cube,
            jacoby=jacoby,
        )
        self.action_mode = action_mode
        self.rules = self._games.rules
        self.cube = self._games.cube
        self.jacoby = self._games.jacoby
        self.cube_actions: dict[str, int] = dict(self._games.cube_ids)
        self.possible_agents = list(AGENTS)
        self.agents = []
        n = action_space(action_mode, self._games.max_plays, self.cube).n
        self.action_spaces = {a: spaces.Discrete(n) for a in AGENTS}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": observation_space(action_mode, self.cube),
                    "action_mask": spaces.Box(0, 1, (n,), dtype=np.int8),
                }
            )
            for a in AGENTS
        }
        self.np_random: np.random.Generator | None = None
        self._obs: np.ndarray | None = None
        self._masks: np.ndarray | None = None

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[AGENTS[_agent_index(agent)]]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[AGENTS[_agent_index(agent)]]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (class docstring: ``seed`` and ``options``).

        Raises:
            TypeError: ``seed`` is not ``None`` nor an integer (a bool, float
                or str included; a NumPy integer is fine); ``options`` is not
                ``None`` nor a dict.
            ValueError: a negative ``seed`` or a bad option value; the env
                stays as it was.
        """
        seed = check_seed(seed)
        options = check_options(options, RESET_OPTIONS)
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            gymnasium.logger.warn(f"reset options {unknown} are not used (known: {', '.join(RESET_OPTIONS)})")
        # every option is checked before the seed or the game changes: a refused reset leaves the env as it was
        checked = self._games.check_reset(*(options.get(name) for name in RESET_OPTIONS))
        old_rng = self.np_random
        old_state = None if old_rng is None else old_rng.bit_generator.state
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        self._games.rngs[0] = self.np_random
        try:
            self._games.reset([0], *checked)
        except BaseException:
            # refused after the roll (a board that ends before the first decision): the generator as it was
            self.np_random = old_rng
            if old_rng is not None:
                old_rng.bit_generator.state = old_state
            self._games.rngs[0] = old_rng
            raise
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._skip_agent_selection = None
        self._update()
        self.agent_selection = AGENTS[self._games.actor(0)]
        if self.render_mode == "human":
            self.render()

    def _check_reset(self, method: str) -> None:
        """The raw env's own refusal before the first ``reset`` (:func:`env` adds PettingZoo's ``OrderEnforcingWrapper``)."""
        if self._obs is None:
            raise RuntimeError(f"{method}() called before reset(): call reset() first")

    def last(self, observe: bool = True):
        self._check_reset("last")
        return super().last(observe)

    def step(self, action) -> None:
        self._check_reset("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if np.ndim(action) != 0:
            raise ValueError(f"action must be one integer, got {action!r}")
        self._games.check_actions(action)  # outside the space: ValueError (the raw env; env() asserts first)
        self._games.rngs[0] = self.np_random
        self._games.act([0], [action])
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._update()
        if self._games.done([0])[0]:
            points = float(self._games.state.points[0])  # player 0's view
            self.rewards = {AGENTS[0]: points, AGENTS[1]: -points}
            self.terminations = dict.fromkeys(self.agents, True)
            # the side that did not make the final action steps out first, as in the classic games
            self.agent_selection = AGENTS[1 - int(self._games.state.turn[0])]
        else:
            self.agent_selection = AGENTS[self._games.actor(0)]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        k = _agent_index(agent)
        self._check_reset("observe")
        return {"observation": self._obs[k].copy(), "action_mask": self._masks[k].copy()}

    def render(self) -> str | None:
        """The board from the side to act (at the end, the side that made the final action)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode (use 'ansi' or 'human')")
            return None
        self._check_reset("render")
        text = self._games.render(0)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass

    def legal_afterstates(self) -> np.ndarray:
        """The legal plays of the turn being played, ``(M, 26)`` int8 afterstates (mover's view), sorted.

        In play mode, action ``a`` chooses row ``a``; empty at the end of a
        game and in a cube phase (the roll is not thrown yet).
        """
        plays = self._games.plays[0]
        if plays is None or self._games.done([0])[0] or self._games.cube_phase[0] != PHASE_MOVE:
            return np.empty((0, 26), dtype=np.int8)
        return plays.copy()

    def _update(self) -> None:
        """Observations and infos of both agents, from each one's side, after a reset or a step."""
        obs, info = self._games.observe([0, 0], players=[0, 1])
        self._obs = obs
        self._masks = info.pop("action_mask")
        self.infos = {
            a: {key: (value[k].item() if np.ndim(value[k]) == 0 else value[k]) for key, value in info.items()}
            for k, a in enumerate(AGENTS)
            if a in self.agents
        }
