"""`entity_reactions`: the reactions a gene or compound takes part in — `G participates_in ? returns reaction` —
directly or as a component of a complex or set, with its role in each; `role` narrows it ("Which reactions produce
G6P?"), a pathway named beside it narrows it to that pathway's reactions ("Which glycolysis reactions use ATP?")."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.members import count_stated
from retrieval.kinds.reaction_participants import reaction_label
from retrieval.kinds.reaction_scope import not_held
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.plan import Entity, Plan
from retrieval.model.reaction_data import ROLES, EntityReactionsData, Involvement, ReactionScopeData
from retrieval.model.refs import NodeRef
from retrieval.question.reaction_questions import (
    REACTION_WORD,
    asked_role,
    direction,
    participant_entities,
    reaction_entities,
    written,
)
from retrieval.question.reading import EXPLAINS, Read, pathway_entity
from retrieval.retrievers.reaction_facts import ReactionReader

# "What does GCK catalyse?", "What inhibits PDK2?": a role question without the word "reaction".
_ROLE_QUESTION = re.compile(
    r"\bwhat (?:does|do|is|are) .+ (?:cataly[sz]\w*|inhibit\w*|activat\w*|regulat\w*)\b|"
    r"\bwhat (?:cataly[sz]es|inhibits|activates|produces|consumes)\b",
    re.I,
)
# "Does ALDOA take part in a reaction that produces DHAP?": the role word describes the reaction, whose output is
# another thing than the one asked about; the thing's own role is left open (ALDOA catalyses it).
_REACTION_CLAUSE = re.compile(
    r"\breactions? (?:that|which) (?:\w+ ){0,2}?(?:produc|generat|yield|form|mak|releas|consum|use|need|requir)\w*"
    r"\s+(?P<what>.+)$",
    re.I,
)
ROLE_AS = {
    "input": "an input",
    "output": "an output",
    "catalyst": "a catalyst",
    "positive_regulator": "a positive regulator",
    "negative_regulator": "a negative regulator",
}


def recognise(read: Read) -> Plan | None:
    question = written(read)
    if not (REACTION_WORD.search(question) or _ROLE_QUESTION.search(question)) or direction(question):
        return None
    if EXPLAINS.search(question):
        return None
    if reaction_entities(read):
        return None
    entities = participant_entities(read)
    if len(entities) != 1:
        return None
    within = [pathway_entity(p) for p in read.found[:1]]
    return Plan(
        kind="entity_reactions",
        operation="count" if read.count else "list",
        relation="participates_in",
        subjects=entities,
        objects=within,
        returns="reaction",
        role=_role_of(entities[0], question, asked_role(read.rest(read.found))),
        reason=f"reactions {entities[0].label()} takes part in",
    )


def _role_of(entity: Entity, question: str, role: str | None) -> str | None:
    """The role asked of the entity, unless the role word belongs to a clause about the reaction's other thing."""
    clause = _REACTION_CLAUSE.search(question)
    if role is None or clause is None:
        return role
    names = {n.lower() for n in (entity.asked_as, entity.name, entity.id) if n}
    return role if any(n in clause.group("what").lower() for n in names) else None


def accepts(plan: Plan) -> bool:
    return (
        plan.operation in ("list", "count")
        and plan.relation == "participates_in"
        and plan.returns == "reaction"
        and len(plan.subjects) == 1
        and plan.subjects[0].type in ("gene", "compound")
    )


def facts(plan: Plan, stores: Stores) -> EntityReactionsData | ReactionScopeData:
    reader = ReactionReader(stores.graph)
    subject = plan.subjects[0]
    involvements = reader.involvements(subject.id)
    if not involvements:
        return not_held(reader, f"{subject.label()} (Flux holds no reaction it takes part in)")
    pathway = next((e for e in plan.objects if e.type == "pathway"), None)
    if pathway is not None:
        held = {r.id for r in reader.pathway_reactions(pathway.id)[0]}
        involvements = [i for i in involvements if i.reaction.id in held]
    if plan.role:
        involvements = [i for i in involvements if i.role == plan.role]
    return EntityReactionsData(
        entity=NodeRef(id=subject.id, name=subject.name, source=subject.source),
        involvements=involvements,
        asked_role=plan.role,
        count=plan.count,
    )


def _one(i: Involvement) -> str:
    via = f" (through {i.via.name or i.via.id} [{i.via.id}])" if i.via else ""
    return f"{reaction_label(i.reaction)}{via}"


def statements(data: EntityReactionsData) -> list[Statement]:
    e = data.entity
    who = f"{e.name} ({e.id})" if e.name and e.name != e.id else e.id
    if not data.involvements:
        what = f" as {ROLE_AS[data.asked_role]}" if data.asked_role else ""
        return [(f"Flux holds no reaction in which {who} takes part{what}.", [e.id])]
    out: list[Statement] = [(f"{who} takes part in {len(data.reactions)} reactions.", [e.id])]
    for role in ROLES:
        these = [i for i in data.involvements if i.role == role]
        if these:
            out.append(
                (
                    f"It is {ROLE_AS[role]} of {listing([_one(i) for i in these], 30)}.",
                    [e.id, *(i.reaction.id for i in these[:30])],
                )
            )
    return out


def data_table(data: EntityReactionsData) -> DataTable:
    return table(
        f"Reactions of {data.entity.name or data.entity.id} ({len(data.reactions)})",
        ["reaction", "name", "role", "through", "pathway"],
        [
            [i.reaction.id, i.reaction.name, i.role, i.via.id if i.via else "", i.reaction.pathway]
            for i in data.involvements
        ],
        of="reaction",
    )


def refers_to(data: EntityReactionsData) -> Referents:
    return Referents(genes=[data.entity.name] if data.entity.source == "hgnc" else [])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return (
        isinstance(data, EntityReactionsData)
        and data.entity.id in expected_set(expected)
        and {r.id for r in data.reactions} == expected_set(expected, "reactions")
        and count_stated(answer, expected, len(data.reactions))
    )


KIND = QuestionKind(
    name="entity_reactions",
    recognisers=((32, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
