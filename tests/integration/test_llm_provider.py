"""The OpenAI-compatible provider against a scripted server over real HTTP: request shape, the three-pass answer
validation of what it returns, retries and their limits, unusable judge/rewrite/screen replies, the shared
per-key rate limiter, and that the API key never reaches an error message. No database stack is needed.

No test measures wall time: the retries wait through an injected sleep that records the backoff asked for, and the
pacing test's limiter runs on a ManualClock, so the checks are exact on any machine."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator

import pytest

from dagster_project.core.settings import FluxConfigError, FluxSettings
from retrieval.answering.llm import OpenAICompatibleProvider, TaskTokens, llm_limiter
from retrieval.answering.llm_schemas import ANSWER_SCHEMA
from retrieval.answering.llm_transport import TransportOptions
from retrieval.model import answer
from retrieval.model.answer import validate_answer
from retrieval.model.types import Evidence, ProviderError
from tests.support.clock import ManualClock
from tests.support.llm_server import LLMReply, LLMServer, citing_responder, evidence_ids, response_format_problem

KEY = "sk-test-7f3a9c2e0b41-do-not-leak"
QUESTION = "What does glycolysis turn glucose into?"
EVIDENCE = [
    Evidence(
        id="reactome_R-HSA-70171_0",
        kind="chunk",
        source="reactome",
        title="Glycolysis",
        text="Glycolysis converts one glucose into two pyruvate molecules.",
    ),
    Evidence(
        id="openalex_W123_2",
        kind="chunk",
        source="openalex",
        title="Aerobic glycolysis in tumours",
        text="Tumour cells reduce pyruvate to lactate even when oxygen is present.",
    ),
    Evidence(
        id="hsa00010",
        kind="graph",
        source="kegg",
        title="Glycolysis / Gluconeogenesis",
        text="KEGG pathway hsa00010 with HK1, PFKM and PKM.",
    ),
]
IDS = [e.id for e in EVIDENCE]


def _provider(
    server: LLMServer,
    *,
    api_key: str | None = KEY,
    timeout: float = 2.0,
    max_attempts: int = 3,
    requests_per_minute: float = 60_000.0,
    sleeps: list[float] | None = None,
) -> OpenAICompatibleProvider:
    """A provider whose retry waits are recorded in `sleeps` (a throwaway list unless given), never slept."""
    options = TransportOptions(
        timeout=timeout,
        max_attempts=max_attempts,
        requests_per_minute=requests_per_minute,
        backoff_initial=0.01,
        backoff_max=2.0,
    )
    return OpenAICompatibleProvider(
        server.base_url, "test-model", api_key, options, sleep=(sleeps if sleeps is not None else []).append
    )


@pytest.fixture
def sleeps() -> list[float]:
    """The retry waits the `provider` fixture asked for, in order."""
    return []


@pytest.fixture
def provider(llm_server: LLMServer, sleeps: list[float]) -> Iterator[OpenAICompatibleProvider]:
    with _provider(llm_server, sleeps=sleeps) as client:
        yield client


def _sleep_on(clock: ManualClock, waits: list[float]) -> Callable[[float], None]:
    """A sleep that records the wait and moves the manual clock on by it, as a real sleep would."""

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.advance(seconds)

    return sleep


def _reply(**fields: object) -> str:
    payload: dict[str, object] = {
        "answer": "Glycolysis yields pyruvate [reactome_R-HSA-70171_0]; tumours make lactate [openalex_W123_2].",
        "claims": [
            {"text": "Glycolysis yields two pyruvate.", "citations": ["reactome_R-HSA-70171_0"]},
            {"text": "Tumours reduce pyruvate to lactate.", "citations": ["openalex_W123_2"]},
        ],
        "citations": ["reactome_R-HSA-70171_0", "openalex_W123_2"],
        "confidence": 0.85,
        "reasoning_summary": "Both chunks say what glycolysis produces.",
    }
    payload.update(fields)
    return json.dumps({k: v for k, v in payload.items() if v is not None})


# --- generation and validation ---------------------------------------------------------------------------
def test_valid_answer_validates_and_the_request_is_well_formed(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    llm_server.script(_reply())
    result = validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE), EVIDENCE)

    assert result.warnings == []
    assert result.confidence == 0.85
    assert [c.id for c in result.citations] == ["reactome_R-HSA-70171_0", "openalex_W123_2"]
    assert {c for claim in result.claims for c in claim.citations} <= set(IDS)
    assert result.used_sources == ["openalex", "reactome"]
    [request] = llm_server.requests
    assert request.authorization == f"Bearer {KEY}"
    assert request.json is not None
    assert request.json["model"] == "test-model"
    fmt = request.json["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "flux_answer"
    assert fmt["json_schema"]["schema"] == ANSWER_SCHEMA and response_format_problem(fmt) == ""
    assert request.json["max_tokens"] == TaskTokens().answer
    assert request.json["stream"] is True and request.json["stream_options"] == {"include_usage": True}
    assert request.json["messages"][0]["role"] == "system"
    assert "ONLY" in request.json["messages"][0]["content"]
    assert evidence_ids(request.json) == IDS
    assert "[hsa00010] (kegg) Glycolysis / Gluconeogenesis\nKEGG pathway" in request.prompt


def test_content_aware_responder_cites_the_evidence_it_was_shown(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    llm_server.responder = citing_responder
    result = validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE[:2]), EVIDENCE[:2])
    assert result.warnings == []
    assert [c.id for c in result.citations] == IDS[:2]
    assert result.confidence == 0.8


def test_malformed_json_content_becomes_the_fallback(llm_server: LLMServer, provider: OpenAICompatibleProvider) -> None:
    llm_server.script('{"answer": "Pyruvate", "claims": [')
    result = validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE), EVIDENCE)
    assert result.answer == answer.FALLBACK_TEXT
    assert result.confidence == 0.0
    assert result.citations == [] and result.claims == []
    assert any("not valid JSON" in w for w in result.warnings)


@pytest.mark.parametrize("reply", [_reply(confidence=3), _reply(answer=None), json.dumps(["not", "an", "object"])])
def test_schema_violation_becomes_the_fallback(
    llm_server: LLMServer, provider: OpenAICompatibleProvider, reply: str
) -> None:
    llm_server.script(reply)
    result = validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE), EVIDENCE)
    assert result.answer == answer.FALLBACK_TEXT
    assert result.confidence == 0.0
    assert any("schema" in w for w in result.warnings)


def test_citations_to_evidence_never_given_are_dropped(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    llm_server.script(
        _reply(
            answer="Glycolysis yields pyruvate [reactome_R-HSA-70171_0] [ghost_chunk_9].",
            claims=[
                {"text": "Glycolysis yields two pyruvate.", "citations": ["reactome_R-HSA-70171_0", "ghost_chunk_9"]}
            ],
            citations=["reactome_R-HSA-70171_0", "R-HSA-NOT-GIVEN"],
        )
    )
    result = validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE), EVIDENCE)
    ghosts = {"ghost_chunk_9", "R-HSA-NOT-GIVEN"}
    assert [c.id for c in result.citations] == ["reactome_R-HSA-70171_0"]
    assert not ghosts & {c for claim in result.claims for c in claim.citations}
    assert "ghost_chunk_9" not in result.answer
    [warning] = result.warnings
    assert "ghost_chunk_9" in warning and "R-HSA-NOT-GIVEN" in warning
    assert result.confidence == 0.85


def test_uncited_claims_are_removed_and_none_left_means_fallback(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    llm_server.script(
        _reply(
            claims=[
                {"text": "Glycolysis yields two pyruvate.", "citations": ["reactome_R-HSA-70171_0"]},
                {"text": "It also makes ATP.", "citations": []},
            ]
        ),
        _reply(claims=[{"text": "It also makes ATP.", "citations": []}], citations=[]),
    )
    partly = validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE), EVIDENCE)
    assert [c.text for c in partly.claims] == ["Glycolysis yields two pyruvate."]
    assert "ATP" not in partly.answer
    assert any("removed 1 claim" in w for w in partly.warnings)

    nothing = validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE), EVIDENCE)
    assert nothing.answer == answer.FALLBACK_TEXT
    assert nothing.confidence == 0.0
    assert any("removed 1 claim" in w for w in nothing.warnings)


# --- transport: retries only for requests never started ------------------------------------------------------
def test_a_slow_reply_is_cancelled_at_the_timeout_and_not_retried(llm_server: LLMServer) -> None:
    # The reply is valid but starts after 1 s: a client that gives up at its 0.3 s timeout fails here, and a retry
    # would queue behind a generation the server may still be running.
    llm_server.script(LLMReply.slow(1.0, _reply()), _reply())
    sleeps: list[float] = []
    with (
        _provider(llm_server, timeout=0.3, max_attempts=3, sleeps=sleeps) as client,
        pytest.raises(ProviderError) as err,
    ):
        client.generate(QUESTION, EVIDENCE)
    assert "FLUX_LLM_TIMEOUT=0.3s" in str(err.value) and "not retried" in str(err.value)
    assert "(1 attempt)" in str(err.value)
    assert len(llm_server.requests) == 1 and sleeps == []


def test_429_with_retry_after_is_honoured_then_succeeds(
    llm_server: LLMServer, provider: OpenAICompatibleProvider, sleeps: list[float]
) -> None:
    llm_server.script(LLMReply.error(429, retry_after="1"), _reply())
    raw = provider.generate(QUESTION, EVIDENCE)
    assert sleeps == [1.0]  # what Retry-After asked (under backoff_max), not the 0.01 s backoff
    assert validate_answer(QUESTION, raw, EVIDENCE).warnings == []
    assert len(llm_server.requests) == 2


def test_503_is_retried_only_with_retry_after(
    llm_server: LLMServer, provider: OpenAICompatibleProvider, sleeps: list[float]
) -> None:
    """503 + Retry-After says the server did not take the request; a bare 503 (or 502, 504) may come from a proxy
    whose upstream is still generating."""
    llm_server.script(LLMReply.error(503, retry_after="0"), _reply())
    assert validate_answer(QUESTION, provider.generate(QUESTION, EVIDENCE), EVIDENCE).warnings == []
    assert len(llm_server.requests) == 2 and sleeps == [0.0]
    llm_server.script(LLMReply.error(503), _reply())
    with pytest.raises(ProviderError, match=r"HTTP 503.*\(1 attempt\)"):
        provider.generate(QUESTION, EVIDENCE)
    assert len(llm_server.requests) == 3


def test_the_backoff_doubles_between_attempts(
    llm_server: LLMServer, sleeps: list[float], provider: OpenAICompatibleProvider
) -> None:
    llm_server.script(*[LLMReply.error(429)] * 3)
    with pytest.raises(ProviderError, match=r"HTTP 429.*3 attempts"):
        provider.generate(QUESTION, EVIDENCE)
    # backoff_initial 0.01 s, then 0.02 s, each plus a jitter of at most backoff_initial.
    without_jitter = [0.01, 0.02]
    assert all(base <= wait <= base + 0.01 for wait, base in zip(sleeps, without_jitter, strict=True)), sleeps


@pytest.mark.parametrize("status", [500, 502, 504, 529])
def test_a_5xx_is_not_retried(llm_server: LLMServer, provider: OpenAICompatibleProvider, status: int) -> None:
    llm_server.script(LLMReply.error(status), _reply())
    with pytest.raises(ProviderError, match=rf"HTTP {status}.*\(1 attempt\)"):
        provider.generate(QUESTION, EVIDENCE)
    assert len(llm_server.requests) == 1


def test_a_refused_connection_is_retried_until_the_attempts_run_out() -> None:
    server = LLMServer().start()
    server.stop()  # nothing listens on its port now: every connection is refused
    sleeps: list[float] = []
    with _provider(server, max_attempts=3, sleeps=sleeps) as client, pytest.raises(ProviderError) as err:
        client.generate(QUESTION, EVIDENCE)
    assert "connection failed" in str(err.value) and "(3 attempts)" in str(err.value)
    assert len(sleeps) == 2


def test_a_reply_cut_short_is_not_retried(llm_server: LLMServer, provider: OpenAICompatibleProvider) -> None:
    llm_server.script(LLMReply.truncated(_reply()), _reply())
    with pytest.raises(ProviderError, match="broke mid-reply"):
        provider.generate(QUESTION, EVIDENCE)
    assert len(llm_server.requests) == 1


def test_401_is_not_retried(llm_server: LLMServer, provider: OpenAICompatibleProvider) -> None:
    llm_server.script(LLMReply.error(401, body='{"error": "invalid api key"}'), _reply())
    with pytest.raises(ProviderError, match=r"HTTP 401.*invalid api key.*FLUX_LLM_API_KEY.*\(1 attempt\)"):
        provider.generate(QUESTION, EVIDENCE)
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (LLMReply.malformed(), "answered text/html, not a chat completion"),
        (LLMReply.raw_json({"choices": []}), "empty choice"),
        (LLMReply.raw_json({"error": {"message": "model overloaded"}}), "reported an error: model overloaded"),
        (LLMReply.raw_json({"choices": [{"message": {"role": "assistant", "content": None}}]}), "not text"),
        (LLMReply.text(""), "empty reply"),
    ],
    ids=["html", "no-choices", "error-object", "null-content", "empty"],
)
def test_a_body_that_is_not_a_chat_completion_raises(
    llm_server: LLMServer, provider: OpenAICompatibleProvider, reply: LLMReply, says: str
) -> None:
    llm_server.script(reply, _reply())
    with pytest.raises(ProviderError, match=says):
        provider.generate(QUESTION, EVIDENCE)
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    "replies",
    [
        [LLMReply.error(401, body=f"bad key {KEY}")],
        [LLMReply.error(429, body=f"quota for {KEY} exhausted")] * 2,
        [LLMReply.malformed(f"<p>key {KEY} rejected</p>")],
        [LLMReply.slow(1.0)],
    ],
    ids=["401", "429", "malformed", "timeout"],
)
def test_the_api_key_never_appears_in_an_error(llm_server: LLMServer, replies: list[LLMReply]) -> None:
    llm_server.script(*replies)
    with _provider(llm_server, timeout=0.3, max_attempts=2) as client, pytest.raises(ProviderError) as err:
        client.generate(QUESTION, EVIDENCE)
    assert KEY not in str(err.value) and KEY not in repr(err.value)
    assert llm_server.authorizations[0] == f"Bearer {KEY}"  # the key was really sent, and really scrubbed


def test_the_api_key_never_appears_in_the_retry_log(llm_server: LLMServer, caplog: pytest.LogCaptureFixture) -> None:
    llm_server.script(LLMReply.error(429, body=f"quota for {KEY} exhausted"), _reply())
    with caplog.at_level(logging.WARNING), _provider(llm_server) as client:
        client.generate(QUESTION, EVIDENCE)
    [retry] = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert "openai-compatible:test-model: attempt 1 of 3 not started" in retry and "HTTP 429" in retry
    assert KEY not in retry and "quota for *** exhausted" in retry


# --- judge, rewrite, screen -------------------------------------------------------------------------------
def test_judge_parses_a_valid_verdict(llm_server: LLMServer, provider: OpenAICompatibleProvider) -> None:
    llm_server.script(
        LLMReply.json(
            {
                "verdict": "partial",
                "confidence": 0.6,
                "missing": ["tumour metabolism"],
                "rationale": "Only the first step is covered.",
            }
        )
    )
    result = provider.judge(QUESTION, EVIDENCE)
    assert (result.verdict, result.confidence, result.missing) == ("partial", 0.6, ["tumour metabolism"])
    assert evidence_ids(llm_server.bodies[0] or {}) == IDS


@pytest.mark.parametrize(
    "reply",
    [
        "the evidence looks fine to me",
        json.dumps({"verdict": "great", "confidence": 1}),
        json.dumps({"confidence": 0.9}),
        json.dumps({"verdict": "good", "confidence": 7}),
    ],
)
def test_judge_garbage_means_no_verdict(llm_server: LLMServer, provider: OpenAICompatibleProvider, reply: str) -> None:
    llm_server.script(reply)
    result = provider.judge(QUESTION, EVIDENCE)
    assert result.verdict is None
    assert result.confidence == 0.0
    assert result.rationale.startswith("judge reply unusable")


def test_judge_on_an_unreachable_endpoint_means_no_verdict(llm_server: LLMServer) -> None:
    llm_server.script(LLMReply.error(502))
    with _provider(llm_server, max_attempts=2) as client:
        result = client.judge(QUESTION, EVIDENCE)
    assert result.verdict is None and "HTTP 502" in result.rationale


def test_rewrite_decompose_returns_the_scripted_sub_questions(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    queries = ["What does glycolysis produce?", "How do tumour cells use pyruvate?"]
    llm_server.script(LLMReply.json({"queries": queries}), LLMReply.json({"queries": ["glycolysis pyruvate"]}))
    assert provider.rewrite(QUESTION, "decompose") == queries
    assert QUESTION in llm_server.requests[0].prompt
    assert provider.rewrite(QUESTION, "expand") == ["glycolysis pyruvate"]


@pytest.mark.parametrize(
    "reply",
    [
        "first look up glycolysis",
        json.dumps({"queries": "one string"}),
        json.dumps({"queries": ["only one"]}),
        json.dumps({"q": ["a", "b"]}),
    ],
)
def test_rewrite_garbage_means_rules(llm_server: LLMServer, provider: OpenAICompatibleProvider, reply: str) -> None:
    llm_server.script(reply)
    assert provider.rewrite(QUESTION, "decompose") is None


def test_rewrite_direct_and_provider_errors_mean_rules(llm_server: LLMServer) -> None:
    with _provider(llm_server, max_attempts=1) as client:
        assert client.rewrite(QUESTION, "direct") is None
        assert llm_server.requests == []
        llm_server.script(LLMReply.error(500))
        assert client.rewrite(QUESTION, "compress") is None


def test_screen(llm_server: LLMServer, provider: OpenAICompatibleProvider) -> None:
    llm_server.script(
        LLMReply.json({"allowed": False, "reason": "Personal medical advice is out of scope."}),
        LLMReply.json({"allowed": True, "reason": ""}),
        "no idea",
        LLMReply.error(400),
    )
    assert provider.screen("How much metformin should I take?") == "Personal medical advice is out of scope."
    assert provider.screen(QUESTION) is None
    assert provider.screen(QUESTION) is None  # unusable reply: the offline rules still apply elsewhere
    assert provider.screen(QUESTION) is None  # provider error: likewise


# --- rate limiting and configuration ----------------------------------------------------------------------
def test_providers_with_the_same_key_share_one_rate_limiter(llm_server: LLMServer) -> None:
    key, other = f"sk-{uuid.uuid4().hex}", f"sk-{uuid.uuid4().hex}"
    first, second, third = (_provider(llm_server, api_key=k) for k in (key, key, other))
    assert first.limiter is second.limiter
    assert first.limiter is not third.limiter
    assert llm_limiter(llm_server.base_url + "/", key, 1.0) is first.limiter
    for client in (first, second, third):
        client.close()


def test_the_llm_limiter_paces_requests_across_providers(llm_server: LLMServer) -> None:
    key = f"sk-{uuid.uuid4().hex}"  # a fresh key: its limiter registered here at 120/min (one start per 0.5 s)
    clock, waits = ManualClock(), []
    limiter = llm_limiter(llm_server.base_url, key, 120, clock=clock, sleep=_sleep_on(clock, waits))
    llm_server.responder = citing_responder
    with (
        _provider(llm_server, api_key=key, requests_per_minute=120) as first,
        _provider(llm_server, api_key=key, requests_per_minute=120) as second,
    ):
        assert first.limiter is limiter and second.limiter is limiter
        first.generate(QUESTION, EVIDENCE)
        second.generate(QUESTION, EVIDENCE)
    # The second provider's request waits out the first one's interval: they share the key's quota.
    assert waits == [pytest.approx(0.5)] and len(llm_server.requests) == 2


def test_from_settings(llm_server: LLMServer) -> None:
    settings = FluxSettings(
        llm_base_url=llm_server.base_url,
        llm_model="small-model",
        llm_api_key=None,
        llm_timeout=5.0,
        llm_max_attempts=2,
        llm_requests_per_minute=6000,
        llm_temperature=0.2,
    )
    llm_server.script(LLMReply.json({"queries": ["glycolysis products"]}))
    with OpenAICompatibleProvider.from_settings(settings) as client:
        assert client.name == "openai-compatible:small-model"
        assert client.rewrite(QUESTION, "compress") == ["glycolysis products"]
    assert llm_server.authorizations == [None]  # no key configured, no Authorization header
    body = llm_server.bodies[0] or {}
    assert (body["model"], body["temperature"]) == ("small-model", 0.2)
    with pytest.raises(FluxConfigError, match="FLUX_LLM_BASE_URL"):
        OpenAICompatibleProvider.from_settings(FluxSettings(llm_base_url=None))
