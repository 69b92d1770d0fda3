"""The HTTP service's collaborators are FastAPI dependencies, so a test can swap them through
`app.dependency_overrides`. Pure logic: a stand-in pipeline, no database, no models (the app's lifespan, which
would build the real pipeline, is not entered)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from retrieval.answer import FinalAnswer
from retrieval.followup import TurnContext
from retrieval.genes import GeneLexicon
from retrieval.pathways import PathwayLexicon
from retrieval.pipeline import EventSink, SearchResult
from retrieval.types import Evidence, Filters, Mode, RoutePlan
from serving.api import create_app
from serving.dependencies import answer_store, require_api_key, service_pipeline, service_settings

EVIDENCE = Evidence(id="chunk:1", kind="chunk", text="Hexokinase phosphorylates glucose.")


class StandInPipeline:
    """Answers every question the same way, emitting the steps a real pipeline would (and an internal one)."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.failure = failure
        self.questions: list[str] = []

    def search(self, question: str, filters: Filters | None = None) -> SearchResult:
        self.questions.append(question)
        return SearchResult(question=question, plan=RoutePlan(strategy="direct", reason="stand-in",
                                                               queries=[question]),
                            evidence=[EVIDENCE], index_version="stand-in-index", reranker="none")

    def ask(self, question: str, mode: Mode | None = None, filters: Filters | None = None,
            on_event: EventSink | None = None) -> FinalAnswer:
        self.questions.append(question)
        assert on_event is not None
        on_event("intent", {"kind": "literature"})
        on_event("generated", {"raw": "the unvalidated generator reply"})
        on_event("evidence", {"evidence": [EVIDENCE]})
        if self.failure is not None:
            raise self.failure
        return FinalAnswer(question=question, answer="Hexokinase [chunk:1].", confidence=0.8,
                           timings_ms={"total": 12.5})

    def lexicons(self) -> tuple[GeneLexicon, PathwayLexicon]:
        return GeneLexicon([]), PathwayLexicon([])


class StandInStore:
    """Conversations in a dict: what the answer store does, without Postgres."""

    def __init__(self) -> None:
        self.saved: dict[str, list[FinalAnswer]] = {}

    def exists(self, conversation_id: str) -> bool:
        return conversation_id in self.saved

    def start(self) -> str:
        conversation_id = f"conversation-{len(self.saved) + 1}"
        self.saved[conversation_id] = []
        return conversation_id

    def last_context(self, conversation_id: str) -> TurnContext | None:
        return None

    def save(self, conversation_id: str, question: str, asked_as: str, context: TurnContext,
             answer: FinalAnswer) -> FinalAnswer:
        turns = self.saved[conversation_id]
        stored = answer.model_copy(update={"answer_id": f"{conversation_id}-{len(turns) + 1}",
                                           "conversation_id": conversation_id, "asked_as": asked_as})
        turns.append(stored)
        return stored


@pytest.fixture
def settings() -> FluxSettings:
    return FluxSettings(log_queries_to_mlflow=False)


@pytest.fixture
def pipeline() -> StandInPipeline:
    return StandInPipeline()


@pytest.fixture
def store() -> StandInStore:
    return StandInStore()


@pytest.fixture
def app(settings: FluxSettings, pipeline: StandInPipeline, store: StandInStore) -> FastAPI:
    app = create_app(settings)
    app.dependency_overrides[service_pipeline] = lambda: pipeline
    app.dependency_overrides[answer_store] = lambda: store
    return app


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    yield TestClient(app, raise_server_exceptions=False)  # no `with`: the lifespan would build the real pipeline


def sse_events(body: str) -> list[tuple[str, Any]]:
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if fields:  # a keep-alive comment has none
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_search_is_answered_by_the_overriding_pipeline(client: TestClient, pipeline: StandInPipeline) -> None:
    response = client.post("/search", json={"question": "glycolysis enzymes"})
    assert response.status_code == 200, response.text
    assert response.json()["index_version"] == "stand-in-index"
    assert pipeline.questions == ["glycolysis enzymes"]


def test_stream_relays_public_steps_but_never_internal_events(client: TestClient) -> None:
    response = client.post("/query/stream", json={"question": "What does hexokinase do?"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    events = sse_events(response.text)
    assert [name for name, _ in events] == ["step", "evidence", "answer", "done"]
    assert events[0][1] == {"step": "intent", "kind": "literature"}
    assert events[1][1][0]["id"] == "chunk:1"
    assert events[2][1]["answer"] == "Hexokinase [chunk:1]."
    assert events[3][1]["timings_ms"] == {"total": 12.5} and events[3][1]["total_ms"] >= 0
    assert "generated" not in response.text and "unvalidated" not in response.text


def test_a_streamed_answer_is_stored_in_its_conversation_and_can_be_followed_up(client: TestClient,
                                                                             store: StandInStore) -> None:
    first = dict(sse_events(client.post("/query/stream", json={"question": "What does hexokinase do?"}).text))
    conversation = first["answer"]["conversation_id"]
    assert first["answer"]["answer_id"] == f"{conversation}-1"
    follow_up = client.post("/query/stream", json={"question": "And glucokinase?", "conversation_id": conversation})
    assert dict(sse_events(follow_up.text))["answer"]["answer_id"] == f"{conversation}-2"
    assert [a.question for a in store.saved[conversation]] == ["What does hexokinase do?", "And glucokinase?"]
    unknown = client.post("/query/stream", json={"question": "and then?", "conversation_id": "nope"})
    assert unknown.status_code == 404 and "nope" in unknown.json()["detail"]  # a plain 404, before any stream


def test_a_failing_stream_ends_with_an_error_then_done(app: FastAPI, client: TestClient) -> None:
    app.dependency_overrides[service_pipeline] = lambda: StandInPipeline(failure=RuntimeError("boom"))
    events = sse_events(client.post("/query/stream", json={"question": "What does hexokinase do?"}).text)
    assert [name for name, _ in events][-2:] == ["error", "done"]
    assert events[-2][1] == {"detail": "internal error; see the service log"}  # never the exception's text


def test_the_question_limit_comes_from_the_settings_dependency(app: FastAPI, client: TestClient,
                                                               settings: FluxSettings,
                                                               pipeline: StandInPipeline) -> None:
    app.dependency_overrides[service_settings] = lambda: settings.evolve(max_question_chars=10)
    response = client.post("/search", json={"question": "glycolysis enzymes"})
    assert response.status_code == 422 and "FLUX_MAX_QUESTION_CHARS" in response.json()["detail"]
    assert pipeline.questions == []


def test_the_api_key_check_is_a_dependency_too(settings: FluxSettings, pipeline: StandInPipeline) -> None:
    locked = create_app(settings.evolve(api_keys="flux_unit_key"))
    locked.dependency_overrides[service_pipeline] = lambda: pipeline
    client = TestClient(locked, raise_server_exceptions=False)
    for method, path in [("POST", "/search"), ("GET", "/metrics"), ("GET", "/openapi.json"), ("GET", "/docs")]:
        denied = client.request(method, path, json={"question": "glycolysis"})
        assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer", path
    assert client.post("/search", json={"question": "glycolysis"},
                       headers={"Authorization": "Bearer flux_unit_key"}).status_code == 200
    locked.dependency_overrides[require_api_key] = lambda: None
    assert client.post("/search", json={"question": "glycolysis"}).status_code == 200


def test_an_oversized_body_gets_the_documented_413_before_any_work(client: TestClient, settings: FluxSettings,
                                                                   pipeline: StandInPipeline) -> None:
    declared = client.post("/search", json={"question": "glycolysis " * 2000})
    oversized = b"g" * settings.serving.max_request_bytes
    chunked = client.post("/search", content=iter([b'{"question": "', oversized, b'"}']),
                          headers={"content-type": "application/json"})
    for response in (declared, chunked):
        assert response.status_code == 413 and "FLUX_MAX_REQUEST_BYTES" in response.json()["detail"]
    small_chunked = client.post("/search", content=iter([b'{"question": ', b'"glycolysis"}']),
                                headers={"content-type": "application/json"})
    assert small_chunked.status_code == 200, small_chunked.text
    assert pipeline.questions == ["glycolysis"]
