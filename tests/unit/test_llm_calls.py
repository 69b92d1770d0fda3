"""The pure logic of bounded LLM calls: reading a reply off the wire (llm_stream.py), the question's budget and its
warnings (model/llm_budget.py), the endpoint's JSON modes and slots (llm_endpoint.py), what an error status means
(llm_transport.py), and how calls reach /metrics and the MLflow query run. Network behaviour is tested against
the scripted server in tests/integration/test_llm_contract.py."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from retrieval.answering.llm_endpoint import Endpoint
from retrieval.answering.llm_stream import Cancelled, NotAReply, ReplyReader, json_object_span
from retrieval.answering.llm_transport import _status_failure
from retrieval.model.answer import FinalAnswer
from retrieval.model.llm_budget import LLMCall, QuestionBudget, current, mark_rejected
from serving.metrics import ServiceMetrics
from serving.tracking import llm_call_history, run_payload
from tests.support.clock import ManualClock


def _sse(*chunks: dict | str) -> httpx.Response:
    body = "".join(f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def _delta(text: str | None = None, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": {} if text is None else {"content": text}, "finish_reason": finish}]}


def _reader(max_tokens: int = 100, cancelled: bool = False) -> ReplyReader:
    return ReplyReader(max_tokens, True, lambda: cancelled)


# --- reading a reply ---------------------------------------------------------------------------------------
def test_a_stream_is_joined_and_its_usage_read() -> None:
    reading = _reader().read(
        _sse(
            _delta('{"a":'),
            _delta(" 1}"),
            _delta(finish="stop"),
            {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}},
            "[DONE]",
        )
    )
    assert (reading.text, reading.chunks, reading.finish_reason, reading.cut) == ('{"a": 1}', 2, "stop", "")
    assert reading.usage == {"prompt_tokens": 7, "completion_tokens": 2}


def test_a_ramble_after_the_json_object_is_cut_and_left_out() -> None:
    reading = _reader().read(
        _sse(_delta('```json\n{"a": 1}'), _delta("\n```"), _delta(" I hope this helps"), _delta(" a lot"), "[DONE]")
    )
    assert reading.cut == "the model went on writing after its JSON object" and reading.text == '{"a": 1}'
    assert reading.chunks == 3  # reading stopped at the first word past the object


def test_content_past_max_tokens_is_cut() -> None:
    words = [_delta(" word") for _ in range(40)]
    reading = _reader(max_tokens=10).read(_sse(_delta('{"a": "'), *words, "[DONE]"))
    assert "went past max_tokens (10)" in reading.cut and reading.chunks == 10 + 16 + 1
    assert reading.json_span is None


def test_a_cancelled_read_stops_at_the_next_line() -> None:
    with pytest.raises(Cancelled):
        _reader(cancelled=True).read(_sse(_delta("{")))


@pytest.mark.parametrize(
    ("response", "says"),
    [
        (
            httpx.Response(200, headers={"content-type": "text/html"}, content=b"<html>bad gateway</html>"),
            "text/html, not a chat completion: <html>bad gateway</html>",
        ),
        (_sse({"error": {"message": "model crashed"}}), "mid-stream: model crashed"),
        (_sse("not json"), "not JSON"),
        (httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b": ping\n\n"), "ended without"),
        (httpx.Response(200, json={"choices": []}), "empty choice"),
        (httpx.Response(200, json={"error": {"message": "overloaded"}}), "reported an error: overloaded"),
    ],
    ids=["html", "error-event", "bad-event", "no-reply", "empty-choice", "error-body"],
)
def test_what_is_not_a_chat_completion_is_named(response: httpx.Response, says: str) -> None:
    with pytest.raises(NotAReply, match=says):
        _reader().read(response)


def test_one_json_body_is_read_with_its_usage() -> None:
    body = {
        "choices": [{"message": {"content": '{"a": 1} trailing'}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    reading = _reader().read(httpx.Response(200, json=body))
    assert reading.text == '{"a": 1}' and reading.usage == {"prompt_tokens": 3, "completion_tokens": 4}


def test_json_object_span() -> None:
    assert json_object_span('x {"a": {"b": "}"}} y') == (2, 19)
    assert json_object_span('{"a": ') is None and json_object_span("no object") is None


# --- what an error status means -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "headers", "body", "outcome", "retried", "format_rejected"),
    [
        (429, {}, "slow down", "busy", True, False),
        (503, {"retry-after": "2"}, "busy", "busy", True, False),
        (503, {}, "upstream", "error", False, False),
        (500, {}, '{"error": {"message": "response_format type json_schema not allowed"}}', "refused", False, True),
        (422, {}, '{"detail": "response_format: extra field"}', "refused", False, True),
        (400, {}, '{"error": {"code": "context_length_exceeded"}}', "refused", False, False),
        (404, {}, '{"error": {"message": "model gpt-x not found"}}', "refused", False, False),
        (401, {}, "no key", "refused", False, False),
        (502, {}, "<html>proxy</html>", "error", False, False),
    ],
    ids=["429", "503-retry-after", "503-bare", "500-format", "422-format", "context", "model", "401", "502"],
)
def test_an_error_status_is_classified(
    status: int, headers: dict, body: str, outcome: str, retried: bool, format_rejected: bool
) -> None:
    response = httpx.Response(status, headers={"content-type": "application/json", **headers})
    failure = _status_failure(response, body)
    assert (failure.outcome, failure.not_started, failure.format_rejected) == (outcome, retried, format_rejected)
    assert f"HTTP {status}" in failure.detail


# --- the question's budget ----------------------------------------------------------------------------------
def test_the_budget_keeps_the_answer_reserve_from_auxiliary_steps() -> None:
    clock = ManualClock()
    budget = QuestionBudget(10.0, answer_reserve=4.0, clock=clock)
    assert (budget.allowance("judge"), budget.allowance("answer")) == (6.0, 10.0)
    clock.advance(7.0)
    assert (budget.allowance("judge"), budget.allowance("answer")) == (0.0, 3.0)
    assert QuestionBudget(4.0, answer_reserve=30.0, clock=clock).allowance("screen") == 2.0  # at most half kept


def test_the_warnings_name_the_step_the_cause_and_the_slowest_step() -> None:
    budget = QuestionBudget(60.0)
    budget.record(LLMCall(step="judge", outcome="ok", ms=41_200.0))
    budget.record(LLMCall(step="answer", outcome="deadline", ms=18_000.0, detail="the time budget ran out"))
    [warning] = budget.warnings()
    assert warning == (
        "LLM answer step ran out of the question's time budget (the time budget ran out); slowest "
        "step: judge, 41.2 s; the offline answer stands in"
    )
    assert budget.timings() == {"llm_judge": 41_200.0, "llm_answer": 18_000.0}
    assert [c.step for c in budget.fell_back] == ["answer"]


def test_a_rejected_reply_is_marked_on_the_latest_call_of_the_open_budget() -> None:
    assert current() is None and mark_rejected("not JSON") is False
    budget = QuestionBudget(60.0)
    with budget.active():
        budget.record(LLMCall(step="plan", outcome="ok", ms=1.0))
        assert mark_rejected("names an entity the question does not") is True
    assert current() is None
    assert (budget.calls[0].outcome, budget.calls[0].detail) == ("rejected", "names an entity the question does not")
    assert "LLM plan step gave a reply Flux could not use" in budget.warnings()[0]


def test_a_reply_turned_down_after_its_call_ended_is_amended_on_the_stream() -> None:
    events: list[tuple[str, dict]] = []
    budget = QuestionBudget(60.0, emit=lambda name, payload: events.append((name, payload)))
    with budget.active():
        budget.record(LLMCall(step="screen", outcome="ok", ms=1.0))
        budget.record(LLMCall(step="plan", outcome="ok", ms=2.0))
        mark_rejected("schema violation at relation")
    assert [(p["llm_step"], p["outcome"], p.get("amends")) for _, p in events] == [
        ("screen", "ok", None),
        ("plan", "ok", None),
        ("plan", "rejected", 1),
    ]
    final = [p["outcome"] for _, p in events if "amends" not in p]
    for _, p in events:
        if "amends" in p:
            final[p["amends"]] = p["outcome"]
    assert final == [c.outcome for c in budget.calls] == ["ok", "rejected"]


def test_a_budget_is_seen_only_by_its_own_thread() -> None:
    seen: list[object] = []
    with QuestionBudget(1.0).active():
        thread = threading.Thread(target=lambda: seen.append(current()))
        thread.start()
        thread.join()
    assert seen == [None]


# --- the endpoint ---------------------------------------------------------------------------------------------
def test_json_modes_degrade_from_the_best_the_endpoint_is_known_to_take() -> None:
    endpoint = Endpoint("http://x/v1", 1)
    assert endpoint.modes_to_try("auto") == ["json_schema", "json_object", "prompt"]
    assert endpoint.learn("json_object") is False
    assert endpoint.modes_to_try("auto") == ["json_object", "prompt"]
    assert endpoint.learn("prompt") is True  # news: a warning is due
    assert endpoint.learn("prompt") is False  # once
    assert endpoint.modes_to_try("json_schema") == ["json_schema"]


def test_the_endpoint_gives_no_more_slots_than_its_concurrency() -> None:
    endpoint = Endpoint("http://x/v1", 1)
    heard: list[int] = []
    assert endpoint.acquire(1.0) == 0.0
    assert endpoint.acquire(0.05, heard.append) is None  # the one slot is taken
    assert heard == [1] and endpoint.waiting == 0
    endpoint.release()
    assert endpoint.acquire(0.05) == 0.0 and endpoint.in_flight == 1


# --- where calls are reported ----------------------------------------------------------------------------------
def _answer_with_calls() -> FinalAnswer:
    return FinalAnswer(
        question="q",
        answer="a",
        confidence=0.5,
        llm_calls=[
            LLMCall(step="judge", outcome="ok", ms=1200.0, tokens_in=900, tokens_out=40),
            LLMCall(step="answer", outcome="deadline", ms=3000.0, queued_ms=500.0, tokens_in=None, tokens_out=None),
        ],
    )


def test_the_calls_reach_the_metrics() -> None:
    metrics = ServiceMetrics()
    metrics.observe_answer(_answer_with_calls())
    text = metrics.render({}).decode()
    assert 'flux_llm_calls_total{outcome="deadline",step="answer"} 1.0' in text
    assert 'flux_llm_tokens_total{direction="in",step="judge"} 900.0' in text
    assert 'flux_llm_queue_seconds_sum{step="answer"} 0.5' in text


def test_the_calls_reach_the_mlflow_query_run() -> None:
    answer = _answer_with_calls()
    _params, metrics, tags = run_payload(answer, "/query")
    assert (metrics["llm_calls"], metrics["llm_failed_calls"], metrics["llm_tokens_in"]) == (2.0, 1.0, 900.0)
    assert tags["llm_outcomes"] == "judge:ok answer:deadline"
    history = llm_call_history(answer, 0)
    assert ("llm_call_ms", 3000.0, 0, 1) in history and ("llm_call_tokens_out", 40.0, 0, 0) in history
