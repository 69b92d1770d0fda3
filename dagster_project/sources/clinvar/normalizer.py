"""ClinVar associations → associations placed in HGNC: the gene found by its NCBI Gene id, else by its symbol (approved
first, then a previous symbol or alias that names one gene only). Only approved HGNC genes take associations: a gene
HGNC does not hold, or holds only as a withdrawn entry, is quarantined with its reason, never guessed. The conditions of
the placed associations become diseases, keyed by their MedGen concept."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, replace

from dagster_project.sources.clinvar.parser import MIM, SOURCE
from dagster_project.sources.model import DiseaseAssociationRecord, DiseaseRecord, GeneRecord, Quarantined

APPROVED = "Approved"
MONDO = re.compile(r"^MONDO:\d{7}$")


class GenePlacer:
    """HGNC's approved genes, indexed the ways ClinVar names them; withdrawn entries only to say why a gene is not."""

    def __init__(self, genes: Iterable[GeneRecord]) -> None:
        self.by_entrez: dict[str, str] = {}
        self.by_symbol: dict[str, str] = {}
        self.withdrawn: dict[str, str] = {}
        other: dict[str, set[str]] = {}
        for gene in genes:
            if gene.status != APPROVED:
                self.withdrawn.setdefault(gene.symbol.upper(), gene.hgnc_id)
                continue
            if gene.entrez_id:
                self.by_entrez[gene.entrez_id] = gene.hgnc_id
            self.by_symbol[gene.symbol.upper()] = gene.hgnc_id
            for name in (*gene.previous_symbols, *gene.aliases):
                other.setdefault(name.upper(), set()).add(gene.hgnc_id)
        # A previous symbol or alias counts only when it names one gene and is no gene's approved symbol.
        self.by_other = {
            name: next(iter(ids)) for name, ids in other.items() if len(ids) == 1 and name not in self.by_symbol
        }

    def place(self, entrez_id: str, symbol: str) -> str | None:
        key = symbol.upper()
        return self.by_entrez.get(entrez_id) or self.by_symbol.get(key) or self.by_other.get(key)


def place_associations(
    associations: list[DiseaseAssociationRecord], genes: Iterable[GeneRecord]
) -> tuple[list[DiseaseAssociationRecord], list[Quarantined]]:
    """One row per (HGNC gene, MedGen concept, asserting source): a file that repeats one keeps the newest."""
    placer = GenePlacer(genes)
    placed: dict[tuple[str, str, str], DiseaseAssociationRecord] = {}
    quarantined = []
    for record in associations:
        hgnc_id = placer.place(record.gene_entrez_id, record.gene_symbol)
        if hgnc_id is None:
            gene = f"gene {record.gene_symbol} (NCBI Gene {record.gene_entrez_id})"
            withdrawn = placer.withdrawn.get(record.gene_symbol.upper())
            reason = (
                f"{gene} is in HGNC only as the withdrawn entry {withdrawn}" if withdrawn else f"{gene} is not in HGNC"
            )
            quarantined.append(
                Quarantined(
                    SOURCE,
                    f"{record.gene_entrez_id}|{record.concept_id}",
                    f"{SOURCE}:association",
                    reason,
                    json.dumps(asdict(record))[:2000],
                )
            )
            continue
        key = (hgnc_id, record.concept_id, record.source_name)
        kept = placed.get(key)
        if kept is None or record.last_updated > kept.last_updated:
            placed[key] = replace(record, hgnc_id=hgnc_id)
    return list(placed.values()), quarantined


def diseases_of(
    placed: Iterable[DiseaseAssociationRecord], parsed: Iterable[DiseaseAssociationRecord]
) -> list[DiseaseRecord]:
    """One disease per MedGen concept of the placed associations, told by every parsed row that names it: the name
    most rows give, the lowest MONDO id a MONDO row asserts, and the lowest OMIM number (the DiseaseMIM column, else
    an OMIM row's id). Ties and several ids resolve the same way on every load."""
    wanted = {a.concept_id for a in placed}
    names: dict[str, Counter[str]] = defaultdict(Counter)
    mondo: dict[str, set[str]] = defaultdict(set)
    omim: dict[str, set[str]] = defaultdict(set)
    for row in parsed:
        if row.concept_id not in wanted:
            continue
        names[row.concept_id][row.disease_name] += 1
        if row.source_name == "MONDO" and MONDO.match(row.source_id):
            mondo[row.concept_id].add(row.source_id)
        if row.disease_mim:
            omim[row.concept_id].add(row.disease_mim)
        elif row.source_name == "OMIM" and MIM.match(row.source_id):
            omim[row.concept_id].add(row.source_id)
    return [
        DiseaseRecord(
            concept,
            min(names[concept].items(), key=lambda item: (-item[1], item[0]))[0],
            min(mondo[concept], default=""),
            min(omim[concept], default=""),
        )
        for concept in sorted(wanted)
    ]
