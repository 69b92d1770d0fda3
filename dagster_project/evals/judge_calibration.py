"""Judge calibration: does the judge tell the right evidence from a convincing wrong one?

For each study question, two labelled (question, evidence) pairs: the study's own abstract (right), and the
abstract of the document the served retrieval ranks highest among the *other* documents (a hard negative: on
topic, but not the study asked about). Titles are left out of both, so neither side can win by repeating the
question. The judge should say "good" to the first and anything else to the second; accuracy is reported on
each half, since a judge that always says "good" scores 1.0 on one and 0.0 on the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import text

from dagster_project.evals.questions import EvalQuestion
from retrieval.model.types import Evidence
from retrieval.pipeline import Pipeline

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CalibrationPair:
    question_id: str
    question: str
    document: str  # `{source}_{external_id}` of the evidence
    right: bool


def _hard_negative(pipeline: Pipeline, q: EvalQuestion) -> str | None:
    evidence = pipeline.search(q.question).evidence
    return next(
        (e.id.rsplit("_", 1)[0] for e in evidence if e.kind == "chunk" and e.id.rsplit("_", 1)[0] != q.relevant_doc),
        None,
    )


def calibration_pairs(pipeline: Pipeline, questions: list[EvalQuestion]) -> list[CalibrationPair]:
    pairs = []
    for q in questions:
        negative = _hard_negative(pipeline, q)
        if negative is None:
            continue
        pairs += [
            CalibrationPair(q.id, q.question, q.relevant_doc, True),
            CalibrationPair(q.id, q.question, negative, False),
        ]
    return pairs


def _abstracts(pipeline: Pipeline, keys: set[str]) -> dict[str, str]:
    with pipeline.retriever.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT source || '_' || external_id AS key, content FROM documents"
                " WHERE source || '_' || external_id = ANY(:keys)"
            ),
            {"keys": sorted(keys)},
        ).all()
    return {r.key: r.content for r in rows}


def evaluate(
    pipeline: Pipeline, questions: list[EvalQuestion], progress: Progress | None = None
) -> tuple[dict[str, float], list[dict]]:
    pairs = calibration_pairs(pipeline, [q for q in questions if q.relevant_doc])
    abstracts = _abstracts(pipeline, {p.document for p in pairs})
    rows = []
    for n, pair in enumerate(pairs, start=1):
        body = abstracts.get(pair.document, "")
        result = pipeline.provider.judge(pair.question, [Evidence(id=f"{pair.document}_0", kind="chunk", text=body)])
        rows.append(
            {
                "question_id": pair.question_id,
                "variant": "right" if pair.right else "hard_negative",
                "document": pair.document,
                "verdict": result.verdict,
                "confidence": result.confidence,
                "correct": (result.verdict == "good") == pair.right,
            }
        )
        if progress and (n % 20 == 0 or n == len(pairs)):
            progress(n, len(pairs))
    return metrics(rows), rows


def metrics(rows: list[dict]) -> dict[str, float]:
    right = [r for r in rows if r["variant"] == "right"]
    wrong = [r for r in rows if r["variant"] == "hard_negative"]
    if not right or not wrong:
        return {}
    return {
        "judge_pairs": float(len(rows)),
        "judge_accuracy_right": sum(r["correct"] for r in right) / len(right),
        "judge_accuracy_wrong": sum(r["correct"] for r in wrong) / len(wrong),
    }
