"""Gymnasium environments for nard_ai (the library never imports this package).

Installed (``pip install .``, a wheel, ``pip install -e .``) this package is
``nard_ai_env``, under the project's own prefix (a top-level ``env`` would
collide with any other package of that name); in a checkout the folder
``env/`` also imports as ``env`` from the repository root. Importing either
registers:

=======================  =====================================================
id                       what
=======================  =====================================================
``nard/Backgammon-v0``   :class:`env.backgammon.BackgammonEnv` (entry point
                         :func:`env.backgammon.make_env`, which adds the env
                         checker :class:`env.backgammon.RecoveringEnvChecker`), with the native
                         vector env :class:`env.vector.BackgammonVectorEnv`
                         as its ``vector_entry_point``
=======================  =====================================================

::

    import gymnasium as gym
    import nard_ai_env  # noqa: F401  (registers the ids; `import env` in a checkout)

    single = gym.make("nard/Backgammon-v0", action_mode="checker", opponent="random")
    cubeful = gym.make("nard/Backgammon-v0", opponent="self", cube=True)  # doubling cube, RULES.md §8
    batch = gym.make_vec("nard/Backgammon-v0", num_envs=256, vectorization_mode="vector_entry_point")

Spaces and the observation layout: :mod:`env.spaces`. The two-player PettingZoo
AEC environment is :mod:`env.aec` (``from env import aec; aec.env()``; needs
pettingzoo, which ``import env`` does not import).
"""

from gymnasium.envs.registration import register, registry

from .backgammon import BackgammonEnv
from .spaces import (
    CHECKER_OBS_SIZE,
    CUBE_ACTIONS,
    CUBE_OBS_UNITS,
    MAX_PLAYS,
    PHASE_DOUBLE,
    PHASE_MOVE,
    PHASE_TAKE,
    PLAY_OBS_SIZE,
)
from .vector import BackgammonVectorEnv

ENV_ID = "nard/Backgammon-v0"

if ENV_ID not in registry:
    # the entry points name this package as it was imported: nard_ai_env installed, env in a checkout
    # gym.make's env checker is env.backgammon.RecoveringEnvChecker, not gymnasium's
    # PassiveEnvChecker, whose bookkeeping breaks every step after a refused first reset
    register(
        id=ENV_ID,
        entry_point=f"{__name__}.backgammon:make_env",
        vector_entry_point=f"{__name__}.vector:BackgammonVectorEnv",
        disable_env_checker=True,
    )

__all__ = [
    "BackgammonEnv",
    "BackgammonVectorEnv",
    "CHECKER_OBS_SIZE",
    "CUBE_ACTIONS",
    "CUBE_OBS_UNITS",
    "ENV_ID",
    "MAX_PLAYS",
    "PHASE_DOUBLE",
    "PHASE_MOVE",
    "PHASE_TAKE",
    "PLAY_OBS_SIZE",
]
