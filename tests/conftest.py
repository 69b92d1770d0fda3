"""Session fixtures. Integration tests talk to a real stack that this session starts with its own ports and
state under .flux/test (never the developer's .flux data), in freshly created databases it drops afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from dagster_project.core.settings import REPO_ROOT, FluxSettings, get_settings
from tests.support import suite_clock
from tests.support.prerequisites import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401
from tests.support.session import changes_demo_last

# Under CI a skip fails the run, naming what was missing: the hooks imported above from tests/support/prerequisites.

# The environment as the user gave it, captured before test modules are imported: the session's settings start
# from it and nothing a test sets leaks into the next session fixture.
_USER_ENV = dict(os.environ)

TEST_DEFAULTS = {
    "FLUX_HOME": str(REPO_ROOT / ".flux" / "test"),
    "FLUX_PG_PORT": "55442",
    "FLUX_NEO4J_BOLT_PORT": "57697",
    "FLUX_REDIS_PORT": "56389",
    "FLUX_RAY_NUM_CPUS": "2",
    "FLUX_DAGSTER_DAEMON": "false",  # the tests that need a daemon start their own (test_nightly.py)
    "FLUX_LINEAGE_GUARD": "false",  # each test reads a raw zone of its own; test_cli_commands.py turns it on
}


def pytest_configure(config: pytest.Config) -> None:
    """Each test's report names the fixtures set up for it and their seconds (tests/support/suite_clock.py): a
    plugin, not conftest hooks, so that the session's fixtures are timed too."""
    config.pluginmanager.register(suite_clock, "flux-suite-clock")


@pytest.fixture(scope="session")
def flux_settings() -> Iterator[FluxSettings]:
    """Test-session settings: test ports, and database names unique to this session."""
    suffix = uuid.uuid4().hex[:8]
    values = {key: _USER_ENV.get(key, default) for key, default in TEST_DEFAULTS.items()}
    values |= {
        "FLUX_PG_DATABASE": f"flux_t_{suffix}",
        "FLUX_DAGSTER_DATABASE": f"flux_dagster_t_{suffix}",
        "FLUX_MLFLOW_DATABASE": f"flux_mlflow_t_{suffix}",
        "DAGSTER_HOME": str(Path(values["FLUX_HOME"]) / "dagster"),
    }
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("FLUX_") and k not in _USER_ENV]:
        del os.environ[key]
    os.environ.update(values)
    get_settings.cache_clear()
    try:
        yield get_settings()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        get_settings.cache_clear()


@pytest.fixture(scope="session")
def stack(flux_settings: FluxSettings) -> Iterator[FluxSettings]:
    """The real services, up; stops at the end whatever this session started, and drops its databases."""
    from dagster_project.ops.instance import render_dagster_home
    from dagster_project.stack import ServiceState, Stack

    services = Stack(flux_settings)
    was_stopped = {s.name for s in services.status() if s.state is ServiceState.STOPPED}
    try:
        services.up()
        render_dagster_home(flux_settings)
        _reset_graph(flux_settings)
        yield flux_settings
    finally:
        # The Dagster processes first: a code server whose instance database is dropped under it cannot stop cleanly.
        started = [service for service in reversed(services.services) if service.name in was_stopped]
        for service in started:
            if service in (services.daemon, services.code_server):
                service.stop()
        if services.postgres.is_running():
            _drop_session_databases(flux_settings)
        for service in started:
            if service not in (services.daemon, services.code_server):
                service.stop()


def _reset_graph(settings: FluxSettings) -> None:
    """Neo4j Community has one user database: empty it (data and schema) so the session starts fresh."""
    from neo4j import GraphDatabase

    auth = settings.neo4j_auth
    with GraphDatabase.driver(settings.resolved_neo4j_uri, auth=auth) as driver:
        driver.execute_query("MATCH (n) DETACH DELETE n")
        for record in driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN name").records:
            driver.execute_query(f"DROP CONSTRAINT `{record['name']}` IF EXISTS")
        for record in driver.execute_query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name").records:
            driver.execute_query(f"DROP INDEX `{record['name']}` IF EXISTS")


def _drop_session_databases(settings: FluxSettings) -> None:
    from dagster_project.core.stores import engine_for
    from dagster_project.stack.postgres import admin_conninfo

    engine_for.cache_clear()  # pooled connections would block DROP DATABASE
    with psycopg.connect(admin_conninfo(settings), autocommit=True) as conn:
        pg = settings.postgres
        for name in (pg.pg_database, pg.dagster_database, pg.mlflow_database):
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by folder so `-m integration` / `-m "not integration"` select them, and run the tests that
    change the demo platform last (stable order otherwise), so they need not restore it for nobody."""
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "integration" in parts:
            item.add_marker(pytest.mark.integration)
        elif "e2e" in parts:
            item.add_marker(pytest.mark.e2e)
    changes_demo_last(items)


@pytest.fixture
def fault_server() -> Iterator[object]:
    """A local stand-in for a remote API on 127.0.0.1 (see tests/support/fault_server.py)."""
    from tests.support.fault_server import FaultServer

    server = FaultServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def llm_server() -> Iterator[object]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (see tests/support/llm_server.py)."""
    from tests.support.llm_server import LLMServer

    server = LLMServer().start()
    try:
        yield server
    finally:
        server.stop()
