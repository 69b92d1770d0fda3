"""Follow-up questions: resolve what "those", "its" or "what about in KEGG?" refer to from the previous turn.

Rule-based entity carry-over (no LLM needed): a question that names no pathway or gene of its own and either
starts like a follow-up ("and …", "what about …") or refers back ("those", "its", "them") is rewritten with the
previous turn's entities — its pathway ids, or its genes — or, for "what about in KEGG?", as the previous question
asked of the other database. Whatever is rewritten is shown to the user (`asked_as`). Which entities a turn
leaves to refer to is its kind's to say (retrieval/kinds/registry.py, `turn_context`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon

_OPENING = re.compile(r"^\s*(and|also|what about|how about|and what about|then)\b", re.I)
_BACK_REFERENCE = re.compile(
    r"\b(those|these|them|they|its|it|their|this pathway|that pathway|the two|both of them|"
    r"the pair|this gene|that gene)\b",
    re.I,
)
_LIST_REFERENCE = re.compile(r"\b(of|among) (those|these|them)\b|\b(those|these|them)\b", re.I)
_ITS = re.compile(r"\b(its|their)\b", re.I)
_IT = re.compile(
    r"\b(it|this pathway|that pathway|they|them|the two|both of them|the pair|this gene|that gene)\b", re.I
)
_DATABASE = re.compile(r"\b(kegg|reactome)\b", re.I)
_OTHER = {"kegg": "Reactome", "reactome": "KEGG"}


@dataclass(frozen=True)
class TurnContext:
    """What a later turn may refer to: the question as it was answered and the entities it was about."""

    asked_as: str
    kind: str
    pathways: list[str] = field(default_factory=list)  # ids
    genes: list[str] = field(default_factory=list)  # symbols

    def as_json(self) -> dict[str, object]:
        return {"asked_as": self.asked_as, "kind": self.kind, "pathways": self.pathways, "genes": self.genes}


def _names_entities(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> bool:
    return bool(genes.find(question) or pathways.find(question))


def is_follow_up(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> bool:
    if _names_entities(question, genes, pathways):
        return False
    return bool(_OPENING.search(question) or _BACK_REFERENCE.search(question))


def resolve(
    question: str, previous: TurnContext | None, genes: GeneLexicon, pathways: PathwayLexicon
) -> tuple[str, str | None]:
    """(the question to answer, a warning or None)."""
    if not is_follow_up(question, genes, pathways):
        return question, None
    if previous is None:
        return question, "this looks like a follow-up but there is no previous turn; answered as a standalone question"
    body = _OPENING.sub("", question).strip(" ,?")
    database = _DATABASE.search(body)
    if database and len(body.split()) <= 4 and previous.pathways:
        # "what about in KEGG?": the previous question, asked of the other database.
        swapped = _swap_database(previous.asked_as, database.group(1).lower())
        return swapped, None
    subject = " and ".join(previous.pathways) if previous.pathways else " and ".join(previous.genes)
    if not subject:
        return question, "could not tell what this follow-up refers to; answered as a standalone question"
    if previous.kind == "members" and _LIST_REFERENCE.search(body):
        # "which of those are kinases?" → the genes of the same pathway, filtered.
        rewritten = _LIST_REFERENCE.sub(f"genes of {subject}", body, count=1)
        return _question(rewritten), None
    rewritten = _ITS.sub(f"{subject}'s", body, count=1)
    if rewritten == body:
        rewritten = _IT.sub(subject, body, count=1)
    if rewritten == body:
        rewritten = f"{body} of {subject}"
    return _question(rewritten), None


def _swap_database(question: str, wanted: str) -> str:
    named = _DATABASE.findall(question)
    label = "KEGG" if wanted == "kegg" else "Reactome"
    if not named:
        return f"{question.rstrip(' ?')} in {label}?"
    return _DATABASE.sub(lambda m: label if m.group(1).lower() != wanted else _OTHER[wanted], question)


def _question(text: str) -> str:
    text = text.strip()
    text = text[0].upper() + text[1:] if text else text
    return text if text.endswith("?") else f"{text}?"
