"""``nard hint ID [--dice 31] [--ply N]``: every legal play of the roll, best first.

Each play with its cubeless equity for X (points per game), its difference
from the best (``diff``, <= 0, gnubg's convention) and the five
probabilities; in match play (a Match ID or XGID with a match length) ranked
by cubeless match-winning chance at the score
(:func:`nard_ai.reports.analysis.score_plays`).
"""

from __future__ import annotations

import argparse

import numpy as np

from nard_ai.interfaces.commands.common import (
    DMP_XGID,
    START_ID,
    START_XGID_52,
    add_checkpoint,
    add_json,
    add_ply,
    add_position,
    agent_arg,
    cube_state_arg,
    id_roll,
    non_negative_int,
    parse_dice,
    position_arg,
    roll_conflict,
)
from nard_ai.interfaces.output import format_hint, match_text, print_json, probs_dict, scored_plays

NAME = "hint"
SUMMARY = "rank the legal plays of a roll by the network's equity"
DESCRIPTION = (
    "Every legal play of the roll, best first, with its cubeless equity for X (points per game), "
    "its difference from the best play (diff, negative, as gnubg shows it; the same number in "
    "--json), and the win / gammon / backgammon probabilities. In match play (a Match ID or XGID "
    "with a match length) the plays are ranked by their cubeless match-winning chance at the score "
    "(Kazaross-XG2), shown as mwc, diff in MWC and emg (the MWC as normalised equity). The roll "
    "comes from --dice, or from the ID (a Match ID or XGID with dice; --dice may repeat that roll, "
    "not differ from it). A roll with no legal play says so and values the board left as it is "
    "(--json: legal_plays 0, the one row's play '-'). An ID whose game is over, or with a double or "
    "resignation awaiting its answer, has no play to rank: an error."
)
EXAMPLES = (
    f"nard hint {START_ID} --dice 31",
    f"nard hint --dice 3 1 {START_ID}",
    f"nard hint {START_XGID_52} --top 3 --json",
    f"nard hint {DMP_XGID} --top 3",
)


def configure(parser: argparse.ArgumentParser) -> None:
    """``ID``, ``--dice``, ``--ply``, ``--top``, ``--json``, ``--checkpoint``."""
    add_position(parser)
    parser.add_argument(
        "--dice",
        default=None,
        metavar="D",
        help="the roll: --dice 31, --dice 3-1 or --dice 3 1, before or after the ID",
    )
    add_ply(parser)
    parser.add_argument(
        "--top", type=non_negative_int, default=0, help="show only the best N plays (default: 0 = all)"
    )
    add_json(parser)
    add_checkpoint(parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Rank the roll's legal plays and print them (text, or ``--json``); returns 0."""
    from nard_ai.formats.ascii import render_board
    from nard_ai.formats.notation import play_notation
    from nard_ai.formats.position_id import position_id

    board, state = position_arg(parser, args.position, playing=True)
    dice = id_roll(state)
    if args.dice is not None:
        try:
            given = parse_dice([args.dice])
        except ValueError as exc:
            parser.error(f"bad dice: {exc}")
        conflict = roll_conflict(state, given, "--dice gives")  # as HTTP /move: no silent winner
        if conflict is not None:
            parser.error(f"bad dice: {conflict}")
        dice = given
    elif dice is None:
        parser.error("give the roll with --dice (e.g. --dice 31); the ID has no dice")
    cube = cube_state_arg(parser, state)
    agent = agent_arg(parser, args.checkpoint, args.ply)
    scored = scored_plays(agent.rank_plays(board, dice), cube)
    # no legal play: the one "play" ranked is the board left as it is (gnubg: "no legal moves")
    can_move = not (len(scored) == 1 and np.array_equal(scored.afterstates[0], board))
    if args.json:
        n = len(scored) if args.top <= 0 else min(args.top, len(scored))
        diff = scored.diff
        plays = []
        for i in range(n):
            row = {
                "rank": i + 1,
                "play": play_notation(board, scored.afterstates[i], dice),
                "equity": round(float(scored.equity[i]), 6),
            }
            if scored.by_mwc:
                row["mwc"] = round(float(scored.mwc[i]), 6)
                row["emg"] = round(float(scored.emg[i]), 6)
            row["diff"] = round(float(diff[i]), 6)
            row["depth"] = int(scored.plies[i])  # the ply it was valued at
            row["probabilities"] = probs_dict(scored.probs[i])
            plays.append(row)
        print_json(
            {
                "position_id": position_id(board),
                "dice": list(dice),
                "ply": agent.ply,
                "agent": agent.name,
                "ranked_by": scored.ranked_by,
                "diff_unit": "mwc" if scored.by_mwc else "cubeless equity, points per game",
                "match": None
                if not scored.by_mwc
                else {
                    "length": cube.match_length,
                    "score": list(cube.score),
                    "crawford": cube.crawford,
                    "cube_value": cube.value,
                    "cube_owner": cube.owner,
                },
                # 0 when X cannot move; "plays" then holds the board left as it is, "-" (as HTTP /move)
                "legal_plays": len(scored) if can_move else 0,
                "plays": plays,
            }
        )
        return 0
    print(render_board(board, dice))
    print()
    count = f"{len(scored)} legal play{'s' if len(scored) != 1 else ''} for {dice[0]}-{dice[1]}"
    if not can_move:
        value = (
            f"MWC at the score ({match_text(cube)}; {agent.name})"
            if scored.by_mwc
            else f"equity ({agent.name})"
        )
        print(
            f"No legal play for {dice[0]}-{dice[1]}: X cannot move and the board stays as it is; its "
            f"cubeless {value} and probabilities for the side on roll:"
        )
    elif scored.by_mwc:
        print(
            f"{count}, ranked by {agent.ply}-ply cubeless MWC at the score ({match_text(cube)}; {agent.name});"
        )
        print(
            "mwc: match-winning chance (Kazaross-XG2), diff: against the best, emg: the MWC as normalised "
            "equity; probabilities for the side on roll:"
        )
    else:
        print(
            f"{count}, ranked by {agent.ply}-ply cubeless equity ({agent.name}); "
            "diff: against the best; probabilities for the side on roll:"
        )
    print(format_hint(board, dice, scored, args.top, agent.ply))
    if agent.ply > 0 and len(scored.plies) and int(np.min(scored.plies[: args.top or None])) < agent.ply:
        print(
            f"ply: the depth each play was valued at; plays the move filters drop, and a play they "
            f"leave alone (decided), are valued at less than {agent.ply}-ply, as in gnubg"
        )
    return 0
