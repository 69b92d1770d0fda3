"""`FinalAnswer.data`: the structured payload of a graph answer, so clients and exports need not parse prose.

One model per question kind, told apart by `kind`. Lists are complete here even when the prose names only the
first ones.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from retrieval.model.disease_data import (
    AssociationAbsentData,
    AssociationCheckData,
    ConditionEnrichmentData,
    ConditionGenesData,
    GeneConditionsData,
)
from retrieval.model.literature import PubMedSearchData
from retrieval.model.plan import FactType
from retrieval.model.reaction_data import (
    EntityReactionsData,
    PathwayReactionsData,
    ReactionParticipantsData,
    ReactionScopeData,
    ReactionWalkData,
)
from retrieval.model.refs import GeneRef, NodeRef

__all__ = ["GeneRef", "NodeRef"]  # kept here for the modules that read them with the answers' models


class Mapping(BaseModel):
    """A resolved Reactome ↔ KEGG relation, as `pathway_resolution` stored it."""

    pathway: NodeRef
    relation: Literal["equivalent", "part_of"]
    direction: str = Field(
        default="", description="part_of: 'inside' (the asked pathway lies within this one) or 'contains'"
    )
    confidence: float | None = None
    jaccard: float | None = None
    overlap: float | None = None
    shared_genes: list[str] = Field(default_factory=list)


class MembersData(BaseModel):
    kind: Literal["members"] = "members"
    pathway: NodeRef
    genes: list[GeneRef]
    total: int
    compounds: list[str] = Field(default_factory=list, description="Compound ids, when the question asked for them.")
    name_filter: str = Field(
        default="", description="`genes` holds only the members whose name contains this; `total` counts all members."
    )
    counterpart_of: NodeRef | None = Field(
        default=None,
        description="The pathway the question named, when the "
        "answer is about its counterpart in the database the question asked.",
    )
    count: bool = Field(default=False, description="The question asked how many.")
    asked_genes: list[GeneRef] = Field(
        default_factory=list,
        description="Genes the question asked about ('Is TP53 "
        "in …?'); `genes` then holds those of them that are members.",
    )


class GenePathwaysData(BaseModel):
    kind: Literal["gene_pathways"] = "gene_pathways"
    genes: list[GeneRef]
    pathways: list[NodeRef]
    total: int
    source: str = Field(default="", description="Only pathways of this database ('kegg', 'reactome'), when asked.")
    count: bool = Field(default=False, description="The question asked how many.")


class CounterpartData(BaseModel):
    kind: Literal["counterpart"] = "counterpart"
    pathway: NodeRef
    target_source: str
    counterparts: list[Mapping]


class SharedGenesData(BaseModel):
    kind: Literal["shared_genes"] = "shared_genes"
    pathways: list[NodeRef]
    sizes: list[int]
    shared: list[GeneRef]
    total: int
    mapping: Mapping | None = None


class HierarchyData(BaseModel):
    kind: Literal["hierarchy"] = "hierarchy"
    pathway: NodeRef
    parents: list[NodeRef]
    children: list[NodeRef]
    direction: Literal["both", "up", "down"] = Field(
        default="both", description="What the question asked: the pathways above ('up'), below ('down') or both."
    )
    count: bool = Field(default=False, description="The question asked how many.")
    top_level: list[NodeRef] = Field(
        default_factory=list, description="Asked for its category: the ancestors that have no parent of their own."
    )
    lineages: list[list[NodeRef]] = Field(
        default_factory=list, description="For each top-level pathway, the shortest lineage from the pathway to it."
    )


class GeneFacts(BaseModel):
    """One gene's row of the HGNC table."""

    hgnc_id: str
    symbol: str
    name: str = ""
    locus_type: str = ""
    location: str = Field(default="", description="Chromosome band (e.g. 17p13.1); empty where the source lacks it.")
    entrez_id: str | None = None
    uniprot_ids: list[str] = Field(default_factory=list)
    ensembl_id: str = ""
    aliases: list[str] = Field(default_factory=list)
    previous_symbols: list[str] = Field(default_factory=list)
    asked_as: str = Field(default="", description="How the question named the gene (an alias, an id …).")
    matched_by: str = Field(default="", description="symbol, alias, previous symbol, HGNC id, Ensembl id …")


class GeneFactsData(BaseModel):
    kind: Literal["gene_facts"] = "gene_facts"
    fact: Literal["symbol", "ids", "locus_type", "location", "summary"]
    genes: list[GeneFacts] = Field(description="The gene asked about; every candidate when an alias is shared.")
    ambiguous: bool = Field(
        default=False,
        description="The name asked is an alias or previous symbol of several genes: `genes` lists them all.",
    )


class CompoundPathwaysData(BaseModel):
    kind: Literal["compound_pathways"] = "compound_pathways"
    compounds: list[str] = Field(description="Compound ids asked about: KEGG C-numbers and CHEBI:n.")
    pathways: list[NodeRef]
    total: int
    source: str = ""
    count: bool = False


class DifferenceData(BaseModel):
    kind: Literal["difference"] = "difference"
    left: NodeRef = Field(description="The pathway whose genes are listed.")
    right: NodeRef = Field(description="The pathway whose genes are taken away.")
    genes: list[GeneRef] = Field(description="Genes of `left` that `right` does not have.")
    total: int
    sizes: list[int] = Field(description="Member genes of left and right.")


class OverviewData(BaseModel):
    kind: Literal["overview"] = "overview"
    pathway: NodeRef
    gene_total: int
    genes: list[GeneRef] = Field(description="Every member gene.")
    compound_total: int = 0
    parents: list[NodeRef]
    children: list[NodeRef]
    counterparts: list[Mapping] = Field(description="Resolved matches in the other database, best first.")


class NotFoundData(BaseModel):
    kind: Literal["not_found"] = "not_found"
    asked: str = Field(description="What the question named that the index does not hold.")
    what: Literal["pathway", "gene", "identifier", "compound", "name"] = Field(
        description="What kind of thing: a name matched nothing Flux holds."
    )
    needed_for: str = Field(default="", description="The kind of question it was asked for.")
    closest: list[NodeRef] = Field(default_factory=list, description="The closest names the index does hold.")


class ComparisonData(BaseModel):
    kind: Literal["compare"] = "compare"
    subject: Literal["pathways", "genes"]
    left: NodeRef
    right: NodeRef
    shared: list[str] = Field(description="Shared genes (pathways compared) or shared pathway ids (genes compared).")
    only_left: list[str]
    only_right: list[str]
    mapping: Mapping | None = None
    table: str = Field(description="The comparison as a Markdown table.")


class ReleaseChangesData(BaseModel):
    kind: Literal["release_changes"] = "release_changes"
    pathway: NodeRef
    release: str = Field(description="The served release of the pathway's source.")
    previous_release: str = Field(default="", description="The release served before it (empty: none is kept).")
    change: Literal["changed", "unchanged", "added", "no_previous"]
    renamed_from: str = Field(default="", description="Its name in the previous release, when it changed.")
    gained: list[str] = Field(default_factory=list, description="Member genes (HGNC symbols) it gained.")
    lost: list[str] = Field(default_factory=list, description="Member genes it lost.")
    genes_renamed: int = Field(
        default=0, description="Members HGNC renamed, followed to the same gene (neither gained nor lost)."
    )


class CheckItem(BaseModel):
    """One yes/no fact: does `subject` stand in the relation to `object`?"""

    subject: NodeRef
    object: NodeRef
    holds: bool
    path: list[NodeRef] = Field(
        default_factory=list,
        description="part_of / in_category: the lineage from the "
        "subject up to the pathway that shows it, both ends included.",
    )
    detail: str = Field(default="", description="What shows it beyond the path: a KEGG class, a member count.")
    size: int | None = Field(default=None, description="member_of: the pathway's member genes (or compounds).")
    mapping: Mapping | None = Field(default=None, description="corresponds_to: the resolved relation, if any.")


class CheckData(BaseModel):
    kind: Literal["check"] = "check"
    relation: Literal["member_of", "part_of", "in_category", "corresponds_to"]
    items: list[CheckItem]
    negated: bool = Field(default=False, description="The sentence asked denies the relation: True/False answer it.")
    choice: bool = Field(default=False, description="Which of the options the sentence holds for, no yes/no.")


class GraphPath(BaseModel):
    """One path through the graph: its nodes in order and the relationship types between them."""

    nodes: list[NodeRef]
    relations: list[str] = Field(
        description="Relationship type between node i and i+1 (HAS_MEMBER, "
        "SUBPATHWAY_OF, EQUIVALENT_TO, PART_OF), with '<' where it points back."
    )


class ConnectionData(BaseModel):
    kind: Literal["connection"] = "connection"
    left: NodeRef
    right: NodeRef
    shared_genes: list[GeneRef] = Field(default_factory=list, description="Member genes of both pathways.")
    shared_pathways: list[NodeRef] = Field(
        default_factory=list,
        description="Pathways holding both genes (or the gene and, through a sub-pathway, the pathway).",
    )
    common_ancestors: list[NodeRef] = Field(default_factory=list, description="The nearest pathways both sit under.")
    mappings: list[Mapping] = Field(
        default_factory=list, description="Resolved Reactome ↔ KEGG relations between the two."
    )
    paths: list[GraphPath] = Field(default_factory=list, description="Shortest graph paths, shortest first.")
    max_steps: int = Field(description="Paths were searched up to this many relationships.")
    truncated: bool = Field(default=False, description="More was found than the answer lists.")
    too_broad: bool = Field(default=False, description="The search ran past its time limit: partial.")


class Holding(BaseModel):
    text: str
    cites: list[str] = Field(default_factory=list)


class ScopeData(BaseModel):
    kind: Literal["scope"] = "scope"
    missing: FactType = Field(description="The kind of fact asked for that no Flux source holds.")
    asked: str = Field(default="", description="The question's words for it.")
    about: list[NodeRef] = Field(default_factory=list, description="Entities the question names that Flux holds.")
    holdings: list[Holding] = Field(default_factory=list, description="What Flux does hold about them.")


AnswerData = Annotated[
    MembersData
    | GenePathwaysData
    | CounterpartData
    | SharedGenesData
    | HierarchyData
    | ComparisonData
    | GeneFactsData
    | CompoundPathwaysData
    | DifferenceData
    | OverviewData
    | ReleaseChangesData
    | NotFoundData
    | CheckData
    | ConnectionData
    | ScopeData
    | PathwayReactionsData
    | ReactionScopeData
    | ReactionParticipantsData
    | EntityReactionsData
    | ReactionWalkData
    | GeneConditionsData
    | ConditionGenesData
    | AssociationCheckData
    | AssociationAbsentData
    | ConditionEnrichmentData
    | PubMedSearchData,
    Field(discriminator="kind"),
]
