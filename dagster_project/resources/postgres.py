"""Postgres through SQLAlchemy 2 Core on psycopg 3; one pooled engine per URL per process."""

from __future__ import annotations

from functools import lru_cache

import dagster as dg
from pydantic import Field
from sqlalchemy import Engine, create_engine


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    # pre_ping: a restarted embedded server must not leave dead pooled connections behind.
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)


class PostgresResource(dg.ConfigurableResource):
    """The platform database (documents, chunks, vectors, quarantine)."""

    database_url: str = Field(description="SQLAlchemy URL, postgresql+psycopg://… (FLUX_DATABASE_URL)")

    def get_engine(self) -> Engine:
        return engine_for(self.database_url)
