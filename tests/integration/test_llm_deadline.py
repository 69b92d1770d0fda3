"""One deadline per question, through the served pipeline on the demo platform: an LLM that is too slow, or a server
that cannot answer (an HTML page from a proxy, a model it does not have, a context-length error, an empty choice, a
stream that never ends), costs a question at most its budget and gives the offline answer with a warning naming the
step and the cause — never a 5xx, never a hang, never a cached degraded answer. A healthy LLM's calls are recorded
in the answer, on /metrics and in the SSE stream.

The scripted server (tests/support/llm_server.py) enforces the Chat Completions request rules OpenAI's API
reference documents (model, messages, max_tokens, stream_options, response_format) and streams as it describes."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from retrieval.answering.llm import OpenAICompatibleProvider
from retrieval.answering.offline import OfflineProvider
from retrieval.pipeline import Pipeline
from serving.api import create_app
from tests.integration.test_api import sse_events
from tests.integration.test_retrieval_pipeline import fresh_cache
from tests.support.llm_server import (
    LLMReply,
    LLMServer,
    citing_responder,
    context_length_exceeded,
    stepwise_responder,
)
from tests.support.llm_timing import CallEnds

QUESTION = "What does TP53 do in apoptosis?"  # the demo's literature answers it (offline: four cited claims)
BUDGET = 4.0
STALL = 20.0  # the slow server's delay before each reply: far past the budget, so only the deadline ends a call
# How long an LLM call may run on past the question's deadline: the wait is cut there and the caller wakes within
# milliseconds, even on a loaded machine; a call waited out on the stalled server runs on for seconds.
OVERSHOOT = 1.0
SLACK = 3.0  # what may run after the last LLM call: the offline answer, its validation and grounding check (ms here)
# The whole question: its budget, then what it had not finished within it (a cold first question's retrieval can
# outlast the budget on a slow machine) and the slack; a few milliseconds past the budget here
# (benchmarks/llm_deadline.py). It stays below STALL, so one call waited out on the server fails it on any machine.
WHOLE = BUDGET + 8.0


@pytest.fixture(scope="module")
def pipeline(demo_platform: FluxSettings) -> Iterator[Pipeline]:
    built = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform), provider=OfflineProvider())
    yield built
    built.close()


@pytest.fixture
def server() -> Iterator[LLMServer]:
    started = LLMServer(citing_responder).start()
    yield started
    started.stop()


def _with_llm(
    pipeline: Pipeline,
    demo_platform: FluxSettings,
    server: LLMServer,
    model: str = "test-model",
    budget: float = BUDGET,
) -> FluxSettings:
    """The pipeline, now with an LLM at `server` and a question budget of `budget` s (the served settings too)."""
    settings = demo_platform.evolve(
        llm_base_url=server.base_url,
        llm_model=model,
        llm_question_budget=budget,
        llm_answer_reserve=budget / 2,
        llm_timeout=30.0,
        llm_max_tokens_answer=2000,
    )
    pipeline.provider = OpenAICompatibleProvider.from_settings(settings)
    pipeline.settings = pipeline.retriever.settings = pipeline.answerer.settings = settings
    pipeline.retriever.cache = fresh_cache(settings)
    return settings


def test_a_slow_llm_costs_the_question_its_budget_and_the_offline_answer_stands_in(
    pipeline: Pipeline, demo_platform: FluxSettings, server: LLMServer
) -> None:
    server.script(*[LLMReply.slow(STALL, "{}")] * 12)
    _with_llm(pipeline, demo_platform, server)
    calls = CallEnds()
    started = time.monotonic()
    answer = pipeline.ask(QUESTION, "thinking", on_event=calls)
    finished = time.monotonic()
    assert finished - started < WHOLE
    # Each call ended by the deadline, or at once when it began after it, whatever the rest of the question cost.
    assert calls.ended and calls.past(started + BUDGET) < OVERSHOOT, (started + BUDGET, calls.ended)
    assert finished - calls.last < SLACK
    assert answer.provider == "offline-extractive" and answer.claims and answer.confidence > 0
    failed = [c for c in answer.llm_calls if c.failed]
    # The first call is cancelled at its deadline; its request holds the endpoint's one slot while the server is
    # still on it, so the calls after it wait for the slot until the budget runs out.
    assert failed and failed[0].outcome == "deadline" and {c.outcome for c in failed} <= {"deadline", "busy"}
    assert any(
        "LLM answer step" in w and ("until the budget ran out" in w or "time budget" in w)
        for w in answer.warnings
        if "offline answer stands in" in w
    ), answer.warnings
    assert any("slowest step:" in w for w in answer.warnings)
    assert "llm_answer" in answer.timings_ms and answer.timings_ms["total"] < WHOLE * 1000
    again = pipeline.ask(QUESTION, "thinking")
    assert again.cached is None  # a stand-in answer is not the configured provider's: never cached


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (LLMReply.malformed(), "text/html, not a chat completion"),
        (context_length_exceeded(), "FLUX_CONTEXT_BUDGET_CHARS"),
        (LLMReply.raw_json({"choices": []}), "empty choice"),
        (LLMReply.forever(token_delay=0.001), "went past max_tokens"),
        (LLMReply.text("the model answered in prose, not JSON"), "not valid JSON"),
    ],
    ids=["html-proxy", "context-length", "empty-choice", "endless-stream", "not-json"],
)
def test_a_server_that_cannot_answer_gets_the_offline_answer_and_a_warning_naming_why(
    pipeline: Pipeline, demo_platform: FluxSettings, server: LLMServer, reply: LLMReply, says: str
) -> None:
    server.responder = None
    server.script(*[reply] * 12)
    _with_llm(pipeline, demo_platform, server, budget=30.0)
    started = time.monotonic()
    answer = pipeline.ask(QUESTION, "quick")
    # Each of these replies fails its call at once (the endless stream at its 2,000-token cap, 2 s of stream), and
    # the calls are paced at one a second: about 3 to 6 s here. A call that waited instead takes the 30 s budget.
    assert time.monotonic() - started < 30.0
    assert answer.provider == "offline-extractive" and answer.claims
    [warning] = [w for w in answer.warnings if "LLM answer step" in w]
    assert says in warning and "the offline answer stands in" in warning


def test_a_model_the_server_does_not_have_is_named_in_the_warning(
    pipeline: Pipeline, demo_platform: FluxSettings
) -> None:
    server = LLMServer(citing_responder, models=("smollm2",)).start()
    try:
        _with_llm(pipeline, demo_platform, server, model="gpt-4o-mini")
        answer = pipeline.ask(QUESTION, "quick")
    finally:
        server.stop()
    assert answer.provider == "offline-extractive" and answer.claims
    assert any("does not exist" in w and "FLUX_LLM_MODEL" in w for w in answer.warnings), answer.warnings


def test_a_healthy_llms_calls_are_in_the_answer_the_metrics_and_the_stream(
    pipeline: Pipeline, demo_platform: FluxSettings, server: LLMServer
) -> None:
    server.responder = stepwise_responder()
    settings = _with_llm(pipeline, demo_platform, server, budget=30.0)
    with TestClient(create_app(settings, pipeline), raise_server_exceptions=False) as client:
        response = client.post("/query/stream", json={"question": QUESTION, "mode": "thinking"})
        assert response.status_code == 200
        events = sse_events(response.text)
        answer = dict(events)["answer"]
        metrics = client.get("/metrics").text
    assert answer["provider"] == "openai-compatible:test-model" and answer["claims"]
    steps = [c["step"] for c in answer["llm_calls"]]
    assert steps[0] == "screen" and "judge" in steps and steps[-1] == "answer"
    assert all(c["outcome"] == "ok" and c["tokens_out"] > 0 for c in answer["llm_calls"]), answer["llm_calls"]
    assert not [w for w in answer["warnings"] if "LLM" in w]
    streamed = [data for name, data in events if name == "step" and data["step"] == "llm_call"]
    assert [(d["llm_step"], d["outcome"]) for d in streamed] == [(c["step"], c["outcome"]) for c in answer["llm_calls"]]
    assert 'flux_llm_calls_total{outcome="ok",step="answer"}' in metrics
    assert 'flux_llm_tokens_total{direction="out",step="answer"}' in metrics
    assert f'flux_llm_endpoint_requests{{endpoint="{server.base_url}",state="in_flight"}} 0.0' in metrics
