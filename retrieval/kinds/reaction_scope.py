"""`reaction_scope`: a reaction question about something Flux holds no reactions for — a pathway without reaction
data, a reaction id it does not hold, or no pathway, reaction, gene or compound it can read. The answer names the
pathways Flux does hold reactions for and where the others would come from (live mode pulls each pathway's events
from Reactome's ContentService), with confidence 0."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing, short_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, table
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.plan import Entity, Plan
from retrieval.model.reaction_data import ReactionScopeData
from retrieval.model.refs import NodeRef
from retrieval.question.reaction_questions import ASKS_REACTION, unheld_reaction_ids, written
from retrieval.question.reading import EXPLAINS, Read, pathway_entities
from retrieval.retrievers.reaction_facts import ReactionReader

ROLE_ASKED = re.compile(r"\b(?:consum|produc|inputs?\b|outputs?\b|participants?\b|inhibit|activat)", re.I)
WHERE_FROM = (
    "reactions of other pathways come from Reactome's ContentService, which Flux reads in live mode "
    "(FLUX_SOURCE_MODE=live)"
)


def recognise(read: Read) -> Plan | None:
    """A reaction question nothing else read: reaction words naming nothing Flux holds reactions for."""
    # In the words as written, without pathway names ("Gene expression" is no expression question either).
    if not ASKS_REACTION.search(read.rest(read.found, as_written=True)) or EXPLAINS.search(written(read)):
        return None
    asked = read.found[0].name if read.found else read.rest(read.found)
    return Plan(
        kind="reaction_scope",
        operation="abstain",
        scope="reaction",
        subjects=pathway_entities(read.found[:1]),
        reason=f"a reaction question about {asked!r}, for which Flux holds no reactions",
    )


def recognise_unheld_id(read: Read) -> Plan | None:
    """ "What does R-HSA-99999 consume?": a reaction question about an id that is neither a pathway nor a reaction
    Flux holds (read before ids of the wrong shape, which are `not_found`'s)."""
    unheld = unheld_reaction_ids(read)
    question = written(read)
    if not unheld or not (ASKS_REACTION.search(question) or ROLE_ASKED.search(question)):
        return None
    return Plan(
        kind="reaction_scope",
        operation="abstain",
        scope="reaction",
        subjects=[Entity(type="reaction", id=i) for i in unheld],
        reason=f"a reaction question about {', '.join(unheld)}, which Flux holds no reaction of",
    )


def accepts(plan: Plan) -> bool:
    return plan.operation == "abstain" and plan.scope == "reaction"


def not_held(reader: ReactionReader, asked: str, pathway: NodeRef | None = None) -> ReactionScopeData:
    held = reader.held_pathways()
    return ReactionScopeData(asked=asked, pathway=pathway, held=held, reactions=sum(p.size or 0 for p in held))


def facts(plan: Plan, stores: Stores) -> ReactionScopeData:
    pathway = next((e for e in plan.entities if e.type == "pathway"), None)
    asked = ", ".join(e.label() for e in plan.entities) or plan.reason
    reader = ReactionReader(stores.graph)
    asked_about = NodeRef(id=pathway.id, name=pathway.name, source=pathway.source) if pathway else None
    data = not_held(reader, asked, asked_about)
    if pathway is not None:  # "the rate-limiting step of glycolysis": its reactions are held, that fact is not
        data.held_here = len(reader.pathway_reactions(pathway.id)[0])
    return data


def statements(data: ReactionScopeData) -> list[Statement]:
    if data.held_here and data.pathway is not None:
        return [
            (
                f"Flux does not hold that: it holds the {data.held_here} reactions of {short_name(data.pathway)} "
                "(what each consumes, produces and is catalysed by, and their order), but not the fact this question "
                "asks for.",
                [],
            )
        ]
    if not data.held:
        return [(f"Flux does not hold that: it holds no reactions at all, so not for {data.asked}; {WHERE_FROM}.", [])]
    held = listing([short_name(p) for p in data.held], 12)
    return [
        (
            f"Flux does not hold that: it holds reactions for {len(data.held)} pathways ({held}); not for "
            f"{data.asked}. Reactions of other pathways come from Reactome's ContentService, which Flux reads in "
            "live mode (FLUX_SOURCE_MODE=live).",
            [],
        )
    ]


def data_table(data: ReactionScopeData) -> DataTable | None:
    if not data.held:
        return None
    return table(
        f"Pathways Flux holds reactions for ({len(data.held)})",
        ["pathway", "name", "reactions"],
        [[p.id, p.name, p.size] for p in data.held],
        of="pathway",
    )


def refers_to(data: ReactionScopeData) -> Referents:
    return Referents(pathways=[data.pathway.id] if data.pathway else [])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """Nothing stated as fact, confidence 0, and the held pathways named."""
    return (
        isinstance(answer.data, ReactionScopeData)
        and answer.confidence < 0.5
        and "Flux does not hold that" in answer.answer
    )


KIND = QuestionKind(
    name="reaction_scope",
    recognisers=((9, recognise_unheld_id), (37, recognise)),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
    abstains=True,
)
