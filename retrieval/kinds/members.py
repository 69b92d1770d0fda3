"""`members`: the genes (or compounds) of a pathway — `? member_of P`, listed or counted, optionally only those
whose name contains a word ("Which genes of glycolysis are kinases?"). Asked of the other database ("the KEGG
glucose metabolism pathway" where only Reactome has that name), it answers for the counterpart the resolution
found and says so."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing, node_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.not_found import unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import MembersData
from retrieval.model.pathways import PathwayRef
from retrieval.model.plan import Plan
from retrieval.model.spelling import canonical_words
from retrieval.question.gene_questions import unknown_gene_tokens
from retrieval.question.reading import MEMBERS, PATHWAY_WORD, Read, pathway_entity, single_source
from retrieval.retrievers.graph_facts import node

_ASKS = re.compile(
    r"\b(which|what|list|name|show|how many|how large|how big|number of|give|enumerate|count)\b|"
    r"^\s*(genes?|members?)\b",
    re.I,
)
_COMPOUNDS = re.compile(r"\b(compounds?|metabolites?)\b", re.I)
# "Which genes of glycolysis are kinases?": a filter on the member genes' names.
_NAME_FILTER = re.compile(r"\b(?:are|is)\s+(?:an?\s+)?([A-Za-z][A-Za-z-]{3,})\s*\??\s*$", re.I)


def recognise(read: Read) -> Plan | None:
    question = read.question
    if not (MEMBERS.search(question) and _ASKS.search(question)):
        return None
    found = read.found or read.fuzzy(1)
    if not found:
        # Without "pathway" or a database named, "Which genes cause X?" may be a literature question.
        return unresolved(read, "members", "a pathway") if PATHWAY_WORD.search(question) else None
    if unknown_gene_tokens(_without_name(question, found[0]), read.genes):
        return None  # "What does HIF1A do to glycolytic genes?" asks about a gene the index does not hold
    wanted = _NAME_FILTER.search(question)
    name_filter = wanted.group(1).lower().removesuffix("s") if wanted else ""
    # "the KEGG glucose metabolism pathway" where only Reactome has that name: its KEGG counterpart.
    source = single_source(question)
    other = source if source and found[0].source != source else ""
    compounds = bool(_COMPOUNDS.search(question))
    return Plan(
        kind="members",
        operation="count" if read.count else "list",
        relation="member_of",
        objects=[pathway_entity(found[0])],
        returns="compound" if compounds else "gene",
        name_filter=name_filter,
        source=other,
        reason=f"members of {found[0].id}" + (f" named *{name_filter}*" if name_filter else ""),
    )


def _without_name(question: str, ref: PathwayRef) -> str:
    """The question as written, without the words of the pathway's name and id (they may look like genes: "PIP3",
    "AKT")."""
    named = set(canonical_words(f"{ref.name} {ref.id}"))
    return " ".join(w for w in re.split(r"[\s/]+", question) if not set(canonical_words(w)) <= named)


def accepts(plan: Plan) -> bool:
    return (
        plan.operation in ("list", "count")
        and plan.relation == "member_of"
        and not plan.subjects
        and plan.returns in ("gene", "compound")
        and len(plan.objects) == 1
    )


def facts(plan: Plan, stores: Stores) -> MembersData:
    pathway = plan.objects[0]
    asked_about = None
    if plan.source and pathway.source != plan.source:  # asked of the other database: the resolved counterpart
        counterpart = stores.graph.counterpart_of(pathway.id, plan.source)
        if counterpart is not None:
            asked_about, pathway = node(pathway), counterpart
    genes, found_compounds = stores.graph.members([pathway.id]).get(pathway.id, ([], []))
    compounds = found_compounds if plan.returns == "compound" else []  # one query for both
    total = len(genes)
    if plan.name_filter:
        genes = [g for g in genes if plan.name_filter in g.name.lower()]
    return MembersData(
        pathway=node(pathway),
        genes=genes,
        total=total,
        compounds=compounds,
        name_filter=plan.name_filter,
        counterpart_of=asked_about,
        count=plan.count,
    )


def statements(data: MembersData) -> list[Statement]:
    p = data.pathway
    out = (
        [(f"{node_name(p)} has {len(data.compounds)} compounds: {listing(data.compounds)}.", [p.id])]
        if data.compounds
        else []
    )
    if data.counterpart_of is not None:
        origin = data.counterpart_of
        out.insert(
            0,
            (
                f"{node_name(p)} is the closest counterpart of {node_name(origin)} that the resolution found.",
                [origin.id, p.id],
            ),
        )
    if data.name_filter:
        listed = f": {listing([g.symbol for g in data.genes])}" if data.genes else ""
        return [
            *out,
            (
                f"Of the {data.total} member genes of {node_name(p)}, {len(data.genes)} have "
                f"'{data.name_filter}' in their name{listed}.",
                [p.id],
            ),
        ]
    if not data.genes:
        return [*out, (f"{node_name(p)} has no member genes in the graph.", [p.id])]
    return [*out, (f"{node_name(p)} has {data.total} member genes: {listing([g.symbol for g in data.genes])}.", [p.id])]


def data_table(data: MembersData) -> DataTable:
    name = data.pathway.name or data.pathway.id
    if data.compounds:
        return table(
            f"Compounds of {name} ({len(data.compounds)})",
            ["compound id"],
            [[c] for c in data.compounds],
            of="compound",
        )
    return table(
        f"Genes of {name} ({len(data.genes)} of {data.total})",
        ["symbol", "HGNC id", "name"],
        [[g.symbol, g.id, g.name] for g in data.genes],
        of="gene",
    )


def refers_to(data: MembersData) -> Referents:
    return Referents(pathways=[data.pathway.id])


def count_stated(answer: FinalAnswer, expected: Expected, listed: int) -> bool:
    """A count question's number, equal to the list and stated in the prose."""
    if "count" not in expected:
        return True
    number = int(expected["count"])
    return listed == number and re.search(rf"(?<![\w.]){number}(?![\w.])", answer.answer) is not None


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return (
        isinstance(data, MembersData)
        and data.pathway.id in expected_set(expected)
        and {g.symbol for g in data.genes} == expected_set(expected, "genes")
        and count_stated(answer, expected, data.total)
    )


KIND = QuestionKind(
    name="members",
    recognisers=((150, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
