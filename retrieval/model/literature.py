"""A literature request as a question asks it, and what a PubMed search made of it.

`LiteratureRequest` is what the question reader finds (question/literature_questions.py): the operation (a count,
the newest or most relevant articles, facts about given PMIDs, the articles citing or similar to them), the topic
and its concepts, and the constraints a translation must keep: a field (title, title/abstract), a publication-date
range, publication types and a population. `SearchTrail` is how the search went: each Entrez term tried, NCBI's
translation and count for it, what the translation check found and what the next attempt changed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

LiteratureOperation = Literal["count", "articles", "facts", "links", "summary"]
LinkKind = Literal["cited_by", "similar", "references"]
SearchField = Literal["", "title", "title/abstract"]
Sort = Literal["pub_date", "relevance"]
MAX_ARTICLES = 20  # articles listed in one answer
MAX_FACT_IDS = 200  # PMIDs one question may ask facts of (more is a list no answer shows)
SUMMARY_ABSTRACTS = 8  # abstracts read live for "what does the literature say about X"


class LiteratureRequest(BaseModel):
    """What a literature question asks of PubMed, before any call."""

    model_config = {"frozen": True}

    operation: LiteratureOperation
    asked: str = Field(default="", description="The question as written (the strategy memory's key).")
    topic: str = Field(default="", description="The topic as the question words it.")
    concepts: list[str] = Field(default_factory=list, description="The topic's concepts, each its own AND group.")
    quoted: list[str] = Field(default_factory=list, description="Phrases the question put in quotes: searched as is.")
    field: SearchField = ""
    mindate: str | None = None  # YYYY or YYYY/MM/DD, with maxdate
    maxdate: str | None = None
    publication_types: list[str] = Field(default_factory=list, description="PubMed publication types, e.g. Review.")
    population: list[str] = Field(default_factory=list, description="MeSH headings of the population, e.g. child.")
    sort: Sort = "relevance"
    pmids: list[str] = Field(default_factory=list)
    link: LinkKind | None = None
    limit: int = Field(default=10, ge=1, le=MAX_ARTICLES)

    def describe(self) -> str:
        """The request in a line: `count "CRISPR" in the title, 2023..2023`."""
        parts: list[str] = [self.operation]
        if self.pmids:
            parts.append(
                ("PMID " if len(self.pmids) == 1 else "PMIDs ")
                + ", ".join(self.pmids[:5])
                + (f" and {len(self.pmids) - 5} more" if len(self.pmids) > 5 else "")
            )
        if self.link:
            parts.append(self.link.replace("_", " "))
        if self.concepts:
            parts.append(" AND ".join(f'"{c}"' for c in self.concepts))
        if self.field:
            parts.append(f"in the {self.field}")
        if self.mindate:
            parts.append(f"published {self.mindate}..{self.maxdate}")
        if self.publication_types:
            parts.append("type " + " or ".join(self.publication_types))
        if self.population:
            parts.append("population " + ", ".join(self.population))
        return " ".join(parts)


ProblemCode = Literal[
    "phrase_swallowed",
    "unmapped_abbreviation",
    "wrong_sense",
    "concept_missing",
    "date_missing",
    "field_missing",
    "publication_type_missing",
    "population_missing",
    "no_records",
    "too_broad",
]


class TranslationProblem(BaseModel):
    """One way NCBI's translation departs from the request."""

    code: ProblemCode
    concept: str = ""
    message: str


class SearchAttempt(BaseModel):
    """One ESearch: the term sent, NCBI's translation and count, the check's findings and why it was sent."""

    term: str
    translation: str = ""
    count: int | None = None
    ids: list[str] = Field(default_factory=list)
    problems: list[TranslationProblem] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list, description="What this attempt changed, and why.")
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and not self.problems


class SearchTrail(BaseModel):
    """Every attempt of one search, the strategy reused (if any) and the requests it cost."""

    attempts: list[SearchAttempt] = Field(default_factory=list)
    reused_strategy: str = Field(default="", description="The stored term a rephrased question reused.")
    requests: int = 0

    @property
    def final(self) -> SearchAttempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def passed(self) -> bool:
        return self.final is not None and self.final.passed

    @property
    def refinements(self) -> int:
        return max(0, len(self.attempts) - 1)


class Article(BaseModel):
    """One PubMed record as an answer shows it (from ESummary and EFetch live, from the documents table offline)."""

    pmid: str
    title: str = ""
    authors: list[str] = Field(default_factory=list)
    journal: str = ""
    date: str = ""
    mesh: list[str] = Field(default_factory=list)
    publication_types: list[str] = Field(default_factory=list)

    def byline(self) -> str:
        authors = ", ".join(self.authors[:3]) + (" et al." if len(self.authors) > 3 else "")
        parts = [p for p in (authors, self.journal, self.date) if p]
        return f'"{self.title}"' + (f" ({'; '.join(parts)})" if parts else "")


class PubMedSearchData(BaseModel):
    """What a literature-tools question found: live from PubMed (with the search trail), or — with live search
    off — what Flux's own index holds, labelled as the index's."""

    kind: Literal["pubmed_search"] = "pubmed_search"
    request: LiteratureRequest
    source_mode: str
    live: bool
    trail: SearchTrail | None = None
    count: int | None = Field(default=None, description="PubMed's count: only for a translation that passed.")
    articles: list[Article] = Field(default_factory=list)
    linked_total: int | None = None
    missing: list[str] = Field(default_factory=list, description="PMIDs PubMed (or the index) does not hold.")
    error: str = ""
    corrected: str = Field(default="", description="The call made instead of a refused one, and why.")
    indexed_abstracts: int = 0
    indexed_count: int | None = None

    @property
    def answered(self) -> bool:
        """Whether the facts answer what was asked (live and checked, or article facts the index holds)."""
        if self.error:
            return False
        if self.live:
            if self.request.operation == "facts":
                return bool(self.articles)
            if self.request.operation == "links":
                return self.linked_total is not None
            return self.trail is not None and self.trail.passed
        return self.request.operation == "facts" and bool(self.articles)
