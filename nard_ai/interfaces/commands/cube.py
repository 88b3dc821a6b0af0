"""``nard cube ID [--ply N]``: the cube decision for X before rolling.

No double / double, take / double, pass equities, the right action and the
error of each alternative (:func:`nard_ai.cube.cube_decision`), from the
ID's cube and score (money, cube centred, without a Match ID or XGID).
"""

from __future__ import annotations

import argparse
import dataclasses

from nard_ai.formats.position import is_xgid
from nard_ai.interfaces.commands.common import (
    CUBE_MATCH_ID,
    CUBE_XGID,
    MATCH_GNUBG_ID,
    add_checkpoint,
    add_json,
    add_ply,
    add_position,
    agent_arg,
    answer_to_double,
    cube_state_arg,
    impossible_double,
    note_unused_roll,
    position_arg,
)
from nard_ai.interfaces.output import format_cube, money_rules_text, num, owner_text, print_json, probs_dict

NAME = "cube"
SUMMARY = "the cube decision: no double, double/take, double/pass"
DESCRIPTION = (
    "The cube decision for X before rolling: the three cubeful equities, the proper action, the "
    "take point and what each wrong choice costs, from the network's probabilities with "
    "nard_ai.cube.decision's model (Janowski cube efficiency; Kazaross-XG2 match equities in match play). "
    "The cube and score come from the Match ID or XGID (money, cube centred, without one), and in money "
    "play the Jacoby rule and beavers (an XGID's Jacoby field; else off unless --jacoby or --beavers, "
    "gnubg's 'set jacoby on' and 'set beavers'; the header names them). The "
    "decision is made before rolling, so an ID's dice are not used (a note on stderr says so). When "
    "the ID says X has doubled (an XGID's D, a Match ID's double offered), the same analysis answers "
    "O's take or pass, and a line says which. An ID whose game is over, or with a resignation "
    "awaiting its answer, is an error."
)
EXAMPLES = (f"nard cube {CUBE_XGID}", f"nard cube {CUBE_MATCH_ID} --json", f"nard cube {MATCH_GNUBG_ID}")


def configure(parser: argparse.ArgumentParser) -> None:
    """``ID``, ``--ply``, ``--json``, ``--checkpoint``, ``--jacoby``, ``--beavers``."""
    add_position(parser)
    add_ply(parser)
    add_json(parser)
    add_checkpoint(parser)
    only_bare = (
        "; with a bare Position ID or a money Match ID (an XGID gives these rules in its Jacoby field; a "
        "match has none)"
    )
    parser.add_argument(
        "--jacoby",
        action="store_true",
        help="money play under the Jacoby rule: a gammon or backgammon counts single while the cube is "
        "centred (gnubg's 'set jacoby on', its default for money sessions)" + only_bare,
    )
    parser.add_argument(
        "--beavers",
        action="store_true",
        help="money play with beavers: a doubled player may take and redouble at once, keeping the cube "
        "(gnubg's 'set beavers')" + only_bare,
    )


def money_rules_arg(parser: argparse.ArgumentParser, args: argparse.Namespace, state, cube):
    """``cube`` with ``--jacoby`` / ``--beavers`` applied, gnubg's session settings for a money game: with
    a bare Position ID or a money Match ID (which holds no such rules; gnubg takes them from its settings).
    An XGID holds its own (its Jacoby field) and a match has none (RULES.md §8): there they are an error
    (argparse's, status 2), as HTTP ``/cube``'s ``jacoby`` is a 400 with an ID that holds a cube state."""
    given = [flag for flag, on in (("--jacoby", args.jacoby), ("--beavers", args.beavers)) if on]
    if not given:
        return cube
    flags = " and ".join(given)
    text = args.position.strip()
    if state is not None and is_xgid(text):
        parser.error(f"{flags}: the XGID gives the money rules itself (its Jacoby field); give them there")
    if not cube.is_money:
        parser.error(
            f"{flags}: money-play rules, and the ID is a {cube.match_length}-point match (docs/RULES.md §8: "
            "the Jacoby rule and beavers do not apply to matches)"
        )
    return dataclasses.replace(cube, jacoby=args.jacoby, beavers=args.beavers)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the cube decision of the position at the ID's cube and score (text, or ``--json``); returns 0."""
    from nard_ai.cube import cube_decision
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.position_id import position_id
    from nard_ai.reports.analysis import cube_action_text

    # a double awaiting its answer is this very question, for the taker (as UBGI's go cube and HTTP /cube)
    board, state = position_arg(parser, args.position, playing=True, double_ok=True)
    note_unused_roll(parser, state, "a cube decision is made before rolling")
    cube = money_rules_arg(parser, args, state, cube_state_arg(parser, state))
    agent = agent_arg(parser, args.checkpoint, args.ply)
    try:
        d = cube_decision(board, cube, agent=agent)
    except ValueError as exc:
        parser.error(str(exc))
    impossible = impossible_double(state, d)
    if impossible is not None:
        parser.error(f"position {args.position!r}: {impossible}")
    # the taker's answer when the ID says X has doubled (UBGI's bestcube, HTTP /cube's accept)
    answer = answer_to_double(d) if state is not None and state.double_offered else None
    if args.json:
        print_json(
            {
                "position_id": position_id(board),
                "ply": agent.ply,
                "cube": {
                    "value": cube.value,
                    "owner": cube.owner,
                    "match_length": cube.match_length,
                    "score": list(cube.score),
                    "crawford": cube.crawford,
                    "jacoby": cube.jacoby,
                    "beavers": cube.beavers,
                },
                "probabilities": probs_dict(d.probs),
                "cubeless_equity": num(d.cubeless_equity),
                "cube_available": d.cube_available,
                "action": d.action,
                "proper_action": cube_action_text(d),
                "beaver": d.beaver,
                "equities": {k: num(v) for k, v in d.equities.items()},
                "mwc": None
                if cube.is_money
                else {
                    "no_double": num(d.no_double_mwc),
                    "double_take": num(d.double_take_mwc),
                    "double_pass": num(d.double_pass_mwc),
                },
                "errors": {k: num(v) for k, v in d.errors.items()},
                "take_point": num(d.take_point),
                "efficiency": num(d.efficiency),
                # the doubled side's answer when the ID says X has doubled, else null
                "answer_to_double": answer,
            }
        )
        return 0
    print(render_board(board))
    print()
    kind = (
        f"money game ({money_rules_text(cube)})"  # the rules the equities apply (the ID's; none without one)
        if cube.is_money
        else f"{cube.match_length}-point match at X {cube.score[0]}, O {cube.score[1]}"
    )
    print(f"Cube analysis, {agent.ply}-ply ({agent.name}): {kind}, cube {cube.value} {owner_text(cube)}")
    print(format_cube(d, cube))
    if answer is not None:
        print(f"X has doubled to {2 * cube.value}: O's proper answer is {answer}")
    return 0
