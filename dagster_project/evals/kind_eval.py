"""The generated kind questions (kind_questions.py) graded in bulk, by batched plans.

Every question is read first, as `Pipeline.ask` reads it (`Pipeline.read`). A typed plan is then answered through
the pipeline with that reading (`Pipeline.ask(reading=…)`: the refusal screen, the kind's facts, the literature a
scope plan may try first, validation), and graded by its kind (kind_grading.py). A plan that is not typed is graded on
the plan alone: the pipeline answers it from text evidence, and such an answer is always of kind `literature` (or a
refusal, also of that kind), which no generated question expects, so it fails whatever the texts say and is never
"not found". Running that search would cost a retrieval, a judge loop and a grounding check per question and change no
figure; under a reader that misreads most questions it was nearly all of the set's cost.

`evaluate_one_at_a_time` asks every question through `Pipeline.ask`, as serving does: the reference the bulk figures
are compared with (tests/integration/test_question_kinds.py, benchmarks/kind_scorecard.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from dagster_project.evals.kind_grading import grade
from dagster_project.evals.questions import EvalQuestion
from retrieval.kinds import literature, registry
from retrieval.model.answer import FinalAnswer
from retrieval.model.types import Mode
from retrieval.pipeline import Pipeline, Reading

Progress = Callable[[int, int], None]
# What the pipeline names an answer from text evidence (answerer.py), and a refusal (model/answer.py).
TEXT_ANSWER_KIND = literature.KIND.name


def evaluate(
    pipeline: Pipeline, questions: list[EvalQuestion], mode: Mode = "thinking", progress: Progress | None = None
) -> list[dict[str, Any]]:
    """A row per question, in the order given: typed plans answered, the others graded on their plan."""
    readings = []
    for q in questions:
        started = time.perf_counter()
        readings.append((pipeline.read(q.question), (time.perf_counter() - started) * 1000))
    rows = []
    for n, (q, (reading, read_ms)) in enumerate(zip(questions, readings, strict=True), start=1):
        if answered_from_text(q, reading):
            rows.append(planned_row(q, reading, read_ms))
        else:
            rows.append(row(q, pipeline.ask(q.question, mode, reading=reading), extra_ms=read_ms))
        if progress and (n % 50 == 0 or n == len(questions)):
            progress(n, len(questions))
    return rows


def evaluate_one_at_a_time(
    pipeline: Pipeline, questions: list[EvalQuestion], mode: Mode = "thinking"
) -> list[dict[str, Any]]:
    """Every question through `Pipeline.ask`, read and answered as serving does (the reference for `evaluate`)."""
    return [row(q, pipeline.ask(q.question, mode)) for q in questions]


def answered_from_text(q: EvalQuestion, reading: Reading) -> bool:
    """Whether the pipeline answers this reading from text evidence, an answer no generated question expects."""
    plan, _ = reading
    return not registry.is_typed(plan.kind) and q.extra["kind"] != TEXT_ANSWER_KIND


def row(q: EvalQuestion, answer: FinalAnswer, extra_ms: float = 0.0) -> dict[str, Any]:
    """A generated kind question graded on its typed answer (composed from the index, so the generator checks of
    the answer scorecard do not apply to it)."""
    return {
        **_row(q),
        "answer_kind": answer.kind,
        "kind_pass": grade(answer, q),
        "latency_ms": answer.timings_ms.get("total", 0.0) + extra_ms,
        "answer": answer.answer[:500],
        "graded_on": "answer",
    }


def planned_row(q: EvalQuestion, reading: Reading, read_ms: float) -> dict[str, Any]:
    """A question read as a literature search: a fail, graded on its plan (its latency is the reading's)."""
    plan, _ = reading
    return {
        **_row(q),
        "answer_kind": TEXT_ANSWER_KIND,
        "kind_pass": False,
        "latency_ms": read_ms,
        "answer": f"(read as a {plan.kind} question: {plan.reason})"[:500],
        "graded_on": "plan",
    }


def _row(q: EvalQuestion) -> dict[str, Any]:
    return {
        "question_id": q.id,
        "variant": "kinds",
        "question": q.question,
        "expected_kind": q.extra["kind"],
        "phrasing": q.extra["phrasing"],
        "style": q.extra["style"],
        "absent": q.extra.get("absent") == "true",
    }
