"""Graph retriever: the pathways most similar to a query (Neo4j vector index `pathway_embedding`), each expanded
to depth 2 — parents and sub-pathways, reactions, member genes and compounds, and Reactome↔KEGG equivalents with
the genes they share — plus genes named in the question, looked up directly. Each node becomes one compact text
evidence item whose id is the node id, so answers cite graph nodes exactly as they cite chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from retrieval.model.genes import GeneMention
from retrieval.model.types import Evidence

if TYPE_CHECKING:
    from neo4j import Driver, Record

SIMILAR = """
CALL db.index.vector.queryNodes('pathway_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, score
"""
EXPAND = """
UNWIND $ids AS pid
MATCH (p:Pathway {id: pid})
CALL (p) { OPTIONAL MATCH (p)-[:IN_SPECIES]->(s:Species) RETURN collect(s.name)[0] AS species }
CALL (p) { OPTIONAL MATCH (p)-[:SUBPATHWAY_OF]->(up:Pathway) RETURN collect(up {.id, .name})[..5] AS parents }
CALL (p) {
  OPTIONAL MATCH (down:Pathway)-[:SUBPATHWAY_OF]->(p)
  OPTIONAL MATCH (down)-[:HAS_MEMBER]->(dg:Gene)
  WITH down, count(dg) AS genes WHERE down IS NOT NULL
  RETURN collect(down {.id, .name, genes: genes})[..8] AS children
}
CALL (p) { OPTIONAL MATCH (p)-[:HAS_REACTION]->(r:Reaction) RETURN count(r) AS n_reactions,
           collect(r {.id, .name})[..6] AS reactions }
CALL (p) { OPTIONAL MATCH (p)-[:HAS_MEMBER]->(g:Gene) WITH g ORDER BY g.symbol
           RETURN count(g) AS n_genes, collect(g.symbol)[..40] AS genes }
CALL (p) { OPTIONAL MATCH (p)-[:HAS_MEMBER]->(c:Compound) WITH c ORDER BY c.id
           RETURN count(c) AS n_compounds, collect(c.id)[..12] AS compounds }
CALL (p) {
  OPTIONAL MATCH (p)-[e:EQUIVALENT_TO|PART_OF]-(q:Pathway)
  WITH e, q WHERE q IS NOT NULL
  OPTIONAL MATCH (p)-[:HAS_MEMBER]->(sg:Gene)<-[:HAS_MEMBER]-(q)
  WITH e, q, sg ORDER BY sg.symbol
  WITH e, q, collect(sg.symbol) AS shared
  ORDER BY e.jaccard DESC
  RETURN collect({id: q.id, name: q.name, relation: type(e), outgoing: startNode(e) = p, overlap: e.overlap,
                  jaccard: e.jaccard, q_value: e.q_value, shared: shared})[..6] AS mapped
}
RETURN p.id AS id, p.name AS name, p.source AS source, p.category AS category, species, parents, children,
       n_reactions, reactions, n_genes, genes, n_compounds, compounds, mapped
"""
GENES = """
UNWIND $ids AS gid
MATCH (g:Gene {id: gid})
CALL (g) { OPTIONAL MATCH (p:Pathway)-[:HAS_MEMBER]->(g) WITH p ORDER BY p.source, p.id
           RETURN count(p) AS n_pathways, collect(p {.id, .name})[..15] AS pathways, collect(p.id) AS all_ids }
CALL (g) { OPTIONAL MATCH (paper:Paper)-[:MENTIONS]->(g) RETURN collect(paper.id)[..5] AS papers }
RETURN g.id AS id, g.symbol AS symbol, g.name AS name, g.uniprot AS uniprot, g.entrez AS entrez,
       n_pathways, pathways, all_ids, papers
"""
SOURCE_LABEL = {"reactome": "Reactome", "kegg": "KEGG"}


class GraphRetriever:
    def __init__(self, driver: Driver, top_k: int) -> None:
        self.driver = driver
        self.top_k = top_k

    def _read(self, query: str, **params: Any) -> list[Record]:
        """The records of `query`, read with READ routing: the serving path only reads the graph."""
        from neo4j import RoutingControl

        records: list[Record] = self.driver.execute_query(query, routing_=RoutingControl.READ, **params).records
        return records

    def similar_pathways(self, vector: Sequence[float]) -> list[tuple[str, float]]:
        if self.top_k <= 0:
            return []
        records = self._read(SIMILAR, k=self.top_k, vector=[float(x) for x in vector])
        return [(r["id"], float(r["score"])) for r in records]

    def retrieve(
        self,
        query: str,
        vector: Sequence[float],
        genes: list[GeneMention] | None = None,
        sources: list[str] | None = None,
    ) -> list[Evidence]:
        similar = self.similar_pathways(vector)
        scores = dict(similar)
        evidence = []
        if similar:
            rows = self._read(EXPAND, ids=[pid for pid, _ in similar])
            for row in sorted(rows, key=lambda r: -scores[r["id"]]):
                evidence.append(
                    Evidence(
                        id=row["id"],
                        kind="graph",
                        text=render_pathway(row.data()),
                        title=row["name"] or "",
                        source=row["source"] or "graph",
                        score=scores[row["id"]],
                        scores={"graph_cosine": scores[row["id"]]},
                        query=query,
                    )
                )
        if genes:
            evidence.extend(self.genes(genes, query))
        if sources:
            evidence = [e for e in evidence if e.source in sources or e.source == "hgnc"]
        return evidence

    def genes(self, mentions: list[GeneMention], query: str) -> list[Evidence]:
        ids = [m.gene.hgnc_id for m in mentions]
        rows = [r.data() for r in self._read(GENES, ids=ids)]
        return [
            Evidence(
                id=row["id"],
                kind="graph",
                text=render_gene(row, rows),
                title=row["symbol"] or row["id"],
                source="hgnc",
                score=1.0,
                scores={"named_in_question": 1.0},
                query=query,
            )
            for row in rows
        ]


def _names(items: list[dict[str, Any]]) -> str:
    return "; ".join(f"{i['id']} {i.get('name') or ''}".strip() for i in items)


def render_pathway(row: dict[str, Any]) -> str:
    source = SOURCE_LABEL.get(row["source"] or "", row["source"] or "")
    parts = [f'Pathway {row["id"]} "{row["name"]}" ({source}{", " + row["species"] if row["species"] else ""}).']
    if row["category"]:
        parts.append(f"Category: {row['category']}.")
    if row["parents"]:
        parts.append(f"Part of: {_names(row['parents'])}.")
    if row["children"]:
        parts.append(
            "Sub-pathways: " + "; ".join(f"{c['id']} {c['name']} ({c['genes']} genes)" for c in row["children"]) + "."
        )
    if row["n_reactions"]:
        parts.append(f"Reactions ({row['n_reactions']}): {_names(row['reactions'])}.")
    if row["n_genes"]:
        more = ", …" if row["n_genes"] > len(row["genes"]) else ""
        parts.append(f"Genes ({row['n_genes']}): {', '.join(row['genes'])}{more}.")
    if row["n_compounds"]:
        parts.append(f"Compounds ({row['n_compounds']}): {', '.join(row['compounds'])}.")
    for m in row["mapped"]:
        other = "KEGG" if row["source"] == "reactome" else "Reactome"
        if m["relation"] == "EQUIVALENT_TO":
            relation = f"{other} equivalent"
        else:
            relation = f"lies within {other}" if m["outgoing"] else f"contains {other}"
        shared = ", ".join(m["shared"][:30]) + (", …" if len(m["shared"]) > 30 else "")
        parts.append(
            f'{relation}: {m["id"]} "{m["name"]}" (overlap {m["overlap"]:.2f}, Jaccard '
            f"{m['jaccard']:.2f}, q={m['q_value']:.1e}); shared genes ({len(m['shared'])}): {shared}."
        )
    return " ".join(parts)


def render_gene(row: dict[str, Any], all_rows: list[dict[str, Any]]) -> str:
    ids = ", ".join(
        x
        for x in [
            f"UniProt {', '.join(row['uniprot'] or [])}" if row["uniprot"] else "",
            f"Entrez {row['entrez']}" if row["entrez"] else "",
        ]
        if x
    )
    parts = [f"Gene {row['id']} {row['symbol']} ({row['name']}{'; ' + ids if ids else ''})."]
    if row["n_pathways"]:
        parts.append(f"Member of {row['n_pathways']} pathways: {_names(row['pathways'])}.")
    else:
        parts.append("Member of no pathway in the graph.")
    # Each pair once, on the gene named first.
    for other in all_rows[all_rows.index(row) + 1 :]:
        if other["id"] != row["id"]:
            both = sorted(set(row["all_ids"]) & set(other["all_ids"]))
            parts.append(
                f"Pathways containing both {row['symbol']} and {other['symbol']} ({len(both)}): "
                f"{', '.join(both[:20]) or 'none'}."
            )
    if row["papers"]:
        parts.append(f"Mentioned in: {', '.join(row['papers'])}.")
    return " ".join(parts)
