"""The lockstep engine of the game-playing drivers: slots of games, one ply of all of them at a time.

A driver that plays many games at once keeps them in the slots of a :class:`Lockstep`:
each slot holds one game's board (the side on roll's view), the seat on roll, the plies
played and whether it runs. One step of the driver is: pick the running slots that move
now, roll their dice, let the agents choose their plays for the whole batch at once
(:func:`choose_by_side`: one ``choose_plays`` call per agent), and hand the afterstates to
:meth:`Lockstep.play`, which counts the ply, enforces :data:`MAX_PLIES`, and ends the
turns by the core's one rule (:func:`nard_ai.core.game.end_turns`, also the core's
:func:`nard_ai.core.game.step`'s): it finds the games that ended (the mover has borne off
every checker), scores them (``+-1/2/3`` for the mover) and turns the other boards round
for the next side. The driver then records its finished games and refills the
freed slots (:meth:`Lockstep.start`).

Dice: :class:`KeyedDice` is the dice source of duplicate-dice play (matches and cube
sessions): each game reads a sequence named by a key (``(seed, pair)`` or ``(seed, pair,
game)``), in chunks of :data:`CHUNK` rolls (:func:`dice_chunk`), so both games of a
duplicate pair get the same rolls and a game's dice do not depend on the batch.
Rollouts use counter-based dice instead (:func:`nard_ai.play.rollout_games.rollout_dice`), and
self-play its own generator per shard.

The drivers on this engine: :mod:`nard_ai.play.arena` (cubeless matches),
:mod:`nard_ai.play.sessions` (money sessions and matches with the cube),
:mod:`nard_ai.play.rollout_games` (rollouts) and :mod:`nard_ai.play.selfplay` (TD self-play,
which chooses a ply's plays, trains, then applies them); above this layer, the exploring self-play of
:mod:`nard_ai.training.positions` (position databases) and the case sampling of
:mod:`nard_ai.reports.error_rate` run on it too.

Game loops that are not drivers keep their own, each for a reason:

* The Gymnasium environments' games (``env/_games.py``) are stepped by the caller, one
  action at a time, not by agents in lockstep. They hold a :class:`nard_ai.core.game.GameState`
  (cube value and owner, score, Crawford flag, all observed by the agent) and end each turn with
  :func:`nard_ai.core.game.step`, which applies the same turn-end rule as :meth:`Lockstep.play`
  (:func:`nard_ai.core.game.end_turns`) and scores with the same cube rule
  (:func:`nard_ai.core.game.finished_points`, which ``step`` applies, Jacoby included). Their dice are Gymnasium's
  contract: one generator per game, seeded by ``reset(seed=...)``, in a fixed per-game order, so
  a vector env and single envs seeded alike play the same games; a reset is the caller's slot
  refill; and an episode's length is bounded the Gymnasium way (``gymnasium.wrappers.TimeLimit``),
  not by :data:`MAX_PLIES`.
* The core's compiled random games (``core.movegen.random_games``) are one numba kernel (the rules
  benchmark's): a Python-level engine would be what that benchmark is there to leave out. They
  start from :func:`nard_ai.core.board.starting_board` (passed in) and score a game's end by
  RULES.md §6 in numba (the golden random games, ``tests/golden``, pin their results).
* The rules benchmark's "lockstep API" figure (``nard_ai.bench``) drives ``core.game``'s public
  ``new_games``/``step`` with uniform random plays: measuring that public API is its purpose.
* The terminal game (``interfaces.terminal``) and the web board (``interfaces.web``) play one game
  with a person, a move at a time as the person answers; they keep one ``GameState``-like record
  and score with :func:`nard_ai.core.game.finished_points`.
"""

from __future__ import annotations

import numpy as np

from nard_ai.core.board import BOARD_SIZE
from nard_ai.core.game import end_turns, opening_roll, roll_dice

__all__ = ["MAX_PLIES", "CHUNK", "Lockstep", "KeyedDice", "dice_chunk", "choose_by_side"]

MAX_PLIES = 5000
"""A safety net of every driver: a game past this many plies raises ``RuntimeError`` (real games
last well under 200; random play about 60)."""

CHUNK = 128
"""Rolls generated per game at a time by :func:`dice_chunk`."""


class Lockstep:
    """Slots of games in lockstep (module docstring).

    Attributes:
        boards: ``(S, 26)`` int8, each game's board from the side on roll's view.
        ply: ``(S,)`` int64, plies played in each game.
        turn: ``(S,)`` int64, the seat on roll (0 or 1).
        running: ``(S,)`` bool, the slots holding a game in progress.
        plies: plies played in all slots since the start (int).
        what: the word for a game in the :data:`MAX_PLIES` error (``"game"``, ``"rollout game"``).

    Args:
        slots: number of slots, at least 1.
        what: as the attribute.
    """

    def __init__(self, slots: int, what: str = "game") -> None:
        self.boards = np.zeros((slots, BOARD_SIZE), dtype=np.int8)
        self.ply = np.zeros(slots, dtype=np.int64)
        self.turn = np.zeros(slots, dtype=np.int64)
        self.running = np.zeros(slots, dtype=bool)
        self.plies = 0
        self.what = what

    def start(self, slots, board: np.ndarray, turn=0) -> None:
        """Start games in ``slots`` (an index or index array) at ``board`` with seat ``turn`` on roll."""
        self.boards[slots] = board
        self.ply[slots] = 0
        self.turn[slots] = turn
        self.running[slots] = True

    def play(self, idx: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply one play in each slot of ``idx``.

        Args:
            idx: ``(n,)`` int slot indices (running games).
            after: ``(n, 26)`` int8 afterstates, each from its mover's view.

        Returns:
            ``(finished, points)``: ``finished`` ``(n,)`` bool, the games the play ended (their
            slots stop running); ``points`` ``(finished.sum(),)`` int64, each ended game's result
            for the side that made the last play (+1, +2 gammon, +3 backgammon). The other
            games' boards are turned round for the next side, and their seat on roll changes.

        Raises:
            RuntimeError: when a game passes :data:`MAX_PLIES` plies.
        """
        self.plies += len(idx)
        self.ply[idx] += 1
        if len(idx) and self.ply[idx].max() > MAX_PLIES:
            raise RuntimeError(f"a {self.what} passed {MAX_PLIES} plies")
        finished, result, boards = end_turns(after)
        going = ~finished
        self.boards[idx[going]] = boards[going]
        self.turn[idx] ^= 1
        self.running[idx[finished]] = False
        return finished, result[finished]


def dice_chunk(key: tuple[int, ...], chunk: int) -> tuple[int, np.ndarray]:
    """The starting seat and :data:`CHUNK` rolls of one game's dice chunk (chunk 0 starts with the opening roll).

    ``key`` names the dice sequence: ``(seed, pair)`` for :mod:`nard_ai.play.arena`'s matches
    and money sessions, ``(seed, pair, game)`` for matches to N points in
    :mod:`nard_ai.play.sessions`; both games of a duplicate pair read the same key. Chunk ``c``
    is drawn from ``np.random.default_rng([*key, c])``.

    Returns:
        ``(starter, rolls)``: the seat (0 or 1) that won the opening roll (0 for a later chunk)
        and ``(CHUNK, 2)`` int8 rolls, the opening roll first in chunk 0.
    """
    rng = np.random.default_rng([*key, chunk])
    if chunk == 0:
        starter, first = opening_roll(1, rng)
        return int(starter[0]), np.concatenate([first, roll_dice(CHUNK - 1, rng)])
    return 0, roll_dice(CHUNK, rng)


class KeyedDice:
    """Each slot's dice from its game's key (:func:`dice_chunk`), :data:`CHUNK` rolls buffered per slot.

    Args:
        slots: number of slots.
    """

    def __init__(self, slots: int) -> None:
        self.buf = np.zeros((slots, CHUNK, 2), dtype=np.int8)
        self.keys: list[tuple[int, ...] | None] = [None] * slots

    def start(self, slot: int, key: tuple[int, ...]) -> int:
        """Begin the sequence ``key`` in ``slot``; returns the seat that starts (the opening roll's winner)."""
        starter, self.buf[slot] = dice_chunk(key, 0)
        self.keys[slot] = key
        return starter

    def roll(self, idx: np.ndarray, ply: np.ndarray) -> np.ndarray:
        """The roll of ply ``ply[k]`` of the game in slot ``idx[k]``: ``(n, 2)`` int8 (the opening roll at ply 0).

        Plies are read in order, one at a time per slot (a chunk is drawn when its first ply comes).
        """
        for k in np.flatnonzero((ply % CHUNK == 0) & (ply > 0)):
            s = idx[k]
            self.buf[s] = dice_chunk(self.keys[s], int(ply[k]) // CHUNK)[1]
        return self.buf[idx, ply % CHUNK]


def choose_by_side(groups, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
    """Every board's play, one ``choose_plays`` call per agent.

    Args:
        groups: ``(agent, mask)`` pairs, the masks ``(n,)`` bool and disjoint, together covering
            every row; an agent with an empty mask is not called.
        boards: ``(n, 26)`` int8 boards, the side on roll's view.
        dice: ``(n, 2)`` int8 rolls.

    Returns:
        ``(n, 26)`` int8 afterstates, each from its mover's view.
    """
    after = np.empty((len(boards), BOARD_SIZE), dtype=np.int8)
    for agent, mask in groups:
        if mask.any():
            after[mask] = agent.choose_plays(boards[mask], dice[mask])
    return after
