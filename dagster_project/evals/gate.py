"""The regression gate: each gated metric of a new scorecard against the last accepted one.

Quality metrics are higher-is-better and fail when they drop by more than the tolerance (absolute, in the
metric's own unit: 0.02 = two points of hit@5). A count of failures (confident non-answers) fails when it grows at
all. Latencies are reported, never gated: on shared CI machines they are noise, and BENCHMARKS.md is where speed is
measured. A gated retrieval task's verbatim rate must be 0: above
that its queries are copied from the index and its hit rates measure string matching.
"""

from __future__ import annotations

from dataclasses import dataclass

# Retrieval tasks whose queries are not copied from the index; each must keep a verbatim rate of 0.
GATED_RETRIEVAL_TASKS = ("conclusion_to_study", "mesh_to_study", "keywords_to_paper")
_RETRIEVAL_METRICS = (
    "hybrid_rerank_hit_at_1",
    "hybrid_rerank_hit_at_5",
    "hybrid_rerank_mrr_at_10",
    "dense_hit_at_5",
    "bm25_hit_at_5",
)
MUST_BE_ZERO = {f"{task}_verbatim_rate" for task in GATED_RETRIEVAL_TASKS}
# Counts that are failures (answers that do not answer, a strategy reused for another question, a denied statement
# answered as if asserted): lower is better.
MUST_NOT_GROW = {"confident_non_answers", "memory_false_reuse", "wrong_polarity", "kinds_taken_by_another"}
GATED: dict[str, tuple[str, ...]] = {
    "retrieval": tuple(
        f"{task}_{metric}" for task in GATED_RETRIEVAL_TASKS for metric in (*_RETRIEVAL_METRICS, "verbatim_rate")
    ),
    # The generator's raw reply (before validation), relational answers and the judge on labelled evidence.
    "answer": (
        "raw_citation_precision",
        "claims_kept_rate",
        "grounded_claim_rate",
        "relational_pass_rate",
        "judge_accuracy_right",
        "judge_accuracy_wrong",
        "kinds_pass_rate",
        "not_found_precision",
        "not_found_recall",
        "answerability_refused",
        "answerability_answered",
        "confident_non_answers",
        "wrong_polarity",  # statements that deny a relation answered as if they asserted it
        "kinds_taken_by_another",  # generated questions another typed kind took and answered wrongly
    ),
    # Cross-validated on the expert dev half (absent without a curation file; one that vanishes fails).
    "resolution": (
        "cv_equivalence_recall",
        "cv_equivalence_precision_strict",
        "cv_equivalence_precision_lenient",
        "cv_part_of_recall",
        "cv_part_of_direction_accuracy",
    ),
    # The translation check and checked searches on the failure-mode set; strategy memory on its probes.
    "literature_tools": ("check_precision", "check_recall", "search_right", "memory_hit_rate", "memory_false_reuse"),
}


@dataclass(frozen=True)
class Comparison:
    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    failed: bool


def compare(
    scorecard: str, current: dict[str, float], baseline: dict[str, float] | None, tolerance: float
) -> list[Comparison]:
    """Gated metrics present now or in the baseline (a task this corpus does not have is skipped)."""
    out = []
    for metric in GATED[scorecard]:
        now, then = current.get(metric), (baseline or {}).get(metric)
        if now is None and then is None:
            continue
        if metric in MUST_BE_ZERO:
            out.append(Comparison(metric, then, now, None, now is None or now > 0))
            continue
        if now is None or then is None:
            # A metric missing now but present in the baseline is a regression (it vanished).
            out.append(Comparison(metric, then, now, None, now is None and then is not None))
            continue
        delta = now - then
        out.append(Comparison(metric, then, now, delta, delta > 0 if metric in MUST_NOT_GROW else delta < -tolerance))
    return out


def markdown(comparisons: list[Comparison]) -> str:
    def fmt(value: float | None) -> str:
        return "—" if value is None else f"{value:.4f}"

    lines = ["| metric | baseline | current | delta | |", "|---|---|---|---|---|"]
    lines += [
        f"| {c.metric} | {fmt(c.baseline)} | {fmt(c.current)} | {fmt(c.delta)} | {'**FAIL**' if c.failed else 'ok'} |"
        for c in comparisons
    ]
    return "\n".join(lines)
