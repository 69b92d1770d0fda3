"""ClinVar's conditions and gene-condition associations in the graph: the rows (read from Postgres) and statements
(MERGE on stable ids).

(:Gene) -[:ASSOCIATED_WITH {source, source_id, relation, last_updated}]-> (:Disease {id: MedGen concept, name, mondo,
omim}): one edge per asserting source, as `disease_associations` has one row per (gene, condition, source). Only
approved HGNC genes are Gene nodes, so only their associations are projected. An edge whose row left Postgres is
deleted, and a Disease no edge points at any more goes with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Engine, text

if TYPE_CHECKING:
    from neo4j import Driver

_PROJECTED = """
disease_associations a JOIN gene_identifiers g ON g.hgnc_id = a.hgnc_id AND g.status = 'Approved'
"""
DISEASES = f"""
SELECT d.concept_id AS id, d.name, d.mondo_id AS mondo, d.omim_id AS omim FROM diseases d
WHERE EXISTS (SELECT 1 FROM {_PROJECTED} WHERE a.concept_id = d.concept_id) ORDER BY d.concept_id
"""
ASSOCIATIONS = f"""
SELECT a.hgnc_id AS gene, a.concept_id AS disease, a.source_name AS source, a.source_id, a.relation,
       coalesce(a.last_updated::text, '') AS last_updated
FROM {_PROJECTED} ORDER BY a.hgnc_id, a.concept_id, a.source_name
"""
MERGE_DISEASES = """
UNWIND $rows AS row
MERGE (d:Disease {id: row.id})
SET d.name = row.name, d.mondo = row.mondo, d.omim = row.omim
"""
MERGE_ASSOCIATIONS = """
UNWIND $rows AS row
MATCH (g:Gene {id: row.gene}) MATCH (d:Disease {id: row.disease})
MERGE (g)-[r:ASSOCIATED_WITH {source: row.source}]->(d)
SET r.source_id = row.source_id, r.relation = row.relation,
    r.last_updated = CASE row.last_updated WHEN '' THEN null ELSE date(row.last_updated) END
"""
# Edges whose (gene, condition, source) is no row of the projection any more, then the conditions they left alone.
PRUNE_ASSOCIATIONS = """
MATCH (g:Gene)-[r:ASSOCIATED_WITH]->(d:Disease)
WHERE NOT g.id + '|' + d.id + '|' + r.source IN $keys
DELETE r
"""
PRUNE_ORPHAN_DISEASES = "MATCH (d:Disease) WHERE NOT (d)<-[:ASSOCIATED_WITH]-() DETACH DELETE d"

LOAD_STEPS: tuple[tuple[str, str, str], ...] = (
    ("diseases", MERGE_DISEASES, DISEASES),
    ("disease_associations", MERGE_ASSOCIATIONS, ASSOCIATIONS),
)
LABELS = frozenset({"Disease"})
TYPES = frozenset({"ASSOCIATED_WITH"})


def prune(driver: Driver, engine: Engine) -> dict[str, int]:
    """Delete the association edges and Disease nodes Postgres no longer holds; {what: how many deleted}."""
    with engine.connect() as conn:
        keys = [f"{r.gene}|{r.disease}|{r.source}" for r in conn.execute(text(ASSOCIATIONS))]
    with driver.session() as session:
        edges = session.run(PRUNE_ASSOCIATIONS, keys=keys).consume().counters.relationships_deleted
        nodes = session.run(PRUNE_ORPHAN_DISEASES).consume().counters.nodes_deleted
    return {"ASSOCIATED_WITH": edges, "Disease": nodes}
