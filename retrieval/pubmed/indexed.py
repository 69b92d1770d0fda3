"""What a literature-tools question gets with live search off (FLUX_SOURCE_MODE=demo or snapshot): what Flux's own
PubMed abstracts hold, always labelled as the index's and never as PubMed's.

A count is a count over the indexed abstracts (title, or title and abstract, holding every word of every concept,
in the years asked); the newest articles are the index's newest; facts about a PMID are the index's record of it
(title, journal, year, MeSH). Citing and similar articles come from PubMed's ELink, which only live mode calls.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from retrieval.model.literature import Article, LiteratureRequest, PubMedSearchData
from retrieval.pubmed.translation import concept_words

_ACTIVE = "source = 'pubmed' AND status = 'active'"


def indexed_answer(engine: Engine | None, request: LiteratureRequest, source_mode: str) -> PubMedSearchData:
    data = PubMedSearchData(request=request, source_mode=source_mode, live=False)
    if engine is None:
        data.error = "the document store cannot be read"
        return data
    with engine.connect() as conn:
        data.indexed_abstracts = conn.execute(text(f"SELECT count(*) FROM documents WHERE {_ACTIVE}")).scalar_one()
        if request.operation == "facts":
            data.articles = _by_pmid(conn, request.pmids)
            data.missing = [p for p in request.pmids if p not in {a.pmid for a in data.articles}]
        elif request.operation == "links":
            data.articles = _by_pmid(conn, request.pmids)
        else:
            where, params = _matching(request)
            data.indexed_count = conn.execute(
                text(f"SELECT count(*) FROM documents WHERE {where}"), params
            ).scalar_one()
            rows = conn.execute(
                text(
                    f"SELECT external_id, title, metadata FROM documents WHERE {where} "
                    "ORDER BY (metadata->>'year') DESC NULLS LAST, external_id DESC LIMIT :limit"
                ),
                params | {"limit": request.limit if request.operation == "articles" else 5},
            ).all()
            data.articles = [_article(row) for row in rows]
    return data


def _matching(request: LiteratureRequest) -> tuple[str, dict[str, Any]]:
    """A WHERE clause for the indexed abstracts that match the request: every concept word as a whole word (case
    folded) in the field asked, the years asked, the publication types asked."""
    field = "title" if request.field == "title" else "title || ' ' || content"
    clauses, params = [_ACTIVE], {}
    for i, word in enumerate(w for concept in request.concepts for w in concept_words(concept)):
        clauses.append(f"({field}) ~* :w{i}")
        params[f"w{i}"] = rf"\m{re.escape(word)}"
    if request.mindate:
        clauses.append("(metadata->>'year') ~ '^[0-9]{4}$' AND (metadata->>'year')::int BETWEEN :low AND :high")
        params |= {"low": int(request.mindate[:4]), "high": int((request.maxdate or request.mindate)[:4])}
    for i, kind in enumerate(request.publication_types):
        clauses.append(f"metadata->'publication_types' ? :pt{i}")
        params[f"pt{i}"] = kind
    return " AND ".join(clauses), params


def _by_pmid(conn: Any, pmids: list[str]) -> list[Article]:
    rows = conn.execute(
        text(f"SELECT external_id, title, metadata FROM documents WHERE {_ACTIVE} AND external_id = ANY(:ids)"),
        {"ids": pmids},
    ).all()
    order = {pmid: i for i, pmid in enumerate(pmids)}
    return sorted((_article(row) for row in rows), key=lambda a: order[a.pmid])


def _article(row: Any) -> Article:
    meta = row.metadata or {}
    year = meta.get("year")
    return Article(
        pmid=row.external_id,
        title=row.title,
        journal=str(meta.get("journal") or ""),
        date=str(year) if year else "",
        mesh=list(meta.get("mesh") or []),
        publication_types=list(meta.get("publication_types") or []),
    )
