"""Stage 7 — Reactome ↔ KEGG resolution: all pairs scored in UniProt space, classified, written to Postgres
(`pathway_mappings`) and to Neo4j as EQUIVALENT_TO / PART_OF edges carrying every score."""

import base64
import io
import time

import dagster as dg
import pandas as pd
from sqlalchemy import text

from dagster_project.assets.graph import GRAPH_GROUP, knowledge_graph
from dagster_project.graph import loader
from dagster_project.resolution import classify, score_pairs
from dagster_project.resources import Neo4jResource, PostgresResource
from dagster_project.storage.bulk import copy_into_temp
from dagster_project.storage.pathway_sets import load_sets

COLUMNS = ["reactome_id", "kegg_id", "reactome_size", "kegg_size", "shared", "overlap", "jaccard", "p_value",
           "q_value", "name_similarity", "relation", "direction"]
CLEAR_EDGES = "MATCH (:Pathway)-[r:EQUIVALENT_TO|PART_OF]->(:Pathway) DELETE r"
MERGE_EDGES = {
    relation: f"""
UNWIND $rows AS row
MATCH (a:Pathway {{id: row.from_id}}) MATCH (b:Pathway {{id: row.to_id}})
MERGE (a)-[r:{rel_type}]->(b) SET r += row.scores
"""
    for relation, rel_type in (("equivalent", "EQUIVALENT_TO"), ("part_of", "PART_OF"))
}


def _edge_rows(classified: pd.DataFrame) -> list[dict]:
    rows = []
    for rec in classified[classified["relation"] != "unrelated"].to_dict("records"):
        inside_kegg = rec["direction"] == "reactome_in_kegg"
        from_id, to_id = (rec["reactome_id"], rec["kegg_id"])
        if rec["relation"] == "part_of" and not inside_kegg:
            from_id, to_id = to_id, from_id  # the smaller pathway points at the one it lies in
        scores = {k: float(rec[k]) for k in ("overlap", "jaccard", "p_value", "q_value", "name_similarity")}
        scores["shared"] = int(rec["shared"])
        rows.append({"from_id": from_id, "to_id": to_id, "relation": rec["relation"], "scores": scores})
    return rows


def _plot(classified: pd.DataFrame) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, column in zip(axes, ("jaccard", "overlap", "name_similarity"), strict=True):
        for relation, frame in classified.groupby("relation"):
            ax.hist(frame[column], bins=40, alpha=0.6, label=f"{relation} ({len(frame)})", log=True)
        ax.set_title(column)
    axes[0].legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


@dg.asset(
    group_name=GRAPH_GROUP,
    kinds={"postgres", "neo4j", "scipy"},
    deps=[knowledge_graph, "postgres_schema"],
    description="Scores every Reactome x KEGG pair in UniProt space (overlap coefficient, Jaccard, hypergeometric "
    "p with Benjamini-Hochberg q, name similarity), classifies equivalent / part_of / unrelated by the README's "
    "thresholds, and writes pathway_mappings plus EQUIVALENT_TO / PART_OF edges with every score.",
)
def pathway_resolution(context: dg.AssetExecutionContext, postgres: PostgresResource,
                       neo4j: Neo4jResource) -> dg.MaterializeResult:
    engine = postgres.get_engine()
    reactome, kegg = load_sets(engine, "reactome"), load_sets(engine, "kegg")
    started = time.monotonic()
    classified = classify(score_pairs(reactome, kegg))
    scoring_seconds = time.monotonic() - started
    with engine.begin() as conn:
        copy_into_temp(conn, "mappings_in", [(c, "text" if c in {"reactome_id", "kegg_id", "relation", "direction"}
                                              else "double precision") for c in COLUMNS],
                       classified[COLUMNS].itertuples(index=False, name=None))
        conn.execute(text("DELETE FROM pathway_mappings"))
        conn.execute(text(f"INSERT INTO pathway_mappings ({', '.join(COLUMNS)}) SELECT {', '.join(COLUMNS)}"
                          " FROM mappings_in"))
    driver = neo4j.get_driver()
    edges = _edge_rows(classified)
    with driver.session() as session:
        session.execute_write(lambda tx: tx.run(CLEAR_EDGES).consume())
    for relation, query in MERGE_EDGES.items():
        loader.run_batched(driver, query, [e for e in edges if e["relation"] == relation])
    counts = classified["relation"].value_counts().to_dict()
    context.log.info(f"resolution: {counts} in {scoring_seconds:.1f}s of scoring")
    return dg.MaterializeResult(metadata={
        "reactome_pathways": len(reactome.ids),
        "kegg_pathways": len(kegg.ids),
        "pairs_sharing_a_protein": len(classified),
        **{f"pairs_{k}": int(v) for k, v in counts.items()},
        "scoring_seconds": round(scoring_seconds, 2),
        "score_distributions": dg.MetadataValue.md(f"![scores](data:image/png;base64,{_plot(classified)})"),
    })
