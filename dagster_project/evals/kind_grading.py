"""Grade an answer to a generated kind question (kind_questions.py) against what the index holds.

A pass needs the right kind and the right content in `data`, checked by that kind's own grader (retrieval/kinds/):
the pathway asked about, the exact gene / pathway set, the number stated in the prose equal to the list in `data`
and to the index, the HGNC value for gene facts, and "not found" for what the index does not hold. What a right
answer holds was read from the index when the question was generated, and travels in the question's `extra`.
"""

from __future__ import annotations

from dagster_project.evals.questions import EvalQuestion
from retrieval.kinds import registry
from retrieval.model.answer import FinalAnswer


def grade(answer: FinalAnswer, q: EvalQuestion) -> bool:
    expected_kind = q.extra["kind"]
    grader = registry.kind(expected_kind).grade
    assert grader is not None, f"{expected_kind} questions have no grader"
    return answer.kind == expected_kind and grader(answer, q.extra)
