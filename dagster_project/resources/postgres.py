"""Postgres through SQLAlchemy 2 Core on psycopg 3; one pooled engine per URL per process."""

from functools import lru_cache

import dagster as dg
from sqlalchemy import Engine, create_engine

from dagster_project.settings import FluxSettings


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    # pre_ping: a restarted embedded server must not leave dead pooled connections behind.
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)


class PostgresResource(dg.ConfigurableResource):
    """The platform database (documents, chunks, vectors, quarantine), at the settings' FLUX_DATABASE_URL (or the
    embedded server). Derived from the settings resource, so no URL or password is shown as resource config."""

    settings: dg.ResourceDependency[FluxSettings]

    def get_engine(self) -> Engine:
        return engine_for(self.settings.platform_database_url)
