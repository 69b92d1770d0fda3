"""Materialize a selection of assets in-process into the configured Dagster instance (used by `make run`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import dagster as dg

from dagster_project.core.settings import FluxSettings
from dagster_project.instance import render_dagster_home


@dataclass(frozen=True)
class MaterializeOutcome:
    run_id: str
    success: bool
    materialized: list[str]
    checks_passed: int
    checks_total: int


def materialize_selection(settings: FluxSettings, selection: str = "*") -> MaterializeOutcome:
    """Run `selection` with the Definitions built from `settings`, into the instance under its DAGSTER_HOME."""
    from dagster_project.definitions import build_definitions

    defs = build_definitions(settings)
    job = defs.resolve_implicit_global_asset_job_def()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)  # selection strings are stable enough for a CLI
        graph = defs.resolve_asset_graph()
        # Source-table specs (dbt's inputs) are observed, not materialized: keep only executable assets.
        asset_keys = {k for k in dg.AssetSelection.from_string(selection).resolve(graph)
                      if graph.get(k).is_executable}
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
