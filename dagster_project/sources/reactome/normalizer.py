"""Reactome pathway records → documents (title + summation; the hierarchy in words when no summation)."""

from __future__ import annotations

from dagster_project.sources.model import Document, PathwayRecord


def normalize_pathways(pathways: list[PathwayRecord], member_counts: dict[str, int]) -> list[Document]:
    names = {p.id: p.name for p in pathways}
    docs = []
    for p in pathways:
        parent_names = [names[q] for q in p.parents if q in names]
        if p.summary:
            content = p.summary
        else:
            # Most snapshot pathways have no summation offline: say what is known, never leave content empty.
            content = f"{p.name} is a Reactome pathway in {p.species}."
            if parent_names:
                content += f" It is part of {', '.join(parent_names)}."
        docs.append(Document(
            type="pathway",
            source="reactome",
            external_id=p.id,
            title=p.name,
            content=content,
            metadata={"species": p.species, "parents": list(p.parents), "has_summation": bool(p.summary),
                      "member_count": member_counts.get(p.id, 0)},
        ))
    return docs
