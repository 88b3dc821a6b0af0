"""Action and observation spaces of the backgammon environments, and the observation encoder.

Observation layout (float32, from the view of the side the observation is
for: the side to act, or at the end of a game the side the reward is for)
=========================================================================

==================  ==========================================================
units               meaning
==================  ==========================================================
``0 .. 197``        :data:`nard_ai.model.encoding.TD198` (``td198`` v1): TD-Gammon's
                    198 inputs of the board (in checker mode the board as it
                    stands after the checkers moved so far this turn)
``198 .. 203``      the turn's roll, larger die: one-hot, unit ``198 + d - 1``
``204 .. 209``      the turn's roll, smaller die: one-hot, unit ``204 + d - 1``
                    (a double sets the same face in both groups)
``210 .. 215``      checker mode only: dice not yet played this turn, unit
                    ``210 + d - 1`` = number of unplayed dice showing ``d``,
                    divided by 4 (a fresh 3-3 gives ``1.0`` at unit 212)
==================  ==========================================================

At the end of a game the dice units are 0.

With the cube (``cube=True``) six units follow the layout above (from unit
210 in play mode, 216 in checker mode; :func:`cube_units`):

==================  ==========================================================
offset              meaning
==================  ==========================================================
``+0``              ``log2(cube value) / 12`` (cube 1 gives 0, the largest
                    cube, :data:`nard_ai.cube.MAX_CUBE` = 4096, gives 1)
``+1 .. +3``        the cube's owner, one-hot: centred, the observed side,
                    the other side
``+4``              1 when the observed side decides whether to double (the
                    dice units are then 0: the roll is not thrown yet)
``+5``              1 when the observed side decides whether to take a double
==================  ==========================================================

Cube actions (``cube=True``) follow the move actions in the same
``Discrete`` space: with ``A`` move actions (``max_plays`` in play mode, 156
in checker mode), ``A + 0`` = no double (roll), ``A + 1`` = double,
``A + 2`` = take, ``A + 3`` = pass (:data:`CUBE_ACTIONS`,
:func:`cube_action_ids`).

``MAX_PLAYS``
=============
The ``"play"`` action is an index into the turn's sorted legal afterstates,
so ``Discrete(MAX_PLAYS)`` needs an upper bound on their number. A play's
afterstate is fixed by which checkers take which dice: a double's (up to)
four dice over 15 checkers, one checker taking any number of them, give at
most ``C(15 + 4 - 1, 4) = 3060`` plays (the bound GNU Backgammon's
``MAX_MOVES`` uses); a non-double's two dice give at most ``15 * 15``. So ``MAX_PLAYS = 3060`` is never exceeded. The
largest count observed (:func:`nard_ai.core.movegen.count_plays_batch`, all 21
rolls, standard rules; the Iranian variant only removes plays) was 1309 over
193,069 positions met in 2,000 random games and 1492 over 20,000 arbitrary
scattered positions, both with 1-1; the 1492 position is
:data:`MAX_PLAYS_OBSERVED_BOARD`.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from nard_ai.core.checker_moves import NUM_CHECKER_ACTIONS
from nard_ai.model.encoding import TD198

#: Proven upper bound on the number of distinct legal plays of one position (module docstring).
MAX_PLAYS = 3060
#: Largest number of legal plays observed in the empirical check (1-1, a scattered position).
MAX_PLAYS_OBSERVED = 1492
#: The position (mover's view) with :data:`MAX_PLAYS_OBSERVED` plays for the roll 1-1.
MAX_PLAYS_OBSERVED_BOARD = np.array(
    [0, -1, 1, 1, 1, 0, 1, 0, 1, -1, -2, 1, 1, 1, -1, 1, -1, 1, 1, 0, 1, 1, 1, 1, -6, 0], dtype=np.int8
)
MAX_PLAYS_OBSERVED_BOARD.setflags(write=False)

BOARD_UNITS = slice(0, TD198.size)
ROLL_HIGH_UNITS = slice(198, 204)
ROLL_LOW_UNITS = slice(204, 210)
DICE_LEFT_UNITS = slice(210, 216)
PLAY_OBS_SIZE = 210
CHECKER_OBS_SIZE = 216

ACTION_MODES = ("play", "checker")

#: The cube actions, in order after the move actions (module docstring).
CUBE_ACTIONS = ("roll", "double", "take", "pass")
NUM_CUBE_ACTIONS = len(CUBE_ACTIONS)
#: Observation units the cube adds (module docstring).
CUBE_OBS_UNITS = 6
#: ``log2`` of the largest cube (:data:`nard_ai.cube.MAX_CUBE` = 4096).
MAX_CUBE_LOG2 = 12

#: ``info["phase"]`` values with the cube: playing the roll (or the game is over), deciding a double, answering one.
PHASE_MOVE, PHASE_DOUBLE, PHASE_TAKE = 0, 1, 2


def _td198_high() -> np.ndarray:
    high = np.ones(TD198.size, dtype=np.float32)
    high[3:192:4] = (15 - 3) / 2  # the fourth unit of a point: (n - 3) / 2, n <= 15
    high[192:194] = 15 / 2  # checkers on the bar / 2
    return high


def observation_size(action_mode: str, cube: bool = False) -> int:
    """Units of one observation: 210 (play) or 216 (checker), plus :data:`CUBE_OBS_UNITS` with the cube."""
    return (PLAY_OBS_SIZE if action_mode == "play" else CHECKER_OBS_SIZE) + (CUBE_OBS_UNITS if cube else 0)


def observation_space(action_mode: str, cube: bool = False) -> spaces.Box:
    """The single-game observation space: ``Box(0, high, (210,) or (216,), float32)``, 6 units more with the cube."""
    size = observation_size(action_mode, cube)
    high = np.ones(size, dtype=np.float32)
    high[BOARD_UNITS] = _td198_high()
    return spaces.Box(low=np.zeros(size, dtype=np.float32), high=high, dtype=np.float32)


def num_move_actions(action_mode: str, max_plays: int = MAX_PLAYS) -> int:
    """Move actions: ``max_plays`` in play mode, 156 in checker mode."""
    return int(max_plays) if action_mode == "play" else NUM_CHECKER_ACTIONS


def action_space(action_mode: str, max_plays: int = MAX_PLAYS, cube: bool = False) -> spaces.Discrete:
    """``Discrete(max_plays)`` in play mode, ``Discrete(156)`` (``6 * source + die - 1``) in checker mode; 4 more with the cube."""
    return spaces.Discrete(num_move_actions(action_mode, max_plays) + (NUM_CUBE_ACTIONS if cube else 0))


def cube_action_ids(action_mode: str, max_plays: int = MAX_PLAYS) -> dict[str, int]:
    """The action of each cube decision: ``{"roll": A, "double": A + 1, "take": A + 2, "pass": A + 3}``, ``A`` the move actions."""
    base = num_move_actions(action_mode, max_plays)
    return {name: base + k for k, name in enumerate(CUBE_ACTIONS)}


def cube_units(value: np.ndarray, owner: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The cube units of a batch of observations (module docstring).

    Args:
        value: ``(N,)`` int cube values (powers of two, at most 4096).
        owner: ``(N,)`` int, 0 centred, 1 the observed side, 2 the other side.
        phase: ``(N,)`` int, :data:`PHASE_MOVE`, :data:`PHASE_DOUBLE` or :data:`PHASE_TAKE`.

    Returns:
        ``(N, 6)`` float32.
    """
    n = len(value)
    out = np.zeros((n, CUBE_OBS_UNITS), dtype=np.float32)
    rows = np.arange(n)
    out[:, 0] = np.log2(np.asarray(value, dtype=np.float64)) / MAX_CUBE_LOG2
    out[rows, 1 + np.asarray(owner, dtype=np.int64)] = 1.0
    phase = np.asarray(phase, dtype=np.int64)
    out[:, 4] = phase == PHASE_DOUBLE
    out[:, 5] = phase == PHASE_TAKE
    return out


def encode_observations(
    boards: np.ndarray, dice: np.ndarray, dice_left: np.ndarray | None, action_mode: str
) -> np.ndarray:
    """Observations of a batch of games (layout in the module docstring).

    Args:
        boards: ``(N, 26)`` int8 boards, each from the view of the side the
            observation is for.
        dice: ``(N, 2)`` int turn rolls, any order; rows of zeros (a finished
            game) leave the dice units at 0.
        dice_left: ``(N, 4)`` int unplayed dice (0 = none), checker mode only.
        action_mode: ``"play"`` or ``"checker"``.

    Returns:
        ``(N, 210)`` (play) or ``(N, 216)`` (checker) float32.
    """
    n = len(boards)
    size = PLAY_OBS_SIZE if action_mode == "play" else CHECKER_OBS_SIZE
    obs = np.zeros((n, size), dtype=np.float32)
    if n == 0:
        return obs
    obs[:, BOARD_UNITS] = TD198.encode(boards)
    dice = np.asarray(dice, dtype=np.int64)
    rows = np.arange(n)
    high, low = dice.max(axis=1), dice.min(axis=1)
    live = low > 0
    obs[rows[live], ROLL_HIGH_UNITS.start + high[live] - 1] = 1.0
    obs[rows[live], ROLL_LOW_UNITS.start + low[live] - 1] = 1.0
    if action_mode == "checker":
        left = np.asarray(dice_left, dtype=np.int64)
        for face in range(1, 7):
            obs[:, DICE_LEFT_UNITS.start + face - 1] = (left == face).sum(axis=1) / 4.0
    return obs
