"""The judge loop's rule (docs/answers.md, step 5), kept apart so it is tested exactly.

Re-retrieve when the verdict is bad, or partial with confidence below the threshold; otherwise generate — also
when there is no verdict, and always after `max_attempts` re-retrievals. Each missing aspect becomes a targeted
sub-query that keeps the question's entities, so "which genes do they share" stays about glycolysis.
"""

from __future__ import annotations

from retrieval.model.terms import entities
from retrieval.model.types import Evidence, JudgeResult

MAX_ASPECT_QUERIES = 3


def should_reretrieve(result: JudgeResult, attempts: int, max_attempts: int, min_confidence: float) -> bool:
    if attempts >= max_attempts or result.verdict is None:
        return False
    if result.verdict == "bad":
        return True
    return result.verdict == "partial" and result.confidence < min_confidence


def aspect_queries(question: str, missing: list[str], already: set[str]) -> list[str]:
    """One targeted query per missing aspect: the aspect plus the question's entities, new queries only."""
    anchor = " ".join(e for e in entities(question) if e.lower() not in {m.lower() for m in missing})
    queries = []
    for aspect in missing:
        query = f"{aspect} {anchor}".strip()
        if query.lower() not in already and query not in queries:
            queries.append(query)
    return queries[:MAX_ASPECT_QUERIES]


def merge_evidence(current: list[Evidence], new: list[Evidence]) -> tuple[list[Evidence], int]:
    """Accumulate without duplicates (by id; the better score wins); returns the list and how many were new."""
    by_id = {e.id: e for e in current}
    added = 0
    for ev in new:
        if ev.id not in by_id:
            by_id[ev.id] = ev
            added += 1
        elif ev.score > by_id[ev.id].score and ev.kind == by_id[ev.id].kind:
            by_id[ev.id] = ev
    return list(by_id.values()), added
