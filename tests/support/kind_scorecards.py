"""The generated questions of some kinds answered through the serving pipeline (caches off), their per-kind pass
rates checked, and a reader that sends those kinds' questions to `scope` instead: what the integration tests of a
group of kinds (reactions, conditions) share."""

from __future__ import annotations

from collections.abc import Callable, Collection

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.evals import answer_eval, kind_questions
from dagster_project.evals.answer_eval import eval_pipeline
from dagster_project.evals.grounding import GroundingRule
from dagster_project.evals.kind_truth import Truth
from retrieval.kinds import registry
from retrieval.model.genes import GeneLexicon
from retrieval.model.index_state import current_index
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import FactType, Plan

Scorecard = tuple[dict[str, float], list[dict]]
FLOOR = 0.85  # each kind's pass rate on its generated questions


def scorecard(settings: FluxSettings, truth: Truth, kinds: Collection[str]) -> Scorecard:
    pipeline = eval_pipeline(settings, current_index(engine_for(settings.platform_database_url)))
    questions = [q for q in kind_questions.generate(truth) if q.extra["kind"] in kinds]
    return answer_eval.evaluate(pipeline, questions, answer_eval.Grounding(GroundingRule(1, 1), lambda _: None))


def assert_kinds_pass(card: Scorecard, kinds: Collection[str], least: int = 60) -> None:
    metrics, rows = card
    failed = [
        (r["expected_kind"], r["question"], r["answer_kind"], r["answer"][:100]) for r in rows if not r["kind_pass"]
    ]
    counted = {kind: sum(1 for r in rows if r["expected_kind"] == kind) for kind in kinds}
    assert sum(counted.values()) >= least and min(counted.values()) >= 3, counted
    for kind in kinds:
        assert metrics[f"kinds_pass_rate_{kind}"] >= FLOOR, (kind, [f for f in failed if f[0] == kind][:6])


Reader = Callable[[str, GeneLexicon, PathwayLexicon], Plan]


def reader_without(kinds: Collection[str], missing: FactType) -> Reader:
    """Today's rules, except that a question of `kinds` is answered as the fact type Flux once did not hold."""
    rules = registry.read_question

    def read(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
        plan = rules(question, genes, pathways)
        if plan.kind not in kinds:
            return plan
        return plan.model_copy(update={"kind": "scope", "operation": "abstain", "scope": missing, "relation": None})

    return read
