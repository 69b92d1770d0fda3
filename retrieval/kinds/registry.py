"""Every question kind, in one registry: the API, the page, the export, follow-ups and the evals dispatch through
it. A question is read into a plan by the kinds' recognisers in priority order (the first plan wins; nothing
recognised is a literature search); a plan proposed by an LLM goes to the first kind that accepts it.

To add a kind: a module in this package that builds a `QuestionKind` (base.py), listed in KINDS below.
"""

from __future__ import annotations

from retrieval.answering.typed_answer import TYPED_CONFIDENCE, compose
from retrieval.kinds import (
    association_absent,
    association_check,
    check,
    compare,
    compound_pathways,
    condition_enrichment,
    condition_genes,
    connection,
    counterpart,
    difference,
    entity_reactions,
    gene_conditions,
    gene_facts,
    gene_pathways,
    hierarchy,
    literature,
    members,
    not_found,
    overview,
    pathway_reactions,
    pubmed_search,
    reaction_participants,
    reaction_scope,
    reaction_walk,
    release_changes,
    scope,
    shared_genes,
)
from retrieval.kinds.base import QuestionKind, Referents
from retrieval.model.answer import FinalAnswer
from retrieval.model.answer_data import AnswerData
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import Plan, validate
from retrieval.model.polarity import polarity
from retrieval.model.types import Evidence
from retrieval.question.choices import Choice, multiple_choice
from retrieval.question.followup import TurnContext
from retrieval.question.reading import Read, is_yes_no

KINDS: tuple[QuestionKind, ...] = (
    members.KIND,
    gene_pathways.KIND,
    compound_pathways.KIND,
    hierarchy.KIND,
    counterpart.KIND,
    shared_genes.KIND,
    difference.KIND,
    compare.KIND,
    overview.KIND,
    gene_facts.KIND,
    release_changes.KIND,
    check.KIND,
    connection.KIND,
    pathway_reactions.KIND,
    reaction_participants.KIND,
    entity_reactions.KIND,
    reaction_walk.KIND,
    reaction_scope.KIND,
    association_check.KIND,
    association_absent.KIND,
    condition_genes.KIND,
    gene_conditions.KIND,
    condition_enrichment.KIND,
    pubmed_search.KIND,
    scope.KIND,
    not_found.KIND,
    literature.KIND,
)
BY_NAME: dict[str, QuestionKind] = {k.name: k for k in KINDS}
RECOGNISERS = sorted(
    ((priority, recognise) for k in KINDS for priority, recognise in k.recognisers), key=lambda item: item[0]
)
TYPED_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS if k.facts is not None)


def kind(name: str) -> QuestionKind:
    return BY_NAME[name]


def is_typed(name: str) -> bool:
    return BY_NAME[name].facts is not None if name in BY_NAME else False


def read_question(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    """The question as a plan: the first kind whose recogniser reads it, else a literature search. A yes/no
    question or statement that denies its relation is read without the negation, and its check plan keeps it
    (`negated`: the verdict answers the sentence as written); one that only leans ("Isn't X in Y?") is read as the
    positive question it asks. A multiple-choice question is read option by option (`read_choice`)."""
    choice = multiple_choice(question)
    if choice is not None and (plan := read_choice(question, choice, genes, pathways)) is not None:
        return plan
    return _read_one(question, genes, pathways)


def read_choice(question: str, choice: Choice, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan | None:
    """Each option asked as its own yes/no question. Checks that differ only in the option join into one check
    (`choice`); an option the index does not hold is named (not found); checks that do not join (gene-condition
    pairs, which Flux answers one at a time; options read as different relations) go to the literature rather than
    to one option's answer. None: not a choice between checks (the question is read as a whole)."""
    plans = [_read_one(choice.asked(option), genes, pathways) for option in choice.options]
    checks = [p for p in plans if p.operation == "check"]
    absent = [p for p in plans if p.kind == "not_found"]
    if len(checks) + len(absent) < len(plans):
        return None
    if absent:
        return absent[0]
    joined = None if any(p.kind == "association_check" for p in checks) else _joined(checks)
    return joined or literature.plan_for(Read.of(question, genes, pathways)).model_copy(
        update={"reason": f"a choice among {len(plans)} checks that are not one relation over one side"}
    )


def _joined(checks: list[Plan]) -> Plan | None:
    first = checks[0]
    same = {(p.kind, p.relation, p.negated, p.depth) for p in checks}
    if len(same) > 1:
        return None
    ids = [([e.id for e in p.subjects], [e.id for e in p.objects]) for p in checks]
    if all(objects == ids[0][1] for _, objects in ids):
        side = "subjects"
    elif all(subjects == ids[0][0] for subjects, _ in ids):
        side = "objects"
    else:
        return None
    options = list({e.id: e for p in checks for e in getattr(p, side)}.values())
    return validate(first.model_copy(update={side: options, "choice": True, "reason": f"which of: {first.reason}"}))


def _read_one(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    sentence = polarity(question)
    if sentence.changed and is_yes_no(sentence.positive):
        plan = read_as_written(sentence.positive, genes, pathways)
        if plan.operation == "check":
            return plan.model_copy(update={"negated": sentence.negated})
    return read_as_written(question, genes, pathways)


def read_as_written(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    """The recognisers alone on the words as written (a negation included)."""
    read = Read.of(question, genes, pathways)
    for _, recognise in RECOGNISERS:
        plan = recognise(read)
        if plan is not None:
            return validate(
                plan.model_copy(update={"corrections": read.corrections, "counted": plan.counted or read.count})
            )
    return literature.plan_for(read).model_copy(update={"corrections": read.corrections})


def kind_for(plan: Plan) -> QuestionKind | None:
    """The kind that executes a proposed plan (None: no kind answers a plan of this shape)."""
    return next((k for k in KINDS if k.accepts(plan)), None)


def turn_context(asked_as: str, answer: FinalAnswer) -> TurnContext:
    """What a later turn may refer back to, from this answer's facts."""
    data = answer.data
    referents = BY_NAME[data.kind].refers_to(data) if data is not None and data.kind in BY_NAME else Referents()
    return TurnContext(asked_as, answer.kind, referents.pathways, referents.genes)


def abstains(data: AnswerData) -> bool:
    """Whether the answer says what Flux does not hold (confidence 0): its kind always does, or these facts do."""
    facts_kind = BY_NAME[data.kind]
    return facts_kind.abstains or facts_kind.holds_nothing(data)


def cacheable(answer: FinalAnswer, live: bool) -> bool:
    """Whether an answer may be served again from the answer cache: not one read live at question time (a
    literature-tools answer, or one read from PubMed's abstracts with `live` on)."""
    if live and answer.plan is not None and answer.plan.literature is not None:
        return False
    data = answer.data
    return data is None or data.kind not in BY_NAME or not BY_NAME[data.kind].read_live(data)


def compose_answer(data: AnswerData) -> tuple[str, list[Evidence]]:
    """The generator reply (JSON) a typed answer's facts make, and the graph evidence it cites."""
    facts_kind = BY_NAME[data.kind]
    assert facts_kind.statements is not None, f"{data.kind} has no statements"
    confidence = 0.0 if abstains(data) else TYPED_CONFIDENCE
    return compose(facts_kind.statements(data), data.kind, facts_kind.appendix(data), confidence)
