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


ParticipantRole = Literal["input", "output", "catalyst", "positive_regulator", "negative_regulator"]
EntityKind = Literal["gene", "compound", "complex", "set"]


@dataclass(frozen=True)
class ReactionParticipantRecord:
    """One entity in one role of one reaction. A gene is named by its UniProt accession, a compound by its ChEBI id;
    a complex or set keeps its Reactome id, with the UniProt and ChEBI ids of what it is made of."""

    reaction_id: str
    role: ParticipantRole
    entity_kind: EntityKind
    entity_id: str
    name: str
    components: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReactionStepRecord:
    """`preceding_id` comes before `following_id` (Reactome's precedingEvent; BioPAX nextStep)."""

    preceding_id: str
    following_id: str


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
class DiseaseAssociationRecord:
    """One ClinVar gene-condition row: the gene as NCBI names it, the condition as a MedGen concept, and who asserts
    the link. `hgnc_id` is empty until the normalizer places the gene in HGNC."""

    gene_entrez_id: str
    gene_symbol: str
    concept_id: str  # MedGen: C0271742, or CN031225 for a concept NCBI made up
    disease_name: str
    source_name: str  # the asserting source: MONDO, OMIM, NCBI curation, Orphanet, … ("" when ClinVar names none)
    source_id: str = ""  # that source's id, e.g. MONDO:0008162
    disease_mim: str = ""
    relation: Literal["associated", "related"] = "associated"  # ClinVar's AssociatedGenes vs RelatedGenes column
    last_updated: str = ""  # ISO date
    hgnc_id: str = ""


@dataclass(frozen=True)
class DiseaseRecord:
    """A condition as ClinVar keys it (a MedGen concept), with the MONDO and OMIM ids its asserting sources give."""

    concept_id: str
    name: str
    mondo_id: str = ""
    omim_id: str = ""


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
    participants: list[ReactionParticipantRecord] = field(default_factory=list)
    steps: list[ReactionStepRecord] = field(default_factory=list)
    genes: list[GeneRecord] = field(default_factory=list)
    papers: list[PaperRecord] = field(default_factory=list)
    associations: list[DiseaseAssociationRecord] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    reaction_classes: dict[str, int] = field(default_factory=dict)  # distinct reactions per source event class

    def extend(self, other: ParseResult) -> ParseResult:
        for name in (
            "pathways",
            "members",
            "reactions",
            "participants",
            "steps",
            "genes",
            "papers",
            "associations",
            "quarantined",
        ):
            getattr(self, name).extend(getattr(other, name))
        for name, count in other.reaction_classes.items():
            self.reaction_classes[name] = self.reaction_classes.get(name, 0) + count
        return self


def dedupe(items: Iterable[Any]) -> list[Any]:
    """Order-preserving de-duplication of hashable records (sources repeat rows across files)."""
    return list(dict.fromkeys(items))
