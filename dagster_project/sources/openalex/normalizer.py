"""OpenAlex works → paper documents (title + rebuilt abstract)."""

from __future__ import annotations

from dagster_project.sources.model import Document, PaperRecord


def _content(p: PaperRecord) -> str:
    """The abstract; a work without one (OpenAlex has many) is described by its title and topics instead,
    so no document is ever empty."""
    if p.abstract:
        return p.abstract
    topics = f" Topics: {', '.join(p.topics)}." if p.topics else ""
    return f"{p.title}.{topics}"


def normalize_papers(papers: list[PaperRecord]) -> list[Document]:
    return [
        Document(
            type="paper",
            source="openalex",
            external_id=p.id,
            title=p.title,
            content=_content(p),
            metadata={
                "year": p.year,
                "doi": p.doi,
                "topics": list(p.topics),
                "has_abstract": bool(p.abstract),
                **{k: v for k, v in p.extra.items() if v is not None},
            },
        )
        for p in papers
    ]
