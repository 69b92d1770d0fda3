"""The answering half of the pipeline: from a question's plan to a validated, stamped FinalAnswer.

A typed question is answered from its kind's facts (retrieval/kinds/); any other from text evidence: route →
retrieve → judge loop (thinking mode) → answerability (does the evidence answer it, or "Flux does not hold that") →
generate → three-pass validation → grounding check (with a second, broader retrieval when too few claims are
supported) → provenance stamps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dagster_project.core.settings import FluxSettings
from retrieval.answering import answerability, evidence_guard
from retrieval.answering.grounding import Retrieve, Verifier, grounded_answer
from retrieval.answering.judge import aspect_queries, should_reretrieve
from retrieval.answering.offline import OfflineProvider
from retrieval.answering.typed_answer import cited_releases, release_note
from retrieval.kinds import literature, registry
from retrieval.kinds.base import Stores
from retrieval.model import llm_budget
from retrieval.model.answer import FinalAnswer, is_fallback, uncited_answer, validate_answer
from retrieval.model.answer_data import AnswerData
from retrieval.model.index_state import IndexState
from retrieval.model.plan import Plan
from retrieval.model.types import Evidence, Filters, JudgeResult, LLMProvider, Mode, ProviderError, RoutePlan
from retrieval.pubmed.live import pubmed_evidence, searched_note
from retrieval.question import guardrails
from retrieval.retriever import Retriever
from retrieval.retrievers.context import shown_context
from retrieval.retrievers.graph_facts import GraphQueryTimeout, GraphReader
from retrieval.retrievers.graph_guard import GraphUnavailable, degraded_warning
from retrieval.run import Run

if TYPE_CHECKING:
    from neo4j import Driver

Offline = Callable[[list[Evidence]], str]  # what stands in for an LLM answer that failed: the offline reply
log = logging.getLogger(__name__)


class Answerer:
    def __init__(
        self, settings: FluxSettings, retriever: Retriever, driver: Driver, provider: LLMProvider, verifier: Verifier
    ) -> None:
        self.settings = settings
        self.retriever = retriever
        self.driver = driver
        self.provider = provider
        self.verifier = verifier
        self.offline = OfflineProvider()  # stands in when the LLM's answer fails or runs out of time
        # Fitted per encoder: whether text evidence answers a question (None: only the naming rule applies).
        self.answerability = answerability.model_for(settings.index.embedding_model)
        # The provider's own instruction texts: an answer that repeats them is a leaked prompt.
        self.echo_detector = evidence_guard.EchoDetector(provider.instructions)

    # --- typed questions -----------------------------------------------------------------------------------
    def typed(self, question: str, plan: Plan, index: IndexState, mode: Mode, run: Run) -> FinalAnswer | None:
        """A typed question answered from its kind's facts; None (→ text evidence) when the graph cannot be read."""
        with run.stage("graph_facts"):
            try:
                data = self._facts(plan)
            except GraphUnavailable as exc:
                log.warning("graph facts unavailable for a %s question: %s", plan.kind, exc)
                run.degrade(str(exc))
                return None
            except GraphQueryTimeout as exc:
                log.warning("a %s question ran past the graph's time limit: %s", plan.kind, exc)
                run.degrade(f"too broad: {exc}")
                return None
        kind = registry.kind(data.kind)  # the facts may say "not found"
        composed, evidence = registry.compose_answer(data)
        run.emit("evidence", {"evidence": [e.model_dump(mode="json") for e in evidence]})
        holds_nothing = registry.abstains(data)
        if not self.provider.writes_prose or not evidence or holds_nothing:
            with run.stage("validate"):
                run.emit("generated", {"raw": composed})
                answer = guardrails.scrub_answer(
                    validate_answer(question, composed, evidence) if evidence else uncited_answer(question, composed)
                )
        else:  # an LLM writes the prose from the same facts (checked, never re-retrieved: the facts are complete)
            answer = self._generate(question, evidence, run, lambda _given: composed)[0]
        route = RoutePlan(strategy="direct", reason=plan.reason, queries=[question])
        self._stamp(answer, index, route, mode, 0, None)
        answer.kind, answer.data, answer.table, answer.scope = data.kind, data, kind.table(data), plan.scope
        if holds_nothing:  # it says what Flux does not hold: no confidence in any answer to the question
            answer.confidence = 0.0
        # Facts read live at question time come from no release Flux holds.
        answer.releases = {} if kind.read_live(data) else cited_releases(index.dataset_version, evidence)
        if answer.releases and not holds_nothing:  # the release the cited facts are from, in the prose too
            answer.answer = f"{answer.answer}\n\n{release_note(answer.releases)}"
        return answer

    def _facts(self, plan: Plan) -> AnswerData:
        kind = registry.kind(plan.kind)
        assert kind.facts is not None, f"{plan.kind} is not a typed kind"
        genes, pathways = self.retriever.lexicons()
        stores = Stores(GraphReader(self.driver), self.retriever.engine, genes, pathways, self.settings)
        if not kind.needs_graph:
            return kind.facts(plan, stores)
        return self.retriever.graph_guard.call(lambda: kind.facts(plan, stores))  # type: ignore[misc]

    # --- literature questions ------------------------------------------------------------------------------
    def literature(
        self,
        question: str,
        plan: Plan,
        index: IndexState,
        mode: Mode,
        filters: Filters | None,
        run: Run,
        or_abstain: bool = True,
    ) -> FinalAnswer | None:
        """A literature answer when the evidence answers the question (answering/answerability.py), else "Flux does
        not hold that" — or None with `or_abstain` off (the caller has an abstention of its own)."""
        if plan.literature is not None and self.settings.sources.source_mode == "live":
            return self._from_pubmed(question, plan, index, mode, run)
        route = self.retriever.plan(question, index, run)
        run.emit("route", route.model_dump())
        evidence, _ = self.retriever.retrieve(route.queries, index, filters, run)
        judged, evidence, attempts = self._judge_loop(question, route, evidence, index, filters, mode, run)
        run.emit("evidence", {"evidence": [e.model_dump(mode="json") for e in evidence]})
        with run.stage("answerability"):
            decision = answerability.decide(question, plan, evidence, self.answerability, self._aliases(plan))
        run.emit(
            "answerability",
            {
                "answers": decision.answers,
                "probability": decision.probability,
                "why": decision.why,
                "signals": decision.signals.values,
                "ruled_out": decision.ruled_out,
            },
        )
        if not or_abstain and (not decision.answers or decision.probability is None):
            return None
        if decision.answers:
            answer, evidence = self._generate(
                question,
                evidence,
                run,
                lambda given: self.offline.generate(question, given),
                self._second_retrieval(route, index, filters, run),
            )
            if decision.probability is not None and answer.claims:  # calibrated on the fitting set
                answer.confidence = round(decision.probability, 3)
        else:
            answer = self._abstention(question, plan, decision.why, run)
        answer.answerability = None if decision.probability is None else round(decision.probability, 3)
        self._stamp(answer, index, route, mode, attempts, judged)
        answer.kind = "literature"
        if filters and filters.sources and answer.grounding and answer.grounding.answered_from != "first":
            answer.warnings.append(
                "too few claims were supported: a second retrieval looked beyond the requested sources"
            )
        if withheld := evidence_guard.withheld_count(evidence):
            answer.warnings.append(evidence_guard.withheld_warning(withheld))
        if run.degraded:
            answer.warnings.append(degraded_warning(run.degraded, plan.kind))
        return answer

    def _from_pubmed(self, question: str, plan: Plan, index: IndexState, mode: Mode, run: Run) -> FinalAnswer:
        """ "What does the literature say about X" in live mode: the most relevant PubMed abstracts, found by a
        checked search, are the evidence — judged answerable, generated and grounded like indexed evidence."""
        assert plan.literature is not None
        with run.stage("pubmed"):
            found, papers, why = pubmed_evidence(self.settings, self.retriever.engine, question, plan.literature)
        evidence = self._scored(
            [
                Evidence(
                    id=f"PMID:{p.id}",
                    kind="chunk",
                    text=f"{p.title}\n\n{p.abstract}",
                    title=p.title,
                    source="pubmed",
                    query=found.trail.final.term if found.trail and found.trail.final else question,
                )
                for p in papers
            ],
            question,
        )
        run.emit("evidence", {"evidence": [e.model_dump(mode="json") for e in evidence]})
        decision = (
            answerability.decide(question, plan, evidence, self.answerability, self._aliases(plan))
            if evidence
            else None
        )
        if decision is not None and decision.answers:
            answer, _ = self._generate(question, evidence, run, lambda given: self.offline.generate(question, given))
            if decision.probability is not None and answer.claims:
                answer.confidence = round(decision.probability, 3)
        else:
            answer = self._abstention(question, plan, why or (decision.why if decision else "nothing was read"), run)
        answer.answer = f"{answer.answer}\n\n{searched_note(found)}".strip()
        self._stamp(
            answer, index, RoutePlan(strategy="direct", reason="PubMed, live", queries=[question]), mode, 0, None
        )
        answer.kind = "literature"
        return answer

    def _scored(self, evidence: list[Evidence], question: str) -> list[Evidence]:
        """Fetched abstracts with the question's cosine to each, as retrieval scores an indexed chunk (the
        answerability model reads it), most similar first."""
        if not evidence:
            return evidence
        asked = np.asarray(self.retriever.embed(question), dtype=float)
        texts = np.asarray(self.verifier.embed([e.text for e in evidence]), dtype=float)
        cosines = texts @ asked / np.maximum(np.linalg.norm(texts, axis=1) * np.linalg.norm(asked), 1e-12)
        for item, cosine in zip(evidence, cosines, strict=True):
            item.score, item.scores = float(cosine), {"cosine": float(cosine)}
        return sorted(evidence, key=lambda e: -e.score)

    def _aliases(self, plan: Plan) -> dict[str, tuple[str, ...]]:
        """Every form a text may name the plan's genes by: aliases, previous symbols, the full name."""
        genes, _ = self.retriever.lexicons()
        out = {}
        for entity in plan.genes:
            gene = genes.by_id(entity.id)
            if gene is not None:
                out[entity.id] = (gene.symbol, *gene.aliases, *gene.previous_symbols, gene.name)
        return out

    def _abstention(self, question: str, plan: Plan, why: str, run: Run) -> FinalAnswer:
        """ "Flux does not hold that", and what it holds about what the question names (from the graph, when it
        can be read), confidence 0."""
        genes, pathways = self.retriever.lexicons()
        stores = Stores(GraphReader(self.driver), self.retriever.engine, genes, pathways, self.settings)
        try:
            raw, cited = self.retriever.graph_guard.call(lambda: literature.abstention(why, plan, stores))
        except (GraphUnavailable, GraphQueryTimeout):
            raw, cited = literature.abstention(why, plan, None)
        answer = validate_answer(question, raw, cited) if cited else uncited_answer(question, raw)
        answer.confidence = 0.0
        run.emit("abstained", {"why": why})
        return answer

    def _judge_loop(
        self,
        question: str,
        plan: RoutePlan,
        evidence: list[Evidence],
        index: IndexState,
        filters: Filters | None,
        mode: Mode,
        run: Run,
    ) -> tuple[JudgeResult | None, list[Evidence], int]:
        if mode == "quick":
            return None, evidence, 0
        attempts = 0
        asked = {q.lower() for q in plan.queries}
        while True:
            with run.stage("judge"):
                try:
                    result = self.provider.judge(question, evidence)
                except ProviderError as exc:
                    result = JudgeResult(verdict=None, rationale=f"judge unavailable: {exc}")
            result.rationale = self.echo_detector.scrub(result.rationale)[0]
            run.emit("judge", {"attempt": attempts, **result.model_dump()})
            if not should_reretrieve(
                result,
                attempts,
                self.settings.retrieval.judge_max_attempts,
                self.settings.retrieval.judge_min_confidence,
            ):
                return result, evidence, attempts
            attempts += 1
            queries = aspect_queries(question, result.missing, asked) or [question]
            asked |= {q.lower() for q in queries}
            evidence, _ = self.retriever.retrieve(queries, index, filters, run, evidence)

    def _second_retrieval(self, plan: RoutePlan, index: IndexState, filters: Filters | None, run: Run) -> Retrieve:
        """The grounding retry's retrieval, added to what was found: no source filter (user/session scoping stays),
        more candidates, for the plan's queries (broadened) or the unsupported claims (augmented)."""
        broad = Filters(user=filters.user, session=filters.session) if filters else None
        widen = self.settings.retrieval.grounding_broaden_factor

        def retrieve(retry: str, queries: list[str], evidence: list[Evidence]) -> list[Evidence]:
            tagged = run.tagged(retry=retry)
            found, _ = self.retriever.retrieve(queries or plan.queries, index, broad, tagged, evidence, widen)
            tagged.emit("evidence", {"evidence": [e.model_dump(mode="json") for e in found]})
            return found

        return retrieve

    # --- generation ----------------------------------------------------------------------------------------
    def _generate(
        self, question: str, evidence: list[Evidence], run: Run, offline: Offline, retrieve: Retrieve | None = None
    ) -> tuple[FinalAnswer, list[Evidence]]:
        """The validated answer with its claims checked against what they cite, and the evidence it was given:
        `retrieve` runs a second retrieval when too few claims are supported (answering/grounding.py)."""
        if not self.settings.retrieval.grounding_check:
            return self._generate_once(question, evidence, run, offline)[0], evidence
        return grounded_answer(
            lambda given: self._generate_once(question, given, run, offline),
            evidence,
            self.verifier,
            retrieve,
            run.emit,
            run.stage,
        )

    def _generate_once(
        self, question: str, evidence: list[Evidence], run: Run, offline: Offline
    ) -> tuple[FinalAnswer, dict[str, str]]:
        """One generation and its validation; with it each evidence id's text as the provider showed it. When the
        provider fails (unreachable, out of time) or its reply is rejected, the offline reply stands in."""
        # The pure function the provider formats its prompt with, on its budget: the tiers are the ones it used.
        shown, tiers = shown_context(evidence, self.provider.context_budget)
        with run.stage("generate"):
            try:
                raw: str | None = self.provider.generate(question, evidence)
                failure = ""
            except ProviderError as exc:
                raw, failure = None, "" if exc.recorded else f"answer generation failed: {exc}"
        if raw is not None:
            run.emit("generated", {"raw": raw})
            with run.stage("validate"):
                # An item left out for the budget was never given: citing it is citing the unseen.
                given = [e for e in evidence if e.id in shown]
                answer = guardrails.scrub_answer(validate_answer(question, raw, given))
                answer = evidence_guard.scrub_instruction_echo(answer, self.echo_detector)
            if not is_fallback(answer) or self.provider.name == self.offline.name:  # nothing to stand in for it
                answer.context_tiers = tiers
                return answer, shown
            why = "; ".join(answer.warnings)
            failure = "" if llm_budget.mark_rejected(why) else f"the LLM's answer was not used ({why})"
        return self._offline_answer(question, evidence, run, offline, failure), {e.id: e.text for e in evidence}

    def _offline_answer(
        self, question: str, evidence: list[Evidence], run: Run, offline: Offline, failure: str
    ) -> FinalAnswer:
        with run.stage("generate_offline"):
            raw = offline(evidence)
        # Not "generated": that event is the LLM's own reply, which the answer scorecard checks.
        run.emit("offline_answer", {"provider": self.offline.name})
        answer = guardrails.scrub_answer(validate_answer(question, raw, evidence))
        answer.provider = self.offline.name
        if failure:  # otherwise the question's LLM record says why (model/llm_budget.py)
            answer.warnings.append(f"{failure}; the offline answer stands in")
        return answer

    def _stamp(
        self,
        answer: FinalAnswer,
        index: IndexState,
        plan: RoutePlan,
        mode: Mode,
        attempts: int,
        judged: JudgeResult | None,
    ) -> None:
        answer.dataset_version, answer.pipeline_version = index.dataset_version, index.pipeline_version
        answer.index_version, answer.dagster_run_id = index.version, index.dagster_run_id
        answer.mode, answer.route, answer.attempts = mode, plan.strategy, attempts
        answer.reranker, answer.provider = self.retriever.reranker.name, answer.provider or self.provider.name
        if judged is not None and judged.verdict is not None:
            answer.retrieval_quality = judged.verdict
            answer.judge_missing = judged.missing
        elif judged is not None and not llm_budget.failed("judge"):  # a failed call is warned about with the rest
            answer.warnings.append(f"no judge verdict ({judged.rationale}); answered anyway")
