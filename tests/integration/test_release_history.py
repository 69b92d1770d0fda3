"""The release history on the real stack and instance: each release the raw zone holds is a partition of
`<source>_release_history`, materialized with its diff against the release pulled before it and a churn check that
warns; a rerun writes nothing twice; a partition whose files left the raw zone fails at once with a message that
says so (and is not retried); a partition key no release has is refused before a run exists. In a database and raw
zone of the test's own: it pulls a second release and removes one, which the shared demo must never see."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import psycopg
import pytest
from psycopg import sql

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.materialize import SelectionError, materialize_selection
from dagster_project.defs.release_partitions import history_asset_key, sync_release_partitions
from dagster_project.releases.history import raw_releases
from dagster_project.stack.postgres import admin_conninfo, ensure_databases
from tests.support.tables import row_count, truncated_kegg_pull

HISTORY = "kegg_releases"
LOAD = "key:postgres_schema or key:hgnc_raw or key:kegg_raw or key:hgnc_release or key:kegg_release"


@pytest.fixture
def history_db(stack: FluxSettings, tmp_path: Path) -> Iterator[FluxSettings]:
    """A database and raw zone of the test's own; the partitions it registers in the shared instance are removed
    afterwards, so no other test (or daemon) sees releases of a raw zone that is gone."""
    database = f"{stack.postgres.pg_database}_history"
    settings = stack.evolve(pg_database=database, source_mode="demo", raw_root=str(tmp_path / "raw"))
    ensure_databases(settings)
    with dg.DagsterInstance.get() as instance:
        before = {name: set(instance.get_dynamic_partitions(name)) for name in ("hgnc_releases", HISTORY)}
    yield settings
    with dg.DagsterInstance.get() as instance:
        for name, kept in before.items():
            for key in set(instance.get_dynamic_partitions(name)) - kept:
                instance.delete_dynamic_partition(name, key)
    with psycopg.connect(admin_conninfo(stack), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


def _latest(instance: dg.DagsterInstance, partition: str) -> dict[str, object]:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=history_asset_key("kegg"), asset_partitions=[partition]), limit=1
    ).records
    materialization = records[0].asset_materialization
    assert materialization is not None
    return {k: v.value for k, v in materialization.metadata.items()}


def _check(instance: dg.DagsterInstance, run_id: str) -> dg.AssetCheckEvaluation:
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    (found,) = [r.event_log_entry.dagster_event.event_specific_data for r in records]  # type: ignore[union-attr]
    return found


def test_each_release_is_a_partition_with_its_diff_and_a_gone_one_fails_clearly(history_db: FluxSettings) -> None:
    s = history_db
    assert materialize_selection(s, LOAD).success
    truncated_kegg_pull(s, keep=3, retrieved_at="2099-01-01T00:00:00+00:00")
    materialize_selection(s, "key:kegg_release")  # its blocking churn check fails: the release is still kept
    first, second = (r.partition for r in raw_releases("kegg", s.raw_root_path))
    with dg.DagsterInstance.get() as instance:
        assert {first, second} <= set(instance.get_dynamic_partitions(HISTORY)), "each release gets a partition"

    earlier = materialize_selection(s, "kegg_release_history", partition=first)
    later = materialize_selection(s, "kegg_release_history", partition=second)
    assert earlier.success and later.success, "the history's churn check warns; it never fails the run"
    with dg.DagsterInstance.get() as instance:
        assert _latest(instance, first)["compared_with"] == "none (the first release in the raw zone)"
        shown = _latest(instance, second)
        assert shown["compared_with"] == first
        assert shown["pathways_before"] > shown["pathways_after"] == 3 and shown["pathways_removed"] > 0
        check = _check(instance, later.run_id)
        assert not check.passed and check.severity is dg.AssetCheckSeverity.WARN and not check.blocking
        assert "FLUX_CHURN_MAX_PATHWAYS_LOST" in (check.description or "")
        assert _check(instance, earlier.run_id).passed

    rows = {table: row_count(s, table) for table in ("source_releases", "release_changes")}
    again = materialize_selection(s, "kegg_release_history", partition=second)
    assert again.success and {table: row_count(s, table) for table in rows} == rows, "a rerun writes nothing twice"

    gone = "Flux demo (KEGG REST formats) #00000000"
    with pytest.raises(SelectionError, match="no partition"):
        materialize_selection(s, "kegg_release_history", partition=gone)
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(HISTORY, [gone])
    failed = materialize_selection(s, "kegg_release_history", partition=gone)
    assert not failed.success and failed.materialized == []
    with dg.DagsterInstance.get() as instance:
        failures = instance.get_records_for_run(failed.run_id, of_type=dg.DagsterEventType.STEP_FAILURE).records
        (failure,) = [r.event_log_entry.dagster_event for r in failures]  # one attempt: no retry
        message = failure.event_specific_data.error.message + str(failure.event_specific_data.user_failure_data)
        assert "no longer in the raw zone" in message and repr(first) in message and repr(second) in message
        # The next sync drops the never-recorded partition; the recorded ones stay.
        synced = sync_release_partitions(instance, "kegg", s.raw_root_path)
        assert synced.removed == [gone] and synced.added == []
        assert {first, second} <= set(instance.get_dynamic_partitions(HISTORY))
    assert {table: row_count(s, table) for table in rows} == rows
