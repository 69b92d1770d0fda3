"""Idempotency audit: materializing every asset a second time over the same sources changes nothing stored.

Every Postgres table (an ordered hash of all its rows) and the Neo4j graph (counts per label and type, hashes of
node ids and relationship endpoints) are compared before and after a full second run. What a run legitimately
adds is named here with its reason, and is asserted, not ignored: each scorecard records one `eval_runs` row per
Dagster run (it is the run log the regression checks and trends read); re-confirming the same index version bumps
its `candidate_at` / `published_at`. Meeting the same malformed record again in the same raw pull changes nothing
(one quarantine row per record and reason, one sighting per raw pull)."""

from __future__ import annotations

import re

import dagster as dg
import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.defs.materialize import materialize_selection
from dagster_project.evals.store import SCORECARDS
from dagster_project.storage.checksums import graph_checksums, table_checksums, table_names

RUN_LOG_TABLES = frozenset({"eval_runs", "eval_question_results"})  # one row set per Dagster run, by design
SERVING_TABLES = frozenset({"answers", "conversations"})  # written by questions, not by assets
# Re-confirmations, not rewrites: the same index version recorded again, the same bad record seen again.
# dbt's build record: the run log changed, so the models over it were built again from its new digest.
TIMESTAMPS = {
    "index_versions": ["candidate_at", "published_at"],
    "dbt_model_builds": ["source_digests", "dagster_run_id", "built_at"],
}
# Metadata keys in which an asset reports what it wrote; a second run must report 0 for each.
# ("quarantined" counts bad records met, not rows: meeting one again adds no row, which the checksums show.)
WRITE_KEY = re.compile(r"inserted|updated|upserted|written|embedded|chunked|removed|pruned|dropped")


def _state(settings: FluxSettings) -> tuple[dict[str, object], dict[str, object]]:
    engine = engine_for(settings.platform_database_url)
    try:
        with engine.connect() as conn:
            # dbt's trend mart summarizes eval_runs, so it grows with that run log (schema FLUX_DBT_SCHEMA).
            marts_of_the_log = frozenset(t for t in table_names(conn) if t.endswith(".eval_metric_trends"))
        tables = table_checksums(
            engine, exclude=RUN_LOG_TABLES | SERVING_TABLES | marts_of_the_log, ignore_columns=TIMESTAMPS
        )
    finally:
        engine.dispose()
    driver = graph_driver(settings)
    return tables, graph_checksums(driver)  # type: ignore[return-value]


def _written_by_asset(run_id: str) -> dict[str, dict[str, int]]:
    with dg.DagsterInstance.get() as instance:
        records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
        written: dict[str, dict[str, int]] = {}
        for record in records:
            materialization = record.event_log_entry.asset_materialization
            assert materialization is not None
            meta = {k: v.value for k, v in materialization.metadata.items()}
            counts = {
                k: int(v)
                for k, v in meta.items()
                if WRITE_KEY.search(k) and isinstance(v, int | float) and not isinstance(v, bool)
            }
            written[materialization.asset_key.to_user_string()] = counts
    return written


@pytest.mark.slow  # every asset materialized twice: `make test-extended`
@pytest.mark.timeout(1200)
def test_a_second_full_materialization_changes_nothing(demo_platform: FluxSettings) -> None:
    # The first run: earlier tests may have left a refresh half-done (a stage re-run without the publish after
    # it), which a full run rightly completes. What is audited is the run after that one.
    first = materialize_selection(demo_platform, "*")
    assert first.success and first.checks_passed == first.checks_total, first
    before = _state(demo_platform)
    engine = engine_for(demo_platform.platform_database_url)
    with engine.connect() as conn:
        runs_before = conn.exec_driver_sql("SELECT count(*) FROM eval_runs").scalar_one()
    outcome = materialize_selection(demo_platform, "*")
    assert outcome.success and outcome.checks_passed == outcome.checks_total, outcome
    after = _state(demo_platform)
    changed_tables = sorted(t for t in before[0] if before[0][t] != after[0].get(t))
    assert set(after[0]) == set(before[0]) and not changed_tables, changed_tables
    assert any(t.startswith("flux_index.") for t in before[0]) and any("pathway_equivalences" in t for t in before[0])
    assert after[1] == before[1]
    with engine.connect() as conn:
        runs_after = conn.exec_driver_sql("SELECT count(*) FROM eval_runs").scalar_one()
    assert runs_after == runs_before + len(SCORECARDS)  # one row per scorecard for the new run, nothing rewritten
    written = _written_by_asset(outcome.run_id)
    print("\nrows written per asset on the second run:")
    for asset, counts in sorted(written.items()):
        print(f"  {asset:32} {counts or '-'}")
    assert len(written) >= 20
    assert not {a: c for a, c in written.items() if any(c.values())}
    assert _stale(demo_platform) == {}  # "Upstream data" in the UI: nothing, since nothing changed


def _stale(settings: FluxSettings) -> dict[str, str]:
    """Every asset Dagster calls stale after the run, with why (its staleness resolver: what the UI shows)."""
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._core.loader import LoadingContextForTest

    from dagster_project.defs.definitions import build_definitions
    from dagster_project.ops.instance import render_dagster_home

    defs = build_definitions(settings)
    graph = defs.resolve_asset_graph()
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
        return {
            key.to_user_string(): "; ".join(c.reason for c in resolver.get_stale_causes(key))
            for key in graph.materializable_asset_keys
            if resolver.get_status(key) == StaleStatus.STALE
        }
