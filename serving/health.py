"""/health: each store's status and the published index with its counts. Postgres and a published index are
required (503 without them); Neo4j and Redis are not: without Neo4j answers come from text evidence, without Redis
the caches live in memory ("degraded" either way)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import redis
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, OperationalError

from dagster_project.core.settings import FluxConfigError, FluxSettings
from retrieval.model.index_state import current_index

if TYPE_CHECKING:
    from retrieval.pipeline import Pipeline


def store_error_message(exc: BaseException) -> str | None:
    """A one-line message for a dead store, or None when the exception is not a store outage."""
    from neo4j.exceptions import ServiceUnavailable, SessionExpired

    if isinstance(exc, OperationalError) or (isinstance(exc, DBAPIError) and exc.connection_invalidated):
        first = str(getattr(exc, "orig", exc)).splitlines()[0] if str(exc) else type(exc).__name__
        return f"Postgres is unavailable: {first}"
    if isinstance(exc, ServiceUnavailable | SessionExpired):
        return f"Neo4j is unavailable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None


@functools.cache
def _engine(url: str) -> Engine:
    """One pool per database for every probe (a new engine per request would open a connection each time and
    leave its pool to the garbage collector)."""
    from dagster_project.core.stores import engine_for

    return engine_for(url)


def _postgres(settings: FluxSettings) -> dict[str, Any]:
    engine = _engine(settings.platform_database_url)
    try:
        with engine.connect() as conn:
            counts = (
                conn.execute(
                    text(
                        "SELECT (SELECT count(*) FROM documents WHERE status = 'active') AS documents,"
                        " (SELECT count(*) FROM chunks) AS chunks, (SELECT count(embedding) FROM chunks) AS vectors,"
                        " (SELECT count(*) FROM pathways WHERE status = 'active') AS pathways"
                    )
                )
                .one()
                ._asdict()
            )
    except (OperationalError, DBAPIError) as exc:
        return {"ok": False, "detail": store_error_message(exc) or str(exc).splitlines()[0]}
    try:
        index = current_index(engine)
    except FluxConfigError as exc:
        return {"ok": True, "counts": counts, "index": None, "detail": str(exc)}
    return {
        "ok": True,
        "counts": counts,
        "index": {
            "version": index.version,
            "published_at": index.published_at.isoformat(),
            "dagster_run_id": index.dagster_run_id,
            "dataset_version": index.dataset_version,
            "pipeline_version": index.pipeline_version,
            "chunks": index.chunk_count,
            "vectors": index.vector_count,
            "pathways": index.pathway_count,
        },
    }


def _neo4j(settings: FluxSettings) -> dict[str, Any]:
    from neo4j import RoutingControl
    from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

    from dagster_project.core.stores import graph_driver

    driver = graph_driver(settings, fail_fast=True)
    try:
        records = driver.execute_query(
            "CALL db.labels() YIELD label CALL (label) { MATCH (n) WHERE label IN labels(n) RETURN count(n) AS n }"
            " RETURN label, n",
            routing_=RoutingControl.READ,
        ).records
    except (Neo4jError, ServiceUnavailable, SessionExpired, OSError) as exc:
        return {"ok": False, "detail": f"Neo4j is unavailable: {str(exc).splitlines()[0] if str(exc) else exc}"}
    return {"ok": True, "counts": {r["label"]: r["n"] for r in records if r["label"] != "FluxMigration"}}


def _redis(settings: FluxSettings, pipeline: Pipeline | None) -> dict[str, Any]:
    if not settings.cache.cache_enabled:  # no caches: Redis is not used, so it cannot degrade anything
        return {"ok": True, "cache_backend": "disabled"}
    if pipeline is not None:  # its cache's backend, which falls back to memory while Redis is down
        backend = pipeline.retriever.cache.backend
        return {"ok": backend == "redis", "cache_backend": backend}
    try:
        redis.Redis.from_url(settings.resolved_redis_url, socket_timeout=0.5, socket_connect_timeout=0.5).ping()
    except redis.RedisError as exc:
        return {"ok": False, "cache_backend": "memory", "detail": f"Redis is unavailable: {exc}"}
    return {"ok": True, "cache_backend": "redis"}


def health_report(settings: FluxSettings, pipeline: Pipeline | None) -> dict[str, Any]:
    """`pipeline`: the service's, if it is built (its cache tells Redis's state); None probes Redis directly."""
    postgres, neo4j, cache = _postgres(settings), _neo4j(settings), _redis(settings, pipeline)
    required_ok = postgres["ok"] and postgres.get("index") is not None
    status = "down" if not required_ok else "ok" if neo4j["ok"] and cache["ok"] else "degraded"
    return {"status": status, "services": {"postgres": postgres, "neo4j": neo4j, "redis": cache}}
