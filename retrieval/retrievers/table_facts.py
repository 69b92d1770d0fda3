"""Facts for typed answers that need no graph: a gene's row of the HGNC table (the lexicon holds it, read from
Postgres), what the latest release changed in a pathway (the release history), and what a question asked about
that the index does not hold."""

from __future__ import annotations

from sqlalchemy import Engine

from retrieval.model.answer_data import AnswerData, GeneFacts, GeneFactsData, NodeRef, NotFoundData
from retrieval.model.genes import Gene
from retrieval.question.intent import Intent
from retrieval.retrievers.release_facts import release_changes


def gene_facts(gene: Gene, asked_as: str = "", matched_by: str = "") -> GeneFacts:
    return GeneFacts(hgnc_id=gene.hgnc_id, symbol=gene.symbol, name=gene.name, locus_type=gene.locus_type,
                     location=gene.location, entrez_id=gene.entrez_id, uniprot_ids=list(gene.uniprot_ids),
                     ensembl_id=gene.ensembl_id, aliases=list(gene.aliases),
                     previous_symbols=list(gene.previous_symbols), asked_as=asked_as, matched_by=matched_by)


def table_facts(intent: Intent, engine: Engine | None = None) -> AnswerData:
    if intent.kind == "release_changes":
        if engine is None:
            raise ValueError("release_changes facts are read from the platform database: pass its engine")
        return release_changes(engine, intent)
    if intent.kind == "gene_facts":
        return GeneFactsData(fact=intent.fact,  # type: ignore[arg-type]
                             genes=[gene_facts(g, intent.asked_as, intent.matched_by) for g in intent.genes],
                             ambiguous=len(intent.genes) > 1)
    if intent.kind == "not_found":
        return NotFoundData(asked=intent.asked_as, what=intent.missing,  # type: ignore[arg-type]
                            needed_for=intent.unresolved[0] if intent.unresolved else "",
                            closest=[NodeRef(id=r.id, name=r.name, source=r.source) for r in intent.closest])
    raise ValueError(f"{intent.kind} is not answered from tables")
