"""`condition_genes`: the genes ClinVar links a condition to — `? associated_with D returns gene` — the condition
read by name (case, punctuation and Roman numerals folded, typos tolerated); when the words name several
conditions equally well, the answer lists the candidates instead of choosing one. From Postgres."""

from __future__ import annotations

from retrieval.answering.typed_answer import listing
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.members import count_stated
from retrieval.kinds.not_found import not_found_plan
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.disease_data import ConditionGenesData, ConditionRef
from retrieval.model.diseases import normalise
from retrieval.model.plan import Plan
from retrieval.model.spelling import fold
from retrieval.question.disease_questions import (
    ASKED_CONDITION,
    ASKS_GENES,
    CONDITION_WORD,
    ENRICHMENT,
    LINK_WORD,
    condition_entities,
    condition_of,
    gene_entities_named,
    holds_conditions,
)
from retrieval.question.reading import Read, is_yes_no
from retrieval.retrievers.disease_facts import DiseaseReader

LISTED = 60


def recognise(read: Read) -> Plan | None:
    question = read.as_written or read.question
    if not holds_conditions(read) or not ASKS_GENES.search(question) or ENRICHMENT.search(question):
        return None
    if is_yes_no(question) or gene_entities_named(read):
        return None
    match = condition_of(read)
    if match is None:
        if read.found or not (LINK_WORD.search(question) and CONDITION_WORD.search(question)):
            return None
        named = ASKED_CONDITION.search(question)
        return not_found_plan(
            read, "name", "condition_genes", "no ClinVar condition of that name", asked=named.group(1) if named else ""
        )
    # "Which genes are in KEGG Alzheimer disease?" names a pathway; "…associated with Alzheimer disease?" a condition.
    if any(match.asked in fold(p.name) for p in read.found) and not LINK_WORD.search(question):
        return None
    return Plan(
        kind="condition_genes",
        operation="count" if read.count else "list",
        relation="associated_with",
        objects=condition_entities(match),
        returns="gene",
        reason=f"genes ClinVar links to {match.asked!r}" + ("" if match.exact else " (closest name)"),
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation in ("list", "count")
        and plan.relation == "associated_with"
        and plan.returns == "gene"
        and bool(plan.objects)
        and all(e.type == "disease" for e in plan.objects)
    )


def facts(plan: Plan, stores: Stores) -> ConditionGenesData:
    assert stores.engine is not None
    reader = DiseaseReader(stores.engine)
    conditions = [c for c in (reader.condition(e.id) for e in plan.objects) if c is not None]
    asked = plan.objects[0].asked_as or plan.objects[0].name
    named = any(normalise(e.name) == asked for e in plan.objects) or not plan.objects[0].asked_as
    synonym = not named and any(asked in {normalise(s) for s in reader.synonyms(e.id)} for e in plan.objects)
    data = ConditionGenesData(
        asked=asked,
        exact=named or synonym,
        synonym=synonym,
        conditions=conditions,
        release=reader.release(),
        count=plan.count,
    )
    if len(conditions) == 1:
        data.associations = reader.of_conditions([conditions[0].id])
    return data


def named(c: ConditionRef) -> str:
    return f"{c.name} [{c.id}]"


def statements(data: ConditionGenesData) -> list[Statement]:
    if len(data.conditions) > 1:
        return [
            (
                f"'{data.asked}' names {len(data.conditions)} ClinVar conditions: "
                f"{listing([named(c) for c in data.conditions], 20)}. Ask about one of them (by name or MedGen id) "
                "for its genes.",
                [c.id for c in data.conditions[:20]],
            )
        ]
    if not data.conditions:
        return [(f"Flux holds no ClinVar condition named '{data.asked}'.", [])]
    c = data.conditions[0]
    closest = (
        f" (MONDO's '{data.asked}')" if data.synonym else "" if data.exact else f" (the closest name to '{data.asked}')"
    )
    if not data.associations:
        return [(f"ClinVar (release {data.release}) links no gene to {named(c)}{closest}.", [c.id])]
    symbols = sorted({a.gene.symbol for a in data.associations})
    return [
        (
            f"ClinVar (release {data.release}) links {len(symbols)} genes to {named(c)}{closest}: "
            f"{listing(symbols, LISTED)}.",
            [c.id, *sorted({a.gene.id for a in data.associations})[:LISTED]],
        )
    ]


def data_table(data: ConditionGenesData) -> DataTable:
    if len(data.conditions) != 1:
        return table(
            f"ClinVar conditions named '{data.asked}' ({len(data.conditions)})",
            ["MedGen", "condition"],
            [[c.id, c.name] for c in data.conditions],
        )
    return table(
        f"Genes ClinVar links to {data.conditions[0].name} ({len(data.associations)})",
        ["symbol", "HGNC id", "sources", "relation", "last updated"],
        [[a.gene.symbol, a.gene.id, ", ".join(a.sources), a.relation, a.last_updated] for a in data.associations],
        of="gene",
    )


def refers_to(data: ConditionGenesData) -> Referents:
    return Referents(genes=sorted({a.gene.symbol for a in data.associations}))


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    if not isinstance(data, ConditionGenesData):
        return False
    if expected.get("candidates"):
        return {c.id for c in data.conditions} == expected_set(expected, "candidates")
    return (
        [c.id for c in data.conditions] == sorted(expected_set(expected))
        and {a.gene.symbol for a in data.associations} == expected_set(expected, "genes")
        and count_stated(answer, expected, len({a.gene.symbol for a in data.associations}))
    )


KIND = QuestionKind(
    name="condition_genes",
    recognisers=((28, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
    needs_graph=False,
    holds_nothing=lambda data: not data.conditions or (len(data.conditions) == 1 and not data.associations),
)
