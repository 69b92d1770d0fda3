"""ClinVar associations → associations placed in HGNC: the gene found by its NCBI Gene id, else by its symbol (approved
first, then a previous symbol or alias that names one gene only). A gene HGNC does not hold is quarantined with its
reason, never guessed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, replace

from dagster_project.sources.clinvar.parser import SOURCE
from dagster_project.sources.model import DiseaseAssociationRecord, GeneRecord, Quarantined


class GenePlacer:
    """HGNC's genes, indexed the ways ClinVar names them."""

    def __init__(self, genes: Iterable[GeneRecord]) -> None:
        self.by_entrez: dict[str, str] = {}
        self.by_symbol: dict[str, str] = {}
        other: dict[str, set[str]] = {}
        for gene in genes:
            if gene.entrez_id:
                self.by_entrez[gene.entrez_id] = gene.hgnc_id
            self.by_symbol[gene.symbol.upper()] = gene.hgnc_id
            for name in (*gene.previous_symbols, *gene.aliases):
                other.setdefault(name.upper(), set()).add(gene.hgnc_id)
        # A previous symbol or alias counts only when it names one gene and is no gene's approved symbol.
        self.by_other = {name: next(iter(ids)) for name, ids in other.items()
                         if len(ids) == 1 and name not in self.by_symbol}

    def place(self, entrez_id: str, symbol: str) -> str | None:
        key = symbol.upper()
        return self.by_entrez.get(entrez_id) or self.by_symbol.get(key) or self.by_other.get(key)


def place_associations(associations: list[DiseaseAssociationRecord], genes: Iterable[GeneRecord]
                       ) -> tuple[list[DiseaseAssociationRecord], list[Quarantined]]:
    """One row per (HGNC gene, MedGen concept, asserting source): a file that repeats one keeps the newest."""
    placer = GenePlacer(genes)
    placed: dict[tuple[str, str, str], DiseaseAssociationRecord] = {}
    quarantined = []
    for record in associations:
        hgnc_id = placer.place(record.gene_entrez_id, record.gene_symbol)
        if hgnc_id is None:
            quarantined.append(Quarantined(
                SOURCE, f"{record.gene_entrez_id}|{record.concept_id}", f"{SOURCE}:association",
                f"gene {record.gene_symbol} (NCBI Gene {record.gene_entrez_id}) is not in HGNC",
                json.dumps(asdict(record))[:2000]))
            continue
        key = (hgnc_id, record.concept_id, record.source_name)
        kept = placed.get(key)
        if kept is None or record.last_updated > kept.last_updated:
            placed[key] = replace(record, hgnc_id=hgnc_id)
    return list(placed.values()), quarantined
