"""Position classes: race or contact, bear-off, crashed, gnubg's ``ClassifyPosition``, in one place.

Every board here is ``(26,)`` or ``(N, 26)`` int8 in the layout of
:mod:`nard_ai.core.board`, seen from its **side on roll** (the "mover":
positive counts, its points 1..24 at indices 1..24, its bar at 25; the
opponent negative, its bar at index 0 and its point ``q`` at index
``25 - q``). The class of a position is a fact of the board alone, so the
layers above (the encoders' race unit, the evaluators' choice of race net and
bear-off database, the cube's efficiency, the training sets' strata) all ask
this module.

The classes
-----------
* **race** (no contact, :func:`race_flags`): the mover's rearmost checker
  (the highest index holding one, its bar being 25) is below the opponent's
  rearmost (the lowest index holding one, its bar being 0), so no checker can
  meet another again. gnubg writes the same test as ``nBack + nOppBack <= 22``
  (``eval.c``, ``ClassifyPosition``) in its own numbering. :func:`has_contact`
  is its negation. Contact is symmetric, so either side's view gives the same
  answer.
* **bear-off** (:func:`is_bearoff`): both sides have every checker still in
  play inside their own home board (the mover on its points 1..6, the
  opponent on its points 1..6 = indices 24..19), nobody on the bar, and
  neither side has borne off all 15. The range of the one-sided bear-off
  database (:mod:`nard_ai.eval.bearoff`; gnubg's ``gnubg_os0.bd`` with 15
  checkers on 6 points, its ``CLASS_BEAROFF1``).
* **crashed** (:func:`crashed_sides`): gnubg's test for one side, in that
  side's own numbering, with ``tot`` its checkers not borne off (points and
  bar), ``a1`` and ``a2`` its checkers on its 1- and 2-points and ``N = 6``
  (gnubg's "crashed edge"): crashed when ``tot <= N``; or, if ``a1 > 1``,
  when ``tot <= N + a1`` or (``a2 > 1`` and ``1 + tot - (a1 + a2) <= N``);
  or, if ``a1 <= 1``, when ``tot <= N + a2 - 1``. (A side whose checkers not
  piled deep on its lowest points number six or fewer has crashed its board.)
* :func:`classify_positions` (gnubg ``ClassifyPosition``): ``over`` when a
  side has borne off all 15; with contact, ``crashed`` if **either** side is
  crashed, else ``contact``; without contact, ``bearoff`` as above, else
  ``race``. Class numbers :data:`OVER` .. :data:`CONTACT`, names in
  :data:`CLASS_NAMES`.

The per-board tests :func:`race_row` and :func:`is_bearoff_row` are compiled
and inlined (``inline="always"``) into the kernels above that test one board
at a time (the network evaluator's leaf loop, the bear-off database); those
callers are listed in ``tests/test_architecture.py`` (``CROSS_FILE_KERNELS``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nard_ai.core.board import BOARD_SIZE, validate_board

__all__ = [
    "CLASS_NAMES",
    "OVER",
    "BEAROFF",
    "RACE",
    "CRASHED",
    "CONTACT",
    "CRASHED_EDGE",
    "race_row",
    "is_bearoff_row",
    "race_flags",
    "has_contact",
    "is_bearoff",
    "is_bearoff_unchecked",
    "side_crashed",
    "crashed_sides",
    "crashed_any",
    "classify_positions",
]

OVER, BEAROFF, RACE, CRASHED, CONTACT = range(5)
CLASS_NAMES = ("over", "bearoff", "race", "crashed", "contact")
"""Class names by class number (:func:`classify_positions`)."""

CRASHED_EDGE = 6
"""gnubg's ``N`` of the crashed test (module docstring, "crashed")."""


@njit(cache=True, inline="always")
def race_row(b) -> bool:
    """True when the ``(26,)`` board ``b`` has no contact (module docstring, "race")."""
    my_rear = -1
    for p in range(BOARD_SIZE - 1, -1, -1):
        if b[p] > 0:
            my_rear = p
            break
    opp_rear = BOARD_SIZE
    for q in range(BOARD_SIZE):
        if b[q] < 0:
            opp_rear = q
            break
    return my_rear < opp_rear


@njit(cache=True, inline="always")  # per board in the evaluator: no call, no reference counts (52 -> 34 ns)
def is_bearoff_row(b) -> bool:
    """True when the ``(26,)`` valid board ``b`` is a bear-off position (module docstring, "bear-off")."""
    mine = 0
    theirs = 0
    for j in range(BOARD_SIZE):
        v = b[j]
        if v > 0:
            mine += v
            if j > 6:  # the mover's checker outside its points 1..6 (25 = its bar)
                return False
        elif v < 0:
            theirs -= v
            if j < 19:  # the opponent's checker outside its points 1..6 (0 = its bar)
                return False
    return mine > 0 and theirs > 0


@njit(cache=True, nogil=True)
def _race_kernel(boards, out):
    for i in range(boards.shape[0]):
        out[i] = race_row(boards[i])


@njit(cache=True, nogil=True)
def _is_bearoff_kernel(boards, out):
    for i in range(boards.shape[0]):
        out[i] = is_bearoff_row(boards[i])


def race_flags(boards: np.ndarray) -> np.ndarray:
    """Which boards are races (no contact), from the boards alone (module docstring, "race").

    The ``rich`` encoder's unit 220 and the evaluators' choice of race net.

    Args:
        boards: ``(N, 26)`` (or ``(26,)``) int8 boards, either side's view
            (contact is symmetric). Not validated: the hot path's boards are
            valid by construction.

    Returns:
        ``(N,)`` bool: the mover's rearmost checker (highest index holding
        one, its bar being 25) is below the opponent's rearmost (lowest index
        holding one, its bar being 0).
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
    out = np.empty(len(boards), dtype=np.bool_)
    _race_kernel(boards, out)
    return out


def has_contact(boards: np.ndarray) -> np.ndarray:
    """Whether any mover checker still has an opposing checker in front of it: ``~race_flags(boards)``.

    Args:
        boards: ``(N, 26)`` (or ``(26,)``) int8, either side's view.

    Returns:
        ``(N,)`` bool.
    """
    return ~race_flags(boards)


def is_bearoff(boards: np.ndarray) -> np.ndarray | bool:
    """Which boards the one-sided bear-off database covers (module docstring, "bear-off").

    Args:
        boards: ``(N, 26)`` or ``(26,)`` int8 boards, the side on roll's view.

    Returns:
        ``(N,)`` bool (a ``bool`` for one board): every mover checker on its
        points 1..6, every opponent checker on the opponent's points 1..6
        (indices 19..24), no checker on either bar, and both sides with at
        least one checker left (the game is not over).

    Raises:
        ValueError: on an invalid board (see :func:`nard_ai.core.board.validate_board`).
    """
    arr = validate_board(boards)
    single = arr.ndim == 1
    out = is_bearoff_unchecked(arr[None] if single else arr)
    return bool(out[0]) if single else out


def is_bearoff_unchecked(boards: np.ndarray) -> np.ndarray:
    """:func:`is_bearoff` of ``(N, 26)`` boards already validated (no second check): ``(N,)`` bool."""
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
    out = np.empty(len(boards), dtype=np.bool_)
    _is_bearoff_kernel(boards, out)
    return out


def side_crashed(tot, a1, a2):
    """gnubg's crashed test for one side (gnubg ``eval.c`` ``ClassifyPosition``, ``N`` =
    :data:`CRASHED_EDGE`), elementwise.

    Args:
        tot: that side's checkers left in play (on the board or the bar).
        a1, a2: its checkers on its own 1- and 2-points.

    Any arrays with elementwise comparison and ``&``, ``|``, ``~`` on their booleans (numpy
    integers here; :func:`nard_ai.model.network.route_rows` passes torch float tensors of whole
    numbers, for the ONNX graph).

    Returns:
        Booleans of the arguments' shape: that side is crashed.
    """
    n = CRASHED_EDGE
    deep = a1 > 1
    return (
        (tot <= n)
        | (deep & ((tot <= n + a1) | ((a2 > 1) & (1 + tot - (a1 + a2) <= n))))
        | (~deep & (tot <= n + a2 - 1))
    )


@njit(cache=True, nogil=True)
def _crashed_any_kernel(boards, out):
    # side_crashed of both sides, per board, in one pass (crashed_any)
    for i in range(boards.shape[0]):
        b = boards[i]
        mine, theirs = 0, 0
        for j in range(BOARD_SIZE):
            if b[j] > 0:
                mine += b[j]
            else:
                theirs -= b[j]
        crashed = False
        for tot, a1, a2 in ((mine, max(b[1], 0), max(b[2], 0)), (theirs, max(-b[24], 0), max(-b[23], 0))):
            if a1 > 1:
                hit = tot <= CRASHED_EDGE + a1 or (a2 > 1 and 1 + tot - (a1 + a2) <= CRASHED_EDGE)
            else:
                hit = tot <= CRASHED_EDGE + a2 - 1
            crashed = crashed or tot <= CRASHED_EDGE or hit
        out[i] = crashed


def crashed_any(boards: np.ndarray) -> np.ndarray:
    """``crashed_sides(boards).any(axis=1)`` compiled (search's routing to a crashed net): ``(N,)`` bool.

    Args:
        boards: ``(N, 26)`` int8 valid boards, side on roll's view; not validated (the hot path's
            boards are valid by construction).
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
    out = np.empty(len(boards), dtype=np.bool_)
    _crashed_any_kernel(boards, out)
    return out


def crashed_sides(boards: np.ndarray) -> np.ndarray:
    """gnubg's crashed test for each side (module docstring, "crashed"), whatever the contact.

    Args:
        boards: ``(N, 26)`` (or ``(26,)``) int8 valid boards, side on roll's view.

    Returns:
        ``(N, 2)`` bool: ``[:, 0]`` the side on roll crashed, ``[:, 1]`` its opponent.
    """
    b = np.asarray(boards, dtype=np.int64).reshape(-1, BOARD_SIZE)
    mine = np.clip(b, 0, None)
    theirs = np.clip(-b, 0, None)
    me = side_crashed(mine.sum(axis=1), mine[:, 1], mine[:, 2])
    # the opponent's 1- and 2-points are the mover's indices 24 and 23
    opp = side_crashed(theirs.sum(axis=1), theirs[:, 24], theirs[:, 23])
    return np.stack([me, opp], axis=1)


def classify_positions(boards: np.ndarray) -> np.ndarray:
    """gnubg's ``ClassifyPosition`` of boards (module docstring, "The classes").

    Args:
        boards: ``(N, 26)`` (or ``(26,)``) integer boards, side on roll's view.

    Returns:
        ``(N,)`` int8 class numbers (:data:`OVER` .. :data:`CONTACT`, names in :data:`CLASS_NAMES`).

    Raises:
        ValueError: on an invalid board (:func:`nard_ai.core.board.validate_board`).
    """
    b = validate_board(boards).reshape(-1, BOARD_SIZE)
    out = np.full(len(b), RACE, dtype=np.int8)
    over = ~(b > 0).any(axis=1) | ~(b < 0).any(axis=1)
    contact = has_contact(b) & ~over
    crashed = crashed_sides(b).any(axis=1)
    out[contact] = np.where(crashed[contact], CRASHED, CONTACT)
    race = ~contact & ~over
    if race.any():
        bo = np.zeros(len(b), dtype=bool)
        bo[race] = is_bearoff(b[race])
        out[bo] = BEAROFF
    out[over] = OVER
    return out
