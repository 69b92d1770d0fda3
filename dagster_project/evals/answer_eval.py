"""Answer scorecard: each question through `Pipeline.ask` (thinking mode, caches off), exactly as serving answers;
the pipeline's events give the generator's raw reply, and a wrapped provider the judge loop's first pass. The
generated kind questions are graded in bulk, by batched plans (kind_eval.py), with the figures of asking each.

Gated (they can fail): raw citation precision, the share of raw claims validation keeps, the share of raw claims
their cited evidence supports, and the relational pass rate (an expected id named in the claims; a gene list
matching the graph). Reported: what the user finally sees (post-validation citation validity, 1.0 by design),
the verdict mix, first-pass vs final evidence hits (what re-retrieval rescued), latency, and with an LLM
PubMedQA yes/no/maybe accuracy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dagster_project.core.settings import FluxSettings
from dagster_project.evals import abstention_eval, kind_eval, question_changes
from dagster_project.evals.answer_checks import (
    GENE_LIST_MIN,
    RawCheck,
    RecordingProvider,
    check_raw,
    claims_name_expected,
    evidence_has,
    gene_list_scores,
    genes_named,
    graph_genes,
)
from dagster_project.evals.grounding import Embed, GroundingRule
from dagster_project.evals.questions import EvalQuestion
from retrieval.caching.cache import Cache
from retrieval.model.genes import load_lexicon
from retrieval.model.index_state import IndexState
from retrieval.model.types import Evidence, Mode
from retrieval.pipeline import Pipeline

Progress = Callable[[int, int], None]
_DECISION = re.compile(r"\b(yes|no|maybe)\b", re.IGNORECASE)
# The verdict of the question a denied statement negates: its polarity was lost ("True"/"False" answer it).
_UNNEGATED_VERDICT = re.compile(r"(?:Yes|No)\b")


def eval_pipeline(settings: FluxSettings, index: IndexState) -> Pipeline:
    """Serving's pipeline, pinned to an index version and with every cache off (an eval must not read answers)."""
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    pipeline = Pipeline.from_settings(settings, cache=off)
    pipeline.retriever.pin(index)
    return pipeline


@dataclass(frozen=True)
class Grounding:
    rule: GroundingRule
    embed: Embed


def evaluate(
    pipeline: Pipeline,
    questions: list[EvalQuestion],
    grounding: Grounding,
    progress: Progress | None = None,
    mode: Mode = "thinking",
) -> tuple[dict[str, float], list[dict]]:
    """Every question answered in `mode` (the scorecard: thinking, as served by default): the generated kind
    questions in bulk (kind_eval.py), every other one through `Pipeline.ask`, as serving answers it."""
    generated = [q for q in questions if q.kind == "kinds"]
    asked = [q for q in questions if q.kind != "kinds"]
    recorder = RecordingProvider(pipeline.provider)
    pipeline.provider = recorder
    try:
        rows = kind_eval.evaluate(pipeline, generated, mode, progress)
        for n, q in enumerate(asked, start=1):
            rows.append(_answer_row(pipeline, recorder, q, grounding, mode))
            if progress and (n % 10 == 0 or n == len(asked)):
                progress(n, len(asked))
    finally:
        pipeline.provider = recorder.inner
    return metrics(rows), rows


def _answer_row(
    pipeline: Pipeline, recorder: RecordingProvider, q: EvalQuestion, grounding: Grounding, mode: Mode = "thinking"
) -> dict:
    recorder.reset()
    seen: dict[str, Any] = {}

    def capture(name: str, payload: dict[str, Any]) -> None:
        if name == "evidence":
            seen["evidence"] = [Evidence.model_validate(e) for e in payload["evidence"]]
        elif name == "generated":
            seen["raw"] = payload["raw"]

    answer = pipeline.ask(q.question, mode, on_event=capture)
    if q.kind == "answerability":
        return abstention_eval.row(q, answer)
    given, raw = seen.get("evidence", []), seen.get("raw")
    first = recorder.judged[0] if recorder.judged else given
    by_id = {e.id: e for e in given}
    target = {"expected": q.expected, "document": q.relevant_doc if not q.expected else ""}
    row = {
        "question_id": q.id,
        "variant": q.kind,
        "question": q.question,
        "answer_kind": answer.kind,
        **{f"raw_{k}": v for k, v in asdict(check_raw(raw, given, grounding.rule, grounding.embed)).items()},
        "citations": len(answer.citations),
        "valid_citations": sum(c.id in by_id for c in answer.citations),
        "claims": len(answer.claims),
        "verdict": answer.retrieval_quality,
        "attempts": answer.attempts,
        "confidence": answer.confidence,
        "latency_ms": answer.timings_ms.get("total", 0.0),
        "fallback": answer.confidence == 0,
        "answer": answer.answer[:500],
        "first_pass_hit": evidence_has(first, **target) if (q.expected or q.relevant_doc) else None,
        "final_hit": evidence_has(given, **target) if (q.expected or q.relevant_doc) else None,
        "expected_in_claims": claims_name_expected(answer, q.expected) if q.expected else None,
    }
    if q.gene_list_of:
        expected = graph_genes(pipeline.retriever.driver, q.gene_list_of)
        lexicon = load_lexicon(pipeline.retriever.engine, pipeline.retriever.index().version)
        row["gene_recall"], row["gene_precision"] = gene_list_scores(genes_named(answer, lexicon), expected)
        row["expected_genes"] = len(expected)
    if q.expected:
        genes_ok = not q.gene_list_of or min(row["gene_recall"], row["gene_precision"]) >= GENE_LIST_MIN
        row["relational_pass"] = bool(row["expected_in_claims"]) and genes_ok
    if q.decision and recorder.inner.name != "offline-extractive":
        found = _DECISION.search(answer.answer)
        row["decision"], row["predicted"] = q.decision, found.group(1).lower() if found else ""
    return row


def _share(numerator: float, denominator: float) -> float:
    # Vacuously perfect when there was nothing to score; the counts beside it say so.
    return numerator / denominator if denominator else 1.0


def _raw_metrics(rows: list[dict]) -> dict[str, float]:
    total = {k: sum(r.get(f"raw_{k}", 0) for r in rows) for k in RawCheck.__dataclass_fields__ if k != "parsed"}
    return {
        "raw_parse_rate": _share(sum(1 for r in rows if r.get("raw_parsed")), len(rows)),
        "raw_citation_precision": _share(total["valid_citations"], total["citations"]),
        "claims_kept_rate": _share(total["claims_kept"], total["claims"]),
        "claims_dropped_rate": 1.0 - _share(total["claims_kept"], total["claims"]),
        "grounded_claim_rate": _share(total["claims_grounded"], total["claims"]),
        "raw_claims": float(total["claims"]),
    }


def _relational_metrics(rows: list[dict]) -> dict[str, float]:
    relational = [r for r in rows if "relational_pass" in r]
    gene_lists = [r for r in rows if "gene_recall" in r]
    out = {
        "relational_questions": float(len(relational)),
        "relational_pass_rate": _share(sum(r["relational_pass"] for r in relational), len(relational)),
        "expected_in_claims_rate": _share(sum(bool(r["expected_in_claims"]) for r in relational), len(relational)),
    }
    out |= _per_kind(relational, "variant", "relational_pass", "")
    if gene_lists:
        out |= {
            "gene_list_questions": float(len(gene_lists)),
            "gene_list_recall": float(np.mean([r["gene_recall"] for r in gene_lists])),
            "gene_list_precision": float(np.mean([r["gene_precision"] for r in gene_lists])),
        }
    return out


def _per_kind(rows: list[dict], kind_key: str, pass_key: str, prefix: str) -> dict[str, float]:
    """Pass rate, question count and latency p50 / p95 for each kind of question."""
    out = {}
    for kind in sorted({r[kind_key] for r in rows}):
        mine = [r for r in rows if r[kind_key] == kind]
        latencies = [r["latency_ms"] for r in mine]
        out |= {
            f"{prefix}pass_rate_{kind}": sum(r[pass_key] for r in mine) / len(mine),
            f"{prefix}questions_{kind}": float(len(mine)),
            f"{prefix}latency_p50_ms_{kind}": float(np.percentile(latencies, 50)),
            f"{prefix}latency_p95_ms_{kind}": float(np.percentile(latencies, 95)),
        }
    return out


def _judge_loop_metrics(rows: list[dict]) -> dict[str, float]:
    targeted = [r for r in rows if r["first_pass_hit"] is not None]
    misses = [r for r in targeted if not r["first_pass_hit"]]
    rescued = sum(1 for r in misses if r["final_hit"])
    return {
        "first_pass_hit_rate": _share(sum(r["first_pass_hit"] for r in targeted), len(targeted)),
        "final_hit_rate": _share(sum(r["final_hit"] for r in targeted), len(targeted)),
        "first_pass_misses": float(len(misses)),
        "reretrieval_rescues": float(rescued),
        "mean_reretrievals": float(np.mean([r["attempts"] for r in rows])) if rows else 0.0,
    }


def _kind_metrics(rows: list[dict]) -> dict[str, float]:
    """Per kind: pass rate and latency; and how well "not found" separates what the index lacks."""
    if not rows:
        return {}
    out = {"kinds_questions": float(len(rows)), "kinds_pass_rate": sum(r["kind_pass"] for r in rows) / len(rows)}
    out |= _per_kind(rows, "expected_kind", "kind_pass", "kinds_")
    said_absent = [r for r in rows if r["answer_kind"] == "not_found"]
    absent = [r for r in rows if r["absent"]]
    out["not_found_precision"] = _share(sum(r["absent"] for r in said_absent), len(said_absent))
    out["not_found_recall"] = _share(sum(r["answer_kind"] == "not_found" for r in absent), len(absent))
    out |= confusion_metrics(rows)
    denied = [r for r in rows if r["phrasing"].endswith("_denied")]
    if denied:  # statements that deny their relation, answered "Yes"/"No" as if they asserted it
        out["denied_statements"] = float(len(denied))
        out["wrong_polarity"] = float(sum(bool(_UNNEGATED_VERDICT.match(r["answer"])) for r in denied))
    return out


def confusion(rows: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """(the kind a generated question was written for, the kind that answered it) for every question answered by
    another kind."""
    return Counter((r["expected_kind"], r["answer_kind"]) for r in rows if r["answer_kind"] != r["expected_kind"])


def confusion_metrics(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The confusion matrix's off-diagonal mass, and the questions another typed kind took and answered wrongly
    (a kind stealing its neighbour's phrasings; one read as a literature search is a miss, not a theft)."""
    off = confusion(rows)
    taken = [
        r
        for r in rows
        if not r["kind_pass"] and r["answer_kind"] not in (r["expected_kind"], kind_eval.TEXT_ANSWER_KIND)
    ]
    worst = max((n for (_, answered), n in off.items() if answered != kind_eval.TEXT_ANSWER_KIND), default=0)
    return {
        "kinds_confusion_off_diagonal": sum(off.values()) / len(rows),
        "kinds_taken_by_another": float(len(taken)),
        "kinds_taken_most_by_one_pair": float(worst),
    }


def metrics(rows: list[dict]) -> dict[str, float]:
    """The scorecard's metrics, and each graded set's right / refused / wrong counts (question_changes.py)."""
    kind_rows = [r for r in rows if r["variant"] == "kinds"]
    abstention_rows = [r for r in rows if r["variant"] == "answerability"]
    others = [r for r in rows if r["variant"] not in ("kinds", "answerability")]
    return (
        _answer_metrics(others)
        | _kind_metrics(kind_rows)
        | abstention_eval.metrics(abstention_rows)
        | question_changes.set_metrics(rows)
    )


def _answer_metrics(rows: list[dict]) -> dict[str, float]:
    verdicts = Counter(r["verdict"] for r in rows)
    latencies = [r["latency_ms"] for r in rows] or [0.0]
    out = {
        "questions": float(len(rows)),
        **_raw_metrics(rows),
        **_relational_metrics(rows),
        **_judge_loop_metrics(rows),
        # After validation: 1.0 unless validation itself is broken (a reported invariant, not a quality gate).
        "citation_validity": _share(sum(r["valid_citations"] for r in rows), sum(r["citations"] for r in rows)),
        "fallback_rate": _share(sum(1 for r in rows if r["fallback"]), len(rows)) if rows else 0.0,
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
