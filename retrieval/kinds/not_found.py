"""`not_found`: the question asks about a pathway, gene, identifier or compound Flux does not hold. The answer says
so and names the closest names it does hold — never another pathway's facts as the one asked.

Recognised early for ids of other species or of the wrong shape (R-MMU-…, map00195, hsa0411) and pathways of
other organisms ("MAPK signaling pathway - plant"); late for gene-shaped names no table holds and for a count
question that names nothing. Other kinds build this plan through `not_found_plan` when what they need is missing.
"""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import SOURCE_LABEL
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, table
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import NodeRef, NotFoundData
from retrieval.model.pathways import PathwayRef
from retrieval.model.plan import ABSENT_WHAT, Absent, Plan
from retrieval.model.spelling import fold
from retrieval.question.gene_questions import unknown_gene_tokens
from retrieval.question.reading import (
    GENE_PATHWAYS,
    MEMBERS,
    PATHWAY_WORD,
    Read,
    asked_phrase,
    pathway_entities,
    single_source,
)

# Pathway ids of other species or KEGG reference maps (map00195, ath04075, R-MMU-…): never in the human index.
# Also ids of the wrong shape (hsa0411): written as an id, so never read as a name.
_FOREIGN_ID = re.compile(r"(?<![\w-])((?!ensg)[a-z]{3,4}\d{3,}|[Rr]-[A-Za-z]{3}-\d+)(?![\w-])")
_SPECIES = re.compile(
    r"\b(plants?|yeasts?|bacteri(a|al|um)|fung(i|al|us)|arabidopsis|caulobacter|e\. ?coli|"
    r"escherichia|drosophila|zebrafish|mouse|mice|murine|rat|c\. ?elegans|archaea)\b",
    re.I,
)


def not_found_plan(
    read: Read, what: ABSENT_WHAT, needed_for: str, reason: str, asked: str = "", found: list[PathwayRef] | None = None
) -> Plan:
    rest = read.rest(found)
    closest: list[PathwayRef] = []
    if what == "pathway":  # the database named first, then any
        closest = read.pathways.suggest(rest, source=single_source(read.question)) or read.pathways.suggest(rest)
    hints = ", ".join(f"'{r.name}' ({r.id})" for r in closest)
    absent = Absent(
        what=what, asked=asked or asked_phrase(rest), needed_for=needed_for, closest=pathway_entities(closest)
    )
    return Plan(
        kind="not_found",
        operation="abstain",
        absent=absent,
        subjects=pathway_entities(found or []),
        reason=reason + (f"; closest names: {hints}" if hints else ""),
    )


def unresolved(read: Read, kind: str, needed: str, found: list[PathwayRef] | None = None) -> Plan:
    """A typed question whose pathway the index does not hold: not found, with the closest names to the part of
    the question no name matched."""
    have = f"found only {', '.join(f'{r.id} {r.name!r}' for r in found)}; " if found else ""
    reason = f"a {kind.replace('_', ' ')} question needs {needed}: {have}no other pathway named in the index"
    return not_found_plan(read, "pathway", kind, reason, found=found)


def _foreign_ids(read: Read) -> Plan | None:
    unknown = [
        i
        for i in _FOREIGN_ID.findall(read.question)
        if (i.upper() if i[:2].upper() == "R-" else i) not in read.pathways.by_id
        and not read.pathways.reactions.holds(i.upper())
        and not read.genes.holds_symbol(i)  # "gpr132", "defb114": a gene symbol written in lower case
    ]
    if not unknown:
        return None
    return not_found_plan(
        read,
        "identifier",
        "",
        f"pathway id {', '.join(unknown)} is not in the human index (a "
        "human Reactome id is R-HSA-<digits>, a human KEGG one hsa<5 digits>)",
        asked=", ".join(unknown),
    )


def _other_species(read: Read) -> Plan | None:
    """ "MAPK signaling pathway - plant", "Cell cycle - yeast": a pathway of another organism, which the human
    index does not hold even where a human pathway has the same name."""
    named = _SPECIES.search(read.question)
    if not named or not (PATHWAY_WORD.search(read.question) or read.found or MEMBERS.search(read.question)):
        return None
    if read.found and not PATHWAY_WORD.search(read.question) and not _next_to_a_name(read, named.group(0)):
        return None  # "…lace plant leaves during programmed cell death?": the organism is not the pathway's
    return not_found_plan(
        read,
        "pathway",
        "",
        f"Flux holds human pathways; the question asks about {named.group(0)}",
        asked=asked_phrase(fold(read.question)),
    )


def _next_to_a_name(read: Read, species: str) -> bool:
    """The organism word is at most one word away from a pathway name the question holds ("yeast cell cycle",
    "cell cycle - yeast", "cell cycle in yeast")."""
    words, kind = fold(read.question).split(), fold(species).split()[0]
    at = [i for i, w in enumerate(words) if w == kind]
    for ref in read.found:
        name = fold(ref.name).split()
        for start in (i for i in range(len(words) - len(name) + 1) if words[i : i + len(name)] == name):
            end = start + len(name)
            if any(start - 2 <= i < start or end <= i <= end + 1 for i in at):
                return True
    return False


def _unknown_gene(read: Read) -> Plan | None:
    """ "Which pathways contain ZZZ9?": a gene-shaped name the index does not hold."""
    if read.named_genes or read.found or not GENE_PATHWAYS.search(read.question):
        return None
    unknown = unknown_gene_tokens(read.question, read.genes)
    if not unknown:
        return None
    return not_found_plan(
        read, "gene", "gene_pathways", f"no gene {', '.join(unknown)} in the index", asked=", ".join(unknown)
    )


_LITERATURE = re.compile(
    r"\b(articles?|papers?|publications?|studies|study|literature|pubmed|citations?|"
    r"abstracts?|preprints?|reviews?)\b",
    re.I,
)


def _count_of_nothing(read: Read) -> Plan | None:
    """ "How many are there?": a count that names nothing Flux holds (a count of papers is the literature's)."""
    if (
        not read.count
        or read.mentions
        or _LITERATURE.search(read.question)
        or not (MEMBERS.search(read.question) or PATHWAY_WORD.search(read.question))
    ):
        return None
    return not_found_plan(read, "pathway", "count", "a count question needs a pathway, gene or compound")


def facts(plan: Plan, stores: Stores) -> NotFoundData:
    absent = plan.absent or Absent(what="pathway", asked="")
    return NotFoundData(
        asked=absent.asked,
        what=absent.what,
        needed_for=absent.needed_for,
        closest=[NodeRef(id=e.id, name=e.name, source=e.source) for e in absent.closest],
    )


def statements(data: NotFoundData) -> list[Statement]:
    asked = f" '{data.asked}'" if data.asked else ""
    head = f"The index holds no {data.what}{asked}, so Flux does not answer this about another one."
    if data.what == "name":
        head = (
            f"The index holds nothing named{asked} (it knows pathways and genes by name or id, compounds by "
            "their KEGG or ChEBI id, conditions by their ClinVar name), so Flux does not answer this about "
            "something else."
        )
    if not data.closest:
        return [(head, [])]
    names = ", ".join(f'{SOURCE_LABEL.get(n.source, n.source)} {n.id} "{n.name}"' for n in data.closest)
    return [(head, []), (f"The closest names it holds: {names}.", [n.id for n in data.closest])]


def data_table(data: NotFoundData) -> DataTable | None:
    if not data.closest:
        return None
    return table(
        f"Not in the index: {data.asked}; closest names",
        ["id", "name", "source"],
        [[p.id, p.name, p.source] for p in data.closest],
        of="pathway",
    )


def refers_to(data: NotFoundData) -> Referents:
    return Referents()


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    return answer.kind == "not_found"


KIND = QuestionKind(
    name="not_found",
    recognisers=((10, _foreign_ids), (20, _other_species), (130, _unknown_gene), (900, _count_of_nothing)),
    accepts=lambda plan: plan.operation == "abstain" and plan.absent is not None,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
    needs_graph=False,
    abstains=True,
)
