"""The HTTP backend's schema: the pydantic request and response models, and the strict query types.

Each endpoint's JSON body (:class:`PositionBody`, :class:`MoveBody`, :class:`CubeBody`: strict types,
unknown fields refused) and answer (:class:`MoveResponse`, :class:`EvalResponse`,
:class:`CubeResponse`, :class:`ErrorResponse`), as the OpenAPI schema shows them; and the query
parameters' strict types :data:`QInt` (digits only) and :data:`QBool` (``true`` or ``false``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic_core import PydanticCustomError

from nard_ai.core.board import BOARD_SIZE
from nard_ai.core.ply import MAX_PLY

# --------------------------------------------------------------------------- schema


class Probabilities(BaseModel):
    """gnubg's five cumulative probabilities for one side (wildbg's names)."""

    win: float = Field(description="win a single game, gammon or backgammon")
    winG: float = Field(description="win a gammon or backgammon")
    winBg: float = Field(description="win a backgammon")
    loseG: float = Field(description="lose a gammon or backgammon")
    loseBg: float = Field(description="lose a backgammon")


class CheckerMove(BaseModel):
    """One checker moved by one die, mover's numbering."""

    model_config = {"populate_by_name": True}
    from_: int = Field(alias="from", serialization_alias="from", description="1..24, 25 = bar")
    to: int = Field(description="1..24, 0 = off")


class MoveInfo(BaseModel):
    play: list[CheckerMove] = Field(description="0-4 single checker moves; empty when no move is possible")
    notation: str = Field(description="gnubg's notation, e.g. '24/18 13/11*'; '-' for no move")
    probabilities: Probabilities
    equity: float = Field(description="cubeless equity after the play, mover's view, points per game")
    mwc: float | None = Field(
        default=None,
        description="match play: the mover's cubeless match-winning chance at the score after the play "
        "(Kazaross-XG2); null in money play",
    )
    position_id: str = Field(description="gnubg Position ID of the position after the play, opponent on roll")


class MoveResponse(BaseModel):
    moves: list[MoveInfo] = Field(
        description="every legal play, best first; exactly one when no move is possible"
    )
    ranked_by: str = Field(
        default="cubeless equity",
        description="'cubeless equity' (money) or 'cubeless MWC at the score' (an ID with a match length)",
    )
    dice: tuple[int, int]
    ply: int
    position_id: str


class ErrorResponse(BaseModel):
    """A refused request."""

    detail: str = Field(description="what is wrong, naming the parameter or field")


class CubeAdvice(BaseModel):
    """wildbg's cube summary."""

    double: bool = Field(description="the side on roll should double")
    accept: bool = Field(description="the opponent should take a double")


class EvalResponse(BaseModel):
    probabilities: Probabilities
    equity: float = Field(description="cubeless equity, side on roll, before rolling")
    cube: CubeAdvice | None = Field(
        default=None, description="cube advice (money, cube centred, unless given)"
    )
    ply: int
    position_id: str


class CubeResponse(BaseModel):
    action: str = Field(description="no_double, double_take, double_pass, too_good_take or too_good_pass")
    double: bool
    accept: bool
    no_double: float
    double_take: float | None
    double_pass: float | None
    optimal: float
    cubeless_equity: float
    take_point: float | None
    probabilities: Probabilities
    cube_value: int
    cube_owner: str
    match_length: int
    score: tuple[int, int]
    mwc: dict[str, float | None] | None = Field(
        default=None, description="match play: the three equities as MWC"
    )
    ply: int
    position_id: str


class PositionBody(BaseModel):
    """A position by ID, or by the 26 counts of :mod:`nard_ai.core.board` (``board``); unknown fields are refused.

    Types are strict: an integer field takes a JSON integer only (not ``true``, ``"3"`` or ``3.0``), a
    string field a JSON string, a flag ``true`` or ``false``. A list stops at its first bad item, so a
    long list of bad values is one error.
    """

    model_config = ConfigDict(extra="forbid")
    id: StrictStr | None = Field(default=None, description="Position ID, PositionID:MatchID, or XGID")
    board: list[StrictInt] | None = Field(
        default=None, max_length=BOARD_SIZE, fail_fast=True, description="26 counts: [p0, p1, ..., p25]"
    )
    ply: StrictInt | None = Field(default=None, description=f"search depth 0..{MAX_PLY}, gnubg numbering")


class MoveBody(PositionBody):
    dice: tuple[StrictInt, StrictInt] | None = Field(
        default=None, description="the roll; default: the dice in the ID"
    )


_NOT_WITH_AN_ID_STATE = (
    "; only with a bare Position ID or a board (an ID with a Match ID, or an XGID, holds its own)"
)


class CubeBody(PositionBody):
    """A position and, with a bare Position ID or a board, the cube and match state (money, cube centred at 1
    where none is given); an ID that holds a state (a Match ID, an XGID) and any of these fields is a 400."""

    cube_value: StrictInt | None = Field(
        default=None, description="the cube's value, 1, 2, 4, ... (default 1)" + _NOT_WITH_AN_ID_STATE
    )
    cube_owner: StrictStr | None = Field(
        default=None, description="centred, on_roll or opponent (default centred)" + _NOT_WITH_AN_ID_STATE
    )
    match_length: StrictInt | None = Field(
        default=None, description="points of the match, 1..25; 0 (the default): money" + _NOT_WITH_AN_ID_STATE
    )
    score: tuple[StrictInt, StrictInt] | None = Field(
        default=None,
        description="the match score (side on roll, opponent), default [0, 0], each below match_length"
        + _NOT_WITH_AN_ID_STATE,
    )
    crawford: StrictBool | None = Field(
        default=None, description="true: the Crawford game of a match (default false)" + _NOT_WITH_AN_ID_STATE
    )
    jacoby: StrictBool | None = Field(
        default=None,
        description="true: money play under the Jacoby rule (default false)" + _NOT_WITH_AN_ID_STATE,
    )


# --------------------------------------------------------------------------- strict query types

_INT_TEXT = re.compile(r"[+-]?[0-9]+")


def _int_text(value: Any) -> Any:
    """A query integer is written in digits: ``3``, not ``3.0``, ``1e3``, `` 3`` or ``true``.

    Raises:
        PydanticCustomError: ``int_parsing`` (FastAPI's 422) for any other text.
    """
    if isinstance(value, str) and not _INT_TEXT.fullmatch(value):
        raise PydanticCustomError("int_parsing", "Input should be an integer written in digits, e.g. 3")
    return value


QInt = Annotated[int, BeforeValidator(_int_text)]


def _bool_text(value: Any) -> Any:
    """A query flag is ``true`` or ``false`` (JSON's spelling), not FastAPI's ``1``/``yes``/``on``.

    Raises:
        PydanticCustomError: ``bool_parsing`` (FastAPI's 422) for any other text.
    """
    if isinstance(value, str) and value not in ("true", "false"):
        raise PydanticCustomError("bool_parsing", "Input should be true or false")
    return value


QBool = Annotated[bool, BeforeValidator(_bool_text)]
