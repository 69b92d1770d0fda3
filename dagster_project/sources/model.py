"""The shapes every source produces. Parsers yield typed records; normalizers turn them into `Document`s.

Every later stage sees only `Document` (plus the structured pathway/member/gene tables), never a source format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

MemberKind = Literal["gene", "compound", "reaction"]
IdSpace = Literal["uniprot", "chebi", "entrez", "hgnc_symbol", "kegg_compound", "reactome"]


def content_hash(*parts: object) -> str:
    """SHA-256 over a canonical JSON of the parts: stable across runs, dict order and platforms."""
    canonical = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Document:
    type: str
    source: str
    external_id: str
    title: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        return content_hash(self.type, self.title, self.content, self.metadata)


@dataclass(frozen=True)
class PathwayRecord:
    id: str
    source: str
    name: str
    species: str = "Homo sapiens"
    parents: tuple[str, ...] = ()
    summary: str = ""
    category: str = ""
    subcategory: str = ""


@dataclass(frozen=True)
class MemberRecord:
    pathway_id: str
    member_kind: MemberKind
    member_id: str
    id_space: IdSpace


@dataclass(frozen=True)
class ReactionRecord:
    id: str
    name: str
    pathway_id: str
    summary: str = ""


@dataclass(frozen=True)
class GeneRecord:
    hgnc_id: str
    symbol: str
    name: str
    status: str
    aliases: tuple[str, ...] = ()
    previous_symbols: tuple[str, ...] = ()
    entrez_id: str | None = None
    uniprot_ids: tuple[str, ...] = ()
    locus_type: str = ""
    ensembl_gene_id: str = ""
    location: str = ""  # chromosome band, e.g. 17p13.1


@dataclass(frozen=True)
class PaperRecord:
    id: str
    source: str
    title: str
    abstract: str
    year: int | None = None
    doi: str | None = None
    topics: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Quarantined:
    """A record that could not be parsed: where it came from and why, never silently dropped."""

    source: str
    record_key: str
    raw_ref: str
    reason: str
    payload: str = ""


@dataclass
class ParseResult:
    """What one parse of one source yields; every list may be empty."""

    pathways: list[PathwayRecord] = field(default_factory=list)
    members: list[MemberRecord] = field(default_factory=list)
    reactions: list[ReactionRecord] = field(default_factory=list)
    genes: list[GeneRecord] = field(default_factory=list)
    papers: list[PaperRecord] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    reaction_classes: dict[str, int] = field(default_factory=dict)  # distinct reactions per source event class

    def extend(self, other: ParseResult) -> ParseResult:
        for name in ("pathways", "members", "reactions", "genes", "papers", "quarantined"):
            getattr(self, name).extend(getattr(other, name))
        for name, count in other.reaction_classes.items():
            self.reaction_classes[name] = self.reaction_classes.get(name, 0) + count
        return self


def dedupe(items: Iterable[Any]) -> list[Any]:
    """Order-preserving de-duplication of hashable records (sources repeat rows across files)."""
    return list(dict.fromkeys(items))
