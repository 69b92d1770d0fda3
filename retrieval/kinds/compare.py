"""`compare`: two pathways (their genes, shared and apart, and their resolved relation) or two genes (their
pathways) side by side, as prose and a table."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import SOURCE_LABEL, listing, node_name, relation_sentence
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.not_found import unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import ComparisonData, Mapping, NodeRef
from retrieval.model.plan import Plan
from retrieval.question.reading import PATHWAY_WORD, Read, gene_entities, pathway_entities
from retrieval.retrievers.graph_facts import node

COMPARE = re.compile(
    r"\bcompare\b|\bcomparison\b|\bvs\.?(?=\s)|\bversus\b|\bdiffer|\bdifference|\bcontrast\b|"
    r"\bside by side\b",
    re.I,
)


def recognise(read: Read) -> Plan | None:
    if not COMPARE.search(read.question):
        return None
    if len(read.named_genes) >= 2 and not read.found:
        return Plan(
            kind="compare",
            operation="compare",
            objects=gene_entities(read.named_genes[:2]),
            reason="two genes compared",
        )
    two = read.fuzzy(2)
    if len(two) >= 2:
        return Plan(
            kind="compare", operation="compare", objects=pathway_entities(two[:2]), reason="two pathways compared"
        )
    if not PATHWAY_WORD.search(read.question):
        return None  # "How do glycolysis and gluconeogenesis differ at their steps?": the literature's question
    return unresolved(read, "compare", "two pathways or two genes", two)


def accepts(plan: Plan) -> bool:
    return plan.operation == "compare" and len(plan.entities) == 2 and len({e.type for e in plan.entities}) == 1


def facts(plan: Plan, stores: Stores) -> ComparisonData:
    left, right = plan.entities[:2]
    if left.type == "gene":
        return _compare_genes(plan, stores)
    members = stores.graph.genes_of([left.id, right.id])
    a = [g.symbol for g in members.get(left.id, [])]
    b = [g.symbol for g in members.get(right.id, [])]
    shared = [s for s in a if s in set(b)]
    mapping = stores.graph.between(left.id, right.id)
    rows = [
        ("source", SOURCE_LABEL.get(left.source, left.source), SOURCE_LABEL.get(right.source, right.source)),
        ("member genes", str(len(a)), str(len(b))),
        ("shared genes", str(len(shared)), str(len(shared))),
        ("only here", str(len(a) - len(shared)), str(len(b) - len(shared))),
    ]
    if mapping is not None:
        rows.append(("resolved relation", _relation_text(mapping), f"confidence {_num(mapping.confidence)}"))
    return ComparisonData(
        subject="pathways",
        left=node(left),
        right=node(right),
        shared=shared,
        only_left=[s for s in a if s not in set(b)],
        only_right=[s for s in b if s not in set(a)],
        mapping=mapping,
        table=_markdown(f"{left.name} ({left.id})", f"{right.name} ({right.id})", rows),
    )


def _compare_genes(plan: Plan, stores: Stores) -> ComparisonData:
    left, right = plan.entities[:2]
    pathways = {g.id: [p.id for p in stores.graph.pathways_with_genes([g.id])] for g in (left, right)}
    a, b = pathways[left.id], pathways[right.id]
    shared = [p for p in a if p in set(b)]
    rows = [
        ("pathways", str(len(a)), str(len(b))),
        ("shared pathways", str(len(shared)), str(len(shared))),
        ("only this gene", str(len(a) - len(shared)), str(len(b) - len(shared))),
    ]
    return ComparisonData(
        subject="genes",
        left=NodeRef(id=left.id, name=left.name, source="hgnc"),
        right=NodeRef(id=right.id, name=right.name, source="hgnc"),
        shared=shared,
        only_left=[p for p in a if p not in set(b)],
        only_right=[p for p in b if p not in set(a)],
        table=_markdown(left.name, right.name, rows),
    )


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _relation_text(mapping: Mapping) -> str:
    if mapping.relation == "equivalent":
        return "equivalent"
    return "lies within the other" if mapping.direction == "inside" else "contains the other"


def _markdown(left: str, right: str, rows: list[tuple[str, str, str]]) -> str:
    lines = [f"| | {left} | {right} |", "|---|---|---|"]
    return "\n".join(lines + [f"| {name} | {a} | {b} |" for name, a, b in rows])


def statements(data: ComparisonData) -> list[Statement]:
    left, right = data.left, data.right
    cited = [left.id, right.id]
    what = "genes" if data.subject == "pathways" else "pathways"
    out = [
        (
            f"{node_name(left)} and {node_name(right)} share {len(data.shared)} {what}"
            + (f": {listing(data.shared, 30)}." if data.shared else "."),
            cited,
        ),
        (
            f"Only in {node_name(left)}: {len(data.only_left)} {what}"
            + (f" ({listing(data.only_left, 30)})." if data.only_left else "."),
            [left.id],
        ),
        (
            f"Only in {node_name(right)}: {len(data.only_right)} {what}"
            + (f" ({listing(data.only_right, 30)})." if data.only_right else "."),
            [right.id],
        ),
    ]
    if data.mapping is not None:
        out.append((relation_sentence(left, data.mapping.model_copy(update={"shared_genes": []})), cited))
    return out


def data_table(data: ComparisonData) -> DataTable:
    name = lambda n: n.name or n.id  # noqa: E731
    rows = (
        [["both", x] for x in data.shared]
        + [[f"only {name(data.left)}", x] for x in data.only_left]
        + [[f"only {name(data.right)}", x] for x in data.only_right]
    )
    return table(
        f"{name(data.left)} compared with {name(data.right)}",
        ["in", "gene" if data.subject == "pathways" else "pathway"],
        rows,
    )


def refers_to(data: ComparisonData) -> Referents:
    ids = [data.left.id, data.right.id]
    return Referents(pathways=ids) if data.subject == "pathways" else Referents(genes=[data.left.name, data.right.name])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return isinstance(data, ComparisonData) and {data.left.id, data.right.id} == expected_set(expected)


KIND = QuestionKind(
    name="compare",
    recognisers=((80, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    appendix=lambda data: data.table,
    refers_to=refers_to,
    grade=grade,
)
