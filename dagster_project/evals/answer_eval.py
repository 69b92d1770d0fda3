"""Answer scorecard: each question through `Pipeline.ask` (thinking mode, caches off), exactly as serving answers.

Per question: the share of citations that resolve to evidence the generator was given (must be 100%), the share
of claims that cite something, whether the cited evidence contains an expected id (relational questions),
the judge verdict, re-retrievals and latency; with an LLM provider also PubMedQA yes/no/maybe accuracy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import numpy as np

from dagster_project.evals.questions import EvalQuestion
from retrieval.pipeline import Pipeline
from retrieval.types import Evidence

Progress = Callable[[int, int], None]
_DECISION = re.compile(r"\b(yes|no|maybe)\b", re.IGNORECASE)


def _contains_expected(cited: list[Evidence], expected: tuple[str, ...]) -> bool:
    haystack = " ".join(f"{e.id} {e.text}" for e in cited)
    return any(re.search(rf"(?<![\w-]){re.escape(x)}(?![\w-])", haystack) for x in expected)


def evaluate(pipeline: Pipeline, questions: list[EvalQuestion], progress: Progress | None = None
             ) -> tuple[dict[str, float], list[dict]]:
    rows = []
    for n, q in enumerate(questions, start=1):
        given: list[Evidence] = []

        def capture(name: str, payload: dict, sink: list[Evidence] = given) -> None:
            if name == "evidence":
                sink.extend(Evidence.model_validate(e) for e in payload["evidence"])

        answer = pipeline.ask(q.question, "thinking", on_event=capture)
        by_id = {e.id: e for e in given}
        cited = [by_id[c.id] for c in answer.citations if c.id in by_id]
        row = {
            "question_id": q.id, "variant": q.kind, "question": q.question,
            "citations": len(answer.citations), "valid_citations": len(cited),
            "claims": len(answer.claims), "claims_with_citation": sum(1 for c in answer.claims if c.citations),
            "verdict": answer.retrieval_quality, "attempts": answer.attempts, "confidence": answer.confidence,
            "latency_ms": answer.timings_ms.get("total", 0.0), "fallback": answer.confidence == 0,
            "expected": list(q.expected), "expected_hit": _contains_expected(cited, q.expected) if q.expected else None,
        }
        if q.decision and pipeline.provider.name != "offline-extractive":
            found = _DECISION.search(answer.answer)
            row["decision"], row["predicted"] = q.decision, found.group(1).lower() if found else ""
        rows.append(row)
        if progress and (n % 10 == 0 or n == len(questions)):
            progress(n, len(questions))
    return metrics(rows), rows


def metrics(rows: list[dict]) -> dict[str, float]:
    citations = sum(r["citations"] for r in rows)
    claims = sum(r["claims"] for r in rows)
    expected = [r for r in rows if r["expected_hit"] is not None]
    verdicts = Counter(r["verdict"] for r in rows)
    latencies = [r["latency_ms"] for r in rows] or [0.0]
    out = {
        "questions": float(len(rows)),
        # Vacuously perfect when nothing was cited; fallbacks are counted separately.
        "citation_validity": sum(r["valid_citations"] for r in rows) / citations if citations else 1.0,
        "claims_with_citation": sum(r["claims_with_citation"] for r in rows) / claims if claims else 1.0,
        "expected_id_hit_rate": sum(1 for r in expected if r["expected_hit"]) / len(expected) if expected else 0.0,
        "relational_questions": float(len(expected)),
        "fallback_rate": sum(1 for r in rows if r["fallback"]) / max(len(rows), 1),
        "mean_reretrievals": float(np.mean([r["attempts"] for r in rows])) if rows else 0.0,
        "mean_confidence": float(np.mean([r["confidence"] for r in rows])) if rows else 0.0,
        "latency_p50_ms": float(np.percentile(latencies, 50)),
        "latency_p95_ms": float(np.percentile(latencies, 95)),
    }
    for verdict in ("good", "partial", "bad", "unjudged"):
        out[f"verdict_{verdict}"] = verdicts.get(verdict, 0) / max(len(rows), 1)
    decided = [r for r in rows if "predicted" in r]
    if decided:
        out["pubmedqa_accuracy"] = sum(1 for r in decided if r["predicted"] == r["decision"]) / len(decided)
    return out
