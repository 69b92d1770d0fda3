"""The HTTP service's collaborators are FastAPI dependencies, so a test can swap them through
`app.dependency_overrides`. Pure logic: a stand-in pipeline, no database, no models (the app's lifespan, which
would build the real pipeline, is not entered)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from retrieval.conversation import UnknownConversation
from retrieval.model.answer import FinalAnswer
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.types import Evidence, Filters, Mode, RoutePlan
from retrieval.pipeline import EventSink, SearchResult
from retrieval.question.followup import TurnContext
from serving.answer_store import StoredTurn
from serving.api import create_app
from serving.dependencies import answer_store, require_api_key, service_pipeline, service_settings

EVIDENCE = Evidence(id="chunk:1", kind="chunk", text="Hexokinase phosphorylates glucose.")


class StandInRetriever:
    """The retriever half as a follow-up reads it: the served index's names (none here)."""

    def lexicons(self) -> tuple[GeneLexicon, PathwayLexicon]:
        return GeneLexicon([]), PathwayLexicon([])


class StandInPipeline:
    """Answers every question the same way, emitting the steps a real pipeline would (and an internal one)."""

    def __init__(self, failure: Exception | None = None, busy_s: float = 0.0) -> None:
        self.failure = failure
        self.busy_s = busy_s
        self.questions: list[str] = []
        self.retriever = StandInRetriever()

    def search(self, question: str, filters: Filters | None = None) -> SearchResult:
        self.questions.append(question)
        return SearchResult(
            question=question,
            plan=RoutePlan(strategy="direct", reason="stand-in", queries=[question]),
            evidence=[EVIDENCE],
            index_version="stand-in-index",
            reranker="none",
        )

    def ask(
        self, question: str, mode: Mode | None = None, filters: Filters | None = None, on_event: EventSink | None = None
    ) -> FinalAnswer:
        self.questions.append(question)
        emit = on_event or (lambda _name, _payload: None)  # /query passes none
        emit("plan", {"kind": "literature"})
        emit("generated", {"raw": "the unvalidated generator reply"})
        emit("evidence", {"evidence": [EVIDENCE]})
        if self.failure is not None:
            raise self.failure
        started = time.perf_counter()
        time.sleep(self.busy_s)
        return FinalAnswer(
            question=question,
            answer="Hexokinase [chunk:1].",
            confidence=0.8,
            timings_ms={"total": round((time.perf_counter() - started) * 1000, 2)},
        )


class StandInStore:
    """Conversations in a dict: what the answer store does, without Postgres (random ids, as the real one's)."""

    def __init__(self) -> None:
        self.saved: dict[str, list[FinalAnswer]] = {}

    def exists(self, conversation_id: str) -> bool:
        return conversation_id in self.saved

    def start(self) -> str:
        conversation_id = uuid.uuid4().hex
        self.saved[conversation_id] = []
        return conversation_id

    def last_context(self, conversation_id: str) -> TurnContext | None:
        return None

    def save(
        self, conversation_id: str, question: str, asked_as: str, context: TurnContext, answer: FinalAnswer
    ) -> FinalAnswer:
        stored = answer.model_copy(
            update={
                "answer_id": uuid.uuid4().hex,
                "conversation_id": conversation_id,
                "question": question,
                "asked_as": asked_as,
            }
        )
        self.saved[conversation_id].append(stored)
        return stored

    def answer(self, answer_id: str) -> FinalAnswer | None:
        return next((a for turns in self.saved.values() for a in turns if a.answer_id == answer_id), None)

    def turns(self, conversation_id: str) -> list[StoredTurn]:
        if conversation_id not in self.saved:
            raise UnknownConversation(conversation_id)
        return [
            StoredTurn(a.answer_id or "", n, a.question, a.asked_as or "", datetime.now(UTC), a)
            for n, a in enumerate(self.saved[conversation_id], start=1)
        ]


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


def test_stream_relays_public_steps_but_never_internal_events(app: FastAPI, client: TestClient) -> None:
    app.dependency_overrides[service_pipeline] = lambda: StandInPipeline(busy_s=0.05)
    response = client.post("/query/stream", json={"question": "What does hexokinase do?"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    events = sse_events(response.text)
    assert [name for name, _ in events] == ["step", "evidence", "answer", "done"]
    assert events[0][1] == {"step": "plan", "kind": "literature"}
    assert events[1][1][0]["id"] == "chunk:1"
    assert events[2][1]["answer"] == "Hexokinase [chunk:1]."
    # `done` repeats the answer's stage timings, and its own total covers the whole stream: the pipeline's total
    # and at least the 50 ms the pipeline was busy for.
    done = events[3][1]
    assert done["timings_ms"] == events[2][1]["timings_ms"]
    assert done["total_ms"] >= max(50.0, events[2][1]["timings_ms"]["total"])
    assert "generated" not in response.text and "unvalidated" not in response.text


def streamed_answer(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/query/stream", json=body)
    assert response.status_code == 200, response.text
    return dict(sse_events(response.text))["answer"]


def test_a_streamed_answer_is_stored_in_its_conversation_and_can_be_followed_up(
    client: TestClient, store: StandInStore, pipeline: StandInPipeline
) -> None:
    first = streamed_answer(client, {"question": "What does hexokinase do?"})
    conversation = first["conversation_id"]
    # The ids the client is sent are those of the stored turn: the conversation id is one a follow-up accepts.
    follow_up = streamed_answer(client, {"question": "And glucokinase?", "conversation_id": conversation})
    assert follow_up["conversation_id"] == conversation and follow_up["answer_id"] != first["answer_id"]
    assert [(a.answer_id, a.question) for a in store.saved[conversation]] == [
        (first["answer_id"], "What does hexokinase do?"),
        (follow_up["answer_id"], "And glucokinase?"),
    ]
    # No conversation id: a new conversation, not a turn appended to the last one.
    other = streamed_answer(client, {"question": "What does hexokinase do?"})
    assert other["conversation_id"] not in (conversation, None) and len(store.saved[conversation]) == 2
    asked = list(pipeline.questions)
    unknown = client.post("/query/stream", json={"question": "and then?", "conversation_id": "nope"})
    # A plain JSON 404 naming the id, before any stream starts and before the pipeline is asked anything.
    assert unknown.status_code == 404 and unknown.headers["content-type"].startswith("application/json")
    assert unknown.json()["detail"] == "no conversation 'nope'"
    assert pipeline.questions == asked and "nope" not in store.saved


def test_the_ids_an_answer_carries_lead_back_to_it_and_its_conversation(
    client: TestClient, settings: FluxSettings
) -> None:
    first = client.post("/query", json={"question": "What does hexokinase do?"}).json()
    again = client.post("/query", json={"question": "And glucokinase?", "conversation_id": first["conversation_id"]})
    assert again.status_code == 200, again.text
    follow_up = again.json()
    conversation = client.get(f"/conversations/{first['conversation_id']}")
    assert conversation.status_code == 200 and conversation.json()["conversation_id"] == first["conversation_id"]
    assert [(t["answer_id"], t["question"]) for t in conversation.json()["turns"]] == [
        (first["answer_id"], "What does hexokinase do?"),
        (follow_up["answer_id"], "And glucokinase?"),
    ]
    stored = client.get(f"/answers/{follow_up['answer_id']}")
    assert stored.status_code == 200 and stored.json() == follow_up
    unknown = client.post("/query", json={"question": "and then?", "conversation_id": "nope"})
    days = settings.serving.conversation_retention_days
    assert unknown.status_code == 404
    assert unknown.json()["detail"] == f"no conversation 'nope' (it may have expired after {days} days)"
    for path, detail in [("/conversations/nope", "no conversation 'nope'"), ("/answers/nope", "no answer 'nope'")]:
        missing = client.get(path)
        assert (missing.status_code, missing.json()["detail"]) == (404, detail), path


def test_a_failing_stream_ends_with_an_error_then_done(app: FastAPI, client: TestClient) -> None:
    app.dependency_overrides[service_pipeline] = lambda: StandInPipeline(failure=RuntimeError("boom"))
    events = sse_events(client.post("/query/stream", json={"question": "What does hexokinase do?"}).text)
    assert [name for name, _ in events][-2:] == ["error", "done"]
    assert events[-2][1] == {"detail": "internal error; see the service log"}  # never the exception's text


def test_the_question_limit_comes_from_the_settings_dependency(
    app: FastAPI, client: TestClient, settings: FluxSettings, pipeline: StandInPipeline
) -> None:
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
    assert (
        client.post(
            "/search", json={"question": "glycolysis"}, headers={"Authorization": "Bearer flux_unit_key"}
        ).status_code
        == 200
    )
    locked.dependency_overrides[require_api_key] = lambda: None
    assert client.post("/search", json={"question": "glycolysis"}).status_code == 200


def test_an_oversized_body_gets_the_documented_413_before_any_work(
    client: TestClient, settings: FluxSettings, pipeline: StandInPipeline
) -> None:
    declared = client.post("/search", json={"question": "glycolysis " * 2000})
    oversized = b"g" * settings.serving.max_request_bytes
    chunked = client.post(
        "/search", content=iter([b'{"question": "', oversized, b'"}']), headers={"content-type": "application/json"}
    )
    for response in (declared, chunked):
        assert response.status_code == 413 and "FLUX_MAX_REQUEST_BYTES" in response.json()["detail"]
    small_chunked = client.post(
        "/search", content=iter([b'{"question": ', b'"glycolysis"}']), headers={"content-type": "application/json"}
    )
    assert small_chunked.status_code == 200, small_chunked.text
    assert pipeline.questions == ["glycolysis"]
