"""The web board: a page at ``/`` and the JSON endpoints it needs, served by ``nard serve``.

The page (``static/index.html``, ``board.js``, ``board.css``: plain files, no build step, nothing
from a CDN) draws the board as SVG and talks to the engine over JSON. It uses the backend's
``POST /move`` (the ranked plays, the same code and order as every other client) and ``POST /cube``
(the cube decision), and the endpoints of this module:

==========================  ===================================================================
endpoint                    what
==========================  ===================================================================
``GET /``                   the page
``GET /static/{name}``      its script, style sheet and icon (a fixed list; anything else 404)
``POST /web/position``      a position by ID or by the 26 counts, decoded: the board, its
                            Position ID and XGID, pip counts, dice, cube and score
``POST /web/plays``         every legal play of a position and roll (no evaluation), each as
                            single checker moves, notation and the board after it
``POST /web/roll``          a web game's roll: :func:`game_dice` of ``seed`` and ``turn``
``POST /web/reply``         the engine's turn in a game against it: the roll (given, or drawn
                            from ``seed`` and ``turn``), the play it chooses, the board after
``POST /web/rollout``       start a rollout (bounded: :data:`MAX_ROLLOUT_GAMES` games, ply 0..
                            :data:`MAX_ROLLOUT_PLY`, :data:`MAX_ROLLOUT_SECONDS` of wall time,
                            one at a time); answers ``202`` with a job id
``GET /web/rollout/{job}``  the job's progress (games done of games) and, when done, its result
``DELETE /web/rollout/{job}``  cancel it
``POST /web/analysis``      analyse a match: the ``.mat`` file as the raw body (at most
                            :data:`MAX_MAT_BYTES` bytes and :data:`MAX_MAT_RECORDS` records);
                            the error list (each decision with its ``.mat`` move ``N)`` and
                            line), per-player totals, the equity-swing chart data and the
                            record's warnings (a later game naming other players)
==========================  ===================================================================

Perspective: every board is the signed ``(26,)`` layout of :mod:`nard_ai.core.board` seen from
the **side on roll** of the request's position (``board[1..24]`` the mover's points, positive =
the mover's checkers; ``board[25]`` the mover's bar, ``board[0]`` the opponent's bar, negative);
probabilities and equities are for that side unless a field says otherwise. Points in checker
moves are in the mover's numbering, 25 = the bar, 0 = off.

Errors are those of the backend (:mod:`nard_ai.interfaces.http`, whose request decoding these
handlers reuse): a malformed request is a ``400`` naming the field, a schema error a ``422``,
strict JSON types, unknown fields refused, a query parameter of a JSON endpoint (or of the rollout
job's ``GET`` and ``DELETE``) refused (``400``); a ply out of its range is a ``400`` here too
(``/web/rollout`` and ``/web/analysis``: 0..1), a query value of the wrong type a ``422``.
Further: an unknown rollout job is a ``404``; a second rollout while one runs (in any worker
process: the jobs are files in a folder the workers share, :mod:`nard_ai.interfaces.web_jobs`) a
``429``; a ``.mat`` body over :data:`MAX_MAT_BYTES` a ``413`` (the server's own body limit applies first); a body that is not
a ``.mat`` record a ``400`` naming the line.

Games against the engine are cubeless money games (no doubling): the human takes the first
(opening, never a double) roll and the bottom side of the board; each roll is a pure function of
``(seed, turn)`` (:func:`game_dice`), so a seed replays a game.

Structure, as the backend's :mod:`nard_ai.interfaces.http.endpoints`: each endpoint is one
module-level handler (``page``, ``static``, ``post_position``, ``post_plays``, ``post_roll``,
``post_reply``, ``post_rollout``, ``get_rollout``, ``delete_rollout``, ``post_analysis``) plus its
pydantic schema (the body and response models below), on the module's :data:`router`; their work
that needs no HTTP is in module functions (``_run_job``, ``_find``, ``_analyse``). What the handlers
share (the backend's engine glue, ``max_mat_bytes``, the rollout jobs and the agents of rollouts and
analyses) is one frozen :class:`WebBoard`, kept on ``app.state.web_board`` and handed to a handler
by the dependency :data:`WebDep`, as the backend's ``EngineDep`` hands it the engine. The static
folder and the other limits are the module's constants. :func:`install_web_board` gives an app the
state and the routes (:func:`nard_ai.interfaces.http.app.create_app` does); :func:`web_router`, for
an app that includes a router itself, checks its arguments, builds the state and returns the routes,
whose first request keeps the state on the app. ``POST /web/analysis`` is added by :func:`_routes`
rather than on :data:`router`, because its OpenAPI text names the app's ``max_mat_bytes``.

To add an endpoint: its body and response models in the schema section (the body model also in
:data:`BODY_MODELS`), one handler on :data:`router` taking the body and ``web: WebDep`` (a note
as a comment: FastAPI would publish a docstring), a row in the table above, and tests in
``tests/test_web.py``. A new shared object goes in a :class:`WebBoard` field.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from starlette.concurrency import run_in_threadpool

from nard_ai.core.board import BOARD_SIZE, game_result, pip_count, swap_sides
from nard_ai.core.movegen import legal_plays
from nard_ai.cube.state import cube_state_from_match
from nard_ai.formats.match_id import MatchState, match_id, not_playing
from nard_ai.formats.notation import move_sequences, play_notation
from nard_ai.formats.position import parse_position
from nard_ai.formats.position_id import position_id
from nard_ai.formats.xgid import to_xgid
from nard_ai.interfaces.external import checker_moves
from nard_ai.interfaces.web_jobs import JobBusy, RolloutJobs
from nard_ai.search.lookahead import MAX_PLY, agent_value

__all__ = [
    "web_router", "install_web_board", "WebBoard", "WebDep", "router", "game_dice", "BODY_MODELS", "MAX_ROLLOUT_GAMES", "MAX_ROLLOUT_PLY", "MAX_ROLLOUT_SECONDS",
    "MAX_ROLLOUT_JOBS", "MAX_MAT_BYTES",
    "MAX_MAT_RECORDS", "MAX_ANALYSIS_PLY", "MAX_TURN", "STATIC_DIR", "STATIC_FILES",
]  # fmt: skip

MAX_ROLLOUT_GAMES = (
    5_184  # games of one web rollout (4 x 1296): 1296 took 44 s at 0-ply on the loaded 2-core machine
)
MAX_ROLLOUT_PLY = 1  # a 2-ply rollout of thousands of games takes hours on 2 cores
MAX_ROLLOUT_SECONDS = 600.0  # wall-clock seconds a rollout job may run; then it stops ("timed_out")
MAX_ROLLOUT_JOBS = 8  # rollout jobs kept (running or finished); the oldest finished one makes room
#: games in flight of a web rollout, by its ply: at 1-ply small batches, so that games finish (and
#: the progress moves) every few seconds instead of all together near the end
ROLLOUT_BATCH = {0: 1296, 1: 36}
MAX_MAT_BYTES = 65_536  # a .mat upload; a 25-point match of about 40 games is some 40 kB
MAX_MAT_RECORDS = 2_000  # rolls, doubles, takes and passes of one analysed match
MAX_ANALYSIS_PLY = 1  # analysis depth over HTTP (a 2-ply analysis of a long match takes minutes)
MAX_TURN = 10_000  # turns of one web game (a game lasts well under 200)
MAX_SEED = 2**63 - 1

STATIC_DIR = Path(__file__).with_name("static")
STATIC_FILES = {  # name -> media type: the only files served
    "board.js": "text/javascript; charset=utf-8",
    "board.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}

# --------------------------------------------------------------------------- schema


class BoardBody(BaseModel):
    """A position by ID or by the 26 counts of :mod:`nard_ai.core.board`; unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")
    id: StrictStr | None = Field(default=None, description="Position ID, PositionID:MatchID, or XGID")
    board: list[StrictInt] | None = Field(
        default=None, max_length=BOARD_SIZE, fail_fast=True, description="26 counts: [p0, p1, ..., p25]"
    )


class PlaysBody(BoardBody):
    dice: tuple[StrictInt, StrictInt] | None = Field(default=None, description="the roll; default: the ID's")


class ReplyBody(BoardBody):
    """The engine's turn: the position with the engine on roll."""

    dice: tuple[StrictInt, StrictInt] | None = Field(
        default=None,
        description="the engine's roll; default: game_dice(seed, turn) (a 400 with seed or turn)",
    )
    seed: StrictInt = Field(default=0, ge=0, le=MAX_SEED, description="the game's seed")
    turn: StrictInt = Field(default=1, ge=0, le=MAX_TURN, description="0-based turn number of the game")
    ply: StrictInt | None = Field(default=None, description=f"search depth 0..{MAX_PLY}, gnubg numbering")


class RollBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: StrictInt = Field(default=0, ge=0, le=MAX_SEED)
    turn: StrictInt = Field(default=0, ge=0, le=MAX_TURN, description="0 = the opening roll (no double)")


class RolloutBody(BoardBody):
    games: StrictInt = Field(default=1296, ge=1, le=MAX_ROLLOUT_GAMES, description="games to play")
    ply: StrictInt = Field(
        default=0,
        description=f"the rollout's search depth, 0..{MAX_ROLLOUT_PLY} (a 400 outside, as every ply)",
    )
    seed: StrictInt = Field(default=0, ge=0, le=MAX_SEED, description="seed of the dice")
    truncate: StrictInt | None = Field(
        default=None, ge=1, le=1000, description="stop each game after this many plies"
    )
    cubeful: StrictBool = Field(
        default=False, description="roll out with the cube (the ID's cube and score, else money centred)"
    )


class PositionInfo(BaseModel):
    board: list[int] = Field(description="26 counts, side on roll's view")
    position_id: str
    xgid: str
    match_id: str | None = Field(description="gnubg Match ID when the request's ID held one")
    pips: tuple[int, int] = Field(description="pip counts (side on roll, opponent)")
    off: tuple[int, int] = Field(description="checkers borne off (side on roll, opponent)")
    dice: tuple[int, int] = Field(description="the ID's dice, (0, 0) when not rolled")
    cube_value: int
    cube_owner: str = Field(description="centred, on_roll or opponent")
    match_length: int = Field(description="0 = money")
    score: tuple[int, int] = Field(description="(side on roll, opponent)")
    crawford: bool
    game_over: bool


class WebMove(BaseModel):
    model_config = {"populate_by_name": True}
    from_: int = Field(alias="from", serialization_alias="from", description="1..24, 25 = bar")
    to: int = Field(description="1..24, 0 = off")


class LegalPlay(BaseModel):
    play: list[WebMove] = Field(description="single checker moves, one per die used; [] for no move")
    sequences: list[list[WebMove]] = Field(
        description="every set of single checker moves that gives this play (the dice in another order, "
        "one checker moving on or two moving once): the page accepts any of them"
    )
    notation: str = Field(description="gnubg's notation; '-' for no move")
    board_after: list[int] = Field(description="the afterstate, still the mover's view")
    position_id: str = Field(description="Position ID after the play, opponent on roll")


class PlaysResponse(BaseModel):
    plays: list[LegalPlay] = Field(description="every legal play (in move generation's sorted order)")
    dice: tuple[int, int]
    position_id: str


class RollResponse(BaseModel):
    dice: tuple[int, int]
    seed: int
    turn: int


class ReplyResponse(BaseModel):
    dice: tuple[int, int]
    play: list[WebMove]
    notation: str
    equity: float = Field(description="cubeless equity after the play, the engine's view")
    board_after: list[int] = Field(description="the board after the play, the human's view (its roll next)")
    position_id: str = Field(description="Position ID after the play, the human on roll")
    result: int = Field(description="0 while the game runs; 1/2/3: the engine won a single/gammon/backgammon")
    ply: int


class JobStarted(BaseModel):
    job: str = Field(description="the job id, for GET/DELETE /web/rollout/{job}")
    games: int


class RolloutOutcome(BaseModel):
    probs: list[float] = Field(description="win, winG, winBg, loseG, loseBg for the side on roll")
    probs_ci: list[float] = Field(description="95% half-widths")
    equity: float = Field(description="cubeless money equity, side on roll, points per game")
    equity_ci: float
    cubeful: float | None = Field(description="money: points per unit cube; match: MWC; null if cubeless")
    cubeful_ci: float | None
    games: int
    truncated: int
    mean_plies: float
    seconds: float
    variance_reduction: bool


class JobStatus(BaseModel):
    job: str
    state: str = Field(description="running, done, cancelled, timed_out or failed")
    games_done: int
    games: int
    seconds: float
    error: str | None = None
    result: RolloutOutcome | None = None


class SwingPoint(BaseModel):
    index: int = Field(description="0-based index into decisions")
    game: int
    turn: int
    player: int
    equity: float = Field(description="seat 0's cubeless equity before the decision, points per game")
    win: float = Field(description="seat 0's chance to win the game before the decision")
    loss: float = Field(description="the decision's loss (EMG) for the player who made it")


class AnalysisResponse(BaseModel):
    analysis: dict[str, Any] = Field(
        description="nard_ai.reports.analysis.MatchAnalysis.to_dict(); each decision names its record by "
        "game, mat_move (the N) of its .mat line) and line (the file's 1-based line), as nard analyze does"
    )
    swing: list[SwingPoint] = Field(description="one point per decision, in match order")
    warnings: list[str] = Field(
        description="nard_ai.formats.mat.read_mat's warnings about the record, each naming its line (a later "
        "game naming other players: game 1's names are kept); empty when there are none"
    )


BODY_MODELS: dict[str, type[BaseModel]] = {
    "/web/position": BoardBody,
    "/web/plays": PlaysBody,
    "/web/reply": ReplyBody,
    "/web/roll": RollBody,
    "/web/rollout": RolloutBody,
}
"""The body model of each JSON endpoint, for the backend's message naming an unknown field."""

# --------------------------------------------------------------------------- engine glue (no HTTP)


def game_dice(seed: int, turn: int) -> tuple[int, int]:
    """The roll of ``turn`` (0-based) in the web game of ``seed``: a pure function of both.

    Turn 0 is the opening roll, drawn from the 30 non-double rolls (docs/RULES.md §2: the opening roll is
    rolled again on a double); later turns from all 36. Draws come from
    ``np.random.default_rng([seed, turn])`` (NumPy's SeedSequence of the pair).

    Raises:
        ValueError: on a seed outside ``0 .. 2**63 - 1`` or a turn outside ``0 ..`` :data:`MAX_TURN`.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an integer 0..2**63-1, got {seed!r}")
    if isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn <= MAX_TURN:
        raise ValueError(f"turn must be an integer 0..{MAX_TURN}, got {turn!r}")
    rng = np.random.default_rng([seed, turn])
    if turn == 0:
        k = int(rng.integers(30))  # the 30 ordered rolls with two different dice
        d1 = k // 5 + 1
        d2 = k % 5 + 1
        return (d1, d2 + (d2 >= d1))
    d = rng.integers(1, 7, size=2)
    return int(d[0]), int(d[1])


def _moves(board: np.ndarray, after: np.ndarray, dice: tuple[int, int]) -> list[WebMove]:
    return [WebMove(**{"from": s, "to": d}) for s, d in checker_moves(board, after, dice)]


def _sequences(board: np.ndarray, after: np.ndarray, dice: tuple[int, int]) -> list[list[WebMove]]:
    """Every multiset of single checker moves from ``board`` to ``after`` (notation's own search), sorted."""
    start = tuple(int(c) for c in board)
    target = tuple(int(c) for c in after)
    if start == target:
        return [[]]
    found = move_sequences(start, target, (dice[0],) * 4 if dice[0] == dice[1] else dice)
    return [[WebMove(**{"from": s, "to": d}) for s, d in seq] for seq in sorted(found)]


def _position_info(board: np.ndarray, state: MatchState | None) -> PositionInfo:
    cube = cube_state_from_match(state)
    pips = pip_count(board)
    off_me = 15 - int(board[board > 0].sum())
    off_opp = 15 - int(-board[board < 0].sum())
    xgid = to_xgid(board, state) if state is not None else to_xgid(board)
    return PositionInfo(
        board=[int(c) for c in board],
        position_id=position_id(board),
        xgid=xgid,
        match_id=None if state is None else match_id(state),
        pips=(int(pips[0]), int(pips[1])),
        off=(off_me, off_opp),
        dice=(0, 0) if state is None else tuple(int(d) for d in state.dice),
        cube_value=cube.value,
        cube_owner=cube.owner,
        match_length=cube.match_length,
        score=cube.score,
        crawford=cube.crawford,
        game_over=bool(game_result(board) != 0 or not (board > 0).any() or not (board < 0).any()),
    )


def _status(record: dict) -> JobStatus:
    """A job's :class:`JobStatus` from its :class:`~nard_ai.interfaces.web_jobs.RolloutJobs` record."""
    end = record["finished"] if record["finished"] is not None else time.time()
    return JobStatus(
        job=record["job"],
        state=record["state"],
        games_done=record["games_done"],
        games=record["games"],
        seconds=round(max(0.0, end - record["started"]), 3),
        error=record["error"],
        result=None if record["result"] is None else RolloutOutcome(**record["result"]),
    )


class _Cancelled(Exception):
    """Raised from the rollout's progress callback to stop it; its message is the job's new state."""


def _outcome(r) -> RolloutOutcome:
    def num(v):
        return None if v is None or not np.isfinite(v) else float(v)

    return RolloutOutcome(
        probs=[float(v) for v in r.probs],
        probs_ci=[float(v) for v in r.probs_ci],
        equity=float(r.equity),
        equity_ci=float(r.equity_ci),
        cubeful=num(r.cubeful),
        cubeful_ci=num(r.cubeful_ci),
        games=int(r.games),
        truncated=int(r.truncated),
        mean_plies=float(r.mean_plies),
        seconds=float(r.seconds),
        variance_reduction=bool(r.variance_reduction),
    )


def _bad(message: str, status: int = 400) -> HTTPException:
    return HTTPException(status_code=status, detail=message)


def _cut(text: str, most: int = 20) -> str:
    """A refused value as quoted back in a 400: at most ``most`` characters."""
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


_DIGITS = re.compile(r"[+-]?[0-9]+")
_DIGITS_MAX = 4300  # pydantic's longest integer text, as the backend's strict query integers


def _query_errors(ply: str | None, errors_only: str | None) -> list[dict[str, Any]]:
    """``POST /web/analysis``'s query values of the wrong type, as FastAPI's 422 errors: the same answers
    as the backend's strict query types (``QInt``: digits only; ``QBool``: ``true`` or ``false``), which
    this module cannot import (the backend imports it)."""
    errors: list[dict[str, Any]] = []
    if ply is not None and not _DIGITS.fullmatch(ply):
        message = "Input should be an integer written in digits, e.g. 3"
        errors.append({"type": "int_parsing", "loc": ("query", "ply"), "msg": message, "input": ply})
    elif ply is not None and len(ply.lstrip("+-").lstrip("0")) + ply.startswith("-") > _DIGITS_MAX:
        message = "Unable to parse input string as an integer, exceeded maximum size"
        errors.append({"type": "int_parsing_size", "loc": ("query", "ply"), "msg": message, "input": ply})
    if errors_only not in (None, "true", "false"):
        message = "Input should be true or false"
        errors.append(
            {"type": "bool_parsing", "loc": ("query", "errors_only"), "msg": message, "input": errors_only}
        )
    return errors


# --------------------------------------------------------------------------- the state the handlers share


@dataclass(frozen=True, eq=False)
class WebBoard:
    """What the web board's handlers share: the backend's engine glue, the limits and the rollout jobs.

    One per app, kept on ``app.state.web_board`` (:func:`install_web_board`, or the first request
    through :func:`web_router`'s router); a handler gets it through :data:`WebDep`. Build it with
    :meth:`create`, which checks the arguments. The fields are :func:`web_router`'s arguments, and:

    - ``jobs``: the rollout jobs (:class:`nard_ai.interfaces.web_jobs.RolloutJobs`, at most
      :data:`MAX_ROLLOUT_JOBS` kept), in ``jobs_folder``;
    - ``rollout_agents``, ``analysis_agents``: ``ply -> agent`` from ``agent_factory``, built on first
      use (one rollout and one analysis at a time, so they never hold ``eval_lock``);
    - ``analysis_lock``: one analysis at a time, on its own agent: ``/move`` is not held up;
    - ``analysis_gate``: the requests waiting for it wait on the event loop (:meth:`analysis_turn`),
      not each on a thread of FastAPI's pool, which 40 waiting uploads would fill, holding up every
      other ``/web/*`` endpoint and the page itself.
    """

    agent_for: Callable[[int | None], Any]
    eval_lock: threading.Lock
    decode: Callable[..., tuple[np.ndarray, MatchState | None]]
    live: Callable[[np.ndarray, MatchState | None], None]
    dice_of: Callable[..., tuple[int, int]]
    agent_factory: Callable[[int], Any]
    max_mat_bytes: int
    jobs: RolloutJobs
    rollout_agents: dict[int, Any] = field(default_factory=dict)
    analysis_agents: dict[int, Any] = field(default_factory=dict)
    analysis_lock: threading.Lock = field(default_factory=threading.Lock)
    analysis_gate: list = field(default_factory=lambda: [None, None])  # [event loop, its asyncio.Lock]

    @classmethod
    def create(
        cls,
        agent_for: Callable[[int | None], Any],
        eval_lock: threading.Lock,
        decode: Callable[..., tuple[np.ndarray, MatchState | None]],
        live: Callable[[np.ndarray, MatchState | None], None],
        dice_of: Callable[..., tuple[int, int]],
        agent_factory: Callable[[int], Any],
        max_mat_bytes: int = MAX_MAT_BYTES,
        jobs_folder: str | Path | None = None,
    ) -> WebBoard:
        """The state over the backend's engine (the arguments as :func:`web_router`'s).

        Raises:
            ValueError: on a ``max_mat_bytes`` that is not a positive integer.
        """
        if isinstance(max_mat_bytes, bool) or not isinstance(max_mat_bytes, int) or max_mat_bytes < 1:
            raise ValueError(f"max_mat_bytes must be a positive integer, got {max_mat_bytes!r}")
        return cls(
            agent_for, eval_lock, decode, live, dice_of, agent_factory, max_mat_bytes,
            RolloutJobs(jobs_folder, max_jobs=MAX_ROLLOUT_JOBS),
        )  # fmt: skip

    def analysis_turn(self) -> asyncio.Lock:
        """The lock an analysis request holds, on the event loop, while its analysis runs (one per loop:
        a lock serves the loop it was first awaited on)."""
        loop = asyncio.get_running_loop()
        if self.analysis_gate[0] is not loop:
            self.analysis_gate[:] = [loop, asyncio.Lock()]
        return self.analysis_gate[1]

    async def attach(self, request: Request) -> None:
        """Keep this state on the request's app (``app.state.web_board``) unless it is there already:
        the router-level dependency of :func:`web_router`'s router, for apps that only include it."""
        if getattr(request.app.state, "web_board", None) is not self:
            request.app.state.web_board = self


async def _web_board(request: Request) -> WebBoard:
    return request.app.state.web_board


WebDep = Annotated[WebBoard, Depends(_web_board)]
"""A handler's :class:`WebBoard`: ``app.state.web_board``."""

# --------------------------------------------------------------------------- the handlers, one per endpoint

router = APIRouter()
"""The web board's endpoints but ``POST /web/analysis`` (whose OpenAPI text names the app's body limit:
:func:`_routes` adds it); :func:`web_router` and :func:`install_web_board` give an app both."""

# Each handler's note is a comment, not a docstring: FastAPI would publish a docstring as the
# endpoint's OpenAPI description.


# The page, ``static/index.html``.
@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def page() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8")


# One of :data:`STATIC_FILES` with its media type; any other name is a 404.
@router.get("/static/{name}", include_in_schema=False)
def static(name: str) -> FileResponse:
    if name not in STATIC_FILES:
        raise _bad(f"no static file {name[:40]!r}", 404)
    return FileResponse(STATIC_DIR / name, media_type=STATIC_FILES[name])


# The position of ``body`` decoded (400s from the backend's decoding).
@router.post(
    "/web/position", response_model=PositionInfo, summary="decode a position (web board)", tags=["web"]
)
def post_position(body: BoardBody, web: WebDep) -> PositionInfo:
    board, state = web.decode(body.id, body.board)
    # the board shows games being played (a finished board is marked game_over): the state check of
    # the other endpoints, a double awaiting its answer shown (the page's cube panel answers it)
    reason = not_playing(state, double_ok=True)
    if reason is not None:
        raise _bad(f"id: {reason}")
    try:
        return _position_info(board, state)
    except ValueError as exc:  # a match state the page cannot show: a score past the match, 26+ points
        raise _bad(f"id: the match state cannot be shown: {exc}") from None


# Every legal play of the position and roll (the ID's dice by default), in move generation's order; a
# finished game or bad dice is a 400.
@router.post("/web/plays", response_model=PlaysResponse, summary="legal plays, no evaluation", tags=["web"])
def post_plays(body: PlaysBody, web: WebDep) -> PlaysResponse:
    board, state = web.decode(body.id, body.board)
    web.live(board, state)
    die1, die2 = body.dice if body.dice is not None else (None, None)
    dice = web.dice_of(die1, die2, state, ("dice[0]", "dice[1]"))
    rules = web.agent_for(None).rules
    plays = []
    for after in legal_plays(board, dice, rules):
        plays.append(
            LegalPlay(
                play=_moves(board, after, dice),
                sequences=_sequences(board, after, dice),
                notation=play_notation(board, after, dice),
                board_after=[int(c) for c in after],
                position_id=position_id(swap_sides(after)),
            )
        )
    return PlaysResponse(plays=plays, dice=dice, position_id=position_id(board))


# :func:`game_dice` of the body's ``seed`` and ``turn``.
@router.post("/web/roll", response_model=RollResponse, summary="a web game's roll", tags=["web"])
def post_roll(body: RollBody) -> RollResponse:
    return RollResponse(dice=game_dice(body.seed, body.turn), seed=body.seed, turn=body.turn)


# The engine's best play for its roll (``dice``, else the ID's roll, else :func:`game_dice`), searched under ``eval_lock``; the
# board after it is the human's view. A bad ply or dice, a finished game: 400.
@router.post("/web/reply", response_model=ReplyResponse, summary="the engine's turn in a game", tags=["web"])
def post_reply(body: ReplyBody, web: WebDep) -> ReplyResponse:
    board, state = web.decode(body.id, body.board)
    web.live(board, state)
    rolled = state is not None and tuple(state.dice) != (0, 0)
    drawn = bool({"seed", "turn"} & body.model_fields_set)
    if body.dice is None and rolled:  # the ID's roll, as /web/plays and /move take it
        if drawn:
            raise _bad(
                f"the ID holds the roll {state.dice[0]}-{state.dice[1]}: give seed and turn only with an ID without dice"
            )
        dice = web.dice_of(None, None, state, ("dice[0]", "dice[1]"))
    elif body.dice is None:
        dice = game_dice(body.seed, body.turn)
    elif drawn:
        raise _bad("give dice, or seed and turn to draw them, not both")
    else:
        dice = web.dice_of(body.dice[0], body.dice[1], state, ("dice[0]", "dice[1]"))
    agent = web.agent_for(body.ply)
    with web.eval_lock:
        ranked = agent.rank_plays(board, dice)
    after = ranked.afterstates[0]
    return ReplyResponse(
        dice=dice,
        play=_moves(board, after, dice),
        notation=play_notation(board, after, dice),
        equity=float(ranked.equity[0]),
        board_after=[int(c) for c in swap_sides(after)],
        position_id=position_id(swap_sides(after)),
        result=abs(int(game_result(after))),
        ply=agent.ply,
    )


# Start the rollout on a thread of its own (:func:`_run_job`); a 429 while one runs, a 400 on a cubeful
# rollout of a match state the cube cannot use.
@router.post(
    "/web/rollout",
    response_model=JobStarted,
    status_code=202,
    summary=f"start a rollout (at most {MAX_ROLLOUT_GAMES} games, one at a time)",
    tags=["web"],
    responses={429: {"description": "a rollout is running (in any worker process)"}},
)
def post_rollout(body: RolloutBody, web: WebDep) -> JobStarted:
    # a ply the engine refuses here is a 400, as a ply outside 0..2 anywhere (the README's table)
    if not 0 <= body.ply <= MAX_ROLLOUT_PLY:
        raise _bad(f"ply must be 0..{MAX_ROLLOUT_PLY} for a rollout over HTTP, got {_cut(str(body.ply))}")
    board, state = web.decode(body.id, body.board)
    web.live(board, state)
    cube = None
    if body.cubeful:
        try:
            cube = cube_state_from_match(state)
        except ValueError as exc:
            raise _bad(f"id: the match state cannot be used: {exc}") from None
    try:
        record = web.jobs.start(body.games)
    except JobBusy as exc:
        raise _bad(str(exc), 429) from None
    threading.Thread(
        target=_run_job, args=(web, record, board, body, cube), daemon=True, name="web-rollout"
    ).start()
    return JobStarted(job=record["job"], games=body.games)


# The job's status; an unknown job is a 404.
@router.get("/web/rollout/{job}", response_model=JobStatus, summary="a rollout's progress", tags=["web"])
def get_rollout(job: str, web: WebDep) -> JobStatus:
    return _find(web.jobs.get(job), job)


# Cancel the job (it stops within one ply) and answer its status; an unknown job is a 404.
@router.delete("/web/rollout/{job}", response_model=JobStatus, summary="cancel a rollout", tags=["web"])
def delete_rollout(job: str, web: WebDep) -> JobStatus:
    return _find(web.jobs.cancel(job), job)


# The analysis of the ``.mat`` body (:func:`_analyse`, in the thread pool). 400 on an unknown or repeated query
# parameter, a ply outside 0..1, an empty or unreadable body; 422 (FastAPI's list, as the backend's strict
# query types: _query_errors) on a ply not in digits or a flag not true/false; 413 over ``max_mat_bytes``.
# Registered by _routes.
async def post_analysis(
    request: Request,
    web: WebDep,
    ply: Annotated[
        str | None,
        Query(
            description=f"search depth 0..{MAX_ANALYSIS_PLY}; default: the server's, at most {MAX_ANALYSIS_PLY}"
        ),
    ] = None,
    errors_only: Annotated[
        str | None, Query(description="true: list only the decisions with a mark (default false)")
    ] = None,
) -> AnalysisResponse:
    names = [n for n, _ in request.query_params.multi_items()]
    unknown = [n for n in dict.fromkeys(names) if n not in ("ply", "errors_only")]
    if unknown:
        listed = ", ".join(_cut(n, 40) for n in unknown[:10]) + (
            f" and {len(unknown) - 10} more" * (len(unknown) > 10)
        )
        raise _bad(
            f"unknown query parameter{'s' * (len(unknown) > 1)} {listed}; this endpoint takes ply and errors_only"
        )
    repeated = [n for n in dict.fromkeys(names) if names.count(n) > 1]
    if repeated:
        raise _bad(f"query parameter{'s' * (len(repeated) > 1)} {', '.join(repeated)} given more than once")
    errors = _query_errors(ply, errors_only)
    if errors:
        raise RequestValidationError(errors)
    depth = None
    if ply is not None:
        depth = int(ply)
        if not 0 <= depth <= MAX_ANALYSIS_PLY:
            raise _bad(f"ply must be 0..{MAX_ANALYSIS_PLY} for an analysis over HTTP, got {_cut(ply)}")
    limit = web.max_mat_bytes
    length = request.headers.get("content-length")
    if length is not None and length.strip().isdigit() and int(length) > limit:
        raise _bad(f"request body too large: a .mat upload is at most {limit} bytes", 413)
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise _bad(f"request body too large: a .mat upload is at most {limit} bytes", 413)
    if not data.strip():
        raise _bad("body: empty; send the .mat file as the request body")
    async with web.analysis_turn():  # waiting here holds no thread (WebBoard's analysis_gate)
        if await request.is_disconnected():  # its client has gone while it waited: no work for no one
            raise _bad("the client closed the connection before its analysis began")
        return await run_in_threadpool(_analyse, web, bytes(data), depth, errors_only == "true")


# --------------------------------------------------------------------------- the handlers' work (no HTTP)


def _run_job(web: WebBoard, record: dict, board: np.ndarray, body: RolloutBody, cube) -> None:
    """Play the rollout of ``record`` (a :class:`RolloutJobs` record) on its own agent, writing its
    progress, and at the end its result or its new state (done, cancelled, timed_out, failed)."""
    from nard_ai.play.rollout import rollout

    job = record["job"]
    last_write = [time.monotonic()]

    def on_games(n: int) -> None:
        record["games_done"] += n
        if time.monotonic() - last_write[0] > 0.2:  # progress for GET, from any worker process
            web.jobs.update(record)
            last_write[0] = time.monotonic()

    def on_ply() -> None:  # every ply: a cancel or the time limit stops it within one ply
        if web.jobs.cancelled(job):
            raise _Cancelled("cancelled")
        if time.time() - record["started"] > MAX_ROLLOUT_SECONDS:
            raise _Cancelled("timed_out")

    try:
        agent = web.rollout_agents.get(body.ply)
        if agent is None:
            agent = web.rollout_agents[body.ply] = web.agent_factory(body.ply)
        r = rollout(
            board, body.games, ply=body.ply, cube=cube, seed=body.seed, agent=agent,
            truncate=body.truncate, on_games=on_games, on_ply=on_ply,
            batch=ROLLOUT_BATCH[body.ply],
        )  # fmt: skip
        web.jobs.update(record, result=_outcome(r).model_dump(), state="done")
    except _Cancelled as stop:
        web.jobs.update(record, state=str(stop))
    except Exception as exc:  # reported through GET; the server goes on
        web.jobs.update(record, error=f"{type(exc).__name__}: {exc}", state="failed")


def _find(record: dict | None, job: str) -> JobStatus:
    """The status of a job's record; a 404 when there is none."""
    if record is None:
        raise _bad(f"no rollout job {job[:40]!r} (finished jobs are kept {MAX_ROLLOUT_JOBS} at most)", 404)
    return _status(record)


def _analyse(web: WebBoard, data: bytes, ply: int | None, errors_only: bool) -> AnalysisResponse:
    """The analysis of the ``.mat`` bytes ``data`` at depth ``ply`` (``None``: the server's, at most
    :data:`MAX_ANALYSIS_PLY`), one at a time on its own agent, the swing chart in seat 0's view, and
    the match's warnings (:attr:`nard_ai.formats.mat.Match.warnings`, as ``nard analyze`` prints them).

    Raises:
        HTTPException: 400 on a body that is not a readable match, has no records or that the analysis
            refuses; 413 over :data:`MAX_MAT_RECORDS` records.
    """
    from nard_ai.formats.mat import read_mat
    from nard_ai.reports.analysis import analyze_match, count_records

    try:
        match = read_mat(data)
    except ValueError as exc:
        raise _bad(f"body: not a readable .mat match: {exc}") from None
    records = count_records(match)
    if records > MAX_MAT_RECORDS:
        raise _bad(f"body: the match has {records} records; at most {MAX_MAT_RECORDS} are analysed", 413)
    if records == 0:
        raise _bad("body: the match has no rolls or cube actions to analyse")
    depth = min(web.agent_for(None).ply, MAX_ANALYSIS_PLY) if ply is None else ply
    with web.analysis_lock:
        agent = web.analysis_agents.get(depth)
        if agent is None:
            agent = web.analysis_agents[depth] = web.agent_factory(depth)
        try:
            analysis = analyze_match(match, agent)
        except ValueError as exc:
            raise _bad(f"body: {exc}") from None
        boards = []
        for d in analysis.decisions:
            board, _ = parse_position(d.position)
            boards.append(board)
        probs, equity = agent_value(agent, np.stack(boards)) if boards else (np.zeros((0, 5)), np.zeros(0))
    swing = []
    for i, d in enumerate(analysis.decisions):
        # the position is the decider's view: seat 0's equity is minus it when seat 1 decided
        sign = 1.0 if d.player == 0 else -1.0
        win = float(probs[i][0]) if d.player == 0 else 1.0 - float(probs[i][0])
        swing.append(
            SwingPoint(
                index=i, game=d.game, turn=d.turn, player=d.player,
                equity=sign * float(equity[i]), win=win, loss=float(d.loss),
            )
        )  # fmt: skip
    report = analysis.to_dict(errors_only=errors_only)
    return AnalysisResponse(analysis=report, swing=swing, warnings=list(match.warnings))


# --------------------------------------------------------------------------- giving an app the endpoints


def _routes(max_mat_bytes: int, dependencies: Sequence[Any] = ()) -> APIRouter:
    """A router of the web board's endpoints: :data:`router`'s, then ``POST /web/analysis``, whose 413
    names ``max_mat_bytes``; each route with ``dependencies`` first."""
    routes = APIRouter(dependencies=list(dependencies))
    routes.include_router(router)
    routes.add_api_route(
        "/web/analysis",
        post_analysis,
        methods=["POST"],
        response_model=AnalysisResponse,
        summary="analyse a .mat match (raw body)",
        tags=["web"],
        responses={413: {"description": f"over {max_mat_bytes} bytes or {MAX_MAT_RECORDS} records"}},
    )
    return routes


def install_web_board(app: FastAPI, web: WebBoard, dependencies: Sequence[Any] = ()) -> None:
    """Give ``app`` the page and the web board's endpoints over ``web``: the state on
    ``app.state.web_board``, the routes of :data:`router` included with ``dependencies``."""
    app.state.web_board = web
    app.include_router(_routes(web.max_mat_bytes), dependencies=list(dependencies))


def web_router(
    agent_for: Callable[[int | None], Any],
    eval_lock: threading.Lock,
    decode: Callable[..., tuple[np.ndarray, MatchState | None]],
    live: Callable[[np.ndarray, MatchState | None], None],
    dice_of: Callable[..., tuple[int, int]],
    agent_factory: Callable[[int], Any],
    max_mat_bytes: int = MAX_MAT_BYTES,
    jobs_folder: str | Path | None = None,
) -> APIRouter:
    """The page and the web board's endpoints (module docstring), over the backend's engine, as a router
    to include: :data:`router`'s routes with their :class:`WebBoard`, which the router's first request
    keeps on the app (:meth:`WebBoard.attach`). :func:`install_web_board` does both at once.

    Args:
        agent_for: ``ply or None -> agent`` of the backend (cached per ply; ``None``: its default
            ply); raises a 400 on a bad ply. Searches run under ``eval_lock``.
        eval_lock: the backend's lock around every search (evaluators are not promised thread-safe).
        decode: the backend's ``(id, board) -> (board, state)``, raising 400s that name the field.
        live: the backend's ``(board, state)`` check that there is a turn to analyse: not a finished game,
            nor an ID whose game is over or with a double or resignation awaiting its answer (a 400).
        dice_of: the backend's ``(die1, die2, state, names) -> dice`` (400 on bad dice).
        agent_factory: ``ply -> agent``; rollouts and match analyses get their own agents from it (one
            rollout and one analysis at a time), so they never hold ``eval_lock`` and ``/move`` and the
            board stay responsive while they run.
        max_mat_bytes: the largest ``.mat`` body taken by ``/web/analysis`` (413 beyond).
        jobs_folder: the folder of the rollout jobs, shared by the worker processes of one server
            (:class:`nard_ai.interfaces.web_jobs.RolloutJobs`); ``None``: a temporary one of its own.

    Raises:
        ValueError: on a ``max_mat_bytes`` that is not a positive integer.
    """
    web = WebBoard.create(
        agent_for, eval_lock, decode, live, dice_of, agent_factory, max_mat_bytes, jobs_folder
    )
    return _routes(max_mat_bytes, [Depends(web.attach)])
