"""The cross-kind confusion of the generated questions, pure logic: a question another typed kind took and answered
wrongly counts as taken (one read as a literature search is a miss, a right answer by a sibling kind is neither);
the gate fails when that count grows."""

from __future__ import annotations

from dagster_project.evals.answer_eval import confusion, confusion_metrics
from dagster_project.evals.gate import compare
from dagster_project.evals.kind_eval import TEXT_ANSWER_KIND


def _row(expected: str, answered: str, passed: bool) -> dict:
    return {"expected_kind": expected, "answer_kind": answered, "kind_pass": passed}


ROWS = [
    _row("members", "members", True),
    _row("gene_pathways", "gene_pathways", True),
    _row("association_check", "association_absent", True),  # a sibling's answer that grades right
    _row("hierarchy", TEXT_ANSWER_KIND, False),  # a miss
    _row("gene_pathways", "members", False),  # taken
]


def test_taken_counts_only_wrong_answers_by_another_typed_kind() -> None:
    metrics = confusion_metrics(ROWS)
    assert metrics["kinds_taken_by_another"] == 1
    assert metrics["kinds_confusion_off_diagonal"] == 3 / 5
    assert confusion(ROWS)[("gene_pathways", "members")] == 1 and ("members", "members") not in confusion(ROWS)


def test_the_gate_fails_when_a_kind_takes_more_of_another_s_questions() -> None:
    before = confusion_metrics(ROWS)
    after = confusion_metrics([*ROWS, _row("counts", "members", False)])
    failed = {c.metric for c in compare("answer", after, before, tolerance=0.02) if c.failed}
    assert "kinds_taken_by_another" in failed
    assert not [c for c in compare("answer", before, before, tolerance=0.02) if c.failed]
