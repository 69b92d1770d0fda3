"""The knowledge graph as a Dagster resource (connections: core.stores.driver_for)."""

# No `from __future__ import annotations`: Dagster reads the ResourceDependency field's annotation as an object.
from typing import TYPE_CHECKING

import dagster as dg

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import graph_driver

if TYPE_CHECKING:
    from neo4j import Driver


class Neo4jResource(dg.ConfigurableResource):
    """The knowledge graph at FLUX_NEO4J_URI (or the embedded server), from the settings resource."""

    settings: dg.ResourceDependency[FluxSettings]

    def get_driver(self) -> "Driver":
        settings = self.settings
        return graph_driver(settings)
