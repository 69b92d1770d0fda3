"""Checks on the graph and the resolution: counts agree with Postgres, every pathway has a species, resolution
edges join a Reactome and a KEGG pathway, and every score is in range."""

import dagster as dg
from sqlalchemy import text

from dagster_project.defs.assets.graph import knowledge_graph
from dagster_project.defs.assets.resolution import pathway_resolution
from dagster_project.defs.check_decorator import flux_check
from dagster_project.defs.resources import Neo4jResource, PostgresResource
from dagster_project.graph.disease_rows import ASSOCIATIONS, DISEASES
from dagster_project.graph.rows import GENE_MEMBERS


def _pg(postgres: PostgresResource, sql: str) -> int:
    with postgres.get_engine().connect() as conn:
        return int(conn.execute(text(sql)).scalar_one())


def _graph(neo4j: Neo4jResource, cypher: str) -> int:
    return int(neo4j.get_driver().execute_query(cypher).records[0][0])


@flux_check(
    asset=knowledge_graph,
    blocking=True,
    description="Pathway, Gene, Paper and Disease nodes, gene HAS_MEMBER and ASSOCIATED_WITH edges match "
    "the Postgres rows.",
)
def graph_matches_postgres(postgres: PostgresResource, neo4j: Neo4jResource) -> dg.AssetCheckResult:
    pairs = {
        "pathways": (
            _pg(postgres, "SELECT count(*) FROM pathways WHERE status = 'active'"),
            _graph(neo4j, "MATCH (p:Pathway) RETURN count(p)"),
        ),
        "genes": (
            _pg(postgres, "SELECT count(*) FROM gene_identifiers WHERE status = 'Approved'"),
            _graph(neo4j, "MATCH (g:Gene) RETURN count(g)"),
        ),
        "papers": (
            _pg(postgres, "SELECT count(*) FROM documents WHERE type = 'paper' AND status = 'active'"),
            _graph(neo4j, "MATCH (p:Paper) RETURN count(p)"),
        ),
        "gene_members": (
            _pg(postgres, f"SELECT coalesce(sum(cardinality(members)), 0) FROM ({GENE_MEMBERS}) x"),
            _graph(neo4j, "MATCH (:Pathway)-[r:HAS_MEMBER]->(:Gene) RETURN count(r)"),
        ),
        "diseases": (
            _pg(postgres, f"SELECT count(*) FROM ({DISEASES}) x"),
            _graph(neo4j, "MATCH (d:Disease) RETURN count(d)"),
        ),
        "disease_associations": (
            _pg(postgres, f"SELECT count(*) FROM ({ASSOCIATIONS}) x"),
            _graph(neo4j, "MATCH (:Gene)-[r:ASSOCIATED_WITH]->(:Disease) RETURN count(r)"),
        ),
    }
    mismatched = [name for name, (pg, graph) in pairs.items() if pg != graph]
    return dg.AssetCheckResult(
        passed=not mismatched,
        metadata={
            **{f"{k} (postgres / neo4j)": f"{pg} / {graph}" for k, (pg, graph) in pairs.items()},
            "mismatched": ", ".join(mismatched) or "none",
        },
    )


@flux_check(asset=knowledge_graph, blocking=True, description="Every pathway points at exactly one Species.")
def every_pathway_has_one_species(neo4j: Neo4jResource) -> dg.AssetCheckResult:
    bad = _graph(neo4j, "MATCH (p:Pathway) WHERE COUNT { (p)-[:IN_SPECIES]->(:Species) } <> 1 RETURN count(p)")
    return dg.AssetCheckResult(passed=bad == 0, metadata={"pathways_without_one_species": bad})


@flux_check(
    asset=pathway_resolution,
    blocking=True,
    description="Every EQUIVALENT_TO / PART_OF edge joins a Reactome and a KEGG pathway; the mapping "
    "table and the edges agree; every score is in range.",
)
def resolution_edges_valid(postgres: PostgresResource, neo4j: Neo4jResource) -> dg.AssetCheckResult:
    wrong_ends = _graph(
        neo4j, "MATCH (a:Pathway)-[r:EQUIVALENT_TO|PART_OF]->(b:Pathway) WHERE a.source = b.source RETURN count(r)"
    )
    edges = _graph(neo4j, "MATCH (:Pathway)-[r:EQUIVALENT_TO|PART_OF]->(:Pathway) RETURN count(r)")
    rows = _pg(postgres, "SELECT count(*) FROM pathway_mappings WHERE relation <> 'unrelated'")
    out_of_range = _pg(
        postgres,
        "SELECT count(*) FROM pathway_mappings WHERE NOT (overlap BETWEEN 0 AND 1"
        " AND jaccard BETWEEN 0 AND 1 AND q_value BETWEEN 0 AND 1 AND p_value <= q_value"
        " AND jaccard <= overlap)",
    )
    ok = wrong_ends == 0 and edges == rows and out_of_range == 0
    return dg.AssetCheckResult(
        passed=ok,
        metadata={
            "edges_within_one_source": wrong_ends,
            "edges": edges,
            "mapping_rows": rows,
            "scores_out_of_range": out_of_range,
        },
    )


GRAPH_CHECKS = [graph_matches_postgres, every_pathway_has_one_species, resolution_edges_valid]
