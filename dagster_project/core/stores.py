"""Connections to the stores, one pooled engine or driver per target per process. The Dagster resources, the
query service and the CLI all connect through these."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine

from dagster_project.core.settings import FluxSettings

if TYPE_CHECKING:
    from neo4j import Driver


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    """Postgres through SQLAlchemy 2 Core on psycopg 3."""
    # pre_ping: a restarted embedded server must not leave dead pooled connections behind.
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)


@lru_cache(maxsize=8)
def driver_for(uri: str, user: str, password: str, fail_fast: bool = False) -> Driver:
    """Neo4j over Bolt. `fail_fast` (serving): a 1.5 s connect timeout and no transaction retries, so an outage
    shows at once; pipelines keep the driver's retries, which ride out a restarting server."""
    # Imported here: the neo4j package loads pandas and numpy (about half a second) and only a connection needs it.
    from neo4j import GraphDatabase

    # Notifications ("label does not exist yet") are advice for query authors, not for pipeline logs.
    if fail_fast:
        return GraphDatabase.driver(
            uri,
            auth=(user, password),
            connection_timeout=1.5,
            max_transaction_retry_time=0.0,
            connection_acquisition_timeout=2.0,
            notifications_min_severity="OFF",
        )
    return GraphDatabase.driver(uri, auth=(user, password), connection_timeout=10, notifications_min_severity="OFF")


def graph_driver(settings: FluxSettings, fail_fast: bool = False) -> Driver:
    """The process-wide driver for the Neo4j these settings name."""
    return driver_for(settings.resolved_neo4j_uri, *settings.neo4j_auth, fail_fast=fail_fast)
