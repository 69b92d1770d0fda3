"""Grounding in the served path, end to end on the demo platform: a scripted OpenAI-compatible model (over real HTTP)
answers with claims quoted from the evidence it was shown plus claims planted to cite evidence that does not say
them. The pipeline must catch and remove every planted claim (and no quoted one), warn, emit `grounding` events,
and — coverage being low — retrieve again broadened (no source filter, more candidates), then augmented with the
planted claims as queries. The prompt shows each evidence item by its context tier, inside the budget."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from retrieval.answering.llm import OpenAICompatibleProvider
from retrieval.answering.llm_transport import TransportOptions
from retrieval.model.answer import FinalAnswer
from retrieval.model.types import Evidence, Filters
from retrieval.pipeline import Pipeline
from serving.api import create_app
from tests.integration.test_retrieval_pipeline import fresh_cache
from tests.support.llm_server import LLMServer, evidence_ids, evidence_texts, first_sentence, prompt_of

QUESTION = "How do cytochrome c, APAF1 and caspase-9 drive apoptosis in human cells?"
# Claims no demo document states, each planted to cite evidence the model was really shown.
PLANTED = (
    "Chloroplast thylakoid membranes fix atmospheric nitrogen in maize leaves.",
    "Dietary vitamin C doubles the speed of axonal transport in squid giant neurons.",
    "Ribosomal RNA methylation alone determines eye colour in fruit flies.",
)
QUOTED = 2  # claims quoted from the first evidence items: supported by construction
BUDGET = 6_000  # small enough that the broadened evidence is cut into tiers


def planting_model(request_json: dict[str, Any]) -> str:
    prompt = prompt_of(request_json)
    if "You screen" in prompt:
        return json.dumps({"allowed": True, "reason": ""})
    if "You judge" in prompt:
        return json.dumps({"verdict": "good", "confidence": 0.9, "missing": [], "rationale": "scripted"})
    if '"queries"' in prompt:
        return json.dumps({"queries": []})
    ids, texts = evidence_ids(request_json), evidence_texts(request_json)
    quoted = [{"text": first_sentence(texts[i]) + ".", "citations": [i]} for i in ids[:QUOTED]]
    planted = [{"text": text, "citations": [ids[n % len(ids)]]} for n, text in enumerate(PLANTED)]
    claims = quoted + planted
    return json.dumps(
        {
            "answer": " ".join(c["text"] for c in claims),
            "claims": claims,
            "confidence": 0.9,
            "citations": list(dict.fromkeys(i for c in claims for i in c["citations"])),
            "reasoning_summary": "Scripted: two quoted claims and three planted ones.",
        }
    )


@pytest.fixture(scope="module")
def served(demo_platform: FluxSettings) -> Iterator[tuple[Pipeline, LLMServer]]:
    server = LLMServer(planting_model).start()
    provider = OpenAICompatibleProvider(
        server.base_url,
        "planting",
        "sk-test",
        TransportOptions(timeout=5.0, max_attempts=1, requests_per_minute=60_000),
        context_budget=BUDGET,
    )
    pipeline = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform, enabled=False), provider=provider)
    yield pipeline, server
    pipeline.close()
    server.stop()


def generations(server: LLMServer) -> list[str]:
    return [r.prompt for r in server.requests if "You answer questions" in r.prompt]


def ask(pipeline: Pipeline, filters: Filters | None = None) -> tuple[FinalAnswer, list[tuple[str, dict]]]:
    events: list[tuple[str, dict]] = []
    answer = pipeline.ask(QUESTION, "quick", filters, on_event=lambda name, payload: events.append((name, payload)))
    return answer, events


def test_planted_claims_are_caught_and_low_coverage_retrieves_broadened_then_augmented(
    served: tuple[Pipeline, LLMServer],
) -> None:
    pipeline, server = served
    before = len(generations(server))
    answer, events = ask(pipeline, Filters(sources=["openalex"]))
    assert next(p["kind"] for name, p in events if name == "plan") == "literature"
    prompts = generations(server)[before:]
    checks = [p for name, p in events if name == "grounding"]

    # Every generation planted 3 claims; every check removed exactly those (the quoted ones all passed).
    planted, caught = len(PLANTED) * len(prompts), sum(c["claims_removed"] for c in checks)
    print(
        f"\nunsupported claims caught/planted: {caught}/{planted}; quoted claims kept: "
        f"{sum(c['claims_supported'] for c in checks)}/{QUOTED * len(prompts)}"
    )
    assert len(prompts) == 3 and caught == planted
    assert all((c["claims_checked"], c["claims_supported"]) == (QUOTED + len(PLANTED), QUOTED) for c in checks)
    for text in PLANTED:
        assert text not in answer.answer and all(text != c.text for c in answer.claims)
    assert len(answer.claims) == QUOTED
    assert f"removed {len(PLANTED)} claim(s) that the evidence they cite does not support" in answer.warnings
    assert any("beyond the requested sources" in w for w in answer.warnings)

    # Coverage 2/5 < 0.8: broadened, then augmented; the verdict is in the answer and the last event.
    assert [c["answered_from"] for c in checks] == ["first", "broadened", "augmented"]
    verdict = answer.grounding
    assert verdict is not None and verdict.retries == ["broadened", "augmented"]
    assert verdict.coverage == pytest.approx(QUOTED / (QUOTED + len(PLANTED))) and checks[-1] == verdict.model_dump()
    retried = [(p["retry"], p["query"]) for name, p in events if name == "retrieve" and "retry" in p]
    assert {r for r, _ in retried} == {"broadened", "augmented"}
    assert sorted(q for r, q in retried if r == "augmented") == sorted(PLANTED)  # the unsupported claims

    # The first pass kept to openalex; the broadened one lifted the filter and took more candidates.
    given = [[Evidence.model_validate(e) for e in p["evidence"]] for name, p in events if name == "evidence"]
    assert len(given) == 3 and {e.source for e in given[0] if e.kind == "chunk"} == {"openalex"}
    assert {e.source for e in given[1]} - {"openalex"} and len(given[1]) > len(given[0])
    assert len(given[2]) >= len(given[1])


def test_the_prompt_shows_each_item_by_its_tier_within_the_budget(served: tuple[Pipeline, LLMServer]) -> None:
    pipeline, server = served
    before = len(generations(server))
    answer, events = ask(pipeline)
    prompt = generations(server)[-1]
    assert len(generations(server)) > before
    final = [Evidence.model_validate(e) for name, p in events if name == "evidence" for e in p["evidence"]]
    last = {e.id: e for e in final}  # the evidence of the last generation
    tiers = answer.context_tiers
    assert set(tiers) <= set(last) and set(tiers.values()) <= {"full", "1000", "200", "dropped"}
    assert "full" in tiers.values() and set(tiers.values()) - {"full"}, tiers  # the budget cut something
    shown = evidence_texts({"messages": [{"content": prompt}]})
    for ident, tier in tiers.items():
        if tier == "dropped":
            assert ident not in shown
        elif tier == "full":
            assert shown[ident] == last[ident].text.strip()
        else:
            assert len(shown[ident]) <= int(tier) and shown[ident].endswith("…")
    assert sum(len(t) for t in shown.values()) <= BUDGET
    assert {c.id for c in answer.citations} <= set(shown)  # nothing the model was not shown is cited


def test_the_stream_sends_the_grounding_steps(served: tuple[Pipeline, LLMServer], demo_platform: FluxSettings) -> None:
    pipeline, _ = served
    with TestClient(create_app(demo_platform, pipeline), raise_server_exceptions=False) as client:
        stream = client.post("/query/stream", json={"question": QUESTION, "mode": "quick"})
    assert stream.status_code == 200
    steps = [json.loads(line[len("data:") :]) for line in stream.text.splitlines() if line.startswith("data:")]
    grounding = [s for s in steps if isinstance(s, dict) and s.get("step") == "grounding"]
    assert [g["answered_from"] for g in grounding] == ["first", "broadened", "augmented"]
    answer = next(s for s in steps if isinstance(s, dict) and "grounding" in s and "claims" in s)
    assert answer["grounding"]["retries"] == ["broadened", "augmented"] and answer["context_tiers"]
