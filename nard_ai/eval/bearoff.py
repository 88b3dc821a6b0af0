"""Exact(ish) bear-off probabilities from a one-sided bear-off database, as gnubg does.

What it covers
--------------
A *bear-off position* here is one where **both** sides have every checker still
in play inside their own home board (the mover on its points 1..6, the
opponent on its points 1..6 = our indices 24..19), nobody on the bar, and
neither side has borne off all 15 (the game is not over). There is no contact,
so each side's race is independent of the other's play.

The one-sided database
----------------------
One side's home-board positions (0..15 checkers on 6 points, the rest off) number
``C(21, 6) = 54,264``. For each, the database holds two distributions over the
number of rolls ``n = 0 .. MAX_ROLLS - 1`` that side still needs:

* ``race[i, n]``: P(the last checker is off with the ``n``-th roll), playing
  each roll to **minimise the expected number of rolls** to bear off;
* ``gammon[i, n]``: P(the *first* checker is off with the ``n``-th roll),
  playing each roll to minimise the expected number of rolls to that (saving the
  gammon). Only a position with all 15 checkers on the board has such a roll;
  any other position has already borne one off (``gammon[i, 0] = 1``).

Both are computed by dynamic programming in order of the position index (every
play moves checkers down or off, so the index of the result is smaller): for
each of the 21 rolls, the legal plays come from
:func:`nard_ai.core.movegen.legal_plays_batch` (standard rules, RULES.md §3-5), and
the play whose result has the smallest expected rolls is taken; then
``race[i, n] = sum over rolls of P(roll) * race[best(roll), n - 1]``. This is the
method of gnubg's one-sided database (``makebearoff.c``, ``BearOff``); gnubg
rounds its distributions to 16 bits, we keep float64 while building and store
float32. ``MAX_ROLLS = 32``: the longest bear-offs (15 checkers with 88 to 90
pips, piled on the 6-point) can need 30 rolls (a 2-1 every roll moves 3 pips),
with probability about 1e-34; the build checks that no probability falls off
the end.

Two-sided probabilities (gnubg's ``BearoffEvalOneSided``)
---------------------------------------------------------
The mover is on roll, so its ``n``-th roll comes before the opponent's ``n``-th.
With ``P_me``/``P_opp`` the race distributions and ``G_me``/``G_opp`` the
first-checker-off distributions:

* win: the mover needs no more rolls than the opponent,
  ``P(win) = sum_n P_me(n) * P_opp(>= n)``;
* win gammon: the mover finishes with its ``n``-th roll, when the opponent has
  rolled ``n - 1`` times, before the opponent's first checker is off,
  ``sum_n P_me(n) * G_opp(>= n)`` (only when the opponent has 15 checkers on the board);
* lose gammon: the opponent finishes with its ``m``-th roll, after the mover's
  ``m``-th, ``sum_m P_opp(m) * G_me(> m)`` (only when the mover has 15 on the board);
* backgammons: 0, since a backgammon needs a loser's checker on the bar or in
  the winner's home board (RULES.md §6), impossible here.

Each side's strategy is one-sided (fastest bear-off, or fastest first checker
off), not the two-sided optimum, so this is exact only up to that (gnubg's
one-sided evaluator makes the same approximation).

The data file
-------------
Built on first use (about 4 s on one loaded core once numba's kernels are
compiled; about 30 s on a fresh checkout, compiling the move generator) and cached as
``$XDG_CACHE_HOME/nard_ai/bearoff-v1.npz`` (``~/.cache/nard_ai/`` when unset),
written atomically (temporary file, then ``os.replace``). Loading checks the
format version, shapes and a SHA-256 digest of the arrays; a missing, stale or
corrupt file is rebuilt. An unwritable cache directory only costs the rebuild
on every new process (a warning is logged).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import threading
import time
from dataclasses import dataclass
from math import comb
from pathlib import Path

import numpy as np
from numba import njit

from nard_ai.core.board import BOARD_SIZE, NUM_CHECKERS, validate_board
from nard_ai.core.classes import is_bearoff, is_bearoff_row, is_bearoff_unchecked  # is_bearoff re-exported
from nard_ai.core.dice import ROLL_WEIGHTS, ROLLS_21
from nard_ai.core.movegen import legal_plays_batch
from nard_ai.model.atomic import atomic_write_bytes

__all__ = [
    "BEAROFF_VERSION",
    "MAX_ROLLS",
    "NUM_POSITIONS",
    "BearoffDatabase",
    "bearoff_probs",
    "bearoff_probs_unchecked",
    "build_database",
    "cache_path",
    "get_database",
    "is_bearoff",
    "load_or_build",
    "opponent_finishes_next_roll",
    "position_index",
]

log = logging.getLogger(__name__)

#: Format version of the cached file; bump it whenever the method or layout changes.
BEAROFF_VERSION = 1
#: Points of the home board covered (gnubg's one-sided database with 6 points).
NUM_BEAROFF_POINTS = 6
#: Positions of one side: 0..15 checkers on 6 points, ``C(15 + 6, 6)``.
NUM_POSITIONS = comb(NUM_CHECKERS + NUM_BEAROFF_POINTS, NUM_BEAROFF_POINTS)
#: Columns of the distributions: ``n = 0 .. MAX_ROLLS - 1`` rolls.
MAX_ROLLS = 32


# Binomial coefficients C(b, k) for the position index, b = 0..20, k = 0..6.
_BINOM = np.array([[comb(b, k) for k in range(NUM_BEAROFF_POINTS + 1)] for b in range(21)], dtype=np.int64)

# Where the opponent's dummy checker sits while the plays are generated: the
# opponent's 1-point, out of reach of checkers on the mover's points 1..6. The
# generator refuses a board without any opposing checker (a finished game).
_DUMMY_OPPONENT_INDEX = 24

# Positions per call of the play generator while building (21 rolls each).
_BUILD_CHUNK = 4096


# --------------------------------------------------------------------------
# The position index
# --------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _index_of(c6, c5, c4, c3, c2, c1, binom):
    # Combinatorial number system over the 6 "bars" of a stars-and-bars
    # picture: bar k (1..6) sits at b_k = (checkers on points 6..7-k) + k - 1,
    # a strictly increasing 6-subset of 0..20, ranked as sum_k C(b_k, k).
    # Moving a checker down or off lowers some b_k, so every play lowers the index.
    t = c6
    r = binom[t, 1]
    t += c5
    r += binom[t + 1, 2]
    t += c4
    r += binom[t + 2, 3]
    t += c3
    r += binom[t + 3, 4]
    t += c2
    r += binom[t + 4, 5]
    t += c1
    r += binom[t + 5, 6]
    return r


@njit(cache=True, nogil=True)
def _index_kernel(counts, binom, out):
    for i in range(counts.shape[0]):
        c = counts[i]
        out[i] = _index_of(c[5], c[4], c[3], c[2], c[1], c[0], binom)


def position_index(counts: np.ndarray) -> np.ndarray:
    """Index of one side's home-board positions in the database.

    Args:
        counts: ``(N, 6)`` or ``(6,)`` integers, that side's checkers on its
            points 1..6 (column ``p - 1`` = point ``p``); 0..15 in all.

    Returns:
        ``(N,)`` int64 (or an ``int`` for one position) in ``0 .. NUM_POSITIONS - 1``;
        0 is the empty board (all checkers off). A play never raises the index.

    Raises:
        ValueError: on a wrong shape, a negative count or more than 15 checkers.
    """
    arr = np.asarray(counts)
    if arr.shape[-1:] != (NUM_BEAROFF_POINTS,) or arr.ndim not in (1, 2) or arr.dtype.kind not in "iu":
        raise ValueError(f"counts must be integers of shape (6,) or (N, 6), got {arr.dtype} {arr.shape}")
    rows = arr.reshape(-1, NUM_BEAROFF_POINTS).astype(np.int64)
    if (rows < 0).any():
        raise ValueError("checker counts must be >= 0")
    if (rows.sum(axis=1) > NUM_CHECKERS).any():
        raise ValueError(f"a side has at most {NUM_CHECKERS} checkers, got {int(rows.sum(axis=1).max())}")
    out = np.empty(len(rows), dtype=np.int64)
    _index_kernel(rows, _BINOM, out)
    return int(out[0]) if arr.ndim == 1 else out


def _all_positions() -> np.ndarray:
    """``(NUM_POSITIONS, 6)`` int64 checker counts on points 1..6, row ``i`` = position index ``i``."""
    from itertools import combinations

    bars = np.array(list(combinations(range(NUM_CHECKERS + NUM_BEAROFF_POINTS), NUM_BEAROFF_POINTS)))
    gaps = np.diff(np.concatenate([np.full((len(bars), 1), -1), bars], axis=1), axis=1) - 1
    counts = gaps[:, ::-1].copy()  # gaps run from point 6 down to point 1
    out = np.empty_like(counts)
    out[position_index(counts)] = counts
    return out


# --------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _solve(pair_start, successors, checkers, weights, race, gammon, mean_race, mean_gammon):
    """Fill the distributions in index order; returns False if mass would fall past the last column."""
    n_pos, cap = race.shape
    n_rolls = weights.shape[0]
    race[0, 0] = 1.0
    gammon[0, 0] = 1.0
    for i in range(1, n_pos):
        full = checkers[i] == 15
        if not full:
            gammon[i, 0] = 1.0  # a checker is already off
        m_race = 1.0
        m_gammon = 1.0
        for r in range(n_rolls):
            w = weights[r]
            lo = pair_start[i * n_rolls + r]
            hi = pair_start[i * n_rolls + r + 1]
            best = successors[lo]
            best_g = best
            for k in range(lo + 1, hi):
                s = successors[k]
                # Ties go to the lower index, so the result does not depend on generator order.
                if mean_race[s] < mean_race[best] or (mean_race[s] == mean_race[best] and s < best):
                    best = s
                if mean_gammon[s] < mean_gammon[best_g] or (
                    mean_gammon[s] == mean_gammon[best_g] and s < best_g
                ):
                    best_g = s
            if race[best, cap - 1] != 0.0:
                return False
            for n in range(cap - 1):
                race[i, n + 1] += w * race[best, n]
            m_race += w * mean_race[best]
            if full:
                for n in range(cap - 1):
                    gammon[i, n + 1] += w * gammon[best_g, n]
                m_gammon += w * mean_gammon[best_g]
        mean_race[i] = m_race
        mean_gammon[i] = m_gammon if full else 0.0
    return True


def _successors(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The legal plays of every position and roll, as indices.

    Returns:
        ``(pair_start, successors)``: ``(NUM_POSITIONS * 21 + 1,)`` int64 and
        ``(M,)`` int64; the plays of position ``i`` with roll ``r`` are
        ``successors[pair_start[21 i + r] : pair_start[21 i + r + 1]]`` (none for
        position 0, which has nothing left to play).
    """
    n_rolls = len(ROLLS_21)
    owners, succ = [], []
    for start in range(1, len(positions), _BUILD_CHUNK):
        chunk = positions[start : start + _BUILD_CHUNK]
        boards = np.zeros((len(chunk), BOARD_SIZE), dtype=np.int8)
        boards[:, 1:7] = chunk
        boards[:, _DUMMY_OPPONENT_INDEX] = -1
        afterstates, owner = legal_plays_batch(
            np.repeat(boards, n_rolls, axis=0), np.tile(ROLLS_21, (len(chunk), 1)), sort=False
        )
        rest = np.delete(afterstates, np.s_[1:7], axis=1)
        if (rest != boards[0, np.r_[0, 7:BOARD_SIZE]]).any() or (afterstates[:, 1:7] < 0).any():
            raise RuntimeError("bear-off play generation left the home board (internal error)")
        succ.append(position_index(afterstates[:, 1:7]))
        owners.append(owner + start * n_rolls)
    owner_all = np.concatenate(owners)
    pair_start = np.searchsorted(owner_all, np.arange(len(positions) * n_rolls + 1)).astype(np.int64)
    return pair_start, np.concatenate(succ)


@dataclass(frozen=True)
class BearoffDatabase:
    """gnubg-style one-sided bear-off database (see the module docstring).

    Attributes:
        race: ``(NUM_POSITIONS, MAX_ROLLS)`` float32, ``race[i, n]`` = P(all
            checkers off with exactly the ``n``-th roll) from position ``i``
            (:func:`position_index`), bearing off as fast as possible on average.
        gammon: ``(NUM_POSITIONS, MAX_ROLLS)`` float32, ``gammon[i, n]`` = P(the
            first checker off with exactly the ``n``-th roll); ``gammon[i, 0] = 1``
            unless the position has all 15 checkers on the board.
    """

    race: np.ndarray
    gammon: np.ndarray

    def mean_rolls(self, index: np.ndarray | int) -> np.ndarray:
        """Expected rolls to bear off everything, ``(N,)`` float64 (or a float), for position indices."""
        return self.race[index].astype(np.float64) @ np.arange(MAX_ROLLS, dtype=np.float64)

    def digest(self) -> str:
        """SHA-256 hex digest of the version, the shapes and the bytes of both arrays."""
        h = hashlib.sha256(f"nard_ai-bearoff-v{BEAROFF_VERSION}:{self.race.shape}".encode())
        h.update(np.ascontiguousarray(self.race, dtype=np.float32).tobytes())
        h.update(np.ascontiguousarray(self.gammon, dtype=np.float32).tobytes())
        return h.hexdigest()


def build_database() -> BearoffDatabase:
    """Compute the one-sided database from scratch (no file involved).

    Returns:
        A :class:`BearoffDatabase`.

    Raises:
        RuntimeError: if a distribution would need more than ``MAX_ROLLS - 1``
            rolls (a bug: the longest bear-off needs 30).
    """
    started = time.perf_counter()
    positions = _all_positions()
    pair_start, successors = _successors(positions)
    race = np.zeros((NUM_POSITIONS, MAX_ROLLS), dtype=np.float64)
    gammon = np.zeros_like(race)
    mean_race = np.zeros(NUM_POSITIONS)
    mean_gammon = np.zeros(NUM_POSITIONS)
    checkers = positions.sum(axis=1)
    if not _solve(pair_start, successors, checkers, ROLL_WEIGHTS, race, gammon, mean_race, mean_gammon):
        raise RuntimeError(f"a bear-off needs more than {MAX_ROLLS - 1} rolls; raise MAX_ROLLS")
    log.info(
        "built the bear-off database: %d positions, %d plays, %.1f s",
        NUM_POSITIONS,
        len(successors),
        time.perf_counter() - started,
    )
    return BearoffDatabase(race.astype(np.float32), gammon.astype(np.float32))


# --------------------------------------------------------------------------
# The cache file
# --------------------------------------------------------------------------


def cache_path() -> Path:
    """``$XDG_CACHE_HOME/nard_ai/bearoff-v{BEAROFF_VERSION}.npz`` (``~/.cache`` when unset or not absolute)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "nard_ai" / f"bearoff-v{BEAROFF_VERSION}.npz"


def _read(path: Path) -> BearoffDatabase | None:
    """The database in ``path``, or ``None`` if it is missing, unreadable, stale or corrupt."""
    try:
        with np.load(path, allow_pickle=False) as data:
            version = int(data["version"])
            digest = str(data["digest"])
            db = BearoffDatabase(np.array(data["race"]), np.array(data["gammon"]))
    except FileNotFoundError:
        return None
    except Exception as exc:  # a truncated or foreign file can fail in many ways
        log.warning("ignoring unreadable bear-off database %s: %s", path, exc)
        return None
    shape = (NUM_POSITIONS, MAX_ROLLS)
    if version != BEAROFF_VERSION or db.race.shape != shape or db.gammon.shape != shape:
        log.warning("ignoring bear-off database %s: wrong version or shape", path)
        return None
    if db.race.dtype != np.float32 or db.gammon.dtype != np.float32 or db.digest() != digest:
        log.warning("ignoring bear-off database %s: digest mismatch (corrupt file)", path)
        return None
    return db


def _write(db: BearoffDatabase, path: Path) -> None:
    """Write ``db`` to ``path`` atomically (:func:`nard_ai.model.atomic.atomic_write_bytes`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer, version=np.int64(BEAROFF_VERSION), digest=np.str_(db.digest()), race=db.race, gammon=db.gammon
    )
    atomic_write_bytes(path, buffer.getvalue())


def load_or_build(path: str | os.PathLike | None = None) -> BearoffDatabase:
    """Load the database from ``path`` (default :func:`cache_path`), building and saving it if needed.

    A missing, stale or corrupt file is rebuilt and replaced. If the file
    cannot be written, the freshly built database is still returned (and a
    warning logged).
    """
    path = Path(path) if path is not None else cache_path()
    db = _read(path)
    if db is not None:
        return db
    db = build_database()
    try:
        _write(db, path)
    except OSError as exc:
        log.warning("could not save the bear-off database to %s: %s", path, exc)
    return db


_DATABASE: BearoffDatabase | None = None
_TABLES: tuple[np.ndarray, ...] | None = None
_LOCK = threading.Lock()


def get_database() -> BearoffDatabase:
    """The process's database, loaded (or built) on first use (thread-safe)."""
    _tables()
    return _DATABASE  # set together with the tables


def _tables() -> tuple[np.ndarray, ...]:
    """``(race, race survival, gammon survival)`` float64 lookup tables, built once per process.

    ``race_surv[i, n] = P(race >= n)`` and ``gammon_surv[i, n] = P(first off >= n)``,
    each with one extra column (``n = MAX_ROLLS``, always 0).
    """
    global _DATABASE, _TABLES
    if _TABLES is None:
        with _LOCK:
            if _TABLES is None:
                db = load_or_build()
                race = db.race.astype(np.float64)
                gammon = db.gammon.astype(np.float64)
                zeros = np.zeros((NUM_POSITIONS, 1))
                race_surv = np.concatenate([np.cumsum(race[:, ::-1], axis=1)[:, ::-1], zeros], axis=1)
                gammon_surv = np.concatenate([np.cumsum(gammon[:, ::-1], axis=1)[:, ::-1], zeros], axis=1)
                _DATABASE = db
                _TABLES = (race, race_surv, gammon_surv)
    return _TABLES


# --------------------------------------------------------------------------
# Two-sided probabilities
# --------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _probs_kernel(boards, binom, race, race_surv, gammon_surv, out):
    cap = race.shape[1]
    for i in range(boards.shape[0]):
        b = boards[i]
        me = _index_of(b[6], b[5], b[4], b[3], b[2], b[1], binom)
        # The opponent's point q is index 25 - q.
        opp = _index_of(-b[19], -b[20], -b[21], -b[22], -b[23], -b[24], binom)
        my_on = b[1] + b[2] + b[3] + b[4] + b[5] + b[6]
        opp_on = -(b[19] + b[20] + b[21] + b[22] + b[23] + b[24])
        win = 0.0
        win_gammon = 0.0
        lose_gammon = 0.0
        for n in range(1, cap):
            # The mover's n-th roll comes before the opponent's n-th.
            win += race[me, n] * race_surv[opp, n]
            if opp_on == NUM_CHECKERS:
                win_gammon += race[me, n] * gammon_surv[opp, n]
            if my_on == NUM_CHECKERS:
                lose_gammon += race[opp, n] * gammon_surv[me, n + 1]
        out[i, 0] = win
        out[i, 1] = win_gammon
        out[i, 2] = 0.0
        out[i, 3] = lose_gammon
        out[i, 4] = 0.0


def bearoff_probs_unchecked(boards: np.ndarray) -> np.ndarray:
    """:func:`bearoff_probs` without its checks, for search's hot path.

    Args:
        boards: ``(N, 26)`` C-contiguous int8 boards, each already known to be
            a valid bear-off position (:func:`is_bearoff`); anything else
            gives meaningless numbers.

    Returns:
        ``(N, 5)`` float32, as :func:`bearoff_probs`.
    """
    race, race_surv, gammon_surv = _tables()
    out = np.empty((len(boards), 5), dtype=np.float64)
    _probs_kernel(boards, _BINOM, race, race_surv, gammon_surv, out)
    return out.astype(np.float32)


@njit(cache=True, nogil=True)
def _last_roll_kernel(boards, binom, race, out):
    for i in range(boards.shape[0]):
        b = boards[i]
        if not is_bearoff_row(b):
            out[i] = False
            continue
        opp = _index_of(-b[19], -b[20], -b[21], -b[22], -b[23], -b[24], binom)
        out[i] = race[opp, 0] + race[opp, 1] >= 1.0 - 1e-12


def opponent_finishes_next_roll(boards: np.ndarray) -> np.ndarray:
    """Which boards are a *last roll*: a bear-off position whose opponent bears off all its checkers next roll.

    With any of the 36 rolls, by the one-sided database. The side on roll then
    wins only by bearing off now, and the cube is dead (no side will hold it
    with a game still to play), as gnubg's two-sided database and any
    last-roll analysis treat it.

    Args:
        boards: ``(N, 26)`` int8 valid boards, the side on roll's view.

    Returns:
        ``(N,)`` bool; False for every board that is not a bear-off position
        (:func:`is_bearoff`).

    Raises:
        ValueError: on an invalid board.
    """
    batch, _ = _as_batch(np.asarray(boards).reshape(-1, BOARD_SIZE))
    race, _, _ = _tables()
    out = np.empty(len(batch), dtype=np.bool_)
    _last_roll_kernel(batch, _BINOM, race, out)
    return out


def _as_batch(boards: np.ndarray) -> tuple[np.ndarray, bool]:
    arr = validate_board(boards)
    return (arr[None], True) if arr.ndim == 1 else (arr, False)


def bearoff_probs(boards: np.ndarray) -> np.ndarray:
    """gnubg's 5 probabilities of bear-off positions from the one-sided database.

    The first call loads the database from the cache file, or builds it (see
    the module docstring).

    Args:
        boards: ``(N, 26)`` or ``(26,)`` int8 boards, the side on roll's view,
            each one a bear-off position (:func:`is_bearoff`).

    Returns:
        ``(N, 5)`` float32 (``(5,)`` for one board), for the side on roll: win,
        win-gammon, win-backgammon (0), lose-gammon, lose-backgammon (0),
        cubeless, as in :mod:`nard_ai.model.network`. Formulas: the module docstring.

    Raises:
        ValueError: on an invalid board, or a board that is not a bear-off
            position (use :func:`is_bearoff` to select them).
    """
    batch, single = _as_batch(boards)
    covered = is_bearoff_unchecked(batch)  # batch is validated: _as_batch
    if not covered.all():
        raise ValueError(
            f"board {int(np.argmin(covered))} is not a bear-off position (both sides' checkers all in their "
            "home boards, none on the bar, game not over); select them with is_bearoff"
        )
    race, race_surv, gammon_surv = _tables()
    out = np.empty((len(batch), 5), dtype=np.float64)
    _probs_kernel(batch, _BINOM, race, race_surv, gammon_surv, out)
    out = out.astype(np.float32)
    return out[0] if single else out
