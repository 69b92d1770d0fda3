"""Materialize a selection of assets in-process into the configured Dagster instance (used by `make run`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg

from dagster_project.core.settings import FluxSettings
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


def materialize_selection(settings: FluxSettings, selection: str = "*") -> MaterializeOutcome:
    """Run `selection` with the Definitions built from `settings`, into the instance under its DAGSTER_HOME."""
    from dagster_project.defs.definitions import build_definitions

    defs = build_definitions(settings)
    job = defs.resolve_implicit_global_asset_job_def()
    asset_keys = _selected_keys(defs, selection)
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        result = job.execute_in_process(
            instance=instance,
            asset_selection=list(asset_keys),
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
        )
        checks = result.get_asset_check_evaluations()
        return MaterializeOutcome(
            run_id=result.run_id,
            success=result.success,
            materialized=sorted(e.asset_key.to_user_string() for e in result.get_asset_materialization_events()),
            checks_passed=sum(1 for c in checks if c.passed),
            checks_total=len(checks),
        )


def _selected_keys(defs: dg.Definitions, selection: str) -> set[dg.AssetKey]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)  # selection strings are stable enough for a CLI
        graph = defs.resolve_asset_graph()
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
