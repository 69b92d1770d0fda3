"""The endpoints. `router` needs an API key (when keys are configured); `health_router` is open, so that load
balancers and `flux status` can probe the service without one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import JSONResponse, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent

from retrieval.conversation import UnknownConversation, ask_in_conversation
from retrieval.model.answer import FinalAnswer
from retrieval.pipeline import EventSink, SearchResult
from retrieval.retrievers.graph_guard import GraphUnavailable
from retrieval.retrievers.neighbourhood import MAX_SEEDS, Neighbourhood, neighbourhood
from retrieval.retrievers.release_history import ReleaseChanges, latest_changes
from serving.contract import SSE_EVENT, PrometheusResponse, error_responses
from serving.dependencies import (
    AnswerStoreDep,
    CheckedQuery,
    CheckedSearch,
    PipelineDep,
    SettingsDep,
    StateDep,
    StreamQuery,
    outages_as_503,
    require_api_key,
)
from serving.export import markdown
from serving.health import health_report
from serving.metrics import cache_counters
from serving.schemas import Conversation, Turn
from serving.streaming import answer_events

SeedIds = Annotated[
    list[str],
    Query(
        min_length=1, max_length=MAX_SEEDS, description="Pathway ids (R-HSA-…, hsa…) or HGNC ids; repeat the parameter."
    ),
]
router = APIRouter(dependencies=[Depends(require_api_key)])
health_router = APIRouter()


@router.post(
    "/query",
    response_model=FinalAnswer,
    summary="Answer a question with citations",
    responses=error_responses(400, 401, 404, 413, 422, 429, 503),
)
def query(
    asked: CheckedQuery, pipeline: PipelineDep, store: AnswerStoreDep, settings: SettingsDep, state: StateDep
) -> FinalAnswer:
    try:
        with outages_as_503():
            answer = ask_in_conversation(
                pipeline, store, asked.question, asked.mode, asked.filters, asked.conversation_id
            )
    except UnknownConversation:
        raise HTTPException(
            status_code=404,
            detail=f"no conversation {asked.conversation_id!r} (it may have "
            f"expired after {settings.serving.conversation_retention_days} days)",
        ) from None
    state.metrics.observe_answer(answer)
    state.tracker.submit(answer, "/query")
    return answer


@router.post(
    "/query/stream",
    summary="Answer a question, streaming step events (Server-Sent Events)",
    response_class=EventSourceResponse,
    responses={
        200: {
            "description": "`event: step|evidence|answer|error|done` blocks, `data:` JSON",
            "content": {"text/event-stream": {"itemSchema": SSE_EVENT}},
        },
        **error_responses(400, 401, 404, 413, 422, 429, 503, route_is_json=False),
    },
)
def query_stream(
    asked: StreamQuery, pipeline: PipelineDep, store: AnswerStoreDep, state: StateDep
) -> Iterator[ServerSentEvent]:
    # A generator endpoint: FastAPI starts the stream only after every dependency (key, body, conversation,
    # pipeline) passed, so those failures are still plain 4xx/503 responses. The answer is stored in its
    # conversation like /query's, so follow-ups can be streamed too.
    def ask(on_event: EventSink) -> FinalAnswer:
        return ask_in_conversation(
            pipeline, store, asked.question, asked.mode, asked.filters, asked.conversation_id, on_event=on_event
        )

    yield from answer_events(ask, state.metrics, state.tracker)


@router.post(
    "/search",
    response_model=SearchResult,
    summary="Retrieve evidence only (no answer)",
    responses=error_responses(400, 401, 413, 422, 429, 503),
)
def search(asked: CheckedSearch, pipeline: PipelineDep) -> SearchResult:
    with outages_as_503():
        return pipeline.search(asked.question, asked.filters)


@router.get(
    "/graph/neighbourhood",
    response_model=Neighbourhood,
    summary="The graph around pathways or genes",
    responses=error_responses(401, 422, 429, 503),
)
def graph_neighbourhood(pipeline: PipelineDep, ids: SeedIds) -> Neighbourhood:
    try:
        return pipeline.retriever.graph_guard.call(lambda: neighbourhood(pipeline.retriever.driver, ids))
    except GraphUnavailable as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from None


@router.get(
    "/releases/changes",
    response_model=ReleaseChanges,
    summary="What the last refresh of each source changed",
    responses=error_responses(401, 429, 503),
)
def release_changes(pipeline: PipelineDep) -> ReleaseChanges:
    with outages_as_503():
        return latest_changes(pipeline.retriever.engine)


@router.get(
    "/answers/{answer_id}",
    response_model=FinalAnswer,
    summary="A stored answer; ?format=md for Markdown",
    responses={
        200: {"content": {"text/markdown": {"schema": {"type": "string"}}}},
        **error_responses(401, 404, 422, 429, 503),
    },
)
def stored_answer(
    answer_id: str, store: AnswerStoreDep, format: Literal["json", "md"] = "json"
) -> FinalAnswer | Response:
    with outages_as_503():
        answer = store.answer(answer_id)
    if answer is None:
        raise HTTPException(status_code=404, detail=f"no answer {answer_id!r}")
    if format == "md":
        return Response(markdown(answer), media_type="text/markdown; charset=utf-8")
    return answer


@router.get(
    "/conversations/{conversation_id}",
    response_model=Conversation,
    summary="A conversation's turns",
    responses=error_responses(401, 404, 422, 429, 503),
)
def conversation(conversation_id: str, store: AnswerStoreDep) -> Conversation:
    try:
        with outages_as_503():
            turns = store.turns(conversation_id)
    except UnknownConversation:
        raise HTTPException(status_code=404, detail=f"no conversation {conversation_id!r}") from None
    return Conversation(
        conversation_id=conversation_id,
        turns=[
            Turn(
                answer_id=t.answer_id,
                turn=t.turn,
                question=t.question,
                asked_as=t.asked_as,
                created_at=t.created_at.isoformat(),
                answer=t.answer,
            )
            for t in turns
        ],
    )


@health_router.get(
    "/health",
    summary="Service status and index counts; 503 when a required store is down",
    responses={
        200: {
            "description": "`status` ok or degraded (Neo4j or Redis down), each store's counts",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
        503: {
            "description": "`status` down: Postgres or a published index is missing",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
    },
)
def health(settings: SettingsDep, state: StateDep) -> JSONResponse:
    report = health_report(settings, state.built_pipeline)
    return JSONResponse(status_code=200 if report["status"] != "down" else 503, content=report)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=PrometheusResponse,
    responses=error_responses(401, 429, route_is_json=False),
)
def metrics(state: StateDep) -> PrometheusResponse:
    pipeline = state.built_pipeline  # never built for a scrape: before the first question there are no cache stats
    cache_stats = pipeline.retriever.cache.stats() if pipeline is not None else {}
    return PrometheusResponse(state.metrics.render(cache_counters(cache_stats)))
