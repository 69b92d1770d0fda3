"""The graph around the pathways and genes of an answer, small enough to draw: each seed with its related pathways
(equivalent, part of, sub-pathway) and its first member genes, or for a gene the pathways that contain it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from neo4j import Driver

MAX_SEEDS = 6
PER_SEED = 8

_PATHWAYS = """
UNWIND $ids AS pid
MATCH (p:Pathway {id: pid})
CALL (p) {
  OPTIONAL MATCH (p)-[r:EQUIVALENT_TO|PART_OF|SUBPATHWAY_OF]-(q:Pathway)
  WITH r, q ORDER BY type(r), q.id
  RETURN collect(CASE WHEN q IS NULL THEN NULL
                 ELSE {id: q.id, name: q.name, source: q.source, type: type(r), outgoing: startNode(r) = p} END)
         AS pathways
}
CALL (p) {
  OPTIONAL MATCH (p)-[:HAS_MEMBER]->(g:Gene)
  WITH g ORDER BY g.symbol
  RETURN collect(CASE WHEN g IS NULL THEN NULL ELSE {id: g.id, name: g.symbol} END) AS genes
}
RETURN p.id AS id, p.name AS name, p.source AS source, pathways, genes
"""

_GENES = """
UNWIND $ids AS gid
MATCH (g:Gene {id: gid})
CALL (g) {
  OPTIONAL MATCH (p:Pathway)-[:HAS_MEMBER]->(g)
  WITH p ORDER BY p.source, p.id
  RETURN collect(CASE WHEN p IS NULL THEN NULL ELSE {id: p.id, name: p.name, source: p.source} END) AS pathways
}
RETURN g.id AS id, g.symbol AS name, pathways
"""

EdgeType = Literal["HAS_MEMBER", "EQUIVALENT_TO", "PART_OF", "SUBPATHWAY_OF"]


class GraphNode(BaseModel):
    id: str
    label: str
    kind: Literal["pathway", "gene"]
    source: str = ""
    seed: bool = Field(default=False, description="Asked for (from the answer), not reached from another node.")
    more: int = Field(default=0, description="Neighbours left out of the drawing.")


class GraphEdge(BaseModel):
    source: str
    target: str
    type: EdgeType


class Neighbourhood(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    missing: list[str] = Field(default_factory=list, description="Requested ids that are not in the graph.")


def neighbourhood(driver: Driver, ids: list[str]) -> Neighbourhood:
    """Seeds (at most MAX_SEEDS) and up to PER_SEED neighbours of each; `more` counts what was left out."""
    seeds = list(dict.fromkeys(ids))[:MAX_SEEDS]
    nodes: dict[str, GraphNode] = {}
    edges: dict[tuple[str, str, str], GraphEdge] = {}

    def add(node: GraphNode) -> None:
        known = nodes.get(node.id)
        if known is None or (node.seed and not known.seed):
            nodes[node.id] = node

    def link(source: str, target: str, kind: EdgeType) -> None:
        edges.setdefault((source, target, kind), GraphEdge(source=source, target=target, type=kind))

    for row in _read(driver, _PATHWAYS, [s for s in seeds if not s.startswith("HGNC:")]):
        related, genes = row["pathways"], row["genes"]
        shown = related[: PER_SEED // 2] + genes[: PER_SEED - min(len(related), PER_SEED // 2)]
        add(
            GraphNode(
                id=row["id"],
                label=row["name"] or row["id"],
                kind="pathway",
                source=row["source"] or "",
                seed=True,
                more=len(related) + len(genes) - len(shown),
            )
        )
        for other in related[: PER_SEED // 2]:
            add(
                GraphNode(
                    id=other["id"], label=other["name"] or other["id"], kind="pathway", source=other["source"] or ""
                )
            )
            ends = (row["id"], other["id"]) if other["outgoing"] else (other["id"], row["id"])
            link(*ends, other["type"])
        for gene in genes[: PER_SEED - min(len(related), PER_SEED // 2)]:
            add(GraphNode(id=gene["id"], label=gene["name"] or gene["id"], kind="gene", source="hgnc"))
            link(row["id"], gene["id"], "HAS_MEMBER")
    for row in _read(driver, _GENES, [s for s in seeds if s.startswith("HGNC:")]):
        pathways = row["pathways"]
        add(
            GraphNode(
                id=row["id"],
                label=row["name"] or row["id"],
                kind="gene",
                source="hgnc",
                seed=True,
                more=max(0, len(pathways) - PER_SEED),
            )
        )
        for pathway in pathways[:PER_SEED]:
            add(
                GraphNode(
                    id=pathway["id"],
                    label=pathway["name"] or pathway["id"],
                    kind="pathway",
                    source=pathway["source"] or "",
                )
            )
            link(pathway["id"], row["id"], "HAS_MEMBER")
    missing = [s for s in seeds if s not in nodes or not nodes[s].seed]
    return Neighbourhood(nodes=list(nodes.values()), edges=list(edges.values()), missing=missing)


def _read(driver: Driver, query: str, ids: list[str]) -> list[dict[str, Any]]:
    from neo4j import RoutingControl

    if not ids:
        return []
    return [r.data() for r in driver.execute_query(query, ids=ids, routing_=RoutingControl.READ).records]
