"""Stage 5 — the chunk table a new index version will serve from: an immutable copy of the active, embedded
chunks with its own HNSW (vector_cosine_ops) index, built beside the published one (blue/green; see
index/tables.py). ef_search is a query-time setting."""

import time

import dagster as dg

from dagster_project.defs.assets.chunks import INDEX_GROUP
from dagster_project.defs.assets.embeddings import chunk_embeddings
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.index.tables import build_chunk_table


@dg.asset(
    group_name=INDEX_GROUP,
    kinds={"postgres"},
    deps=[chunk_embeddings],
    description="The versioned serving table `flux_index.chunks_<key>` (chunk text, source, title, vector) with an "
    "HNSW index built with FLUX_HNSW_M / FLUX_HNSW_EF_CONSTRUCTION. The key hashes its content and parameters: "
    "unchanged chunks keep their table, changed ones get a new one while the published table goes on serving.",
)
def chunk_vector_index(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    started = time.monotonic()
    table = build_chunk_table(postgres.get_engine(), settings.index.hnsw_m, settings.index.hnsw_ef_construction)
    seconds = round(time.monotonic() - started, 2)
    context.log.info(f"chunk table {table.name} {table.action}: {table.rows} vectors in {seconds}s")
    return dg.MaterializeResult(
        metadata={
            "table": table.name,
            "action": table.action,
            "vectors": table.rows,
            "m": settings.index.hnsw_m,
            "ef_construction": settings.index.hnsw_ef_construction,
            "ef_search": settings.index.hnsw_ef_search,
            "seconds": seconds,
        }
    )
