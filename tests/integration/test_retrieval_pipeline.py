"""The retrieval pipeline on the demo platform: real Postgres (pgvector + BM25 files), Neo4j and Redis."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from retrieval.answering.llm import OpenAICompatibleProvider
from retrieval.answering.llm_transport import TransportOptions
from retrieval.caching.cache import Cache
from retrieval.model.answer import FALLBACK_TEXT, FinalAnswer
from retrieval.model.types import Evidence, Filters
from retrieval.pipeline import Pipeline
from tests.support.llm_server import LLMReply, LLMServer, citing_responder, prompt_of

GLYCOLYSIS = "Which KEGG pathway corresponds to Reactome's glycolysis, and which genes do they share?"


def fresh_cache(settings: FluxSettings, **kwargs: Any) -> Cache:
    """The session's real Redis, under a namespace of this test's own so no answer leaks between tests."""
    return Cache(
        kwargs.pop("redis_url", settings.resolved_redis_url),
        embedding_ttl=60,
        retrieval_ttl=60,
        answer_ttl=60,
        semantic_threshold=settings.cache.semantic_cache_threshold,
        namespace=f"t{uuid.uuid4().hex[:8]}",
        **kwargs,
    )


@pytest.fixture(scope="module")
def pipeline(demo_platform: FluxSettings) -> Iterator[Pipeline]:
    built = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform))
    yield built
    built.close()


def ask(pipeline: Pipeline, question: str, **kwargs: Any) -> tuple[FinalAnswer, list[Evidence], list[tuple]]:
    """Answer, the evidence the generator was given, and every step event."""
    events: list[tuple[str, dict]] = []
    answer = pipeline.ask(question, on_event=lambda name, payload: events.append((name, payload)), **kwargs)
    given = [Evidence.model_validate(e) for name, p in events if name == "evidence" for e in p["evidence"]]
    return answer, given, events


def test_published_index_is_stamped_on_every_answer(pipeline: Pipeline, demo_platform: FluxSettings) -> None:
    with engine_for(demo_platform.platform_database_url).connect() as conn:
        row = conn.execute(
            text(
                "SELECT version, dagster_run_id, dataset_version FROM index_versions"
                " WHERE published_at IS NOT NULL ORDER BY published_at DESC LIMIT 1"
            )
        ).one()
    answer, _, _ = ask(pipeline, "What does TP53 do in apoptosis?")
    assert (answer.index_version, answer.dagster_run_id) == (row.version, row.dagster_run_id)
    assert answer.dataset_version == row.dataset_version and "reactome=" in answer.dataset_version
    assert answer.pipeline_version and answer.reranker.startswith("rrf") and answer.provider == "offline-extractive"


def test_factual_answer_cites_only_the_evidence_it_was_given(pipeline: Pipeline) -> None:
    answer, given, _ = ask(pipeline, "What does TP53 do in apoptosis?", mode="quick")
    given_ids = {e.id for e in given}
    assert answer.confidence > 0 and answer.claims and not answer.warnings
    assert {c.id for c in answer.citations} <= given_ids
    assert all(claim.citations and set(claim.citations) <= given_ids for claim in answer.claims)
    chunk_ids = [e.id for e in given if e.kind == "chunk"]
    assert len(chunk_ids) == len(set(chunk_ids)) and chunk_ids  # evidence accumulated without duplicates
    assert "TP53" in answer.answer


def test_relational_question_is_answered_from_graph_evidence(pipeline: Pipeline) -> None:
    answer, given, events = ask(pipeline, GLYCOLYSIS)
    read = next(payload for name, payload in events if name == "plan")
    assert answer.kind == "counterpart" and read["reason"] == "counterpart of R-HSA-70171 in kegg"
    assert read["plan"].startswith("list corresponds_to R-HSA-70171") and answer.plan is not None
    graph_cited = [c for c in answer.citations if c.kind == "graph"]
    assert graph_cited, answer
    assert {"R-HSA-70171", "hsa00010"} <= {e.id for e in given if e.kind == "graph"}
    assert "hsa00010" in answer.answer and "R-HSA-70171" in answer.answer
    # The shared genes come from the graph: GAPDH is in both demo glycolysis pathways.
    mapped = {m.pathway.id: m for m in answer.data.counterparts}  # type: ignore[union-attr]
    assert "GAPDH" in mapped["hsa00010"].shared_genes and "GAPDH" in answer.answer


def test_decomposed_question_retrieves_for_each_part(pipeline: Pipeline) -> None:
    question = "How does insulin signalling regulate glucose uptake, and which genes repair DNA mismatches?"
    result = pipeline.search(question, on_event=None)
    assert result.plan.strategy == "decompose"
    assert result.plan.queries[0] == question and len(result.plan.queries) == 3
    by_query: dict[str, set[str]] = {}
    for ev in result.evidence:
        by_query.setdefault(ev.query, set()).add(ev.id)
    assert set(result.plan.queries[1:]) <= set(by_query)  # every part found evidence of its own
    texts = " ".join(e.text.lower() for e in result.evidence)
    assert "insulin" in texts and "mismatch" in texts


def test_gene_named_in_the_question_is_looked_up_in_the_graph(pipeline: Pipeline) -> None:
    result = pipeline.search("Which pathways contain both TP53 and MDM2?")
    genes = {e.title: e for e in result.evidence if e.id.startswith("HGNC:")}
    assert {"TP53", "MDM2"} <= set(genes)
    assert "Pathways containing both TP53 and MDM2" in genes["TP53"].text
    assert "hsa04115" in genes["TP53"].text  # p53 signalling holds both


def test_source_filter_restricts_evidence_and_bypasses_the_cache(pipeline: Pipeline) -> None:
    question = "What does TP53 do in apoptosis?"
    filtered = pipeline.search(question, Filters(sources=["openalex"]))
    chunks = [e for e in filtered.evidence if e.kind == "chunk"]
    assert chunks and all(e.source == "openalex" for e in chunks)
    again = pipeline.search(question, Filters(sources=["openalex"]))
    assert again.cached_queries == 0


def test_repeated_question_hits_and_a_rebuilt_index_misses(demo_platform: FluxSettings) -> None:
    pipeline = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform))
    question = "How does PI3K activate AKT signalling?"
    first, _, _ = ask(pipeline, question)
    second, _, _ = ask(pipeline, question)
    assert first.cached is None and second.cached == "exact"
    assert second.answer == first.answer
    # The hit ran no stage but the question's embedding (its key): no retrieval, ranking or generation.
    assert set(second.timings_ms) == {"embed", "total"} and set(first.timings_ms) - {"embed", "total"}
    engine = engine_for(demo_platform.platform_database_url)
    with engine.begin() as conn:  # a new index version is published (as a rebuild would)
        conn.execute(
            text(
                "INSERT INTO index_versions (version, bm25_version, bm25_path, embedding_model, chunk_count,"
                " vector_count, pathway_count, dataset_version, pipeline_version, dagster_run_id, published_at,"
                " chunk_table) SELECT 'rebuilt-' || version, bm25_version, bm25_path, embedding_model, chunk_count,"
                " vector_count, pathway_count, dataset_version, pipeline_version, 'rebuild-run', now(), chunk_table"
                " FROM index_versions"
                " WHERE published_at IS NOT NULL ORDER BY published_at DESC LIMIT 1"
            )
        )
    try:
        pipeline.retriever.forget_index()
        third, _, _ = ask(pipeline, question)
        assert third.cached is None and third.index_version.startswith("rebuilt-")
        assert third.dagster_run_id == "rebuild-run"
    finally:
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM index_versions WHERE version LIKE 'rebuilt-%'"))
        pipeline.close()


def test_semantic_cache_never_swaps_one_gene_for_another(pipeline: Pipeline) -> None:
    # Like BRCA1 / BRCA2: two symbols a sentence encoder puts side by side, both named in the demo's texts.
    mlh1 = "What is the role of MLH1 in DNA mismatch repair?"
    first, _, _ = ask(pipeline, mlh1)
    assert first.confidence > 0  # cached only when answered
    paraphrase, _, _ = ask(pipeline, "what is the role of MLH1 in DNA mismatch repair")
    assert paraphrase.cached == "semantic" and paraphrase.answer == first.answer
    other, _, _ = ask(pipeline, "What is the role of MSH2 in DNA mismatch repair?")
    assert other.cached is None and other.question.startswith("What is the role of MSH2")


def test_queries_succeed_when_redis_stops_mid_test(demo_platform: FluxSettings, tmp_path: Any) -> None:
    from dagster_project.stack.redis import RedisService
    from tests.support.ports import free_port

    private = FluxSettings(home=tmp_path, redis_port=free_port())
    redis_service = RedisService(private)
    redis_service.start()
    cache = fresh_cache(demo_platform, redis_url=private.resolved_redis_url, retry_interval=0.2)
    pipeline = Pipeline.from_settings(demo_platform, cache=cache)
    try:
        question = "Which genes take part in mismatch repair?"
        assert ask(pipeline, question)[0].confidence > 0 and cache.backend == "redis"
        redis_service.stop()
        after, _, _ = ask(pipeline, question)
        fresh, _, _ = ask(pipeline, "Which enzymes act in the citric acid cycle?")
        assert after.confidence > 0 and fresh.confidence > 0 and fresh.cached is None
        assert cache.backend == "memory"
    finally:
        redis_service.stop()
        pipeline.close()


# --- the OpenAI-compatible provider over HTTP, end to end --------------------------------------------------


def judge_always(verdict: str) -> Any:
    def responder(request_json: dict[str, Any]) -> str:
        prompt = prompt_of(request_json)
        if "You judge" in prompt:
            return json.dumps(
                {"verdict": verdict, "confidence": 0.9, "missing": ["kinase activity"], "rationale": "scripted"}
            )
        if "You screen" in prompt:
            return json.dumps({"allowed": True, "reason": ""})
        if '"queries"' in prompt:
            return json.dumps({"queries": []})
        return citing_responder(request_json)

    return responder


@pytest.fixture
def llm_pipeline(demo_platform: FluxSettings) -> Iterator[tuple[Pipeline, LLMServer]]:
    server = LLMServer(judge_always("bad")).start()
    provider = OpenAICompatibleProvider(
        server.base_url,
        "scripted",
        "sk-test",
        TransportOptions(timeout=0.5, max_attempts=1, requests_per_minute=60_000),
    )
    built = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform, enabled=False), provider=provider)
    yield built, server
    built.close()
    server.stop()


def test_judge_loop_stops_after_three_reretrievals(llm_pipeline: tuple[Pipeline, LLMServer]) -> None:
    pipeline, server = llm_pipeline
    answer, given, events = ask(pipeline, "What does TP53 do in apoptosis?", mode="thinking")
    judged = [p for name, p in events if name == "judge"]
    assert len(judged) == 4 and answer.attempts == 3  # 1 judgement + 3 re-retrievals, then generate anyway
    assert sum("You judge" in r.prompt for r in server.requests) == 4
    assert answer.retrieval_quality == "bad" and answer.judge_missing == ["kinase activity"]
    assert any("kinase activity" in p["query"] for name, p in events if name == "retrieve")
    assert len({e.id for e in given}) == len(given)
    # The confidence is the evidence's calibrated answerability, not the model's own say-so (0.8).
    assert answer.provider == "openai-compatible:scripted" and answer.confidence == answer.answerability > 0.5
    assert {c.id for c in answer.citations} <= {e.id for e in given}


def test_quick_mode_makes_one_retrieval_pass_and_no_judgement(llm_pipeline: tuple[Pipeline, LLMServer]) -> None:
    pipeline, server = llm_pipeline
    answer, _, events = ask(pipeline, "What does TP53 do in apoptosis?", mode="quick")
    assert not [e for e in events if e[0] == "judge"] and answer.attempts == 0
    assert not any("You judge" in r.prompt for r in server.requests)


@pytest.mark.parametrize(
    ("reply", "warning"),
    [
        (LLMReply.text("{not json"), "not valid JSON"),
        (LLMReply.json({"answer": "x", "claims": [], "citations": [], "confidence": 3}), "schema violation"),
        (LLMReply.slow(2.0, "{}"), "timed out"),
    ],
)
def test_unusable_generator_replies_get_the_offline_answer_and_a_warning(
    llm_pipeline: tuple[Pipeline, LLMServer], reply: LLMReply, warning: str
) -> None:
    """The offline provider's extractive answer stands in, cited from the same evidence, and the warning says why
    the model's reply was not used."""
    pipeline, server = llm_pipeline
    server.responder = None
    # In order: the LLM input screen, the router's rewrite (a short question is expanded), then generation.
    server.script(LLMReply.json({"allowed": True, "reason": ""}), LLMReply.json({"queries": []}), reply)
    answer, given, _ = ask(pipeline, "What does TP53 do in apoptosis?", mode="quick")
    assert "You screen" in server.requests[0].prompt and "You answer questions" in server.requests[-1].prompt
    assert answer.answer != FALLBACK_TEXT and answer.provider == "offline-extractive"
    assert answer.claims and {c.id for c in answer.citations} <= {e.id for e in given}
    assert any(warning in w and "the offline answer stands in" in w for w in answer.warnings), answer.warnings


def test_invented_and_missing_citations_are_dropped_never_shown(llm_pipeline: tuple[Pipeline, LLMServer]) -> None:
    pipeline, server = llm_pipeline

    def inventing(request_json: dict[str, Any]) -> str:
        real = citing_responder(request_json)
        payload = json.loads(real)
        payload["claims"].append({"text": "An invented fact.", "citations": ["reactome_R-HSA-0000_9"]})
        payload["claims"].append({"text": "An uncited fact.", "citations": []})
        payload["citations"].append("reactome_R-HSA-0000_9")
        return json.dumps(payload)

    server.responder = inventing
    answer, given, _ = ask(pipeline, "What does TP53 do in apoptosis?", mode="quick")
    assert "reactome_R-HSA-0000_9" not in {c.id for c in answer.citations}
    assert "An invented fact." not in answer.answer and "An uncited fact." not in answer.answer
    assert any("reactome_R-HSA-0000_9" in w for w in answer.warnings)
    assert answer.claims and all(set(c.citations) <= {e.id for e in given} for c in answer.claims)
