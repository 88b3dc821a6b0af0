"""``nard play [--ply N] [--cube]``: money games against the engine in the terminal (:mod:`nard_ai.interfaces.terminal`)."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from nard_ai.interfaces.commands.common import (
    add_checkpoint,
    add_ply,
    add_seed,
    agent_arg,
    position_arg,
    positive_int,
)

NAME = "play"
SUMMARY = "play a game against the engine in the terminal"
DESCRIPTION = (
    "A money game against the network: the board is drawn from your side (X) every turn; type "
    "plays in standard notation (24/18 13/11*, bar/22, 8/2(2), 6/off); an illegal play is refused "
    "with the reason. Commands: hint, board, help, quit, resign [single|gammon|backgammon] (or resign "
    "s, g, b: 1, 2 or 3 times the cube; the engine accepts, as gnubg does, when that is at least its own "
    "equity playing on, cubeful with --cube, at its --ply; else it declines with that equity and play goes "
    "on); Ctrl-D or Ctrl-C end the session. The engine offers to resign, as gnubg does, at its turn when "
    "the points equal its equity playing on (within 1e-6: in practice a result that is certain); answer y "
    "(the game ends with those points to you) or n (play on; neither that offer nor a smaller one is made again in the game). "
    "With --cube the engine doubles, takes and passes by its cube decisions; money "
    "rules as nard cube's without an ID: no Jacoby rule unless --jacoby (or a --position ID with it), "
    "no beavers; a line at the start says which apply."
)
EXAMPLES = ("nard play --seed 7 --first human", "nard play --ply 0 --cube", "nard play --cube --jacoby")


def configure(parser: argparse.ArgumentParser) -> None:
    """``--ply``, ``--seed``, ``--first``, ``--cube``, ``--jacoby``, ``--position``, ``--games``, ``--checkpoint``."""
    add_ply(parser, text="the engine's search depth 0..2, gnubg numbering (default: 0)")
    add_seed(parser, None, "seed of the dice, an integer 0..2**64 - 1 (default: random, printed)")
    parser.add_argument(
        "--first",
        choices=("roll", "human", "engine"),
        default="roll",
        help="who starts: the opening roll decides (default), you, or the engine",
    )
    parser.add_argument(
        "--cube", action="store_true", help="play with the doubling cube (money: no beavers; see --jacoby)"
    )
    parser.add_argument(
        "--jacoby",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --cube: the Jacoby rule, gammons count as single games until the cube is turned "
        "(default: off, as nard cube's; a --position ID's setting where it has one)",
    )
    parser.add_argument(
        "--position",
        metavar="ID",
        default=None,
        help="start every game from this position instead (its side on roll: you, or the engine with --first engine)",
    )
    parser.add_argument("--games", type=positive_int, default=None, help="stop after N games (default: ask)")
    add_checkpoint(parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Play games in the terminal until the user stops; returns 0, or 130 on Ctrl-C."""
    import secrets

    from nard_ai.interfaces.terminal import play_session

    if args.jacoby and not args.cube:
        parser.error("--jacoby needs --cube: without the cube gammons count in full")
    start, start_cube, start_dice, jacoby = None, None, None, bool(args.jacoby)
    if args.position is not None:
        start, state = position_arg(parser, args.position, playing=True)  # a game over: nothing to play
        start_cube, start_dice, jacoby = start_of(parser, state, args.cube, args.jacoby)
    agent = agent_arg(parser, args.checkpoint, args.ply)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    print(f"nard_ai: you (X) against {agent.name}. Seed {seed}. Type help for help, quit to stop.")
    result = play_session(
        agent,
        np.random.default_rng(seed),
        first=args.first,
        cube=args.cube,
        start=start,
        max_games=args.games,
        start_cube=start_cube,
        start_dice=start_dice,
        jacoby=jacoby,
    )
    return 130 if result.ended == "interrupt" else 0


def start_of(parser: argparse.ArgumentParser, state, with_cube: bool = False, jacoby: bool | None = None):
    """The cube (money :class:`~nard_ai.cube.CubeState`), the roll and the Jacoby rule of a ``--position`` ID.

    ``with_cube``, ``jacoby``: ``--cube`` and ``--jacoby`` (``None``: not given). The Jacoby rule is ``--jacoby``'s,
    else, with ``--cube``, the ID's money-play setting (as ``nard cube`` reads it). A note on stderr names the
    ID's money rules the game does not use: beavers always, the Jacoby rule without ``--cube`` or with
    ``--no-jacoby``.
    """
    from nard_ai.cube import CubeState
    from nard_ai.formats.match_id import Resignation
    from nard_ai.play.cube_policy import OWNER_BY_CODE, owner_codes

    if state is None:
        return None, None, bool(jacoby)
    if state.double_offered or state.resignation != Resignation.NONE:
        waiting = "a double" if state.double_offered else "a resignation"
        parser.error(f"in the --position ID {waiting} waits for an answer; give one before or after the roll")
    owner = OWNER_BY_CODE[int(owner_codes(state.cube_owner, state.player_on_roll))]
    try:
        cube = CubeState(value=state.cube_value, owner=owner)
    except ValueError as exc:
        parser.error(f"the cube of the --position ID: {exc}")
    if state.match_length:
        print(
            f"nard play: note: games are money games; the ID's {state.match_length}-point match score "
            "is not used (its cube and dice are)",
            file=sys.stderr,
        )
    id_jacoby = bool(state.jacoby and not state.match_length)
    use_jacoby = bool(jacoby) if jacoby is not None else bool(with_cube and id_jacoby)
    unused_jacoby = id_jacoby and not use_jacoby
    dropped = [name for name, on in (("the Jacoby rule", unused_jacoby), ("beavers", state.beavers)) if on]
    if dropped:
        why = "" if with_cube or not unused_jacoby else " (the Jacoby rule plays only with --cube)"
        print(
            f"nard play: note: the terminal game plays without {' and '.join(dropped)}; the ID's setting is "
            f"not used{why}",
            file=sys.stderr,
        )
    return cube, (state.dice if state.dice != (0, 0) else None), use_jacoby
