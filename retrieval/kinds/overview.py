"""`overview`: "tell me about" a pathway — its size, place in the hierarchy and counterparts, from the graph."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing, node_name, relation_sentence
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.hierarchy import hierarchy_statements
from retrieval.kinds.not_found import unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import HierarchyData, OverviewData
from retrieval.model.plan import Plan
from retrieval.question.reading import OVERVIEW, PATHWAY_WORD, Read, pathway_entity
from retrieval.retrievers.graph_facts import node

_LIST_ASKED = re.compile(r"\b(genes|members|compounds|proteins)\s+(of|in)\b|\bhow many\b", re.I)


def recognise(read: Read) -> Plan | None:
    if not OVERVIEW.search(read.question) or _LIST_ASKED.search(read.question):
        return None
    found = read.found or (read.fuzzy(1) if PATHWAY_WORD.search(read.question) else [])
    if found:
        return Plan(
            kind="overview",
            operation="describe",
            subjects=[pathway_entity(found[0])],
            reason=f"overview of {found[0].id}",
        )
    return unresolved(read, "overview", "a pathway") if PATHWAY_WORD.search(read.question) else None


def accepts(plan: Plan) -> bool:
    return (
        plan.operation == "describe"
        and plan.relation is None
        and len(plan.subjects) == 1
        and plan.subjects[0].type == "pathway"
    )


def facts(plan: Plan, stores: Stores) -> OverviewData:
    pathway = plan.subjects[0]
    genes, compounds = stores.graph.members([pathway.id]).get(pathway.id, ([], []))
    parents, children = stores.graph.hierarchy(pathway.id)
    return OverviewData(
        pathway=node(pathway),
        gene_total=len(genes),
        genes=genes,
        compound_total=len(compounds),
        parents=parents,
        children=children,
        counterparts=stores.graph.mappings(pathway.id),
    )


def statements(data: OverviewData) -> list[Statement]:
    p = data.pathway
    genes = [g.symbol for g in data.genes]
    size = (
        f"{node_name(p)} has {data.gene_total} member genes in the graph"
        + (f" ({listing(genes, 20)})" if genes else "")
        + (f" and {data.compound_total} compounds." if data.compound_total else ".")
    )
    out: list[Statement] = [(size, [p.id])]
    out += hierarchy_statements(HierarchyData(pathway=p, parents=data.parents, children=data.children))
    for mapping in data.counterparts[:3]:
        out.append((relation_sentence(p, mapping.model_copy(update={"shared_genes": []})), [p.id, mapping.pathway.id]))
    if not data.counterparts:
        out.append(
            (f"No pathway of the other database is resolved as equivalent to, or part of, {node_name(p)}.", [p.id])
        )
    return out


def data_table(data: OverviewData) -> DataTable:
    rows = [["parent", p.id, p.name, p.source] for p in data.parents]
    rows += [["child", c.id, c.name, c.source] for c in data.children]
    rows += [
        [f"{m.relation} {m.direction}".strip(), m.pathway.id, m.pathway.name, m.pathway.source]
        for m in data.counterparts
    ]
    return table(
        f"{data.pathway.name or data.pathway.id}: {data.gene_total} genes",
        ["relation", "id", "name", "source"],
        rows,
        of="pathway",
    )


def refers_to(data: OverviewData) -> Referents:
    return Referents(pathways=[data.pathway.id])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return (
        isinstance(data, OverviewData)
        and data.pathway.id in expected_set(expected)
        and data.gene_total == int(expected.get("gene_total", "-1"))
    )


KIND = QuestionKind(
    name="overview",
    recognisers=((140, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
