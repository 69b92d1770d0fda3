"""Graph reads for typed answers: the queries several kinds share, read-only, returned as `answer_data` models.

Everything is read from Neo4j as the graph assets wrote it (HAS_MEMBER, SUBPATHWAY_OF, EQUIVALENT_TO / PART_OF
with their confidence and scores), so an answer states exactly what the graph holds. Kinds with a query of their
own (retrieval/kinds/) run it through `rows`, which reads with READ routing and a per-query timeout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from retrieval.model.answer_data import GeneRef, Mapping, NodeRef
from retrieval.model.plan import Entity

if TYPE_CHECKING:
    from neo4j import Driver

MAX_COUNTERPARTS = 10
QUERY_TIMEOUT_S = 5.0  # one typed answer's query: past this the question is answered as too broad

MEMBERS = """
UNWIND $ids AS pid
MATCH (p:Pathway {id: pid})
OPTIONAL MATCH (p)-[:HAS_MEMBER]->(g:Gene)
WITH p, g ORDER BY g.symbol
WITH p, collect(g {.id, .symbol, .name}) AS genes
CALL (p) { OPTIONAL MATCH (p)-[:HAS_MEMBER]->(c:Compound) WITH c ORDER BY c.id RETURN collect(c.id) AS compounds }
RETURN p.id AS id, genes, compounds
"""
# Smallest pathways first: the most specific to the genes asked about ("p53 signaling" before "Disease").
GENE_PATHWAYS = """
MATCH (p:Pathway)-[:HAS_MEMBER]->(g:Gene) WHERE g.id IN $ids
WITH p, count(DISTINCT g) AS n WHERE n = size($ids)
CALL (p) { MATCH (p)-[:HAS_MEMBER]->(m:Gene) RETURN count(m) AS size }
RETURN p.id AS id, p.name AS name, p.source AS source, size ORDER BY size, p.id
"""
MAPPINGS = """
MATCH (p:Pathway {id: $id})-[e:EQUIVALENT_TO|PART_OF]-(q:Pathway)
WHERE $target = '' OR q.source = $target
OPTIONAL MATCH (p)-[:HAS_MEMBER]->(sg:Gene)<-[:HAS_MEMBER]-(q)
WITH p, e, q, sg ORDER BY sg.symbol
WITH p, e, q, collect(sg.symbol) AS shared
RETURN q.id AS id, q.name AS name, q.source AS source, type(e) AS relation, startNode(e) = p AS outgoing,
       e.confidence AS confidence, e.jaccard AS jaccard, e.overlap AS overlap, shared
ORDER BY relation = 'EQUIVALENT_TO' DESC, e.jaccard DESC, coalesce(e.confidence, 0) DESC
"""
BETWEEN = """
MATCH (p:Pathway {id: $a})-[e:EQUIVALENT_TO|PART_OF]-(q:Pathway {id: $b})
RETURN q.id AS id, q.name AS name, q.source AS source, type(e) AS relation, startNode(e) = p AS outgoing,
       e.confidence AS confidence, e.jaccard AS jaccard, e.overlap AS overlap, [] AS shared
"""
HIERARCHY = """
MATCH (p:Pathway {id: $id})
CALL (p) { OPTIONAL MATCH (p)-[:SUBPATHWAY_OF]->(up:Pathway) WITH up ORDER BY up.id
           RETURN collect(up {.id, .name, .source}) AS parents }
CALL (p) { OPTIONAL MATCH (down:Pathway)-[:SUBPATHWAY_OF]->(p) WITH down ORDER BY down.id
           RETURN collect(down {.id, .name, .source}) AS children }
RETURN parents, children
"""
# Every ancestor with the shortest chain of SUBPATHWAY_OF edges up to it (the hierarchy is a DAG, not a tree).
ANCESTORS = """
MATCH (p:Pathway {id: $id})
OPTIONAL MATCH chain = shortestPath((p)-[:SUBPATHWAY_OF*1..32]->(a:Pathway)) WHERE a <> p
WITH a, chain ORDER BY length(chain)
RETURN a.id AS id, a.name AS name, a.source AS source, length(chain) AS steps,
       [n IN nodes(chain) | n {.id, .name, .source}] AS lineage
"""
DESCENDANTS = """
MATCH (p:Pathway {id: $id})<-[:SUBPATHWAY_OF*1..32]-(d:Pathway)
RETURN DISTINCT d.id AS id
"""
PATHWAY = (
    "MATCH (p:Pathway {id: $id}) RETURN p.id AS id, p.name AS name, p.source AS source, p.category AS "
    "category, p.subcategory AS subcategory"
)
# Compound nodes are keyed 'CHEBI:15361' (Reactome's ChEBI members) or 'KEGG:C00022' (KEGG): graph/rows.py.
COMPOUND_PATHWAYS = """
MATCH (p:Pathway)-[:HAS_MEMBER]->(c:Compound) WHERE c.id IN $ids
WITH p, count(DISTINCT c) AS n WHERE n = size($ids)
CALL (p) { MATCH (p)-[:HAS_MEMBER]->(m:Gene) RETURN count(m) AS size }
RETURN p.id AS id, p.name AS name, p.source AS source, size ORDER BY size, p.id
"""


class GraphQueryTimeout(RuntimeError):
    """A typed answer's query ran past its time limit: the question is too broad to answer whole."""


def node(entity: Entity) -> NodeRef:
    return NodeRef(id=entity.id, name=entity.name, source=entity.source)


def gene_refs(rows: list[dict[str, Any]]) -> list[GeneRef]:
    return [GeneRef(id=g["id"], symbol=g["symbol"] or g["id"], name=g.get("name") or "") for g in rows]


def gene_ref(entity: Entity) -> GeneRef:
    return GeneRef(id=entity.id, symbol=entity.name or entity.id)


def mapping(row: dict[str, Any]) -> Mapping:
    equivalent = row["relation"] == "EQUIVALENT_TO"
    return Mapping(
        pathway=NodeRef(id=row["id"], name=row["name"] or "", source=row["source"] or ""),
        relation="equivalent" if equivalent else "part_of",
        direction="" if equivalent else ("inside" if row["outgoing"] else "contains"),
        confidence=row["confidence"],
        jaccard=row["jaccard"],
        overlap=row["overlap"],
        shared_genes=list(row["shared"]),
    )


def pathway_rows(rows: list[dict[str, Any]], source: str) -> list[NodeRef]:
    return [
        NodeRef(id=r["id"], name=r["name"] or "", source=r["source"] or "", size=r["size"])
        for r in rows
        if not source or r["source"] == source
    ]


def compound_key(compound: str) -> str:
    return compound if compound.startswith("CHEBI:") else f"KEGG:{compound}"


class GraphReader:
    def __init__(self, driver: Driver, timeout_s: float = QUERY_TIMEOUT_S) -> None:
        self.driver = driver
        self.timeout_s = timeout_s

    def rows(self, query: str, **params: Any) -> list[dict[str, Any]]:
        from neo4j import Query, RoutingControl
        from neo4j.exceptions import Neo4jError

        # READ access: the serving path cannot write to the graph, whatever a query says.
        try:
            records = self.driver.execute_query(
                Query(query, timeout=self.timeout_s), routing_=RoutingControl.READ, **params
            ).records
        except Neo4jError as exc:
            if "TimedOut" in (exc.code or "") or "timed out" in (exc.message or "").lower():
                raise GraphQueryTimeout(f"the graph query ran past {self.timeout_s:g} s") from exc
            raise
        return [r.data() for r in records]

    def members(self, ids: list[str]) -> dict[str, tuple[list[GeneRef], list[str]]]:
        """Each pathway's member genes (by symbol) and compound ids."""
        return {r["id"]: (gene_refs(r["genes"]), list(r["compounds"])) for r in self.rows(MEMBERS, ids=ids)}

    def genes_of(self, ids: list[str]) -> dict[str, list[GeneRef]]:
        return {pid: genes for pid, (genes, _) in self.members(ids).items()}

    def mappings(self, pathway_id: str, target: str = "") -> list[Mapping]:
        return [mapping(r) for r in self.rows(MAPPINGS, id=pathway_id, target=target)[:MAX_COUNTERPARTS]]

    def between(self, left: str, right: str) -> Mapping | None:
        rows = self.rows(BETWEEN, a=left, b=right)
        return mapping(rows[0]) if rows else None

    def counterpart_of(self, pathway_id: str, target: str) -> Entity | None:
        """The resolved counterpart (equivalent first, then the largest overlap) in the other database."""
        mapped = self.rows(MAPPINGS, id=pathway_id, target=target)
        if not mapped:
            return None
        return Entity(type="pathway", id=mapped[0]["id"], name=mapped[0]["name"] or "", source=mapped[0]["source"])

    def hierarchy(self, pathway_id: str) -> tuple[list[NodeRef], list[NodeRef]]:
        rows = self.rows(HIERARCHY, id=pathway_id)
        row = rows[0] if rows else {"parents": [], "children": []}
        return [NodeRef(**p) for p in row["parents"]], [NodeRef(**c) for c in row["children"]]

    def ancestors(self, pathway_id: str) -> dict[str, list[NodeRef]]:
        """Every ancestor's id → the shortest lineage from the pathway up to it (both ends included)."""
        rows = self.rows(ANCESTORS, id=pathway_id)
        return {r["id"]: [NodeRef(**n) for n in r["lineage"]] for r in rows if r["id"]}

    def descendants(self, pathway_id: str) -> set[str]:
        """Every pathway below this one, at any depth."""
        return {r["id"] for r in self.rows(DESCENDANTS, id=pathway_id)}

    def pathway(self, pathway_id: str) -> dict[str, Any] | None:
        rows = self.rows(PATHWAY, id=pathway_id)
        return rows[0] if rows else None

    def pathways_with_genes(self, gene_ids: list[str], source: str = "") -> list[NodeRef]:
        return pathway_rows(self.rows(GENE_PATHWAYS, ids=gene_ids), source)

    def pathways_with_compounds(self, compound_ids: list[str], source: str = "") -> list[NodeRef]:
        return pathway_rows(self.rows(COMPOUND_PATHWAYS, ids=[compound_key(c) for c in compound_ids]), source)
