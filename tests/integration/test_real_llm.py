"""The LLM path against a real model server: llama-cpp-python's OpenAI-compatible server (built by `make llm-server`)
with SmolLM2-135M-Instruct, a model small enough for CI and weak enough to break formats — which is the point.

The assertions are on the contract, not on the model's wisdom: every call carries its max_tokens and stays within
it; the JSON mode is found once (this server rejects `json_schema` with a 500 naming response_format and takes
`json_object`); a question keeps its deadline, and a stream Flux stops is cancelled on the server; replies that
cannot be used take the validation fallback (the offline answer, with a warning); the planner's proposals are
validated; citations are only ever to evidence given; the answer streams over SSE with its LLM calls. The scripted
server (test_llm_contract.py) stays the place for fault injection."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from retrieval.answering.llm import OpenAICompatibleProvider, TaskTokens
from retrieval.answering.llm_endpoint import endpoints
from retrieval.answering.llm_stream import CHUNK_GRACE
from retrieval.answering.llm_transport import TransportOptions
from retrieval.kinds import proposal
from retrieval.model.answer import validate_answer
from retrieval.model.llm_budget import QuestionBudget
from retrieval.model.types import Evidence
from retrieval.pipeline import Pipeline
from serving.api import create_app
from tests.integration.test_api import sse_events
from tests.integration.test_retrieval_pipeline import fresh_cache
from tests.support.demo_lexicons import demo_lexicons
from tests.support.llm_timing import CallEnds
from tests.support.local_llm import MODEL_ALIAS, LocalModelServer
from tests.support.plans import read

pytestmark = pytest.mark.slow

QUESTION = "What does TP53 do in apoptosis?"
EVIDENCE = [
    Evidence(
        id="reactome_R-HSA-109581_0",
        kind="chunk",
        source="reactome",
        title="Apoptosis",
        text="TP53 activates the transcription of pro-apoptotic genes such as BAX and PUMA (BBC3).",
    ),
    Evidence(
        id="openalex_W42_1",
        kind="chunk",
        source="openalex",
        title="p53 and cell death",
        text="Loss of p53 function lets damaged cells escape apoptosis.",
    ),
]
# What may run after a question's LLM budget: the offline answer, validation, grounding, the SSE frame. About 0.1 s
# here, the work before the last call falling within the budget, so a machine many times slower stays within it.
SLACK = 5.0
# How far an LLM call may run past the question's deadline: the wait is cut there and the caller wakes within
# milliseconds, even with the model server busy on both cores.
OVERSHOOT = 1.0


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    if why := LocalModelServer.missing():
        pytest.skip(why)
    server = LocalModelServer(Path(tmp_path_factory.mktemp("llm")) / "server.log").start()
    yield server
    server.stop()


def _settings(demo_platform: FluxSettings, server: LocalModelServer, budget: float, **changes: object) -> FluxSettings:
    return demo_platform.evolve(
        llm_base_url=server.base_url,
        llm_model=MODEL_ALIAS,
        llm_question_budget=budget,
        llm_answer_reserve=budget / 2,
        llm_timeout=budget,
        context_budget_chars=6000,
        **changes,
    )


@pytest.fixture(scope="module")
def pipeline(demo_platform: FluxSettings, model_server: LocalModelServer) -> Iterator[Pipeline]:
    settings = _settings(demo_platform, model_server, 40.0)
    built = Pipeline.from_settings(settings, cache=fresh_cache(settings, enabled=False))
    yield built
    built.close()


def _use(pipeline: Pipeline, settings: FluxSettings) -> None:
    pipeline.provider = OpenAICompatibleProvider.from_settings(settings)
    pipeline.settings = pipeline.retriever.settings = pipeline.answerer.settings = settings


def test_each_task_is_bounded_and_the_json_mode_is_found_once(model_server: LocalModelServer) -> None:
    tokens = TaskTokens(screen=48, plan=200, rewrite=96, judge=128, answer=256)
    options = TransportOptions(timeout=120.0, max_attempts=2, requests_per_minute=6_000)
    budget = QuestionBudget(600.0)
    genes, pathways = demo_lexicons()
    # The mode is detected once per process and endpoint: another test of this module may have found it already
    # (the session's order is random), and then no request asks for json_schema again.
    known = next((e.json_mode for e in endpoints() if e.url == model_server.base_url.rstrip("/")), None)
    assert known in (None, "json_object")
    before = model_server.requests_logged()
    with (
        OpenAICompatibleProvider(model_server.base_url, MODEL_ALIAS, None, options, max_tokens=tokens) as provider,
        budget.active(),
    ):
        provider.screen(QUESTION)
        provider.rewrite(QUESTION, "decompose")
        provider.judge(QUESTION, EVIDENCE)
        raw = provider.generate(QUESTION, EVIDENCE)
        question = "Would you say mismatch repair lives somewhere beneath DNA repair?"
        plan, _warnings = proposal.propose(question, provider, genes, pathways, read(question, genes, pathways))
    calls = budget.calls
    assert [c.step for c in calls] == ["screen", "rewrite", "judge", "answer", "plan"]
    caps = {"screen": 48, "rewrite": 96, "judge": 128, "answer": 256, "plan": 200}
    for call in calls:
        assert call.max_tokens == caps[call.step]
        assert call.outcome in ("ok", "cut", "rejected"), call  # a reply came, whole or stopped by Flux
        assert call.tokens_out is not None and call.tokens_out <= call.max_tokens + CHUNK_GRACE, call
        assert call.json_mode == "json_object"
        if call.outcome == "rejected":
            assert call.detail
    # json_schema was asked once, refused (HTTP 500 naming response_format), and never again.
    assert model_server.requests_logged() - before == len(calls) + (known is None), calls
    checked = validate_answer(QUESTION, raw, EVIDENCE)
    assert {c.id for c in checked.citations} <= {e.id for e in EVIDENCE}
    assert plan.proposed_by in ("rules", "llm")  # the proposal was validated, or the rules kept


def test_a_question_end_to_end_keeps_its_deadline_and_cites_only_what_it_was_given(
    pipeline: Pipeline, demo_platform: FluxSettings, model_server: LocalModelServer
) -> None:
    settings = _settings(demo_platform, model_server, 40.0)
    _use(pipeline, settings)
    given: set[str] = set()
    calls = CallEnds()

    def capture(name: str, payload: dict) -> None:
        calls(name, payload)
        if name == "evidence":
            given.update(e["id"] for e in payload["evidence"])

    started = time.monotonic()
    answer = pipeline.ask(QUESTION, "thinking", on_event=capture)
    assert time.monotonic() - started < 40.0 + SLACK
    # The calls run one after another: together within the budget, and none past its deadline.
    assert answer.llm_calls and sum(c.ms for c in answer.llm_calls) <= 40_000 + 1_000
    assert calls.past(started + 40.0) < OVERSHOOT, calls.ended
    assert {c.id for c in answer.citations} <= given
    if answer.provider == f"openai-compatible:{MODEL_ALIAS}":
        assert answer.grounding is not None  # the model's claims were checked against what they cite
    else:  # the offline answer stood in: a warning says which step failed and why
        assert any("LLM" in w and "stands in" in w for w in answer.warnings), answer.warnings


def test_a_reply_cut_at_max_tokens_takes_the_validation_fallback(
    pipeline: Pipeline, demo_platform: FluxSettings, model_server: LocalModelServer
) -> None:
    # A budget the calls never reach, however slow the machine (a call may queue behind a request the test before
    # abandoned, still running on the one-slot server): the answer's reply is cut by its 32 tokens, not by the clock.
    _use(pipeline, _settings(demo_platform, model_server, 300.0, llm_max_tokens_answer=32))
    answer = pipeline.ask(QUESTION, "quick")
    [call] = [c for c in answer.llm_calls if c.step == "answer"]
    assert call.outcome == "rejected", answer.llm_calls
    assert call.tokens_out is not None and call.tokens_out <= 32 + CHUNK_GRACE
    assert answer.provider == "offline-extractive" and answer.claims
    assert any("LLM answer step gave a reply Flux could not use" in w for w in answer.warnings), answer.warnings


def test_a_tight_deadline_is_kept_and_the_abandoned_stream_is_cancelled_on_the_server(
    pipeline: Pipeline, demo_platform: FluxSettings, model_server: LocalModelServer
) -> None:
    _use(pipeline, _settings(demo_platform, model_server, 3.0))
    calls = CallEnds()
    started = time.monotonic()
    answer = pipeline.ask(QUESTION, "thinking", on_event=calls)
    assert time.monotonic() - started < 3.0 + SLACK
    assert calls.past(started + 3.0) < OVERSHOOT, calls.ended
    assert any(c.outcome == "deadline" for c in answer.llm_calls), answer.llm_calls
    assert answer.provider == "offline-extractive"
    assert any("time budget" in w for w in answer.warnings), answer.warnings
    # llama-cpp-python's server logs a client that closed its stream, and stops generating for it.
    stop = time.monotonic() + 30
    while "Disconnected from client" not in model_server.log_tail(400) and time.monotonic() < stop:
        time.sleep(0.5)
    assert "Disconnected from client" in model_server.log_tail(400)


def test_the_answer_streams_over_sse_with_its_llm_calls(
    pipeline: Pipeline, demo_platform: FluxSettings, model_server: LocalModelServer
) -> None:
    settings = _settings(demo_platform, model_server, 40.0)
    _use(pipeline, settings)
    with TestClient(create_app(settings, pipeline), raise_server_exceptions=False) as client:
        response = client.post("/query/stream", json={"question": QUESTION, "mode": "quick"})
    assert response.status_code == 200
    events = sse_events(response.text)
    assert [name for name, _ in events][-2:] == ["answer", "done"]
    answer = dict(events)["answer"]
    streamed: list[str] = []  # each call as it ended, then replaced where a later event amends it (a reply turned down)
    for name, data in events:
        if name == "step" and data["step"] == "llm_call":
            if "amends" in data:
                streamed[data["amends"]] = data["outcome"]
            else:
                streamed.append(data["outcome"])
    assert streamed and streamed == [c["outcome"] for c in answer["llm_calls"]]
    assert dict(events)["done"]["total_ms"] < (40.0 + SLACK) * 1000
    assert sum(c["ms"] for c in answer["llm_calls"]) <= 40_000 + 1_000  # the calls kept the budget themselves
