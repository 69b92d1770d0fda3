"""The judge loop's rule (docs/answers.md, step 5): when to re-retrieve, what to ask for, and how
new evidence is merged into what the loop already has."""

from __future__ import annotations

import pytest

from retrieval.answering.judge import MAX_ASPECT_QUERIES, aspect_queries, merge_evidence, should_reretrieve
from retrieval.model.types import Evidence, EvidenceKind, JudgeResult, Verdict

MAX_ATTEMPTS = 3
MIN_CONFIDENCE = 0.7


@pytest.mark.parametrize(
    ("verdict", "confidence", "expected"),
    [
        ("bad", 0.95, True),
        ("bad", 0.1, True),
        ("partial", 0.69, True),
        ("partial", 0.0, True),
        ("partial", 0.7, False),
        ("partial", 0.9, False),
        ("good", 0.95, False),
        ("good", 0.3, False),
        (None, 0.0, False),
    ],
)
def test_should_reretrieve_truth_table(verdict: Verdict | None, confidence: float, expected: bool) -> None:
    result = JudgeResult(verdict=verdict, confidence=confidence)
    assert should_reretrieve(result, 0, MAX_ATTEMPTS, MIN_CONFIDENCE) is expected
    assert should_reretrieve(result, MAX_ATTEMPTS - 1, MAX_ATTEMPTS, MIN_CONFIDENCE) is expected


@pytest.mark.parametrize(
    ("verdict", "confidence"),
    [("bad", 0.95), ("partial", 0.69), ("partial", 0.7), ("good", 0.95), ("good", 0.3), (None, 0.0)],
)
def test_no_reretrieval_once_attempts_reach_the_maximum(verdict: Verdict | None, confidence: float) -> None:
    result = JudgeResult(verdict=verdict, confidence=confidence)
    assert should_reretrieve(result, MAX_ATTEMPTS, MAX_ATTEMPTS, MIN_CONFIDENCE) is False
    assert should_reretrieve(result, MAX_ATTEMPTS + 1, MAX_ATTEMPTS, MIN_CONFIDENCE) is False


def test_zero_max_attempts_never_reretrieves() -> None:
    assert should_reretrieve(JudgeResult(verdict="bad", confidence=1.0), 0, 0, MIN_CONFIDENCE) is False


def test_threshold_is_the_configured_one() -> None:
    result = JudgeResult(verdict="partial", confidence=0.75)
    assert should_reretrieve(result, 0, MAX_ATTEMPTS, 0.8) is True
    assert should_reretrieve(result, 0, MAX_ATTEMPTS, 0.7) is False


QUESTION = "Which genes does TP53 share with the Reactome glycolysis pathway R-HSA-70171?"


def test_one_query_per_missing_aspect_anchored_with_the_question_entities() -> None:
    queries = aspect_queries(QUESTION, ["shared genes", "hexokinase"], set())
    assert queries == ["shared genes TP53 Reactome R-HSA-70171", "hexokinase TP53 Reactome R-HSA-70171"]


def test_an_entity_that_is_itself_missing_is_not_repeated_in_the_anchor() -> None:
    assert aspect_queries(QUESTION, ["Reactome"], set()) == ["Reactome TP53 R-HSA-70171"]


def test_queries_already_asked_are_skipped() -> None:
    asked = {"shared genes tp53 reactome r-hsa-70171"}  # the loop keeps asked queries lower-cased
    assert aspect_queries(QUESTION, ["shared genes", "hexokinase"], asked) == ["hexokinase TP53 Reactome R-HSA-70171"]


def test_duplicate_aspects_give_one_query() -> None:
    assert aspect_queries(QUESTION, ["hexokinase", "hexokinase"], set()) == ["hexokinase TP53 Reactome R-HSA-70171"]


def test_aspect_queries_are_capped() -> None:
    missing = ["hexokinase", "pyruvate kinase", "enolase", "aldolase", "phosphofructokinase"]
    queries = aspect_queries(QUESTION, missing, set())
    assert len(queries) == MAX_ASPECT_QUERIES
    assert [q.split(" TP53")[0] for q in queries] == missing[:MAX_ASPECT_QUERIES]


def test_question_without_entities_gives_the_bare_aspects() -> None:
    assert aspect_queries("which genes take part in glycolysis?", ["gluconeogenesis"], set()) == ["gluconeogenesis"]


def ev(ident: str, score: float, kind: EvidenceKind = "chunk", text: str = "") -> Evidence:
    return Evidence(id=ident, kind=kind, text=text or f"text of {ident}", score=score)


def test_merge_adds_new_evidence_without_duplicates_and_counts_it() -> None:
    merged, added = merge_evidence([ev("a", 0.5), ev("b", 0.4)], [ev("b", 0.1), ev("c", 0.3), ev("c", 0.2)])
    assert [e.id for e in merged] == ["a", "b", "c"]
    assert added == 1


def test_merge_keeps_the_better_score() -> None:
    merged, added = merge_evidence(
        [ev("a", 0.5, text="old"), ev("b", 0.4, text="old")], [ev("a", 0.9, text="new"), ev("b", 0.1, text="new")]
    )
    assert added == 0
    by_id = {e.id: e for e in merged}
    assert (by_id["a"].score, by_id["a"].text) == (0.9, "new")
    assert (by_id["b"].score, by_id["b"].text) == (0.4, "old")


def test_merge_of_nothing_new_changes_nothing() -> None:
    current = [ev("a", 0.5), ev("b", 0.4)]
    merged, added = merge_evidence(current, [])
    assert (merged, added) == (current, 0)
