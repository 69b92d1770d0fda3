"""The real stack: Postgres+pgvector, Neo4j over Bolt, Redis — started by the launcher the Makefile uses."""

from __future__ import annotations

import time

import pytest
import redis
from neo4j import GraphDatabase
from sqlalchemy import text

from dagster_project.core.settings import FluxConfigError, FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.index.tables import build_chunk_table, drop_chunk_table, hnsw_definition, table_rows
from dagster_project.sources.model import Quarantined
from dagster_project.stack import ServiceState, Stack, check_neo4j
from dagster_project.storage.loaders import record_quarantine
from dagster_project.storage.migrate import apply_neo4j, apply_postgres
from tests.support.cli import flux
from tests.support.prerequisites import under_ci


def _driver(s: FluxSettings):  # type: ignore[no-untyped-def]
    return GraphDatabase.driver(s.resolved_neo4j_uri, auth=s.neo4j_auth)


def _pg_schema_fingerprint(s: FluxSettings) -> list[tuple]:
    with engine_for(s.platform_database_url).connect() as conn:
        columns = conn.execute(
            text(
                "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
                " WHERE table_schema = 'public' ORDER BY 1, 2"
            )
        ).all()
        indexes = conn.execute(
            text("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1")
        ).all()
        ledger = conn.execute(text("SELECT version, checksum, applied_at FROM schema_migrations ORDER BY 1")).all()
    return [tuple(r) for r in (*columns, *indexes, *ledger)]


def _constraints(s: FluxSettings) -> set[tuple[str, str, str]]:
    with _driver(s) as driver:
        records = driver.execute_query(
            "SHOW CONSTRAINTS YIELD type, labelsOrTypes, properties RETURN type, labelsOrTypes, properties"
        ).records
    return {(r["type"], r["labelsOrTypes"][0], r["properties"][0]) for r in records}


@pytest.fixture(scope="module")
def migrated(stack: FluxSettings) -> FluxSettings:
    apply_postgres(engine_for(stack.platform_database_url), stack)
    with _driver(stack) as driver:
        apply_neo4j(driver, stack)
    return stack


def test_every_service_reports_running(stack: FluxSettings) -> None:
    states = {st.name: st for st in Stack(stack).status()}
    assert states["postgres"].state is ServiceState.RUNNING
    assert states["neo4j"].state is ServiceState.RUNNING
    # The location's one code server, saying what the runs it launches read unless they carry other values.
    assert states["code-server"].state is ServiceState.RUNNING
    assert f"{stack.sources.source_mode} pulls under {stack.raw_root_path}" in states["code-server"].detail
    assert f"tuning preset {stack.tuning_preset}" in states["code-server"].detail
    if states["redis"].state is ServiceState.UNAVAILABLE and not under_ci():
        # A developer's machine without redis-server: the stack runs with in-process caches (that report is
        # test_missing_redis_binary_is_reported_not_fatal's); under CI, where `make setup` installs it, Redis
        # must be running.
        pytest.skip(f"Redis is unavailable: {states['redis'].detail}; or `apt-get install redis-server`")
    assert states["redis"].state is ServiceState.RUNNING, states["redis"]
    assert redis.Redis.from_url(stack.resolved_redis_url).ping()


def test_vector_extension_and_versioned_hnsw_tables(migrated: FluxSettings) -> None:
    engine = engine_for(migrated.platform_database_url)
    with engine.connect() as conn:
        version = conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
        coltype = conn.execute(
            text(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
            )
        ).scalar_one()
        working_ann = conn.execute(
            text("SELECT count(*) FROM pg_indexes WHERE tablename = 'chunks' AND indexdef LIKE '%hnsw%'")
        ).scalar_one()
    built = build_chunk_table(engine, migrated.index.hnsw_m, migrated.index.hnsw_ef_construction)
    again = build_chunk_table(engine, migrated.index.hnsw_m, migrated.index.hnsw_ef_construction)
    other = build_chunk_table(engine, migrated.index.hnsw_m + 1, migrated.index.hnsw_ef_construction)
    with engine.connect() as conn:
        indexdef = hnsw_definition(conn, built.name) or ""
        # A real cosine query through the version table's index works.
        conn.execute(text("SET LOCAL hnsw.ef_search = 40"))
        hits = table_rows(conn, built.name)
        for table in {built.name, other.name}:
            drop_chunk_table(conn, table)
        conn.commit()
    assert version is not None and tuple(int(p) for p in version.split(".")[:2]) >= (0, 8)
    assert coltype == f"vector({migrated.index.embedding_dim})" and working_ann == 0  # nothing serves from `chunks`
    assert "USING hnsw" in indexdef and "vector_cosine_ops" in indexdef
    assert f"m='{migrated.index.hnsw_m}'" in indexdef.replace(" ", "")
    assert (built.action, again.action, again.name) == ("built", "kept", built.name) and hits == built.rows
    assert other.name != built.name  # new HNSW parameters are a new table, built beside the old one


def test_unique_keys_hold_on_documents_and_chunks(migrated: FluxSettings) -> None:
    engine = engine_for(migrated.platform_database_url)
    upsert = text(
        "INSERT INTO documents (type, source, external_id, title, content, content_hash)"
        " VALUES ('pathway', 'test', 'X1', 't', 'c', :h)"
        " ON CONFLICT (source, external_id) DO UPDATE SET content_hash = EXCLUDED.content_hash RETURNING id"
    )
    with engine.begin() as conn:
        first = conn.execute(upsert, {"h": "a" * 64}).scalar_one()
        second = conn.execute(upsert, {"h": "b" * 64}).scalar_one()
        rows = conn.execute(text("SELECT count(*) FROM documents WHERE source = 'test'")).scalar_one()
        conn.execute(text("DELETE FROM documents WHERE source = 'test'"))
    assert first == second and rows == 1


def test_neo4j_constraints_exist(migrated: FluxSettings) -> None:
    constraints = _constraints(migrated)
    for label in ("Pathway", "Reaction", "Gene", "Compound"):
        assert ("UNIQUENESS", label, "id") in constraints
    assert ("UNIQUENESS", "Species", "name") in constraints


def test_migrations_applied_twice_change_nothing(migrated: FluxSettings) -> None:
    before_pg, before_graph = _pg_schema_fingerprint(migrated), _constraints(migrated)
    pg = apply_postgres(engine_for(migrated.platform_database_url), migrated)
    with _driver(migrated) as driver:
        graph = apply_neo4j(driver, migrated)
    assert pg.applied == [] and graph.applied == []
    assert pg.already_applied and graph.already_applied
    assert _pg_schema_fingerprint(migrated) == before_pg
    assert _constraints(migrated) == before_graph


def test_flux_env_exports_every_running_service(stack: FluxSettings) -> None:
    result = flux("env")
    assert result.code == 0, result.stderr
    out = result.stdout
    exports = dict(line.removeprefix("export ").split("=", 1) for line in out.splitlines())
    assert exports["FLUX_DATABASE_URL"].endswith(f":{stack.postgres.pg_port}/{stack.postgres.pg_database}")
    assert exports["FLUX_NEO4J_URI"] == f"bolt://127.0.0.1:{stack.graph.neo4j_bolt_port}"
    assert exports["DAGSTER_HOME"] == str(stack.dagster_home)


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"FLUX_NEO4J_URI": "bolt://127.0.0.1:1"}, "FLUX_NEO4J_URI"),
        ({"FLUX_DATABASE_URL": "postgresql://flux:flux@127.0.0.1:1/flux"}, "FLUX_DATABASE_URL"),
        ({"FLUX_PG_PASSWORD": "definitely-wrong"}, "FLUX_PG_PASSWORD"),
        ({"FLUX_NEO4J_PASSWORD": "definitely-wrong"}, "FLUX_NEO4J_PASSWORD"),
    ],
)
def test_dead_or_misconfigured_dependency_is_one_line_naming_the_variable(
    stack: FluxSettings, env: dict[str, str], variable: str
) -> None:
    result = flux("migrate", env=env)  # the console script's entry point; a traceback fails the test
    assert result.code == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert variable in lines[0]


def test_missing_redis_binary_is_reported_not_fatal(stack: FluxSettings) -> None:
    result = flux("stack", "status", env={"FLUX_REDIS_SERVER_BIN": "/nonexistent/redis-server"})
    assert result.code == 0
    redis_line = next(ln for ln in result.stdout.splitlines() if ln.startswith("redis"))
    assert "unavailable" in redis_line and "in-process" in redis_line


def test_neo4j_refusing_logins_after_wrong_passwords_is_one_line_naming_the_cause(stack: FluxSettings) -> None:
    """Neo4j locks a user out for a few seconds after repeated wrong passwords (its `auth_max_failed_attempts`, 3 by
    default) and then answers even the right password with Neo.ClientError.Security.AuthenticationRateLimit: what an
    operator meets when a process of an earlier stack still logs in with an old password."""
    _until_neo4j_accepts(stack)  # a lock left by an earlier test's wrong password; a login resets the count
    wrong = stack.evolve(neo4j_password="not-this-stack-s-password")
    for _ in range(3):
        with pytest.raises(FluxConfigError, match="rejected the credentials"):
            check_neo4j(wrong)
    with pytest.raises(FluxConfigError) as limited:
        check_neo4j(stack)
    message = str(limited.value)
    assert limited.value.variable == "FLUX_NEO4J_PASSWORD" and "\n" not in message
    assert "AuthenticationRateLimit" in message and "old password" in message
    _until_neo4j_accepts(stack)  # the lock lifts by itself; the tests after this one log in again


def _until_neo4j_accepts(stack: FluxSettings) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            check_neo4j(stack)
            return
        except FluxConfigError:
            assert time.monotonic() < deadline, "Neo4j still refuses the right password after 60 s"
            time.sleep(1)


def test_a_bad_record_met_again_adds_a_sighting_per_raw_pull_and_never_rewrites_its_row(migrated: FluxSettings) -> None:
    engine = engine_for(migrated.platform_database_url)
    bad = Quarantined(source="sightings-test", record_key="k1", raw_ref="pull-1", reason="no id", payload="{}")
    rows = "SELECT raw_ref, run_id, first_seen_at FROM quarantine WHERE source = 'sightings-test'"
    sightings = (
        "SELECT s.raw_ref, s.run_id FROM quarantine_sightings s JOIN quarantine q ON q.id = s.quarantine_id"
        " WHERE q.source = 'sightings-test' ORDER BY s.seen_at, s.raw_ref"
    )
    try:
        record_quarantine(engine, [bad], "run-1")
        with engine.connect() as conn:
            first = conn.execute(text(rows)).all()
        record_quarantine(engine, [bad], "run-2")  # a rerun over the same pull
        with engine.connect() as conn:
            assert conn.execute(text(rows)).all() == first
            assert [tuple(r) for r in conn.execute(text(sightings))] == [("pull-1", "run-1")]
        record_quarantine(engine, [Quarantined("sightings-test", "k1", "pull-2", "no id", "{}")], "run-3")
        with engine.connect() as conn:
            assert conn.execute(text(rows)).all() == first  # still the first sighting's pull and run
            assert [tuple(r) for r in conn.execute(text(sightings))] == [("pull-1", "run-1"), ("pull-2", "run-3")]
    finally:
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM quarantine WHERE source = 'sightings-test'"))  # sightings cascade
