"""Answer only what can be backed, on the demo platform through the served pipeline and `POST /query`: a fact type
Flux holds no data for is named with confidence 0; a literature question is answered with its calibrated
confidence only when the texts state what is asked; a question about something no text mentions gets "Flux does
not hold that"; the plan is in every answer; bad input gets a clear answer, never a 5xx. The answerability gates of
the answer scorecard fail on today's catch-all (every unrecognised question answered from the nearest sentences).
A graph query past its time limit is reported as such, not as a failure."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.evals import abstention_eval, answer_eval
from dagster_project.evals.answer_eval import eval_pipeline
from dagster_project.evals.gate import compare
from dagster_project.evals.grounding import GroundingRule
from retrieval.answering import answerability
from retrieval.kinds import registry
from retrieval.kinds.literature import plan_for
from retrieval.model.index_state import current_index
from retrieval.model.plan import Plan
from retrieval.question.reading import Read
from retrieval.retrievers.graph_facts import GraphQueryTimeout, GraphReader
from tests.integration.conftest import ask_api as ask
from tests.support.plans import _READ


def test_a_missing_fact_type_is_named_with_confidence_zero_and_what_flux_holds(query_client: TestClient) -> None:
    answer = ask(query_client, "Which drugs target the MAPK signaling pathway?")
    assert (answer["kind"], answer["scope"], answer["confidence"]) == ("scope", "drug", 0.0)
    assert answer["answer"].startswith("Flux does not hold that: it holds no drug data")
    assert "hsa04010" in {c["id"] for c in answer["citations"]}  # what Flux holds about the pathway, cited
    assert answer["plan"]["operation"] == "abstain" and answer["plan"]["scope"] == "drug"


def test_literature_answers_carry_their_calibrated_confidence_or_abstain(query_client: TestClient) -> None:
    stated = ask(query_client, "How does MDM2 keep p53 levels low in unstressed cells?")
    assert stated["kind"] == "literature" and stated["confidence"] >= 0.5
    assert stated["confidence"] == stated["answerability"] and stated["claims"]
    absent = ask(query_client, "What does MDM4 do in glycolysis?")
    assert absent["confidence"] == 0.0 and absent["answer"].startswith("Flux does not hold that")
    unrelated = ask(query_client, "How does quorum sensing coordinate bacterial biofilms?")
    assert unrelated["confidence"] == 0.0 and not unrelated["claims"]


@pytest.mark.parametrize(
    "question", ["R-HSA-", "hsa0411", "?" * 3, "x" * 1999, "What connects Hedgehog signaling and Wnt signaling?"]
)
def test_bad_input_gets_a_clear_non_answer_never_a_5xx(query_client: TestClient, question: str) -> None:
    answer = ask(query_client, question)
    assert answer["confidence"] == 0.0 or answer["kind"] in ("not_found", "literature"), answer["answer"]
    assert query_client.post("/query", json={"question": "x" * 5000}).status_code in (413, 422)
    assert query_client.post("/query", json={"question": ""}).status_code == 422


def test_a_graph_query_past_its_time_limit_is_too_broad_not_a_failure(demo_platform: FluxSettings) -> None:
    slow = "UNWIND range(1, 200000000) AS x WITH x WHERE x % 7 = 0 RETURN count(*) AS n"
    with pytest.raises(GraphQueryTimeout, match=r"ran past 0\.3 s"):
        GraphReader(graph_driver(demo_platform), timeout_s=0.3).rows(slow)


def _catch_all(question: str, genes: Any, pathways: Any) -> Plan:
    """Today's rules without the kinds that abstain: a scope or not-found question is a literature search."""
    plan = _READ(question, genes, pathways)
    return plan if plan.kind not in ("scope", "not_found") else plan_for(Read.of(question, genes, pathways))


def test_the_answerability_gates_fail_on_the_catch_all(
    demo_platform: FluxSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_for(demo_platform.platform_database_url)
    questions = abstention_eval.questions(engine)
    grounding = answer_eval.Grounding(GroundingRule(1, 1), lambda _: None)
    # Quick mode for both (one retrieval pass): the comparison is what is answered and refused, not the judge loop.
    served, _ = answer_eval.evaluate(
        eval_pipeline(demo_platform, current_index(engine)), questions, grounding, mode="quick"
    )
    assert served["answerability_refused"] >= 0.8 and served["answerability_answered"] >= 0.8, served
    monkeypatch.setattr(registry, "read_question", _catch_all)
    monkeypatch.setattr(
        answerability,
        "decide",
        lambda q, plan, evidence, model, aliases=None: answerability.Decision(
            True, None, "catch-all", answerability.signals(q, plan, evidence)
        ),
    )
    worse, _ = answer_eval.evaluate(
        eval_pipeline(demo_platform, current_index(engine)), questions, grounding, mode="quick"
    )
    assert worse["confident_non_answers"] > served["confident_non_answers"] + 20
    failed = {c.metric for c in compare("answer", worse, served, tolerance=0.02) if c.failed}
    assert {"answerability_refused", "confident_non_answers"} <= failed
