"""The HTTP service: a thin FastAPI layer over `retrieval.pipeline.Pipeline`.

POST /query (FinalAnswer; stored, in a conversation), GET /answers/{id} (JSON or ?format=md), GET
/conversations/{id}, POST /query/stream (Server-Sent Events), POST /search (evidence only), GET /health (503 when
a required store is down or nothing is published), GET /metrics (Prometheus). Bad requests get a 4xx
with a message; a dead store gets a 503 naming it — never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import Body, FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from dagster_project.resources.postgres import engine_for
from dagster_project.settings import FluxConfigError, FluxSettings, get_settings
from retrieval.answer import FinalAnswer
from retrieval.guardrails import install_log_redaction
from retrieval.pipeline import INTERNAL_EVENTS, Pipeline, SearchResult
from retrieval.types import Filters, Mode
from serving.answer_store import AnswerStore, UnknownConversation, ask_in_conversation
from serving.contract import SSE_EVENT, EventStreamResponse, PrometheusResponse, error_responses
from serving.export import markdown
from serving.health import health_report, store_error_message
from serving.metrics import ServiceMetrics
from serving.security import install as install_security
from serving.tracking import QueryLogger

log = logging.getLogger(__name__)


class _Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # No NUL: Postgres text cannot hold it, and answers are stored.
    question: str = Field(min_length=1, pattern=r"^[^\x00]*[^\s\x00][^\x00]*$",
                          description="A question about pathways, genes or the literature (at least one character "
                          "that is not white space; no NUL).")
    filters: Filters | None = Field(default=None, description="Restrict evidence; filtered requests are not cached.")

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is empty")
        return value.strip()


class QueryRequest(_Question):
    mode: Mode | None = Field(default=None, description="quick: one retrieval pass; thinking: the judge loop.")
    # No NUL: Postgres text cannot hold it (schemathesis found the 500).
    conversation_id: str | None = Field(default=None, max_length=64, pattern=r"^[^\x00]*$",
                                        description="Continue this conversation: a "
                                        "follow-up's references are resolved from its previous turn.")


class Turn(BaseModel):
    answer_id: str
    turn: int
    question: str
    asked_as: str
    created_at: str
    answer: FinalAnswer


class Conversation(BaseModel):
    conversation_id: str
    turns: list[Turn]


class SearchRequest(_Question):
    pass


class AppState:
    def __init__(self, settings: FluxSettings, pipeline: Pipeline | None) -> None:
        self.settings = settings
        self._pipeline = pipeline
        self._lock = threading.Lock()
        self.metrics = ServiceMetrics()
        self.tracker = QueryLogger(settings)

    def store(self) -> AnswerStore:
        return AnswerStore(engine_for(self.settings.resolved_serving_database_url),
                           self.settings.conversation_retention_days)

    def pipeline(self) -> Pipeline:
        """Built on first use, so the service starts (and /health answers) even while a store is down."""
        with self._lock:
            if self._pipeline is None:
                self._pipeline = Pipeline.from_settings(self.settings)
            return self._pipeline


def create_app(settings: FluxSettings | None = None, pipeline: Pipeline | None = None) -> FastAPI:
    settings = settings or get_settings()
    state = AppState(settings, pipeline)
    install_log_redaction()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # Warm up before accepting requests: the models load now, not on the first question (15-19 s otherwise).
        try:
            await asyncio.to_thread(state.pipeline)
        except FluxConfigError as exc:
            log.error("serving starts without a pipeline: %s", exc)  # /health and every query say why
        yield
        state.tracker.flush(timeout=10)

    app = FastAPI(title="Flux", version="0.1.0", lifespan=lifespan,
                  description="Cited answers over Reactome, KEGG, HGNC/UniProt, OpenAlex and PubMed.")
    app.state.flux = state

    install_security(app, settings)  # inside the measuring middleware below, so 401s and 429s are counted

    @app.middleware("http")
    async def limit_and_measure(request: Request, call_next: Any) -> Response:
        started = time.perf_counter()
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > settings.max_request_bytes):
            response: Response = JSONResponse(status_code=413, content={
                "detail": f"request body over {settings.max_request_bytes} bytes (FLUX_MAX_REQUEST_BYTES)"})
        elif length is None and request.method == "POST" and len(await request.body()) > settings.max_request_bytes:
            response = JSONResponse(status_code=413, content={
                "detail": f"request body over {settings.max_request_bytes} bytes (FLUX_MAX_REQUEST_BYTES)"})
        else:
            response = await call_next(request)
        endpoint = request.url.path
        state.metrics.requests.labels(endpoint, str(response.status_code)).inc()
        state.metrics.request_seconds.labels(endpoint).observe(time.perf_counter() - started)
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = jsonable_encoder(exc.errors(), custom_encoder={bytes: lambda b: b.decode("utf-8", "replace")})
        messages = [f"{'.'.join(str(p) for p in e.get('loc', []) if p != 'body') or 'body'}: {e.get('msg')}"
                    for e in errors]
        for error in errors:
            error.pop("input", None)  # never echo a (possibly 16 KB) body back
        return JSONResponse(status_code=422, content={"detail": "; ".join(messages), "errors": errors})

    def _run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except FluxConfigError as exc:
            raise HTTPException(status_code=503, detail=str(exc)) from None
        except Exception as exc:
            message = store_error_message(exc)
            if message is None:
                raise
            raise HTTPException(status_code=503, detail=message) from None

    def _question_limit(question: str) -> None:
        if len(question) > settings.max_question_chars:
            raise HTTPException(status_code=422, detail=f"question is {len(question)} characters; the limit is "
                                f"{settings.max_question_chars} (FLUX_MAX_QUESTION_CHARS)")

    @app.post("/query", response_model=FinalAnswer, summary="Answer a question with citations",
              responses=error_responses(400, 401, 404, 413, 422, 429, 503))
    def query(request: Annotated[QueryRequest, Body()]) -> FinalAnswer:
        _question_limit(request.question)
        try:
            answer: FinalAnswer = _run(lambda: ask_in_conversation(
                state.pipeline(), state.store(), request.question, request.mode, request.filters,
                request.conversation_id))
        except UnknownConversation:
            raise HTTPException(status_code=404, detail=f"no conversation {request.conversation_id!r} (it may "
                                f"have expired after {settings.conversation_retention_days} days)") from None
        state.metrics.observe_answer(answer)
        state.tracker.submit(answer, "/query")
        return answer

    @app.post("/query/stream", summary="Answer a question, streaming step events (Server-Sent Events)",
              response_class=EventStreamResponse, responses={
                  200: {"description": "`event: step|evidence|answer|error|done` blocks, `data:` JSON",
                        "content": {"text/event-stream": {"schema": SSE_EVENT}}},
                  **error_responses(400, 401, 413, 422, 429, 503, route_is_json=False)})
    def query_stream(request: Annotated[QueryRequest, Body()]) -> StreamingResponse:
        _question_limit(request.question)
        pipeline = _run(state.pipeline)
        return EventStreamResponse(_stream(state, pipeline, request),
                                   headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/search", response_model=SearchResult, summary="Retrieve evidence only (no answer)",
              responses=error_responses(400, 401, 413, 422, 429, 503))
    def search(request: Annotated[SearchRequest, Body()]) -> SearchResult:
        _question_limit(request.question)
        return _run(lambda: state.pipeline().search(request.question, request.filters))

    @app.get("/answers/{answer_id}", response_model=FinalAnswer, summary="A stored answer; ?format=md for Markdown",
             responses={200: {"content": {"text/markdown": {"schema": {"type": "string"}}}},
                        **error_responses(401, 404, 422, 429, 503)})
    def stored_answer(answer_id: str, format: Literal["json", "md"] = "json") -> Any:
        answer = _run(lambda: state.store().answer(answer_id))
        if answer is None:
            raise HTTPException(status_code=404, detail=f"no answer {answer_id!r}")
        if format == "md":
            return Response(markdown(answer), media_type="text/markdown; charset=utf-8")
        return answer

    @app.get("/conversations/{conversation_id}", response_model=Conversation, summary="A conversation's turns",
             responses=error_responses(401, 404, 422, 429, 503))
    def conversation(conversation_id: str) -> Conversation:
        try:
            turns = _run(lambda: state.store().turns(conversation_id))
        except UnknownConversation:
            raise HTTPException(status_code=404, detail=f"no conversation {conversation_id!r}") from None
        return Conversation(conversation_id=conversation_id, turns=[
            Turn(answer_id=t.answer_id, turn=t.turn, question=t.question, asked_as=t.asked_as,
                 created_at=t.created_at.isoformat(), answer=t.answer) for t in turns])

    @app.get("/health", summary="Service status and index counts; 503 when a required store is down",
             responses={200: {"description": "`status` ok or degraded (Neo4j or Redis down), each store's counts",
                              "content": {"application/json": {"schema": {"type": "object"}}}},
                        503: {"description": "`status` down: Postgres or a published index is missing",
                              "content": {"application/json": {"schema": {"type": "object"}}}}})
    def health() -> JSONResponse:
        report = health_report(settings, state)
        return JSONResponse(status_code=200 if report["status"] != "down" else 503, content=report)

    @app.get("/metrics", summary="Prometheus metrics", response_class=PrometheusResponse,
             responses=error_responses(401, 429, route_is_json=False))
    def metrics() -> PrometheusResponse:
        stats = state._pipeline.cache.stats() if state._pipeline is not None else {}
        flat = {k: int(v) for k, v in _flatten(stats).items()}
        return PrometheusResponse(state.metrics.render(flat))

    return app


def _flatten(stats: dict[str, Any], prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in stats.items():
        if isinstance(value, dict):
            out |= _flatten(value, f"{prefix}{key}_")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = value
    return out


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(jsonable_encoder(data))}\n\n"


def _stream(state: AppState, pipeline: Pipeline, request: QueryRequest) -> Iterator[str]:
    """Run the pipeline in a worker thread and relay its step events as they happen."""
    events: queue.Queue[tuple[str, Any]] = queue.Queue()
    started = time.perf_counter()

    def relay(name: str, payload: dict[str, Any]) -> None:
        if name not in INTERNAL_EVENTS:
            events.put(("step", {"step": name, **payload}))

    def work() -> None:
        try:
            answer = pipeline.ask(request.question, request.mode, request.filters,
                                  on_event=lambda name, payload: relay(name, payload))
            state.metrics.observe_answer(answer)
            state.tracker.submit(answer, "/query/stream")
            events.put(("answer", answer))
        except Exception as exc:
            message = str(exc) if isinstance(exc, FluxConfigError) else store_error_message(exc)
            log.exception("streamed query failed") if message is None else None
            events.put(("error", {"detail": message or "internal error; see the service log"}))
        finally:
            events.put(("done", None))

    threading.Thread(target=work, name="flux-sse", daemon=True).start()
    timings: dict[str, float] = {}
    while True:
        kind, payload = events.get()
        if kind == "step" and payload.get("step") == "evidence":
            yield _sse("evidence", payload["evidence"])
        elif kind == "done":
            yield _sse("done", {"timings_ms": timings, "total_ms": round((time.perf_counter() - started) * 1000, 2)})
            return
        elif kind == "answer":
            timings = payload.timings_ms
            yield _sse("answer", payload.model_dump(mode="json"))
        else:
            yield _sse(kind, payload)
