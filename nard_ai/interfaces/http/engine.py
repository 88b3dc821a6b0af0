"""The HTTP backend's engine side: the :class:`Engine` the handlers share, and the answers it builds.

:class:`Engine` holds the agents per ply and the :class:`nard_ai.interfaces.batching.Batcher`
that runs all engine work on one thread; :data:`EngineDep` hands it to a handler. The batched
jobs' answers are built here as JSON bytes: :func:`_move_answers` (one batched search for every
``/move`` of a batch, the answers written by :func:`_answers_json`) and :func:`_eval_answers` (one
evaluation, with the cube advice of :func:`_advice`, written by :func:`_json_bytes`, the JSON of
Starlette's ``JSONResponse``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import Depends, HTTPException, Request
from fastapi.responses import Response

from nard_ai import cube as _cube
from nard_ai.core.board import BOARD_SIZE, starting_board, swap_sides
from nard_ai.core.ply import check_ply
from nard_ai.cube.decision import DOUBLE_PASS, DOUBLE_TAKE, cube_actions
from nard_ai.cube.state import cube_state_from_match
from nard_ai.eval.aligned import BatchInvariantEvaluator
from nard_ai.formats.notation_fast import describe_plays_json
from nard_ai.formats.position_id import position_ids
from nard_ai.interfaces.batching import Batcher, BatchSettings, QueueFull
from nard_ai.interfaces.http.decoding import _bad
from nard_ai.interfaces.http.schemas import CubeAdvice
from nard_ai.play.cube_policy import cube_equities
from nard_ai.reports.analysis import score_plays
from nard_ai.search.lookahead import Agent, agent_value, rank_plays_batch, values_positions

# --------------------------------------------------------------------------- the engine behind the handlers


def batch_invariant(agent: Any) -> Any:
    """``agent`` with a :class:`nard_ai.eval.aligned.BatchInvariantEvaluator` around its evaluator (an
    :class:`nard_ai.search.lookahead.Agent`; any other agent as it is): its answers then depend neither
    on the other boards of a batch nor on the calling thread's torch thread count, which differs
    between the threads of FastAPI's pool (a thread started while another had set it to 1 keeps 1)."""
    if isinstance(agent, Agent) and not isinstance(agent.evaluator, BatchInvariantEvaluator):
        agent = Agent(
            BatchInvariantEvaluator(agent.evaluator), ply=agent.ply, rules=agent.rules,
            name=agent.name, filters=agent.filters,
        )  # fmt: skip
    return agent


class Engine:
    """What the handlers share: the agents per ply and the batcher that runs all engine work.

    Args:
        agent_factory: ``ply -> agent``; a :class:`nard_ai.search.lookahead.Agent` gets a
            :class:`nard_ai.eval.aligned.BatchInvariantEvaluator` around its evaluator, so
            that a request's answer does not depend on the requests batched with it.
        default_ply: the depth of requests that give none.
        batch: the batcher's window and bounds.

    Raises:
        ValueError: if the default-ply agent cannot be built (built here, at start-up).
    """

    def __init__(self, agent_factory: Callable[[int], Any], default_ply: int, batch: BatchSettings) -> None:
        self.agent_factory = agent_factory
        self.default_ply = default_ply
        self.agents: dict[int, Any] = {default_ply: self._build(default_ply)}
        self.batcher = Batcher(self._compute, batch, inline=self._cheap)
        self._warm_up(self.agents[default_ply])

    @staticmethod
    def _warm_up(agent: Any) -> None:
        """Answer one ``/move`` and one ``/eval`` now, so that what loads on first use (the bear-off
        database, the network's first-layer tables) loads at start-up, not in the first requests' time."""
        board = starting_board()
        _move_answers(agent, [(board, (3, 1), cube_state_from_match(None))])
        if values_positions(agent):
            bearoff = np.zeros(BOARD_SIZE, dtype=np.int8)
            bearoff[[1, 2, 3]], bearoff[[22, 23, 24]] = 5, -5  # both sides home: a bear-off database position
            _eval_answers(agent, [(board, None), (bearoff, None)])

    def _cheap(self, kind: str, key: Any) -> bool:
        """Whether a group of jobs is cheap enough for the event loop: 0-ply ``/move`` and ``/eval``."""
        return kind in ("move", "eval") and any(
            id(agent) == key and getattr(agent, "ply", None) == 0 for agent in self.agents.values()
        )

    def _build(self, p: int) -> Any:
        return batch_invariant(self.agent_factory(p))

    async def agent_for(self, p: int | None) -> Any:
        """The agent of a request's ``ply`` (built on first use, on the engine's thread).

        Raises:
            HTTPException: 400 on a ply outside 0..MAX_PLY or one the agent refuses.
        """
        try:
            p = check_ply(self.default_ply if p is None else int(p))
        except ValueError as exc:
            raise _bad(str(exc)) from None
        if p not in self.agents:
            try:
                agent = await self.batcher.run(lambda: self._build(p))
            except ValueError as exc:
                raise _bad(f"ply: {exc}") from None
            self.agents.setdefault(p, agent)
        return self.agents[p]

    async def try_submit(self, kind: str, agent: Any, payload: Any) -> Any:
        """One request's job through the batcher.

        Raises:
            QueueFull: when ``max_queue`` jobs already wait (nothing is queued then).
        """
        return await self.batcher.submit(kind, id(agent), (agent, payload))

    async def submit(self, kind: str, agent: Any, payload: Any) -> Any:
        """One request's job through the batcher (answers 503 when its queue is full)."""
        try:
            return await self.try_submit(kind, agent, payload)
        except QueueFull as exc:
            raise HTTPException(status_code=503, detail=str(exc), headers={"Retry-After": "1"}) from None

    def _compute(self, kind: str, key: Any, jobs: Sequence[tuple[Any, Any]]) -> list[Any]:
        agent = jobs[0][0]  # one key, one agent
        payloads = [payload for _, payload in jobs]
        if kind == "move":
            return _move_answers(agent, payloads)
        if kind == "eval":
            return _eval_answers(agent, payloads)
        raise ValueError(f"unknown job kind {kind!r}")


async def _engine(request: Request) -> Engine:
    return request.app.state.engine


EngineDep = Annotated[Engine, Depends(_engine)]


def _json_bytes(content: Any) -> bytes:
    """JSON as Starlette's ``JSONResponse`` renders it (compact, UTF-8, no NaN)."""
    return json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode()


def _json(body: bytes) -> Response:
    return Response(content=body, media_type="application/json")


def _probs_dict(p: list[float]) -> dict[str, float]:
    return {"win": p[0], "winG": p[1], "winBg": p[2], "loseG": p[3], "loseBg": p[4]}


def _move_answers(agent: Any, payloads: Sequence[tuple]) -> list[bytes]:
    """``/move`` answers (JSON bytes of :class:`MoveResponse`) of requests ``(board, dice, cube_state)``.

    One batched search for all of them (:func:`nard_ai.search.lookahead.rank_plays_batch`) when the
    agent is an :class:`Agent`; any other agent (a test's fake) ranks each position itself. The
    answers are built for the whole batch at once: one Position ID call and one play description
    (:func:`describe_plays_json`) for every play of every request, then the answers' JSON
    (:func:`_answers_json`).
    """
    boards = np.stack([board for board, _, _ in payloads])
    dice = np.array([d for _, d, _ in payloads], dtype=np.int8)
    if isinstance(agent, Agent):
        ranked = rank_plays_batch(
            agent.evaluator, boards, dice, agent.rules, ply=agent.ply, filters=agent.filters
        )
    else:
        ranked = [agent.rank_plays(board, d) for board, d, _ in payloads]
    scored = [
        score_plays(plays, cube_state) for plays, (_, _, cube_state) in zip(ranked, payloads, strict=True)
    ]
    counts = [len(s.afterstates) for s in scored]
    after = np.concatenate([np.asarray(s.afterstates, dtype=np.int8).reshape(-1, BOARD_SIZE) for s in scored])
    owner = np.repeat(np.arange(len(payloads)), counts)
    described = describe_plays_json(boards, dice, after, owner)
    ids = position_ids(np.concatenate([boards, swap_sides(after)]))
    return _answers_json(scored, described, ids[len(payloads) :], payloads, agent.ply, ids[: len(payloads)])


def _finite(values: np.ndarray) -> None:
    """Refuse NaN and infinities as ``json.dumps(..., allow_nan=False)`` does.

    Raises:
        ValueError: naming the first value that is not finite (``json.dumps``'s message).
    """
    if not np.isfinite(values).all():
        value = float(values[~np.isfinite(values)].flat[0])
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")


def _float_texts(values: np.ndarray) -> list[str]:
    """The JSON number of every float of ``values`` (``(N, K)`` float64), row-major, from one orjson call.

    orjson writes each double as its shortest round-trip decimal, as ``repr`` does (so ``json.loads``
    reads back the same double); only the exponent's spelling differs (``1e-7`` for ``1e-07``).
    orjson writes NaN as ``null``, so the values are checked first.

    Raises:
        ValueError: on a NaN or an infinity (:func:`_finite`).
    """
    _finite(values)
    if values.size == 0:
        return []
    text = orjson.dumps(np.ascontiguousarray(values).reshape(-1), option=orjson.OPT_SERIALIZE_NUMPY)
    return text.decode()[1:-1].split(",")


def _answers_json(scored, described, after_ids, payloads, ply: int, board_ids) -> list[bytes]:
    """The ``/move`` answers of a batch: the JSON of :class:`MoveResponse` of each request, written directly.

    The answer holds only ints, floats and ASCII strings that need no escape (notation, Position
    IDs, ``ranked_by``), so each move is one formatted string; every float of the batch is written
    by one :func:`_float_texts` call (a NaN or an infinity raises ``ValueError``, as
    ``json.dumps(..., allow_nan=False)``). ``tests/test_http_fast.py`` checks the answers against
    the values of a one-position-at-a-time reference.
    """
    counts = [len(s.equity) for s in scored]
    values = np.zeros((sum(counts), 7))  # win, winG, winBg, loseG, loseBg, equity, mwc (0: money, unused)
    start = 0
    for s, n in zip(scored, counts, strict=True):
        values[start : start + n, :5] = s.probs
        values[start : start + n, 5] = s.equity
        if s.mwc is not None:
            values[start : start + n, 6] = s.mwc
        start += n
    texts = _float_texts(values)
    moves, notations = described
    answers = []
    start = 0
    for i, s in enumerate(scored):
        parts = []
        money = s.mwc is None
        for j in range(start, start + counts[i]):
            w, wg, wb, lg, lb, eq, mwc = texts[7 * j : 7 * j + 7]
            parts.append(
                f'{{"play":{moves[j]},"notation":"{notations[j]}","probabilities":{{"win":{w},"winG":{wg},'
                f'"winBg":{wb},"loseG":{lg},"loseBg":{lb}}},"equity":{eq},'
                f'"mwc":{"null" if money else mwc},"position_id":"{after_ids[j]}"}}'
            )
        start += counts[i]
        dice = payloads[i][1]
        answers.append(
            f'{{"moves":[{",".join(parts)}],"ranked_by":"{s.ranked_by}","dice":[{int(dice[0])},{int(dice[1])}],'
            f'"ply":{int(ply)},"position_id":"{board_ids[i]}"}}'.encode()
        )
    return answers


def _eval_answers(agent: Any, payloads: Sequence[tuple]) -> list[bytes | HTTPException]:
    """``/eval`` answers (JSON bytes of :class:`EvalResponse`) of requests ``(board, state)``, one evaluation.

    The cube advice of the whole batch is decided together (:func:`_advice_batch`).
    """
    boards = np.stack([board for board, _ in payloads])
    probs, equity = agent_value(agent, boards)
    board_ids = position_ids(boards)
    advice = _advice_batch(
        boards, np.asarray(probs, dtype=np.float64), [state for _, state in payloads], agent.ply
    )
    answers: list[bytes | HTTPException] = []
    for i, a in enumerate(advice):
        if isinstance(a, HTTPException):
            answers.append(a)
            continue
        answers.append(
            _json_bytes(
                {
                    "probabilities": _probs_dict([float(v) for v in probs[i]]),
                    "equity": float(equity[i]),
                    "cube": a,
                    "ply": agent.ply,
                    "position_id": board_ids[i],
                }
            )
        )
    return answers


def _advice_batch(boards: np.ndarray, probs: np.ndarray, states: Sequence[Any], ply: int) -> list:
    """The ``cube`` field of each ``/eval`` answer: ``{"double": ..., "accept": ...}``, or a 400 for its request.

    The batched form of :func:`_advice` of :func:`nard_ai.cube.cube_decision_from_probs` (the same
    rule, :func:`nard_ai.cube.decision.cube_actions`, on the same three equities): one cube
    efficiency call for the batch, then one decision per group of requests at the same cube state.
    A group the batched path refuses (inconsistent probabilities) is decided request by request,
    so that only the request at fault gets its 400. ``tests/test_http_fast.py`` checks it against
    the scalar decision.
    """
    out: list = [None] * len(boards)
    groups: dict[Any, list[int]] = {}
    for i, state in enumerate(states):
        try:
            groups.setdefault(cube_state_from_match(state), []).append(i)
        except ValueError as exc:  # the ID's match state (a 26..64-point match), named as /move names it
            out[i] = _bad(f"id: the match state cannot be used: {exc}")
    x = _cube.cube_efficiency(boards) if groups else None
    for cube, rows in groups.items():
        rows_ = np.asarray(rows)
        try:
            if cube.can_double:
                p = _cube.as_probs(probs[rows_])
                nd, dt, dp = cube_equities(p, cube, x[rows_])
                codes, _ = cube_actions(nd, dt, dp, cube, p[:, 1] > 0.0)
                double = (codes == DOUBLE_TAKE) | (codes == DOUBLE_PASS)
                accept = ~np.isfinite(dt) | (dt <= dp)
            else:
                _cube.as_probs(probs[rows_])  # the checks the scalar decision makes
                double, accept = np.zeros(len(rows), bool), np.ones(len(rows), bool)
        except ValueError:
            for i in rows:  # one by one: the request at fault gets its 400, the others their advice
                try:
                    decision = _cube.cube_decision_from_probs(probs[i], cube, float(x[i]), ply=ply)
                except ValueError as exc:
                    out[i] = _bad(f"cube: {exc}")
                    continue
                out[i] = _advice(decision).model_dump()
            continue
        for k, i in enumerate(rows):
            out[i] = {"double": bool(double[k]), "accept": bool(accept[k])}
    return out


def _advice(decision) -> CubeAdvice:
    double = decision.cube_available and decision.action in ("double_take", "double_pass")
    # the taker's view, whether or not the double is right
    return CubeAdvice(double=bool(double), accept=decision.taker_takes)
