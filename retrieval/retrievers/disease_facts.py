"""Reads for the condition kinds, from Postgres (`disease_associations`, `diseases`, `gene_identifiers`; the serving
role reads them, so the answers work with Neo4j down) and, for enrichment, the pathways' member genes from the graph.

Enrichment is the one-sided hypergeometric test the resolution uses for pathway overlaps: for each pathway of one
database holding at least one of the condition's genes, the chance of that many or more of its members among the
condition's genes, the universe being every gene that is a member of some pathway of that database; q-values by
Benjamini-Hochberg over the pathways tested (scipy, statsmodels).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from retrieval.model.disease_data import Association, ConditionRef, Enriched
from retrieval.model.refs import GeneRef, NodeRef
from retrieval.retrievers.graph_facts import GraphReader

_ASSOCIATIONS = """
SELECT a.hgnc_id, g.symbol, g.name AS gene_name, a.concept_id, d.name, coalesce(d.mondo_id, '') AS mondo,
       coalesce(d.omim_id, '') AS omim, array_agg(DISTINCT a.source_name ORDER BY a.source_name) AS sources,
       bool_or(a.relation = 'associated') AS associated, coalesce(max(a.last_updated)::text, '') AS last_updated
FROM disease_associations a JOIN diseases d USING (concept_id) JOIN gene_identifiers g USING (hgnc_id)
WHERE {where}
GROUP BY a.hgnc_id, g.symbol, g.name, a.concept_id, d.name, d.mondo_id, d.omim_id
ORDER BY g.symbol, d.name
"""
OF_GENE = _ASSOCIATIONS.format(where="a.hgnc_id = :gene")
OF_CONDITIONS = _ASSOCIATIONS.format(where="a.concept_id = ANY(:conditions)")
OF_PAIR = _ASSOCIATIONS.format(where="a.hgnc_id = :gene AND a.concept_id = :condition")
COUNT_GENE = "SELECT count(DISTINCT concept_id) FROM disease_associations WHERE hgnc_id = :gene"
COUNT_CONDITION = "SELECT count(DISTINCT hgnc_id) FROM disease_associations WHERE concept_id = :condition"
CONDITION = (
    "SELECT concept_id, name, coalesce(mondo_id, '') AS mondo, coalesce(omim_id, '') AS omim FROM diseases "
    "WHERE concept_id = :condition"
)
SYNONYMS = "SELECT synonym FROM condition_synonyms WHERE concept_id = :condition"
RELEASE = (
    "SELECT release_key FROM source_releases WHERE source = 'clinvar' AND served_at IS NOT NULL "
    "ORDER BY served_at DESC LIMIT 1"
)
MEMBERSHIP = """
MATCH (p:Pathway)-[:HAS_MEMBER]->(g:Gene) WHERE $source = '' OR p.source = $source
RETURN p.id AS id, p.name AS name, p.source AS source, collect(g.id) AS genes
"""
SHOWN = 10
MIN_PATHWAY_GENES = 3  # smaller pathways say little about a condition


def association(row: Any) -> Association:
    return Association(
        gene=GeneRef(id=row.hgnc_id, symbol=row.symbol, name=row.gene_name or ""),
        condition=ConditionRef(id=row.concept_id, name=row.name, mondo=row.mondo, omim=row.omim),
        sources=[s or "ClinVar" for s in row.sources],
        relation="associated" if row.associated else "related",
        last_updated=row.last_updated,
    )


class DiseaseReader:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _rows(self, sql: str, **params: Any) -> list[Any]:
        with self.engine.connect() as conn:
            return list(conn.execute(text(sql), params))

    def release(self) -> str:
        rows = self._rows(RELEASE)
        return rows[0].release_key if rows else "not recorded"

    def of_gene(self, hgnc_id: str) -> list[Association]:
        return [association(r) for r in self._rows(OF_GENE, gene=hgnc_id)]

    def of_conditions(self, concept_ids: list[str]) -> list[Association]:
        return [association(r) for r in self._rows(OF_CONDITIONS, conditions=concept_ids)]

    def of_pair(self, hgnc_id: str, concept_id: str) -> list[Association]:
        return [association(r) for r in self._rows(OF_PAIR, gene=hgnc_id, condition=concept_id)]

    def counts(self, hgnc_id: str, concept_id: str) -> tuple[int, int]:
        return (self._rows(COUNT_GENE, gene=hgnc_id)[0][0], self._rows(COUNT_CONDITION, condition=concept_id)[0][0])

    def synonyms(self, concept_id: str) -> list[str]:
        """The condition's MONDO synonyms (condition_synonyms), as loaded with it."""
        return [r.synonym for r in self._rows(SYNONYMS, condition=concept_id)]

    def condition(self, concept_id: str) -> ConditionRef | None:
        rows = self._rows(CONDITION, condition=concept_id)
        return (
            ConditionRef(id=rows[0].concept_id, name=rows[0].name, mondo=rows[0].mondo, omim=rows[0].omim)
            if rows
            else None
        )


def enrichment(graph: GraphReader, genes: dict[str, str], source: str) -> tuple[list[Enriched], int, int, int]:
    """Pathways of `source` ranked by enrichment for `genes` (HGNC id → symbol): (rows, pathways tested, universe,
    the genes inside the universe)."""
    # Imported here: scipy.stats and statsmodels take about a second to load and only enrichment uses them.
    from scipy.stats import hypergeom
    from statsmodels.stats.multitest import multipletests

    pathways = [r for r in graph.rows(MEMBERSHIP, source=source) if len(r["genes"]) >= MIN_PATHWAY_GENES]
    universe = {g for r in pathways for g in r["genes"]}
    wanted = set(genes) & universe
    tested = [(r, set(r["genes"]) & wanted) for r in pathways]
    tested = [(r, hits) for r, hits in tested if hits]
    if not tested:
        return [], 0, len(universe), len(wanted)
    p = [float(hypergeom.sf(len(hits) - 1, len(universe), len(r["genes"]), len(wanted))) for r, hits in tested]
    q = multipletests(p, method="fdr_bh")[1]
    rows = [
        Enriched(
            pathway=NodeRef(id=r["id"], name=r["name"] or "", source=r["source"] or ""),
            overlap=len(hits),
            size=len(r["genes"]),
            p_value=pv,
            q_value=float(qv),
            genes=sorted(genes[g] for g in hits),
        )
        for (r, hits), pv, qv in zip(tested, p, q, strict=True)
    ]
    rows.sort(key=lambda e: (e.q_value, e.p_value, -e.overlap, e.pathway.id))
    return rows[:SHOWN], len(tested), len(universe), len(wanted)
