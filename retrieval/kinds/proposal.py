"""A plan proposed by an LLM (structured output against `plan_schema()`), checked before anything runs.

The rules read every question first; their typed readings are precise on every question set measured, so the model
is asked to read the questions they leave to the literature (or to "not found"): phrasing the rules miss. The
executor still answers every plan from the tables and the graph. A proposal is used only when it parses, matches the
schema, names entities the question itself names and Flux holds (resolved through the lexicons, never guessed),
passes `validate`, and some kind executes a plan of its shape; a relation Flux holds no data for becomes the missing
fact type. A proposal that the question is a literature search agrees with the rules. Anything else keeps the rules'
plan, with a warning saying why the proposal was not used.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval.kinds.compound_pathways import COMPOUND_ID
from retrieval.kinds.registry import kind_for
from retrieval.model import llm_budget
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import (
    CATEGORIES,
    FactType,
    GeneRecordField,
    Operation,
    Plan,
    PlanError,
    ReactionRole,
    Relation,
    not_held,
    plan_schema,
    validate,
)
from retrieval.model.plan import Entity as Resolved
from retrieval.model.plan import EntityType as ProposedType
from retrieval.model.polarity import polarity
from retrieval.model.spelling import canonical_words, fold
from retrieval.model.types import LLMProvider, ProviderError

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
# Entity types whose facts come from a source that may not be loaded: without it, the missing fact type.
_NOT_HELD_TYPES: dict[str, FactType] = {"disease": "disease_association"}


class ProposedEntity(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: ProposedType
    text: str = Field(min_length=1, max_length=200)


class ProposedPlan(BaseModel):
    """What the model must return: the schema of `plan_schema()`."""

    model_config = ConfigDict(extra="forbid")
    operation: Operation
    relation: Relation | None
    subjects: list[ProposedEntity] = Field(max_length=8)
    objects: list[ProposedEntity] = Field(max_length=8)
    returns: ProposedType | None
    depth: int | None = Field(ge=1, le=64)
    source: Literal["", "reactome", "kegg"]
    field: GeneRecordField | None
    role: ReactionRole | None = None
    scope: FactType | None


class Rejected(ValueError):
    """Why a proposed plan is not used."""


ASKED_WHEN = ("literature", "not_found")  # the rules' readings the model is asked to improve on


def propose(
    question: str, provider: LLMProvider, genes: GeneLexicon, pathways: PathwayLexicon, rules: Plan
) -> tuple[Plan, list[str]]:
    """The plan to answer with and the warnings to show: the model's plan when it can be used, else the rules'."""
    if rules.kind not in ASKED_WHEN:
        return rules, []
    try:
        raw = provider.propose_plan(question, plan_schema())
    except ProviderError as exc:  # a recorded failure is warned about with the question's other LLM calls
        return rules, [] if exc.recorded else [
            f"the model's reading of the question was unavailable ({exc}); read by the rules"
        ]
    if raw is None:
        return rules, []
    try:
        proposed = read_proposal(question, raw, genes, pathways)
    except Rejected as exc:
        return rules, [] if llm_budget.mark_rejected(f"plan not used: {exc}") else [
            f"the model's plan was not used ({exc}); read by the rules"
        ]
    if proposed.kind == "literature":
        return rules, []
    if proposed.operation == "check":  # the polarity is the sentence's, read the same way for every reader
        proposed = proposed.model_copy(update={"negated": polarity(question).negated})
    return proposed, []


def read_proposal(question: str, raw: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    try:
        match = _FENCE.match(raw)
        proposed = ProposedPlan.model_validate(json.loads(match.group(1) if match else raw))
    except json.JSONDecodeError as exc:
        raise Rejected(f"not JSON: {exc.msg}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise Rejected(
            f"schema violation at {'.'.join(str(p) for p in first['loc']) or 'plan'}: {first['msg']}"
        ) from None
    unloaded = {"disease"} if not len(pathways.diseases) else set()
    held = [e for e in [*proposed.subjects, *proposed.objects] if e.type not in unloaded]
    missing = next(
        (_NOT_HELD_TYPES[e.type] for e in [*proposed.subjects, *proposed.objects] if e.type in unloaded), None
    )
    resolved = {id(e): _resolve(e, question, genes, pathways) for e in held}
    plan = Plan(
        kind="",
        operation=proposed.operation,
        relation=proposed.relation,
        subjects=[resolved[id(e)] for e in proposed.subjects if id(e) in resolved],
        objects=[resolved[id(e)] for e in proposed.objects if id(e) in resolved],
        returns=proposed.returns,
        depth=proposed.depth,
        source=proposed.source,
        field=proposed.field,
        role=proposed.role,
        scope=proposed.scope,
        proposed_by="llm",
        reason="read by the model",
    )
    fact = plan.scope or not_held(plan) or missing
    if fact is not None or plan.operation == "abstain":
        if fact is None:
            raise Rejected("an abstaining plan names no fact type")
        return plan.model_copy(
            update={
                "kind": "scope",
                "operation": "abstain",
                "scope": fact,
                "relation": None,
                "subjects": plan.entities,
                "objects": [],
                "reason": f"asks for {fact.replace('_', ' ')} facts (read by the model)",
            }
        )
    kind = kind_for(plan)
    if kind is None:
        raise Rejected(
            f"no kind answers a {plan.operation} plan of {plan.relation or 'no relation'} over "
            f"{', '.join(e.type for e in plan.entities) or 'nothing'}"
        )
    try:
        return validate(plan.model_copy(update={"kind": kind.name}))
    except PlanError as exc:
        raise Rejected(str(exc)) from None


def _grounded(entity: ProposedEntity, question: str, forms: list[str], found: bool = False) -> None:
    if not (found or any(_named_in(question, text) for text in [entity.text, *forms])):
        raise Rejected(f"it names {entity.type} '{entity.text}', which the question does not")


def _named_in(question: str, text: str) -> bool:
    words = canonical_words(question)
    wanted = canonical_words(text)
    return bool(wanted) and any(words[i : i + len(wanted)] == wanted for i in range(len(words) - len(wanted) + 1))


def _resolve(entity: ProposedEntity, question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Resolved:
    """The entity as Flux holds it; Rejected when Flux does not hold it or the question does not name it (by the
    model's words, its id, or any name Flux knows for it)."""
    if entity.type == "pathway":
        found = pathways.find(entity.text) or [r for r in [pathways.fuzzy(entity.text)] if r]
        if not found:
            raise Rejected(f"it names pathway '{entity.text}', which the index does not hold")
        named = {r.id for r in pathways.find(question)} | {r.id for r in [pathways.fuzzy(question)] if r}
        _grounded(entity, question, [found[0].id], found[0].id in named)
        return Resolved(type="pathway", id=found[0].id, name=found[0].name, source=found[0].source)
    if entity.type == "gene":
        mention = genes.lookup_loose(entity.text)
        gene = mention.gene if mention else genes.by_id(entity.text)
        if gene is None:
            raise Rejected(f"it names gene '{entity.text}', which the index does not hold")
        _grounded(entity, question, [gene.symbol, gene.hgnc_id, *gene.aliases, *gene.previous_symbols])
        return Resolved(type="gene", id=gene.hgnc_id, name=gene.symbol, source="hgnc")
    if entity.type == "reaction":
        reactions = [r for r in pathways.reactions.reactions_in(entity.text) if pathways.reactions.holds(r.id)]
        if not reactions:
            raise Rejected(f"it names reaction '{entity.text}', which the index does not hold")
        _grounded(entity, question, [reactions[0].id, reactions[0].name])
        return Resolved(type="reaction", id=reactions[0].id, name=reactions[0].name, source="reactome")
    if entity.type == "compound":
        _grounded(entity, question, [])
        ids = COMPOUND_ID.findall(entity.text)
        named = pathways.reactions.compounds_in(entity.text)
        if not ids and named:
            return Resolved(type="compound", id=named[0].id, name=named[0].name or named[0].id, source="chebi")
        if not ids:
            raise Rejected(f"compound '{entity.text}' is not a KEGG C-number or ChEBI id")
        kegg, chebi = ids[0]
        compound = f"CHEBI:{chebi}" if chebi else kegg.upper()
        return Resolved(type="compound", id=compound, name=compound, source="chebi" if chebi else "kegg")
    if entity.type == "disease":
        match = pathways.diseases.match(entity.text)
        if match is None:
            raise Rejected(f"it names condition '{entity.text}', which ClinVar's table does not hold")
        _grounded(entity, question, [match.conditions[0].name, match.conditions[0].id])
        return Resolved(type="disease", id=match.conditions[0].id, name=match.conditions[0].name, source="clinvar")
    if entity.type == "category":
        category = next((c for c in CATEGORIES if fold(entity.text).startswith(c[:6])), None)
        if category is None:
            raise Rejected(f"category '{entity.text}' is none of {', '.join(CATEGORIES)}")
        return Resolved(type="category", id=category, name=f"{category} pathway")
    raise Rejected(f"Flux holds no {entity.type} entities to resolve '{entity.text}' against")
