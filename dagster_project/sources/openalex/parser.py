"""OpenAlex /works answers → PaperRecords, rebuilding abstracts from `abstract_inverted_index`."""

from __future__ import annotations

import json
from typing import Any

from dagster_project.sources.ids import OPENALEX_WORK
from dagster_project.sources.model import PaperRecord, ParseResult, Quarantined

SOURCE = "openalex"


def rebuild_abstract(index: dict[str, list[int]] | None) -> str:
    """{'word': [positions]} → the abstract text. None (no abstract) → ''."""
    if index is None:
        return ""
    if not isinstance(index, dict):
        raise ValueError(f"abstract_inverted_index must be an object, got {type(index).__name__}")
    positions: dict[int, str] = {}
    for word, places in index.items():
        if not isinstance(places, list):
            raise ValueError(f"positions of {word!r} must be a list")
        for pos in places:
            positions[int(pos)] = word
    return " ".join(positions[i] for i in sorted(positions))


def _topics(work: dict[str, Any]) -> tuple[str, ...]:
    names = [t.get("display_name", "") for t in work.get("topics") or [] if isinstance(t, dict)]
    names += [c.get("display_name", "") for c in work.get("concepts") or [] if isinstance(c, dict)]
    return tuple(dict.fromkeys(n for n in names if n))


def parse_work(work: Any) -> PaperRecord:
    if not isinstance(work, dict):
        raise ValueError("work is not an object")
    raw_id = work.get("id")
    if not isinstance(raw_id, str):
        raise ValueError("work has no id")
    work_id = raw_id.rsplit("/", 1)[-1]
    if not OPENALEX_WORK.match(work_id):
        raise ValueError(f"not an OpenAlex work id: {raw_id}")
    title = (work.get("title") or work.get("display_name") or "").strip()
    if not title:
        raise ValueError("work has no title")
    year = work.get("publication_year")
    doi = work.get("doi")
    return PaperRecord(
        id=work_id,
        source=SOURCE,
        title=title,
        abstract=rebuild_abstract(work.get("abstract_inverted_index")),
        year=int(year) if isinstance(year, int) else None,
        doi=doi.removeprefix("https://doi.org/") if isinstance(doi, str) else None,
        topics=_topics(work),
        extra={
            "cited_by_count": work.get("cited_by_count"),
            "type": work.get("type"),
            "keywords": [
                k.get("display_name", "")
                for k in work.get("keywords") or []
                if isinstance(k, dict) and k.get("display_name")
            ],
        },
    )


def parse_page(data: bytes, raw_ref: str) -> ParseResult:
    """A /works page ({meta, results}) or a single work object."""
    result = ParseResult()
    body = json.loads(data)
    works = body.get("results") if isinstance(body, dict) and "results" in body else [body]
    for n, work in enumerate(works):
        try:
            result.papers.append(parse_work(work))
        except (ValueError, TypeError) as exc:
            key = str(work.get("id") or f"result:{n}") if isinstance(work, dict) else f"result:{n}"
            result.quarantined.append(Quarantined(SOURCE, key, raw_ref, str(exc), json.dumps(work)[:2000]))
    return result


def parse_raw(files: dict[str, bytes], raw_ref: str) -> ParseResult:
    result = ParseResult()
    for name, data in sorted(files.items()):
        try:
            result.extend(parse_page(data, f"{raw_ref}/{name}"))
        except json.JSONDecodeError as exc:
            result.quarantined.append(
                Quarantined(
                    SOURCE, name, f"{raw_ref}/{name}", f"invalid JSON: {exc}", data[:2000].decode(errors="replace")
                )
            )
    by_id = {p.id: p for p in result.papers}  # pages overlap (the key paper appears twice)
    result.papers = list(by_id.values())
    return result
