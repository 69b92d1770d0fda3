"""`condition_enrichment`: the pathways most enriched for the genes ClinVar links to a condition — `? associated_with
D returns pathway` — by a one-sided hypergeometric test per pathway of one database (Reactome unless the question
names KEGG) with Benjamini-Hochberg q-values, as the resolution scores pathway overlaps (retrievers/disease_facts.py).
"""

from __future__ import annotations

from retrieval.answering.typed_answer import listing, short_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.condition_genes import named
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.disease_data import ConditionEnrichmentData, Enriched
from retrieval.model.plan import Plan
from retrieval.question.disease_questions import (
    ENRICHMENT,
    LINK_WORD,
    PATHWAYS_OF,
    condition_entities,
    condition_of,
    gene_entities_named,
    holds_conditions,
)
from retrieval.question.reading import Read, single_source
from retrieval.retrievers.disease_facts import DiseaseReader, enrichment

SIGNIFICANT_Q = 0.05


def recognise(read: Read) -> Plan | None:
    question = read.as_written or read.question
    if not holds_conditions(read) or gene_entities_named(read):
        return None
    if not (ENRICHMENT.search(question) or (PATHWAYS_OF.search(question) and LINK_WORD.search(question))):
        return None
    match = condition_of(read)
    if match is None:
        return None
    return Plan(
        kind="condition_enrichment",
        operation="list",
        relation="associated_with",
        objects=condition_entities(match)[:8],
        returns="pathway",
        source=single_source(question) or "reactome",
        reason=f"pathways enriched for the genes of {', '.join(repr(c.name) for c in match.conditions)}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation == "list"
        and plan.relation == "associated_with"
        and plan.returns == "pathway"
        and bool(plan.objects)
        and all(e.type == "disease" for e in plan.objects)
    )


def facts(plan: Plan, stores: Stores) -> ConditionEnrichmentData:
    assert stores.engine is not None
    reader = DiseaseReader(stores.engine)
    conditions = [c for c in (reader.condition(e.id) for e in plan.objects) if c is not None]
    genes = {a.gene.id: a.gene.symbol for a in reader.of_conditions([c.id for c in conditions])}
    rows, tested, universe, inside = enrichment(stores.graph, genes, plan.source or "reactome")
    return ConditionEnrichmentData(
        conditions=conditions,
        genes=inside,
        genes_total=len(genes),
        pathways=rows,
        tested=tested,
        universe=universe,
        source=plan.source or "reactome",
        release=reader.release(),
    )


def _row(e: Enriched) -> str:
    return f"{short_name(e.pathway)} ({e.overlap} of {e.size} genes: {listing(e.genes, 8)}; q = {e.q_value:.2g})"


def statements(data: ConditionEnrichmentData) -> list[Statement]:
    cited = [c.id for c in data.conditions]
    db = {"kegg": "KEGG", "reactome": "Reactome"}.get(data.source, data.source)
    head = (
        f"ClinVar (release {data.release}) links {data.genes_total} genes to "
        f"{' and '.join(named(c) for c in data.conditions)}; {data.genes} of them are members of {db} pathways "
        f"({data.universe} genes in all)."
    )
    if not data.pathways:
        return [(head + f" No {db} pathway holds any of them.", cited)]
    significant = [e for e in data.pathways if e.q_value <= SIGNIFICANT_Q]
    verdict = (
        f"{len(significant)} of the {data.tested} pathways tested are enriched at q ≤ {SIGNIFICANT_Q}"
        if significant
        else f"none of the {data.tested} pathways tested is enriched at q ≤ {SIGNIFICANT_Q}"
    )
    return [
        (
            f"{head} By a hypergeometric test with Benjamini-Hochberg correction, {verdict}; the most enriched: "
            f"{listing([_row(e) for e in data.pathways], 10)}.",
            [*cited, *(e.pathway.id for e in data.pathways)],
        )
    ]


def data_table(data: ConditionEnrichmentData) -> DataTable:
    caption = f"Pathways enriched for the genes of {', '.join(c.name for c in data.conditions)}"
    return table(
        caption,
        ["pathway", "name", "overlap", "size", "p", "q", "genes"],
        [
            [
                e.pathway.id,
                e.pathway.name,
                e.overlap,
                e.size,
                f"{e.p_value:.3g}",
                f"{e.q_value:.3g}",
                ", ".join(e.genes),
            ]
            for e in data.pathways
        ],
        of="pathway",
    )


def refers_to(data: ConditionEnrichmentData) -> Referents:
    return Referents(pathways=[e.pathway.id for e in data.pathways[:2]])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """The condition asked, and the most enriched pathway the tables give first."""
    data = answer.data
    return (
        isinstance(data, ConditionEnrichmentData)
        and {c.id for c in data.conditions} == expected_set(expected)
        and bool(data.pathways)
        and data.pathways[0].pathway.id in expected_set(expected, "top")
    )


KIND = QuestionKind(
    name="condition_enrichment",
    recognisers=((27, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
