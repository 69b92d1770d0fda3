"""Reactome pathway records → documents (title + summation; the hierarchy in words when no summation)."""

from __future__ import annotations

from dagster_project.sources.model import Document, ParseResult, PathwayRecord, Quarantined, ReactionRecord


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
        docs.append(
            Document(
                type="pathway",
                source="reactome",
                external_id=p.id,
                title=p.name,
                content=content,
                metadata={
                    "species": p.species,
                    "parents": list(p.parents),
                    "has_summation": bool(p.summary),
                    "member_count": member_counts.get(p.id, 0),
                },
            )
        )
    return docs


def normalize_reactions(reactions: list[ReactionRecord], pathway_names: dict[str, str]) -> list[Document]:
    """A reaction with a summation becomes a document (chunked and embedded like a pathway's); one without has
    nothing to say in words and stays a row."""
    return [
        Document(
            type="reaction",
            source="reactome",
            external_id=r.id,
            title=r.name,
            content=r.summary,
            metadata={"pathway_id": r.pathway_id, "pathway": pathway_names.get(r.pathway_id, "")},
        )
        for r in reactions
        if r.summary
    ]


def drop_dangling_reactions(records: ParseResult, pathways: set[str]) -> list[Quarantined]:
    """Take out the reactions whose pathway the release does not list (with their participants and steps) and
    return them as quarantine rows: they have nowhere to hang, and the rest loads."""
    dangling = {r.id: r for r in records.reactions if r.pathway_id not in pathways}
    records.reactions = [r for r in records.reactions if r.id not in dangling]
    records.participants = [p for p in records.participants if p.reaction_id not in dangling]
    records.steps = [s for s in records.steps if s.preceding_id not in dangling and s.following_id not in dangling]
    return [
        Quarantined(
            "reactome",
            r.id,
            "reactions",
            f"reaction {r.id} names pathway {r.pathway_id or '(none)'}, which this release does not list",
            r.name,
        )
        for r in dangling.values()
    ]
