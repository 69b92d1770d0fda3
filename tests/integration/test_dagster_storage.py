"""Dagster materializes the platform assets into dagster-postgres storage, and the run is visible there. On the
session's own database, not the demo's: the migrations it applies and records are what a new database gets."""

from __future__ import annotations

import dagster as dg
from dagster_postgres import PostgresRunStorage

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.materialize import materialize_selection
from dagster_project.storage.migrate import load_migrations


def test_migration_assets_materialize_into_postgres_run_storage(stack: FluxSettings) -> None:
    first = materialize_selection(stack, "group:platform")
    assert first.success
    assert first.materialized == ["neo4j_schema", "postgres_schema"]
    assert first.checks_total == 2 and first.checks_passed == 2

    with dg.DagsterInstance.get() as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        run = instance.get_run_by_id(first.run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        event = instance.get_latest_materialization_event(dg.AssetKey("postgres_schema"))
        assert event is not None and event.run_id == first.run_id

    second = materialize_selection(stack, "postgres_schema")
    assert second.success and second.materialized == ["postgres_schema"]
    with dg.DagsterInstance.get() as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("postgres_schema"))
        metadata = event.asset_materialization.metadata  # type: ignore[union-attr]
        assert metadata["applied_now"].value == []
        assert metadata["schema_version"].value == len(load_migrations("postgres"))
