"""The platform database as a Dagster resource (connections: core.stores.engine_for)."""

import dagster as dg
from sqlalchemy import Engine

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for


class PostgresResource(dg.ConfigurableResource):
    """The platform database (documents, chunks, vectors, quarantine), at the settings' FLUX_DATABASE_URL (or the
    embedded server). Derived from the settings resource, so no URL or password is shown as resource config."""

    settings: dg.ResourceDependency[FluxSettings]

    def get_engine(self) -> Engine:
        return engine_for(self.settings.platform_database_url)
