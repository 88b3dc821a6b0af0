"""Argument checks shared by the environments: constructor arguments, seeds, reset options, render modes.

Every check refuses a wrong value with a ``TypeError`` or ``ValueError``
naming the argument, before anything changes (:mod:`env._games` and the envs
call them first).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from gymnasium import logger as gym_logger

from nard_ai.core.game import CENTERED
from nard_ai.core.rules import Rules
from nard_ai.cube import MAX_CUBE

from .spaces import ACTION_MODES, MAX_PLAYS


def show(value) -> str:
    """``value`` for an error message: a NumPy scalar as its plain number (``3000``, not ``np.int64(3000)``)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` as an ``int`` if it is an integer in ``low .. high`` (``high=None``: no upper bound).

    A Python or NumPy integer is accepted; a bool, a float (even ``10.0``), a
    string or anything else is refused, never truncated or parsed.

    Raises:
        TypeError: ``value`` is not an integer, naming ``name`` and the accepted types.
        ValueError: ``value`` is outside ``low .. high``, naming ``name`` and the range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{name} must be an int (a Python or NumPy integer, not a bool, float or str), "
            f"got {show(value)} ({type(value).__name__})"
        )
    if value < low or (high is not None and value > high):
        bounds = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bounds}, got {show(value)}")
    return int(value)


def _seed_error(n: int | None, value) -> TypeError:
    accepted = "None or an int >= 0" + (
        "" if n is None else f", or a sequence of {n} such values (one per game, num_envs={n})"
    )
    return TypeError(f"seed must be {accepted}, got {show(value)} ({type(value).__name__})")


def check_seed(seed) -> int | None:
    """A single game's ``reset(seed=...)``: ``None`` or an integer ``>= 0``, returned as an ``int``.

    A NumPy integer is accepted (gymnasium's own seeding takes only a Python
    ``int``); a bool, a float or a string is refused.

    Raises:
        TypeError: ``seed`` is not ``None`` nor an integer, naming ``seed`` and the accepted values.
        ValueError: a negative ``seed`` (NumPy's ``SeedSequence`` takes integers ``>= 0``).
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise _seed_error(None, seed)
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {show(seed)}")
    return int(seed)


def check_seeds(seed, n: int) -> list[int | None]:
    """The per-game seeds of a vector ``reset(seed=...)``, as Gymnasium's ``SyncVectorEnv`` reads them.

    ``None``: ``[None] * n``; an integer ``s >= 0``: ``[s, s + 1, ..., s + n - 1]``;
    a sequence (list, tuple, 1-D array) of ``n`` values, each ``None`` or an
    integer ``>= 0``: itself. NumPy integers are accepted; bools, floats and
    strings are not.

    Returns:
        ``n`` seeds, each ``None`` or an ``int``.

    Raises:
        TypeError: ``seed`` (or one of its entries, named ``seed[i]``) is none of the above.
        ValueError: a negative seed, or a sequence whose length is not ``n``.
    """
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        return [check_seed(seed) + i for i in range(n)]
    if isinstance(seed, np.ndarray):
        if seed.ndim != 1:
            raise _seed_error(n, seed)
    elif isinstance(seed, (str, bytes)) or not isinstance(seed, Sequence):
        raise _seed_error(n, seed)
    if len(seed) != n:
        raise ValueError(f"seed must have one entry per game: got {len(seed)} seeds for num_envs={n}")
    seeds = []
    for i, s in enumerate(seed):
        try:
            seeds.append(check_seed(s))
        except (TypeError, ValueError) as error:
            raise type(error)(str(error).replace("seed must", f"seed[{i}] must", 1)) from None
    return seeds


def check_options(options, known: Sequence[str]) -> dict:
    """A ``reset(options=...)`` argument: ``None`` (no options) or a dict, returned as a new ``dict``.

    Gymnasium types ``options`` as ``dict | None``; anything else (a string, a
    list of pairs, ...) is refused here, not read key by key as characters.

    Raises:
        TypeError: ``options`` is neither ``None`` nor a mapping, naming ``options`` and the known keys.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(
            f"options must be a dict (or None), e.g. {{'board': ..., 'dice': (3, 1)}}; known keys: "
            f"{', '.join(known)}; got {reprlib.repr(options)} ({type(options).__name__})"
        )
    return dict(options)


def check_reset_mask(mask, n: int) -> np.ndarray:
    """A vector ``reset``'s ``options["reset_mask"]``, refused as gymnasium's ``SyncVectorEnv`` refuses it.

    Gymnasium 1.x (``SyncVectorEnv.reset`` and ``AsyncVectorEnv.reset``) takes a
    NumPy array of ``dtype=bool`` and shape ``(n,)`` with at least one True, and
    checks in this order: the type (``TypeError``), the shape (``ValueError``), the
    dtype (``TypeError``), one True (``ValueError``). The same input gets the same
    exception class here, with a message naming what was given and what is needed.
    Nothing is converted: ``[0, 2]`` is not read as ``[False, True]``, a list of
    bools is not an array.

    Returns:
        ``mask`` itself.

    Raises:
        TypeError: ``mask`` is not a NumPy array (a list or ``None`` included), or its dtype is not bool.
        ValueError: its shape is not ``(n,)``, or no entry is True (a reset that resets no game).
    """
    need = f"options['reset_mask'] must be a NumPy bool array of shape ({n},), one entry per game"
    if not isinstance(mask, np.ndarray):
        shown = reprlib.repr(mask.item() if isinstance(mask, np.generic) else mask)  # a long list cut short
        raise TypeError(f"{need}, got {shown} ({type(mask).__name__})")
    if mask.shape != (n,):
        raise ValueError(f"{need}, got shape {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"{need}, got dtype {mask.dtype}")
    if not mask.any():
        raise ValueError(f"options['reset_mask'] must be True for at least one game, got all {n} False")
    return mask


def check_arguments(
    action_mode: str,
    opponent,
    rules,
    max_plays: int,
    illegal_action: str,
    cube: bool = False,
    jacoby: bool = False,
) -> None:
    """Validate the environment arguments (see :class:`env.backgammon.BackgammonEnv`).

    Raises:
        TypeError: ``max_plays`` is not an integer (a bool, a float or a
            string included; a NumPy integer is fine): :func:`check_int`.
        ValueError: on an unknown action mode, opponent, rules object,
            ``max_plays`` outside ``1 .. MAX_PLAYS``, unknown ``illegal_action``,
            a ``cube`` or ``jacoby`` that is not a bool, or ``jacoby`` without ``cube``.
    """
    if not isinstance(action_mode, str) or action_mode not in ACTION_MODES:
        raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {show(action_mode)}")
    if not ((isinstance(opponent, str) and opponent in ("random", "self")) or callable(opponent)):
        raise ValueError(
            f"opponent must be 'random', 'self' or a callable (obs, info) -> action, got {show(opponent)}"
        )
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a nard_ai.core.rules.Rules, got {type(rules).__name__}")
    check_int("max_plays", max_plays, 1, MAX_PLAYS)
    if not isinstance(illegal_action, str) or illegal_action not in ("lose", "raise"):
        raise ValueError(f"illegal_action must be 'lose' or 'raise', got {illegal_action!r}")
    for name, value in (("cube", cube), ("jacoby", jacoby)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {value!r}")
    if jacoby and not cube:
        raise ValueError("jacoby=True needs cube=True (the Jacoby rule is about the cube)")


def option_int(name: str, value, allowed: tuple[int, ...], what: str) -> int:
    """A reset option that is one of the integers ``allowed``: a Python or NumPy integer, not a bool, float or array.

    Raises:
        ValueError: naming ``options[name]``, ``what`` it must be, and what was given.
    """
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or value not in allowed
    ):
        raise ValueError(
            f"options[{name!r}] must be {what} (an int), got {reprlib.repr(value)} ({type(value).__name__})"
        )
    return int(value)


def check_cube_options(cube: bool, value, owner) -> tuple[int | None, int | None]:
    """Validate the ``cube_value`` and ``cube_owner`` reset options.

    Returns:
        ``(value, owner)`` as ints (``None`` where not given).

    Raises:
        ValueError: if given without ``cube=True``, a value that is not a power
            of two up to :data:`nard_ai.cube.MAX_CUBE`, an owner other than
            -1 (centred), 0 or 1, or an owned cube of 1 (a centred cube above
            1 is money play with automatic doubles, and is kept).
    """
    if value is None and owner is None:
        return None, None
    if not cube:
        raise ValueError("options cube_value and cube_owner need an env made with cube=True")
    if value is not None:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or value < 1
            or value & (value - 1)
        ):
            raise ValueError(f"options['cube_value'] must be a power of two (1, 2, 4, ...), got {value!r}")
        if value > MAX_CUBE:
            raise ValueError(f"options['cube_value'] {value} is above the largest cube {MAX_CUBE}")
    if owner is not None:
        owner = option_int("cube_owner", owner, (CENTERED, 0, 1), "-1 (centred), 0 or 1")
    v = 1 if value is None else int(value)
    o = CENTERED if owner is None else int(owner)
    if o != CENTERED and v == 1:
        raise ValueError(
            f"options['cube_value'] 1 with cube_owner {o}: an owned cube is 2 or more (a cube of 1 is centred)"
        )
    # a centred cube above 1 is kept: money play with automatic doubles (gnubg's Match ID holds it)
    return v, o


def named_option(name: str, validate: Callable, value):
    """``validate(value)``, its ``ValueError`` (from :mod:`nard_ai.core.board`) prefixed with ``options[name]``."""
    try:
        return validate(value)
    except ValueError as error:
        raise ValueError(f"options[{name!r}]: {error}") from None


def warn_no_render_mode(maker: str, modes: list[str]) -> None:
    """Gymnasium's warning for ``render()`` on an env made without a render mode (its classic-control envs' words)."""
    gym_logger.warn(
        "You are calling render method without specifying any render mode. You can specify the render_mode "
        f'at initialization, e.g. {maker}("nard/Backgammon-v0", render_mode="{modes[0]}")'
    )


def check_render_mode(render_mode: str | None, modes: list[str]) -> None:
    """Raise ValueError unless ``render_mode`` is None or one of ``modes`` (single and vector env alike)."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {modes}, got {render_mode!r}")
