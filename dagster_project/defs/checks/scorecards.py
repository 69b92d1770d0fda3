"""Regression gates: each scorecard's gated metrics against the last accepted scorecard (blocking, so
`published_index` does not run and serving keeps the previous index when a metric drops beyond
FLUX_EVAL_TOLERANCE). With no accepted baseline yet the check passes and says how to accept one."""

import dagster as dg
from dagster._core.definitions.metadata import RawMetadataValue

from dagster_project.defs.assets.scorecards import (
    answer_scorecard,
    literature_tools_scorecard,
    resolution_scorecard,
    retrieval_scorecard,
)
from dagster_project.defs.check_decorator import flux_check
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.evals import question_changes
from dagster_project.evals.gate import compare, markdown
from dagster_project.evals.store import accepted_baseline, latest


def _gate(
    context: dg.AssetCheckExecutionContext, postgres: PostgresResource, scorecard: str, tolerance: float
) -> dg.AssetCheckResult:
    engine = postgres.get_engine()
    current = latest(engine, scorecard, context.run.run_id) or latest(engine, scorecard)
    if current is None:
        return dg.AssetCheckResult(passed=False, metadata={"reason": f"no {scorecard} scorecard recorded"})
    baseline = accepted_baseline(engine, scorecard)
    comparisons = compare(scorecard, current.metrics, baseline.metrics if baseline else None, tolerance)
    failed = [c.metric for c in comparisons if c.failed]
    metadata: dict[str, RawMetadataValue] = {
        "eval_run_id": current.id,
        "baseline_eval_run_id": baseline.id if baseline else "none (flux evals accept)",
        "tolerance": tolerance,
        "comparison": dg.MetadataValue.md(markdown(comparisons)),
    }
    changed = question_changes.against_baseline(engine, baseline, current) if scorecard == "answer" else None
    if changed is not None:
        unexplained = len(changed.unexplained)
        if unexplained:
            failed.append(f"{unexplained} question(s) the accepted scorecard answered right, changed without a reason")
        metadata |= {
            "questions_changed": len(changed.changed),
            "questions_changed_unexplained": unexplained,
            "question_changes": dg.MetadataValue.md(question_changes.markdown(changed)),
        }
    return dg.AssetCheckResult(passed=not failed, metadata=metadata | {"regressed": ", ".join(failed) or "none"})


def _make_gate(asset: dg.AssetsDefinition, scorecard: str) -> dg.AssetChecksDefinition:
    @flux_check(
        asset=asset,
        name=f"{scorecard}_no_regression",
        blocking=True,
        description=f"Gated {scorecard} metrics have not dropped beyond FLUX_EVAL_TOLERANCE below the "
        "last accepted scorecard (flux evals accept).",
    )
    def _check(
        context: dg.AssetCheckExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
    ) -> dg.AssetCheckResult:
        return _gate(context, postgres, scorecard, settings.evals.eval_tolerance)

    return _check


SCORECARD_CHECKS = [
    _make_gate(retrieval_scorecard, "retrieval"),
    _make_gate(answer_scorecard, "answer"),
    _make_gate(resolution_scorecard, "resolution"),
    _make_gate(literature_tools_scorecard, "literature_tools"),
]
