"""`association_check`: "Is G associated with D?", "True or false: D is associated with G" — `check associated_with
G → D` — answered with the verdict first and the ClinVar record cited. Where ClinVar holds no such link the answer
is `association_absent`'s: what Flux does not hold, never "false" as a fact about biology."""

from __future__ import annotations

from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, table
from retrieval.kinds.gene_conditions import said
from retrieval.kinds.not_found import not_found_plan
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.disease_data import AssociationAbsentData, AssociationCheckData
from retrieval.model.plan import Plan
from retrieval.model.polarity import verdict
from retrieval.question.disease_questions import (
    condition_entities,
    condition_of,
    gene_entities_named,
    holds_conditions,
)
from retrieval.question.gene_questions import unknown_gene_tokens
from retrieval.question.reading import EXPLAINS, Read, is_yes_no
from retrieval.retrievers.disease_facts import DiseaseReader
from retrieval.retrievers.graph_facts import gene_ref


def recognise(read: Read) -> Plan | None:
    question = read.as_written or read.question
    if not holds_conditions(read) or not is_yes_no(question):
        return None
    genes = gene_entities_named(read)
    match = condition_of(read)
    if match is None or EXPLAINS.search(question):
        return None
    if not genes and (unknown := unknown_gene_tokens(question, read.genes)):
        return not_found_plan(
            read, "gene", "association_check", f"no gene {', '.join(unknown)} in the index", asked=", ".join(unknown)
        )
    if len(genes) != 1:
        return None
    return Plan(
        kind="association_check",
        operation="check",
        relation="associated_with",
        subjects=genes,
        objects=condition_entities(match)[:8],
        reason=f"is {genes[0].name} linked to {match.asked!r}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation == "check"
        and plan.relation == "associated_with"
        and len(plan.subjects) == 1
        and plan.subjects[0].type == "gene"
        and bool(plan.objects)
        and all(e.type == "disease" for e in plan.objects)
    )


def facts(plan: Plan, stores: Stores) -> AssociationCheckData | AssociationAbsentData:
    assert stores.engine is not None
    reader = DiseaseReader(stores.engine)
    gene, release = plan.subjects[0], reader.release()
    for entity in plan.objects:  # several candidates: linked to any of them
        rows = reader.of_pair(gene.id, entity.id)
        if rows:
            return AssociationCheckData(
                gene=rows[0].gene, condition=rows[0].condition, associations=rows, release=release, negated=plan.negated
            )
    condition = reader.condition(plan.objects[0].id)
    assert condition is not None, f"{plan.objects[0].id} left the diseases table"
    of_gene, of_condition = reader.counts(gene.id, condition.id)
    return AssociationAbsentData(
        gene=gene_ref(gene), condition=condition, gene_conditions=of_gene, condition_genes=of_condition, release=release
    )


def statements(data: AssociationCheckData) -> list[Statement]:
    g, c = data.gene, data.condition
    rows = "; ".join(said(a) for a in data.associations)
    head = verdict(True, data.negated)  # a held link: "Yes", or "False" for a sentence that denies it
    return [(f"{head}: ClinVar (release {data.release}) links {g.symbol} ({g.id}) to {rows}.", [g.id, c.id])]


def data_table(data: AssociationCheckData) -> DataTable:
    return table(
        f"ClinVar: {data.gene.symbol} and {data.condition.name}",
        ["MedGen", "condition", "sources", "relation", "last updated"],
        [
            [a.condition.id, a.condition.name, ", ".join(a.sources), a.relation, a.last_updated]
            for a in data.associations
        ],
    )


def refers_to(data: AssociationCheckData) -> Referents:
    return Referents(genes=[data.gene.symbol])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """A held link: Yes (False for a sentence that denies it), for the gene and condition asked. (A link not held is
    graded by association_absent.)"""
    data = answer.data
    return (
        isinstance(data, AssociationCheckData)
        and data.negated == (expected.get("negated") == "yes")
        and answer.answer.startswith(verdict(True, data.negated))
        and data.gene.id == expected.get("subject")
        and data.condition.id == expected.get("object")
    )


KIND = QuestionKind(
    name="association_check",
    recognisers=((26, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
    needs_graph=False,
)
