"""The literature operations a question runs at question time: a count, the newest or most relevant articles, facts
about given PMIDs, and the articles citing, cited by or similar to them — live against PubMed through Flux's
E-utilities client, each search checked (search.py).

Every failure is data: a refused argument, NCBI's error or a translation that still fails the check comes back in
`PubMedSearchData.error` (and `corrected`, where another call was made instead), never as an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dagster_project.sources.model import PaperRecord
from dagster_project.sources.pubmed import parse_pubmed_xml
from dagster_project.sources.pubmed.client import EUtilsClient
from retrieval.model.literature import (
    MAX_FACT_IDS,
    Article,
    LiteratureRequest,
    PubMedSearchData,
)
from retrieval.pubmed.search import CheckedSearch, said
from retrieval.pubmed.strategies import StrategyMemory

LINKNAMES = {"cited_by": "pubmed_pubmed_citedin", "similar": "pubmed_pubmed", "references": "pubmed_pubmed_refs"}
EXAMPLES = 5  # articles a count cites as examples of what it counted


class LiteratureTools:
    def __init__(self, client: EUtilsClient, source_mode: str = "live") -> None:
        self.client = client
        self.search = CheckedSearch(client)
        self.source_mode = source_mode

    def answer(
        self, question: str, request: LiteratureRequest, memory: StrategyMemory | None = None
    ) -> PubMedSearchData:
        """`memory`: strategies to reuse and keep (None: every search starts from the request)."""
        data = PubMedSearchData(request=request, source_mode=self.source_mode, live=True)
        if request.operation in ("count", "articles"):
            return self._searched(question, request, data, memory)
        if request.operation == "facts":
            return self._facts(request.pmids, data)
        return self._links(request, data)

    def read_abstracts(
        self, question: str, request: LiteratureRequest, memory: StrategyMemory | None = None
    ) -> tuple[PubMedSearchData, list[PaperRecord]]:
        """The most relevant articles' abstracts for "what does the literature say about X" (checked search, then
        EFetch); the data says how the search went and why nothing was read, if nothing was."""
        data = PubMedSearchData(request=request, source_mode=self.source_mode, live=True)
        data = self._searched(question, request, data, memory)
        if data.error or not data.articles:
            return data, []
        fetched = self.client.efetch("pubmed", [a.pmid for a in data.articles])
        if "error" in fetched:
            data.error = said(fetched)
            return data, []
        papers = [p for p in parse_pubmed_xml(fetched["text"], "question-time efetch").papers if p.abstract]
        return data, papers

    def _searched(
        self, question: str, request: LiteratureRequest, data: PubMedSearchData, memory: StrategyMemory | None
    ) -> PubMedSearchData:
        wanted = EXAMPLES if request.operation == "count" else request.limit  # articles and summary: the limit
        trail = self.search.search(question, request, retmax=wanted, memory=memory)
        data.trail = trail
        final = trail.final
        if final is None or final.error:
            data.error = final.error if final is not None else "no search was made"
            return data
        if not trail.passed:
            problems = "; ".join(p.message for p in final.problems)
            data.error = (
                f"the translation of the last query still fails the check after {trail.refinements} "
                f"refinement{'s' if trail.refinements != 1 else ''}: {problems}"
            )
            return data
        data.count = final.count
        refused = next((a for a in trail.attempts if a.error), None)
        if refused is not None:
            data.corrected = f"{refused.error}; searched {final.term} instead"
        if final.ids and request.operation == "summary":  # EFetch reads them next: no summaries needed
            data.articles = [Article(pmid=pmid) for pmid in final.ids]
        elif final.ids:
            data.articles = self._summaries(final.ids, data)
        return data

    def _facts(self, pmids: Sequence[str], data: PubMedSearchData) -> PubMedSearchData:
        asked = list(pmids)
        if len(asked) > MAX_FACT_IDS:
            data.corrected = (
                f"{len(asked):,} PMIDs were asked; an answer shows facts for at most {MAX_FACT_IDS}, "
                f"so the first {MAX_FACT_IDS} were fetched"
            )
            asked = asked[:MAX_FACT_IDS]
        articles = self._summaries(asked, data)
        if data.error:
            return data
        fetched = self.client.efetch("pubmed", [a.pmid for a in articles]) if articles else {"text": ""}
        if "error" in fetched:
            data.error = said(fetched)
            return data
        if fetched["text"]:
            extra = {p.id: p for p in parse_pubmed_xml(fetched["text"], "question-time efetch").papers}
            for article in articles:
                paper = extra.get(article.pmid)
                if paper is not None:
                    article.mesh = list(paper.topics)
        data.articles = articles
        return data

    def _links(self, request: LiteratureRequest, data: PubMedSearchData) -> PubMedSearchData:
        assert request.link is not None
        linked = self.client.elink("pubmed", request.pmids, LINKNAMES[request.link])
        if "error" in linked:
            data.error = said(linked)
            return data
        ids = linked["ids"]
        data.linked_total = len(ids)
        newest_first = sorted(ids, key=int, reverse=True)  # PMIDs grow with time: a proxy NCBI's docs endorse
        if newest_first:
            data.articles = self._summaries(newest_first[: request.limit], data)
        return data

    def _summaries(self, pmids: Sequence[str], data: PubMedSearchData) -> list[Article]:
        found = self.client.esummary("pubmed", list(pmids))
        if "error" in found:
            data.error = said(found)
            return []
        served = {str(summary.get("uid")) for summary in found["summaries"]}
        data.missing = [uid for uid in pmids if uid not in served]
        return [_article(summary) for summary in found["summaries"]]


def _article(summary: dict[str, Any]) -> Article:
    return Article(
        pmid=str(summary.get("uid", "")),
        title=str(summary.get("title", "")).strip(),
        authors=[a.get("name", "") for a in summary.get("authors") or [] if isinstance(a, dict)],
        journal=str(summary.get("fulljournalname") or summary.get("source") or ""),
        date=str(summary.get("pubdate", "")),
        publication_types=list(summary.get("pubtype") or []),
    )
