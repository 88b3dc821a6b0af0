"""The base64 text of gnubg's Position and Match IDs: 6 bits a character, most significant first.

gnubg writes both IDs with the standard base64 alphabet (A-Z a-z 0-9 + /)
and no padding; the decoding of the bits inside the key is each format's own.
"""

from __future__ import annotations

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DIGIT = {ch: i for i, ch in enumerate(ALPHABET)}


def encode_base64(value: int, length: int) -> str:
    """``value`` (a non-negative int of at most ``6 * length`` bits) as ``length`` characters."""
    return "".join(ALPHABET[(value >> (6 * i)) & 0x3F] for i in reversed(range(length)))


def decode_base64(text: str, length: int, what: str) -> int:
    """The integer written by ``text``.

    Raises:
        ValueError: naming ``what`` (e.g. "Position ID") on a wrong length or
            characters outside the alphabet.
    """
    if len(text) != length:
        raise ValueError(f"a {what} has {length} characters, got {len(text)}: {text!r}")
    bad = sorted({ch for ch in text if ch not in _DIGIT})
    if bad:
        raise ValueError(
            f"{what} {text!r} has characters outside the base64 alphabet (A-Z a-z 0-9 + /): "
            + " ".join(repr(ch) for ch in bad)
        )
    value = 0
    for ch in text:
        value = (value << 6) | _DIGIT[ch]
    return value
