"""Stage 8 — the BM25 index over chunks, and the index version recorded as a candidate.

`candidate_index` records one `index_versions` row (version, BM25 path, counts, dataset and pipeline versions,
the Dagster run id). The eval scorecards measure that candidate; `published_index` (publish.py) serves it.
"""

import hashlib
import time

import dagster as dg
from sqlalchemy import text
from sqlalchemy.engine import Connection

from dagster_project.core.versions import pipeline_version
from dagster_project.defs.assets.chunks import INDEX_GROUP, chunks
from dagster_project.defs.assets.graph import pathway_vectors
from dagster_project.defs.assets.resolution import pathway_resolution
from dagster_project.defs.assets.vector_index import chunk_vector_index
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.index.tables import bm25_root, table_exists, table_key
from retrieval.retrievers.bm25 import bm25_version, build_index

SERVING_GROUP = "serving"
ACTIVE_CHUNKS = (
    "SELECT c.id, c.content_hash, c.content FROM chunks c JOIN documents d ON d.id = c.document_id"
    " WHERE d.status = 'active' ORDER BY c.id"
)


@dg.asset(
    group_name=INDEX_GROUP,
    kinds={"python"},
    deps=[chunks],
    description="BM25 (bm25s, FLUX_BM25_K1 / FLUX_BM25_B) over the text of active chunks, saved under "
    "`<FLUX_HOME>/indexes/bm25/<version>`; the version hashes chunk ids + content hashes + k1/b, so an unchanged "
    "corpus is not rebuilt and a rebuild never overwrites the index being served.",
)
def chunk_bm25_index(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    with postgres.get_engine().connect() as conn:
        rows = conn.execute(text(ACTIVE_CHUNKS)).all()
    k1, b = settings.retrieval.bm25_k1, settings.retrieval.bm25_b
    version = bm25_version(((r.id, r.content_hash) for r in rows), k1, b)
    directory = bm25_root(settings) / version
    action = "kept" if directory.exists() else "built"
    started = time.monotonic()
    count = build_index([r.id for r in rows], [r.content for r in rows], k1, b, directory)
    context.log.info(f"BM25 index {version} {action}: {count} chunks in {time.monotonic() - started:.1f}s")
    return dg.MaterializeResult(
        metadata={"version": version, "path": str(directory), "chunks": count, "action": action, "k1": k1, "b": b}
    )


def _mapping_fingerprint(conn: Connection) -> str:
    """The graph side of what an answer depends on (the chunk side is the chunk table's key)."""
    return str(
        conn.execute(
            text(
                "SELECT coalesce(md5(string_agg(reactome_id || kegg_id || relation, ','"
                " ORDER BY reactome_id, kegg_id)),"
                " '') FROM pathway_mappings"
            )
        ).scalar_one()
    )


def dataset_version(conn: Connection) -> str:
    """The release each source's served rows come from, e.g. `hgnc=HGNC export 2024-07-23 #c5483047;kegg=…`: a
    kept source's served release (a newer pull its churn check stopped is not served), else its latest pull."""
    rows = conn.execute(
        text("""
        SELECT DISTINCT ON (source) source, release FROM (
            SELECT source, release_key AS release, served_at AS at, 0 AS kept FROM source_releases
            WHERE served_at IS NOT NULL
            UNION ALL
            SELECT source, release, retrieved_at, 1 FROM raw_pulls) AS r
        ORDER BY source, kept, at DESC""")
    ).all()
    return ";".join(f"{r.source}={r.release}" for r in rows) or "unknown"


@dg.asset(
    group_name=SERVING_GROUP,
    kinds={"postgres"},
    # resolution_release: its blocking churn check stops a candidate built on a resolution that lost too much.
    deps=[chunk_vector_index, chunk_bm25_index, pathway_vectors, pathway_resolution, "resolution_release"],
    description="Records the retrieval index (vectors, BM25, graph mapping) as a candidate version with its "
    "counts, dataset / pipeline versions and this Dagster run id. The scorecards measure it; published_index "
    "makes it the one serving reads.",
)
def candidate_index(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    engine = postgres.get_engine()
    with engine.connect() as conn:
        rows = conn.execute(text(ACTIVE_CHUNKS.replace(", c.content FROM", " FROM"))).all()
        bm25 = bm25_version(
            ((r.id, r.content_hash) for r in rows), settings.retrieval.bm25_k1, settings.retrieval.bm25_b
        )
        counts = conn.execute(
            text(
                "SELECT count(*) AS chunks, count(embedding) AS vectors,"
                " (SELECT count(*) FROM pathways WHERE status = 'active') AS pathways FROM chunks"
            )
        ).one()
        table, _ = table_key(conn, settings.index.hnsw_m, settings.index.hnsw_ef_construction)
        table_ready = table_exists(conn, table)
        datasets = dataset_version(conn)
        mapping = _mapping_fingerprint(conn)
    bm25_path = bm25_root(settings) / bm25
    if not bm25_path.exists():
        raise dg.Failure(f"BM25 index {bm25} is missing at {bm25_path}; materialize chunk_bm25_index first")
    if counts.vectors < counts.chunks:
        raise dg.Failure(f"{counts.chunks - counts.vectors} chunks have no vector; not publishing a partial index")
    if not table_ready:
        raise dg.Failure(f"chunk table {table} for the current chunks is missing; materialize chunk_vector_index")
    version = hashlib.sha256(f"{table}|{mapping}|{bm25}|{settings.index.embedding_model}".encode()).hexdigest()[:16]
    with engine.begin() as conn:
        created = conn.execute(
            text("""
            INSERT INTO index_versions (version, bm25_version, bm25_path, embedding_model, chunk_count,
                vector_count, pathway_count, dataset_version, pipeline_version, dagster_run_id, chunk_table)
            VALUES (:v, :bm25, :path, :model, :chunks, :vectors, :pathways, :dv, :pv, :run, :table)
            ON CONFLICT (version) DO UPDATE SET candidate_at = now()
            RETURNING (xmax = 0) AS created, dagster_run_id
        """),
            {
                "v": version,
                "bm25": bm25,
                "path": str(bm25_path),
                "model": settings.index.embedding_model,
                "chunks": counts.chunks,
                "vectors": counts.vectors,
                "pathways": counts.pathways,
                "dv": datasets,
                "pv": pipeline_version(),
                "run": context.run_id,
                "table": table,
            },
        ).one()
    context.log.info(f"index {version} {'recorded' if created.created else 'unchanged'} as the candidate")
    return dg.MaterializeResult(
        metadata={
            "index_version": version,
            "new_version": bool(created.created),
            "built_by_run": created.dagster_run_id,
            "chunks": counts.chunks,
            "vectors": counts.vectors,
            "pathways": counts.pathways,
            "dataset_version": datasets,
            "bm25_version": bm25,
            "chunk_table": table,
        }
    )
