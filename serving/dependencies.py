"""What the endpoints are given, as FastAPI dependencies: tests swap any of them through `app.dependency_overrides`
(a stand-in pipeline, other settings, no API-key check)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from fastapi import Body, Depends, HTTPException, Request

from dagster_project.core.settings import FluxConfigError, FluxSettings
from retrieval.pipeline import Pipeline
from serving.answer_store import AnswerStore
from serving.health import store_error_message
from serving.schemas import QueryRequest, SearchRequest
from serving.state import ApiState


@contextmanager
def outages_as_503() -> Iterator[None]:
    """A missing configuration or a dead store becomes a 503 naming it; any other error stays an error."""
    try:
        yield
    except FluxConfigError as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from None
    except Exception as exc:
        message = store_error_message(exc)
        if message is None:
            raise
        raise HTTPException(status_code=503, detail=message) from None


# The cheap dependencies are coroutines so that FastAPI runs them in the event loop, not in its thread pool.
async def service_state(request: Request) -> ApiState:
    return ApiState.of(request.app)


StateDep = Annotated[ApiState, Depends(service_state)]


async def service_settings(state: StateDep) -> FluxSettings:
    return state.settings


SettingsDep = Annotated[FluxSettings, Depends(service_settings)]


async def require_api_key(request: Request, state: StateDep) -> None:
    """401/429 unless the request carries a known key within its rate limit (when keys are configured).

    Reads the header from the request rather than declaring a Header parameter, which would add an `authorization`
    parameter to every operation in the OpenAPI document."""
    state.api_keys.check(request.headers.get("authorization", ""))


def service_pipeline(state: StateDep) -> Pipeline:
    """The query pipeline (the lifespan builds it at start-up); a 503 when it cannot be built."""
    with outages_as_503():
        return state.pipeline()


PipelineDep = Annotated[Pipeline, Depends(service_pipeline)]


def answer_store(state: StateDep) -> AnswerStore:
    with outages_as_503():
        return state.answer_store()


AnswerStoreDep = Annotated[AnswerStore, Depends(answer_store)]


def check_question_length(question: str, settings: FluxSettings) -> None:
    if len(question) > settings.serving.max_question_chars:
        raise HTTPException(
            status_code=422,
            detail=f"question is {len(question)} characters; the limit is "
            f"{settings.serving.max_question_chars} (FLUX_MAX_QUESTION_CHARS)",
        )


async def checked_query(query: Annotated[QueryRequest, Body()], settings: SettingsDep) -> QueryRequest:
    """The request body of /query and /query/stream, its question within FLUX_MAX_QUESTION_CHARS."""
    check_question_length(query.question, settings)
    return query


async def checked_search(search: Annotated[SearchRequest, Body()], settings: SettingsDep) -> SearchRequest:
    """The request body of /search, its question within FLUX_MAX_QUESTION_CHARS."""
    check_question_length(search.question, settings)
    return search


CheckedQuery = Annotated[QueryRequest, Depends(checked_query)]
CheckedSearch = Annotated[SearchRequest, Depends(checked_search)]


def query_in_known_conversation(query: CheckedQuery, store: AnswerStoreDep) -> QueryRequest:
    """/query/stream's body: a conversation id it names must exist, checked before the stream starts (a 404, not
    an error event)."""
    if query.conversation_id is not None:
        with outages_as_503():
            known = store.exists(query.conversation_id)
        if not known:
            raise HTTPException(status_code=404, detail=f"no conversation {query.conversation_id!r}")
    return query


StreamQuery = Annotated[QueryRequest, Depends(query_in_known_conversation)]
