"""Analysts' question sets: phrasings written without reading the question parser (on the demo dataset's pathways,
genes, compounds, reactions and ClinVar conditions), scored on what the parser reads: the kind, the pathways, genes,
compounds, reactions and conditions, and the count / fact / direction / role / database flags.
`analyst_questions_heldout.json` is held apart (never used to change the parser); `analyst_questions_dev.json` was
held apart once and has since been used to improve it.

The parser was not tuned on these questions: they measure how its rules hold on wording they were not written
from. The generated kind questions in the answer scorecard measure the answers themselves.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrieval.kinds.hierarchy import direction
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import Plan

HELDOUT_FILE = Path(__file__).with_name("analyst_questions_heldout.json")
# Written the same way and read once as held-apart, then used to find what the parser missed: now a dev set.
DEV_FILE = Path(__file__).with_name("analyst_questions_dev.json")
Parser = Callable[[str, GeneLexicon, PathwayLexicon], Plan]
ORDERED = {"difference", "counterpart"}  # which pathway comes first matters


def load_heldout(path: Path = HELDOUT_FILE) -> list[dict[str, Any]]:
    return json.loads(path.read_text())


def labelled(plan: Plan) -> dict[str, Any]:
    """A plan in the sets' label vocabulary, which predates plans: a yes/no membership check of genes is a
    `members` question about those genes; a question asking for a fact type Flux does not hold (`scope`) is, like
    a literature search, one that no typed kind answers — the sets call both `literature`."""
    kind = plan.kind
    if kind == "check" and plan.relation == "member_of" and all(e.type == "gene" for e in plan.subjects):
        kind = "members"
    walk = "downstream" if any(e.type != "pathway" for e in plan.subjects) else "upstream"  # where the start is
    return {
        "kind": "literature" if kind == "scope" else kind,
        "pathways": [e.id for e in plan.pathways],
        "genes": {e.name for e in plan.genes},
        "compounds": {e.id for e in plan.of_type("compound")},
        "reactions": {e.id for e in plan.of_type("reaction")},
        "role": plan.role or "",
        "conditions": {e.id for e in plan.of_type("disease")},
        "count": plan.count,
        "fact": plan.field or "",
        "direction": direction(plan) if kind == "hierarchy" else walk if kind == "reaction_walk" else "both",
        "source": plan.source,
    }


def reads_right(plan: Plan, item: dict[str, Any]) -> tuple[bool, str]:
    """(right, what was wrong) for one question."""
    kind = item["kind"]
    read = labelled(plan)
    if read["kind"] != kind:
        return False, f"kind {plan.kind}"
    if kind in ("not_found", "literature", "reaction_scope"):
        return True, ""
    pathways, wanted = read["pathways"], item["pathways"]
    if (pathways[: len(wanted)] != wanted) if kind in ORDERED else (set(pathways) != set(wanted)):
        return False, f"pathways {pathways}"
    if item["genes"] and read["genes"] != set(item["genes"]):
        return False, f"genes {sorted(read['genes'])}"
    if item["compounds"] and read["compounds"] != set(item["compounds"]):
        return False, f"compounds {sorted(read['compounds'])}"
    if item.get("conditions") and read["conditions"] != set(item["conditions"]):
        return False, f"conditions {sorted(read['conditions'])}"
    if item.get("reactions") and read["reactions"] != set(item["reactions"]):
        return False, f"reactions {sorted(read['reactions'])}"
    if "role" in item and read["role"] != item["role"]:
        return False, f"role {read['role']!r}"
    checks = [
        ("count", read["count"], bool(item["count"])),
        ("fact", read["fact"], item["fact"]),
        ("direction", read["direction"], item["direction"] or read["direction"]),
        ("source", read["source"], item["source"] or read["source"]),
    ]
    for name, got, want in checks:
        if kind in ("counterpart", "members") and name == "source":
            continue  # those use the field for the database asked of, not a filter
        if got != want:
            return False, f"{name} {got!r}"
    return True, ""


def score(
    parse: Parser, items: list[dict[str, Any]], genes: GeneLexicon, pathways: PathwayLexicon
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Accuracy overall and per kind, and one row per question (what was wrong where it was)."""
    rows = []
    for item in items:
        right, why = reads_right(parse(item["question"], genes, pathways), item)
        rows.append({"id": item["id"], "kind": item["kind"], "question": item["question"], "right": right, "why": why})
    per_kind = Counter(r["kind"] for r in rows)
    metrics = {"heldout_accuracy": sum(r["right"] for r in rows) / len(rows), "heldout_questions": float(len(rows))}
    for kind, n in sorted(per_kind.items()):
        metrics[f"heldout_accuracy_{kind}"] = sum(r["right"] for r in rows if r["kind"] == kind) / n
    return metrics, rows
