"""What changed between two ClinVar releases: gene-condition associations added and removed, and the genes and
conditions that appeared or went with them. Pure: two releases' associations in, changes out.

An association is keyed as ClinVar keys it (NCBI Gene id, MedGen concept, asserting source), so two releases compare
without placing their genes in HGNC; a gene counts as removed when no association names it any more.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Association:
    entrez_id: str
    concept_id: str
    source_name: str
    gene_symbol: str = ""
    disease_name: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return self.entrez_id, self.concept_id, self.source_name

    @property
    def subject(self) -> str:
        return "|".join(self.key)


@dataclass
class AssociationDiff:
    from_key: str
    to_key: str
    before: dict[tuple[str, str, str], Association] = field(default_factory=dict)
    after: dict[tuple[str, str, str], Association] = field(default_factory=dict)

    @property
    def added(self) -> list[Association]:
        return [a for k, a in sorted(self.after.items()) if k not in self.before]

    @property
    def removed(self) -> list[Association]:
        return [a for k, a in sorted(self.before.items()) if k not in self.after]

    @staticmethod
    def _ids(associations: Iterable[Association], index: int) -> set[str]:
        return {a.key[index] for a in associations}

    def figures(self) -> dict[str, int]:
        genes_before, genes_after = self._ids(self.before.values(), 0), self._ids(self.after.values(), 0)
        diseases_before, diseases_after = self._ids(self.before.values(), 1), self._ids(self.after.values(), 1)
        return {
            "associations_before": len(self.before),
            "associations_after": len(self.after),
            "associations_added": len(self.added),
            "associations_removed": len(self.removed),
            "association_genes_before": len(genes_before),
            "association_genes_added": len(genes_after - genes_before),
            "association_genes_removed": len(genes_before - genes_after),
            "diseases_before": len(diseases_before),
            "diseases_added": len(diseases_after - diseases_before),
            "diseases_removed": len(diseases_before - diseases_after),
        }

    def rows(self) -> list[tuple[str, str, dict[str, Any]]]:
        def detail(a: Association) -> dict[str, Any]:
            return {"symbol": a.gene_symbol, "disease": a.disease_name}

        return [("association_added", a.subject, detail(a)) for a in self.added] + [
            ("association_removed", a.subject, detail(a)) for a in self.removed
        ]


def diff_associations(
    from_key: str, before: Iterable[Association], to_key: str, after: Iterable[Association]
) -> AssociationDiff:
    return AssociationDiff(from_key, to_key, {a.key: a for a in before}, {a.key: a for a in after})
