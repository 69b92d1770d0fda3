"""The prose of a gene-fact answer: one claim per fact asked, each citing the gene's HGNC id."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import Statement
from retrieval.model.answer_data import GeneFacts, GeneFactsData

# HGNC locus types of protein-coding genes (locus group "protein-coding gene").
PROTEIN_CODING = frozenset({"gene with protein product"})


def _label(gene: GeneFacts) -> str:
    return f"{gene.symbol} ({gene.hgnc_id}, {gene.name})" if gene.name else f"{gene.symbol} ({gene.hgnc_id})"


def _symbol(gene: GeneFacts) -> str:
    if gene.asked_as and gene.asked_as.upper() != gene.symbol.upper():
        return (
            f"{gene.asked_as} is the {gene.matched_by or 'name'} of the gene whose official HGNC symbol is "
            f"{_label(gene)}."
        )
    return f"The official HGNC symbol is {_label(gene)}."


def _ids(gene: GeneFacts) -> str:
    parts = [f"HGNC {gene.hgnc_id}"]
    parts.append(f"Entrez Gene {gene.entrez_id}" if gene.entrez_id else "no Entrez Gene id in the table")
    parts.append(f"UniProt {', '.join(gene.uniprot_ids)}" if gene.uniprot_ids else "no UniProt accession in the table")
    parts.append(f"Ensembl {gene.ensembl_id}" if gene.ensembl_id else "no Ensembl gene id in the table")
    return f"{gene.symbol} has these identifiers: {'; '.join(parts)}."


def _locus_type(gene: GeneFacts) -> str:
    if not gene.locus_type:
        return f"The HGNC table Flux loaded gives no locus type for {gene.symbol}."
    coding = gene.locus_type in PROTEIN_CODING
    return (
        f"{'Yes' if coding else 'No'}: {gene.symbol} is {'' if coding else 'not '}protein-coding; its HGNC locus "
        f"type is '{gene.locus_type}'."
    )


def _location(gene: GeneFacts) -> str:
    if not gene.location:
        return (
            f"The HGNC table Flux loaded has no chromosome location for {gene.symbol} (the source file lacks "
            f"the location column)."
        )
    chromosome = re.match(r"(\d{1,2}|X|Y)(?=[pq]|$| )", gene.location)
    return f"{gene.symbol} lies at {gene.location}" + (f", on chromosome {chromosome.group(1)}." if chromosome else ".")


def _summary(gene: GeneFacts) -> str:
    extra = []
    if gene.aliases:
        extra.append(f"aliases {', '.join(gene.aliases)}")
    if gene.previous_symbols:
        extra.append(f"previous symbols {', '.join(gene.previous_symbols)}")
    return f"{gene.symbol} ({gene.hgnc_id}) is '{gene.name}'" + (f"; {'; '.join(extra)}." if extra else ".")


_FACT_TEXT = {"symbol": _symbol, "ids": _ids, "locus_type": _locus_type, "location": _location, "summary": _summary}


def gene_fact_statements(data: GeneFactsData) -> list[Statement]:
    write = _FACT_TEXT[data.fact]
    if not data.ambiguous:
        gene = data.genes[0]
        return [(write(gene), [gene.hgnc_id])]
    asked = data.genes[0].asked_as
    names = ", ".join(_label(g) for g in data.genes)
    head = (
        f"{asked} names {len(data.genes)} genes in the HGNC table (as a symbol, alias or previous symbol): {names}.",
        [g.hgnc_id for g in data.genes],
    )
    return [head, *[(write(g), [g.hgnc_id]) for g in data.genes]]
