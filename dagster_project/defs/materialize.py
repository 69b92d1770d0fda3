"""Materialize a selection of assets into the configured Dagster instance: through the code location (`flux
materialize`, `make run`: launch.py) or in this process (`flux materialize --in-process`, the tests, restore)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg
from dagster._core.definitions.assets.graph.base_asset_graph import BaseAssetGraph
from dagster._core.events import DagsterEventType

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.launch import StepListener, code_location, create_asset_run, submit, wait_for_run
from dagster_project.defs.run_tags import run_tags
from dagster_project.ops.instance import render_dagster_home


class SelectionError(ValueError):
    """A selection that is not valid, or that names no asset (an empty asset list would run every asset)."""


@dataclass(frozen=True)
class MaterializeOutcome:
    run_id: str
    success: bool
    materialized: list[str]
    checks_passed: int
    checks_total: int
    submitted: str = "in-process"  # or "launched" (by the run launcher), "queued" (for the daemon)


def launch_selection(settings: FluxSettings, selection: str = "*", trigger: str = "cli",
                     on_step: StepListener | None = None) -> MaterializeOutcome:
    """Run `selection` through the Flux code location (the location's code server reads the same environment as
    `settings`), into the instance under its DAGSTER_HOME; waits for the run to finish."""
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance, \
            code_location(instance) as (workspace, location):
        repository = next(iter(location.get_repositories().values()))
        keys = selected_keys(repository.asset_graph, selection)
        run = create_asset_run(instance, location, keys, run_tags(settings, trigger))
        submitted = submit(instance, workspace, run)
        finished = wait_for_run(instance, run.run_id, on_step)
        return _outcome(instance, finished, submitted)


def materialize_selection(settings: FluxSettings, selection: str = "*",
                          trigger: str = "in-process") -> MaterializeOutcome:
    """Run `selection` in this process with the Definitions built from `settings` (which may differ from the
    environment), into the instance under its DAGSTER_HOME."""
    from dagster_project.defs.definitions import build_definitions

    defs = build_definitions(settings)
    job = defs.resolve_implicit_global_asset_job_def()
    asset_keys = selected_keys(defs.resolve_asset_graph(), selection)
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        result = job.execute_in_process(
            instance=instance,
            asset_selection=list(asset_keys),
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
            tags=run_tags(settings, trigger),
        )
        checks = result.get_asset_check_evaluations()
        return MaterializeOutcome(
            run_id=result.run_id,
            success=result.success,
            materialized=sorted(e.asset_key.to_user_string() for e in result.get_asset_materialization_events()),
            checks_passed=sum(1 for c in checks if c.passed),
            checks_total=len(checks),
        )


def _outcome(instance: dg.DagsterInstance, run: dg.DagsterRun, submitted: str) -> MaterializeOutcome:
    materialized = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
    checks = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION).records
    passed = [r.event_log_entry.dagster_event.event_specific_data.passed for r in checks]  # type: ignore[union-attr]
    return MaterializeOutcome(
        run_id=run.run_id,
        success=run.status is dg.DagsterRunStatus.SUCCESS,
        materialized=sorted({r.asset_key.to_user_string() for r in materialized if r.asset_key}),
        checks_passed=sum(passed),
        checks_total=len(passed),
        submitted=submitted,
    )


def selected_keys(graph: BaseAssetGraph, selection: str) -> set[dg.AssetKey]:
    """The executable assets a selection string names in `graph` (the location's or this process's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)  # selection strings are stable enough for a CLI
        try:
            resolved = dg.AssetSelection.from_string(selection).resolve(graph)
        except dg.DagsterError as exc:  # a syntax error, or a key no asset supplies
            raise SelectionError(f"{selection!r} is not a valid asset selection: {str(exc).split('. ')[0]}") from None
    # Source-table specs (dbt's inputs) are observed, not materialized: keep only executable assets.
    keys = {k for k in resolved if graph.get(k).is_executable}
    if not keys:
        groups = sorted({graph.get(k).group_name for k in graph.executable_asset_keys})
        raise SelectionError(f"{selection!r} selects no asset (groups: {', '.join(groups)})")
    return keys


def graph_reprojector(settings: FluxSettings) -> Callable[[str], str | None]:
    """What `restore` calls to re-project the graph: an in-process run of a selection; None, or why it failed."""

    def reproject(selection: str) -> str | None:
        outcome = materialize_selection(settings, selection)
        return None if outcome.success else f"Dagster run {outcome.run_id}"

    return reproject
