"""Graph facts for typed answers: one Cypher query per question kind, returned as `answer_data` models.

Everything is read from Neo4j as the graph assets wrote it (HAS_MEMBER, SUBPATHWAY_OF, EQUIVALENT_TO / PART_OF
with their confidence and scores), so an answer states exactly what the graph holds.
"""

from __future__ import annotations

from typing import Any

from neo4j import Driver, RoutingControl

from retrieval.model.answer_data import (
    AnswerData,
    ComparisonData,
    CompoundPathwaysData,
    CounterpartData,
    DifferenceData,
    GenePathwaysData,
    GeneRef,
    HierarchyData,
    Mapping,
    MembersData,
    NodeRef,
    NotFoundData,
    OverviewData,
    SharedGenesData,
)
from retrieval.model.pathways import PathwayRef
from retrieval.question.intent import Intent
from retrieval.retrievers.graph_retriever import SOURCE_LABEL

MAX_COUNTERPARTS = 10

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
GENE_INFO = "MATCH (g:Gene) WHERE g.id IN $ids RETURN g.id AS id, g.symbol AS symbol, g.name AS name"
# Compound nodes are keyed 'CHEBI:15361' (Reactome's ChEBI members) or 'KEGG:C00022' (KEGG): graph/rows.py.
COMPOUND_PATHWAYS = """
MATCH (p:Pathway)-[:HAS_MEMBER]->(c:Compound) WHERE c.id IN $ids
WITH p, count(DISTINCT c) AS n WHERE n = size($ids)
CALL (p) { MATCH (p)-[:HAS_MEMBER]->(m:Gene) RETURN count(m) AS size }
RETURN p.id AS id, p.name AS name, p.source AS source, size ORDER BY size, p.id
"""


def _node(ref: PathwayRef) -> NodeRef:
    return NodeRef(id=ref.id, name=ref.name, source=ref.source)


def _genes(rows: list[dict[str, Any]]) -> list[GeneRef]:
    return [GeneRef(id=g["id"], symbol=g["symbol"] or g["id"], name=g.get("name") or "") for g in rows]


def _mapping(row: dict[str, Any]) -> Mapping:
    equivalent = row["relation"] == "EQUIVALENT_TO"
    return Mapping(pathway=NodeRef(id=row["id"], name=row["name"] or "", source=row["source"] or ""),
                   relation="equivalent" if equivalent else "part_of",
                   direction="" if equivalent else ("inside" if row["outgoing"] else "contains"),
                   confidence=row["confidence"], jaccard=row["jaccard"], overlap=row["overlap"],
                   shared_genes=list(row["shared"]))


class GraphFacts:
    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    def _rows(self, query: str, **params: Any) -> list[dict[str, Any]]:
        # READ access: the serving path cannot write to the graph, whatever a query says.
        records = self.driver.execute_query(query, routing_=RoutingControl.READ, **params).records
        return [r.data() for r in records]

    def members(self, refs: list[PathwayRef]) -> dict[str, list[GeneRef]]:
        return {pid: genes for pid, (genes, _) in self._members_and_compounds(refs).items()}

    def _members_and_compounds(self, refs: list[PathwayRef]) -> dict[str, tuple[list[GeneRef], list[str]]]:
        rows = self._rows(MEMBERS, ids=[ref.id for ref in refs])
        return {r["id"]: (_genes(r["genes"]), list(r["compounds"])) for r in rows}

    def facts(self, intent: Intent) -> AnswerData:
        build = getattr(self, f"_{intent.kind}")
        return build(intent)

    def _members(self, intent: Intent) -> MembersData:
        ref = intent.pathways[0]
        asked_about = None
        counterpart = (self._counterpart_of(ref, intent.target_source)
                       if intent.target_source and ref.source != intent.target_source else None)
        if counterpart is not None:  # asked of the other database: the counterpart the resolution found
            asked_about, ref = _node(ref), counterpart
        genes, found_compounds = self._members_and_compounds([ref]).get(ref.id, ([], []))
        compounds = found_compounds if intent.compounds else []  # one query for both
        total = len(genes)
        if intent.name_filter:
            genes = [g for g in genes if intent.name_filter in g.name.lower()]
        asked = [GeneRef(id=g.hgnc_id, symbol=g.symbol, name=g.name) for g in intent.genes]
        if asked:  # "Is TP53 in …?": the members among the genes asked about
            genes = [g for g in genes if g.id in {a.id for a in asked}]
        return MembersData(pathway=_node(ref), genes=genes, total=total, compounds=compounds,
                           name_filter=intent.name_filter, counterpart_of=asked_about, count=intent.count,
                           asked_genes=asked)

    def _gene_pathways(self, intent: Intent) -> GenePathwaysData:
        rows = self._rows(GENE_PATHWAYS, ids=[g.hgnc_id for g in intent.genes])
        genes = [GeneRef(id=g.hgnc_id, symbol=g.symbol, name=g.name) for g in intent.genes]
        pathways = _pathway_rows(rows, intent.target_source)
        return GenePathwaysData(genes=genes, pathways=pathways, total=len(pathways), source=intent.target_source,
                                count=intent.count)

    def _compound_pathways(self, intent: Intent) -> CompoundPathwaysData | NotFoundData:
        keys = [_compound_key(c) for c in intent.compound_ids]
        rows = self._rows(COMPOUND_PATHWAYS, ids=keys)
        if not rows and len(keys) == 1:
            # Compound nodes exist only as some pathway's member: none holding it means the index lacks it.
            return NotFoundData(asked=intent.compound_ids[0], what="compound", needed_for="compound_pathways")
        pathways = _pathway_rows(rows, intent.target_source)
        return CompoundPathwaysData(compounds=list(intent.compound_ids), pathways=pathways, total=len(pathways),
                                    source=intent.target_source, count=intent.count)

    def _difference(self, intent: Intent) -> DifferenceData:
        left, right = intent.pathways[:2]
        members = self.members([left, right])
        a, b = members.get(left.id, []), members.get(right.id, [])
        in_b = {g.id for g in b}
        only = [g for g in a if g.id not in in_b]
        return DifferenceData(left=_node(left), right=_node(right), genes=only, total=len(only),
                              sizes=[len(a), len(b)])

    def _overview(self, intent: Intent) -> OverviewData:
        ref = intent.pathways[0]
        genes, compounds = self._members_and_compounds([ref]).get(ref.id, ([], []))
        hierarchy = self._hierarchy(intent)
        counterparts = [_mapping(r) for r in self._rows(MAPPINGS, id=ref.id, target="")[:MAX_COUNTERPARTS]]
        return OverviewData(pathway=_node(ref), gene_total=len(genes), genes=genes, compound_total=len(compounds),
                            parents=hierarchy.parents, children=hierarchy.children, counterparts=counterparts)

    def _counterpart(self, intent: Intent) -> CounterpartData:
        ref = intent.pathways[0]
        rows = self._rows(MAPPINGS, id=ref.id, target=intent.target_source)
        return CounterpartData(pathway=_node(ref), target_source=intent.target_source,
                               counterparts=[_mapping(r) for r in rows[:MAX_COUNTERPARTS]])

    def _between(self, left: PathwayRef, right: PathwayRef) -> Mapping | None:
        rows = self._rows(BETWEEN, a=left.id, b=right.id)
        return _mapping(rows[0]) if rows else None

    def _counterpart_of(self, ref: PathwayRef, target: str) -> PathwayRef | None:
        """The resolved counterpart (equivalent first, then the largest overlap) in the other database."""
        mapped = self._rows(MAPPINGS, id=ref.id, target=target)
        return PathwayRef(mapped[0]["id"], mapped[0]["source"], mapped[0]["name"] or "") if mapped else None

    def _shared_genes(self, intent: Intent) -> SharedGenesData:
        left = intent.pathways[0]
        right = intent.pathways[1] if len(intent.pathways) > 1 else self._counterpart_of(left, intent.target_source)
        if right is None:
            return SharedGenesData(pathways=[_node(left)], sizes=[len(self.members([left]).get(left.id, []))],
                                   shared=[], total=0)
        members = self.members([left, right])
        a, b = members.get(left.id, []), members.get(right.id, [])
        in_b = {g.id for g in b}
        shared = [g for g in a if g.id in in_b]
        mapping = self._between(left, right)
        if mapping is not None:
            mapping.shared_genes = [g.symbol for g in shared]
        return SharedGenesData(pathways=[_node(left), _node(right)], sizes=[len(a), len(b)], shared=shared,
                               total=len(shared), mapping=mapping)

    def _hierarchy(self, intent: Intent) -> HierarchyData:
        ref = intent.pathways[0]
        rows = self._rows(HIERARCHY, id=ref.id)
        row = rows[0] if rows else {"parents": [], "children": []}
        return HierarchyData(pathway=_node(ref), parents=[NodeRef(**p) for p in row["parents"]],
                             children=[NodeRef(**c) for c in row["children"]],
                             direction=intent.direction, count=intent.count)  # type: ignore[arg-type]

    def _compare(self, intent: Intent) -> ComparisonData:
        if intent.genes and not intent.pathways:
            return self._compare_genes(intent)
        left, right = intent.pathways[:2]
        members = self.members([left, right])
        a = [g.symbol for g in members.get(left.id, [])]
        b = [g.symbol for g in members.get(right.id, [])]
        shared = [s for s in a if s in set(b)]
        mapping = self._between(left, right)
        rows = [("source", SOURCE_LABEL.get(left.source, left.source), SOURCE_LABEL.get(right.source, right.source)),
                ("member genes", str(len(a)), str(len(b))), ("shared genes", str(len(shared)), str(len(shared))),
                ("only here", str(len(a) - len(shared)), str(len(b) - len(shared)))]
        if mapping is not None:
            rows.append(("resolved relation", _relation_text(mapping), f"confidence {_num(mapping.confidence)}"))
        return ComparisonData(subject="pathways", left=_node(left), right=_node(right), shared=shared,
                              only_left=[s for s in a if s not in set(b)], only_right=[s for s in b if s not in set(a)],
                              mapping=mapping, table=_table(f"{left.name} ({left.id})", f"{right.name} ({right.id})",
                                                            rows))

    def _compare_genes(self, intent: Intent) -> ComparisonData:
        left, right = intent.genes[:2]
        pathways = {g.hgnc_id: [r["id"] for r in self._rows(GENE_PATHWAYS, ids=[g.hgnc_id])] for g in (left, right)}
        a, b = pathways[left.hgnc_id], pathways[right.hgnc_id]
        shared = [p for p in a if p in set(b)]
        rows = [("pathways", str(len(a)), str(len(b))), ("shared pathways", str(len(shared)), str(len(shared))),
                ("only this gene", str(len(a) - len(shared)), str(len(b) - len(shared)))]
        return ComparisonData(subject="genes", left=NodeRef(id=left.hgnc_id, name=left.symbol, source="hgnc"),
                              right=NodeRef(id=right.hgnc_id, name=right.symbol, source="hgnc"), shared=shared,
                              only_left=[p for p in a if p not in set(b)], only_right=[p for p in b if p not in set(a)],
                              table=_table(left.symbol, right.symbol, rows))


def _compound_key(compound: str) -> str:
    return compound if compound.startswith("CHEBI:") else f"KEGG:{compound}"


def _pathway_rows(rows: list[dict[str, Any]], source: str) -> list[NodeRef]:
    return [NodeRef(id=r["id"], name=r["name"] or "", source=r["source"] or "", size=r["size"]) for r in rows
            if not source or r["source"] == source]


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _relation_text(mapping: Mapping) -> str:
    if mapping.relation == "equivalent":
        return "equivalent"
    return "lies within the other" if mapping.direction == "inside" else "contains the other"


def _table(left: str, right: str, rows: list[tuple[str, str, str]]) -> str:
    lines = [f"| | {left} | {right} |", "|---|---|---|"]
    return "\n".join(lines + [f"| {name} | {a} | {b} |" for name, a, b in rows])
