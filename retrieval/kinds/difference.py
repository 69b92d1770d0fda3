"""`difference`: the genes of one pathway that another lacks — `? member_of P1 ∧ ¬ P2`, in the order the
question names them ("A but not B", "A minus B")."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing, node_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.not_found import unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import DifferenceData
from retrieval.model.plan import Plan
from retrieval.question.reading import Read, pathway_entities
from retrieval.retrievers.graph_facts import node

DIFFERENCE = re.compile(
    r"\bbut not\b|\band not\b|\bnot (in|found in|part of|present in|shared with|also in)\b|"
    r"\bhave that\b.*\b(doesn'?t|does not|lacks?)\b|"
    r"\bexcept (those |the ones )?(in|of)\b|\bexcluding\b|\bunique to\b|\bmissing (from|in)\b|"
    r"\babsent (from|in)\b|\blacking in\b|\bminus\b|\bthat are not\b|\bthat aren'?t\b",
    re.I,
)


def recognise(read: Read) -> Plan | None:
    if not DIFFERENCE.search(read.question):
        return None
    two = read.fuzzy(2)
    if len(two) >= 2:
        return Plan(
            kind="difference",
            operation="difference",
            relation="member_of",
            objects=pathway_entities(two[:2]),
            returns="gene",
            reason=f"genes of {two[0].id} that {two[1].id} lacks",
        )
    return unresolved(read, "difference", "two pathways", two)


def accepts(plan: Plan) -> bool:
    return plan.operation == "difference"


def facts(plan: Plan, stores: Stores) -> DifferenceData:
    left, right = plan.objects[:2]
    members = stores.graph.genes_of([left.id, right.id])
    a, b = members.get(left.id, []), members.get(right.id, [])
    in_b = {g.id for g in b}
    only = [g for g in a if g.id not in in_b]
    return DifferenceData(left=node(left), right=node(right), genes=only, total=len(only), sizes=[len(a), len(b)])


def statements(data: DifferenceData) -> list[Statement]:
    a, b = data.left, data.right
    symbols = [g.symbol for g in data.genes]
    text = (
        f"{node_name(a)} has {data.sizes[0]} member genes; {data.total} of them are not in {node_name(b)} "
        f"({data.sizes[1]} genes)" + (f": {listing(symbols)}." if symbols else ".")
    )
    return [(text, [a.id, b.id])]


def data_table(data: DifferenceData) -> DataTable:
    return table(
        f"Genes of {data.left.name or data.left.id} not in {data.right.name or data.right.id} ({data.total})",
        ["symbol", "HGNC id", "name"],
        [[g.symbol, g.id, g.name] for g in data.genes],
        of="gene",
    )


def refers_to(data: DifferenceData) -> Referents:
    return Referents(pathways=[data.left.id, data.right.id])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return (
        isinstance(data, DifferenceData)
        and (data.left.id, data.right.id) == (expected["left"], expected["right"])
        and {g.symbol for g in data.genes} == expected_set(expected)
    )


KIND = QuestionKind(
    name="difference",
    recognisers=((60, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
