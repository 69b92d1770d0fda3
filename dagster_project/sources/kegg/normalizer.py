"""KEGG pathway records → documents (name + description + class)."""

from __future__ import annotations

from dagster_project.sources.model import Document, PathwayRecord


def normalize_pathways(pathways: list[PathwayRecord], member_counts: dict[str, int]) -> list[Document]:
    docs = []
    for p in pathways:
        klass = "; ".join(c for c in (p.category, p.subcategory) if c)
        parts = [p.summary or f"{p.name} is a KEGG pathway map for {p.species}."]
        if klass:
            parts.append(f"KEGG class: {klass}.")
        docs.append(
            Document(
                type="pathway",
                source="kegg",
                external_id=p.id,
                title=p.name,
                content=" ".join(parts),
                metadata={
                    "species": p.species,
                    "category": p.category,
                    "subcategory": p.subcategory,
                    "member_count": member_counts.get(p.id, 0),
                },
            )
        )
    return docs
