"""The one retrieval entry point that serving (HTTP, CLI) and the eval scorecards call.

ask(): input guardrail → answer cache → the question read into a plan (retrieval/kinds/) → answer (answerer.py:
the plan's kind's facts, or text evidence judged, generated, validated, grounded) → warnings → cache. search():
routing and retrieval, evidence only.
Every stage is timed into the run (run.py); `on_event` sees each step (SSE).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

from dagster_project.core.settings import FluxSettings
from dagster_project.core.versions import pipeline_version
from retrieval.answerer import Answerer
from retrieval.answering.grounding import Embed, Verifier, one_by_one
from retrieval.caching.cache import Cache
from retrieval.kinds import proposal, registry, scope
from retrieval.model.answer import FinalAnswer, refusal_answer
from retrieval.model.genes import load_lexicon
from retrieval.model.index_state import IndexState
from retrieval.model.llm_budget import QuestionBudget
from retrieval.model.pathways import load_pathways
from retrieval.model.plan import Plan
from retrieval.model.types import Filters, LLMProvider, Mode, ProviderError
from retrieval.question import guardrails
from retrieval.retriever import Retriever, SearchResult
from retrieval.retrievers.rerank import Reranker, build_reranker
from retrieval.run import EventSink, Run

if TYPE_CHECKING:
    from neo4j import Driver

__all__ = ["INTERNAL_EVENTS", "EventSink", "Pipeline", "Reading", "SearchResult", "question_hash"]
log = logging.getLogger(__name__)

Reading = tuple[Plan, list[str]]  # a question's plan and the warnings reading it gave

# In-process observers (the eval scorecards) see these; clients never do: the raw generator reply is unvalidated.
INTERNAL_EVENTS = frozenset({"generated"})


def question_hash(question: str) -> str:
    return hashlib.sha256(question.encode()).hexdigest()[:16]


class Pipeline:
    def __init__(
        self,
        settings: FluxSettings,
        engine: Engine,
        driver: Driver,
        cache: Cache,
        reranker: Reranker,
        provider: LLMProvider,
        embed: Callable[[str], list[float]],
        embed_texts: Embed | None = None,
        embed_queries: Callable[[list[str]], list[list[float]]] | None = None,
    ) -> None:
        self.settings = settings
        self._embed_queries = embed_queries
        self.retriever = Retriever(settings, engine, driver, cache, reranker, provider, embed)
        # The grounding check embeds claims and sentences in one batch per answer, uncached (they are no queries).
        verifier = Verifier.from_settings(settings, embed_texts or one_by_one(embed))
        self.answerer = Answerer(settings, self.retriever, driver, provider, verifier)

    @classmethod
    def from_settings(
        cls, settings: FluxSettings, *, cache: Cache | None = None, provider: LLMProvider | None = None
    ) -> Pipeline:
        """Everything from configuration; `cache` / `provider` replace the configured ones (evals, tests)."""
        from dagster_project.core.stores import engine_for, graph_driver
        from dagster_project.index.encoder import Embedder
        from retrieval.answering.llm import OpenAICompatibleProvider
        from retrieval.answering.offline import OfflineProvider

        index = settings.index
        embedder = Embedder(
            model_name=index.embedding_model,
            dimension=index.embedding_dim,
            batch_size=index.embedding_batch_size,
            query_prefix=index.embedding_query_prefix,
        )
        embedder.model()  # load (and check the dimension) once, up front
        if provider is None:
            provider = (
                OpenAICompatibleProvider.from_settings(settings) if settings.llm.llm_base_url else OfflineProvider()
            )
        # Fail fast: a dead Neo4j must cost a question seconds, not the driver's 30 s of retries (GraphGuard).
        driver = graph_driver(settings, fail_fast=True)
        # Least privilege: the query path reads the index and writes only answers (migration 0010).
        return cls(
            settings,
            engine_for(settings.resolved_serving_database_url),
            driver,
            cache or Cache.from_settings(settings),
            build_reranker(settings),
            provider,
            lambda q: embedder.embed_query(q).tolist(),
            embedder.embed_documents,
            lambda qs: embedder.embed_queries(qs).tolist(),
        )

    # The retriever holds the stores, the cache, the reranker and the index (pipeline.retriever.engine, .pin(), ...);
    # only what spans both halves is here.
    @property
    def provider(self) -> LLMProvider:
        return self.answerer.provider

    @provider.setter
    def provider(self, provider: LLMProvider) -> None:
        """Both halves use the provider (routing, and judging and generating): the scorecards swap in a recorder."""
        self.retriever.provider = provider
        self.answerer.provider = provider

    def embed_many(self, queries: list[str]) -> list[list[float]]:
        """Query vectors in one batched encode, uncached (the evals: many queries, caches off)."""
        if self._embed_queries is None:
            return [self.retriever.embed(q) for q in queries]
        return self._embed_queries(queries)

    def search(self, question: str, filters: Filters | None = None, on_event: EventSink | None = None) -> SearchResult:
        # Routing may ask the LLM to rewrite the question: that call keeps a question's deadline too.
        with QuestionBudget(self.settings.llm.llm_question_budget, self.settings.llm.llm_answer_reserve).active():
            return self.retriever.search(question, filters, on_event)

    # --- asking ----------------------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        mode: Mode | None = None,
        filters: Filters | None = None,
        on_event: EventSink | None = None,
        reading: Reading | None = None,
    ) -> FinalAnswer:
        """The question answered; `reading`, when given, is what `read` made of it (the scorecards read a question
        set first, then answer its typed plans), so it is not read twice."""
        run = Run(emit=on_event) if on_event else Run()
        mode = mode or self.settings.retrieval.answer_mode
        started = time.perf_counter()
        # One deadline for every LLM call of the question (model/llm_budget.py); past it the offline path answers.
        budget = QuestionBudget(
            self.settings.llm.llm_question_budget, self.settings.llm.llm_answer_reserve, emit=run.emit
        )
        with budget.active():
            answer = self._refusal(question, mode, run) or self._answer(question, mode, filters, run, budget, reading)
        answer.llm_calls = budget.calls
        answer.warnings += [w for w in budget.warnings() if w not in answer.warnings]
        answer.timings_ms = {
            **run.timer.ms,
            **budget.timings(),
            "total": round((time.perf_counter() - started) * 1000, 2),
        }
        return answer

    def _refusal(self, question: str, mode: Mode, run: Run) -> FinalAnswer | None:
        refusal = guardrails.screen_question(question) or self._screen_with_provider(question)
        if not refusal:
            return None
        answer = refusal_answer(question, refusal)
        answer.mode, answer.provider, answer.reranker = mode, self.provider.name, self.retriever.reranker.name
        answer.pipeline_version = pipeline_version()
        run.emit("refused", {"reason": refusal})
        return answer

    def _answer(
        self,
        question: str,
        mode: Mode,
        filters: Filters | None,
        run: Run,
        budget: QuestionBudget,
        reading: Reading | None,
    ) -> FinalAnswer:
        """From the answer cache when it holds this question (or one close enough); otherwise answered and cached."""
        index = self.retriever.index()
        # The serving code's version is part of the key: a new generator must not serve the old one's answers.
        # The source mode too: live mode answers some questions from PubMed itself, the others from the index.
        variant = (
            f"{mode}|{self.settings.sources.source_mode}|{self.provider.name}|{self.retriever.variant}|"
            f"{pipeline_version()}"
        )
        cacheable = self.retriever.cache.cacheable(filters)
        qvec: list[float] | None = None
        if cacheable:
            with run.stage("embed"):
                qvec = self.retriever.embed(question)
            hit = self.retriever.cache.get_answer(index.version, variant, question, qvec)
            if hit is not None:
                answer = FinalAnswer.model_validate(hit[0])
                answer.cached, answer.question = hit[1], question
                run.emit("cache", {"hit": hit[1]})
                return answer
        plan, read_warnings = reading or self._plan(question, index, run)
        run.emit("plan", {"kind": plan.kind, "reason": plan.reason, "plan": plan.explain()})
        answer = self._scope_from_literature(question, plan, index, mode, filters, run)
        if answer is None and registry.is_typed(plan.kind):
            answer = self.answerer.typed(question, plan, index, mode, run)
        if answer is None:  # not a typed question, or the graph could not be read
            answer = self.answerer.literature(question, plan, index, mode, filters, run)
        assert answer is not None
        answer.plan = plan
        answer.warnings += read_warnings
        if plan.absent is not None and plan.absent.needed_for:
            answer.warnings.append(plan.reason)
        if plan.corrections:
            answer.warnings.append("read " + ", ".join(f"'{typed}' as '{name}'" for typed, name in plan.corrections))
        # An answer the offline path stood in for (the LLM failed or ran out of time) is not the configured one.
        if (
            cacheable
            and answer.confidence > 0
            and not answer.refused
            and not run.degraded
            and not budget.fell_back
            and registry.cacheable(answer, self.settings.sources.source_mode == "live")
        ):
            self.retriever.cache.set_answer(index.version, variant, question, qvec, answer.model_dump(mode="json"))
        return answer

    def _scope_from_literature(
        self, question: str, plan: Plan, index: IndexState, mode: Mode, filters: Filters | None, run: Run
    ) -> FinalAnswer | None:
        """A fact type Flux holds no data for, which the indexed literature itself states: that literature answer,
        with the missing fact type named (None: the scope kind answers "Flux does not hold that")."""
        # reaction_scope: reactions of pathways Flux holds none for, which a text may still describe.
        if (
            plan.kind not in ("scope", "reaction_scope")
            or plan.scope is None
            or not scope.literature_may_answer(question, plan)
        ):
            return None
        answer = self.answerer.literature(
            question, plan, index, mode, filters, run.tagged(path="literature"), or_abstain=False
        )
        if answer is not None:
            answer.scope = plan.scope
            held = (
                "no reactions for what the question names"
                if plan.kind == "reaction_scope"
                else f"no {plan.scope.replace('_', ' ')} data as such"
            )
            answer.warnings.append(f"Flux holds {held}; this answer comes from the indexed literature that states it")
        return answer

    def _screen_with_provider(self, question: str) -> str | None:
        try:
            return self.provider.screen(question)
        except ProviderError as exc:
            log.warning("LLM input screen unavailable: %s", exc)
            return None

    def read(self, question: str) -> Reading:
        """The plan `ask` would answer the question by, and the warnings reading it gave (under the question's LLM
        budget, as `ask` reads it)."""
        with QuestionBudget(self.settings.llm.llm_question_budget, self.settings.llm.llm_answer_reserve).active():
            return self._plan(question, self.retriever.index(), Run())

    def _plan(self, question: str, index: IndexState, run: Run) -> Reading:
        """The rules' plan, or the configured LLM's when it proposes one that checks out (kinds/proposal.py)."""
        engine = self.retriever.engine
        genes, pathways = load_lexicon(engine, index.version), load_pathways(engine, index.version)
        with run.stage("route"):
            rules = registry.read_question(question, genes, pathways)
        with run.stage("plan"):
            return proposal.propose(question, self.provider, genes, pathways, rules)

    def close(self) -> None:
        """Nothing to release: the engine and the Neo4j driver are process-wide (shared with Dagster resources),
        so closing them here would break every other user in the process."""
