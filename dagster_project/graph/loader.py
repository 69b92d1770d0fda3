"""Neo4j loaders: MERGE on stable ids in batched UNWIND statements, one transaction per batch. Never CREATE:
loading twice yields the same graph. Rows come from the Postgres tables, so the graph never disagrees with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from dagster_project.graph import disease_rows, reaction_rows

if TYPE_CHECKING:
    from neo4j import Driver, ManagedTransaction

BATCH = 5000
# What the projection (knowledge_graph) writes; other assets add edges (the resolution) or properties (vectors).
PROJECTED_LABELS = frozenset(
    {"Pathway", "Species", "Reaction", "Gene", "Compound", "Complex", "Paper", *disease_rows.LABELS}
)
PROJECTED_TYPES = frozenset(
    {"IN_SPECIES", "SUBPATHWAY_OF", "HAS_REACTION", "HAS_MEMBER", "MENTIONS", *reaction_rows.TYPES, *disease_rows.TYPES}
)

MERGE_PATHWAYS = """
UNWIND $rows AS row
MERGE (p:Pathway {id: row.id})
SET p.source = row.source, p.name = row.name, p.category = row.category, p.subcategory = row.subcategory
MERGE (s:Species {name: row.species})
MERGE (p)-[:IN_SPECIES]->(s)
"""
MERGE_HIERARCHY = """
UNWIND $rows AS row
MATCH (child:Pathway {id: row.child}) MATCH (parent:Pathway {id: row.parent})
MERGE (child)-[:SUBPATHWAY_OF]->(parent)
"""
MERGE_REACTIONS = """
UNWIND $rows AS row
MERGE (r:Reaction {id: row.id})
SET r.name = row.name
WITH r, row
MATCH (p:Pathway {id: row.pathway})
MERGE (p)-[:HAS_REACTION]->(r)
"""
MERGE_GENES = """
UNWIND $rows AS row
MERGE (g:Gene {id: row.id})
SET g.symbol = row.symbol, g.name = row.name, g.entrez = row.entrez, g.uniprot = row.uniprot
"""


def _sync_members(label: str, create_missing: bool) -> str:
    """Make each pathway's `label` members exactly `row.members`: stale edges go, new ones are merged.
    Genes must already exist (loaded from HGNC); compounds have no table of their own and are merged here."""
    find = "MERGE" if create_missing else "MATCH"
    return f"""
UNWIND $rows AS row
MATCH (p:Pathway {{id: row.pathway}})
OPTIONAL MATCH (p)-[old:HAS_MEMBER]->(m:{label}) WHERE NOT m.id IN row.members
DELETE old
WITH DISTINCT p, row
UNWIND row.members AS member_id
{find} (m:{label} {{id: member_id}})
MERGE (p)-[:HAS_MEMBER]->(m)
"""


SYNC_GENE_MEMBERS = _sync_members("Gene", create_missing=False)
SYNC_COMPOUND_MEMBERS = _sync_members("Compound", create_missing=True)
MERGE_PAPERS = """
UNWIND $rows AS row
MERGE (paper:Paper {id: row.id})
SET paper.source = row.source, paper.title = row.title, paper.year = row.year
WITH paper, row
OPTIONAL MATCH (paper)-[old:MENTIONS]->(g:Gene) WHERE NOT g.id IN row.genes
DELETE old
WITH DISTINCT paper, row
UNWIND row.genes AS gene_id
MATCH (g:Gene {id: gene_id})
MERGE (paper)-[:MENTIONS]->(g)
"""
LIST_ROW_QUERIES = frozenset({SYNC_GENE_MEMBERS, SYNC_COMPOUND_MEMBERS, MERGE_PAPERS, *reaction_rows.LIST_ROW_QUERIES})
LIST_ROW_BATCH = 500
# Nodes whose row is gone from Postgres (a pathway dropped by its source, a withdrawn gene) leave the graph too.
PRUNE = {
    label: f"MATCH (n:{label}) WHERE NOT n.id IN $ids CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS"
    for label in ("Pathway", "Gene", "Paper", "Reaction")
}
# A compound no pathway, reaction or complex names any more.
_NAMED_BY = "|".join(("HAS_MEMBER", "HAS_COMPONENT", *reaction_rows.ROLE_TYPES.values()))
PRUNE_COMPOUNDS = f"MATCH (c:Compound) WHERE NOT (c)<-[:{_NAMED_BY}]-() DETACH DELETE c"

SET_PATHWAY_VECTORS = """
UNWIND $rows AS row
MATCH (p:Pathway {id: row.id})
CALL db.create.setNodeVectorProperty(p, 'embedding', row.vector)
SET p.embedding_hash = row.hash
"""
# What each Pathway's vector was computed from, so an unchanged vector is not written again.
PATHWAY_VECTOR_HASHES = (
    "MATCH (p:Pathway) WHERE p.embedding_hash IS NOT NULL RETURN p.id AS id, p.embedding_hash AS hash"
)


def batched(rows: Sequence[dict[str, Any]] | Iterable[dict[str, Any]], size: int = BATCH) -> Iterator[list]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def rows_per_batch(query: str) -> int:
    """Rows per transaction: statements whose rows carry member lists write tens of relationships per row, and a
    MERGE of a relationship checks the transaction's own new ones, so one huge transaction grows quadratically
    (the snapshot's 163k gene memberships: 4.5 min in one transaction, 6 s in batches of 500 pathways)."""
    return LIST_ROW_BATCH if query in LIST_ROW_QUERIES else BATCH


def run_batched(driver: Driver, query: str, rows: Iterable[dict[str, Any]]) -> int:
    """One write transaction per batch; returns the number of rows sent."""
    sent = 0

    def work(tx: ManagedTransaction, batch: list[dict[str, Any]]) -> None:
        tx.run(query, rows=batch).consume()

    with driver.session() as session:
        for batch in batched(rows, rows_per_batch(query)):
            session.execute_write(work, batch)
            sent += len(batch)
    return sent


def prune(driver: Driver, label: str, keep_ids: list[str]) -> int:
    """Delete `label` nodes not in `keep_ids` (auto-commit: CALL … IN TRANSACTIONS needs its own transaction)."""
    with driver.session() as session:
        summary = session.run(PRUNE[label], ids=keep_ids).consume()
    return summary.counters.nodes_deleted


def graph_counts(driver: Driver) -> tuple[dict[str, int], dict[str, int]]:
    labels = {
        r["label"]: r["n"]
        for r in driver.execute_query(
            "MATCH (n) UNWIND labels(n) AS label WITH label WHERE label <> 'FluxMigration' RETURN label, count(*) AS n"
        ).records
    }
    types = {
        r["type"]: r["n"]
        for r in driver.execute_query("MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n").records
    }
    return labels, types
