"""Answer latency with Neo4j down, against the same questions with Neo4j up (same process, caches off).

    FLUX_SOURCE_MODE=snapshot .venv/bin/python benchmarks/degraded_latency.py [--questions 20]

Neo4j "down" is a Bolt URI on a closed local port: a real connection failure. The first degraded question pays the
connect timeout; the graph is then marked down for 15 s (retrieval/retrievers/graph_guard.py), so the rest skip it at
once.
Prints p50 / p95 / max per run, the ratio to the healthy run, and whether every degraded answer said so.
"""

from __future__ import annotations

import argparse
import socket
import time

import numpy as np

from dagster_project.core.settings import FluxSettings, get_settings
from retrieval.caching.cache import Cache
from retrieval.pipeline import Pipeline
from retrieval.retrievers.graph_guard import GraphGuard

QUESTIONS = [
    "Which genes belong to the KEGG pathway 'Other glycan degradation'?",
    "Which pathways contain both TP53 and MDM2?",
    "Which Reactome pathway corresponds to the KEGG mismatch repair pathway?",
    "Which genes do the KEGG and Reactome apoptosis pathways share?",
    "Compare KEGG glycolysis and Reactome glycolysis",
    "What are the sub-pathways of Reactome's glucose metabolism?",
    "What does TP53 do in apoptosis?",
    "How does insulin signalling regulate glucose uptake?",
    "Is metformin associated with lower cancer incidence?",
    "Which enzymes catalyse glycolysis?",
]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(settings: FluxSettings, questions: list[str]) -> tuple[list[float], int]:
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    pipeline = Pipeline.from_settings(settings, cache=off)
    pipeline.ask("warm-up: what is glycolysis?", "quick")  # lexicons, models
    pipeline.retriever.graph_guard = GraphGuard()  # the warm-up must not pre-mark the graph down
    latencies, warned = [], 0
    for question in questions:
        started = time.perf_counter()
        answer = pipeline.ask(question, "thinking")
        latencies.append((time.perf_counter() - started) * 1000)
        warned += any("knowledge graph is unavailable" in w for w in answer.warnings)
    return latencies, warned


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    questions = (QUESTIONS * 10)[: parser.parse_args().questions]
    settings = get_settings()
    healthy, _ = run(settings, questions)
    dead = settings.evolve(neo4j_uri=f"bolt://127.0.0.1:{closed_port()}")
    degraded, warned = run(dead, questions)
    base = float(np.percentile(healthy, 95))
    for name, values in (("Neo4j up", healthy), ("Neo4j down", degraded)):
        p50, p95 = np.percentile(values, 50), np.percentile(values, 95)
        print(
            f"{name:11s} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  max {max(values):7.1f} ms  "
            f"first {values[0]:7.1f} ms  p95/up {p95 / base:4.2f}x"
        )
    print(f"degraded answers carrying the warning: {warned}/{len(questions)}")


if __name__ == "__main__":
    main()
