"""Knowledge-graph load and depth-2 expansion at 1x and 10x the snapshot graph, on a Neo4j of the benchmark's own.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/graph_scaling.py [--scales 1 10] [--seeds 200]

Rows are the `knowledge_graph` asset's own (read from the snapshot's Postgres tables). Scale s loads s copies of
every pathway, reaction, gene and paper with the copy number in their ids (species are shared), through the
asset's MERGE statements in 5,000-row batches, into an empty graph with the project's Neo4j migrations applied.
Then the graph retriever's depth-2 expansion (`EXPAND`: parents, children with gene counts, reactions, genes,
compounds, mapped pathways with shared genes) runs for --seeds random pathways of the first copy, one at a time;
the baseline is the same number of single-node lookups by id. Writes graph_scaling.png.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from loglog import save_loglog

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.graph import loader
from dagster_project.graph.rows import LOAD_STEPS, step_rows
from dagster_project.stack.neo4j import Neo4jService
from dagster_project.storage.migrate import apply_neo4j
from retrieval.retrievers.graph_retriever import EXPAND

PLOT = Path(__file__).with_name("graph_scaling.png")
# How each step's row is copied for copy number c (ids suffixed, so copies never merge into each other).
COPY: dict[str, Callable[[dict[str, Any], int], dict[str, Any]]] = {
    "pathways": lambda r, c: r | {"id": f"{r['id']}~{c}"},
    "hierarchy": lambda r, c: {"child": f"{r['child']}~{c}", "parent": f"{r['parent']}~{c}"},
    "reactions": lambda r, c: r | {"id": f"{r['id']}~{c}", "pathway": f"{r['pathway']}~{c}"},
    "genes": lambda r, c: r | {"id": f"{r['id']}~{c}"},
    "gene_members": lambda r, c: {"pathway": f"{r['pathway']}~{c}", "members": [f"{m}~{c}" for m in r["members"]]},
    "compound_members": lambda r, c: {"pathway": f"{r['pathway']}~{c}", "members": [f"{m}~{c}" for m in r["members"]]},
    "papers": lambda r, c: r | {"id": f"{r['id']}~{c}", "genes": [f"{g}~{c}" for g in r["genes"]]},
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _clear(driver: Any) -> None:
    with driver.session() as session:  # CALL … IN TRANSACTIONS needs an auto-commit transaction
        session.run(
            "MATCH (n) WHERE NOT n:FluxMigration CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
        ).consume()


def _latencies(driver: Any, query: str, seeds: list[str]) -> np.ndarray:
    out = []
    for seed in seeds:
        start = time.perf_counter()
        driver.execute_query(query, ids=[seed], database_="neo4j")
        out.append((time.perf_counter() - start) * 1000)
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args()
    settings = get_settings()
    engine = engine_for(settings.platform_database_url)
    rows = {name: step_rows(engine, sql) for name, _, sql in LOAD_STEPS}
    home = Path(tempfile.mkdtemp(prefix="flux-graph-bench-"))
    scratch = settings.evolve(home=home, neo4j_bolt_port=_free_port(), neo4j_uri=None)
    service = Neo4jService(scratch)
    service.start()
    driver = graph_driver(scratch)
    rng = np.random.default_rng(0)
    sizes, load_s, p95s = [], [], []
    try:
        apply_neo4j(driver, scratch)
        print(f"{'scale':>5} {'nodes':>10} {'edges':>10} {'load':>9} {'expand p50':>11} {'p95':>8} {'lookup p95':>11}")
        for scale in args.scales:
            _clear(driver)
            start = time.perf_counter()
            for name, query, _ in LOAD_STEPS:
                loader.run_batched(driver, query, (COPY[name](row, c) for c in range(scale) for row in rows[name]))
            seconds = time.perf_counter() - start
            nodes, edges = loader.graph_counts(driver)
            pathway_ids = [f"{row['id']}~0" for row in rows["pathways"]]
            seeds = list(rng.choice(pathway_ids, size=min(args.seeds, len(pathway_ids)), replace=False))
            _latencies(driver, EXPAND, seeds[:20])  # warm the page cache and the query plans
            expand = _latencies(driver, EXPAND, seeds)
            lookup = _latencies(driver, "UNWIND $ids AS pid MATCH (p:Pathway {id: pid}) RETURN p.id", seeds)
            n_nodes, n_edges = sum(nodes.values()), sum(edges.values())
            sizes.append(n_nodes + n_edges)
            load_s.append(seconds)
            p95s.append(float(np.percentile(expand, 95)))
            print(
                f"{scale:>5} {n_nodes:>10,} {n_edges:>10,} {seconds:>8.1f}s {np.percentile(expand, 50):>9.1f}ms"
                f" {p95s[-1]:>6.1f}ms {np.percentile(lookup, 95):>9.2f}ms"
                f"  (expand / lookup p95: {p95s[-1] / np.percentile(lookup, 95):.1f}x)"
            )
    finally:
        driver.close()
        service.stop()
        shutil.rmtree(home, ignore_errors=True)
    save_loglog(
        PLOT,
        "Knowledge graph (2 cores)",
        "nodes + relationships",
        "seconds (load) / milliseconds (expansion p95)",
        {"load, s": (sizes, load_s), "depth-2 expansion p95, ms": (sizes, p95s)},
    )
    print(f"plot: {PLOT}")


if __name__ == "__main__":
    main()
