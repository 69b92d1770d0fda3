"""The retrieval half of the pipeline: the served index version, the question's route, and evidence per query
(Postgres hybrid search, reranked, plus the graph), cached per index version and screened before anyone reads it.

`search()` is retrieval alone (POST /search); the answerer calls `retrieve()` for its judge loop and grounding retry.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from sqlalchemy.engine import Engine

from dagster_project.core.settings import FluxSettings
from retrieval.answering import evidence_guard
from retrieval.answering.judge import merge_evidence
from retrieval.caching.cache import Cache
from retrieval.model.genes import GeneLexicon, load_lexicon
from retrieval.model.index_state import IndexState, current_index
from retrieval.model.pathways import PathwayLexicon, load_pathways
from retrieval.model.types import Evidence, Filters, LLMProvider, RoutePlan
from retrieval.question.router import route
from retrieval.retrievers.bm25 import load_index
from retrieval.retrievers.graph_guard import GraphGuard, GraphUnavailable
from retrieval.retrievers.graph_retriever import GraphRetriever
from retrieval.retrievers.pg_retriever import PostgresRetriever, served_ef_search
from retrieval.retrievers.rerank import Reranker
from retrieval.run import EventSink, Run

if TYPE_CHECKING:
    from neo4j import Driver

INDEX_STATE_TTL = 2.0  # seconds a published-index lookup is reused; a new publish is seen within this


class SearchResult(BaseModel):
    question: str
    plan: RoutePlan
    evidence: list[Evidence]
    index_version: str
    reranker: str
    cached_queries: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)


class Retriever:
    def __init__(
        self,
        settings: FluxSettings,
        engine: Engine,
        driver: Driver,
        cache: Cache,
        reranker: Reranker,
        provider: LLMProvider,
        embed: Callable[[str], list[float]],
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.driver = driver
        self.cache = cache
        self.reranker = reranker
        self.provider = provider  # routes a question into queries (an LLM may rewrite them)
        self.graph_guard = GraphGuard()
        self._embed = embed
        self._index: tuple[float, IndexState] | None = None
        self._pinned: IndexState | None = None
        self._lock = threading.Lock()

    # --- the served index --------------------------------------------------------------------------------
    def pin(self, index: IndexState) -> None:
        self._pinned = index

    def index(self) -> IndexState:
        if self._pinned is not None:
            return self._pinned
        with self._lock:
            now = time.monotonic()
            if self._index is None or now - self._index[0] > INDEX_STATE_TTL:
                self._index = (now, current_index(self.engine))
            return self._index[1]

    def forget_index(self) -> None:
        """Read the published version again on the next question (a test publishing mid-way)."""
        with self._lock:
            self._index = None

    def lexicons(self) -> tuple[GeneLexicon, PathwayLexicon]:
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
    def variant(self) -> str:
        s = self.settings.retrieval
        return f"{self.reranker.name}|d{s.dense_top_k}|b{s.bm25_top_k}|k{s.rerank_keep}|g{s.graph_top_k}"

    def postgres_retriever(self, index: IndexState, widen: int = 1) -> PostgresRetriever:
        s = self.settings.retrieval
        return PostgresRetriever(
            self.engine,
            index.chunk_table,
            load_index(index.bm25_path),
            self.reranker,
            dense_k=s.dense_top_k * widen,
            bm25_k=s.bm25_top_k * widen,
            keep=s.rerank_keep * widen,
            ef_search=served_ef_search(index.vector_count, self.settings.index.hnsw_ef_search),
        )

    # --- retrieval -----------------------------------------------------------------------------------------
    def plan(self, question: str, index: IndexState, run: Run) -> RoutePlan:
        with run.stage("route"):
            return route(question, load_lexicon(self.engine, index.version), self.provider)

    def retrieve(
        self,
        queries: list[str],
        index: IndexState,
        filters: Filters | None,
        run: Run,
        evidence: list[Evidence] | None = None,
        widen: int = 1,
    ) -> tuple[list[Evidence], int]:
        """Evidence for every query merged into `evidence`; with it how many queries came from the cache."""
        evidence = list(evidence or [])
        cached = 0
        for query in queries:
            found, was_cached = self._retrieve_query(query, index, filters, run, widen)
            cached += was_cached
            evidence, added = merge_evidence(evidence, found)
            run.emit(
                "retrieve",
                {
                    "query": query,
                    "chunks": sum(e.kind == "chunk" for e in found),
                    "graph": sum(e.kind == "graph" for e in found),
                    "new": added,
                    "cached": was_cached,
                },
            )
        return evidence, cached

    def _retrieve_query(
        self, query: str, index: IndexState, filters: Filters | None, run: Run, widen: int
    ) -> tuple[list[Evidence], bool]:
        # A widened pass (the grounding retry) is never cached: its key would collide with the plain variant's.
        cacheable = self.cache.cacheable(filters) and widen == 1
        if cacheable:
            hit = self.cache.get_retrieval(index.version, self.variant, query)
            if hit is not None:
                return [Evidence.model_validate(e) for e in hit], True
        sources = filters.sources if filters else None
        with run.stage("embed"):
            vector = self.embed(query)
        with run.stage("retrieve_pg"):
            candidates = self.postgres_retriever(index, widen).candidates(query, vector, sources)
        with run.stage("rerank"):
            chunks = self.reranker.rerank(query, candidates)[: self.settings.retrieval.rerank_keep * widen]
        with run.stage("retrieve_graph"):
            genes = load_lexicon(self.engine, index.version).find(query)
            retriever = GraphRetriever(self.driver, self.settings.retrieval.graph_top_k * widen)
            try:
                graph = self.graph_guard.call(lambda: retriever.retrieve(query, vector, genes, sources))
            except GraphUnavailable as exc:
                graph = []
                run.degrade(str(exc))
        # Stored text is data: what would steer the model is withheld before the judge or generator reads it.
        evidence = evidence_guard.screen_evidence(chunks + graph)
        if cacheable and not run.degraded:  # a degraded result must not outlive the outage
            self.cache.set_retrieval(index.version, self.variant, query, [e.model_dump(mode="json") for e in evidence])
        return evidence, False

    def search(self, question: str, filters: Filters | None = None, on_event: EventSink | None = None) -> SearchResult:
        run = Run(emit=on_event) if on_event else Run()
        with run.stage("total"):
            index = self.index()
            plan = self.plan(question, index, run)
            run.emit("route", plan.model_dump())
            evidence, cached = self.retrieve(plan.queries, index, filters, run)
        return SearchResult(
            question=question,
            plan=plan,
            evidence=evidence,
            index_version=index.version,
            reranker=self.reranker.name,
            cached_queries=cached,
            timings_ms=run.timer.ms,
        )
