"""Stage 6 — the knowledge graph: pathways, hierarchy, species, genes, compounds, papers and their gene mentions,
ClinVar's conditions and gene-condition associations, projected from Postgres into Neo4j with MERGE; then one vector
per pathway for the Neo4j vector index."""

import hashlib
import time

import dagster as dg
import numpy as np
from sqlalchemy import text

from dagster_project.core.versions import code_digest
from dagster_project.defs.assets.documents import DOCUMENT_ASSETS
from dagster_project.defs.assets.vector_index import chunk_vector_index
from dagster_project.defs.last_run import previous_metadata
from dagster_project.defs.pools import GRAPH_WRITES_POOL
from dagster_project.defs.resources import Neo4jResource, PostgresResource
from dagster_project.graph import disease_rows, loader, reaction_rows
from dagster_project.graph.rows import INPUT_QUERIES, LOAD_STEPS, step_rows
from dagster_project.storage.digests import combined, query_digests

GRAPH_GROUP = "graph"


@dg.asset(
    group_name=GRAPH_GROUP,
    kinds={"neo4j"},
    pool=GRAPH_WRITES_POOL,
    deps=[*(a.key for a in DOCUMENT_ASSETS), "neo4j_schema"],
    description="Projects the structured tables into Neo4j: Pathway (both sources) -IN_SPECIES-> Species, "
    "-SUBPATHWAY_OF-> Pathway, -HAS_REACTION-> Reaction, -HAS_MEMBER-> Gene (HGNC) / Compound; Reaction "
    "-HAS_INPUT / HAS_OUTPUT / CATALYSED_BY / ACTIVATED_BY / INHIBITED_BY-> Gene / Compound / Complex "
    "(-HAS_COMPONENT-> Gene / Compound), Reaction -PRECEDES-> Reaction; "
    "Paper -MENTIONS-> Gene (HGNC symbol dictionary); Gene -ASSOCIATED_WITH-> Disease (ClinVar, one edge per "
    "asserting source). MERGE on stable ids in batched UNWIND transactions; "
    "loading twice changes nothing.",
)
def knowledge_graph(
    context: dg.AssetExecutionContext, postgres: PostgresResource, neo4j: Neo4jResource
) -> dg.MaterializeResult:
    engine, driver = postgres.get_engine(), neo4j.get_driver()
    started = time.monotonic()
    fingerprint = combined({**query_digests(engine, INPUT_QUERIES), "code": code_digest()})
    if (unchanged := _unchanged(context, driver, fingerprint)) is not None:
        return unchanged
    sent: dict[str, int] = {}
    keep: dict[str, list[str]] = {}
    for name, query, sql in LOAD_STEPS:
        batch = step_rows(engine, sql)
        if name in {"pathways", "genes", "papers", "reactions"}:
            keep[name] = [row["id"] for row in batch]
        sent[name] = loader.run_batched(driver, query, batch)
        context.log.info(f"graph: {name} {sent[name]} rows merged")
    pruned = {
        label: loader.prune(driver, label, keep[key])
        for label, key in (("Pathway", "pathways"), ("Gene", "genes"), ("Paper", "papers"), ("Reaction", "reactions"))
    }
    with driver.session() as session:
        pruned["Complex"] = session.run(reaction_rows.PRUNE_COMPLEXES).consume().counters.nodes_deleted
        pruned["Compound"] = session.run(loader.PRUNE_COMPOUNDS).consume().counters.nodes_deleted
    pruned |= disease_rows.prune(driver, engine)
    context.log.info(f"graph: pruned nodes no longer in Postgres {pruned}")
    labels, types = loader.graph_counts(driver)
    return dg.MaterializeResult(
        metadata={
            **{f"rows_{k}": v for k, v in sent.items()},
            **{f"nodes_{k}": v for k, v in labels.items()},
            **{f"relationships_{k}": v for k, v in types.items()},
            **{f"pruned_{k}": v for k, v in pruned.items()},
            "seconds": round(time.monotonic() - started, 1),
            "input_fingerprint": fingerprint,
            "unchanged": False,
        }
    )


def _unchanged(context: dg.AssetExecutionContext, driver: object, fingerprint: str) -> dg.MaterializeResult | None:
    """The previous load's result when the rows it would read (every LOAD_STEPS query, the papers and the gene
    dictionary their mentions come from) and the graph code are the same as then, and the graph still holds what
    that load counted, label for label and type for type; else None (load)."""
    previous = previous_metadata(context)
    if previous.get("input_fingerprint") != fingerprint:
        return None
    labels, types = loader.graph_counts(driver)  # type: ignore[arg-type]
    projected = {
        *(f"nodes_{k}" for k in loader.PROJECTED_LABELS),
        *(f"relationships_{k}" for k in loader.PROJECTED_TYPES),
    }
    counted = {**{f"nodes_{k}": v for k, v in labels.items()}, **{f"relationships_{k}": v for k, v in types.items()}}
    if {k: v for k, v in counted.items() if k in projected} != {k: v for k, v in previous.items() if k in projected}:
        return None
    context.log.info(
        f"graph inputs unchanged since the last load and the graph intact ({sum(labels.values())} "
        "nodes): nothing merged"
    )
    return dg.MaterializeResult(
        metadata={
            **previous,
            **{k: 0 for k in previous if k.startswith(("rows_", "pruned_"))},
            "seconds": 0.0,
            "unchanged": True,
        }
    )


@dg.asset(
    group_name=GRAPH_GROUP,
    kinds={"neo4j"},
    pool=GRAPH_WRITES_POOL,
    deps=[knowledge_graph, chunk_vector_index],
    description="One embedding per Pathway node (the normalized mean of its document's chunk vectors) in the "
    "Neo4j vector index `pathway_embedding`, so the k pathways most similar to a text are one Cypher query.",
)
def pathway_vectors(
    context: dg.AssetExecutionContext, postgres: PostgresResource, neo4j: Neo4jResource
) -> dg.MaterializeResult:
    with postgres.get_engine().connect() as conn:
        rows = conn.execute(
            text(
                "SELECT d.external_id, avg(c.embedding)::text FROM documents d JOIN chunks c ON c.document_id = d.id"
                " WHERE d.type = 'pathway' AND d.status = 'active' AND c.embedding IS NOT NULL GROUP BY d.external_id"
            )
        ).all()
    driver = neo4j.get_driver()
    with driver.session() as session:
        stored = {r["id"]: r["hash"] for r in session.run(loader.PATHWAY_VECTOR_HASHES)}
    payload = []
    for pathway_id, mean_text in rows:
        digest = hashlib.sha256(mean_text.encode()).hexdigest()[:16]
        if stored.get(pathway_id) == digest:
            continue  # the same chunk vectors: the stored vector is already this one
        vector = np.asarray([float(x) for x in mean_text.strip("[]").split(",")], dtype=np.float64)
        payload.append(
            {"id": pathway_id, "hash": digest, "vector": (vector / max(np.linalg.norm(vector), 1e-12)).tolist()}
        )
    written = loader.run_batched(driver, loader.SET_PATHWAY_VECTORS, payload) if payload else 0
    context.log.info(f"{written} pathway vectors written, {len(rows) - len(payload)} unchanged")
    return dg.MaterializeResult(
        metadata={"pathway_vectors_written": written, "pathway_vectors_unchanged": len(rows) - len(payload)}
    )
