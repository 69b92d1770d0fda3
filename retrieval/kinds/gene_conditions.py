"""`gene_conditions`: the conditions ClinVar links a gene to — `G associated_with ? returns disease` — each with
its MedGen id, the sources asserting it and whether ClinVar lists the gene as associated or only related; listed or
counted, from Postgres (works with Neo4j down)."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.members import count_stated
from retrieval.kinds.not_found import not_found_plan
from retrieval.kinds.scope import asked_fact_type
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.disease_data import Association, GeneConditionsData
from retrieval.model.plan import Plan
from retrieval.question.disease_questions import (
    ASKED_CONDITION,
    ASKS,
    CLINVAR_WORD,
    CONDITION_WORD,
    ENRICHMENT,
    LINK_WORD,
    PATHWAYS_OF,
    condition_of,
    gene_entities_named,
    holds_conditions,
)
from retrieval.question.gene_questions import unknown_gene_tokens
from retrieval.question.reading import EXPLAINS, Read, is_yes_no
from retrieval.retrievers.disease_facts import DiseaseReader
from retrieval.retrievers.graph_facts import gene_ref

LISTED = 40
GENERIC_VARIANT = re.compile(r"(?:variants?|mutations?|mutated|alleles?)$", re.I)  # "caused by variants in FH"


def recognise(read: Read) -> Plan | None:
    question = read.as_written or read.question
    if not holds_conditions(read) or not (CONDITION_WORD.search(question) or CLINVAR_WORD.search(question)):
        return None
    if ENRICHMENT.search(question) or PATHWAYS_OF.search(question) or EXPLAINS.search(question):
        return None  # the pathways of a gene, or the literature's question
    if not (LINK_WORD.search(question) or ASKS.search(question)):
        return None
    asked = asked_fact_type(read)
    if asked is not None and asked[0] != "disease_association" and not GENERIC_VARIANT.match(asked[1]):
        return None  # a variant's classification, a trial: facts ClinVar's gene-condition table does not hold
    genes = gene_entities_named(read)
    if not genes and (unknown := unknown_gene_tokens(question, read.genes)):
        return not_found_plan(
            read, "gene", "gene_conditions", f"no gene {', '.join(unknown)} in the index", asked=", ".join(unknown)
        )
    if len(genes) == 1 and is_yes_no(question) and not ASKS.search(question):
        # "True or false: PTEN causes Cowden syndrome": a yes/no about a condition no ClinVar name matched.
        named = ASKED_CONDITION.search(question)
        return not_found_plan(
            read,
            "name",
            "association_check",
            "no ClinVar condition of that name",
            asked=named.group(1) if named else "",
        )
    if len(genes) != 1 or condition_of(read) is not None:
        return None  # a gene and a condition: the yes/no kind's, or a question this kind does not read
    return Plan(
        kind="gene_conditions",
        operation="count" if read.count else "list",
        relation="associated_with",
        subjects=genes,
        returns="disease",
        reason=f"ClinVar conditions of {genes[0].name}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation in ("list", "count")
        and plan.relation == "associated_with"
        and plan.returns == "disease"
        and len(plan.subjects) == 1
        and plan.subjects[0].type == "gene"
    )


def facts(plan: Plan, stores: Stores) -> GeneConditionsData:
    assert stores.engine is not None
    reader = DiseaseReader(stores.engine)
    gene = plan.subjects[0]
    return GeneConditionsData(
        gene=gene_ref(gene), associations=reader.of_gene(gene.id), release=reader.release(), count=plan.count
    )


def said(a: Association) -> str:
    how = "" if a.relation == "associated" else ", related only"
    return f"{a.condition.name} [{a.condition.id}] ({', '.join(a.sources)}{how})"


def statements(data: GeneConditionsData) -> list[Statement]:
    g = data.gene
    if not data.associations:
        return [(f"Flux holds no condition linked to {g.symbol} ({g.id}) in ClinVar (release {data.release}).", [g.id])]
    shown = data.associations[:LISTED]
    return [
        (
            f"ClinVar (release {data.release}) links {g.symbol} ({g.id}) to {len(data.associations)} conditions: "
            f"{listing([said(a) for a in shown], LISTED)}.",
            [g.id, *(a.condition.id for a in shown)],
        )
    ]


def data_table(data: GeneConditionsData) -> DataTable:
    return table(
        f"ClinVar conditions of {data.gene.symbol} ({len(data.associations)})",
        ["MedGen", "condition", "sources", "relation", "MONDO", "OMIM", "last updated"],
        [
            [
                a.condition.id,
                a.condition.name,
                ", ".join(a.sources),
                a.relation,
                a.condition.mondo,
                a.condition.omim,
                a.last_updated,
            ]
            for a in data.associations
        ],
        of="entry",
    )


def refers_to(data: GeneConditionsData) -> Referents:
    return Referents(genes=[data.gene.symbol])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return (
        isinstance(data, GeneConditionsData)
        and data.gene.id in expected_set(expected)
        and {a.condition.id for a in data.associations} == expected_set(expected, "conditions")
        and count_stated(answer, expected, len(data.associations))
    )


KIND = QuestionKind(
    name="gene_conditions",
    recognisers=((34, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
    needs_graph=False,
    holds_nothing=lambda data: not data.associations,
)
