"""The platform database as a Dagster resource (connections: core.stores.engine_for)."""

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from psycopg.errors import UndefinedTable
from sqlalchemy import Engine
from sqlalchemy.exc import ProgrammingError

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for


class PostgresResource(dg.ConfigurableResource):
    """The platform database (documents, chunks, vectors, quarantine), at the settings' FLUX_DATABASE_URL (or the
    embedded server). Derived from the settings resource, so no URL or password is shown as resource config."""

    settings: dg.ResourceDependency[FluxSettings]

    def get_engine(self) -> Engine:
        return engine_for(self.settings.platform_database_url)


@contextmanager
def platform_tables_required() -> Iterator[None]:
    """A missing platform table fails the asset at once (no retry can create it) with what to run instead."""
    try:
        yield
    except ProgrammingError as exc:
        if not isinstance(exc.orig, UndefinedTable):
            raise
        raise dg.Failure(
            description=f"the platform tables are missing from the database ({exc.orig}): materialize "
            "postgres_schema first (flux materialize --select postgres_schema)",
            allow_retries=False,
        ) from None
