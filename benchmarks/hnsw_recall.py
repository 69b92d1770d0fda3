"""HNSW recall@10 against exact search, and query latency, as ef_search moves.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/hnsw_recall.py [--queries 200]

Queries are PubMedQA questions (the pubmed documents' titles) embedded with the configured model. Exact top-10
comes from a sequential scan (index scans disabled); approximate top-10 from the HNSW index at each ef_search.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from pgvector.psycopg import register_vector
from sqlalchemy import text

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.index.encoder import load_sentence_model
from dagster_project.index.tables import as_sql, qualified
from retrieval.model.index_state import current_index

EF_SEARCH = (10, 20, 40, 64, 100, 128, 160, 200)
TOP_K = 10


def top_ids(
    conn,
    table: str,
    vector: np.ndarray,
    ef_search: int | None,  # type: ignore[no-untyped-def]
) -> tuple[list[str], float]:
    with conn.begin():
        if ef_search is None:
            conn.exec_driver_sql("SET LOCAL enable_indexscan = off")
        else:
            conn.exec_driver_sql(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
        start = time.perf_counter()
        ids = (
            conn.execute(text(f"SELECT id FROM {table} ORDER BY embedding <=> :q LIMIT :k"), {"q": vector, "k": TOP_K})
            .scalars()
            .all()
        )
        return list(ids), (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    settings = get_settings()
    engine = engine_for(settings.platform_database_url)
    with engine.connect() as conn:
        questions = (
            conn.execute(
                text("SELECT title FROM documents WHERE source = 'pubmed' ORDER BY external_id LIMIT :n"),
                {"n": args.queries},
            )
            .scalars()
            .all()
        )
    # The served version's own chunk table (blue/green) carries the HNSW index.
    table = as_sql(qualified(current_index(engine).chunk_table))
    with engine.connect() as conn:
        chunks = conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
    vectors = load_sentence_model(settings.index.embedding_model).encode(list(questions), normalize_embeddings=True)
    print(f"{len(questions)} queries over {chunks} chunk vectors, top-{TOP_K}")
    with engine.connect() as conn:
        register_vector(conn.connection.driver_connection)
        exact = [top_ids(conn, table, v, None) for v in vectors]
        lat = [ms for _, ms in exact]
        print(
            f"{'exact (seq scan)':<18}{'recall 1.000':>14}  p50 {np.percentile(lat, 50):6.2f} ms"
            f"  p95 {np.percentile(lat, 95):6.2f} ms"
        )
        for ef in EF_SEARCH:
            approx = [top_ids(conn, table, v, ef) for v in vectors]
            recall = np.mean([len(set(a) & set(e)) / TOP_K for (a, _), (e, _) in zip(approx, exact, strict=True)])
            lat = [ms for _, ms in approx]
            print(
                f"{f'ef_search={ef}':<18}{f'recall {recall:.3f}':>14}  p50 {np.percentile(lat, 50):6.2f} ms"
                f"  p95 {np.percentile(lat, 95):6.2f} ms"
            )


if __name__ == "__main__":
    main()
