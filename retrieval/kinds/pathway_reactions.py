"""`pathway_reactions`: the reactions of a pathway — `? member_of P returns reaction` — its own and its
sub-pathways' at any depth, in the order PRECEDES gives where it gives one (else by id), listed or counted. A pathway
Flux holds no reactions for is answered by `reaction_scope`: which pathways it does hold reactions for."""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter

from retrieval.answering.typed_answer import listing, node_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.members import count_stated
from retrieval.kinds.reaction_scope import not_held
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.plan import Plan
from retrieval.model.reaction_data import PathwayReactionsData, ReactionRef, ReactionScopeData
from retrieval.question.reaction_questions import (
    REACTION_WORD,
    direction,
    participant_entities,
    reaction_entities,
    written,
)
from retrieval.question.reading import EXPLAINS, Read, pathway_entity
from retrieval.retrievers.graph_facts import node
from retrieval.retrievers.reaction_facts import ReactionReader

LISTED = 40  # reactions named in the prose (the table and `data` hold all)


def recognise(read: Read) -> Plan | None:
    question = written(read)
    if not REACTION_WORD.search(question) or direction(question) or EXPLAINS.search(question):
        return None
    if reaction_entities(read) or participant_entities(read):
        return None  # a named reaction, gene or compound: the other reaction kinds
    found = read.found or read.fuzzy(1)
    if not found or "reaction" not in question.lower():
        return None
    return Plan(
        kind="pathway_reactions",
        operation="count" if read.count else "list",
        relation="member_of",
        objects=[pathway_entity(found[0])],
        returns="reaction",
        reason=f"reactions of {found[0].id}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation in ("list", "count")
        and plan.relation == "member_of"
        and plan.returns == "reaction"
        and len(plan.objects) == 1
        and plan.objects[0].type == "pathway"
    )


def in_order(reactions: list[ReactionRef], steps: list[tuple[str, str]]) -> tuple[list[ReactionRef], bool]:
    """The reactions in PRECEDES order (ties by id), and whether the steps gave one (no cycle, at least one step)."""
    by_id = {r.id: r for r in reactions}
    sorter: TopologicalSorter[str] = TopologicalSorter({r: set() for r in sorted(by_id)})
    for before, after in steps:
        sorter.add(after, before)
    try:
        sorter.prepare()
    except CycleError:
        return sorted(reactions, key=lambda r: r.id), False
    ordered: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        ordered += ready
        sorter.done(*ready)
    return [by_id[i] for i in ordered], bool(steps)


def facts(plan: Plan, stores: Stores) -> PathwayReactionsData | ReactionScopeData:
    pathway = plan.objects[0]
    reader = ReactionReader(stores.graph)
    reactions, steps = reader.pathway_reactions(pathway.id)
    if not reactions:
        return not_held(reader, pathway.label(), node(pathway))
    ordered, has_order = in_order(reactions, steps)
    return PathwayReactionsData(
        pathway=node(pathway),
        reactions=ordered,
        ordered=has_order,
        steps=len(steps),
        sub_pathways=len({r.pathway for r in reactions} - {pathway.id}),
        count=plan.count,
    )


def statements(data: PathwayReactionsData) -> list[Statement]:
    names = [f'{r.id} "{r.name}"' for r in data.reactions]
    where = f" (with its {data.sub_pathways} sub-pathways)" if data.sub_pathways else ""
    order = (
        f", in the order its {data.steps} PRECEDES steps give" if data.ordered else "; Flux holds no order between them"
    )
    cites = [data.pathway.id, *(r.id for r in data.reactions[:LISTED])]
    return [
        (
            f"{node_name(data.pathway)}{where} holds {len(data.reactions)} reactions{order}: {listing(names, LISTED)}.",
            cites,
        )
    ]


def data_table(data: PathwayReactionsData) -> DataTable:
    return table(
        f"Reactions of {data.pathway.name or data.pathway.id} ({len(data.reactions)})",
        ["#", "reaction", "name", "pathway"],
        [[i, r.id, r.name, r.pathway] for i, r in enumerate(data.reactions, 1)],
        of="reaction",
    )


def refers_to(data: PathwayReactionsData) -> Referents:
    return Referents(pathways=[data.pathway.id])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    if not isinstance(data, PathwayReactionsData):
        return False
    ids = [r.id for r in data.reactions]
    order_ok = True
    if expected.get("order"):  # "a>b|c>d": each pair in this order
        position = {rid: i for i, rid in enumerate(ids)}
        pairs = [p.split(">") for p in expected["order"].split("|")]
        order_ok = all(position.get(a, -1) < position.get(b, -1) for a, b in pairs)
    return (
        data.pathway.id in expected_set(expected)
        and set(ids) == expected_set(expected, "reactions")
        and order_ok
        and count_stated(answer, expected, len(ids))
    )


KIND = QuestionKind(
    name="pathway_reactions",
    recognisers=((33, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
