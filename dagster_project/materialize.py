"""Materialize a selection of assets in-process into the configured Dagster instance (used by `make run`)."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import dagster as dg

from dagster_project.instance import render_dagster_home
from dagster_project.resources import export_resource_env, resource_env
from dagster_project.settings import FluxSettings, use_settings


@dataclass(frozen=True)
class MaterializeOutcome:
    run_id: str
    success: bool
    materialized: list[str]
    checks_passed: int
    checks_total: int


def materialize_selection(settings: FluxSettings, selection: str = "*") -> MaterializeOutcome:
    os.environ["DAGSTER_HOME"] = render_dagster_home(settings)
    # The resources read EnvVars: point them at `settings` for this run only, then put the caller's
    # environment back, so a later FluxSettings() is never silently redirected by a previous run.
    saved = {key: os.environ.get(key) for key in resource_env(settings)}
    export_resource_env(settings, override=True)
    try:
        with use_settings(settings):
            return _execute(selection)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _execute(selection: str) -> MaterializeOutcome:
    from dagster_project.definitions import defs

    job = defs.resolve_implicit_global_asset_job_def()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)  # selection strings are stable enough for a CLI
        graph = defs.resolve_asset_graph()
        # Source-table specs (dbt's inputs) are observed, not materialized: keep only executable assets.
        asset_keys = {k for k in dg.AssetSelection.from_string(selection).resolve(graph)
                      if graph.get(k).is_executable}
    with dg.DagsterInstance.get() as instance:
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
