"""Named, versioned input encoders: boards -> float32 network inputs.

An encoder turns boards of :mod:`nard_ai.core.board` (``(N, 26)`` int8, each seen
from its **side on roll**, the "mover") into an ``(N, size)`` float32 array.
A network is trained for one encoder name *and* version; checkpoints record
both (:mod:`nard_ai.model.network`) and refuse to load against another. Changing
what an encoder computes therefore means a new version (or a new name), never
an edit in place.

Registered encoders
-------------------
=================  =======  ====  ==============================================
name               version  size  description
=================  =======  ====  ==============================================
``td198``          1        198   TD-Gammon's raw inputs (Tesauro 1992, 1995), below
``rich``           1        221   ``td198`` plus hand-made features per side, below
``expert``         1        271   ``rich`` plus gnubg's 25 contact/crashed-net
                                  inputs per side (:mod:`nard_ai.model.expert`), below
``expert_race``    1        312   ``expert`` plus 41 race inputs
                                  (:mod:`nard_ai.model.race_inputs`), below
=================  =======  ====  ==============================================

``td198`` v1 (TD-Gammon's 198 raw inputs, in the side-on-roll convention)
--------------------------------------------------------------------------
For ``n`` checkers of one side on a point, 4 units: ``n >= 1``, ``n >= 2``,
``n >= 3``, and ``(n - 3) / 2`` when ``n > 3`` (else 0). Layout:

==============  ============================================================
units           meaning
==============  ============================================================
``0 .. 95``     the side on roll's points 1..24 in its own numbering; point
                ``p`` at units ``4 (p - 1) .. 4 (p - 1) + 3``
``96 .. 191``   the opponent's points 1..24 in **its own** numbering (board
                index ``25 - q`` for its point ``q``), same 4 units each
``192``         side on roll's checkers on the bar / 2
``193``         opponent's checkers on the bar / 2
``194``         side on roll's checkers borne off / 15
``195``         opponent's checkers borne off / 15
``196, 197``    TD-Gammon's two "whose turn" units, fixed at ``(1, 0)``
==============  ============================================================

TD-Gammon encoded positions in a fixed white/black orientation and used the
last two units to say who was on roll. nard_ai always encodes a board from
the side on roll (to value an afterstate, search swaps it with
:func:`nard_ai.core.board.swap_sides` so the opponent is on roll, evaluates, and
inverts the probabilities), so "the first-encoded side is on roll" is always
true: the units are the constant ``(1, 0)`` and act as a bias. They are kept so
that the input count and layout match the published description.

Because both halves are written in their own side's numbering, the encoding
is symmetric: ``encode(swap_sides(b))`` equals ``encode(b)`` with units
``0..95`` and ``96..191`` exchanged and the pairs ``(192, 193)`` and
``(194, 195)`` exchanged.

``rich`` v1 (``td198`` plus hand-made features, in the spirit of Berliner and gnubg)
--------------------------------------------------------------------------------------
Units ``0 .. 197`` are exactly ``td198``. Then 11 features for the side on
roll (units ``198 .. 208``), the same 11 for the opponent computed on the
swapped board (units ``209 .. 219``), and a race flag (unit ``220``). For one
side, in its own numbering, with "contact" meaning some of its checkers are
still behind an opposing checker (:func:`nard_ai.core.classes.has_contact`):

====  ===========================================================================
unit  feature (for the side "S"; the "opponent" is the other side)
====  ===========================================================================
0     pip count / 150
1     checkers back: S's checkers on points 19..24 and the bar, / 5
2     blots: points 1..24 with exactly one S checker, / 5 (0 without contact)
3     shots: fraction of the 36 rolls with which the opponent can hit at least
      one S blot, direct or combined, through open points; an opponent with
      checkers on the bar must enter with its first die (0 without contact)
4     longest prime: most consecutive points with >= 2 S checkers, / 6
5     home board points made (points 1..6 with >= 2), / 6
6     anchors: points 19..24 made by S, / 2
7     escapes of S's rearmost checker: gnubg's ``Escapes`` count of rolls (out of
      36) whose sum can be moved through the 12 points in front of it, a point
      being blocked when the opponent holds it, / 36 (1 without contact)
8     containment: the fewest such escapes from any of points 15..24, / 36
      (gnubg's ``I_CONTAIN`` idea; 1 without contact)
9     break-contact pips: the pips S's checkers behind the opponent's rearmost
      checker need to pass it (gnubg's ``I_BREAK_CONTACT``), / 150
10    points made anywhere on 1..24, / 12
====  ===========================================================================

The escape count follows gnubg's ``ComputeTable0`` (eval.c): for each of the
21 rolls ``(a, b)``, weighted 2 (1 for doubles), the roll counts when the
point ``a + b`` ahead is open and at least one of the points ``a``, ``b`` ahead
is open. Races get their own network (:class:`nard_ai.model.network.NetworkConfig`
``race_net``), chosen by unit 220.

``expert`` v1 (``rich`` plus gnubg's "expert" inputs)
-----------------------------------------------------
Units ``0 .. 220`` are exactly ``rich`` (so the race unit is 220 and a
``race_net`` routes as for ``rich``). Then gnubg's 25 hand-made inputs of its
contact and crashed nets (gnubg ``eval.c``, ``CalculateHalfInputs``) for the
side on roll (units ``221 .. 245``) and the same 25 for the opponent (units
``246 .. 270``), in gnubg's order and scaling: unit ``221 + k`` (``246 + k``)
is the ``k``-th of :data:`nard_ai.model.expert.EXPERT_NAMES` (``I_OFF1``,
``I_OFF2``, ``I_OFF3``, ``I_BREAK_CONTACT``, ``I_BACK_CHEQUER``, ...,
``I_BACKRESCAPES``). Their definitions, sources and the few places where the
encoder differs from gnubg's nets are the table of :mod:`nard_ai.model.expert`'s
docstring. gnubg's player on roll (its row 1) is nard_ai's side on roll, and
gnubg writes that player's half first, as here; the opponent's half is the
side on roll's half of ``swap_sides(board)``, so ``encode(swap_sides(b))``
exchanges units ``221..245`` and ``246..270`` (besides ``rich``'s exchanges).

``expert_race`` v1 (``expert`` plus race inputs)
------------------------------------------------
Units ``0 .. 270`` are exactly ``expert`` (a network over ``expert`` widens to
it: :func:`nard_ai.training.supervised.widened`). Units ``271 .. 311`` are the
41 race inputs of :mod:`nard_ai.model.race_inputs` (checkers-off thermometer
and crossovers as gnubg's race net has them, checkers outside home, pips to
bring all home, low points, home gaps, for each side; the pip lead three ways).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, types
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS, NUM_POINTS, OPP_BAR
from nard_ai.core.classes import race_flags  # re-exported: the rich encoder's race unit
from nard_ai.core.movegen import parallel_threads, unowned
from nard_ai.model.expert import (
    ESCAPES,
    ESCAPES_BY_POINT,
    HALF_INPUTS,
    expert_inputs_into,
)
from nard_ai.model.race_inputs import RACE_INPUTS, race_inputs_into

__all__ = [
    "Encoder",
    "ENCODERS",
    "get_encoder",
    "encode_td198",
    "encode_rich",
    "encode_expert",
    "encode_expert_race",
    "race_flags",
    "contact_first_order",
    "TD198",
    "RICH",
    "EXPERT",
    "EXPERT_FIRST",
    "EXPERT_SIZE",
    "EXPERT_RACE",
    "EXPERT_RACE_SIZE",
    "ESCAPES",
    "ESCAPES_BY_POINT",
]


@dataclass(frozen=True)
class Encoder:
    """A named, versioned board encoder.

    Attributes:
        name: registry name, e.g. ``"td198"``.
        version: integer version; bumped whenever the output changes.
        size: number of float32 inputs per board.
        fn: ``(N, 26) int8 boards (side on roll's view) -> (N, size) float32``.
        race_unit: index of an input that is 1.0 exactly for race positions
            (no contact), or ``None``; networks with a race net route on it.
        race_fn: ``(N, 26) int8 boards -> (N,) bool``, True exactly where
            ``fn(boards)[:, race_unit]`` is 1.0, computed from the boards
            without encoding them (so a network can group the contact and
            the race boards before encoding); ``None`` when ``race_unit`` is.
    """

    name: str
    version: int
    size: int
    fn: Callable[[np.ndarray], np.ndarray]
    race_unit: int | None = None
    race_fn: Callable[[np.ndarray], np.ndarray] | None = None

    def encode(self, boards: np.ndarray) -> np.ndarray:
        """Encode ``(N, 26)`` or ``(26,)`` int8 boards (side on roll's view) to ``(N, size)`` float32."""
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        if boards.ndim == 1:
            boards = boards[None]
        if boards.ndim != 2 or boards.shape[1] != BOARD_SIZE:
            raise ValueError(f"boards must have shape (N, 26), got {boards.shape}")
        return self.fn(boards)

    @property
    def key(self) -> str:
        """``"name@version"``, as written in logs and checkpoints."""
        return f"{self.name}@{self.version}"


@njit(cache=True, inline="always")
def _point_units(out, row, base, n):
    # TD-Gammon's truncated unary code for n checkers of one side on a point.
    out[row, base] = 1.0 if n >= 1 else 0.0
    out[row, base + 1] = 1.0 if n >= 2 else 0.0
    out[row, base + 2] = 1.0 if n >= 3 else 0.0
    out[row, base + 3] = (n - 3) * 0.5 if n > 3 else 0.0


@njit(cache=True, nogil=True)
def _td198_kernel(boards, out):
    _td198_rows(boards, out, 0, boards.shape[0])


@njit(cache=True, nogil=True)
def _td198_rows(boards, out, start, stop):
    for i in range(start, stop):
        mine_on = 0
        theirs_on = 0
        for p in range(1, NUM_POINTS + 1):
            v = boards[i, p]
            mine = v if v > 0 else 0
            # the opponent's point q is board index 25 - q
            w = boards[i, BAR - p]
            theirs = -w if w < 0 else 0
            mine_on += mine
            theirs_on += theirs
            _point_units(out, i, 4 * (p - 1), mine)
            _point_units(out, i, 96 + 4 * (p - 1), theirs)
        my_bar = boards[i, BAR]
        their_bar = -boards[i, OPP_BAR]
        out[i, 192] = my_bar * 0.5
        out[i, 193] = their_bar * 0.5
        out[i, 194] = (NUM_CHECKERS - mine_on - my_bar) / NUM_CHECKERS
        out[i, 195] = (NUM_CHECKERS - theirs_on - their_bar) / NUM_CHECKERS
        out[i, 196] = 1.0
        out[i, 197] = 0.0


def encode_td198(boards: np.ndarray) -> np.ndarray:
    """TD-Gammon's 198 raw inputs (``td198`` v1, layout in the module docstring).

    Args:
        boards: ``(N, 26)`` C-contiguous int8 boards, each from its side on roll's view.

    Returns:
        ``(N, 198)`` float32.
    """
    out = np.empty((boards.shape[0], 198), dtype=np.float32)
    _td198_kernel(boards, out)
    return out


# gnubg's escape tables ESCAPES (ComputeTable0) and ESCAPES_BY_POINT live in nard_ai.model.expert, which
# also uses them, and are imported above: they are still importable from here.

PARALLEL_MIN_BOARDS = 2048
"""Batches of fewer boards run the per-board kernels (encoding, :mod:`nard_ai.model.embedding`) on one
thread. Starting the threads costs tens of microseconds on an idle machine and up to a scheduler
time slice (milliseconds) when another process holds the second core, while a board costs about
0.5 µs: a training minibatch of 512 boards is cheaper on one thread (measured here under load:
8.6 ms per Adam step of 512 samples with two threads, 3.5 ms with one)."""
RICH_SIDE_FEATURES = 11


@njit(cache=True, nogil=True)
def _shots(b, blots, sources_mask, open_mask):
    # Rolls (of 36) on which the opponent (negative, moving up from its bar at 0) hits a blot in `blots`.
    # Bit masks over board indices: sources_mask = the opponent's occupied points and bar (bit 0),
    # open_mask = points 1..24 it may land on (fewer than 2 of our checkers). A shift by d moves every
    # source d pips at once; masking with open_mask drops landings on our points and past 24.
    b = unowned(b)  # an argument: re-wrapped, else reference counted on every use (movegen.unowned)
    on_bar = -b[0] if b[0] < 0 else 0
    others = sources_mask & ~np.int64(1)
    hits = 0
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            reach = np.int64(0)
            if d1 == d2:
                enter = (np.int64(1) << d1) & open_mask
                if on_bar == 0:
                    x = sources_mask
                    for _ in range(4):
                        x = (x << d1) & open_mask
                        reach |= x
                elif enter:
                    # the bar checkers enter first; the first one in can go on with what is left
                    x = np.int64(1)
                    for _ in range(min(4, 5 - on_bar)):
                        x = (x << d1) & open_mask
                        reach |= x
                    x = others
                    for _ in range(4 - on_bar):
                        x = (x << d1) & open_mask
                        reach |= x
            elif on_bar >= 2:
                reach = ((np.int64(1) << d1) | (np.int64(1) << d2)) & open_mask
            elif on_bar == 1:
                e1 = (np.int64(1) << d1) & open_mask
                e2 = (np.int64(1) << d2) & open_mask
                reach = e1 | e2
                if e1:
                    reach |= ((e1 << d2) & open_mask) | ((others << d2) & open_mask)
                if e2:
                    reach |= ((e2 << d1) & open_mask) | ((others << d1) & open_mask)
            else:
                a = (sources_mask << d1) & open_mask
                c = (sources_mask << d2) & open_mask
                reach = a | c | ((a << d2) & open_mask) | ((c << d1) & open_mask)
            if reach & blots:
                hits += 1 if d1 == d2 else 2
    return hits


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of an int64 (LLVM's ``ctpop``: one instruction on x86-64 with POPCNT)."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.int64(types.int64), codegen


_POINTS = (1 << (NUM_POINTS + 1)) - 2  # bits 1..24 of a mask over board indices
_HOME = 0b1111110  # points 1..6
_OPPONENT_HOME = 0b111111 << 19  # points 19..24


@njit(cache=True, nogil=True)
def _side_features(b, table, out, row, base):
    # Features of the side with positive counts in b (its own numbering), module docstring table.
    # One pass over the 26 counts builds bit masks over board indices (bit p = index p) and the pip
    # count: a loop without branches that LLVM vectorizes; the counts are then popcounts of masks.
    # `table` is ESCAPES_BY_POINT. Same integers, so the same float32 features, as gnubg's
    # formulation in the docstring (checked against the straightforward per-point loops in tests).
    b = unowned(b)  # arguments: re-wrapped, else reference counted on every use (movegen.unowned)
    table = unowned(table)
    out = unowned(out)
    pip = np.int64(0)
    back = np.int64(0)
    mine = np.int64(0)
    theirs = np.int64(0)
    made = np.int64(0)
    blot = np.int64(0)
    blocked = np.int64(0)
    for p in range(BOARD_SIZE):
        v = np.int64(b[p])
        m = max(v, np.int64(0))
        pip += p * m
        back += m * np.int64(p >= 19)
        mine |= np.int64(v > 0) << p
        theirs |= np.int64(v < 0) << p
        made |= np.int64(v >= 2) << p
        blot |= np.int64(v == 1) << p
        blocked |= np.int64(v <= -2) << p
    made &= _POINTS
    my_rear = 63 - leading_zeros(mine) if mine else 0  # the bar is index 25
    opp_rear = trailing_zeros(theirs) if theirs else 26  # the opponent's bar is index 0
    contact = my_rear > opp_rear
    run = made
    prime = 0
    while run:
        run &= run >> 1
        prime += 1
    out[row, base + 0] = pip / 150.0
    out[row, base + 1] = back / 5.0
    out[row, base + 4] = prime / 6.0
    out[row, base + 5] = _popcount(made & _HOME) / 6.0
    out[row, base + 6] = _popcount(made & _OPPONENT_HOME) / 2.0
    out[row, base + 10] = _popcount(made) / 12.0
    if contact:
        blots = blot & _POINTS
        nblots = _popcount(blots)
        out[row, base + 2] = nblots / 5.0
        open_mask = ~made & _POINTS
        out[row, base + 3] = _shots(b, blots, theirs, open_mask) / 36.0 if nblots else 0.0
        ahead = (blocked & _POINTS) << 12  # bit n + j = point n - 12 + j, for the windows below
        out[row, base + 7] = table[(ahead >> my_rear) & 0xFFF] / 36.0
        worst = np.int64(36)
        for n in range(15, 25):
            worst = min(worst, table[(ahead >> n) & 0xFFF])
        out[row, base + 8] = worst / 36.0
        brk = np.int64(0)
        for p in range(BOARD_SIZE):
            brk += max(np.int64(p) - opp_rear, np.int64(0)) * max(np.int64(b[p]), np.int64(0))
        out[row, base + 9] = brk / 150.0
    else:
        out[row, base + 2] = 0.0
        out[row, base + 3] = 0.0
        out[row, base + 7] = 1.0
        out[row, base + 8] = 1.0
        out[row, base + 9] = 0.0
    return contact


@njit(cache=True, nogil=True)
def _rich_rows(boards, table, out, start, stop):
    swapped = np.empty(BOARD_SIZE, dtype=np.int8)
    for i in range(start, stop):
        b = boards[i]
        for j in range(BOARD_SIZE):
            swapped[j] = -b[BOARD_SIZE - 1 - j]
        contact = _side_features(b, table, out, i, 198)
        _side_features(swapped, table, out, i, 198 + RICH_SIDE_FEATURES)
        out[i, 220] = 0.0 if contact else 1.0


@njit(cache=True, nogil=True)
def _rich_kernel(boards, table, out):
    _td198_kernel(boards, out)
    _rich_rows(boards, table, out, 0, boards.shape[0])


@njit(cache=True, parallel=True)
def _rich_kernel_parallel(boards, table, out, chunks):
    n = boards.shape[0]
    per = (n + chunks - 1) // chunks
    for c in numba.prange(chunks):
        _td198_rows(boards, out, c * per, min(n, (c + 1) * per))
        _rich_rows(boards, table, out, c * per, min(n, (c + 1) * per))


def encode_rich(boards: np.ndarray) -> np.ndarray:
    """``td198`` plus hand-made features (``rich`` v1, layout in the module docstring).

    Args:
        boards: ``(N, 26)`` C-contiguous int8 boards, each from its side on roll's view.

    Returns:
        ``(N, 221)`` float32.
    """
    out = np.empty((boards.shape[0], 221), dtype=np.float32)
    threads = parallel_threads()
    if len(boards) >= PARALLEL_MIN_BOARDS and threads > 1:
        _rich_kernel_parallel(boards, ESCAPES_BY_POINT, out, threads)
    else:
        _rich_kernel(boards, ESCAPES_BY_POINT, out)
    return out


EXPERT_FIRST = 221
"""First unit of the ``expert`` encoder's gnubg inputs: the side on roll's 25, then the opponent's 25."""
EXPERT_SIZE = EXPERT_FIRST + 2 * HALF_INPUTS
"""Inputs of the ``expert`` encoder (271)."""


def encode_expert(boards: np.ndarray) -> np.ndarray:
    """``rich`` plus gnubg's expert inputs of both sides (``expert`` v1, module docstring).

    Args:
        boards: ``(N, 26)`` C-contiguous int8 boards, each from its side on roll's view.

    Returns:
        ``(N, 271)`` float32.
    """
    return _encode_expert_into(boards, np.empty((boards.shape[0], EXPERT_SIZE), dtype=np.float32))[0]


def _encode_expert_into(boards: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, int]:
    # rich then gnubg's inputs into out[:, :EXPERT_SIZE]; returns out and the threads used (for more units)
    threads = parallel_threads()
    if len(boards) >= PARALLEL_MIN_BOARDS and threads > 1:
        _rich_kernel_parallel(boards, ESCAPES_BY_POINT, out, threads)
    else:
        threads = 1
        _rich_kernel(boards, ESCAPES_BY_POINT, out)
    expert_inputs_into(boards, out, EXPERT_FIRST, threads)
    return out, threads


EXPERT_RACE_SIZE = EXPERT_SIZE + RACE_INPUTS
"""Inputs of the ``expert_race`` encoder (312)."""


def encode_expert_race(boards: np.ndarray) -> np.ndarray:
    """``expert`` plus the race inputs of :mod:`nard_ai.model.race_inputs` (``expert_race`` v1).

    Args:
        boards: ``(N, 26)`` C-contiguous int8 boards, each from its side on roll's view.

    Returns:
        ``(N, 312)`` float32: units ``0 .. 270`` are :func:`encode_expert`'s, ``271 .. 311`` the race inputs.
    """
    out, threads = _encode_expert_into(
        boards, np.empty((boards.shape[0], EXPERT_RACE_SIZE), dtype=np.float32)
    )
    race_inputs_into(boards, out, EXPERT_SIZE, threads)
    return out


@njit(cache=True, nogil=True)
def _group_kernel(race, order):
    k = 0
    for i in range(race.shape[0]):
        if not race[i]:
            order[k] = i
            k += 1
    contact = k
    for i in range(race.shape[0]):
        if race[i]:
            order[k] = i
            k += 1
    return contact


def contact_first_order(race: np.ndarray) -> tuple[np.ndarray, int]:
    """A stable order that puts the contact rows first and the race rows after.

    Args:
        race: ``(N,)`` bool race flags (e.g. from :func:`race_flags`).

    Returns:
        ``(order (N,) int64, contact)``: ``order[:contact]`` are the rows
        where ``race`` is False, in increasing order, then the race rows.
    """
    race = np.ascontiguousarray(race, dtype=np.bool_)
    order = np.empty(len(race), dtype=np.int64)
    return order, int(_group_kernel(race, order))


TD198 = Encoder(name="td198", version=1, size=198, fn=encode_td198)

RICH = Encoder(name="rich", version=1, size=221, fn=encode_rich, race_unit=220, race_fn=race_flags)

EXPERT = Encoder(
    name="expert", version=1, size=EXPERT_SIZE, fn=encode_expert, race_unit=220, race_fn=race_flags
)

EXPERT_RACE = Encoder(
    name="expert_race",
    version=1,
    size=EXPERT_RACE_SIZE,
    fn=encode_expert_race,
    race_unit=220,
    race_fn=race_flags,
)

ENCODERS: dict[str, Encoder] = {
    TD198.name: TD198, RICH.name: RICH, EXPERT.name: EXPERT, EXPERT_RACE.name: EXPERT_RACE
}  # fmt: skip


def get_encoder(name: str, version: int | None = None) -> Encoder:
    """Look up a registered encoder.

    Args:
        name: encoder name (see the module docstring's table).
        version: required version; ``None`` accepts the registered one.

    Raises:
        ValueError: if no encoder of that name, or not that version, is registered.
    """
    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}")
    enc = ENCODERS[name]
    if version is not None and version != enc.version:
        raise ValueError(f"encoder {name!r} is at version {enc.version}, but version {version} was asked for")
    return enc
