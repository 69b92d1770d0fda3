"""`reaction_participants`: what a reaction consumes, produces, is catalysed and regulated by, and which reactions
come right before and after it — `describe participates_in R` (`role` narrows it: "What catalyses R-HSA-70420?").
Complexes and sets are named with their genes and compounds."""

from __future__ import annotations

from retrieval.answering.typed_answer import listing
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.reaction_scope import not_held
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.plan import Plan
from retrieval.model.reaction_data import ROLES, Participant, ReactionParticipantsData, ReactionRef, ReactionScopeData
from retrieval.question.reaction_questions import (
    PARTICIPANTS,
    asked_role,
    direction,
    reaction_entities,
    written,
)
from retrieval.question.reading import EXPLAINS, Read
from retrieval.retrievers.reaction_facts import ReactionReader

ROLE_SAYS = {
    "input": "consumes",
    "output": "produces",
    "catalyst": "is catalysed by",
    "positive_regulator": "is activated by",
    "negative_regulator": "is inhibited by",
}


def recognise(read: Read) -> Plan | None:
    reactions = reaction_entities(read)
    question = written(read)
    if len(reactions) != 1 or direction(question) or not PARTICIPANTS.search(question) or EXPLAINS.search(question):
        return None
    return Plan(
        kind="reaction_participants",
        operation="describe",
        relation="participates_in",
        objects=reactions,
        role=asked_role(read.rest([])),
        reason=f"participants of {reactions[0].id}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation == "describe"
        and plan.relation == "participates_in"
        and len(plan.objects) == 1
        and plan.objects[0].type == "reaction"
    )


def facts(plan: Plan, stores: Stores) -> ReactionParticipantsData | ReactionScopeData:
    reader = ReactionReader(stores.graph)
    reaction = reader.reaction(plan.objects[0].id)
    if reaction is None:
        return not_held(reader, plan.objects[0].id)
    before, after = reader.neighbours(reaction.id)
    return ReactionParticipantsData(
        reaction=reaction,
        participants=reader.participants(reaction.id),
        preceded_by=before,
        followed_by=after,
        asked_role=plan.role,
    )


def named(p: Participant) -> str:
    parts = f" ({listing(p.parts, 8)})" if p.parts and p.entity in ("complex", "set") else ""
    return f"{p.name} [{p.id}]{parts}"


def reaction_label(r: ReactionRef) -> str:
    return f'{r.id} "{r.name}"' if r.name else r.id


def statements(data: ReactionParticipantsData) -> list[Statement]:
    r = data.reaction
    roles = [data.asked_role] if data.asked_role else list(ROLES)
    out: list[Statement] = []
    for role in roles:
        these = [p for p in data.participants if p.role == role]
        if these:
            listed = listing([named(p) for p in these])
            out.append(
                (f"Reactome reaction {reaction_label(r)} {ROLE_SAYS[role]} {listed}.", [r.id, *(p.id for p in these)])
            )
        elif data.asked_role:
            out.append((f"Flux holds no {role.replace('_', ' ')} for Reactome reaction {reaction_label(r)}.", [r.id]))
    if not data.asked_role:
        if data.preceded_by:
            out.append(
                (
                    f"It follows {listing([reaction_label(b) for b in data.preceded_by])}.",
                    [r.id, *(b.id for b in data.preceded_by)],
                )
            )
        if data.followed_by:
            out.append(
                (
                    f"It is followed by {listing([reaction_label(a) for a in data.followed_by])}.",
                    [r.id, *(a.id for a in data.followed_by)],
                )
            )
    return out or [(f"Flux holds Reactome reaction {reaction_label(r)} with no participants.", [r.id])]


def data_table(data: ReactionParticipantsData) -> DataTable:
    return table(
        f"Participants of {data.reaction.id} ({len(data.participants)})",
        ["role", "id", "name", "kind", "components"],
        [[p.role, p.id, p.name, p.entity, ", ".join(p.parts)] for p in data.participants],
        of="participant",
    )


def refers_to(data: ReactionParticipantsData) -> Referents:
    return Referents(
        pathways=[data.reaction.pathway] if data.reaction.pathway else [],
        genes=[p.name for p in data.participants if p.entity == "gene"],
    )


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """The reaction asked, and exactly the participants expected for each role given ("inputs": "CHEBI:1|…")."""
    data = answer.data
    if not isinstance(data, ReactionParticipantsData) or data.reaction.id not in expected_set(expected):
        return False
    return all(
        {p.id for p in data.participants if p.role == role} == expected_set(expected, f"{role}s")
        for role in ROLES
        if f"{role}s" in expected
    )


KIND = QuestionKind(
    name="reaction_participants",
    recognisers=((31, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
