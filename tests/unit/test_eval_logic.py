"""Pure logic of the scorecards: ranking metrics, the regression gate, answer metrics, the question sets."""

from __future__ import annotations

import pytest

from dagster_project.evals.answer_eval import _contains_expected, metrics
from dagster_project.evals.gate import GATED, compare, markdown
from dagster_project.evals.questions import KNOWN_COUNTERPARTS, relational_questions
from dagster_project.evals.retrieval_eval import doc_key, doc_ranking, interleave, reciprocal_rank
from retrieval.types import Evidence


def test_chunk_ids_map_to_documents_and_rankings_deduplicate() -> None:
    assert doc_key("pubmed_21645374_2") == "pubmed_21645374"
    assert doc_key("reactome_R-HSA-70171_0") == "reactome_R-HSA-70171"
    ranking = doc_ranking(["pubmed_1_0", "pubmed_1_1", "kegg_hsa00010_0", "pubmed_2_3"])
    assert ranking == ["pubmed_1", "kegg_hsa00010", "pubmed_2"]


def test_interleave_and_reciprocal_rank() -> None:
    assert interleave(["a", "b", "c"], ["b", "d"]) == ["a", "b", "d", "c"]
    assert reciprocal_rank(["x", "y", "z"], "y") == 0.5
    assert reciprocal_rank(["x"] * 10 + ["y"], "y") == 0.0  # beyond @10


def test_gate_fails_only_on_drops_beyond_the_tolerance() -> None:
    recall, strict = "cv_equivalence_recall", "cv_equivalence_precision_strict"
    baseline = {strict: 0.80, recall: 1.0}
    ok = compare("resolution", {strict: 0.785, recall: 1.0}, baseline, tolerance=0.02)
    assert not any(c.failed for c in ok)
    bad = compare("resolution", {strict: 0.77, recall: 1.0}, baseline, tolerance=0.02)
    assert [c.metric for c in bad if c.failed] == [strict]
    assert "**FAIL**" in markdown(bad)
    vanished = compare("resolution", {recall: 1.0}, baseline, tolerance=0.02)
    assert [c.metric for c in vanished if c.failed] == [strict]
    assert not any(c.failed for c in compare("resolution", {strict: 0.1}, None, tolerance=0.02))
    assert {c.metric for c in ok} == {strict, recall}, "metrics absent now and in the baseline are skipped"
    assert set(GATED) == {"retrieval", "answer", "resolution"}


def test_a_gated_retrieval_task_must_not_copy_its_queries_from_the_index() -> None:
    rate = "keywords_to_paper_verbatim_rate"
    assert not any(c.failed for c in compare("retrieval", {rate: 0.0}, {rate: 0.0}, tolerance=0.02))
    assert [c.metric for c in compare("retrieval", {rate: 0.01}, None, tolerance=0.02) if c.failed] == [rate]


def _row(**kw: object) -> dict:
    base = {"citations": 2, "valid_citations": 2, "claims": 2, "claims_with_citation": 2, "verdict": "good",
            "attempts": 0, "confidence": 0.9, "latency_ms": 100.0, "fallback": False, "expected_hit": None}
    return base | kw


def test_answer_metrics_count_citations_claims_expected_ids_and_decisions() -> None:
    rows = [_row(expected_hit=True), _row(valid_citations=1, expected_hit=False, verdict="partial", attempts=2),
            _row(citations=0, valid_citations=0, claims=0, claims_with_citation=0, fallback=True, verdict="bad")]
    m = metrics(rows)
    assert m["citation_validity"] == pytest.approx(3 / 4)
    assert m["claims_with_citation"] == 1.0 and m["expected_id_hit_rate"] == 0.5
    assert m["fallback_rate"] == pytest.approx(1 / 3) and m["mean_reretrievals"] == pytest.approx(2 / 3)
    assert (m["verdict_good"], m["verdict_partial"], m["verdict_bad"]) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert "pubmedqa_accuracy" not in m
    decided = metrics([_row(decision="yes", predicted="yes"), _row(decision="no", predicted="maybe")])
    assert decided["pubmedqa_accuracy"] == 0.5


def test_expected_ids_match_whole_identifiers_only() -> None:
    cited = [Evidence(id="hsa04115", kind="graph", text="Genes (3): TP53, MDM2, CDKN1A.")]
    assert _contains_expected(cited, ("MDM2",)) and _contains_expected(cited, ("hsa04115",))
    assert not _contains_expected(cited, ("TP5",)) and not _contains_expected(cited, ("MDM",))


def test_question_sets_are_well_formed() -> None:
    questions = relational_questions()
    assert len(questions) >= 30 and len({q.id for q in questions}) == len(questions)
    assert all(q.expected for q in questions)
    assert {q.kind for q in questions} == {"equivalent", "shared_genes", "two_genes", "members"}
    assert len(set(KNOWN_COUNTERPARTS)) == len(KNOWN_COUNTERPARTS) == 20
    assert all(r.startswith("R-HSA-") and k.startswith("hsa") for r, k in KNOWN_COUNTERPARTS)
