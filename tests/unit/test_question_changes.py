"""The answer scorecard question by question: each set's right / refused / wrong, and the regression gate on
questions the accepted scorecard answered right (dagster_project/evals/question_changes.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagster_project.evals import question_changes
from dagster_project.evals.question_changes import compare, graded, load_explained, set_metrics


def kind_row(question: str, kind: str, passed: bool, answer: str = "GCK, PKM") -> dict[str, Any]:
    return {"variant": "kinds", "question": question, "answer_kind": kind, "kind_pass": passed, "answer": answer}


def answerability_row(question: str, right: bool, answered: bool, kind: str = "literature") -> dict[str, Any]:
    return {
        "variant": "answerability",
        "set": "plan",
        "question": question,
        "answer_kind": kind,
        "right": right,
        "answered": answered,
        "answer": "…",
    }


def test_each_graded_row_has_its_set_and_outcome() -> None:
    assert graded(kind_row("q", "members", True)) == question_changes.Graded(
        "generated", "members", "right", "GCK, PKM"
    )
    assert graded(kind_row("q", "not_found", False)).outcome == "refused"  # type: ignore[union-attr]
    assert graded(kind_row("q", "counterparts", False)).outcome == "wrong"  # type: ignore[union-attr]
    assert graded(answerability_row("q", right=False, answered=False)).outcome == "refused"  # type: ignore[union-attr]
    assert graded(answerability_row("q", right=False, answered=True)).set == "answerability_plan"  # type: ignore[union-attr]
    relational = {"variant": "members", "question": "q", "answer_kind": "members", "relational_pass": False}
    assert graded(relational | {"confidence": 0.0}).outcome == "refused"  # type: ignore[union-attr]
    assert graded(relational | {"confidence": 0.8}).outcome == "wrong"  # type: ignore[union-attr]
    # Retrieval lookups and PubMedQA rows grade evidence, not the answer.
    assert graded({"variant": "mesh_to_study", "question": "q", "final_hit": True}) is None


def test_set_metrics_count_every_outcome_of_every_set() -> None:
    rows = [
        kind_row("a", "members", True),
        kind_row("b", "members", False),
        kind_row("c", "not_found", False),
        answerability_row("d", right=True, answered=False),
        {"variant": "mesh_to_study", "question": "e"},
    ]
    assert set_metrics(rows) == {
        "set_answerability_plan_right": 1.0,
        "set_answerability_plan_refused": 0.0,
        "set_answerability_plan_wrong": 0.0,
        "set_generated_right": 1.0,
        "set_generated_refused": 1.0,
        "set_generated_wrong": 1.0,
    }


def test_a_right_question_answered_wrong_or_by_another_kind_is_a_change() -> None:
    baseline = [kind_row("a", "members", True), kind_row("b", "members", True), kind_row("c", "members", False)]
    current = [kind_row("a", "members", False), kind_row("b", "pathway_genes", True), kind_row("c", "members", True)]
    found = compare(baseline, current, {})
    assert [(c.question, c.now.outcome, c.now.kind) for c in found.changed] == [
        ("a", "wrong", "members"),
        ("b", "right", "pathway_genes"),
    ]
    assert len(found.unexplained) == 2
    assert (found.reworded, found.no_longer_asked) == (0, 0)


def test_a_reason_in_the_change_explains_it_and_only_that_question() -> None:
    baseline = [kind_row("a", "members", True), kind_row("b", "members", True)]
    current = [kind_row("a", "not_found", False), kind_row("b", "not_found", False)]
    found = compare(baseline, current, {"a": "the demo no longer holds this pathway"})
    assert [c.question for c in found.unexplained] == ["b"]
    assert [c.why for c in found.changed if c.explained] == ["the demo no longer holds this pathway"]
    assert "**unexplained**" in question_changes.markdown(found)


def test_new_words_and_questions_no_longer_asked_are_reported_not_gated() -> None:
    baseline = [kind_row("a", "members", True, "GCK"), kind_row("gone", "members", True)]
    current = [kind_row("a", "members", True, "GCK and PKM"), kind_row("new", "members", False)]
    found = compare(baseline, current, {})
    assert found.changed == [] and found.reworded == 1 and found.no_longer_asked == 1
    assert "other words: 1" in question_changes.markdown(found)


def test_the_same_text_in_two_sets_is_two_questions() -> None:
    baseline = [kind_row("q", "members", True), answerability_row("q", right=True, answered=True)]
    current = [kind_row("q", "members", True), answerability_row("q", right=False, answered=True)]
    assert [c.set for c in compare(baseline, current, {}).changed] == ["answerability_plan"]


def test_the_reviewed_file_of_reasons_parses(tmp_path: Path) -> None:
    assert isinstance(load_explained(), dict)  # the repository's own file
    path = tmp_path / "changes.json"
    path.write_text(json.dumps([{"question": "a", "why": "a kind of its own now"}]))
    assert load_explained(path) == {"a": "a kind of its own now"}
    path.write_text(json.dumps([{"question": "a", "why": "x"}, {"question": "b"}]))
    with pytest.raises(ValueError, match=r"changes.json: each entry needs a question and why \(entries \[1\]\)"):
        load_explained(path)
