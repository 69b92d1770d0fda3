"""`flux evals`: the scorecards (show the latest, accept them as the regression baseline) and the fits behind the
served rules (the offline judge's threshold, the evidence floor), and the question-kind report."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.table import Table

from dagster_project.cli.output import console, err_console
from dagster_project.core.settings import FluxConfigError, get_settings

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from dagster_project.evals.store import EvalRun

evals_app = typer.Typer(
    help="Eval scorecards: show the latest, accept them as the regression baseline; fits.", no_args_is_help=True
)


@evals_app.command("show")
def evals_show() -> None:
    """The latest scorecards, each gated metric beside the accepted baseline and the delta."""
    from dagster_project.core.stores import engine_for
    from dagster_project.evals.gate import GATED, compare
    from dagster_project.evals.store import SCORECARDS, accepted_baseline, latest
    from dagster_project.stack import check_postgres

    settings = get_settings()
    check_postgres(settings)
    engine = engine_for(settings.platform_database_url)
    for scorecard in SCORECARDS:
        current, baseline = latest(engine, scorecard), accepted_baseline(engine, scorecard)
        if current is None:
            console.print(f"[bold]{scorecard}[/bold]: no scorecard yet (materialize group:evals)")
            continue
        title = (
            f"{scorecard} — run {current.id} on index {current.index_version}, "
            f"{current.created_at:%Y-%m-%d %H:%M}; baseline "
            + (f"run {baseline.id}" if baseline else "none (flux evals accept)")
        )
        table = Table("metric", "current", "baseline", "delta", "gate", title=title, title_justify="left")
        comparisons = {
            c.metric: c
            for c in compare(
                scorecard, current.metrics, baseline.metrics if baseline else None, settings.evals.eval_tolerance
            )
        }
        for metric in sorted(current.metrics, key=lambda m: (m not in GATED[scorecard], m)):
            value, then = current.metrics[metric], (baseline.metrics if baseline else {}).get(metric)
            c = comparisons.get(metric)
            gate = "" if c is None else ("[red]FAIL[/red]" if c.failed else "ok")
            table.add_row(
                metric,
                f"{value:.4g}",
                "—" if then is None else f"{then:.4g}",
                "—" if then is None else f"{value - then:+.4g}",
                gate,
            )
        console.print(table)
        if scorecard == "answer":
            _print_question_changes(engine, baseline, current)


def _print_question_changes(engine: Engine, baseline: EvalRun | None, current: EvalRun) -> None:
    """What the answer gate sees question by question (docs/evals.md, "Question by question")."""
    from dagster_project.evals.question_changes import against_baseline

    found = against_baseline(engine, baseline, current)
    if found is None:
        console.print("questions: not compared (no baseline, or the data changed since it)")
        return
    console.print(
        f"questions the baseline answered right: {len(found.changed)} changed, {len(found.unexplained)} without a"
        f" reason in answer_changes.json; {found.reworded} still right in other words, {found.no_longer_asked} no"
        " longer asked"
    )
    for change in found.unexplained[:10]:
        console.print(
            f"  [red]unexplained[/red] {change.set}: {change.question!r} → {change.now.outcome} ({change.now.kind})"
        )


@evals_app.command("accept")
def evals_accept(
    scorecard: str = typer.Option(None, help="Only this one: retrieval, answer, resolution or literature_tools."),
) -> None:
    """Accept the latest scorecard(s) as the baseline the regression checks compare against."""
    from dagster_project.core.stores import engine_for
    from dagster_project.evals.store import SCORECARDS, accept_latest
    from dagster_project.stack import check_postgres

    if scorecard is not None and scorecard not in SCORECARDS:
        raise typer.BadParameter(f"one of {', '.join(SCORECARDS)}", param_hint="--scorecard")
    settings = get_settings()
    check_postgres(settings)
    accepted = accept_latest(engine_for(settings.platform_database_url), (scorecard,) if scorecard else SCORECARDS)
    if not accepted:
        err_console.print("flux: nothing to accept: no scorecard has been materialized yet")
        raise typer.Exit(1)
    for run in accepted:
        console.print(
            f"accepted {run.scorecard} scorecard run {run.id} (index {run.index_version}, "
            f"Dagster run {run.dagster_run_id}) as the baseline"
        )


@evals_app.command("fit-judge")
def evals_fit_judge() -> None:
    """Fit the offline judge's "good" threshold on PubMedQA pairs (right vs hard-negative abstract); report it
    on the half of the file it was not fitted on. Reads the snapshot file only: no services needed."""
    from dagster_project.evals.judge_fit import fit
    from retrieval.answering.offline import GOOD_COVERAGE

    path = get_settings().sources.snapshot_dir / "pubmedqa" / "ori_pqal.json"
    if not path.is_file():
        raise FluxConfigError("FLUX_SNAPSHOT_DIR", f"no PubMedQA file at {path}")
    with console.status("building right / hard-negative pairs"):
        result = fit(path)
    console.print(
        f"fitted threshold {result.threshold:.3f} (shipped: {GOOD_COVERAGE}) on {result.fit_pairs} "
        f"questions: accuracy right {result.fit_accuracy[0]:.3f}, hard negative {result.fit_accuracy[1]:.3f}"
    )
    console.print(
        f"held out ({result.held_out_pairs} questions): accuracy right {result.held_out_accuracy[0]:.3f}, "
        f"hard negative {result.held_out_accuracy[1]:.3f}"
    )


@evals_app.command("fit-answerability")
def evals_fit_answerability(
    save: bool = typer.Option(
        False, help="Write the fitted model into retrieval/answering/answerability.json for this encoder."
    ),
) -> None:
    """Fit the literature answerability decision on the labelled dev questions through the published index; report
    5-fold cross-validated AUROC, false-answer and false-abstention rates and calibration (ECE), and the same on the
    held-out questions it was not fitted on; log the reliability diagram to MLflow."""
    from dagster_project.core.stores import engine_for
    from dagster_project.evals import answerability_fit as fitting
    from dagster_project.evals.answer_eval import eval_pipeline
    from dagster_project.evals.report import log_to_mlflow
    from dagster_project.stack import check_neo4j, check_postgres
    from retrieval.model.index_state import current_index

    settings = get_settings()
    check_postgres(settings)
    check_neo4j(settings)
    index = current_index(engine_for(settings.platform_database_url))
    pipeline = eval_pipeline(settings, index)
    with console.status("asking the dev and held-out questions through the literature path"):
        result = fitting.fit(pipeline, fitting.load(fitting.DEV_FILE), fitting.load(fitting.HELDOUT_FILE))
    for name, value in sorted(result.metrics.items()):
        console.print(f"  {name:34s} {value:8.3f}")
    run_id = log_to_mlflow(
        settings,
        "answerability",
        {"index_version": index.version, "embedding_model": settings.index.embedding_model, **result.model.as_json()},
        result.metrics,
        result.diagram,
        result.rows,
    )
    console.print(f"MLflow run {run_id}: the reliability diagram and every question's signals")
    if save:
        fitting.save(settings.index.embedding_model, result)
        console.print(f"saved for {settings.index.embedding_model}")


@evals_app.command("kinds")
def evals_kinds() -> None:
    """The generated questions of every typed kind against the published index (pass rate and latency per kind,
    not-found precision / recall) and the analysts' question sets against the parser; records nothing."""
    from dagster_project.evals.kind_report import report

    report(get_settings())
