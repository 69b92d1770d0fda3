"""Checks on chunks, vectors and the vector index (SQL aggregates: these tables can hold millions of rows)."""

import dagster as dg
from sqlalchemy import text

from dagster_project.assets.chunks import chunks
from dagster_project.assets.embeddings import chunk_embeddings
from dagster_project.assets.vector_index import INDEX_NAME, chunk_vector_index
from dagster_project.resources import EmbedderResource, PostgresResource


def _scalar(postgres: PostgresResource, sql: str, **params: object) -> object:
    with postgres.get_engine().connect() as conn:
        return conn.execute(text(sql), params).scalar()


@dg.asset_check(asset=chunks, blocking=True, description="Every active document has at least one chunk.")
def every_document_has_chunks(postgres: PostgresResource) -> dg.AssetCheckResult:
    missing = _scalar(postgres, "SELECT count(*) FROM documents d WHERE d.status = 'active'"
                                " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)")
    return dg.AssetCheckResult(passed=missing == 0, metadata={"documents_without_chunks": int(missing)})


@dg.asset_check(asset=chunks, blocking=True, description="No chunk belongs to a gone document.")
def no_orphan_chunks(postgres: PostgresResource) -> dg.AssetCheckResult:
    orphans = _scalar(postgres, "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id"
                                " WHERE d.status <> 'active'")
    return dg.AssetCheckResult(passed=orphans == 0, metadata={"orphan_chunks": int(orphans)})


@dg.asset_check(asset=chunk_embeddings, blocking=True,
                description="Every chunk has exactly one vector, of the configured dimension, from the current "
                "model and for its current text.")
def one_current_vector_per_chunk(postgres: PostgresResource, embedder: EmbedderResource) -> dg.AssetCheckResult:
    stale = _scalar(postgres, "SELECT count(*) FROM chunks WHERE embedding IS NULL OR embedding_model <> :m"
                              " OR vector_dims(embedding) <> :d OR embedded_content_hash <> content_hash",
                    m=embedder.model_name, d=embedder.dimension)
    return dg.AssetCheckResult(passed=stale == 0, metadata={"chunks_without_current_vector": int(stale),
                                                            "model": embedder.model_name})


@dg.asset_check(asset=chunk_embeddings, description="Vectors are unit length (the embedder normalizes them).")
def vector_norms_sane(postgres: PostgresResource) -> dg.AssetCheckResult:
    with postgres.get_engine().connect() as conn:
        low, high = conn.execute(text("SELECT min(vector_norm(embedding)), max(vector_norm(embedding))"
                                      " FROM chunks WHERE embedding IS NOT NULL")).one()
    ok = low is None or (abs(low - 1.0) < 1e-3 and abs(high - 1.0) < 1e-3)
    return dg.AssetCheckResult(passed=ok, metadata={"min_norm": float(low or 0), "max_norm": float(high or 0)})


@dg.asset_check(asset=chunk_vector_index, blocking=True,
                description="pgvector is installed and chunks.embedding has an HNSW vector_cosine_ops index.")
def vector_index_present(postgres: PostgresResource) -> dg.AssetCheckResult:
    ext = _scalar(postgres, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    indexdef = _scalar(postgres, "SELECT indexdef FROM pg_indexes WHERE indexname = :n", n=INDEX_NAME)
    ok = ext is not None and indexdef is not None and "vector_cosine_ops" in str(indexdef)
    return dg.AssetCheckResult(passed=ok, metadata={"pgvector": str(ext), "index": str(indexdef)})


INDEX_CHECKS = [every_document_has_chunks, no_orphan_chunks, one_current_vector_per_chunk, vector_norms_sane,
                vector_index_present]
