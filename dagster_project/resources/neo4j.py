"""Neo4j over Bolt with the official driver; one driver per (uri, user) per process."""

from functools import lru_cache

import dagster as dg
from neo4j import Driver, GraphDatabase

from dagster_project.settings import FluxSettings


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
    """The knowledge graph at FLUX_NEO4J_URI (or the embedded server), from the settings resource."""

    settings: dg.ResourceDependency[FluxSettings]

    def get_driver(self) -> Driver:
        settings = self.settings
        return driver_for(settings.resolved_neo4j_uri, settings.neo4j_user, settings.neo4j_password.get_secret_value())
