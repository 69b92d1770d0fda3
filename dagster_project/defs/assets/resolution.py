"""Stage 7 — Reactome ↔ KEGG resolution: all pairs scored in UniProt space, classified by the fitted model
(`resolution/model.json`), written to Postgres (`pathway_mappings`) and to Neo4j as EQUIVALENT_TO / PART_OF edges
carrying every score, the confidence and the model version."""

import base64
import io
import time

import dagster as dg
import pandas as pd
from sqlalchemy import text

from dagster_project.core.versions import code_digest
from dagster_project.defs.assets.graph import GRAPH_GROUP, knowledge_graph
from dagster_project.defs.last_run import previous_metadata
from dagster_project.defs.pools import GRAPH_WRITES_POOL
from dagster_project.defs.resources import EmbedderResource, Neo4jResource, PostgresResource
from dagster_project.graph import loader
from dagster_project.resolution.inputs import ResolutionInputs, load_resolution_inputs, load_sources
from dagster_project.resolution.model import ResolutionModel, load_resolution_model
from dagster_project.storage.bulk import copy_into_temp

TEXT_COLUMNS = {"reactome_id", "kegg_id", "relation", "direction", "method_version"}
COLUMNS = [
    "reactome_id",
    "kegg_id",
    "reactome_size",
    "kegg_size",
    "shared",
    "overlap",
    "jaccard",
    "p_value",
    "q_value",
    "name_similarity",
    "name_cosine",
    "p_equivalent",
    "p_part_of",
    "confidence",
    "relation",
    "direction",
    "method_version",
]
EDGE_SCORES = ("overlap", "jaccard", "p_value", "q_value", "name_similarity", "name_cosine", "confidence")
# Only rows whose values changed are written, and pairs that are gone are deleted: a rerun writes nothing.
UPSERT = f"""
INSERT INTO pathway_mappings ({", ".join(COLUMNS)}) SELECT {", ".join(COLUMNS)} FROM mappings_in
ON CONFLICT (reactome_id, kegg_id) DO UPDATE SET {", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS[2:])}
WHERE ({", ".join(f"pathway_mappings.{c}" for c in COLUMNS[2:])})
      IS DISTINCT FROM ({", ".join(f"EXCLUDED.{c}" for c in COLUMNS[2:])})
"""
DELETE_GONE = """
DELETE FROM pathway_mappings m WHERE NOT EXISTS
    (SELECT 1 FROM mappings_in i WHERE i.reactome_id = m.reactome_id AND i.kegg_id = m.kegg_id)
"""
REL_TYPES = {"equivalent": "EQUIVALENT_TO", "part_of": "PART_OF"}
DELETE_STALE_EDGES = """
MATCH (a:Pathway)-[r:EQUIVALENT_TO|PART_OF]->(b:Pathway)
WHERE NOT (a.id + '|' + b.id + '|' + type(r)) IN $keep
DELETE r
"""
MERGE_EDGES = {
    relation: f"""
UNWIND $rows AS row
MATCH (a:Pathway {{id: row.from_id}}) MATCH (b:Pathway {{id: row.to_id}})
MERGE (a)-[r:{rel_type}]->(b) SET r += row.scores
"""
    for relation, rel_type in REL_TYPES.items()
}


def _edge_rows(classified: pd.DataFrame, method_version: str) -> list[dict]:
    rows = []
    for rec in classified[classified["relation"] != "unrelated"].to_dict("records"):
        from_id, to_id = rec["reactome_id"], rec["kegg_id"]
        if rec["relation"] == "part_of" and rec["direction"] == "kegg_in_reactome":
            from_id, to_id = to_id, from_id  # the smaller pathway points at the one it lies in
        scores = {k: float(rec[k]) for k in EDGE_SCORES}
        scores |= {"shared": int(rec["shared"]), "method_version": method_version}
        rows.append({"from_id": from_id, "to_id": to_id, "relation": rec["relation"], "scores": scores})
    return rows


def classify_pairs(inputs: ResolutionInputs, model: ResolutionModel) -> pd.DataFrame:
    decided = model.classify(inputs.features)
    return pd.concat([inputs.scores, inputs.features[["name_cosine"]], decided], axis=1).assign(
        method_version=model.method_version
    )


def _plot(classified: pd.DataFrame) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, column in zip(axes, ("jaccard", "name_cosine", "confidence"), strict=True):
        for relation, frame in classified.groupby("relation"):
            ax.hist(frame[column], bins=40, alpha=0.6, label=f"{relation} ({len(frame)})", log=True)
        ax.set_title(column)
    axes[0].legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def _write_postgres(engine: object, classified: pd.DataFrame) -> tuple[int, int]:
    with engine.begin() as conn:  # type: ignore[attr-defined]
        copy_into_temp(
            conn,
            "mappings_in",
            [(c, "text" if c in TEXT_COLUMNS else "double precision") for c in COLUMNS],
            classified[COLUMNS].itertuples(index=False, name=None),
        )
        written = conn.execute(text(UPSERT)).rowcount
        deleted = conn.execute(text(DELETE_GONE)).rowcount
    return written, deleted


COUNT_EDGES = "MATCH (:Pathway)-[r:EQUIVALENT_TO|PART_OF]->(:Pathway) RETURN count(r) AS n"


def _unchanged(
    context: dg.AssetExecutionContext, engine: object, driver: object, fingerprint: str
) -> dg.MaterializeResult | None:
    """The previous materialization's result when its inputs (pathways, members, model, embedding model, code)
    are this run's and what it wrote is still there, row for row and edge for edge; else None."""
    previous = previous_metadata(context)
    if previous.get("input_fingerprint") != fingerprint:
        return None
    with engine.connect() as conn:  # type: ignore[attr-defined]
        rows = conn.execute(text("SELECT count(*) FROM pathway_mappings")).scalar_one()
    edges = driver.execute_query(COUNT_EDGES).records[0]["n"]  # type: ignore[attr-defined]
    expected_edges = int(previous.get("pairs_equivalent", 0)) + int(previous.get("pairs_part_of", 0))
    if rows != previous.get("pairs_sharing_a_protein") or edges != expected_edges:
        return None
    context.log.info(f"resolution inputs unchanged since the last run ({rows} pairs, {edges} edges): not rescored")
    return dg.MaterializeResult(
        metadata={
            **previous,
            "unchanged": True,
            "rows_written": 0,
            "rows_deleted": 0,
            "stale_edges_removed": 0,
            "scoring_seconds": 0.0,
        }
    )


@dg.asset(
    group_name=GRAPH_GROUP,
    kinds={"postgres", "neo4j", "scikitlearn"},
    pool=GRAPH_WRITES_POOL,
    deps=[knowledge_graph, "postgres_schema"],
    description="Scores every Reactome x KEGG pair in UniProt space (overlap, Jaccard, hypergeometric p with "
    "Benjamini-Hochberg q, name similarity), classifies equivalent / part_of / unrelated with the model fitted on "
    "expert curation (docs/graph-and-resolution.md), and writes pathway_mappings plus EQUIVALENT_TO / "
    "PART_OF edges with every score, a calibrated confidence and the method version.",
)
def pathway_resolution(
    context: dg.AssetExecutionContext, postgres: PostgresResource, neo4j: Neo4jResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    engine = postgres.get_engine()
    model = load_resolution_model()
    driver = neo4j.get_driver()
    started = time.monotonic()
    sources = load_sources(engine)
    fingerprint = "|".join((sources.digest(), model.method_version, embedder.model_name, code_digest()))
    if (unchanged := _unchanged(context, engine, driver, fingerprint)) is not None:
        return unchanged
    inputs = load_resolution_inputs(engine, embedder.embed_documents, sources)
    classified = classify_pairs(inputs, model)
    scoring_seconds = time.monotonic() - started
    written, deleted = _write_postgres(engine, classified)
    edges = _edge_rows(classified, model.method_version)
    keep = [f"{e['from_id']}|{e['to_id']}|{REL_TYPES[e['relation']]}" for e in edges]
    with driver.session() as session:
        stale = session.execute_write(lambda tx: tx.run(DELETE_STALE_EDGES, keep=keep).consume())
    for relation, query in MERGE_EDGES.items():
        loader.run_batched(driver, query, [e for e in edges if e["relation"] == relation])
    counts = classified["relation"].value_counts().to_dict()
    context.log.info(
        f"resolution {model.method_version}: {counts}; {written} rows written, {deleted} deleted,"
        f" {stale.counters.relationships_deleted} stale edges removed"
    )
    return dg.MaterializeResult(
        metadata={
            "unchanged": False,
            "input_fingerprint": fingerprint,
            "method_version": model.method_version,
            "reactome_pathways": len(inputs.reactome.ids),
            "kegg_pathways": len(inputs.kegg.ids),
            "pairs_sharing_a_protein": len(classified),
            **{f"pairs_{k}": int(v) for k, v in counts.items()},
            "rows_written": written,
            "rows_deleted": deleted,
            "stale_edges_removed": stale.counters.relationships_deleted,
            "scoring_seconds": round(scoring_seconds, 2),
            "score_distributions": dg.MetadataValue.md(f"![scores](data:image/png;base64,{_plot(classified)})"),
        }
    )
