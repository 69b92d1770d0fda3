"""Pure logic of the scorecards: ranking metrics, the regression gate, answer metrics, the question sets."""

from __future__ import annotations

import json
from dataclasses import asdict
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from dagster_project.evals import judge_calibration
from dagster_project.evals.answer_checks import (
    RawCheck,
    check_raw,
    claims_name_expected,
    evidence_has,
    gene_list_scores,
    genes_named,
    names_any,
)
from dagster_project.evals.answer_eval import metrics
from dagster_project.evals.gate import GATED, compare, markdown
from dagster_project.evals.grounding import GroundingRule
from dagster_project.evals.judge_calibration import metrics as judge_metrics
from dagster_project.evals.questions import KNOWN_COUNTERPARTS, EvalQuestion, relational_questions
from dagster_project.evals.retrieval_eval import doc_key, doc_ranking, interleave, reciprocal_rank
from retrieval.kinds.registry import kind
from retrieval.model.answer import Claim, FinalAnswer
from retrieval.model.answer_data import GeneRef, MembersData, NodeRef
from retrieval.model.genes import GeneLexicon
from retrieval.model.types import Evidence, JudgeResult


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
    assert set(GATED) == {"retrieval", "answer", "resolution", "literature_tools"}


def test_a_gated_retrieval_task_must_not_copy_its_queries_from_the_index() -> None:
    rate = "keywords_to_paper_verbatim_rate"
    assert not any(c.failed for c in compare("retrieval", {rate: 0.0}, {rate: 0.0}, tolerance=0.02))
    assert [c.metric for c in compare("retrieval", {rate: 0.01}, None, tolerance=0.02) if c.failed] == [rate]


def _row(**kw: object) -> dict:
    base = {
        "variant": "counterpart",
        "raw_parsed": True,
        "raw_citations": 2,
        "raw_valid_citations": 2,
        "raw_claims": 2,
        "raw_claims_kept": 2,
        "raw_claims_grounded": 2,
        "citations": 2,
        "valid_citations": 2,
        "claims": 2,
        "verdict": "good",
        "attempts": 0,
        "confidence": 0.9,
        "latency_ms": 100.0,
        "fallback": False,
        "first_pass_hit": None,
        "final_hit": None,
        "expected_in_claims": None,
    }
    return base | kw


def test_answer_metrics_score_the_raw_reply_relational_passes_and_rescues() -> None:
    rows = [
        _row(expected_in_claims=True, relational_pass=True, first_pass_hit=True, final_hit=True),
        _row(
            raw_valid_citations=1,
            raw_claims_kept=1,
            raw_claims_grounded=0,
            verdict="partial",
            attempts=2,
            expected_in_claims=True,
            relational_pass=False,
            gene_recall=0.5,
            gene_precision=1.0,
            first_pass_hit=False,
            final_hit=True,
        ),
        _row(
            raw_parsed=False,
            raw_citations=0,
            raw_valid_citations=0,
            raw_claims=0,
            raw_claims_kept=0,
            raw_claims_grounded=0,
            citations=0,
            valid_citations=0,
            claims=0,
            fallback=True,
            verdict="bad",
            first_pass_hit=False,
            final_hit=False,
        ),
    ]
    m = metrics(rows)
    assert m["raw_parse_rate"] == pytest.approx(2 / 3)
    assert m["raw_citation_precision"] == pytest.approx(3 / 4)
    assert m["claims_kept_rate"] == pytest.approx(3 / 4) and m["claims_dropped_rate"] == pytest.approx(1 / 4)
    assert m["grounded_claim_rate"] == pytest.approx(2 / 4)
    assert m["relational_questions"] == 2 and m["relational_pass_rate"] == 0.5 and m["expected_in_claims_rate"] == 1
    assert m["pass_rate_counterpart"] == 0.5 and m["questions_counterpart"] == 2
    assert m["gene_list_questions"] == 1 and m["gene_list_recall"] == 0.5
    assert m["first_pass_hit_rate"] == pytest.approx(1 / 3) and m["final_hit_rate"] == pytest.approx(2 / 3)
    assert m["first_pass_misses"] == 2 and m["reretrieval_rescues"] == 1
    assert m["citation_validity"] == 1.0 and m["fallback_rate"] == pytest.approx(1 / 3)
    assert (m["verdict_good"], m["verdict_partial"], m["verdict_bad"]) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert "pubmedqa_accuracy" not in m
    decided = metrics([_row(decision="yes", predicted="yes"), _row(decision="no", predicted="maybe")])
    assert decided["pubmedqa_accuracy"] == 0.5


def test_expected_ids_match_whole_identifiers_only() -> None:
    haystack = "hsa04115 Genes (3): TP53, MDM2, CDKN1A."
    assert names_any(haystack, ("MDM2",)) and names_any(haystack, ("hsa04115",))
    assert not names_any(haystack, ("TP5",)) and not names_any(haystack, ("MDM",))


def test_relational_answers_pass_on_their_claims_not_on_the_evidence() -> None:
    evidence = [Evidence(id="hsa04115", kind="graph", text="Genes (3): TP53, MDM2, CDKN1A.")]
    claim = Claim(text="MDM2 degrades TP53.", citations=["HGNC:11998"])
    answer = FinalAnswer(question="q", answer="a", claims=[claim], confidence=0.5)
    assert evidence_has(evidence, expected=("hsa04115",)) and not claims_name_expected(answer, ("hsa04115",))
    assert claims_name_expected(answer, ("MDM2",)) and claims_name_expected(answer, ("HGNC:11998",))
    chunk = [Evidence(id="pubmed_123_2", kind="chunk", text="...")]
    assert evidence_has(chunk, document="pubmed_123") and not evidence_has(chunk, document="pubmed_12")


def test_gene_lists_come_from_the_payload_else_from_the_text_with_aliases_resolved() -> None:
    lexicon = GeneLexicon(
        [
            ("HGNC:1", "MLH1", "mutL homolog 1", [], []),
            ("HGNC:2", "MSH2", "mutS homolog 2", ["HNPCC1"], []),
            ("HGNC:3", "PMS2", "PMS1 homolog 2", [], []),
        ]
    )
    expected = {"MLH1", "MSH2", "PMS2"}

    def answer(text: str, data: MembersData | None = None) -> FinalAnswer:
        return FinalAnswer(
            question="q", answer=text, confidence=0.5, data=data, table=kind("members").table(data) if data else None
        )

    assert gene_list_scores(genes_named(answer("MLH1, HNPCC1 and PMS2 [hsa03430]."), lexicon), expected) == (1, 1)
    recall, precision = gene_list_scores(genes_named(answer("MLH1 only."), lexicon), expected)
    assert recall == pytest.approx(1 / 3) and precision == 1.0
    assert gene_list_scores(genes_named(answer("No genes here."), lexicon), expected) == (0.0, 0.0)
    # A long list is cut in the prose; the payload's table holds all of it, and that is what is scored.
    payload = MembersData(
        pathway=NodeRef(id="hsa03430"),
        total=3,
        genes=[GeneRef(id=f"HGNC:{i}", symbol=s) for i, s in enumerate(["MLH1", "MSH2", "EXO1"])],
    )
    recall, precision = gene_list_scores(genes_named(answer("MLH1 and 2 more.", payload), lexicon), expected)
    assert recall == pytest.approx(2 / 3) and precision == pytest.approx(2 / 3)


def _bag_of_words(texts: list[str]) -> np.ndarray:
    """A deterministic stand-in for the sentence model: normalised word-count vectors."""
    vocab: dict[str, int] = {}
    rows = [[vocab.setdefault(w.lower(), len(vocab)) for w in t.split()] for t in texts]
    out = np.zeros((len(texts), max(len(vocab), 1)))
    for i, ids in enumerate(rows):
        for j in ids:
            out[i, j] += 1
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_the_raw_reply_is_scored_before_validation_cleans_it() -> None:
    evidence = [
        Evidence(id="a", kind="chunk", text="Glycolysis converts glucose into pyruvate in the cytosol."),
        Evidence(id="b", kind="chunk", text="The citric acid cycle oxidises acetyl-CoA in mitochondria."),
    ]
    reply = json.dumps(
        {
            "answer": "x",
            "confidence": 0.5,
            "citations": ["a", "ghost"],
            "claims": [
                {"text": "Glycolysis converts glucose into pyruvate.", "citations": ["a"]},  # kept, grounded
                {"text": "Glycolysis converts glucose into pyruvate.", "citations": ["b"]},  # kept, wrong evidence
                {"text": "Pyruvate kinase is allosterically activated.", "citations": ["ghost"]},  # dropped
            ],
        }
    )
    check = check_raw(reply, evidence, GroundingRule(0.8, 0.9), _bag_of_words)
    assert (check.parsed, check.citations, check.valid_citations) == (True, 3, 2)
    assert (check.claims, check.claims_kept, check.claims_grounded) == (3, 2, 1)
    assert check_raw("not json", evidence, GroundingRule(0.8, 0.9), _bag_of_words) == RawCheck()
    assert check_raw(None, evidence, GroundingRule(0.8, 0.9), _bag_of_words).parsed is False


def test_a_provider_citing_the_wrong_evidence_fails_the_answer_gate() -> None:
    evidence = [
        Evidence(id=f"e{i}", kind="chunk", text=f"Gene G{i} regulates process P{i} in tissue T{i}.") for i in range(4)
    ]
    rule = GroundingRule(0.8, 0.95)

    def reply(shift: int) -> str:
        claims = [{"text": f"G{i} regulates P{i} in T{i}.", "citations": [f"e{(i + shift) % 4}"]} for i in range(4)]
        return json.dumps({"answer": "x", "confidence": 0.5, "claims": claims})

    def card(shift: int) -> dict[str, float]:
        check = check_raw(reply(shift), evidence, rule, _bag_of_words)
        return metrics([_row(**{f"raw_{k}": v for k, v in asdict(check).items()})])

    good, shifted = card(0), card(1)
    assert good["grounded_claim_rate"] == 1.0 and shifted["grounded_claim_rate"] == 0.0
    failed = [c.metric for c in compare("answer", shifted, good, tolerance=0.02) if c.failed]
    assert failed == ["grounded_claim_rate"]


def test_judge_calibration_is_reported_per_half() -> None:
    rows = [
        {"variant": "right", "correct": True},
        {"variant": "right", "correct": True},
        {"variant": "hard_negative", "correct": False},
        {"variant": "hard_negative", "correct": True},
    ]
    assert judge_metrics(rows) == {"judge_pairs": 4.0, "judge_accuracy_right": 1.0, "judge_accuracy_wrong": 0.5}
    assert judge_metrics(rows[:2]) == {}, "one half alone cannot calibrate anything"


# Judge calibration end to end on hand-built questions: what the served search ranks, the abstracts, the judge's
# verdicts. Each study question's hard negative is the best-ranked *chunk* of another document.
CALIBRATION_SEARCH = {
    "Q1": ["pubmed_1_0", "pubmed_9_0"],  # right pubmed_1, negative pubmed_9
    "Q2": ["pubmed_8_2", "pubmed_2_0", "pubmed_6_0"],  # negative pubmed_8 (ranked above the study itself)
    "Q3": ["pubmed_3_0", "pubmed_3_1", "graph:R-HSA-1"],  # no other document's chunk: no pair at all
    "Q4": ["graph:R-HSA-2", "pubmed_4_0", "pubmed_7_1"],  # graph evidence is never a negative: pubmed_7
}
# What the stand-in judge says about each abstract (it reads the abstract's text, so a pair judged on the wrong
# document gets another verdict).
CALIBRATION_VERDICTS = {
    "pubmed_1": "good",
    "pubmed_2": "partial",
    "pubmed_4": "good",
    "pubmed_9": "partial",
    "pubmed_8": "good",
    "pubmed_7": "good",
}


def _calibration_pipeline(verdict_of: dict[str, str]) -> Any:
    def search(question: str) -> Any:
        return SimpleNamespace(
            evidence=[
                Evidence(id=i, kind="graph" if i.startswith("graph:") else "chunk", text=i)
                for i in CALIBRATION_SEARCH[question]
            ]
        )

    def judge(question: str, evidence: list[Evidence]) -> JudgeResult:
        (only,) = evidence
        return JudgeResult(verdict=verdict_of[only.text.removeprefix("abstract of ")])

    return SimpleNamespace(search=search, provider=SimpleNamespace(judge=judge), retriever=SimpleNamespace(engine=None))


def _calibrate(monkeypatch: pytest.MonkeyPatch, verdict_of: dict[str, str]) -> tuple[dict[str, float], list[dict]]:
    # The abstracts come from Postgres in the platform; here from a dict.
    monkeypatch.setattr(judge_calibration, "_abstracts", lambda _pipeline, keys: {k: f"abstract of {k}" for k in keys})
    questions = [EvalQuestion(id=f"q{n}", question=f"Q{n}", relevant_doc=f"pubmed_{n}") for n in range(1, 5)]
    questions.append(EvalQuestion(id="relational", question="Q1"))  # no study: not calibrated on
    return judge_calibration.evaluate(_calibration_pipeline(verdict_of), questions)


def test_judge_calibration_scores_each_half_from_the_judges_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    metrics, rows = _calibrate(monkeypatch, CALIBRATION_VERDICTS)
    assert [(r["question_id"], r["variant"], r["document"]) for r in rows] == [
        ("q1", "right", "pubmed_1"),
        ("q1", "hard_negative", "pubmed_9"),
        ("q2", "right", "pubmed_2"),
        ("q2", "hard_negative", "pubmed_8"),
        ("q4", "right", "pubmed_4"),
        ("q4", "hard_negative", "pubmed_7"),
    ]
    # Right abstracts: pubmed_1 and pubmed_4 judged good, pubmed_2 only partial: 2 of 3. Hard negatives: pubmed_9
    # judged partial is a correct rejection, pubmed_8 and pubmed_7 judged good are the judge fooled: 1 of 3.
    assert metrics == {
        "judge_pairs": 6.0,
        "judge_accuracy_right": pytest.approx(2 / 3),
        "judge_accuracy_wrong": pytest.approx(1 / 3),
    }
    assert [r["correct"] for r in rows] == [True, True, False, False, True, False]


def test_a_judge_that_always_says_good_is_right_on_one_half_only(monkeypatch: pytest.MonkeyPatch) -> None:
    metrics, _ = _calibrate(monkeypatch, dict.fromkeys(CALIBRATION_VERDICTS, "good"))
    assert metrics == {"judge_pairs": 6.0, "judge_accuracy_right": 1.0, "judge_accuracy_wrong": 0.0}
    metrics, _ = _calibrate(monkeypatch, dict.fromkeys(CALIBRATION_VERDICTS, "partial"))
    assert metrics == {"judge_pairs": 6.0, "judge_accuracy_right": 0.0, "judge_accuracy_wrong": 1.0}


def test_question_sets_are_well_formed() -> None:
    questions = relational_questions()
    assert len(questions) >= 30 and len({q.id for q in questions}) == len(questions)
    assert all(q.expected for q in questions)
    assert {q.kind for q in questions} == {"counterpart", "shared_genes", "gene_pathways", "members", "hierarchy"}
    assert len(set(KNOWN_COUNTERPARTS)) == len(KNOWN_COUNTERPARTS) == 20
    assert all(r.startswith("R-HSA-") and k.startswith("hsa") for r, k in KNOWN_COUNTERPARTS)


def test_a_strategy_reused_for_another_question_fails_the_literature_tools_gate_at_once() -> None:
    base = {
        "check_precision": 1.0,
        "check_recall": 1.0,
        "search_right": 1.0,
        "memory_hit_rate": 1.0,
        "memory_false_reuse": 0.0,
    }
    same = compare("literature_tools", base, base, tolerance=0.02)
    assert not any(c.failed for c in same)
    reused = compare("literature_tools", base | {"memory_false_reuse": 1.0}, base, tolerance=0.02)
    assert [c.metric for c in reused if c.failed] == ["memory_false_reuse"]
    weaker = compare("literature_tools", base | {"check_recall": 0.9}, base, tolerance=0.02)
    assert [c.metric for c in weaker if c.failed] == ["check_recall"]


def test_a_scorecards_mlflow_run_is_a_link_to_its_page_in_the_mlflow_ui() -> None:
    from dagster_project.core.settings import FluxSettings
    from dagster_project.evals.report import run_url

    settings = FluxSettings().evolve(mlflow_port=55123)
    assert run_url(settings, "7", "abc123") == "http://127.0.0.1:55123/#/experiments/7/runs/abc123"
