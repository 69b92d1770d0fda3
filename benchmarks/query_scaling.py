"""The query path as the corpus grows: `/search` and `/query` p50/p95 and `flux serve`'s resident memory at 10k,
100k and 1M chunks, against a live `flux serve` process, with a log-log plot.

    source <bench env> && .venv/bin/python benchmarks/query_scaling.py [--sizes 10000 100000 1000000] \\
        [--questions 60] [--plot benchmarks/query_scaling.png]

Needs a published snapshot index (`flux materialize` on FLUX_SOURCE_MODE=snapshot). For each size the benchmark
publishes an index version of that many chunks: the served version's chunks, then synthetic ones. Each synthetic
chunk copies a real chunk's text, source and title, and its vector is that chunk's vector plus noise (as in
`hnsw_scaling.py`). So BM25's posting lists and the HNSW graph grow as they would with more of the same kind
of text. Each version gets its own chunk table with the configured HNSW index and its own BM25 index, like a
built one, and is published directly, without the eval gates. A fresh `flux serve` (caches off, no rate limit)
answers the PubMedQA questions once each on `/search` and on `/query` (quick mode, offline provider) after a
warm-up. Afterwards the version served before is published again and the synthetic versions are deleted.

The baseline in the same process is the size that was served before the benchmark (the snapshot, about 7k chunks):
each row prints its p95 as a multiple of the baseline's.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import psutil
import psycopg
from loglog import save_loglog
from pgvector.psycopg import register_vector
from retrieval_latency import free_port, questions_from_pubmedqa

from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.core.stores import engine_for
from dagster_project.index.publishing import publish_candidate
from dagster_project.index.tables import SCHEMA, bm25_root
from retrieval.model.index_state import IndexState, current_index
from retrieval.retrievers.bm25 import build_index

BLOCK = 50_000  # synthetic vectors generated and copied per round (memory stays at ~80 MB per round)


def around(vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each vector moved by noise of norm 0.5 and normalized again (hnsw_scaling.py's synthetic vectors)."""
    noise = rng.normal(size=vectors.shape).astype(np.float32)
    noise *= 0.5 / np.linalg.norm(noise, axis=1, keepdims=True)
    out = vectors + noise
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def libpq(settings: FluxSettings) -> str:
    return settings.platform_database_url.replace("postgresql+psycopg://", "postgresql://")


def synthetic_version(size: int) -> str:
    return hashlib.sha256(f"query-scaling:{size}".encode()).hexdigest()[:16]


def build_table(settings: FluxSettings, served: IndexState, size: int, seed: int) -> tuple[str, float]:
    """flux_index.chunks_<key> with the served chunks and size - n synthetic ones, its HNSW index as configured."""
    table = f"chunks_{synthetic_version(size)}"
    started = time.monotonic()
    rng = np.random.default_rng(seed)
    with psycopg.connect(libpq(settings), autocommit=True) as conn:
        register_vector(conn)
        conn.execute(f"DROP TABLE IF EXISTS {SCHEMA}.{table}")
        conn.execute(f"CREATE TABLE {SCHEMA}.{table} AS SELECT * FROM {SCHEMA}.{served.chunk_table}")
        rows = conn.execute(f"SELECT id, embedding FROM {SCHEMA}.{served.chunk_table} ORDER BY id").fetchall()
        ids = [r[0] for r in rows]
        base = np.asarray([r[1].to_numpy() for r in rows], dtype=np.float32)
        conn.execute(f"CREATE TEMP TABLE synthetic (id text, base_id text, embedding vector({base.shape[1]}))")
        remaining, copied = size - len(ids), 0
        while remaining > 0:
            n = min(BLOCK, remaining)
            picks = rng.integers(0, len(base), n)
            vectors = around(base[picks], rng)
            with conn.cursor().copy("COPY synthetic (id, base_id, embedding) FROM STDIN WITH (FORMAT BINARY)") as cp:
                cp.set_types(["text", "text", "vector"])
                for i, (pick, vector) in enumerate(zip(picks, vectors, strict=True)):
                    cp.write_row((f"{ids[pick]}~{copied + i}", ids[pick], vector))
            remaining, copied = remaining - n, copied + n
        conn.execute(
            f"INSERT INTO {SCHEMA}.{table} (id, content, content_hash, embedding, source, title, external_id)"
            f" SELECT s.id, c.content, c.content_hash, s.embedding, c.source, c.title, c.external_id"
            f" FROM synthetic s JOIN {SCHEMA}.{served.chunk_table} c ON c.id = s.base_id"
        )
        conn.execute(f"ALTER TABLE {SCHEMA}.{table} ADD PRIMARY KEY (id)")
        conn.execute("SET maintenance_work_mem = '1GB'")
        m, ef = int(settings.index.hnsw_m), int(settings.index.hnsw_ef_construction)
        conn.execute(
            f"CREATE INDEX ON {SCHEMA}.{table} USING hnsw (embedding vector_cosine_ops)"
            f" WITH (m = {m}, ef_construction = {ef})"
        )
        conn.execute(f"GRANT SELECT ON {SCHEMA}.{table} TO {settings.serving.serving_role}")
    return table, time.monotonic() - started


def build_bm25(settings: FluxSettings, table: str, size: int) -> tuple[Path, float]:
    directory = bm25_root(settings) / f"scale-{synthetic_version(size)}"
    shutil.rmtree(directory, ignore_errors=True)
    started = time.monotonic()
    with psycopg.connect(libpq(settings)) as conn:
        rows = conn.execute(f"SELECT id, content FROM {SCHEMA}.{table} ORDER BY id").fetchall()
    build_index(
        [r[0] for r in rows], [r[1] for r in rows], settings.retrieval.bm25_k1, settings.retrieval.bm25_b, directory
    )
    return directory, time.monotonic() - started


def publish(settings: FluxSettings, served: IndexState, size: int, table: str, bm25: Path) -> None:
    with psycopg.connect(libpq(settings), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO index_versions (version, bm25_version, bm25_path, embedding_model, chunk_count, vector_count,"
            " pathway_count, dataset_version, pipeline_version, dagster_run_id, chunk_table, candidate_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'query-scaling', %s, now())"
            " ON CONFLICT (version) DO UPDATE SET candidate_at = now()",
            (
                synthetic_version(size),
                bm25.name,
                str(bm25),
                served.embedding_model,
                size,
                size,
                served.pathway_count,
                served.dataset_version,
                served.pipeline_version,
                table,
            ),
        )
    publish_candidate(engine_for(settings.platform_database_url))


def restore(settings: FluxSettings, served: IndexState, sizes: list[int]) -> None:
    """The version served before is served again; the synthetic versions, tables and BM25 folders are gone."""
    engine = engine_for(settings.platform_database_url)
    with psycopg.connect(libpq(settings), autocommit=True) as conn:
        conn.execute(
            "UPDATE index_versions SET published_at = now(), rolled_back_at = NULL WHERE version = %s",
            (served.version,),
        )
        for size in sizes:
            conn.execute("DELETE FROM index_versions WHERE version = %s", (synthetic_version(size),))
            conn.execute(f"DROP TABLE IF EXISTS {SCHEMA}.chunks_{synthetic_version(size)}")
            shutil.rmtree(bm25_root(settings) / f"scale-{synthetic_version(size)}", ignore_errors=True)
    assert current_index(engine).version == served.version


def resident_mib(pid: int) -> float:
    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20


def measure(questions: list[str], warmup: int, chunks: int) -> dict[str, float]:
    """A fresh `flux serve`, each question once on /search and on /query; its resident memory at the end. Its
    /health must report the `chunks` of the version published for this size."""
    port = free_port()
    env = {
        **os.environ,
        "FLUX_CACHE_ENABLED": "false",
        "FLUX_API_RATE_LIMIT_PER_MINUTE": "1000000",
        "FLUX_LOG_QUERIES_TO_MLFLOW": "false",
    }
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "flux"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
            deadline = time.monotonic() + 300
            while True:
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("flux serve did not come up")
                time.sleep(0.5)
            for question in questions[:warmup]:
                client.post("/search", json={"question": question}).raise_for_status()
                client.post("/query", json={"question": question, "mode": "quick"}).raise_for_status()
            timings: dict[str, list[float]] = {"search": [], "query": []}
            for question in questions[warmup:]:
                for route, body in (
                    ("search", {"question": question}),
                    ("query", {"question": question, "mode": "quick"}),
                ):
                    started = time.perf_counter()
                    client.post(f"/{route}", json=body).raise_for_status()
                    timings[route].append((time.perf_counter() - started) * 1000)
            rss = resident_mib(server.pid)
            health = client.get("/health").text
            if f"{chunks}" not in health:
                raise RuntimeError(f"flux serve is not serving the {chunks}-chunk index: {health[:300]}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    out = {"rss_mib": rss}
    for route, samples in timings.items():
        out[f"{route}_p50"] = statistics.median(samples)
        out[f"{route}_p95"] = float(np.percentile(samples, 95))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--plot", type=Path, default=Path(__file__).with_name("query_scaling.png"))
    args = parser.parse_args()
    settings = get_settings()
    served = current_index(engine_for(settings.platform_database_url))
    questions = questions_from_pubmedqa(settings, args.questions + args.warmup)
    print(f"served index {served.version}: {served.chunk_count} chunks; {len(questions) - args.warmup} questions")
    results = {served.chunk_count: measure(questions, args.warmup, served.chunk_count)}
    try:
        for size in sorted(args.sizes):
            table, table_s = build_table(settings, served, size, seed=size)
            bm25, bm25_s = build_bm25(settings, table, size)
            publish(settings, served, size, table, bm25)
            print(f"{size:>9} chunks: table + HNSW {table_s:.0f} s, BM25 {bm25_s:.0f} s", flush=True)
            results[size] = measure(questions, args.warmup, size)
    finally:
        restore(settings, served, sorted(args.sizes))
    baseline = results[served.chunk_count]
    print("\n| chunks | /search p50 / p95 ms | /query p50 / p95 ms | serve RSS MiB | p95 / baseline (search, query) |")
    print("|---|---|---|---|---|")
    for size, r in sorted(results.items()):
        print(
            f"| {size:,} | {r['search_p50']:.0f} / {r['search_p95']:.0f} | {r['query_p50']:.0f} / "
            f"{r['query_p95']:.0f} | {r['rss_mib']:.0f} | {r['search_p95'] / baseline['search_p95']:.2f}, "
            f"{r['query_p95'] / baseline['query_p95']:.2f} |"
        )
    sizes = sorted(results)
    save_loglog(
        args.plot,
        "Query path as the corpus grows",
        "chunks",
        "p95 ms / RSS MiB",
        {
            "/search p95 ms": (sizes, [results[s]["search_p95"] for s in sizes]),
            "/query p95 ms": (sizes, [results[s]["query_p95"] for s in sizes]),
            "serve RSS MiB": (sizes, [results[s]["rss_mib"] for s in sizes]),
        },
    )
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
