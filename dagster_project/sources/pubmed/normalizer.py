"""PubMed `PaperRecord`s into `Document`s: the only shape later stages (chunking, embedding, graph) see."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from dagster_project.sources.model import Document, PaperRecord

SOURCE = "pubmed"


def _metadata(record: PaperRecord) -> dict[str, Any]:
    """Core fields win over `extra` keys of the same name; deep-copied so documents never share mutable state."""
    extra = copy.deepcopy(record.extra)
    return {**extra, "year": record.year, "doi": record.doi, "mesh": list(record.topics)}


def normalize_paper(record: PaperRecord) -> Document:
    return Document(
        type="paper",
        source=SOURCE,
        external_id=record.id,
        title=record.title,
        content=record.abstract,
        metadata=_metadata(record),
    )


def normalize_papers(records: Iterable[PaperRecord]) -> list[Document]:
    """One document per PMID, first occurrence wins, input order kept: the same input gives the same hashes."""
    documents: dict[str, Document] = {}
    for record in records:
        if record.id not in documents:
            documents[record.id] = normalize_paper(record)
    return list(documents.values())
