"""The native vector environment: ``N`` backgammon games as arrays, stepped through the batched core."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nard_ai.core.rules import Rules

from ._checks import (
    check_int,
    check_options,
    check_render_mode,
    check_reset_mask,
    check_seeds,
    warn_no_render_mode,
)
from ._games import RESET_OPTIONS, Games, Opponent
from .spaces import MAX_PLAYS, PHASE_MOVE, action_space, observation_space


class BackgammonVectorEnv(VectorEnv):
    """``num_envs`` games of :class:`env.backgammon.BackgammonEnv`, held as arrays.

    Every argument (``cube`` and ``jacoby`` included), space, reward and info
    key is that of :class:`~env.backgammon.BackgammonEnv` (see its docstring), batched on a
    leading ``num_envs`` axis; infos follow Gymnasium's vector convention
    (``infos[key]`` an array over games, ``infos["_" + key]`` a bool mask).
    All games at a turn start get their legal plays from one
    :func:`nard_ai.core.movegen.legal_plays_batch` call and their chosen plays
    applied in one :func:`nard_ai.core.game.step` call.

    ``num_envs`` must be an int ``>= 1`` (a Python or NumPy integer; a
    bool, float or str is a ``TypeError``, less than 1 a ``ValueError``).

    Seeding matches ``num_envs`` single envs (and Gymnasium's ``SyncVectorEnv``,
    as of gymnasium 1.x): ``reset(seed=s)`` gives game ``i`` its own generator
    seeded ``s + i``; a sequence of ``num_envs`` seeds (each ``None`` or an
    int) seeds each game; ``None`` keeps the generators (fresh random ones on
    the first reset). With ``options["reset_mask"]`` only the games reset are
    seeded, each with its own entry (``s + i`` for an int ``s``, as if all were
    reset); the other games keep their generators, so they play on with the
    same dice. With the same seeds and actions, game ``i`` plays exactly as a
    single env reset with seed ``s + i`` (and reset without a seed after each
    episode). ``np_random_seed`` and ``np_random`` are per-game tuples, as
    ``SyncVectorEnv``'s: ``(s, s + 1, ...)`` and the games' generators.

    A ``step`` that raises once the games have begun to change (a callable
    opponent's error, or its action outside its mask) leaves every game it
    stepped interrupted (their results are lost): each later ``step`` raises
    ``RuntimeError`` saying so until they are reset (``reset`` with a
    ``reset_mask`` will do).

    Autoreset mode ``NEXT_STEP`` (``metadata["autoreset_mode"]``): the step
    after a game terminates resets that game, ignores its action and returns
    its first observation with reward 0 and no termination.
    """

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        action_mode: str = "play",
        opponent: str | Opponent = "random",
        rules: Rules | None = None,
        max_plays: int = MAX_PLAYS,
        illegal_action: str = "lose",
        render_mode: str | None = None,
        cube: bool = False,
        jacoby: bool = False,
    ) -> None:
        num_envs = check_int("num_envs", num_envs, 1)
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.num_envs = num_envs
        self.render_mode = render_mode
        self._games = Games(
            self.num_envs,
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
        self.single_action_space = action_space(action_mode, self._games.max_plays, self.cube)
        self.single_observation_space = observation_space(action_mode, self.cube)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._all = np.arange(self.num_envs)
        self._rng_seeds: list[int] = [-1] * self.num_envs  # each game's generator's seed (np_random_seed)

    def _seed(self, seeds: list[int | None], idx: np.ndarray) -> None:
        """Seed games ``idx`` (the games a reset resets) from their entries of ``seeds``; the others are left alone.

        As ``SyncVectorEnv.reset``, which passes ``seed[i]`` to the reset of each
        game ``i`` it resets: ``None`` keeps the game's generator (a fresh random
        one if it has none yet).
        """
        for i in idx:
            if seeds[i] is not None or self._games.rngs[i] is None:
                self._games.rngs[i], self._rng_seeds[i] = seeding.np_random(seeds[i])

    @property
    def np_random_seed(self) -> tuple[int, ...]:
        """The seed of each game's generator, as ``SyncVectorEnv.np_random_seed`` (its envs' ``np_random_seed``).

        ``reset(seed=s)`` gives ``(s, s + 1, ...)``; a game never seeded gets a
        fresh random generator here, as a single env's ``np_random_seed`` does.
        """
        self._lazy_rngs()
        return tuple(self._rng_seeds)

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:
        """Each game's generator (its dice and the random opponent), as ``SyncVectorEnv.np_random``."""
        self._lazy_rngs()
        return tuple(self._games.rngs)

    def _lazy_rngs(self) -> None:
        for i, rng in enumerate(self._games.rngs):
            if rng is None:
                self._games.rngs[i], self._rng_seeds[i] = seeding.np_random()

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset all games (or those of ``options["reset_mask"]``).

        Args:
            seed: ``None``, an ``int >= 0`` (game ``i`` gets ``seed + i``), or a
                sequence of ``num_envs`` per-game seeds (each ``None`` or an
                ``int >= 0``); NumPy integers are accepted. With a
                ``reset_mask`` only the games reset are seeded, with their own
                entries; the others keep their generators (``SyncVectorEnv``'s rule).
            options: ``reset_mask`` (reset only these games: a NumPy array of
                ``dtype=bool`` and shape ``(num_envs,)`` with at least one True,
                as gymnasium's ``SyncVectorEnv`` requires; nothing is converted),
                and ``board``, ``dice``, ``player``, ``cube_value``,
                ``cube_owner`` as for the single env, applied to every game reset.

        Returns:
            ``(obs, infos)``: ``(num_envs, D)`` float32 observations of every
            game (reset or not) and the vector infos (``infos["_" + key]`` is
            the reset mask).

        Raises:
            TypeError: a ``seed`` that is none of the above (named ``seed`` or
                ``seed[i]``; a bool, float or str included); ``options`` that
                is not ``None`` nor a dict; a ``reset_mask``
                that is not a NumPy array (a list or ``None`` included) or not
                of ``dtype=bool`` (as ``SyncVectorEnv``).
            ValueError: a negative seed, a seed sequence whose length is not
                ``num_envs``, an unknown option, a ``reset_mask`` of another
                shape or with no True (as ``SyncVectorEnv``), and the single
                env's option errors. Every argument is
                checked before a generator or a game changes: a refused reset
                leaves the env as it was.
        """
        seeds = check_seeds(seed, self.num_envs)
        options = check_options(options, ("reset_mask", *RESET_OPTIONS))
        unknown = set(options) - set(RESET_OPTIONS) - {"reset_mask"}
        if unknown:
            raise ValueError(
                f"unknown reset options {sorted(unknown)}; known: reset_mask, {', '.join(RESET_OPTIONS)}"
            )
        if "reset_mask" in options:  # as SyncVectorEnv: an ndarray of num_envs bools, one True at least
            reset_mask = check_reset_mask(options.pop("reset_mask"), self.num_envs)
        else:
            reset_mask = np.ones(self.num_envs, dtype=bool)
        # every option is checked before the seeds or a game change: a refused reset leaves the env as it was
        checked = self._games.check_reset(*(options.get(name) for name in RESET_OPTIONS))
        old_rngs, old_seeds = list(self._games.rngs), list(self._rng_seeds)
        old_states = [None if r is None else r.bit_generator.state for r in old_rngs]
        idx = self._all[reset_mask]
        self._seed(seeds, idx)
        try:
            self._games.reset(idx, *checked)
        except BaseException:
            # refused after the roll (a board that ends before the agent acts, an opponent's error):
            # the games (Games.reset restores them) and the generators as they were
            for i, (rng, state) in enumerate(zip(old_rngs, old_states, strict=True)):
                if rng is not None:
                    rng.bit_generator.state = state
                self._games.rngs[i] = rng
            self._rng_seeds = old_seeds
            raise
        self._autoreset[idx] = False
        obs, info = self._games.observe(self._all)
        return obs, self._vector_info(info, reset_mask)

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one action per game (``actions``: ``(num_envs,)`` integers, one per game, in game order).

        Raises:
            ValueError: on actions of another shape (naming the shape expected and the one given), on
                an action outside the action space (not an integer, or outside ``0..n-1``; named with
                its game), and as the single env's ``step``.
            RuntimeError: as the single env's ``step``.
        """
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(
                f"actions must have shape ({self.num_envs},), one action per game of the {self.num_envs}, "
                f"got shape {actions.shape}"
            )
        self._games.check_actions(actions)  # every game's action, an autoreset game's included
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        restart = self._all[self._autoreset]
        play = self._all[~self._autoreset]
        if len(restart):
            self._games.reset(restart)
        if len(play):
            rewards[play] = self._games.act(play, actions[play])
        terminations = np.zeros(self.num_envs, dtype=bool)
        terminations[play] = self._games.done(play)
        truncations = np.zeros(self.num_envs, dtype=bool)
        self._autoreset = terminations | truncations
        obs, info = self._games.observe(self._all)
        return (
            obs,
            rewards,
            terminations,
            truncations,
            self._vector_info(info, np.ones(self.num_envs, dtype=bool)),
        )

    def render(self) -> tuple[str, ...] | None:
        """Each game's text board (``render_mode="ansi"``); without a render mode a warning and ``None``."""
        if self.render_mode == "ansi":
            return tuple(self._games.render(i) for i in range(self.num_envs))
        warn_no_render_mode("gym.make_vec", self.metadata["render_modes"])
        return None

    def legal_afterstates(self, i: int) -> np.ndarray:
        """Game ``i``'s legal plays this turn, ``(M, 26)`` int8 sorted afterstates (mover's view); see the single env."""
        plays = self._games.plays[i]
        if plays is None or self._games.done([i])[0] or self._games.cube_phase[i] != PHASE_MOVE:
            return np.empty((0, 26), dtype=np.int8)
        return plays.copy()

    @staticmethod
    def _vector_info(info: dict[str, np.ndarray], present: np.ndarray) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for key, value in info.items():
            out[key] = value
            out["_" + key] = present.copy()
        return out
