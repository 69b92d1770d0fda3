"""Does Flux answer what it can back and refuse what it cannot? The answer scorecard's answerability questions.

Two held-apart sets, written from the demo's files without reading the question parser and never used to change it:
- `answerability_heldout.json`: literature questions answerable from an indexed text (documents and key phrases
  given) or not (fact types Flux holds no data for, disease associations, reactions, absent topics and entities,
  wrong relations, neighbours, true/false statements). An answerable one counts only where the index holds a
  document that answers it.
- `plan_questions_heldout.json`: yes/no checks and connections (answerable from the graph), and questions for fact
  types or entities Flux does not hold.

A question is *answered* when its answer has a confidence above 0 and was not refused (every "Flux does not hold
that", "not found" and scope answer has confidence 0). An answer *answers* when it is right: the verdict and the
pair for a check, the two ends for a connection, a key phrase of the answering text for a literature question.
Metrics (gated): the share of unanswerable questions refused, the share of answerable ones answered, and the count
of confident non-answers (confidence ≥ 0.5, not right). Reported: the same per group and category.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.evals.questions import EvalQuestion
from retrieval.model.answer import FinalAnswer
from retrieval.model.answer_data import CheckData, ConnectionData, SharedGenesData

ANSWERABILITY_FILE = Path(__file__).with_name("answerability_heldout.json")
PLAN_FILE = Path(__file__).with_name("plan_questions_heldout.json")
PLAN_DEV_FILE = Path(__file__).with_name("plan_questions_dev.json")
CONFIDENT = 0.5
ANSWERABLE_GROUPS = {
    "hierarchy_check",
    "category_check",
    "member_check",
    "compound_check",
    "same_check",
    "connection",
    "reaction",
    "condition",
}
REACTION_KINDS = {"pathway_reactions", "reaction_participants", "entity_reactions", "reaction_walk"}
CONDITION_KINDS = {"condition_genes", "gene_conditions", "association_check", "condition_enrichment"}
# A category asked about is, in Reactome, being under its top-level pathway.
CATEGORY_ROOTS = {"signalling": "R-HSA-162582", "metabolic": "R-HSA-1430728", "disease": "R-HSA-1643685"}


def _held_documents(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(text("SELECT external_id FROM documents WHERE status = 'active'")).scalars())


def literature_questions(engine: Engine, path: Path = ANSWERABILITY_FILE) -> list[EvalQuestion]:
    held = _held_documents(engine)
    out = []
    for item in json.loads(path.read_text()):
        if item["answerable"] and not any(d in held for d in item["documents"]):
            continue  # its answer is in a text this index does not hold
        out.append(
            EvalQuestion(
                item["id"],
                item["question"],
                kind="answerability",
                extra={
                    "set": "literature",
                    "group": item["category"],
                    "answerable": str(bool(item["answerable"])).lower(),
                    "key_phrases": "|".join(item["key_phrases"]),
                },
            )
        )
    return out


def plan_questions(path: Path = PLAN_FILE) -> list[EvalQuestion]:
    return [
        EvalQuestion(
            item["id"],
            item["question"],
            kind="answerability",
            extra={
                "set": "plan",
                "group": item["group"],
                "answerable": str(item["group"] in ANSWERABLE_GROUPS).lower(),
                "subject": item["subject"],
                "object": item["object"],
                "verdict": item["verdict"] or "",
                "between": "|".join(item["between"]),
                "missing": item["missing"],
                "about": item.get("about", ""),
            },
        )
        for item in json.loads(path.read_text())
    ]


def questions(engine: Engine) -> list[EvalQuestion]:
    return literature_questions(engine) + plan_questions()


def answered(answer: FinalAnswer) -> bool:
    return answer.confidence > 0 and not answer.refused


def _check_right(answer: FinalAnswer, extra: dict[str, str]) -> bool:
    data = answer.data
    if not isinstance(data, CheckData) or len(data.items) != 1:
        return False
    item = data.items[0]
    subject = item.subject.name if extra["group"] == "member_check" else item.subject.id
    wanted = {extra["object"], CATEGORY_ROOTS.get(extra["object"], extra["object"])}
    verdict_ok = not extra["verdict"] or item.holds == (extra["verdict"] == "yes")
    return (
        subject == extra["subject"]
        and item.object.id in wanted
        and verdict_ok
        and answer.answer.startswith("Yes" if item.holds else "No")
    )


def _connection_right(answer: FinalAnswer, extra: dict[str, str]) -> bool:
    data = answer.data
    between = set(extra["between"].split("|"))
    if isinstance(data, SharedGenesData):  # "What do X and Y share?": their shared genes is a right reading
        return {p.id for p in data.pathways} == between
    return isinstance(data, ConnectionData) and between <= {
        data.left.id,
        data.left.name,
        data.right.id,
        data.right.name,
    }


def _reaction_right(answer: FinalAnswer, extra: dict[str, str]) -> bool:
    """A reaction kind answered about the pathway, gene or compound the question names."""
    data = answer.data
    if answer.kind not in REACTION_KINDS or data is None or not answered(answer):
        return False
    named = [getattr(data, field, None) for field in ("pathway", "entity", "start")]
    return any(n is not None and extra["about"] in (n.id, n.name) for n in named)


def _condition_right(answer: FinalAnswer, extra: dict[str, str]) -> bool:
    """A condition kind answered (from ClinVar's table) about the gene the question names."""
    data = answer.data
    if answer.kind not in CONDITION_KINDS or data is None or not answered(answer):
        return False
    gene = getattr(data, "gene", None)
    return gene is not None and extra["about"] in (gene.id, gene.symbol)


def right(q: EvalQuestion, answer: FinalAnswer) -> bool:
    """Whether the answer answers the question (for an unanswerable one: whether it refused)."""
    extra = q.extra
    if extra["answerable"] != "true":
        return not answered(answer)
    if extra["set"] == "literature":
        phrases = [p.lower() for p in extra["key_phrases"].split("|") if p]
        return answered(answer) and any(p in answer.answer.lower() for p in phrases)
    if extra["group"] == "connection":
        return _connection_right(answer, extra)
    if extra["group"] == "reaction":
        return _reaction_right(answer, extra)
    if extra["group"] == "condition":
        return _condition_right(answer, extra)
    return _check_right(answer, extra)


def row(q: EvalQuestion, answer: FinalAnswer) -> dict[str, Any]:
    is_right = right(q, answer)
    return {
        "question_id": q.id,
        "variant": "answerability",
        "question": q.question,
        "answer_kind": answer.kind,
        "set": q.extra["set"],
        "group": q.extra["group"],
        "answerable": q.extra["answerable"] == "true",
        "answered": answered(answer),
        "right": is_right,
        "confidence": answer.confidence,
        "confident_non_answer": answer.confidence >= CONFIDENT and not is_right,
        "scope": answer.scope or "",
        "latency_ms": answer.timings_ms.get("total", 0.0),
        "answer": answer.answer[:300],
    }


def metrics(rows: list[dict[str, Any]]) -> dict[str, float]:
    if not rows:
        return {}
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    out = {
        "answerability_questions": float(len(rows)),
        "answerability_refused": _share(sum(not r["answered"] for r in unanswerable), len(unanswerable)),
        "answerability_answered": _share(sum(r["answered"] for r in answerable), len(answerable)),
        "answerability_right": _share(sum(r["right"] for r in rows), len(rows)),
        "confident_non_answers": float(sum(r["confident_non_answer"] for r in rows)),
    }
    groups = Counter(r["group"] for r in rows)
    for group in sorted(groups):
        mine = [r for r in rows if r["group"] == group]
        out[f"answerability_right_{group}"] = sum(r["right"] for r in mine) / len(mine)
    return out


def _share(numerator: float, denominator: int) -> float:
    return numerator / denominator if denominator else 1.0
