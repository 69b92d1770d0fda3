"""Neo4j over Bolt with the official driver; one driver per (uri, user) per process."""

from __future__ import annotations

from functools import lru_cache

import dagster as dg
from neo4j import Driver, GraphDatabase
from pydantic import Field


@lru_cache(maxsize=8)
def driver_for(uri: str, user: str, password: str, fail_fast: bool = False) -> Driver:
    """`fail_fast` (serving): a 1.5 s connect timeout and no transaction retries, so an outage shows at once;
    pipelines keep the driver's retries, which ride out a restarting server."""
    # Notifications ("label does not exist yet") are advice for query authors, not for pipeline logs.
    if fail_fast:
        return GraphDatabase.driver(uri, auth=(user, password), connection_timeout=1.5,
                                    max_transaction_retry_time=0.0, connection_acquisition_timeout=2.0,
                                    notifications_min_severity="OFF")
    return GraphDatabase.driver(uri, auth=(user, password), connection_timeout=10, notifications_min_severity="OFF")


class Neo4jResource(dg.ConfigurableResource):
    """The knowledge graph."""

    uri: str = Field(description="Bolt URI (FLUX_NEO4J_URI)")
    user: str = Field(default="neo4j", description="FLUX_NEO4J_USER")
    password: str = Field(description="FLUX_NEO4J_PASSWORD")

    def get_driver(self) -> Driver:
        return driver_for(self.uri, self.user, self.password)
