"""Generated condition questions (the `_Builder` of kind_questions.py): a condition's genes (listed, counted), a
gene's conditions, yes/no about linked and unlinked pairs, and the pathway most enriched for a condition's genes
(the hypergeometric test the answer uses, computed here from the graph's memberships and the ClinVar table).
Conditions are asked by ClinVar's name, only where that name is one concept's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scipy.stats import hypergeom

from dagster_project.evals.condition_truth import ConditionTruth
from dagster_project.evals.kind_truth import Truth
from retrieval.model.spelling import fold

if TYPE_CHECKING:
    from dagster_project.evals.kind_questions import _Builder

MIN_PATHWAY_GENES = 3


def add_condition_questions(b: _Builder, conditions: ConditionTruth, per_kind: int) -> None:
    if not conditions.names:
        return
    names: dict[str, list[str]] = {}
    for concept, name in conditions.names.items():
        names.setdefault(fold(name), []).append(concept)
    unique = sorted(c for c, n in conditions.names.items() if len(names[fold(n)]) == 1)
    for concept in _pick(b, unique, per_kind):
        b.add("condition_genes", {"condition": conditions.names[concept]}, (concept,),
              genes="|".join(sorted(conditions.genes[concept])))
    for concept in _pick(b, unique, per_kind // 3):
        genes = sorted(conditions.genes[concept])
        b.add("condition_genes:count", {"condition": conditions.names[concept]}, (concept,), genes="|".join(genes),
              count=str(len(genes)))
    symbols = sorted(s for s in conditions.conditions if len(s) >= 3)
    for symbol in _pick(b, symbols, per_kind):
        b.add("gene_conditions", {"gene": symbol}, (conditions.hgnc[symbol],),
              conditions="|".join(sorted(conditions.conditions[symbol])))
    for symbol in _pick(b, symbols, per_kind // 3):
        held = sorted(conditions.conditions[symbol])
        b.add("gene_conditions:count", {"gene": symbol}, (conditions.hgnc[symbol],), conditions="|".join(held),
              count=str(len(held)))
    _checks(b, conditions, unique, symbols, per_kind)
    _enrichment(b, conditions, unique, per_kind // 2)


def _pick(b: _Builder, items: list, k: int) -> list:
    return b.rng.sample(sorted(items), min(k, len(items)))


def _checks(b: _Builder, conditions: ConditionTruth, unique: list[str], symbols: list[str], per_kind: int) -> None:
    linked = [(s, c) for c in unique for s in sorted(conditions.genes[c]) if s in symbols]
    for symbol, concept in _pick(b, linked, per_kind):
        b.add("association_check", {"gene": symbol, "condition": conditions.names[concept]}, (),
              subject=conditions.hgnc[symbol], object=concept)
    apart = [(s, c) for c in unique for s in symbols if c not in conditions.conditions[s]]
    for symbol, concept in _pick(b, apart, per_kind):
        b.add("association_absent", {"gene": symbol, "condition": conditions.names[concept]}, (),
              subject=conditions.hgnc[symbol], object=concept)


def top_pathways(truth: Truth, genes: set[str], source: str = "reactome") -> set[str]:
    """The pathways of `source` with the smallest hypergeometric p for `genes` (symbols): the answer's first."""
    pathways = {p.id: p.genes for p in truth.pathways.values() if p.source == source
                and len(p.genes) >= MIN_PATHWAY_GENES}
    universe = set().union(*pathways.values()) if pathways else set()
    wanted = genes & universe
    scored = {pid: float(hypergeom.sf(len(members & wanted) - 1, len(universe), len(members), len(wanted)))
              for pid, members in pathways.items() if members & wanted}
    if not scored:
        return set()
    best = min(scored.values())
    return {pid for pid, p in scored.items() if p <= best * (1 + 1e-9)}


def _enrichment(b: _Builder, conditions: ConditionTruth, unique: list[str], k: int) -> None:
    tops = {c: top for c in unique if (top := top_pathways(b.truth, conditions.genes[c]))}
    for concept in _pick(b, list(tops), k):
        b.add("condition_enrichment", {"condition": conditions.names[concept]}, (concept,),
              top="|".join(sorted(tops[concept])))
