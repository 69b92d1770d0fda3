"""HNSW at one table size (default 1M vectors): ef_search swept for recall@10 and latency, `vector` against `halfvec`
storage (index size, build time, recall), and the planner's own choice at each ef_search.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/hnsw_sweep.py [--size 1000000] \\
        [--ef 40 64 100 160 200 300 400] [--m 16] [--ef-construction 64] [--keep]

The table is `hnsw_scaling.py`'s: synthetic vectors around the real chunk vectors of the served index, 200 PubMedQA
titles as queries, exact top-10 from numpy. Every timed query runs as the served search does
(`PostgresRetriever.scan_settings`: the ef_search under test, sequential scans off); the `planner` column is what
the planner picks at that ef_search when sequential scans are allowed. `halfvec` is an expression index
(`embedding::halfvec`) on the same table, queried with a halfvec query vector. `--keep` leaves the table and its
indexes for a later run, which then skips the load and the builds. `--m` / `--ef-construction` build with other
graph parameters than the configured FLUX_HNSW_M / FLUX_HNSW_EF_CONSTRUCTION; each combination is an index of its
own, so a kept table can hold several.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import psycopg
from hnsw_scaling import TABLE, TOP_K, load_table, real_vectors_and_queries, synthetic
from pgvector.psycopg import register_vector

from dagster_project.core.settings import get_settings

ORDER = {"vector": "embedding <=> %s::vector", "halfvec": "embedding::halfvec({dim}) <=> %s::halfvec({dim})"}
INDEX = {"vector": "embedding vector_cosine_ops", "halfvec": "(embedding::halfvec({dim})) halfvec_cosine_ops"}


def index_name(storage: str, m: int, ef_construction: int) -> str:
    return f"{TABLE}_{storage}_m{int(m)}_efc{int(ef_construction)}_idx"


def search(
    conn: psycopg.Connection, storage: str, dim: int, queries: np.ndarray, ef: int
) -> tuple[list[list[int]], list[float]]:
    order = ORDER[storage].format(dim=dim)
    ids, ms = [], []
    for query in queries:
        with conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
            conn.execute("SET LOCAL enable_seqscan = off")
            start = time.perf_counter()
            rows = conn.execute(f"SELECT id FROM {TABLE} ORDER BY {order} LIMIT {TOP_K}", (query,)).fetchall()
            ms.append((time.perf_counter() - start) * 1000)
        ids.append([r[0] for r in rows])
    return ids, ms


def planner_choice(conn: psycopg.Connection, storage: str, dim: int, query: np.ndarray, ef: int) -> str:
    with conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
        plan = " ".join(
            r[0]
            for r in conn.execute(
                f"EXPLAIN SELECT id FROM {TABLE} ORDER BY {ORDER[storage].format(dim=dim)} LIMIT {TOP_K}", (query,)
            )
        )
    return "index" if "Index Scan" in plan else "seq scan"


def build(conn: psycopg.Connection, storage: str, dim: int, m: int, ef_construction: int, memory: str) -> float:
    """Builds this storage's index with these parameters; a kept one is reused. Another index of the same storage
    (other parameters) is dropped first: the planner would pick either for the same query."""
    name = index_name(storage, m, ef_construction)
    for (other,) in conn.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname LIKE %s AND indexname <> %s",
        (TABLE, f"{TABLE}_{storage}_%", name),
    ).fetchall():
        conn.execute(f"DROP INDEX {other}")
        print(f"dropped {other}: another {storage} index on the same table", flush=True)
    conn.commit()
    if conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", (name,)).fetchone():
        return float("nan")
    conn.execute(f"SET maintenance_work_mem = '{memory}'")
    start = time.perf_counter()
    conn.execute(
        f"CREATE INDEX {name} ON {TABLE} USING hnsw ({INDEX[storage].format(dim=dim)})"
        f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
    )
    conn.commit()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef", type=int, nargs="+", default=[40, 64, 100, 160, 200, 300, 400])
    parser.add_argument("--storage", nargs="+", default=["vector", "halfvec"])
    parser.add_argument("--maintenance-work-mem", default="3GB")
    parser.add_argument("--m", type=int, default=None, help="HNSW m (default: FLUX_HNSW_M)")
    parser.add_argument(
        "--ef-construction", type=int, default=None, help="HNSW ef_construction (default: FLUX_HNSW_EF_CONSTRUCTION)"
    )
    parser.add_argument("--keep", action="store_true", help="leave the table and indexes for the next run")
    args = parser.parse_args()
    settings = get_settings()
    base, queries = real_vectors_and_queries(settings, args.queries)
    dim = base.shape[1]
    m = args.m or settings.index.hnsw_m
    ef_construction = args.ef_construction or settings.index.hnsw_ef_construction
    vectors = synthetic(base, args.size, np.random.default_rng(0))  # the same seed: the same table every run
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :TOP_K]
    url = settings.platform_database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as conn:
        register_vector(conn)
        present = conn.execute("SELECT count(*) FROM pg_tables WHERE tablename = %s", (TABLE,)).fetchone()
        rows = conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] if present and present[0] else 0
        if rows != args.size:
            start = time.perf_counter()
            load_table(conn, vectors, dim)
            print(f"loaded {args.size:,} vectors in {time.perf_counter() - start:.1f} s", flush=True)
        try:
            for storage in args.storage:
                built = build(conn, storage, dim, m, ef_construction, args.maintenance_work_mem)
                name = index_name(storage, m, ef_construction)
                size = conn.execute("SELECT pg_relation_size(%s)", (name,)).fetchone()[0]
                print(
                    f"\n{storage}: m={m}, ef_construction={ef_construction}, build "
                    f"{'(kept)' if np.isnan(built) else f'{built:.1f} s'}, index {size / 2**20:.0f} MiB",
                    flush=True,
                )
                print(f"{'ef_search':>10} {'recall@10':>10} {'p50 ms':>8} {'p95 ms':>8} {'planner':>9}")
                search(conn, storage, dim, queries[:20], max(args.ef))  # warm the index pages
                for ef in args.ef:
                    found, ms = search(conn, storage, dim, queries, ef)
                    recall = float(
                        np.mean([len(set(f) & set(e.tolist())) / TOP_K for f, e in zip(found, exact, strict=True)])
                    )
                    print(
                        f"{ef:>10} {recall:>10.3f} {np.percentile(ms, 50):>8.2f} {np.percentile(ms, 95):>8.2f} "
                        f"{planner_choice(conn, storage, dim, queries[0], ef):>9}",
                        flush=True,
                    )
        finally:
            if not args.keep:
                conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
                conn.commit()


if __name__ == "__main__":
    main()
