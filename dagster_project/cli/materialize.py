"""`flux materialize` (a run of the code location; in this process with --in-process) and `flux summary` (what
the stores hold)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dagster_project.cli.output import console, err_console
from dagster_project.core.settings import FluxSettings, get_settings

if TYPE_CHECKING:
    from dagster_project.defs.launch import StepEvent
    from dagster_project.defs.lineage import Lineage


def materialize(
    select: str = typer.Option("*", help="Dagster asset selection, e.g. 'group:platform'."),
    in_process: bool = typer.Option(
        False, "--in-process", help="Run in this process (for a debugger) instead of through the code location."
    ),
    trigger: str = typer.Option("cli", help="The flux/trigger tag the run carries (make run passes 'make-run')."),
    partition: str | None = typer.Option(
        None,
        help="One partition of partitioned assets, e.g. a release key of "
        "'<source>_release_history' (`flux releases list`).",
    ),
    new_lineage: bool = typer.Option(
        False,
        "--new-lineage",
        help="Make this run's FLUX_SOURCE_MODE and FLUX_RAW_ROOT the instance's lineage "
        "(a run with others is refused otherwise).",
    ),
) -> None:
    """Materialize assets into the Dagster instance: a run of the Flux code location, shown in the UI."""
    from dagster_project.core.run_settings import StackSettingsMismatch
    from dagster_project.defs.launch import CodeLocationError, RunNotDequeued
    from dagster_project.defs.materialize import (
        RunSettingsError,
        SelectionError,
        launch_selection,
        materialize_selection,
    )
    from dagster_project.stack import check_neo4j, check_postgres

    settings = get_settings()
    check_postgres(settings)
    check_neo4j(settings)
    started = time.monotonic()
    lineage = _prepare_instance(settings, new_lineage)
    try:
        if in_process:
            result = materialize_selection(settings, select, trigger=trigger, partition=partition)
        else:
            with StepProgress() as progress:
                result = launch_selection(
                    settings, select, trigger=trigger, on_step=progress.update, partition=partition
                )
    except SelectionError as exc:  # before any run starts: an empty selection would run every asset
        raise typer.BadParameter(str(exc), param_hint="--select") from None
    except (CodeLocationError, StackSettingsMismatch, RunSettingsError) as exc:  # no run was created
        err_console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    except RunNotDequeued as exc:  # nothing pulled yet: the lineage stays as it was
        err_console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    _record_lineage(settings, lineage, result.run_id)
    print(
        f"run {result.run_id} ({result.submitted}): {'success' if result.success else 'FAILED'} — "
        f"{len(result.materialized)} assets materialized, checks passed {result.checks_passed}/{result.checks_total} "
        f"in {time.monotonic() - started:.1f}s"
    )
    if not result.success:
        raise typer.Exit(1)


def _prepare_instance(settings: FluxSettings, new_lineage: bool) -> Lineage | None:
    """Before a run: runs whose process died are marked failed, and this run's lineage is checked (None when
    the guard is off). What the run pulled is recorded after it (`_record_lineage`)."""
    import dagster as dg

    from dagster_project.defs.lineage import LineageMismatchError, check_lineage
    from dagster_project.ops.instance import render_dagster_home

    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        report_dead_runs(instance, settings)
        if not settings.ops.lineage_guard:
            return None
        try:
            return check_lineage(instance, settings, new_lineage)
        except LineageMismatchError as exc:
            err_console.print(f"error: {exc}", markup=False, highlight=False)
            raise typer.Exit(2) from None


def _record_lineage(settings: FluxSettings, checked: Lineage | None, run_id: str) -> None:
    """After the run: the lineage of what its raw pulls read becomes the instance's (`checked` is None when the guard
    is off). A run that pulled nothing leaves it as it was."""
    import dagster as dg

    from dagster_project.defs.lineage import pulled_lineage, record_lineage
    from dagster_project.ops.instance import render_dagster_home

    if checked is None:
        return
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        pulled = pulled_lineage(instance, run_id)
        if pulled is None:
            return
        record_lineage(instance, pulled)
    if pulled != checked:
        err_console.print(
            f"warning: run {run_id} read {pulled.describe()}, not {checked.describe()} as its command said; "
            "the instance's lineage is what it read",
            markup=False,
            highlight=False,
        )


def report_dead_runs(instance: object, settings: FluxSettings) -> None:
    from dagster_project.defs.dead_runs import mark_dead_runs_failed

    for dead in mark_dead_runs_failed(instance, settings.home):  # type: ignore[arg-type]
        err_console.print(
            f"run {dead.run_id} marked failed: its process (pid {dead.pid}) is gone"
            + (f"; {dead.removed_folders} dbt target folder(s) removed" if dead.removed_folders else "")
        )


class StepProgress:
    """A progress line over the run's steps, and one printed line per failed step (its first error line)."""

    def __init__(self) -> None:
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        )
        self._task = self._bar.add_task("starting the run", total=None)
        self._running: set[str] = set()
        self._done = 0

    def __enter__(self) -> StepProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def update(self, event: StepEvent) -> None:
        if event.status == "started":
            self._running.add(event.step_key)
        else:
            self._running.discard(event.step_key)
            self._done += bool(event.step_key)
        if event.status == "failed":
            self._bar.console.print(
                f"failed: {event.step_key or 'run'}: {event.message}", markup=False, highlight=False
            )
        running = ", ".join(sorted(self._running)[:2]) or "waiting"
        self._bar.update(self._task, description=running, completed=self._done)


def summary() -> None:
    """Counts per table and per node label."""
    from dagster_project.ops.summary import collect_summary
    from dagster_project.stack import check_neo4j, check_postgres

    settings = get_settings()
    check_postgres(settings)
    check_neo4j(settings)
    result = collect_summary(settings)
    table = Table("store", "table / label", "count")
    for name, count in result.table_rows.items():
        table.add_row("postgres", name, str(count))
    for label, count in result.node_labels.items():
        table.add_row("neo4j", label, str(count))
    console.print(table)
    if result.per_source:
        by_source = Table(
            "source",
            "documents (active)",
            "documents (gone)",
            "genes",
            "associations",
            "quarantined",
            "latest pull's mode",
        )
        for source, counts in sorted(result.per_source.items()):
            by_source.add_row(
                source,
                *(
                    str(counts.get(k, 0))
                    for k in ("documents_active", "documents_gone", "genes", "associations", "quarantined")
                ),
                result.latest_pulls.get(source, "-"),
            )
        console.print(by_source)
    _print_nightly(settings)
    if result.equivalences:
        eq = Table("Reactome", "KEGG", "relation", "shared", "Jaccard", title="Reactome ↔ KEGG (strongest per KEGG)")
        for row in result.equivalences:
            eq.add_row(
                f"{row['reactome_id']} {row['reactome_name']}",
                f"{row['kegg_id']} {row['kegg_name']}",
                row["relation"],
                str(row["shared"]),
                f"{row['jaccard']:.2f}",
            )
        console.print(eq)


def _print_nightly(settings: FluxSettings) -> None:
    """What the daemon will do tonight (the schedule's next tick) and what each instigator did last."""
    import dagster as dg

    from dagster_project.defs.lineage import recorded_lineage
    from dagster_project.defs.nightly_status import nightly_status
    from dagster_project.ops.instance import render_dagster_home

    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        status = nightly_status(settings, instance, time.time())
        lineage = recorded_lineage(instance)
    daemon = "running" if status.daemon_live else "not running: nothing below ticks until `make up` starts it"
    table = Table(
        "schedule / sensor",
        "next tick",
        "last tick",
        "status",
        "detail",
        title=f"Nightly refresh (Dagster daemon {daemon})",
    )
    for row in status.instigators:
        table.add_row(
            row.name,
            f"{row.next_tick:%Y-%m-%d %H:%M %Z}" if row.next_tick else "every interval",
            f"{row.last_tick:%Y-%m-%d %H:%M:%S}" if row.last_tick else "-",
            row.last_status,
            row.last_detail,
        )
    console.print(table)
    if lineage is not None:
        console.print(
            f"Runs of this instance read {lineage.describe()} (`flux materialize --new-lineage` changes it).",
            markup=False,
            highlight=False,
        )
