"""Literature-tool questions read into a LiteratureRequest: counts of PubMed articles, the newest or most relevant
articles on a topic, facts about given PMIDs, and the articles citing or similar to them.

A question is read as one only when it asks about articles as such ("how many PubMed articles", "the newest papers
on", "which papers cite PMID …"); a question about a pathway or a gene that merely mentions papers stays with the
kinds that answer it. The topic keeps the question's own words; constraints (a field, a date range, publication
types, a population) are taken out of it and kept apart, so the translation check can see whether NCBI kept them.
"""

from __future__ import annotations

import datetime as dt
import re

from retrieval.model.literature import SUMMARY_ABSTRACTS, LinkKind, LiteratureRequest, SearchField, Sort
from retrieval.model.pubmed_vocabulary import POPULATIONS, PUBLICATION_TYPES

_NOUN = (
    r"(?:pubmed\s+)?(?:articles?|papers?|publications?|studies|study|records?|reviews?|trials?|reports?|"
    r"meta-analyses|preprints?|literature)"
)
COUNT = re.compile(rf"\b(?:how\s+many|number\s+of|count\s+(?:of\s+)?(?:the\s+)?)\s*(?:\w+\s+){{0,2}}?{_NOUN}\b", re.I)
NEWEST = re.compile(
    rf"\b(newest|latest|most\s+recent|recent|most\s+relevant|top(?:\s+\d+)?|key)\s+"
    rf"(?:\w+\s+){{0,2}}?{_NOUN}\b",
    re.I,
)
PMID = re.compile(r"\bPMIDs?\s*:?\s*((?:\d{1,9}(?:\s*(?:,|and|or)\s*)?)+)", re.I)
CITE = re.compile(r"\b(cit(?:e|es|ing|ed\s+by|ations?\s+(?:of|to))|reference[sd]?\s+by)\b", re.I)
REFERENCES = re.compile(r"\b(?:references\s+of|what\s+does\s+pmid\s*:?\s*\d+\s+cite|cited\s+in\s+pmid)\b", re.I)
SIMILAR = re.compile(r"\b(similar|related)\s+(?:to\s+)?(?:\w+\s+)?(?:articles?|papers?|to)\b|\blike\s+pmid", re.I)
FACTS = re.compile(
    r"\b(title|authors?|who\s+wrote|journal|published|publication\s+date|when|mesh|about|what\s+is|"
    r"tell\s+me|abstract|details?|facts?)\b",
    re.I,
)
_FIELD = re.compile(
    r"\b(?:with\s+)?(?:(?:in|within)\s+(?:the|their|its)?\s*)"
    r"(title(?:s)?(?:\s*(?:/|or|and)\s*abstracts?)?|abstracts?)\b",
    re.I,
)
_YEAR = r"((?:19|20)\d{2})"
_DATES = [
    (re.compile(rf"\bbetween\s+{_YEAR}\s+and\s+{_YEAR}\b", re.I), "range"),
    (re.compile(rf"\bfrom\s+{_YEAR}\s+(?:to|until|through|-)\s+{_YEAR}\b", re.I), "range"),
    (re.compile(rf"\b{_YEAR}\s*(?:-|\u2013|to)\s*{_YEAR}\b", re.I), "range"),
    (re.compile(rf"\b(?:since|after)\s+{_YEAR}\b", re.I), "since"),
    (re.compile(rf"\b(?:before|until)\s+{_YEAR}\b", re.I), "before"),
    (re.compile(rf"\b(?:from|in|during|published\s+in|of)\s+{_YEAR}\b", re.I), "year"),
]
_TOPIC_START = re.compile(
    r"\b(?:on|about|regarding|concerning|mentioning|mention|for|of|with|have|has|having|"
    r"contain(?:ing)?|discuss(?:ing)?|covering|describing|that\s+(?:study|studied))\s+",
    re.I,
)
_FILLER = re.compile(
    r"\b(?:are\s+there|is\s+there|does\s+pubmed\s+(?:have|hold)|in\s+pubmed|on\s+pubmed|pubmed|"
    r"published|been|were|was|are|is|do|does|have|has|the|topic|subject|words?|term)\b",
    re.I,
)
_QUOTED = re.compile(r'"([^"]+)"|\u201c([^\u201d]+)\u201d')
SAYS = re.compile(
    r"\b(?:what\s+(?:does|do|did)\s+(?:the\s+)?(?:published\s+)?(?:literature|pubmed|research|studies|"
    r"papers|evidence)\s+(?:say|show|report|tell\s+us|suggest)|summari[sz]e\s+(?:the\s+)?(?:literature|"
    r"research|evidence))\s+(?:about|on|regarding|for|of)\s+(?P<topic>.+)",
    re.I,
)


def pmids_in(question: str) -> list[str]:
    found: list[str] = []
    for match in PMID.finditer(question):
        found += re.findall(r"\d{1,9}", match.group(1))
    return list(dict.fromkeys(found))


def read_request(question: str, today: dt.date | None = None) -> LiteratureRequest | None:
    """The literature request a question makes, or None when it does not ask about articles as such."""
    pmids = pmids_in(question)
    if pmids:
        return _about_pmids(question, pmids)
    counting = COUNT.search(question)
    newest = NEWEST.search(question)
    if not counting and not newest:
        return None
    rest, field = _take_field(question)
    rest, dates = _take_dates(rest, today or dt.date.today())
    rest, kinds = _take(rest, PUBLICATION_TYPES)
    rest, population = _take(rest, POPULATIONS, after=r"(?:in|among|of)\s+")
    topic = _topic(rest)
    quoted = [a or b for a, b in _QUOTED.findall(question)]
    sort: Sort = "pub_date" if newest and re.search(r"newest|latest|recent", newest.group(1), re.I) else "relevance"
    limit = int(m.group(1)) if newest and (m := re.search(r"top\s+(\d+)", newest.group(0), re.I)) else 10
    # No topic left ("how many PubMed articles?"): the request goes on, and the search refuses its empty term by name.
    return LiteratureRequest(
        operation="count" if counting else "articles",
        topic=topic,
        concepts=_concepts(topic),
        quoted=quoted,
        field=field,
        mindate=dates[0],
        maxdate=dates[1],
        publication_types=kinds,
        population=population,
        sort=sort,
        limit=min(max(limit, 1), 20),
    )


def summary_request(question: str) -> LiteratureRequest | None:
    """ "What does the literature say about X": the most relevant articles on X, to be read (live mode reads their
    abstracts from PubMed; otherwise the indexed abstracts answer, as for any literature question)."""
    match = SAYS.search(question)
    if match is None:
        return None
    topic = re.sub(r"[?!.]+\s*$", "", match.group("topic")).strip()
    return (
        LiteratureRequest(
            operation="summary",
            asked=question,
            topic=topic,
            concepts=_concepts(topic),
            sort="relevance",
            limit=SUMMARY_ABSTRACTS,
        )
        if topic
        else None
    )


def _about_pmids(question: str, pmids: list[str]) -> LiteratureRequest | None:
    link: LinkKind | None = None
    if REFERENCES.search(question):
        link = "references"
    elif CITE.search(question):
        link = "cited_by"
    elif SIMILAR.search(question):
        link = "similar"
    if link is not None:
        return LiteratureRequest(operation="links", pmids=pmids, link=link, sort="pub_date")
    if FACTS.search(question) or len(question.split()) <= 4:
        return LiteratureRequest(operation="facts", pmids=pmids)
    return None


def _take_field(text: str) -> tuple[str, SearchField]:
    match = _FIELD.search(text)
    if match is None:
        return text, ""
    field: SearchField = (
        "title"
        if match.group(1).lower().startswith("title") and "abstract" not in match.group(1).lower()
        else "title/abstract"
    )
    return text[: match.start()] + " " + text[match.end() :], field


def _take_dates(text: str, today: dt.date) -> tuple[str, tuple[str | None, str | None]]:
    for pattern, shape in _DATES:
        match = pattern.search(text)
        if match is None:
            continue
        years = [int(y) for y in match.groups()]
        # A range keeps the order written: one that ends before it starts is refused by name, not reordered.
        low, high = (
            (years[0], years[-1])
            if shape == "range"
            else (years[0], today.year)
            if shape == "since"
            else (1800, years[0] - 1)
            if shape == "before"
            else (years[0], years[0])
        )
        return text[: match.start()] + " " + text[match.end() :], (str(low), str(high))
    return text, (None, None)


def _take(text: str, table: dict[str, str], after: str = "") -> tuple[str, list[str]]:
    """Remove the longest phrases of `table` from the text (those after `after` only), returning what they name."""
    found: list[str] = []
    for phrase in sorted(table, key=len, reverse=True):
        pattern = re.compile(rf"\b{after}{re.escape(phrase)}\b", re.I)
        if pattern.search(text):
            text = pattern.sub(" ", text)
            if table[phrase] not in found:
                found.append(table[phrase])
    return text, found


def _topic(text: str) -> str:
    """What the articles are about: the words after the topic's cue ("on", "about", "with" …), question and
    article words taken out."""
    text = _QUOTED.sub(lambda m: m.group(1) or m.group(2), text)
    text = COUNT.sub(" ", text)
    text = NEWEST.sub(" ", text)
    cue = _TOPIC_START.search(text)
    if cue is not None:
        text = text[cue.end() :]
    text = _FILLER.sub(" ", re.sub(r"[?!.]+\s*$", "", text))
    text = re.sub(rf"\b{_NOUN}\b", " ", text, flags=re.I)
    text = re.sub(r"^\W*(?:what|which|show|list|give|find|me|are|the)\b", " ", text, flags=re.I)
    return re.sub(r"\s+", " ", text).strip(" ,;:-")


def _concepts(topic: str) -> list[str]:
    """A topic's concepts: parts the question joined with "and", commas or "in"/"with"/"after"; a run of words with
    no joiner is one concept, left to Automatic Term Mapping."""
    parts = re.split(
        r"\s*(?:,|;|\band\b|\bin\b|\bwith\b|\bafter\b|\bduring\b|\bvs\.?|\bversus\b)\s*", topic, flags=re.I
    )
    return [p.strip() for p in parts if p.strip()]
