"""A checked PubMed search: build the term, run ESearch, check the translation, refine at most twice, remember
what worked.

Every attempt is kept (term, translation, count, problems, what changed and why), so an answer can show the exact
query and how it got there; a search whose last translation still fails the check is reported as such and its
count is never presented as PubMed's answer. A reused strategy (strategies.py) is tried first; if its translation
fails for this request the search starts again from the request's own term.
"""

from __future__ import annotations

from typing import Any

from dagster_project.sources.pubmed.client import EUtilsClient
from retrieval.model.literature import LiteratureRequest, SearchAttempt, SearchTrail
from retrieval.pubmed import terms, translation
from retrieval.pubmed.strategies import StrategyMemory

MAX_REFINEMENTS = 2


class CheckedSearch:
    def __init__(self, client: EUtilsClient) -> None:
        self.client = client

    def search(
        self, question: str, request: LiteratureRequest, retmax: int = 20, memory: StrategyMemory | None = None
    ) -> SearchTrail:
        """ESearch for the request (ids: the first `retmax`, in the request's sort order), checked and refined;
        `memory` supplies a stored strategy first and keeps the one that passed."""
        sent_before = self.client.requests
        trail = SearchTrail()
        term = terms.build(request)
        reused = memory.lookup(question) if memory is not None else None
        if reused is not None:
            trail.reused_strategy = reused.final_term
            attempt = self._attempt(request, reused.final_term, retmax)
            attempt.changed = [f'reused the strategy of "{reused.question}" (it took {reused.attempts} searches)']
            trail.attempts.append(attempt)
            if attempt.passed or attempt.error:
                return self._done(question, trail, sent_before, memory)
        changes: list[str] = []
        unknown = self.client.unknown_tags("pubmed", term.text()) if "[" in term.text() else []
        if isinstance(unknown, dict):  # EInfo cannot be read: the search cannot be checked either
            trail.attempts.append(SearchAttempt(term=term.text(), error=said(unknown)))
            return self._done(question, trail, sent_before, memory)
        if unknown:  # refused by name, then corrected: the tags go, their words are searched in title/abstract
            written = ", ".join(f"[{t}]" for t in unknown)
            trail.attempts.append(
                SearchAttempt(
                    term=term.text(),
                    error=(
                        f"unknown field tag{'s' if len(unknown) > 1 else ''} {written}: "
                        "PubMed would search the words in "
                        "all fields instead"
                    ),
                )
            )
            term = terms.without_tags(term, unknown)
            request = request.model_copy(update={"concepts": [terms.strip_tags(c, unknown) for c in request.concepts]})
            changes = [f"removed the unknown field tag{'s' if len(unknown) > 1 else ''} {written}"]
        for _ in range(MAX_REFINEMENTS + 1):
            attempt = self._attempt(request, term.text(), retmax)
            attempt.changed = changes
            trail.attempts.append(attempt)
            if attempt.passed or attempt.error:
                break
            refined = terms.refine(request, term, attempt.problems)
            if refined is None or refined[1].text() == term.text():  # nothing left to change: stop and say why
                break
            request, term, changes = refined
        return self._done(question, trail, sent_before, memory)

    def _attempt(self, request: LiteratureRequest, term: str, retmax: int) -> SearchAttempt:
        args: dict[str, Any] = {
            "retmax": retmax,
            "sort": "pub_date" if request.sort == "pub_date" else None,
            "check_fields": True,
        }
        if request.mindate:
            args |= {"mindate": request.mindate, "maxdate": request.maxdate, "datetype": "pdat"}
        found = self.client.esearch("pubmed", term, **args)
        if "error" in found:
            return SearchAttempt(term=term, error=said(found))
        attempt = SearchAttempt(
            term=term, translation=found["query_translation"], count=found["count"], ids=found["ids"]
        )
        attempt.problems = translation.check(request, attempt.translation, attempt.count)
        return attempt

    def _done(self, question: str, trail: SearchTrail, sent_before: int, memory: StrategyMemory | None) -> SearchTrail:
        trail.requests = self.client.requests - sent_before
        if trail.passed and memory is not None:
            memory.remember(question, trail)
        return trail


def said(record: dict[str, Any]) -> str:
    """An error record in a sentence: NCBI's (or the validator's) words and the advice, if any."""
    advice = f" ({record['advice']})" if record.get("advice") else ""
    return f"{record['error']}{advice}"
