"""HNSW build time, recall@10 and query latency as the vector table grows: 10k, 100k, 1M vectors.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/hnsw_scaling.py [--sizes 10000 100000 1000000]

Synthetic vectors drawn around the real chunk vectors of the served index: each is a random real chunk vector plus
Gaussian noise of norm 0.5, normalised (cosine about 0.9 to the chunk it came from), so the table keeps the real
corpus's clusters at any size. Queries are 200 PubMedQA questions embedded with the configured model. Exact top-10
comes from numpy on the same float32 vectors; approximate top-10 from pgvector's HNSW (m and ef_construction from
settings, ef_search 100 as served) in a scratch table that is dropped afterwards. The baseline in each row is an
exact sequential-scan query on that table (the first 20 questions; `--exact-only` times these alone, without
building the index). Writes hnsw_scaling.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import psycopg
from loglog import save_loglog
from pgvector.psycopg import register_vector
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.core.stores import engine_for
from dagster_project.index.encoder import load_sentence_model
from dagster_project.index.tables import as_sql, qualified
from retrieval.model.index_state import current_index

PLOT = Path(__file__).with_name("hnsw_scaling.png")
TABLE = "bench_hnsw_scaling"
TOP_K = 10
EF_SEARCH = 100


def synthetic(base: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    noise = rng.normal(size=(n, base.shape[1])).astype(np.float32)
    noise *= 0.5 / np.linalg.norm(noise, axis=1, keepdims=True)
    out = base[rng.integers(0, len(base), n)] + noise
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def real_vectors_and_queries(settings: FluxSettings, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """The served index's chunk vectors, and `n_queries` PubMed titles embedded with the configured model."""
    engine = engine_for(settings.platform_database_url)
    with engine.connect() as conn:
        table = as_sql(qualified(current_index(engine).chunk_table))
        base = np.array(
            [
                np.asarray(v, dtype=np.float32)
                for v in conn.execute(text(f"SELECT embedding::real[] FROM {table}")).scalars()
            ]
        )
        questions = (
            conn.execute(
                text("SELECT title FROM documents WHERE source = 'pubmed' ORDER BY external_id LIMIT :n"),
                {"n": n_queries},
            )
            .scalars()
            .all()
        )
    encoder = load_sentence_model(settings.index.embedding_model)
    return base, np.asarray(encoder.encode(list(questions), normalize_embeddings=True), dtype=np.float32)


def load_table(conn: psycopg.Connection, vectors: np.ndarray, dim: int) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    conn.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, embedding vector({dim}))")
    with conn.cursor().copy(f"COPY {TABLE} (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int4", "vector"])
        for i, vector in enumerate(vectors):
            copy.write_row((i, vector))
    conn.commit()


def timed_queries(conn: psycopg.Connection, queries: np.ndarray, exact_scan: bool) -> tuple[list[list[int]], list]:
    # `(distance) + 0` is an expression no index serves: a sequential scan whatever the planner would prefer
    order = "(embedding <=> %s) + 0" if exact_scan else "embedding <=> %s"
    ids, ms = [], []
    for query in queries:
        with conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}")
            start = time.perf_counter()
            rows = conn.execute(f"SELECT id FROM {TABLE} ORDER BY {order} LIMIT {TOP_K}", (query,)).fetchall()
            ms.append((time.perf_counter() - start) * 1000)
        ids.append([r[0] for r in rows])
    return ids, ms


def exact_only(
    conn: psycopg.Connection, base: np.ndarray, queries: np.ndarray, sizes: list[int], rng: np.random.Generator
) -> None:
    """The baseline column alone (same synthetic tables, same seed): sequential scans, checked against numpy."""
    for size in sizes:
        vectors = synthetic(base, size, rng)
        load_table(conn, vectors, base.shape[1])
        found, scan_ms = timed_queries(conn, queries[:20], exact_scan=True)
        exact = np.argsort(-(queries[:20] @ vectors.T), axis=1)[:, :TOP_K]
        agree = np.mean([len(set(f) & set(e.tolist())) / TOP_K for f, e in zip(found, exact, strict=True)])
        print(
            f"{size:>10,} exact scan p50 {np.percentile(scan_ms, 50):7.1f}ms  p95 {np.percentile(scan_ms, 95):7.1f}ms"
            f"  (top-10 equal to numpy's: {agree:.3f})",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--maintenance-work-mem", default="3GB", help="enough for the 1M graph to build in memory")
    parser.add_argument("--exact-only", action="store_true", help="time the sequential scans only (no index)")
    args = parser.parse_args()
    settings = get_settings()
    base, queries = real_vectors_and_queries(settings, args.queries)
    m, ef_construction = settings.index.hnsw_m, settings.index.hnsw_ef_construction
    print(
        f"{len(base)} real chunk vectors → synthetic tables; {len(queries)} queries; m={m}, "
        f"ef_construction={ef_construction}, ef_search={EF_SEARCH}"
    )
    print(f"{'vectors':>10} {'load':>8} {'build':>8} {'recall@10':>10} {'p50':>8} {'p95':>8} {'exact p95':>10}")
    rng = np.random.default_rng(0)
    url = settings.platform_database_url.replace("postgresql+psycopg://", "postgresql://")
    sizes, builds, p95s, recalls = [], [], [], []
    with psycopg.connect(url) as conn:
        register_vector(conn)
        try:
            if args.exact_only:
                return exact_only(conn, base, queries, args.sizes, rng)
            for size in args.sizes:
                vectors = synthetic(base, size, rng)
                start = time.perf_counter()
                load_table(conn, vectors, base.shape[1])
                loaded = time.perf_counter() - start
                conn.execute(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'")
                start = time.perf_counter()
                conn.execute(
                    f"CREATE INDEX ON {TABLE} USING hnsw (embedding vector_cosine_ops)"
                    f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
                )
                conn.commit()
                built = time.perf_counter() - start
                exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :TOP_K]
                timed_queries(conn, queries[:20], exact_scan=False)  # warm the index pages
                approx, ms = timed_queries(conn, queries, exact_scan=False)
                _, scan_ms = timed_queries(conn, queries[:20], exact_scan=True)
                recall = float(
                    np.mean([len(set(a) & set(e.tolist())) / TOP_K for a, e in zip(approx, exact, strict=True)])
                )
                sizes.append(size)
                builds.append(built)
                p95s.append(float(np.percentile(ms, 95)))
                recalls.append(recall)
                print(
                    f"{size:>10,} {loaded:>7.1f}s {built:>7.1f}s {recall:>10.3f} {np.percentile(ms, 50):>6.2f}ms"
                    f" {p95s[-1]:>6.2f}ms {np.percentile(scan_ms, 95):>8.1f}ms"
                    f"  (HNSW {np.percentile(scan_ms, 95) / p95s[-1]:.0f}x faster at p95)",
                    flush=True,
                )
        finally:
            conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
            conn.commit()
    save_loglog(
        PLOT,
        f"pgvector HNSW (m={m}, ef_construction={ef_construction}; 2 cores)",
        "vectors",
        "seconds (build) / milliseconds (p95)",
        {"build, s": (sizes, builds), "query p95, ms": (sizes, p95s)},
    )
    print(f"plot: {PLOT}; recall@10 {', '.join(f'{r:.3f}' for r in recalls)}")


if __name__ == "__main__":
    main()
