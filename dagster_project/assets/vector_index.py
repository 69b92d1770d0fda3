"""Stage 5 — the HNSW (vector_cosine_ops) index over chunk vectors, (re)built after bulk loads or when m /
ef_construction change; ef_search is a query-time setting."""

import re

import dagster as dg
from sqlalchemy import text

from dagster_project.assets.chunks import INDEX_GROUP
from dagster_project.assets.embeddings import chunk_embeddings
from dagster_project.resources import PostgresResource
from dagster_project.settings import get_settings

INDEX_NAME = "chunks_embedding_hnsw"


def _index_params(indexdef: str | None) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"(m|ef_construction)='?(\d+)'?", indexdef or "")}


@dg.asset(
    group_name=INDEX_GROUP,
    kinds={"postgres"},
    deps=[chunk_embeddings],
    description="HNSW index (vector_cosine_ops) on chunks.embedding with FLUX_HNSW_M and "
    "FLUX_HNSW_EF_CONSTRUCTION; rebuilt when missing or built with other parameters.",
)
def chunk_vector_index(context: dg.AssetExecutionContext, postgres: PostgresResource) -> dg.MaterializeResult:
    settings = get_settings()
    wanted = {"m": settings.hnsw_m, "ef_construction": settings.hnsw_ef_construction}
    engine = postgres.get_engine()
    with engine.connect() as conn:
        indexdef = conn.execute(text("SELECT indexdef FROM pg_indexes WHERE indexname = :n"),
                                {"n": INDEX_NAME}).scalar()
    action = "kept"
    if indexdef is None or _index_params(indexdef) != wanted:
        action = "built" if indexdef is None else "rebuilt"
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL maintenance_work_mem = '512MB'"))
            conn.execute(text(f"DROP INDEX IF EXISTS {INDEX_NAME}"))
            # m and ef_construction are validated integers from settings, not user text.
            conn.execute(text(
                f"CREATE INDEX {INDEX_NAME} ON chunks USING hnsw (embedding vector_cosine_ops)"
                f" WITH (m = {int(wanted['m'])}, ef_construction = {int(wanted['ef_construction'])})"))
    context.log.info(f"HNSW index {action} with {wanted}")
    with engine.connect() as conn:
        vectors = conn.execute(text("SELECT count(embedding) FROM chunks")).scalar_one()
    return dg.MaterializeResult(metadata={"action": action, **wanted, "ef_search": settings.hnsw_ef_search,
                                          "vectors": vectors})
