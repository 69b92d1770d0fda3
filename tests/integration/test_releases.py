"""Releases on the real stack: the demo's sources kept as releases (once, however often they load), a truncated KEGG
release stopped by its blocking churn check while the previous release keeps serving, the same release let through
when the limit is raised, and `flux releases` reading what was kept. Each test loads its releases into a database and
raw zone of its own: a cut release on the shared demo would change what every other test reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import psycopg
import pytest
from psycopg import sql
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.defs.materialize import materialize_selection
from dagster_project.stack.postgres import admin_conninfo, ensure_databases
from tests.support.cli import flux
from tests.support.tables import truncated_kegg_pull

SOURCES = ("hgnc", "reactome", "kegg")
LOAD = " or ".join(
    ["key:postgres_schema", *(f"key:{s}_{stage}" for s in SOURCES for stage in ("raw", "release", "documents"))]
)
KEGG_ONLY = "key:kegg_release or key:kegg_documents"  # no raw pull: the test writes the raw files itself


@pytest.fixture
def releases_db(stack: FluxSettings, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[FluxSettings]:
    """A database and raw zone of the test's own, so neither test depends on what the other left."""
    database = f"{stack.postgres.pg_database}_rel_{request.node.name[5:20]}"
    settings = stack.evolve(pg_database=database, source_mode="demo", raw_root=str(tmp_path / "raw"))
    ensure_databases(settings)
    yield settings
    with psycopg.connect(admin_conninfo(stack), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


def _rows(settings: FluxSettings, query: str, **params: object) -> list[tuple]:
    engine = engine_for(settings.platform_database_url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(query), params)]
    finally:
        engine.dispose()


def _history(settings: FluxSettings) -> list[tuple]:
    return _rows(
        settings,
        "SELECT source, release_key, first_loaded_at, served_at, pathway_count, member_count,"
        " gene_count FROM source_releases ORDER BY source, release_key",
    )


def _check_result(run_id: str, asset: str) -> dg.AssetCheckEvaluation:
    with dg.DagsterInstance.get() as instance:
        records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    evaluations = [r.event_log_entry.dagster_event.event_specific_data for r in records]  # type: ignore[union-attr]
    (found,) = [e for e in evaluations if e.asset_key.to_user_string() == asset]
    return found


def test_each_release_is_kept_once_and_served(releases_db: FluxSettings) -> None:
    s = releases_db
    first = materialize_selection(s, LOAD)
    assert first.success and first.checks_passed == first.checks_total, first
    history = _history(s)
    assert [row[0] for row in history] == ["hgnc", "kegg", "reactome"]
    assert all(row[3] is not None for row in history), "each loaded release is the served one"
    # What was kept is what the served tables hold.
    for source in ("kegg", "reactome"):
        kept = _rows(
            s,
            "SELECT count(*) FROM release_pathways p JOIN source_releases r USING (release_id) WHERE r.source = :s",
            s=source,
        )[0][0]
        served = _rows(s, "SELECT count(*) FROM pathways WHERE source = :s AND status = 'active'", s=source)[0][0]
        assert kept == served > 0
    assert (
        _rows(s, "SELECT count(*) FROM release_genes")[0][0]
        == _rows(s, "SELECT count(*) FROM gene_identifiers")[0][0]
        > 0
    )
    second = materialize_selection(s, LOAD)
    assert second.success
    assert _history(s) == history, "loading the same releases again changes no history row"
    assert _rows(s, "SELECT count(*) FROM release_changes") == [(0,)]


def test_truncated_release_is_stopped_and_the_previous_keeps_serving(releases_db: FluxSettings) -> None:
    s = releases_db
    loaded = materialize_selection(s, LOAD)
    assert loaded.success, loaded
    served_before = _rows(s, "SELECT pathway_id FROM pathways WHERE source = 'kegg' AND status = 'active' ORDER BY 1")
    assert len(served_before) >= 8
    truncated_kegg_pull(s, keep=2)
    blocked = materialize_selection(s, KEGG_ONLY)
    assert not blocked.success
    assert blocked.materialized == ["kegg_release"], "the documents load must not run"
    check = _check_result(blocked.run_id, "kegg_release")
    assert not check.passed and check.blocking
    message = check.description or ""
    assert "KEGG release Flux demo" in message and "of its pathways" in message
    assert "FLUX_CHURN_MAX_PATHWAYS_LOST" in message
    assert (
        _rows(s, "SELECT pathway_id FROM pathways WHERE source = 'kegg' AND status = 'active' ORDER BY 1")
        == served_before
    )
    truncated = _rows(
        s, "SELECT release_key, served_at FROM source_releases WHERE source = 'kegg' ORDER BY first_loaded_at"
    )
    assert len(truncated) == 2 and truncated[1][1] is None, "the stopped release is kept, never served"
    removed = _rows(
        s, "SELECT count(*) FROM release_changes WHERE source = 'kegg' AND change_kind = 'pathway_removed'"
    )[0][0]
    assert removed == len(served_before) - 2

    cli = flux(
        "releases", "diff", truncated[0][0], truncated[1][0], "--json", env={"FLUX_PG_DATABASE": s.postgres.pg_database}
    )
    assert cli.code == 0, cli.stderr
    assert f'"pathways_removed": {removed}' in cli.stdout and '"passed": false' in cli.stdout
    listed = flux("releases", "list", env={"FLUX_PG_DATABASE": s.postgres.pg_database})
    assert listed.code == 0 and listed.printed.count("kegg") >= 2
    unknown = flux(
        "releases",
        "diff",
        "no-such-release",
        "served",
        "--source",
        "kegg",
        env={"FLUX_PG_DATABASE": s.postgres.pg_database},
    )
    assert unknown.code == 2 and "no-such-release" in unknown.said and "flux releases list" in unknown.said

    # Raising the limit is how an operator lets a real, large change through.
    allowed = materialize_selection(s.evolve(churn_max_pathways_lost=1.0), KEGG_ONLY)
    assert allowed.success and "kegg_documents" in allowed.materialized
    assert len(_rows(s, "SELECT 1 FROM pathways WHERE source = 'kegg' AND status = 'active'")) == 2
    served = _rows(
        s,
        "SELECT release_key FROM source_releases WHERE source = 'kegg' AND served_at IS NOT NULL"
        " ORDER BY served_at DESC LIMIT 1",
    )
    assert served == [(truncated[1][0],)]
