"""Checks on chunks, vectors and the vector index (SQL aggregates: these tables can hold millions of rows)."""

import json

import dagster as dg
from sqlalchemy import text

from dagster_project.defs.assets.chunks import chunks
from dagster_project.defs.assets.embeddings import chunk_embeddings
from dagster_project.defs.assets.search_index import ACTIVE_CHUNKS, candidate_index, chunk_bm25_index
from dagster_project.defs.assets.vector_index import chunk_vector_index
from dagster_project.defs.check_decorator import flux_check
from dagster_project.defs.resources import EmbedderResource, PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.index.tables import bm25_root, hnsw_definition, table_exists, table_key, table_rows
from retrieval.retrievers.bm25 import IDS_FILE, bm25_version


def _scalar(postgres: PostgresResource, sql: str, **params: object) -> object:
    with postgres.get_engine().connect() as conn:
        return conn.execute(text(sql), params).scalar()


@flux_check(asset=chunks, blocking=True, description="Every active document has at least one chunk.")
def every_document_has_chunks(postgres: PostgresResource) -> dg.AssetCheckResult:
    missing = _scalar(
        postgres,
        "SELECT count(*) FROM documents d WHERE d.status = 'active'"
        " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)",
    )
    return dg.AssetCheckResult(passed=missing == 0, metadata={"documents_without_chunks": int(missing)})


@flux_check(asset=chunks, blocking=True, description="No chunk belongs to a gone document.")
def no_orphan_chunks(postgres: PostgresResource) -> dg.AssetCheckResult:
    orphans = _scalar(
        postgres, "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.status <> 'active'"
    )
    return dg.AssetCheckResult(passed=orphans == 0, metadata={"orphan_chunks": int(orphans)})


@flux_check(
    asset=chunk_embeddings,
    blocking=True,
    description="Every chunk has exactly one vector, of the configured dimension, from the current "
    "model and for its current text.",
)
def one_current_vector_per_chunk(postgres: PostgresResource, embedder: EmbedderResource) -> dg.AssetCheckResult:
    stale = _scalar(
        postgres,
        "SELECT count(*) FROM chunks WHERE embedding IS NULL OR embedding_model <> :m"
        " OR vector_dims(embedding) <> :d OR embedded_content_hash <> content_hash",
        m=embedder.model_name,
        d=embedder.dimension,
    )
    return dg.AssetCheckResult(
        passed=stale == 0, metadata={"chunks_without_current_vector": int(stale), "model": embedder.model_name}
    )


@flux_check(
    asset=chunk_embeddings,
    description="Vectors are unit length (the embedder normalizes them). A warning, "
    "not a block: the index ranks by cosine distance, which a vector's length does not change; a drift means "
    "the embedder's output changed.",
)
def vector_norms_sane(postgres: PostgresResource) -> dg.AssetCheckResult:
    with postgres.get_engine().connect() as conn:
        low, high = conn.execute(
            text(
                "SELECT min(vector_norm(embedding)), max(vector_norm(embedding))"
                " FROM chunks WHERE embedding IS NOT NULL"
            )
        ).one()
    ok = low is None or (abs(low - 1.0) < 1e-3 and abs(high - 1.0) < 1e-3)
    return dg.AssetCheckResult(
        passed=ok,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"min_norm": float(low or 0), "max_norm": float(high or 0)},
    )


@flux_check(
    asset=chunk_vector_index,
    blocking=True,
    description="pgvector is installed and the chunk table for the current chunks exists with an HNSW "
    "vector_cosine_ops index and one row per active, embedded chunk.",
)
def vector_index_present(postgres: PostgresResource, settings: FluxSettingsParam) -> dg.AssetCheckResult:
    with postgres.get_engine().connect() as conn:
        ext = conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
        table, expected = table_key(conn, settings.index.hnsw_m, settings.index.hnsw_ef_construction)
        present = table_exists(conn, table)
        indexdef = hnsw_definition(conn, table) if present else None
        rows = table_rows(conn, table) if present else 0
    ok = ext is not None and indexdef is not None and "vector_cosine_ops" in indexdef and rows == expected
    return dg.AssetCheckResult(
        passed=ok,
        metadata={
            "pgvector": str(ext),
            "table": table,
            "index": str(indexdef),
            "rows": int(rows),
            "active_embedded_chunks": expected,
        },
    )


@flux_check(
    asset=chunk_bm25_index,
    blocking=True,
    description="The BM25 index for the current chunks exists and holds exactly the active chunk ids.",
)
def bm25_index_matches_chunks(postgres: PostgresResource, settings: FluxSettingsParam) -> dg.AssetCheckResult:
    with postgres.get_engine().connect() as conn:
        rows = conn.execute(text(ACTIVE_CHUNKS.replace(", c.content FROM", " FROM"))).all()
    directory = bm25_root(settings) / bm25_version(
        ((r.id, r.content_hash) for r in rows), settings.retrieval.bm25_k1, settings.retrieval.bm25_b
    )
    indexed = json.loads((directory / IDS_FILE).read_text()) if (directory / IDS_FILE).exists() else []
    expected = [r.id for r in rows]
    return dg.AssetCheckResult(
        passed=indexed == expected,
        metadata={"path": str(directory), "indexed": len(indexed), "active_chunks": len(expected)},
    )


@flux_check(
    asset=candidate_index,
    blocking=True,
    description="The candidate version's BM25 files and chunk table exist and its counts match them.",
)
def candidate_index_is_servable(postgres: PostgresResource) -> dg.AssetCheckResult:
    from retrieval.model.index_state import latest_candidate

    engine = postgres.get_engine()
    index = latest_candidate(engine)
    with engine.connect() as conn:
        present = table_exists(conn, index.chunk_table)
        rows = table_rows(conn, index.chunk_table) if present else -1
    ok = index.bm25_path.exists() and present and index.chunk_count == index.vector_count == rows
    return dg.AssetCheckResult(
        passed=ok,
        metadata={
            "index_version": index.version,
            "chunk_table": index.chunk_table,
            "table_rows": int(rows),
            "chunks": index.chunk_count,
            "bm25_present": index.bm25_path.exists(),
        },
    )


INDEX_CHECKS = [
    every_document_has_chunks,
    no_orphan_chunks,
    one_current_vector_per_chunk,
    vector_norms_sane,
    vector_index_present,
    bm25_index_matches_chunks,
    candidate_index_is_servable,
]
