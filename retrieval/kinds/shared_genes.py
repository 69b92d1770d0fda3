"""`shared_genes`: the genes two pathways share — `? member_of P1 ∧ P2` — with their resolved relation when the
resolution links them. Named with both databases and one pathway ("the Reactome and KEGG citric acid cycle
pathways"), the second is the pathway's resolved counterpart."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing, node_name, relation_sentence
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.not_found import unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import SharedGenesData
from retrieval.model.plan import Plan
from retrieval.question.reading import COUNTERPART, Read, databases, pathway_entities, pathway_entity
from retrieval.retrievers.graph_facts import node

SHARED = re.compile(r"\bshare[ds]?\b|\bcommon\b|\boverlap|\bin both\b|\bintersection\b", re.I)
# Something shared that is not a gene ("which shared intermediates", "common steps"): not this kind's question.
_SHARED_OTHER = re.compile(
    r"\b(?:share[ds]?|common)\s+(?:\w+\s+)?(?:intermediates?|metabolites?|compounds?|"
    r"substrates?|products?|steps?|features?|properties|mechanisms?|regulators?)\b",
    re.I,
)


def recognise(read: Read) -> Plan | None:
    question = read.question
    counterpart_asked = bool(COUNTERPART.search(question) and databases(question))
    explicit_compare = re.search(r"\bcompare|\bdiffer", question, re.I)
    if (
        not SHARED.search(question)
        or (read.named_genes and not read.found)
        or explicit_compare
        or _SHARED_OTHER.search(question)
    ):
        return None
    two = read.fuzzy(2)
    if len(two) >= 2:
        return Plan(
            kind="shared_genes",
            operation="intersect",
            relation="member_of",
            objects=pathway_entities(two[:2]),
            returns="gene",
            reason="genes shared by two pathways",
        )
    missing = {"reactome", "kegg"} - {r.source for r in two}
    if len(two) == 1 and len(missing) == 1 and len(set(databases(question))) == 2 and not counterpart_asked:
        # "the Reactome and KEGG citric acid cycle pathways": the one found, and its resolved counterpart.
        other = missing.pop()
        return Plan(
            kind="shared_genes",
            operation="intersect",
            relation="member_of",
            objects=[pathway_entity(two[0])],
            returns="gene",
            source=other,
            reason=f"genes shared by {two[0].id} and its {other} counterpart",
        )
    if counterpart_asked:  # "which KEGG pathway corresponds …, and which genes do they share?" goes on
        return None
    return unresolved(read, "shared_genes", "two pathways", two)


def accepts(plan: Plan) -> bool:
    return plan.operation == "intersect"


def facts(plan: Plan, stores: Stores) -> SharedGenesData:
    left = plan.objects[0]
    right = (
        plan.objects[1]
        if len(plan.objects) > 1
        else stores.graph.counterpart_of(left.id, plan.source or ("kegg" if left.source == "reactome" else "reactome"))
    )
    if right is None:
        return SharedGenesData(
            pathways=[node(left)], sizes=[len(stores.graph.genes_of([left.id]).get(left.id, []))], shared=[], total=0
        )
    members = stores.graph.genes_of([left.id, right.id])
    a, b = members.get(left.id, []), members.get(right.id, [])
    in_b = {g.id for g in b}
    shared = [g for g in a if g.id in in_b]
    mapping = stores.graph.between(left.id, right.id)
    if mapping is not None:
        mapping.shared_genes = [g.symbol for g in shared]
    return SharedGenesData(
        pathways=[node(left), node(right)], sizes=[len(a), len(b)], shared=shared, total=len(shared), mapping=mapping
    )


def statements(data: SharedGenesData) -> list[Statement]:
    if len(data.pathways) == 1:
        a = data.pathways[0]
        return [
            (f"{node_name(a)} has no resolved counterpart in the other database to compare its genes with.", [a.id])
        ]
    a, b = data.pathways
    cited = [a.id, b.id]
    symbols = [g.symbol for g in data.shared]
    text = (
        f"{node_name(a)} ({data.sizes[0]} genes) and {node_name(b)} ({data.sizes[1]} genes) share {data.total} "
        "genes" + (f": {listing(symbols)}." if symbols else ".")
    )
    out = [(text, cited)]
    if data.mapping is not None:
        out.append((relation_sentence(a, data.mapping.model_copy(update={"shared_genes": []})), cited))
    return out


def data_table(data: SharedGenesData) -> DataTable:
    return table(
        f"Shared genes ({len(data.shared)} of {data.total})",
        ["symbol", "HGNC id", "name"],
        [[g.symbol, g.id, g.name] for g in data.shared],
        of="gene",
    )


def refers_to(data: SharedGenesData) -> Referents:
    return Referents(pathways=[p.id for p in data.pathways])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return isinstance(data, SharedGenesData) and {g.symbol for g in data.shared} == expected_set(expected)


KIND = QuestionKind(
    name="shared_genes",
    recognisers=((70, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
