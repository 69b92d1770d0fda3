"""What the index holds, read once for the question-kind evaluation: pathways and their members, the hierarchy,
compounds, resolved counterparts (from the graph, as answers read them) and gene rows (from the HGNC table)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.evals.condition_truth import ConditionTruth, load_condition_truth
from dagster_project.evals.reaction_truth import ReactionTruth, load_reaction_truth

if TYPE_CHECKING:
    from neo4j import Driver

PATHWAYS = """
MATCH (p:Pathway)
CALL (p) { OPTIONAL MATCH (p)-[:HAS_MEMBER]->(g:Gene) RETURN collect(g.symbol) AS genes }
CALL (p) { OPTIONAL MATCH (p)-[:HAS_MEMBER]->(c:Compound) RETURN collect(c.id) AS compounds }
RETURN p.id AS id, p.name AS name, p.source AS source, genes, compounds ORDER BY p.id
"""
EDGES = "MATCH (c:Pathway)-[:SUBPATHWAY_OF]->(p:Pathway) RETURN p.id AS parent, c.id AS child ORDER BY parent, child"
EQUIVALENTS = "MATCH (r:Pathway)-[:EQUIVALENT_TO]->(k:Pathway) RETURN r.id AS r, k.id AS k ORDER BY r, k"
GENES = """
SELECT hgnc_id, symbol, name, aliases, previous_symbols, entrez_id, uniprot_ids, ensembl_gene_id, locus_type, location
FROM gene_identifiers WHERE status = 'Approved' ORDER BY hgnc_id
"""


@dataclass(frozen=True)
class PathwayTruth:
    id: str
    name: str
    source: str
    genes: frozenset[str]
    compounds: frozenset[str]  # as the answer names them: C00022, CHEBI:15361


@dataclass(frozen=True)
class GeneTruth:
    hgnc_id: str
    symbol: str
    name: str
    aliases: tuple[str, ...]
    previous_symbols: tuple[str, ...]
    entrez_id: str | None
    uniprot_ids: tuple[str, ...]
    ensembl_id: str
    locus_type: str
    location: str


@dataclass
class Truth:
    pathways: dict[str, PathwayTruth]
    parents: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    children: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    equivalents: list[tuple[str, str]] = field(default_factory=list)
    genes: dict[str, GeneTruth] = field(default_factory=dict)  # by symbol
    reactions: ReactionTruth | None = None  # read from the reaction tables
    conditions: ConditionTruth | None = None  # read from the ClinVar tables

    def pathways_with_genes(self, symbols: set[str], source: str = "") -> set[str]:
        return {p.id for p in self.pathways.values() if symbols <= p.genes and (not source or p.source == source)}

    def pathways_with_compounds(self, compounds: set[str], source: str = "") -> set[str]:
        return {p.id for p in self.pathways.values() if compounds <= p.compounds and (not source or p.source == source)}

    def ancestors(self, pathway_id: str) -> set[str]:
        """Every pathway above this one, at any depth."""
        seen: set[str] = set()
        todo = list(self.parents.get(pathway_id, ()))
        while todo:
            parent = todo.pop()
            if parent not in seen:
                seen.add(parent)
                todo += self.parents.get(parent, ())
        return seen

    def alias_owners(self, alias: str) -> set[str]:
        """Symbols of the genes that carry `alias` as symbol, alias or previous symbol."""
        wanted = alias.upper()
        return {
            g.symbol
            for g in self.genes.values()
            if wanted in {g.symbol.upper(), *(a.upper() for a in g.aliases + g.previous_symbols)}
        }


def _compound_name(node_id: str) -> str:
    """'KEGG:C00022' → 'C00022'; ChEBI nodes are named as asked ('CHEBI:15361')."""
    return node_id.removeprefix("KEGG:")


def load_truth(driver: Driver, engine: Engine) -> Truth:
    rows = [r.data() for r in driver.execute_query(PATHWAYS).records]
    truth = Truth(
        {
            r["id"]: PathwayTruth(
                r["id"],
                r["name"] or "",
                r["source"] or "",
                frozenset(r["genes"]),
                frozenset(_compound_name(c) for c in r["compounds"]),
            )
            for r in rows
        }
    )
    for edge in driver.execute_query(EDGES).records:
        truth.parents[edge["child"]].add(edge["parent"])
        truth.children[edge["parent"]].add(edge["child"])
    truth.equivalents = [(r["r"], r["k"]) for r in driver.execute_query(EQUIVALENTS).records]
    with engine.connect() as conn:
        for g in conn.execute(text(GENES)):
            truth.genes[g.symbol] = GeneTruth(
                g.hgnc_id,
                g.symbol,
                g.name,
                tuple(g.aliases),
                tuple(g.previous_symbols),
                g.entrez_id,
                tuple(g.uniprot_ids),
                g.ensembl_gene_id,
                g.locus_type,
                g.location,
            )
    truth.reactions = load_reaction_truth(engine)
    truth.conditions = load_condition_truth(engine)
    return truth
