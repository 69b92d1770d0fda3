"""The one retrieval entry point that serving (HTTP, CLI) and the eval scorecards call.

ask(): input guardrail → answer cache → route → retrieve (Postgres hybrid + graph, per query) → judge loop
(thinking mode) → generate → three-pass validation → output guardrail → provenance stamps → cache.
search(): the same routing and retrieval, evidence only. Every stage is timed; `on_event` sees each step (SSE).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from neo4j import Driver
from pydantic import BaseModel, Field
from sqlalchemy.engine import Engine

from dagster_project.core.settings import FluxSettings
from dagster_project.core.versions import pipeline_version
from retrieval.answering import evidence_guard
from retrieval.answering.answer import FinalAnswer, fallback_answer, refusal_answer, uncited_answer, validate_answer
from retrieval.answering.grounding import Embed, Retrieve, Verifier, grounded_answer, one_by_one
from retrieval.answering.judge import aspect_queries, merge_evidence, should_reretrieve
from retrieval.answering.typed_answer import compose
from retrieval.caching.cache import Cache
from retrieval.graph_guard import GraphGuard, GraphUnavailable, degraded_warning
from retrieval.question import guardrails
from retrieval.question.intent import TABLE_KINDS, TYPED_KINDS, Intent, classify
from retrieval.question.router import route
from retrieval.retrievers.bm25 import load_index
from retrieval.retrievers.context import shown_context
from retrieval.retrievers.genes import GeneLexicon, load_lexicon
from retrieval.retrievers.graph_facts import GraphFacts
from retrieval.retrievers.graph_retriever import GraphRetriever
from retrieval.retrievers.index_state import IndexState, current_index
from retrieval.retrievers.pathways import PathwayLexicon, load_pathways
from retrieval.retrievers.pg_retriever import PostgresRetriever
from retrieval.retrievers.relevance import floor_for, nothing_relevant
from retrieval.retrievers.rerank import Reranker, build_reranker
from retrieval.retrievers.table_facts import table_facts
from retrieval.timer import Timer
from retrieval.types import Evidence, Filters, JudgeResult, LLMProvider, Mode, ProviderError, RoutePlan

log = logging.getLogger(__name__)
EventSink = Callable[[str, dict[str, Any]], None]
INDEX_STATE_TTL = 2.0  # seconds a published-index lookup is reused; a new publish is seen within this


class SearchResult(BaseModel):
    question: str
    plan: RoutePlan
    evidence: list[Evidence]
    index_version: str
    reranker: str
    cached_queries: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)


# In-process observers (the eval scorecards) see these; clients never do: the raw generator reply is unvalidated.
INTERNAL_EVENTS = frozenset({"generated"})


def question_hash(question: str) -> str:
    return hashlib.sha256(question.encode()).hexdigest()[:16]


class Pipeline:
    def __init__(self, settings: FluxSettings, engine: Engine, driver: Driver, cache: Cache, reranker: Reranker,
                 provider: LLMProvider, embed: Callable[[str], list[float]],
                 embed_texts: Embed | None = None) -> None:
        self.settings = settings
        self.engine = engine
        self.driver = driver
        self.cache = cache
        self.reranker = reranker
        self.provider = provider
        self._embed = embed
        # The grounding check embeds claims and sentences in one batch per answer, uncached (they are no queries).
        self.verifier = Verifier.from_settings(settings, embed_texts or one_by_one(embed))
        self._index: tuple[float, IndexState] | None = None
        self._pinned: IndexState | None = None
        self.graph_guard = GraphGuard()
        # The provider's own instruction texts: an answer that repeats them is a leaked prompt.
        self.echo_detector = evidence_guard.EchoDetector(getattr(provider, "instructions", ()))
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: FluxSettings, *, cache: Cache | None = None,
                      provider: LLMProvider | None = None) -> Pipeline:
        """Everything from configuration; `cache` / `provider` replace the configured ones (evals, tests)."""
        from dagster_project.core.stores import engine_for, graph_driver
        from dagster_project.index.encoder import Embedder
        from retrieval.answering.llm import OpenAICompatibleProvider
        from retrieval.answering.offline import OfflineProvider

        index = settings.index
        embedder = Embedder(model_name=index.embedding_model, dimension=index.embedding_dim,
                            query_prefix=index.embedding_query_prefix)
        embedder.model()  # load (and check the dimension) once, up front
        if provider is None:
            provider = (OpenAICompatibleProvider.from_settings(settings) if settings.llm.llm_base_url
                        else OfflineProvider())
        # Fail fast: a dead Neo4j must cost a question seconds, not the driver's 30 s of retries (GraphGuard).
        driver = graph_driver(settings, fail_fast=True)
        # Least privilege: the query path reads the index and writes only answers (migration 0010).
        return cls(settings, engine_for(settings.resolved_serving_database_url), driver,
                   cache or Cache.from_settings(settings),
                   build_reranker(settings), provider, lambda q: embedder.embed_query(q).tolist(),
                   embedder.embed_documents)

    # --- state -------------------------------------------------------------------------------------------
    def pin(self, index: IndexState) -> Pipeline:
        """Read this index version instead of the published one (the eval scorecards measure a candidate)."""
        self._pinned = index
        return self

    def postgres_retriever(self, index: IndexState, widen: int = 1) -> PostgresRetriever:
        s = self.settings.retrieval
        return PostgresRetriever(self.engine, index.chunk_table, load_index(index.bm25_path), self.reranker,
                                 dense_k=s.dense_top_k * widen, bm25_k=s.bm25_top_k * widen, keep=s.rerank_keep * widen,
                                 ef_search=self.settings.index.hnsw_ef_search)

    def index(self) -> IndexState:
        if self._pinned is not None:
            return self._pinned
        with self._lock:
            now = time.monotonic()
            if self._index is None or now - self._index[0] > INDEX_STATE_TTL:
                self._index = (now, current_index(self.engine))
            return self._index[1]

    def lexicons(self) -> tuple[GeneLexicon, PathwayLexicon]:
        """The gene and pathway names of the served index (follow-up resolution reads them too)."""
        index = self.index()
        return load_lexicon(self.engine, index.version), load_pathways(self.engine, index.version)

    def embed(self, query: str) -> list[float]:
        model = self.settings.index.embedding_model
        cached = self.cache.get_embedding(model, query)
        if cached is not None:
            return cached
        vector = self._embed(query)
        self.cache.set_embedding(model, query, vector)
        return vector

    @property
    def retrieval_variant(self) -> str:
        s = self.settings.retrieval
        return f"{self.reranker.name}|d{s.dense_top_k}|b{s.bm25_top_k}|k{s.rerank_keep}|g{s.graph_top_k}"

    # --- retrieval -----------------------------------------------------------------------------------------
    def _retrieve_query(self, query: str, index: IndexState, filters: Filters | None, timer: Timer,
                        widen: int = 1) -> tuple[list[Evidence], bool]:
        # A widened pass (the grounding retry) is never cached: its key would collide with the plain variant's.
        cacheable = self.cache.cacheable(filters) and widen == 1
        if cacheable:
            hit = self.cache.get_retrieval(index.version, self.retrieval_variant, query)
            if hit is not None:
                return [Evidence.model_validate(e) for e in hit], True
        sources = filters.sources if filters else None
        with timer.stage("embed"):
            vector = self.embed(query)
        pg = self.postgres_retriever(index, widen)
        with timer.stage("retrieve_pg"):
            candidates = pg.candidates(query, vector, sources)
        with timer.stage("rerank"):
            chunks = self.reranker.rerank(query, candidates)[: self.settings.retrieval.rerank_keep * widen]
        with timer.stage("retrieve_graph"):
            genes = load_lexicon(self.engine, index.version).find(query)
            retriever = GraphRetriever(self.driver, self.settings.retrieval.graph_top_k * widen)
            try:
                graph = self.graph_guard.call(lambda: retriever.retrieve(query, vector, genes, sources))
            except GraphUnavailable as exc:
                graph, timer.degraded = [], str(exc)
        # Stored text is data: what would steer the model is withheld before the judge or generator reads it.
        evidence = evidence_guard.screen_evidence(chunks + graph)
        if cacheable and not timer.degraded:  # a degraded result must not outlive the outage
            self.cache.set_retrieval(index.version, self.retrieval_variant, query,
                                     [e.model_dump(mode="json") for e in evidence])
        return evidence, False

    def _retrieve(self, queries: list[str], index: IndexState, filters: Filters | None, timer: Timer,
                  emit: EventSink, evidence: list[Evidence] | None = None, widen: int = 1
                  ) -> tuple[list[Evidence], int]:
        evidence = list(evidence or [])
        cached = 0
        for query in queries:
            found, was_cached = self._retrieve_query(query, index, filters, timer, widen)
            cached += was_cached
            evidence, added = merge_evidence(evidence, found)
            emit("retrieve", {"query": query, "chunks": sum(e.kind == "chunk" for e in found),
                              "graph": sum(e.kind == "graph" for e in found), "new": added, "cached": was_cached})
        return evidence, cached

    def _plan(self, question: str, index: IndexState, timer: Timer) -> RoutePlan:
        with timer.stage("route"):
            return route(question, load_lexicon(self.engine, index.version), self.provider)

    def search(self, question: str, filters: Filters | None = None, on_event: EventSink | None = None
               ) -> SearchResult:
        emit = on_event or (lambda _name, _payload: None)
        timer = Timer()
        with timer.stage("total"):
            index = self.index()
            plan = self._plan(question, index, timer)
            emit("route", plan.model_dump())
            evidence, cached = self._retrieve(plan.queries, index, filters, timer, emit)
        return SearchResult(question=question, plan=plan, evidence=evidence, index_version=index.version,
                            reranker=self.reranker.name, cached_queries=cached, timings_ms=timer.ms)

    # --- answering -----------------------------------------------------------------------------------------
    def ask(self, question: str, mode: Mode | None = None, filters: Filters | None = None,
            on_event: EventSink | None = None) -> FinalAnswer:
        emit = on_event or (lambda _name, _payload: None)
        mode = mode or self.settings.retrieval.answer_mode
        timer = Timer()
        started = time.perf_counter()
        refusal = guardrails.screen_question(question) or self._screen_with_provider(question)
        if refusal:
            answer = refusal_answer(question, refusal)
            answer.mode, answer.provider, answer.reranker = mode, self.provider.name, self.reranker.name
            answer.pipeline_version = pipeline_version()
            answer.timings_ms = {"total": round((time.perf_counter() - started) * 1000, 2)}
            emit("refused", {"reason": refusal})
            return answer
        index = self.index()
        # The serving code's version is part of the key: a new generator must not serve the old one's answers.
        variant = f"{mode}|{self.provider.name}|{self.retrieval_variant}|{pipeline_version()}"
        cacheable = self.cache.cacheable(filters)
        qvec: list[float] | None = None
        if cacheable:
            with timer.stage("embed"):
                qvec = self.embed(question)
            hit = self.cache.get_answer(index.version, variant, question, qvec)
            if hit is not None:
                answer = FinalAnswer.model_validate(hit[0])
                answer.cached = hit[1]
                answer.question = question
                answer.timings_ms = {**timer.ms, "total": round((time.perf_counter() - started) * 1000, 2)}
                emit("cache", {"hit": hit[1]})
                return answer
        intent = self._intent(question, index, timer)
        emit("intent", {"kind": intent.kind, "reason": intent.reason})
        answer = self._typed_answer(question, intent, index, mode, timer, emit) if intent.kind in TYPED_KINDS else None
        if answer is None:
            plan = self._plan(question, index, timer)
            emit("route", plan.model_dump())
            evidence, _ = self._retrieve(plan.queries, index, filters, timer, emit)
            judged, evidence, attempts = self._judge_loop(question, plan, evidence, index, filters, timer, emit,
                                                          mode)
            emit("evidence", {"evidence": [e.model_dump(mode="json") for e in evidence]})
            floor = floor_for(self.settings.index.embedding_model)
            if floor is not None and floor.unrelated(question, evidence, intent.names):  # nothing relevant
                answer = nothing_relevant(question, evidence, floor)
                emit("relevance", {"unrelated": True, "warning": answer.warnings[0]})
            else:
                answer, evidence = self._generate(question, evidence, timer, emit,
                                                  self._second_retrieval(plan, index, filters, timer, emit))
            self._stamp(answer, index, plan, mode, attempts, judged)
            answer.kind = "literature"
            if filters and filters.sources and answer.grounding and answer.grounding.answered_from != "first":
                answer.warnings.append("too few claims were supported: a second retrieval looked beyond the "
                                       "requested sources")
            if withheld := evidence_guard.withheld_count(evidence):
                answer.warnings.append(evidence_guard.withheld_warning(withheld))
            if timer.degraded:
                answer.warnings.append(degraded_warning(timer.degraded, intent.kind))
        if intent.unresolved:
            answer.warnings.append(intent.reason)
        if intent.corrections:
            answer.warnings.append("read " + ", ".join(f"'{typed}' as '{name}'" for typed, name in intent.corrections))
        answer.timings_ms = {**timer.ms, "total": round((time.perf_counter() - started) * 1000, 2)}
        if cacheable and answer.confidence > 0 and not answer.refused and not timer.degraded:
            self.cache.set_answer(index.version, variant, question, qvec, answer.model_dump(mode="json"))
        return answer

    def _screen_with_provider(self, question: str) -> str | None:
        try:
            return self.provider.screen(question)
        except ProviderError as exc:
            log.warning("LLM input screen unavailable: %s", exc)
            return None

    def _judge_loop(self, question: str, plan: RoutePlan, evidence: list[Evidence], index: IndexState,
                    filters: Filters | None, timer: Timer, emit: EventSink, mode: Mode
                    ) -> tuple[JudgeResult | None, list[Evidence], int]:
        if mode == "quick":
            return None, evidence, 0
        attempts = 0
        asked = {q.lower() for q in plan.queries}
        while True:
            with timer.stage("judge"):
                try:
                    result = self.provider.judge(question, evidence)
                except ProviderError as exc:
                    result = JudgeResult(verdict=None, rationale=f"judge unavailable: {exc}")
            result.rationale = self.echo_detector.scrub(result.rationale)[0]
            emit("judge", {"attempt": attempts, **result.model_dump()})
            if not should_reretrieve(result, attempts, self.settings.retrieval.judge_max_attempts,
                                     self.settings.retrieval.judge_min_confidence):
                return result, evidence, attempts
            attempts += 1
            queries = aspect_queries(question, result.missing, asked) or [question]
            asked |= {q.lower() for q in queries}
            evidence, _ = self._retrieve(queries, index, filters, timer, emit, evidence)

    def _intent(self, question: str, index: IndexState, timer: Timer) -> Intent:
        with timer.stage("route"):
            return classify(question, load_lexicon(self.engine, index.version),
                            load_pathways(self.engine, index.version))

    def _typed_answer(self, question: str, intent: Intent, index: IndexState, mode: Mode, timer: Timer,
                      emit: EventSink) -> FinalAnswer | None:
        """A graph question answered from graph facts; None (→ text evidence) when the graph cannot be read."""
        with timer.stage("graph_facts"):
            try:
                data = (table_facts(intent) if intent.kind in TABLE_KINDS
                        else self.graph_guard.call(lambda: GraphFacts(self.driver).facts(intent)))
            except GraphUnavailable as exc:
                log.warning("graph facts unavailable for a %s question: %s", intent.kind, exc)
                timer.degraded = str(exc)
                return None
        composed, evidence = compose(data)
        emit("evidence", {"evidence": [e.model_dump(mode="json") for e in evidence]})
        if not getattr(self.provider, "writes_prose", False) or not evidence:
            with timer.stage("validate"):
                emit("generated", {"raw": composed})
                answer = guardrails.scrub_answer(validate_answer(question, composed, evidence) if evidence
                                                 else uncited_answer(question, composed))
        else:  # an LLM writes the prose from the same facts (checked, never re-retrieved: the facts are complete)
            answer = self._generate(question, evidence, timer, emit)[0]
        plan = RoutePlan(strategy="direct", reason=intent.reason, queries=[question])
        self._stamp(answer, index, plan, mode, 0, None)
        answer.kind, answer.data = data.kind, data  # the facts may say "not found"
        return answer

    def _generate(self, question: str, evidence: list[Evidence], timer: Timer, emit: EventSink,
                  retrieve: Retrieve | None = None) -> tuple[FinalAnswer, list[Evidence]]:
        """The validated answer with its claims checked against what they cite, and the evidence it was given:
        `retrieve` runs a second retrieval when too few claims are supported (retrieval/answering/grounding.py)."""
        if not self.settings.retrieval.grounding_check:
            return self._generate_once(question, evidence, timer, emit)[0], evidence
        return grounded_answer(lambda given: self._generate_once(question, given, timer, emit), evidence,
                               self.verifier, retrieve, emit, timer.stage)

    def _generate_once(self, question: str, evidence: list[Evidence], timer: Timer, emit: EventSink
                       ) -> tuple[FinalAnswer, dict[str, str]]:
        """One generation and its validation; with it each evidence id's text as the provider showed it."""
        # The pure function the provider formats its prompt with, on its budget: the tiers are the ones it used.
        shown, tiers = shown_context(evidence, getattr(self.provider, "context_budget", None))
        with timer.stage("generate"):
            try:
                raw = self.provider.generate(question, evidence)
            except ProviderError as exc:
                return fallback_answer(question, f"answer generation failed: {exc}"), shown
        emit("generated", {"raw": raw})
        with timer.stage("validate"):
            # An item left out for the budget was never given: citing it is citing the unseen.
            answer = guardrails.scrub_answer(validate_answer(question, raw, [e for e in evidence if e.id in shown]))
            answer = evidence_guard.scrub_instruction_echo(answer, self.echo_detector)
        answer.context_tiers = tiers
        return answer, shown

    def _second_retrieval(self, plan: RoutePlan, index: IndexState, filters: Filters | None, timer: Timer,
                          emit: EventSink) -> Retrieve:
        """The grounding retry's retrieval, added to what was found: no source filter (user/session scoping stays),
        more candidates, for the plan's queries (broadened) or the unsupported claims (augmented)."""
        broad = Filters(user=filters.user, session=filters.session) if filters else None
        widen = self.settings.retrieval.grounding_broaden_factor

        def retrieve(retry: str, queries: list[str], evidence: list[Evidence]) -> list[Evidence]:
            def tagged(name: str, payload: dict[str, Any]) -> None:
                emit(name, {**payload, "retry": retry})
            found, _ = self._retrieve(queries or plan.queries, index, broad, timer, tagged, evidence, widen)
            emit("evidence", {"evidence": [e.model_dump(mode="json") for e in found]})
            return found
        return retrieve

    def _stamp(self, answer: FinalAnswer, index: IndexState, plan: RoutePlan, mode: Mode, attempts: int,
               judged: JudgeResult | None) -> None:
        answer.dataset_version, answer.pipeline_version = index.dataset_version, index.pipeline_version
        answer.index_version, answer.dagster_run_id = index.version, index.dagster_run_id
        answer.mode, answer.route, answer.attempts = mode, plan.strategy, attempts
        answer.reranker, answer.provider = self.reranker.name, self.provider.name
        if judged is not None and judged.verdict is not None:
            answer.retrieval_quality = judged.verdict
            answer.judge_missing = judged.missing
        elif judged is not None:
            answer.warnings.append(f"no judge verdict ({judged.rationale}); answered anyway")

    def close(self) -> None:
        """Nothing to release: the engine and the Neo4j driver are process-wide (shared with Dagster resources),
        so closing them here would break every other user in the process."""
