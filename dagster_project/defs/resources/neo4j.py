"""The knowledge graph as a Dagster resource (connections: core.stores.driver_for)."""

import dagster as dg
from neo4j import Driver

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import graph_driver


class Neo4jResource(dg.ConfigurableResource):
    """The knowledge graph at FLUX_NEO4J_URI (or the embedded server), from the settings resource."""

    settings: dg.ResourceDependency[FluxSettings]

    def get_driver(self) -> Driver:
        settings = self.settings
        return graph_driver(settings)
