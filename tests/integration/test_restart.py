"""`down` then `up` keeps the data: Postgres and Neo4j state lives under FLUX_HOME and survives restarts."""

from __future__ import annotations

import pytest
from neo4j import GraphDatabase
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.stack import ServiceState, Stack
from dagster_project.storage.migrate import apply_postgres

# Kills, starves or restarts real processes, or starts a second stack / cluster / daemon: `make test-extended`.
pytestmark = pytest.mark.resilience


def test_down_then_up_keeps_rows_and_nodes(stack: FluxSettings) -> None:
    engine = engine_for(stack.platform_database_url)
    apply_postgres(engine, stack)
    auth = stack.neo4j_auth
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO documents (type, source, external_id, content_hash) VALUES ('t', 'restart', 'r1', :h)"
                " ON CONFLICT DO NOTHING"
            ),
            {"h": "c" * 64},
        )
    with GraphDatabase.driver(stack.resolved_neo4j_uri, auth=auth) as driver:
        driver.execute_query("MERGE (:RestartProbe {id: 'r1'})")

    services = Stack(stack)
    services.down()
    assert {s.name: s.state for s in services.status()}["postgres"] is ServiceState.STOPPED
    assert {s.name: s.state for s in services.status()}["neo4j"] is ServiceState.STOPPED
    up = {s.name: s for s in services.up()}
    assert up["postgres"].detail == "started" and up["neo4j"].detail == "started"

    with engine.begin() as conn:
        kept = conn.execute(text("SELECT count(*) FROM documents WHERE source = 'restart'")).scalar_one()
        conn.execute(text("DELETE FROM documents WHERE source = 'restart'"))
    with GraphDatabase.driver(stack.resolved_neo4j_uri, auth=auth) as driver:
        nodes = driver.execute_query("MATCH (n:RestartProbe {id: 'r1'}) RETURN count(n) AS n").records[0]["n"]
        driver.execute_query("MATCH (n:RestartProbe) DELETE n")
    assert kept == 1 and nodes == 1


def test_up_when_running_reuses_the_services(stack: FluxSettings) -> None:
    statuses = {s.name: s for s in Stack(stack).up()}
    assert statuses["postgres"].detail == "already running"
    assert statuses["neo4j"].detail == "already running"
    assert statuses["postgres"].start_seconds is None
