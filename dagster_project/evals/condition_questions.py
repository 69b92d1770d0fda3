"""Generated condition questions (the `_Builder` of kind_questions.py): a condition's genes (listed, counted), a
gene's conditions, yes/no about linked and unlinked pairs, and the pathway most enriched for a condition's genes
(the hypergeometric test the answer uses, computed here from the graph's memberships and the ClinVar table).
Conditions are asked by ClinVar's name, only where that name is one concept's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scipy.stats import hypergeom

from dagster_project.evals.condition_truth import ConditionTruth
from dagster_project.evals.kind_truth import Truth
from dagster_project.evals.shared_pairs import RowPairs
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
        b.add(
            "condition_genes",
            {"condition": conditions.names[concept]},
            (concept,),
            genes="|".join(sorted(conditions.genes[concept])),
        )
    for concept in _pick(b, unique, per_kind // 3):
        genes = sorted(conditions.genes[concept])
        b.add(
            "condition_genes:count",
            {"condition": conditions.names[concept]},
            (concept,),
            genes="|".join(genes),
            count=str(len(genes)),
        )
    symbols = sorted(s for s in conditions.conditions if len(s) >= 3)
    for symbol in _pick(b, symbols, per_kind):
        b.add(
            "gene_conditions",
            {"gene": symbol},
            (conditions.hgnc[symbol],),
            conditions="|".join(sorted(conditions.conditions[symbol])),
        )
    for symbol in _pick(b, symbols, per_kind // 3):
        held = sorted(conditions.conditions[symbol])
        b.add(
            "gene_conditions:count",
            {"gene": symbol},
            (conditions.hgnc[symbol],),
            conditions="|".join(held),
            count=str(len(held)),
        )
    _checks(b, conditions, unique, symbols, per_kind)
    _enrichment(b, conditions, unique, per_kind // 2)


def _pick(b: _Builder, items: Sequence, k: int) -> list:
    """A seeded sample of the items in sorted order (a RowPairs is built sorted: it is sampled as it is)."""
    ordered = items if isinstance(items, RowPairs) else sorted(items)
    return b.rng.sample(ordered, min(k, len(items)))


def _unlinked(conditions: ConditionTruth, unique: list[str], symbols: list[str]) -> RowPairs:
    """(symbol, condition) pairs ClinVar does not link, in sorted order (on the snapshot some 35 million)."""
    held = set(unique)

    def count(i: int) -> int:
        return len(unique) - len(conditions.conditions[symbols[i]] & held)

    def partners(i: int) -> list[str]:
        linked = conditions.conditions[symbols[i]]
        return [c for c in unique if c not in linked]

    return RowPairs(symbols, count, partners)


def _checks(b: _Builder, conditions: ConditionTruth, unique: list[str], symbols: list[str], per_kind: int) -> None:
    asked = set(symbols)
    linked = [(s, c) for c in unique for s in sorted(conditions.genes[c]) if s in asked]
    for symbol, concept in _pick(b, linked, per_kind):
        b.add(
            "association_check",
            {"gene": symbol, "condition": conditions.names[concept]},
            (),
            subject=conditions.hgnc[symbol],
            object=concept,
        )
    for symbol, concept in _pick(b, _unlinked(conditions, unique, symbols), per_kind):
        b.add(
            "association_absent",
            {"gene": symbol, "condition": conditions.names[concept]},
            (),
            subject=conditions.hgnc[symbol],
            object=concept,
        )


def tested_pathways(truth: Truth, source: str = "reactome") -> tuple[dict[str, set[str]], set[str]]:
    """The pathways of `source` an enrichment tests (id → genes) and their union, the test's universe."""
    pathways = {
        p.id: p.genes for p in truth.pathways.values() if p.source == source and len(p.genes) >= MIN_PATHWAY_GENES
    }
    return pathways, set().union(*pathways.values()) if pathways else set()


def top_pathways(
    truth: Truth, genes: set[str], source: str = "reactome", tested: tuple[dict[str, set[str]], set[str]] | None = None
) -> set[str]:
    """The pathways of `source` with the smallest hypergeometric p for `genes` (symbols): the answer's first.
    `tested`: `tested_pathways(truth, source)`, when it is computed once for many conditions."""
    pathways, universe = tested or tested_pathways(truth, source)
    wanted = genes & universe
    scored = {
        pid: float(hypergeom.sf(len(members & wanted) - 1, len(universe), len(members), len(wanted)))
        for pid, members in pathways.items()
        if members & wanted
    }
    if not scored:
        return set()
    best = min(scored.values())
    return {pid for pid, p in scored.items() if p <= best * (1 + 1e-9)}


def _enrichment(b: _Builder, conditions: ConditionTruth, unique: list[str], k: int) -> None:
    # A condition has a most enriched pathway exactly when one of its genes is in some tested pathway; only the
    # conditions picked are tested (on the snapshot 7,372 conditions would take most of a minute).
    tested = tested_pathways(b.truth)
    candidates = [c for c in unique if conditions.genes[c] & tested[1]]
    tops = {c: top_pathways(b.truth, conditions.genes[c], tested=tested) for c in _pick(b, candidates, k)}
    for concept in tops:
        b.add(
            "condition_enrichment",
            {"condition": conditions.names[concept]},
            (concept,),
            top="|".join(sorted(tops[concept])),
        )
