"""A demo platform built once per session in a database of its own: every asset but the eval scorecards materialized
from the bundled demo (sources, chunks, Ray embeddings, HNSW index, graph, resolution, dbt, the published index); the
scorecards and what reads them on top, once, for the tests that need them; and the HTTP API on it, per module."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from psycopg import sql

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.materialize import MaterializeOutcome, materialize_selection
from dagster_project.stack.postgres import admin_conninfo, ensure_databases
from dagster_project.stack.redis import RedisService
from tests.support.ports import free_port

if TYPE_CHECKING:
    from fastapi.testclient import TestClient


# The eval scorecards (group `evals`) grade ~1,000 questions against the candidate index: most tests need the
# platform, not its grades, so they are built on top when a test asks for them (`demo_scorecards`).
WITHOUT_SCORECARDS = "not group:evals"
SCORECARDS_AND_READERS = "group:evals+"  # the scorecards, the eval_runs table, the trend models, publishing again


@pytest.fixture(scope="session")
def demo_platform(stack: FluxSettings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FluxSettings]:
    database = f"{stack.postgres.pg_database}_demo"
    # Only this settings object names the demo database, so no other test can be redirected to it.
    settings = stack.evolve(
        pg_database=database, source_mode="demo", raw_root=str(tmp_path_factory.mktemp("raw")), embedding_batch_size=8
    )  # several write batches even on the small demo
    ensure_databases(settings)
    outcome = materialize_selection(settings, WITHOUT_SCORECARDS)
    assert outcome.success and outcome.checks_passed == outcome.checks_total, outcome
    yield settings
    with psycopg.connect(admin_conninfo(stack), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


@pytest.fixture(scope="session")
def demo_scorecards(demo_platform: FluxSettings) -> MaterializeOutcome:
    """The run that recorded the demo platform's four eval scorecards (their blocking checks passed) and materialized
    what reads them after them (the eval_runs table, the trend models, the published index). Its run id finds its
    scorecards: a test may record more runs of a scorecard later, with other settings."""
    outcome = materialize_selection(demo_platform, SCORECARDS_AND_READERS)
    assert outcome.success and outcome.checks_passed == outcome.checks_total > 0, outcome
    return outcome


@pytest.fixture
def redis_service(tmp_path: Path) -> Iterator[RedisService]:
    """A redis-server of the test's own (own port, own FLUX_HOME): free to stop, kill and restart."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (`make setup` installs it with apt)")
    settings = FluxSettings(home=tmp_path, redis_port=free_port(), redis_url=None, redis_server_bin="redis-server")
    service = RedisService(settings)
    service.start()
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="module")
def query_client(demo_platform: FluxSettings) -> Iterator[TestClient]:
    """The HTTP API on the demo platform, with caches of its own (a module's answers never come from another's)."""
    from fastapi.testclient import TestClient

    from retrieval.pipeline import Pipeline
    from serving.api import create_app
    from tests.integration.test_retrieval_pipeline import fresh_cache

    pipeline = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform))
    with TestClient(create_app(demo_platform, pipeline), raise_server_exceptions=False) as client:
        yield client


def ask_api(client: TestClient, question: str) -> dict[str, Any]:
    """`POST /query` that must answer (200), its JSON."""
    response = client.post("/query", json={"question": question})
    assert response.status_code == 200, response.text
    return response.json()
