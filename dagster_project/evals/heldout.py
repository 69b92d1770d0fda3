"""Analysts' question sets: phrasings written without reading the question parser (on the demo dataset's pathways,
genes and compounds), scored on what the parser reads: the kind, the pathways, genes and compounds, and the count /
fact / direction / database flags. `analyst_questions_heldout.json` is held apart (never used to change the
parser); `analyst_questions_dev.json` was held apart once and has since been used to improve it.

The parser was not tuned on these questions: they measure how its rules hold on wording they were not written
from. The generated kind questions in the answer scorecard measure the answers themselves.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.question.intent import Intent

HELDOUT_FILE = Path(__file__).with_name("analyst_questions_heldout.json")
# Written the same way and read once as held-apart, then used to find what the parser missed: now a dev set.
DEV_FILE = Path(__file__).with_name("analyst_questions_dev.json")
Parser = Callable[[str, GeneLexicon, PathwayLexicon], Intent]
ORDERED = {"difference", "counterpart"}  # which pathway comes first matters


def load_heldout(path: Path = HELDOUT_FILE) -> list[dict[str, Any]]:
    return json.loads(path.read_text())


def reads_right(intent: Intent, item: dict[str, Any]) -> tuple[bool, str]:
    """(right, what was wrong) for one question."""
    kind = item["kind"]
    if intent.kind != kind:
        return False, f"kind {intent.kind}"
    if kind in ("not_found", "literature"):
        return True, ""
    pathways = [p.id for p in intent.pathways]
    wanted = item["pathways"]
    if (pathways[:len(wanted)] != wanted) if kind in ORDERED else (set(pathways) != set(wanted)):
        return False, f"pathways {pathways}"
    if item["genes"] and {g.symbol for g in intent.genes} != set(item["genes"]):
        return False, f"genes {[g.symbol for g in intent.genes]}"
    if item["compounds"] and set(intent.compound_ids) != set(item["compounds"]):
        return False, f"compounds {list(intent.compound_ids)}"
    checks = [("count", intent.count, bool(item["count"])), ("fact", intent.fact, item["fact"]),
              ("direction", intent.direction, item["direction"] or intent.direction),
              ("source", intent.target_source, item["source"] or intent.target_source)]
    for name, got, want in checks:
        if kind in ("counterpart", "members") and name == "source":
            continue  # those use the field for the database asked of, not a filter
        if got != want:
            return False, f"{name} {got!r}"
    return True, ""


def score(parse: Parser, items: list[dict[str, Any]], genes: GeneLexicon, pathways: PathwayLexicon
          ) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Accuracy overall and per kind, and one row per question (what was wrong where it was)."""
    rows = []
    for item in items:
        right, why = reads_right(parse(item["question"], genes, pathways), item)
        rows.append({"id": item["id"], "kind": item["kind"], "question": item["question"], "right": right,
                     "why": why})
    per_kind = Counter(r["kind"] for r in rows)
    metrics = {"heldout_accuracy": sum(r["right"] for r in rows) / len(rows), "heldout_questions": float(len(rows))}
    for kind, n in sorted(per_kind.items()):
        metrics[f"heldout_accuracy_{kind}"] = sum(r["right"] for r in rows if r["kind"] == kind) / n
    return metrics, rows
