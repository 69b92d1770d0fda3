"""`gene_facts`: a gene's own HGNC record — `G gene_record` with the field asked: official symbol (from an alias,
previous symbol or id), identifiers, whether it is protein-coding, chromosome band, or its name. An alias several
genes carry lists every candidate. Read from the lexicon (Postgres), so it answers with Neo4j down."""

from __future__ import annotations

import re

from retrieval.answering.gene_facts_text import gene_fact_statements
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.not_found import not_found_plan
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import GeneFacts, GeneFactsData
from retrieval.model.genes import Gene
from retrieval.model.plan import Plan
from retrieval.question.gene_questions import asked_fact, candidates, named_gene, unknown_gene_tokens
from retrieval.question.reading import GENE_PATHWAYS, PATHWAY_WORD, Read, gene_entity

# Where a protein sits in the cell is not where its gene lies on a chromosome.
_IN_THE_CELL = re.compile(
    r"\b(?:in the cell|cytoplasm\w*|nucle(?:us|ar)|membrane|mitochondri\w*|subcellular|"
    r"localis\w*|localiz\w*)\b",
    re.I,
)


def recognise(read: Read) -> Plan | None:
    fact = asked_fact(read.question)
    if fact == "location" and _IN_THE_CELL.search(read.question):
        return None
    if fact is None or read.found or GENE_PATHWAYS.search(read.question) or PATHWAY_WORD.search(read.question):
        return None
    ids = read.genes.identifiers_in(read.question)
    unknown_ids = [ident for _, ident in ids if read.genes.by_id(ident) is None]
    word = ""
    if not read.mentions:
        loose, word = named_gene(read.question, read.genes)
        if loose is not None:
            read.mentions = [loose]
    if not read.mentions:
        unknown = unknown_ids or unknown_gene_tokens(read.question, read.genes) or ([word] if word else [])
        if not unknown:
            return None
        what = "identifier" if unknown_ids else "gene"
        return not_found_plan(
            read,
            what,
            "gene_facts",
            f"no gene {', '.join(unknown)} in the HGNC table",
            asked=", ".join(u.removeprefix("ENTREZ:") for u in unknown),
        )
    mention = read.mentions[0]
    genes = [gene_entity(g, mention.token, mention.via) for g in candidates(mention)]
    return Plan(
        kind="gene_facts",
        operation="describe",
        relation="gene_record",
        subjects=genes,
        field=fact,
        reason=f"{fact} of {mention.gene.symbol} (named as {mention.via} {mention.token})",
    )


def accepts(plan: Plan) -> bool:
    return plan.relation == "gene_record" and bool(plan.subjects)


def record(gene: Gene, asked_as: str = "", matched_by: str = "") -> GeneFacts:
    return GeneFacts(
        hgnc_id=gene.hgnc_id,
        symbol=gene.symbol,
        name=gene.name,
        locus_type=gene.locus_type,
        location=gene.location,
        entrez_id=gene.entrez_id,
        uniprot_ids=list(gene.uniprot_ids),
        ensembl_id=gene.ensembl_id,
        aliases=list(gene.aliases),
        previous_symbols=list(gene.previous_symbols),
        asked_as=asked_as,
        matched_by=matched_by,
    )


def facts(plan: Plan, stores: Stores) -> GeneFactsData:
    records = []
    for entity in plan.subjects:
        gene = stores.genes.by_id(entity.id)
        if gene is not None:
            records.append(record(gene, entity.asked_as or entity.name, entity.matched_by))
    return GeneFactsData(fact=plan.field or "summary", genes=records, ambiguous=len(records) > 1)


def statements(data: GeneFactsData) -> list[Statement]:
    return gene_fact_statements(data)


def data_table(data: GeneFactsData) -> DataTable:
    return table(
        f"HGNC {'candidates' if data.ambiguous else 'record'}",
        ["symbol", "HGNC id", "name", "locus type", "location", "Entrez", "UniProt", "Ensembl"],
        [
            [g.symbol, g.hgnc_id, g.name, g.locus_type, g.location, g.entrez_id, " ".join(g.uniprot_ids), g.ensembl_id]
            for g in data.genes
        ],
        of="gene",
    )


def refers_to(data: GeneFactsData) -> Referents:
    return Referents(genes=[g.symbol for g in data.genes])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """The gene (or every candidate of a shared alias) and, for one gene, the HGNC values the question asked
    for stated in the prose (`expected["hgnc_values"]`, read from the table by the question generator)."""
    data = answer.data
    if not isinstance(data, GeneFactsData) or {g.symbol for g in data.genes} != expected_set(expected):
        return False
    return data.ambiguous or all(value in answer.answer for value in expected_set(expected, "hgnc_values"))


KIND = QuestionKind(
    name="gene_facts",
    recognisers=((40, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
    needs_graph=False,
)
