"""The question sets Flux can and cannot answer, graded alike for any version of the code: how often it answers what
it can back and refuses what it cannot, and how many confident answers do not answer.

    .venv/bin/python benchmarks/question_sets.py [--sets plan_questions_heldout answerability_heldout …]
    PYTHONPATH=<an older checkout> .venv/bin/python benchmarks/question_sets.py   # the same grading, older code

Needs the published demo index (`make run`): the answerability sets ask about the demo's texts. Every question goes
through `Pipeline.ask` (thinking mode, caches off). The grading reads only fields every version of the answer has:
answered = confidence above 0, not refused and not a "not found" answer; right = the verdict first and the pair named
for a yes/no check, both ends named for a connection, a key phrase of the answering text for a literature question,
refused for an unanswerable one; a confident non-answer has confidence ≥ 0.5 and is not right. Prints, per set, the
share right, unanswerable refused, answerable answered, confident non-answers, p50 / p95 latency, and right per group.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

from dagster_project.core.settings import get_settings
from retrieval.caching.cache import Cache
from retrieval.pipeline import Pipeline

SETS = Path(__file__).resolve().parents[1] / "dagster_project" / "evals"
DEFAULT = ("plan_questions_dev", "plan_questions_heldout", "answerability_dev", "answerability_heldout")
ROOTS = {"signalling": "R-HSA-162582", "metabolic": "R-HSA-1430728", "disease": "R-HSA-1643685"}
UNANSWERABLE_GROUPS = ("scope", "not_held_entity")


def answered(answer: Any) -> bool:
    return answer.confidence > 0 and not answer.refused and answer.kind != "not_found"


def _check_right(item: dict[str, Any], answer: Any) -> bool:
    if not answer.answer.startswith(("Yes", "No")):
        return False
    if item["verdict"] is None:
        return True
    cited = {c.id for c in answer.citations}
    target = ROOTS.get(item["object"], item["object"])
    about = (item["subject"] in cited or item["subject"] in answer.answer) and (
        target in cited or item["object"] in answer.answer or target in answer.answer
    )
    return about and answer.answer.startswith("Yes") == (item["verdict"] == "yes")


def right(item: dict[str, Any], answer: Any) -> bool:
    if "answerable" in item:  # a literature set
        if not item["answerable"]:
            return not answered(answer)
        return answered(answer) and any(k.lower() in answer.answer.lower() for k in item["key_phrases"])
    if item["group"] in UNANSWERABLE_GROUPS:
        return not answered(answer)
    if item["group"] == "connection":
        cited = {c.id for c in answer.citations}
        return answered(answer) and all(x in cited or x in answer.answer for x in item["between"])
    return _check_right(item, answer)


def run_set(pipeline: Pipeline, name: str, held: set[str]) -> dict[str, Any]:
    items = json.loads((SETS / f"{name}.json").read_text())
    if name.startswith("answerability"):  # an answerable question counts where the index holds its text
        items = [i for i in items if not i["answerable"] or any(d in held for d in i["documents"])]
    rows = []
    for item in items:
        started = time.perf_counter()
        answer = pipeline.ask(item["question"], "thinking")
        is_right = right(item, answer)
        answerable = item.get("answerable", item.get("group") not in UNANSWERABLE_GROUPS)
        rows.append(
            {
                "group": item.get("category") or item.get("group"),
                "answerable": answerable,
                "answered": answered(answer),
                "right": is_right,
                "confident_non_answer": answer.confidence >= 0.5 and not is_right,
                "ms": (time.perf_counter() - started) * 1000,
            }
        )
    return summary(rows)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["group"]].append(row)
    latency = np.percentile([r["ms"] for r in rows], [50, 95])
    return {
        "questions": len(rows),
        "right": float(np.mean([r["right"] for r in rows])),
        "refused_unanswerable": float(np.mean([not r["answered"] for r in unanswerable])) if unanswerable else None,
        "answered_answerable": float(np.mean([r["answered"] for r in answerable])) if answerable else None,
        "confident_non_answers": sum(r["confident_non_answer"] for r in rows),
        "p50_ms": round(float(latency[0]), 1),
        "p95_ms": round(float(latency[1]), 1),
        "groups": {g: f"{sum(r['right'] for r in v)}/{len(v)}" for g, v in sorted(groups.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(DEFAULT))
    args = parser.parse_args()
    settings = get_settings()
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    pipeline = Pipeline.from_settings(settings, cache=off)
    with pipeline.retriever.engine.connect() as conn:
        held = set(conn.execute(text("SELECT external_id FROM documents WHERE status = 'active'")).scalars())
    for name in args.sets:
        print(name, json.dumps(run_set(pipeline, name, held)))


if __name__ == "__main__":
    main()
