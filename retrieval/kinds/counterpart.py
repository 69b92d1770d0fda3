"""`counterpart`: a pathway's match in the other database — `P corresponds_to ?` — as the Reactome ↔ KEGG
resolution found it (equivalent first, then part-of either way), with its scores and shared genes."""

from __future__ import annotations

from retrieval.answering.typed_answer import SOURCE_LABEL, node_name, relation_sentence
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.not_found import unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import CounterpartData
from retrieval.model.pathways import PathwayRef
from retrieval.model.plan import Plan
from retrieval.question.reading import COUNTERPART, Read, databases, pathway_entity
from retrieval.retrievers.graph_facts import node


def plan_for(question: str, found: list[PathwayRef]) -> Plan:
    named = databases(question)
    # "Which Reactome pathway … the KEGG apoptosis pathway?": the pathway asked about is in the last-named one.
    source = named[-1] if named else ""
    pick = next((r for r in found if r.source == source), found[0])
    target = "kegg" if pick.source == "reactome" else "reactome"
    return Plan(
        kind="counterpart",
        operation="list",
        relation="corresponds_to",
        subjects=[pathway_entity(pick)],
        returns="pathway",
        source=target,
        reason=f"counterpart of {pick.id} in {target}",
    )


def recognise(read: Read) -> Plan | None:
    if not (COUNTERPART.search(read.question) and databases(read.question)):
        return None
    # The database named may be the one asked for, not the pathway's own: any database's name counts.
    found = read.found or read.fuzzy(1)
    if not found and (anywhere := read.pathways.fuzzy(read.question, ignore=read.ignore)):
        found = [anywhere]
    if found:
        return plan_for(read.question, found)
    return unresolved(read, "counterpart", "a pathway")


def accepts(plan: Plan) -> bool:
    return (
        plan.operation == "list"
        and plan.relation == "corresponds_to"
        and bool(plan.subjects)
        and plan.subjects[0].type == "pathway"
        and not plan.objects
    )


def facts(plan: Plan, stores: Stores) -> CounterpartData:
    pathway = plan.subjects[0]
    target = plan.source or ("kegg" if pathway.source == "reactome" else "reactome")
    return CounterpartData(
        pathway=node(pathway), target_source=target, counterparts=stores.graph.mappings(pathway.id, target)
    )


def statements(data: CounterpartData) -> list[Statement]:
    p = data.pathway
    if not data.counterparts:
        target = SOURCE_LABEL.get(data.target_source, "the other database")
        return [(f"No {target} pathway is resolved as equivalent to, or part of, {node_name(p)}.", [p.id])]
    return [(relation_sentence(p, m), [p.id, m.pathway.id]) for m in data.counterparts]


def fixed(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def data_table(data: CounterpartData) -> DataTable:
    return table(
        f"Counterparts of {data.pathway.name or data.pathway.id} in {data.target_source}",
        ["id", "name", "relation", "confidence", "Jaccard", "shared genes"],
        [
            [
                m.pathway.id,
                m.pathway.name,
                f"{m.relation} {m.direction}".strip(),
                fixed(m.confidence),
                fixed(m.jaccard),
                len(m.shared_genes),
            ]
            for m in data.counterparts
        ],
        of="pathway",
    )


def refers_to(data: CounterpartData) -> Referents:
    # "Which genes do the two share?": the pathway and its best counterpart.
    return Referents(pathways=[data.pathway.id, *[m.pathway.id for m in data.counterparts[:1]]])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return isinstance(data, CounterpartData) and bool(
        expected_set(expected) & {m.pathway.id for m in data.counterparts}
    )


KIND = QuestionKind(
    name="counterpart",
    recognisers=((100, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
