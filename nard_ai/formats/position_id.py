"""GNU Backgammon Position IDs.

A Position ID is 14 characters of base64 (standard alphabet ``A-Z a-z 0-9 +
/``, no ``=`` padding) holding an 80-bit *position key*, built from gnubg's
two-row board (:mod:`nard_ai.formats.tanboard`, RULES.md section 1):

1. For each player, **first the player not on roll** (gnubg's row 0), then
   the player on roll (row 1), and for each of that player's 25 locations in
   its own numbering (points 1..24, then the bar): write as many ``1`` bits
   as it has checkers there, then one ``0`` bit. That is ``50`` zeros and at
   most ``30`` ones; the rest of the 80 bits are ``0``.
2. Pack the bits little-endian into 10 bytes: bit ``k`` is bit ``k % 8``
   (least significant first) of byte ``k // 8``.
3. Base64-encode the 10 bytes (16 characters with ``==``) and drop the
   padding: 14 characters. The last character carries 4 unused bits, which
   must be ``0``.

The starting position is ``4HPwATDgc/ABMA``. The mover of a nard_ai board is
gnubg's player on roll, so ``position_id`` never swaps sides.

Decoding is strict: gnubg itself ignores the 4 unused bits of the last
character, but an ID with them set was not written by gnubg (most likely a
typo), so it is rejected here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nard_ai.core.board import BAR, BOARD_SIZE, NUM_CHECKERS, OPP_BAR, validate_board
from nard_ai.formats.base64key import ALPHABET, decode_base64, encode_base64
from nard_ai.formats.tanboard import from_tanboard, to_tanboard

POSITION_ID_LENGTH = 14
KEY_BYTES = 10
KEY_BITS = 8 * KEY_BYTES
LOCATIONS = 25  # points 1..24 and the bar, per player
_UNUSED_BITS = 6 * POSITION_ID_LENGTH - KEY_BITS  # 4 bits at the end of the last character


def position_key(board: np.ndarray) -> bytes:
    """The 10-byte gnubg position key of a board.

    Args:
        board: ``(26,)`` integer board, mover's view (the mover is gnubg's
            player on roll).

    Returns:
        10 bytes, bits packed little-endian as the module docstring describes.

    Raises:
        ValueError: if the board is not one valid ``(26,)`` board.
    """
    arr = np.asarray(board)
    if arr.ndim != 1:
        raise ValueError(f"position_key takes one board of shape (26,), got shape {arr.shape}")
    tan = to_tanboard(validate_board(arr))
    key = 0
    bit = 0
    for row in (0, 1):  # the player not on roll first
        for count in tan[row]:
            # `count` ones then a zero: the ones occupy bits bit..bit+count-1.
            key |= ((1 << int(count)) - 1) << bit
            bit += int(count) + 1
    return key.to_bytes(KEY_BYTES, "little")


def position_id(board: np.ndarray) -> str:
    """The GNU Backgammon Position ID of a board.

    Args:
        board: ``(26,)`` integer board, mover's view (the mover is gnubg's
            player on roll).

    Returns:
        The 14-character Position ID, e.g. ``"4HPwATDgc/ABMA"`` for the
        starting position.

    Raises:
        ValueError: if the board is not one valid ``(26,)`` board.
    """
    value = int.from_bytes(position_key(board), "big") << _UNUSED_BITS
    return encode_base64(value, POSITION_ID_LENGTH)


_ALPHABET_CODES = np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)


@njit(cache=True, nogil=True, inline="always")
def _stream_bit(k: int) -> int:
    """Where key bit ``k`` sits in the big-endian bit stream of the base64 digits: bit ``k % 8`` (least
    significant first) of byte ``k // 8``, whose top bit comes first (module docstring, step 2)."""
    return 8 * (k // 8) + 7 - (k % 8)


@njit(cache=True, nogil=True)
def _id_codes(boards: np.ndarray, alphabet: np.ndarray) -> np.ndarray:
    """``(N, 14)`` uint8: the ASCII codes of each valid ``(N, 26)`` board's Position ID.

    The module docstring's three steps for one board at a time: the 80 key bits from gnubg's
    two rows (the opponent first, its point ``q`` read from the mover's index ``25 - q``, its
    bar last; then the mover's points 1..24 and bar), then the bytes those bits make
    little-endian, read as one big-endian number with 4 zero bits appended, in 14 six-bit
    base64 digits, most significant first. No validation: :func:`position_ids` checks first.
    """
    n = boards.shape[0]
    out = np.empty((n, POSITION_ID_LENGTH), dtype=np.uint8)
    stream = np.zeros(6 * POSITION_ID_LENGTH, dtype=np.uint8)  # the key's bits, big-endian, 4 zeros after
    for r in range(n):
        stream[:] = 0
        bit = 0
        for row in range(2):
            for col in range(LOCATIONS):
                if row == 0:  # the opponent, in its own numbering
                    count = -boards[r, OPP_BAR] if col == LOCATIONS - 1 else -boards[r, BAR - 1 - col]
                else:  # the mover
                    count = boards[r, BAR] if col == LOCATIONS - 1 else boards[r, col + 1]
                for _ in range(max(count, 0)):
                    stream[_stream_bit(bit)] = 1
                    bit += 1
                bit += 1
        for i in range(POSITION_ID_LENGTH):
            digit = 0
            for j in range(6):
                digit = (digit << 1) | stream[6 * i + j]
            out[r, i] = alphabet[digit]
    return out


def position_ids(boards: np.ndarray) -> list[str]:
    """The Position IDs of a batch of boards: :func:`position_id` of each, in one compiled pass.

    The same three steps as :func:`position_key` and :func:`position_id` (module docstring),
    in a numba kernel over the batch (about 0.4 us per board, validation included, against about 4 us for
    the numpy array version it replaced; measured 2026-12-03; the
    HTTP ``/move`` answer names every play's afterstate by its ID). ``tests/test_batching.py``
    checks it against :func:`position_id` on every afterstate of its positions.

    Args:
        boards: ``(N, 26)`` (or ``(26,)``) integer boards, mover's view.

    Returns:
        ``N`` Position IDs, 14 characters each, in the order of ``boards``.

    Raises:
        ValueError: if a board is invalid (:func:`nard_ai.core.board.validate_board`).
    """
    checked = np.ascontiguousarray(validate_board(boards).reshape(-1, 26), dtype=np.int64)
    text = _id_codes(checked, _ALPHABET_CODES).tobytes().decode("ascii")
    n = len(checked)
    return [text[i : i + POSITION_ID_LENGTH] for i in range(0, n * POSITION_ID_LENGTH, POSITION_ID_LENGTH)]


def _key_from_id(pid: str) -> int:
    """Decode the base64 of a Position ID to its 80-bit key (bit k = bit k of the int)."""
    value = decode_base64(pid, POSITION_ID_LENGTH, "Position ID")
    if value & ((1 << _UNUSED_BITS) - 1):
        raise ValueError(
            f"Position ID {pid!r}: the last character {pid[-1]!r} sets unused bits "
            "(gnubg never writes them; is it mistyped?)"
        )
    return int.from_bytes((value >> _UNUSED_BITS).to_bytes(KEY_BYTES, "big"), "little")


def tanboard_from_position_id(pid: str) -> np.ndarray:
    """Decode a Position ID to gnubg's two-row form.

    Args:
        pid: the 14-character Position ID; surrounding whitespace is ignored.

    Returns:
        ``(2, 25)`` int64 counts, row 1 the player on roll (see
        :mod:`nard_ai.formats.tanboard`).

    Raises:
        ValueError: if the ID is not a string, has the wrong length,
            characters outside base64, unused bits set, fewer than 50 ``0``
            bits (too many ``1`` bits), ``1`` bits after the 50th ``0``, more
            than 15 checkers for a player, or both players on one point.
    """
    if not isinstance(pid, str):
        raise ValueError(f"a Position ID must be a str, got {type(pid).__name__}")
    pid = pid.strip()
    key = _key_from_id(pid)
    tan = np.zeros((2, LOCATIONS), dtype=np.int64)
    bit = 0
    for row in (0, 1):  # the player not on roll first
        who = "on roll" if row == 1 else "not on roll"
        for loc in range(LOCATIONS):
            count = 0
            while bit < KEY_BITS and (key >> bit) & 1:
                count += 1
                bit += 1
            if tan[row].sum() + count > NUM_CHECKERS:
                raise ValueError(
                    f"Position ID {pid!r} gives the player {who} more than {NUM_CHECKERS} checkers"
                )
            if bit >= KEY_BITS:
                raise ValueError(
                    f"Position ID {pid!r} runs out of bits at row {row}, location {loc + 1}: "
                    f"it has fewer than {2 * LOCATIONS} separating 0 bits"
                )
            bit += 1  # the separating 0
            tan[row, loc] = count
    if key >> bit:
        raise ValueError(
            f"Position ID {pid!r} has 1 bits after the {2 * LOCATIONS} locations (wrong bit count)"
        )
    try:
        from_tanboard(tan)  # both players on one point, both with all checkers off
    except ValueError as exc:
        raise ValueError(f"Position ID {pid!r} is not a valid position: {exc}") from None
    return tan


_DIGITS = np.full(256, -1, dtype=np.int8)
_DIGITS[_ALPHABET_CODES] = np.arange(64, dtype=np.int8)


@njit(cache=True, nogil=True)
def _boards_from_codes(codes: np.ndarray, digits: np.ndarray, boards: np.ndarray) -> np.ndarray:
    """Decode ``(N, 14)`` uint8 ASCII codes of Position IDs into ``boards`` ``(N, 26)`` int8; returns
    ``(N,)`` bool, True where the row decoded cleanly.

    The module docstring's steps backwards, as :func:`tanboard_from_position_id` takes them: the
    14 base64 digits give 84 bits, most significant first, the last 4 unused (must be 0); key bit
    ``k`` is bit :func:`_stream_bit` ``(k)`` of that stream; then per row of gnubg's two-row board
    (the opponent first) and per location, the 1 bits up to a 0 are the checkers there. A row with
    anything :func:`tanboard_from_position_id` rejects (a character outside base64, unused bits
    set, too few 0 bits, 1 bits after the 50th 0, more than 15 checkers, both players on one
    point) is marked False and left for that function, which says what is wrong.
    """
    n = codes.shape[0]
    ok = np.ones(n, dtype=np.bool_)
    stream = np.zeros(6 * POSITION_ID_LENGTH, dtype=np.uint8)
    for r in range(n):
        boards[r, :] = 0
        good = True
        for i in range(POSITION_ID_LENGTH):
            d = digits[codes[r, i]]
            if d < 0:
                good = False
                break
            for j in range(6):
                stream[6 * i + j] = (d >> (5 - j)) & 1
        if good:
            for j in range(KEY_BITS, 6 * POSITION_ID_LENGTH):
                if stream[j]:
                    good = False
        bit = 0
        if good:
            for row in range(2):
                total = 0
                for loc in range(LOCATIONS):
                    count = 0
                    while bit < KEY_BITS and stream[_stream_bit(bit)] == 1:
                        count += 1
                        bit += 1
                    total += count
                    if total > NUM_CHECKERS or bit >= KEY_BITS:
                        good = False
                        break
                    bit += 1  # the separating 0
                    if row == 0:  # the opponent, in its own numbering: its point q is the mover's 25 - q
                        if loc == LOCATIONS - 1:
                            boards[r, OPP_BAR] = -count
                        else:
                            boards[r, BAR - 1 - loc] = -count
                    elif loc == LOCATIONS - 1:
                        boards[r, BAR] = count
                    elif count > 0:
                        if boards[r, loc + 1] < 0:  # both players on one point
                            good = False
                            break
                        boards[r, loc + 1] = count
                if not good:
                    break
        if good:
            for k in range(bit, KEY_BITS):
                if stream[_stream_bit(k)]:
                    good = False
        ok[r] = good
    return ok


def boards_from_position_ids(ids, where=None) -> np.ndarray:
    """Decode many Position IDs at once: :func:`board_from_position_id` of each, in one compiled pass.

    Reading a position set or a labels folder decodes 100,000 IDs per shard folder; one at a time
    that took about 15 s per 100,000 here (2026-12-06), compiled 0.08–0.2 s. An ID the kernel
    cannot decode cleanly (or whose board :func:`nard_ai.core.board.validate_board` rejects) is
    decoded again by :func:`board_from_position_id`, whose error is raised, so the results and
    the errors are the one-at-a-time function's (tested).

    Args:
        ids: a sequence of Position ID strings (surrounding whitespace ignored).
        where: ``where(i) -> str``, what to name the ``i``-th ID by in an error (default
            ``"Position ID number i"``), e.g. a file and line.

    Returns:
        ``(N, 26)`` int8 boards, the mover's view, in the order of ``ids``.

    Raises:
        ValueError: ``"WHERE: MESSAGE"`` for the first malformed ID, MESSAGE as
            :func:`tanboard_from_position_id` words it.
    """
    ids = list(ids)
    n = len(ids)
    boards = np.zeros((n, BOARD_SIZE), dtype=np.int8)
    if n == 0:
        return boards
    where = where or (lambda i: f"Position ID number {i}")
    text = [pid.strip() if isinstance(pid, str) else pid for pid in ids]
    regular = np.array(
        [isinstance(t, str) and len(t) == POSITION_ID_LENGTH and t.isascii() for t in text], dtype=bool
    )
    ok = np.zeros(n, dtype=bool)
    rows = np.flatnonzero(regular)
    if len(rows):
        codes = np.frombuffer("".join(text[i] for i in rows).encode("ascii"), dtype=np.uint8)
        decoded = np.empty((len(rows), BOARD_SIZE), dtype=np.int8)
        ok[rows] = _boards_from_codes(codes.reshape(-1, POSITION_ID_LENGTH), _DIGITS, decoded)
        boards[rows] = decoded
        good = np.flatnonzero(ok)
        try:
            validate_board(boards[good])
        except ValueError:
            ok[:] = False  # some board is invalid (a dead position, say): find it the slow way
    for i in np.flatnonzero(~ok):
        try:
            boards[i] = board_from_position_id(ids[i])
        except ValueError as exc:
            raise ValueError(f"{where(int(i))}: {exc}") from None
    return boards


def board_from_position_id(pid: str) -> np.ndarray:
    """Decode a Position ID to a board.

    Args:
        pid: the 14-character Position ID; surrounding whitespace is ignored.

    Returns:
        ``(26,)`` int8 board from the view of gnubg's player on roll (the
        mover).

    Raises:
        ValueError: on any malformed ID (see :func:`tanboard_from_position_id`).
    """
    return from_tanboard(tanboard_from_position_id(pid))
