"""The text layer of Jellyfish ``.mat`` records: decoding a file's bytes, and the numbers written in it.

Split from :mod:`nard_ai.formats.mat` (which re-exports :func:`decode_mat`) to keep that module
under 900 lines.
"""

from __future__ import annotations

import re

_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1a")  # \x1a: the DOS end-of-file mark some old exports end with
MAX_DIGITS = 9  # more than any count a .mat record holds (match length 64, a cube of 2**15, a game number)


def number(digits: str, what: str, line: int) -> int:
    """A run of ASCII digits of a ``.mat`` record (its regexes match ``[0-9]``, never other scripts' digits).

    Raises:
        ValueError: ``"line L: WHAT ..."`` when it has more than :data:`MAX_DIGITS` digits after
            its leading zeros: far beyond any count a record holds, and Python's ``int`` refuses a
            string of over 4300 digits with a message that names neither the line nor the field.
    """
    significant = digits.lstrip("0") or "0"
    if len(significant) > MAX_DIGITS:
        raise ValueError(
            f"line {line}: {what} is a number of {len(significant)} digits ({digits[:12]}...); "
            f"no count in a .mat record has more than {MAX_DIGITS}"
        )
    return int(significant)


def check_text(text: str) -> str:
    """``text`` itself, if it holds no control character a text file never has (a NUL, say).

    Raises:
        ValueError: ``"not a text .mat record ..."``, naming the first such character and its line.
    """
    for index, char in enumerate(text):
        if (char < " " or "\x7f" <= char <= "\x9f") and char not in _TEXT_CONTROLS:
            line = len(re.split(r"\r\n|\r|\n", text[:index]))  # counted as read_mat counts
            raise ValueError(
                f"not a text .mat record (control character 0x{ord(char):02x} on line {line}; a binary file?)"
            )
    return text


def decode_mat(data: bytes) -> str:
    """The text of a ``.mat`` file's bytes, in whichever encoding it was written.

    gnubg 1.07 writes UTF-8 (``Müller`` is ``M\\xc3\\xbcller``); older
    exports (Jellyfish, game servers, gnubg builds on Windows) wrote the
    Windows code page, so a byte that is not UTF-8 is read as Windows-1252
    (which agrees with Latin-1 on every letter; ``Müller`` is
    ``M\\xfcller`` in both), and a byte Windows-1252 leaves undefined as
    Latin-1.

    Args:
        data: the file's bytes; a UTF-8 byte order mark is dropped.

    Returns:
        The text, for :func:`nard_ai.formats.mat.read_mat`.

    Raises:
        ValueError: ``"not a text .mat record ..."`` when the bytes hold
            control characters no text file has (a binary file), naming the
            first and its line.
    """
    if not isinstance(data, bytes | bytearray):
        raise ValueError(f"decode_mat takes bytes, got {type(data).__name__}")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = bytes(data).decode("cp1252")
        except UnicodeDecodeError:
            text = bytes(data).decode("latin-1")
    return check_text(text)
