"""Match equity: the Kazaross-XG2 match equity table (MET) and lookups after a game.

Source
------
N. Kazaross (2011), *Kazaross-XG2*: XG rollouts to 9 points, GNU Backgammon
rollouts to 15, extended to 25 points; the numbers as distributed with GNU
Backgammon (``met/Kazaross-XG2.xml``). The two CSV files ship in
``nard_ai/data/`` with the table's notice in their header:

============================================  ==================================================
file                                          contents
============================================  ==================================================
``met_kazaross_xg2.csv``                      25 x 25, row ``i`` column ``j`` (1-based) = the
                                              match-winning chance (MWC) of the side needing
                                              ``i`` points against a side needing ``j``
``met_kazaross_xg2_post_crawford.csv``        one row, column ``j`` = the MWC of the trailer
                                              needing ``j`` against the leader needing 1, in
                                              a post-Crawford game
============================================  ==================================================

Scores are *away* counts: the points a side still needs (match length minus
its score). Perspective: every MWC here is for the side whose away count is
given first.

Which table
-----------
* Neither side 1-away, or one side 1-away in **the Crawford game** (RULES.md
  §8: "in the first game after either player first reaches one point short of
  the match length, nobody may double"): the pre-Crawford table. Its row and
  column 1 are the Crawford-game equities.
* One side 1-away **after** the Crawford game: the post-Crawford row.
* Both sides 1-away (double match point): 0.5 in either table.

After a game (:func:`match_equity_after`) the next game is post-Crawford when
this game is the Crawford game or already post-Crawford, the rule GNU
Backgammon's ``getME`` applies.
"""

from __future__ import annotations

import functools
from numbers import Integral
from pathlib import Path

import numpy as np

__all__ = [
    "MET_NAME",
    "MAX_AWAY",
    "met_tables",
    "match_equity",
    "match_equity_after",
]

MET_NAME = "Kazaross-XG2"
MAX_AWAY = 25  # the table covers matches up to 25 points

_PRE_FILE = "met_kazaross_xg2.csv"
_POST_FILE = "met_kazaross_xg2_post_crawford.csv"


def _data_path(name: str) -> Path:
    path = Path(__file__).resolve().parents[1] / "data" / name  # nard_ai/data/
    if not path.is_file():
        raise FileNotFoundError(f"{name} not found in nard_ai/data/ ({path})")
    return path


def _read_csv(name: str) -> np.ndarray:
    rows = [
        [float(x) for x in line.split(",")]
        for line in _data_path(name).read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return np.array(rows, dtype=np.float64)


@functools.cache
def met_tables() -> tuple[np.ndarray, np.ndarray]:
    """The shipped table, read once.

    Returns:
        ``(pre, post)``: ``pre`` is ``(25, 25)`` float64, ``pre[i - 1, j - 1]``
        = MWC of the side ``i``-away against ``j``-away (pre-Crawford, row 1 =
        the Crawford game); ``post`` is ``(25,)``, ``post[j - 1]`` = MWC of the
        trailer ``j``-away against the 1-away leader after the Crawford game.
        Both are read-only views.

    Raises:
        FileNotFoundError: if the data files are missing.
        ValueError: if a file does not have the expected shape.
    """
    pre = _read_csv(_PRE_FILE)
    post = _read_csv(_POST_FILE).reshape(-1)
    if pre.shape != (MAX_AWAY, MAX_AWAY) or post.shape != (MAX_AWAY,):
        raise ValueError(
            f"MET files must hold a {MAX_AWAY}x{MAX_AWAY} table and a {MAX_AWAY}-entry row, "
            f"got {pre.shape} and {post.shape}"
        )
    pre.flags.writeable = False
    post.flags.writeable = False
    return pre, post


def _check_away(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer number of points, got {value!r}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (0 = that side has won the match), got {value}")
    if value > MAX_AWAY:
        raise ValueError(f"{name}={value}: the {MET_NAME} table covers at most {MAX_AWAY}-away")
    return value


def _check_flag(name: str, value) -> bool:
    # A flag must be a real bool: bool("no") is True, and 1/0 or None would hide a mistake.
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _lookup(away: int, opp_away: int, post_crawford: bool) -> float:
    # away, opp_away already validated; <= 0 means that side has won.
    if away <= 0:
        return 1.0
    if opp_away <= 0:
        return 0.0
    pre, post = met_tables()
    if post_crawford and (away == 1) != (opp_away == 1):
        # post[j - 1] is the MWC of the trailer needing j against the 1-away leader
        return float(post[away - 1]) if opp_away == 1 else 1.0 - float(post[opp_away - 1])
    return float(pre[away - 1, opp_away - 1])


def match_equity(away: int, opp_away: int, post_crawford: bool = False) -> float:
    """Match-winning chance of the side needing ``away`` points (Kazaross-XG2).

    Args:
        away: points this side still needs, ``0..25``; 0 = it has won the match.
        opp_away: points the opponent still needs, ``0..25``; 0 = it has won.
        post_crawford: the game about to be played is post-Crawford; only
            meaningful when exactly one side is 1-away (with neither side
            1-away there is no post-Crawford game, and with both 1-away the
            answer is 0.5 either way). With one side 1-away and
            ``post_crawford=False`` the game is the Crawford game. A bool
            (Python or numpy).

    Returns:
        The MWC in ``[0, 1]``: 1.0 if ``away == 0``, 0.0 if ``opp_away == 0``.
        ``match_equity(a, b) + match_equity(b, a) == 1``. Examples:
        ``match_equity(2, 4) == 0.6687``; ``match_equity(2, 1, post_crawford=True)
        == 0.48803``.

    Raises:
        ValueError: if a count is not an integer (a bool or float is not),
            is negative or above 25, if both are 0, if ``post_crawford`` is
            not a bool, or if it is set while neither side is 1-away.
    """
    away = _check_away("away", away)
    opp_away = _check_away("opp_away", opp_away)
    post_crawford = _check_flag("post_crawford", post_crawford)
    if away == 0 and opp_away == 0:
        raise ValueError("both sides cannot have won the match (away == opp_away == 0)")
    if post_crawford and 0 not in (away, opp_away) and 1 not in (away, opp_away):
        raise ValueError(
            f"post_crawford needs a side 1-away; at {away}-away {opp_away}-away there is no post-Crawford game"
        )
    return _lookup(away, opp_away, post_crawford)


def match_equity_after(away: int, opp_away: int, points: int, crawford: bool = False) -> float:
    """MWC of the side needing ``away`` after the current game ends with ``points``.

    Args:
        away: points this side needs before the game, ``1..25``.
        opp_away: points the opponent needs before the game, ``1..25``.
        points: points this side wins (``> 0``) or loses (``< 0``), i.e.
            result x cube value, an integer; more than a side needs simply
            wins the match.
        crawford: the current game is the Crawford game (a bool; exactly one
            side is then 1-away).

    Returns:
        This side's MWC at the start of the next game: the next game is
        post-Crawford if this one is the Crawford game or already
        post-Crawford (a side is 1-away and ``crawford`` is false).

    Raises:
        ValueError: on counts that are not integers ``1..25``, ``points``
            that is not a non-zero integer (a bool or float is not), a
            ``crawford`` that is not a bool, or ``crawford=True`` unless
            exactly one side is 1-away (RULES.md §8).
    """
    away = _check_away("away", away)
    opp_away = _check_away("opp_away", opp_away)
    if away == 0 or opp_away == 0:
        raise ValueError("the match is already over (an away count is 0)")
    if isinstance(points, bool) or not isinstance(points, Integral):
        raise ValueError(f"points must be an integer (result x cube value), got {points!r}")
    points = int(points)
    if points == 0:
        raise ValueError("a game always ends with points for one side (points != 0)")
    crawford = _check_flag("crawford", crawford)
    if crawford and (away == 1) == (opp_away == 1):
        raise ValueError(
            f"the Crawford game needs exactly one side 1-away, got {away}-away vs {opp_away}-away"
        )
    next_post = crawford or away == 1 or opp_away == 1
    if points > 0:
        return _lookup(away - points, opp_away, next_post)
    return _lookup(away, opp_away + points, next_post)
