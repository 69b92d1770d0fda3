"""The LLM call contract against the scripted OpenAI-compatible server (tests/support/llm_server.py, which enforces
the Chat Completions request rules OpenAI documents and streams `chat.completion.chunk` events as its API reference
describes): every call bounded by `max_tokens` and by its question's deadline, Flux's own stops on a stream, retries
only for requests never started, one request in flight per endpoint, the JSON mode the server accepts, and every
call recorded (tokens, latency, queueing, outcome).

Servers that break the contract — one that ignores max_tokens and streams forever, one that rambles after its JSON,
one that answers too slowly, one with no JSON mode, a context-length error, a model it does not have — each get a
clear failure within the deadline, which the pipeline turns into the offline answer with a warning."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from retrieval.answering.llm import OpenAICompatibleProvider, TaskTokens
from retrieval.answering.llm_transport import ChatFailed, TransportOptions
from retrieval.model.llm_budget import QuestionBudget
from retrieval.model.plan import plan_schema
from retrieval.model.types import Evidence, ProviderError
from tests.support.cli import flux
from tests.support.clock import ManualClock
from tests.support.llm_server import (
    CHAT_PATH,
    LLMReply,
    LLMServer,
    completion,
    context_length_exceeded,
    response_format_problem,
)
from tests.support.scripted_server import Reply

QUESTION = "What does glycolysis produce?"
EVIDENCE = [
    Evidence(
        id="reactome_R-HSA-70171_0",
        kind="chunk",
        source="reactome",
        title="Glycolysis",
        text="Glycolysis converts glucose to two pyruvate molecules.",
    )
]
ANSWER = json.dumps(
    {
        "answer": "Pyruvate.",
        "claims": [{"text": "Glycolysis yields pyruvate.", "citations": ["reactome_R-HSA-70171_0"]}],
        "citations": ["reactome_R-HSA-70171_0"],
        "confidence": 0.8,
        "reasoning_summary": "It says so.",
    }
)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    """A fresh server per test: its port is new, so its endpoint record (JSON mode, slots) starts blank."""
    started = LLMServer().start()
    yield started
    started.stop()


def _provider(
    server: LLMServer,
    *,
    timeout: float = 5.0,
    concurrency: int = 1,
    stream: bool = True,
    tokens: TaskTokens | None = None,
    model: str = "test-model",
) -> OpenAICompatibleProvider:
    options = TransportOptions(
        timeout=timeout,
        max_attempts=3,
        requests_per_minute=60_000,
        concurrency=concurrency,
        stream=stream,
        backoff_initial=0.01,
    )
    return OpenAICompatibleProvider(server.base_url, model, None, options, max_tokens=tokens)


def _eventually(check: Any, seconds: float = 3.0) -> bool:
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        if check():
            return True
        time.sleep(0.02)
    return bool(check())


# --- bounded calls -------------------------------------------------------------------------------------------
def test_every_task_carries_its_token_cap_its_schema_and_asks_for_a_stream(server: LLMServer) -> None:
    tokens = TaskTokens(screen=11, plan=22, rewrite=33, judge=44, answer=55)
    server.script(
        LLMReply.json({"allowed": True, "reason": ""}),
        LLMReply.json({"queries": ["a", "b"]}),
        LLMReply.json({"verdict": "good", "confidence": 0.9, "missing": [], "rationale": "ok"}),
        ANSWER,
    )
    server.script_plans(LLMReply.json({"operation": "search"}))
    with _provider(server, tokens=tokens) as provider:
        provider.screen(QUESTION)
        provider.rewrite(QUESTION, "decompose")
        provider.judge(QUESTION, EVIDENCE)
        provider.generate(QUESTION, EVIDENCE)
        provider.propose_plan(QUESTION, plan_schema())
    caps = {body["response_format"]["json_schema"]["name"]: body["max_tokens"] for body in server.chats}
    assert caps == {"flux_screen": 11, "flux_rewrite": 33, "flux_judge": 44, "flux_answer": 55, "flux_plan": 22}
    for body in server.chats:
        assert response_format_problem(body["response_format"]) == ""
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_a_model_that_rambles_after_its_json_is_stopped_at_the_object(server: LLMServer) -> None:
    server.script(LLMReply(content=ANSWER, ramble=" Also, more words." * 60, token_delay=0.005))
    budget = QuestionBudget(10.0)
    with _provider(server) as provider, budget.active():
        raw = provider.generate(QUESTION, EVIDENCE)
    assert json.loads(raw) == json.loads(ANSWER)  # the object alone, not the ramble
    [call] = budget.calls
    assert call.outcome == "cut" and "after its JSON object" in call.detail
    assert _eventually(lambda: len(server.disconnects) == 1)  # the stream was closed: the server stopped


def test_a_server_that_ignores_max_tokens_and_streams_forever_is_cut_at_the_cap(server: LLMServer) -> None:
    server.script(LLMReply.forever(token_delay=0.001))
    budget = QuestionBudget(20.0)
    started = time.monotonic()
    with (
        _provider(server, timeout=30.0, tokens=TaskTokens(answer=40)) as provider,
        budget.active(),
        pytest.raises(ChatFailed) as failed,
    ):
        provider.generate(QUESTION, EVIDENCE)
    # Cut at 40 tokens, a few hundredths of a second of stream; a stream read past its cap runs on to the 20 s budget
    # (the server's own stop, 20,000 chunks in, comes no sooner), so 5 s tells the two apart on any machine.
    assert time.monotonic() - started < 5.0
    assert "went past max_tokens (40)" in str(failed.value) and "FLUX_LLM_MAX_TOKENS_ANSWER" in str(failed.value)
    assert budget.calls[0].outcome == "rejected" and budget.calls[0].attempts == 1
    assert _eventually(lambda: len(server.disconnects) == 1)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "one-body"])
def test_a_reply_that_reaches_max_tokens_names_the_setting(server: LLMServer, stream: bool) -> None:
    server.script(ANSWER)  # longer than 5 tokens: the server stops it with finish_reason "length"
    with (
        _provider(server, stream=stream, tokens=TaskTokens(answer=5)) as provider,
        pytest.raises(ProviderError, match=r"reached max_tokens \(5\).*FLUX_LLM_MAX_TOKENS_ANSWER"),
    ):
        provider.generate(QUESTION, EVIDENCE)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "one-body"])
def test_tokens_and_latency_are_recorded_from_the_servers_usage(server: LLMServer, stream: bool) -> None:
    server.script(ANSWER)
    budget = QuestionBudget(10.0)
    with _provider(server, stream=stream) as provider, budget.active():
        provider.generate(QUESTION, EVIDENCE)
    [call] = budget.calls
    prompt = "\n".join(m["content"] for m in server.chats[0]["messages"])
    assert (call.tokens_in, call.tokens_out) == (len(prompt.split()), len(ANSWER.split()))
    assert not call.tokens_estimated and call.outcome == "ok" and call.step == "answer"
    assert call.max_tokens == TaskTokens().answer and call.json_mode == "json_schema" and call.ms > 0
    assert budget.timings() == {"llm_answer": call.ms}


def test_a_server_that_ignores_stream_and_answers_one_body_is_read(server: LLMServer) -> None:
    server.script(LLMReply(raw=Reply.json(json.dumps(completion(ANSWER, "test-model", 1)))))
    with _provider(server) as provider:
        assert json.loads(provider.generate(QUESTION, EVIDENCE)) == json.loads(ANSWER)


# --- one deadline per question -------------------------------------------------------------------------------
def test_the_calls_of_one_question_share_its_budget(server: LLMServer) -> None:
    # The answer's reply would take 30 s: only what the screen left of the budget can end its wait sooner.
    server.script(LLMReply.slow(0.6, json.dumps({"allowed": True, "reason": ""})), LLMReply.slow(30.0, ANSWER))
    # The budget's clock moves by the screen's 0.6 s alone, not by this machine's overhead around the call, so the
    # answer is left exactly 0.4 s (above the 0.25 s a call needs to be sent at all).
    clock = ManualClock()
    budget = QuestionBudget(1.0, clock=clock)
    started = time.monotonic()
    with _provider(server, timeout=30.0) as provider, budget.active():
        assert provider.screen(QUESTION) is None  # allowed, after 0.6 s
        clock.advance(0.6)
        with pytest.raises(ChatFailed, match="time budget ran out"):
            provider.generate(QUESTION, EVIDENCE)  # 0.4 s left, not a fresh 30 s
    # About 1 s (the screen's 0.6 s, then the answer's 0.4 s); an answer given the 30 s timeout instead of what was
    # left waits for the 30 s reply.
    assert time.monotonic() - started < 10.0
    assert [(c.step, c.outcome) for c in budget.calls] == [("screen", "ok"), ("answer", "deadline")]
    assert "LLM answer step ran out of the question's time budget" in budget.warnings()[0]
    assert "slowest step: screen" in budget.warnings()[0]


def test_the_answer_reserve_leaves_the_answer_its_time(server: LLMServer) -> None:
    """A server with two slots: the judge's abandoned request runs on in one, the answer gets the other."""
    server.script(LLMReply.slow(30.0, "{}"), LLMReply.slow(0.3, ANSWER))
    budget = QuestionBudget(2.0, answer_reserve=1.4)
    with _provider(server, timeout=30.0, concurrency=2) as provider, budget.active():
        judged = provider.judge(QUESTION, EVIDENCE)  # may use 1 s of the 2 s (a reserve is at most half)
        raw = provider.generate(QUESTION, EVIDENCE)  # gets the 1 s kept for it
    assert judged.verdict is None and "judge unavailable" in judged.rationale
    assert json.loads(raw)["answer"] == "Pyruvate."
    assert [(c.step, c.outcome) for c in budget.calls] == [("judge", "deadline"), ("answer", "ok")]
    judge, answer = budget.calls
    # The judge is cut at 1 s (the 2 s budget less the 1 s kept for the answer); a judge given the whole budget is
    # cut at 2 s, and one with no deadline waits for the 30 s reply. Half a second either side of 1 s leaves room
    # for a slow machine's cancellation and still tells 1 s from 2 s.
    assert 500 <= judge.ms < 1500, judge
    assert answer.queued_ms == 0, answer  # the second slot was free: the answer did not wait for the judge's


def test_an_abandoned_request_holds_the_slot_until_the_server_hears_the_hang_up(server: LLMServer) -> None:
    """With one slot, the judge's request cancelled at 1.5 s keeps the slot until the server's reply starts (2 s):
    a single-slot server is busy with it till then, so the answer waits in Flux, not on the server."""
    server.script(LLMReply.slow(2.0, "{}"), LLMReply.slow(0.2, ANSWER))
    budget = QuestionBudget(3.0, answer_reserve=1.5)
    with _provider(server, timeout=30.0, concurrency=1) as provider, budget.active():
        provider.judge(QUESTION, EVIDENCE)
        raw = provider.generate(QUESTION, EVIDENCE)
    assert json.loads(raw)["answer"] == "Pyruvate."
    judge, answer = budget.calls
    assert judge.outcome == "deadline" and answer.outcome == "ok"
    # The order of events, from the server's arrival times: the answer queued in Flux after the judge's deadline
    # (1.5 s) and its request was sent only once the server began the judge's reply (2 s after that request came).
    # It still answered within the 1.5 s left to it, so the slot came free at that reply, not later.
    judge_request, answer_request = server.hits(CHAT_PATH)
    assert answer.queued_ms > 0, answer
    assert answer_request.at - judge_request.at >= 2.0, (judge_request.at, answer_request.at)
    assert server.max_in_flight == 1


def test_no_request_is_sent_when_the_budget_is_spent(server: LLMServer) -> None:
    ticks = itertools.chain([0.0], itertools.repeat(0.15))  # the question started, then 0.15 s went by
    budget = QuestionBudget(0.1, clock=lambda: next(ticks))
    with _provider(server) as provider, budget.active(), pytest.raises(ChatFailed, match="none for this step"):
        provider.generate(QUESTION, EVIDENCE)
    assert server.requests == [] and budget.calls[0].outcome == "deadline" and budget.calls[0].attempts == 0


def test_a_slow_stream_is_cancelled_on_the_server_at_the_timeout(server: LLMServer) -> None:
    server.script(LLMReply.trickle("word " * 1500 + ANSWER, token_delay=0.02))  # its JSON would come after 30 s
    started = time.monotonic()
    with _provider(server, timeout=0.5) as provider, pytest.raises(ChatFailed, match=r"FLUX_LLM_TIMEOUT=0\.5s"):
        provider.generate(QUESTION, EVIDENCE)
    # Cut at the 0.5 s timeout; a call that read on would take the stream's 30 s. Ten times the timeout leaves room
    # for a slow machine and is far below 30 s.
    assert time.monotonic() - started < 5.0
    assert len(server.requests) == 1  # not retried
    assert _eventually(lambda: len(server.disconnects) == 1)  # and the server stopped sending


# --- one request in flight per endpoint --------------------------------------------------------------------
def _ask_in_thread(provider: OpenAICompatibleProvider, seconds: float, out: dict[str, Any], name: str) -> None:
    budget = QuestionBudget(seconds, emit=lambda event, payload: out.setdefault(f"{name}_events", []).append(event))
    with budget.active():
        try:
            out[name] = provider.generate(QUESTION, EVIDENCE)
        except ProviderError as exc:
            out[name] = exc
    out[f"{name}_calls"] = budget.calls


def test_concurrent_questions_queue_in_flux_not_on_the_server(server: LLMServer) -> None:
    server.script(LLMReply.trickle(ANSWER, token_delay=0.02), LLMReply.trickle(ANSWER, token_delay=0.02))
    out: dict[str, Any] = {}
    with _provider(server, concurrency=1) as provider:
        threads = [threading.Thread(target=_ask_in_thread, args=(provider, 10.0, out, n)) for n in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(15)
    assert all(isinstance(out[n], str) for n in ("a", "b")), out
    assert server.max_in_flight == 1
    queued = sorted(out[f"{n}_calls"][0].queued_ms for n in ("a", "b"))
    assert queued[0] == 0 and queued[1] > 50  # the second waited in Flux for the first
    assert "llm_wait" in out.get("a_events", []) + out.get("b_events", [])


def test_a_question_that_waits_past_its_budget_is_told_the_endpoint_is_busy(server: LLMServer) -> None:
    server.script(LLMReply.slow(1.5, ANSWER))
    out: dict[str, Any] = {}
    with _provider(server, concurrency=1, timeout=30.0) as provider:
        first = threading.Thread(target=_ask_in_thread, args=(provider, 10.0, out, "first"))
        first.start()
        assert _eventually(lambda: server.in_flight == 1)
        _ask_in_thread(provider, 0.5, out, "second")
        first.join(5)
    assert isinstance(out["second"], ChatFailed) and "no free slot" in str(out["second"])
    assert out["second_calls"][0].outcome == "busy" and len(server.requests) == 1


# --- JSON mode: detected once per endpoint ------------------------------------------------------------------
def test_a_server_without_json_schema_is_asked_in_json_mode_from_then_on() -> None:
    server = LLMServer(json_modes=("text", "json_object")).start()
    try:
        server.script(ANSWER, ANSWER)
        with _provider(server) as provider:
            provider.generate(QUESTION, EVIDENCE)
            provider.generate(QUESTION, EVIDENCE)
        formats = [b.get("response_format", {}).get("type") for b in server.chats]
        assert formats == ["json_schema", "json_object", "json_object"]  # probed once, then remembered
    finally:
        server.stop()


def test_a_server_with_no_json_mode_gets_json_asked_in_the_prompt_and_a_warning() -> None:
    server = LLMServer(json_modes=("text",)).start()
    try:
        server.script(ANSWER)
        budget = QuestionBudget(10.0)
        with _provider(server) as provider, budget.active():
            assert json.loads(provider.generate(QUESTION, EVIDENCE))["answer"] == "Pyruvate."
        assert [b.get("response_format", {}).get("type") for b in server.chats] == ["json_schema", "json_object", None]
        assert budget.calls[0].json_mode == "prompt"
        assert any("JSON in the prompt only" in w for w in budget.warnings())
    finally:
        server.stop()


def test_a_500_that_names_response_format_is_a_rejected_mode_not_a_failure(server: LLMServer) -> None:
    # What llama-cpp-python's server answers to json_schema: its validation error through a catch-all 500.
    body = {
        "error": {
            "message": "1 validation error: ('body', 'response_format', 'type') Input should be 'text' "
            "or 'json_object'",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    }
    server.script(LLMReply(raw=Reply(500, json.dumps(body).encode(), {"Content-Type": "application/json"})), ANSWER)
    with _provider(server) as provider:
        assert json.loads(provider.generate(QUESTION, EVIDENCE))["answer"] == "Pyruvate."
    assert [b["response_format"]["type"] for b in server.chats] == ["json_schema", "json_object"]


# --- servers that cannot answer ------------------------------------------------------------------------------
def test_a_context_length_error_names_the_setting_and_is_not_retried(server: LLMServer) -> None:
    server.script(context_length_exceeded(), ANSWER)
    budget = QuestionBudget(10.0)
    with _provider(server) as provider, budget.active(), pytest.raises(ChatFailed) as failed:
        provider.generate(QUESTION, EVIDENCE)
    assert "exceeds the model's context" in str(failed.value) and "FLUX_CONTEXT_BUDGET_CHARS" in str(failed.value)
    assert len(server.requests) == 1 and budget.calls[0].outcome == "refused"


def test_a_model_the_server_does_not_have_names_the_setting() -> None:
    server = LLMServer(models=("smollm2",)).start()
    try:
        with (
            _provider(server, model="gpt-4o-mini") as provider,
            pytest.raises(ChatFailed, match=r"does not exist.*FLUX_LLM_MODEL"),
        ):
            provider.generate(QUESTION, EVIDENCE)
        assert len(server.requests) == 1
    finally:
        server.stop()


# --- flux llm check ---------------------------------------------------------------------------------------------
def test_llm_check_reports_the_server_its_json_mode_and_a_timed_probe() -> None:
    server = LLMServer(models=("smollm2", "other"), json_modes=("text", "json_object")).start()
    try:
        server.script(json.dumps({"allowed": True, "reason": ""}))  # four tokens (whitespace-led words)
        outcome = flux(
            "llm", "check", "--json", env={"FLUX_LLM_BASE_URL": server.base_url, "FLUX_LLM_MODEL": "smollm2"}
        )
    finally:
        server.stop()
    assert outcome.code == 0, outcome.stderr
    report = json.loads(outcome.stdout)
    assert report["models"] == ["smollm2", "other"] and report["json_mode"] == "json_object"
    assert report["probe"]["outcome"] == "ok" and report["probe"]["step"] == "screen" and report["ok"] is True
    assert report["probe"]["tokens_out"] == 4 and report["tokens_per_second"] > 0


def test_llm_check_exits_1_naming_why_the_server_cannot_answer() -> None:
    server = LLMServer(models=("smollm2",)).start()
    try:
        outcome = flux("llm", "check", env={"FLUX_LLM_BASE_URL": server.base_url, "FLUX_LLM_MODEL": "gpt-4o-mini"})
    finally:
        server.stop()
    assert outcome.code == 1
    assert "not among the server's models (smollm2)" in outcome.printed
    assert "llm: the probe failed: refused: HTTP 404" in outcome.said and "FLUX_LLM_MODEL" in outcome.said


def test_llm_check_on_a_dead_endpoint_or_none_says_so_in_one_line() -> None:
    dead = LLMServer().start()
    dead.stop()
    outcome = flux("llm", "check", env={"FLUX_LLM_BASE_URL": dead.base_url})
    assert outcome.code == 1 and "does not answer at" in outcome.said and "connection failed" in outcome.said
    unset = flux("llm", "check", env={"FLUX_LLM_BASE_URL": ""})
    assert unset.code == 2 and unset.flux_lines and "FLUX_LLM_BASE_URL" in unset.flux_lines[0]
