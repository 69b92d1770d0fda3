"""The answer scorecard's gate question by question, on the demo platform's stored scorecard: a question the accepted
scorecard answered right and the candidate does not fails the blocking check, named in its metadata."""

from __future__ import annotations

import json

import dagster as dg
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.defs.materialize import MaterializeOutcome, materialize_selection
from dagster_project.evals.question_changes import graded
from dagster_project.evals.store import accept_latest, latest, question_rows
from dagster_project.ops.instance import render_dagster_home
from tests.support.cli import flux

COPY = "question-gate-baseline"
# The field that makes a stored row right, per graded set.
RIGHT_FIELD = {"generated": "kind_pass", "relational": "relational_pass"}


def test_a_question_answered_right_by_the_accepted_scorecard_and_wrong_now_fails_the_gate(
    demo_platform: FluxSettings, demo_scorecards: MaterializeOutcome
) -> None:
    engine = engine_for(demo_platform.platform_database_url)
    session = latest(engine, "answer", demo_scorecards.run_id)
    assert session is not None
    rows = question_rows(engine, session.id)
    sets = {g.set for r in rows if (g := graded(r)) is not None}
    assert {"generated", "relational", "answerability_plan"} <= sets
    # The per-set counts cover every graded row of the stored scorecard.
    print(
        "\nright / refused / wrong per set:",
        {k: int(v) for k, v in sorted(session.metrics.items()) if k.startswith("set_")},
    )
    counted = sum(v for k, v in session.metrics.items() if k.startswith("set_"))
    assert counted == sum(graded(r) is not None for r in rows)
    missed = next(r for r in rows if (g := graded(r)) is not None and g.outcome != "right" and "|" not in r["question"])
    right_field = RIGHT_FIELD.get(graded(missed).set, "right")  # type: ignore[union-attr]
    # An accepted baseline in which that question was right: a copy of the session's scorecard, changed in one row.
    try:
        with engine.begin() as conn:
            copy = conn.execute(
                text("""
                INSERT INTO eval_runs (scorecard, dagster_run_id, index_version, dataset_version, pipeline_version,
                                       params, metrics, input_fingerprint, accepted, accepted_at)
                SELECT scorecard, :copy, index_version, dataset_version, pipeline_version, params, metrics,
                       'not reusable', true, now() FROM eval_runs WHERE id = :id RETURNING id
                """),
                {"copy": COPY, "id": session.id},
            ).scalar_one()
            conn.execute(
                text(
                    "INSERT INTO eval_question_results (eval_run_id, question_id, variant, question, result)"
                    " SELECT :copy, question_id, variant, question, result FROM eval_question_results"
                    " WHERE eval_run_id = :id"
                ),
                {"copy": copy, "id": session.id},
            )
            conn.execute(
                text(
                    "UPDATE eval_question_results SET result = result || CAST(:right AS jsonb)"
                    " WHERE eval_run_id = :copy AND question = :q AND variant = :v"
                ),
                {
                    "copy": copy,
                    "q": missed["question"],
                    "v": missed.get("variant", "-"),
                    "right": json.dumps({right_field: True}),
                },
            )
        # The candidate is measured as before (its stored result reused): only the baseline differs.
        gated = materialize_selection(demo_platform, "key:answer_scorecard")
        assert gated.checks_total == 1 and gated.checks_passed == 0 and not gated.success
        with dg.DagsterInstance.from_config(render_dagster_home(demo_platform)) as instance:
            records = instance.get_records_for_run(
                gated.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
            ).records
            (check,) = [r.event_log_entry.dagster_event.event_specific_data for r in records]  # type: ignore[union-attr]
        metadata = {k: v.value for k, v in check.metadata.items()}
        assert metadata["questions_changed_unexplained"] == 1
        assert missed["question"][:60] in str(metadata["question_changes"])
        assert "changed without a reason" in str(metadata["regressed"])
        # `flux evals show` says the same under the answer scorecard's table.
        shown = flux("evals", "show", env={"FLUX_PG_DATABASE": demo_platform.postgres.pg_database})
        assert shown.code == 0, shown.stderr
        assert "1 without a reason in answer_changes.json" in shown.printed, shown.stdout
        assert " ".join(missed["question"].split())[:40] in shown.printed, shown.stdout
    finally:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "DELETE FROM eval_question_results WHERE eval_run_id IN"
                    " (SELECT id FROM eval_runs WHERE dagster_run_id = :copy)"
                ),
                {"copy": COPY},
            )
            conn.execute(text("DELETE FROM eval_runs WHERE dagster_run_id = :copy"), {"copy": COPY})
        accept_latest(engine, ("answer",))
