"""Retrieval and answering latency (no LLM: the offline provider) and HTTP throughput with concurrent clients.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/retrieval_latency.py [--questions 60]

Needs a published snapshot index (chunks, vectors, BM25, graph). Questions: PubMedQA questions (../shared/data)
plus relational questions. Prints p50/p95 per variant and ratios against the baseline measured in the same
process: a single dense pgvector top-k query (what a plain vector-search RAG does per question).
  search cold      routing + hybrid + graph retrieval, caches off
  quick / thinking ask(): one retrieval pass / the judge loop, offline generation, caches off ("cold") and on
                   after a warm-up pass ("cached")
  HTTP             requests/s with N concurrent clients against a live uvicorn server (cached and cold)
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import uvicorn
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.index.tables import as_sql, qualified
from retrieval.caching.cache import Cache
from retrieval.pipeline import Pipeline
from retrieval.retrievers.pg_retriever import vector_literal
from serving.api import create_app

RELATIONAL = [
    "Which KEGG pathway corresponds to Reactome's glycolysis, and which genes do they share?",
    "Which pathways contain both TP53 and MDM2?",
    "What are the members of the citrate cycle pathway?",
    "Which Reactome pathway is equivalent to the KEGG mismatch repair pathway?",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentiles(samples: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples, 50)), float(np.percentile(samples, 95))


def timed(fn: Callable[[str], object], questions: list[str]) -> list[float]:
    out = []
    for q in questions:
        started = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - started) * 1000)
    return out


def questions_from_pubmedqa(settings: FluxSettings, n: int) -> list[str]:
    data = json.loads((settings.sources.snapshot_dir / "pubmedqa" / "ori_pqal.json").read_text())
    return [item["QUESTION"] for item in list(data.values())[:n]]


def cache_for(settings: FluxSettings, enabled: bool) -> Cache:
    return Cache(
        settings.resolved_redis_url,
        embedding_ttl=600,
        retrieval_ttl=600,
        answer_ttl=600,
        semantic_threshold=settings.cache.semantic_cache_threshold,
        enabled=enabled,
        namespace=f"bench{time.time_ns()}",
    )


def http_throughput(settings: FluxSettings, pipeline: Pipeline, questions: list[str], clients: int, mode: str) -> float:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings.evolve(log_queries_to_mlflow=False), pipeline),
            host="127.0.0.1",
            port=port,
            log_level="warning",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:

        def one(q: str) -> None:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                response = client.post("/query", json={"question": q, "mode": mode})
                response.raise_for_status()

        started = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(one, questions))
        return len(questions) / (time.perf_counter() - started)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    settings = get_settings()
    questions = questions_from_pubmedqa(settings, args.questions - len(RELATIONAL)) + RELATIONAL
    cold = Pipeline.from_settings(settings, cache=cache_for(settings, enabled=False))
    index = cold.retriever.index()
    print(
        f"index {index.version}: {index.chunk_count} chunks, {index.pathway_count} pathways; "
        f"{len(questions)} questions, reranker {cold.retriever.reranker.name}"
    )
    timed(cold.search, questions[:5])  # warm the model, the BM25 load and the connection pools

    vectors = {q: cold.retriever.embed(q) for q in questions}
    table = as_sql(qualified(index.chunk_table))  # the served version's chunk table and its HNSW index

    def dense_only(q: str) -> None:
        with cold.retriever.engine.begin() as conn:
            conn.execute(text(f"SET LOCAL hnsw.ef_search = {settings.index.hnsw_ef_search}"))
            conn.execute(
                text(f"SELECT id FROM {table} ORDER BY embedding <=> CAST(:v AS vector) LIMIT 20"),
                {"v": vector_literal(vectors[q])},
            ).all()

    rows: list[tuple[str, list[float]]] = [("baseline: dense top-20 only", timed(dense_only, questions))]
    rows.append(("search cold (hybrid + graph)", timed(cold.search, questions)))
    rows.append(("ask quick, cold", timed(lambda q: cold.ask(q, "quick"), questions)))
    rows.append(("ask thinking, cold", timed(lambda q: cold.ask(q, "thinking"), questions)))
    warm = Pipeline.from_settings(settings, cache=cache_for(settings, enabled=True))
    for mode in ("quick", "thinking"):
        timed(lambda q, m=mode: warm.ask(q, m), questions)  # fill the caches
        rows.append((f"ask {mode}, cached", timed(lambda q, m=mode: warm.ask(q, m), questions)))
    _, base95 = percentiles(rows[0][1])
    print(f"\n{'variant':<32} {'p50 ms':>8} {'p95 ms':>8} {'mean':>8} {'p95 / baseline p95':>19}")
    for name, samples in rows:
        p50, p95 = percentiles(samples)
        print(f"{name:<32} {p50:8.1f} {p95:8.1f} {statistics.mean(samples):8.1f} {p95 / base95:19.1f}x")
    cached_rps = http_throughput(settings, warm, questions * 3, args.clients, "quick")
    cold_rps = http_throughput(settings, cold, questions, args.clients, "quick")
    print(
        f"\nHTTP /query quick, {args.clients} concurrent clients: cached {cached_rps:.1f} req/s, "
        f"cold {cold_rps:.1f} req/s (cached / cold = {cached_rps / cold_rps:.1f}x)"
    )


if __name__ == "__main__":
    main()
