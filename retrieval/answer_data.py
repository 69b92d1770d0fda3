"""`FinalAnswer.data`: the structured payload of a graph answer, so clients and exports need not parse prose.

One model per question kind, told apart by `kind`. Lists are complete here even when the prose names only the
first ones.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field


class NodeRef(BaseModel):
    id: str
    name: str = ""
    source: str = ""
    size: int | None = Field(default=None, description="Member genes, where the answer ranks pathways by it.")


class GeneRef(BaseModel):
    id: str = Field(description="HGNC id")
    symbol: str
    name: str = ""


class Mapping(BaseModel):
    """A resolved Reactome ↔ KEGG relation, as `pathway_resolution` stored it."""

    pathway: NodeRef
    relation: Literal["equivalent", "part_of"]
    direction: str = Field(default="", description="part_of: 'inside' (the asked pathway lies within this one) "
                                                   "or 'contains'")
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
    name_filter: str = Field(default="", description="`genes` holds only the members whose name contains this; "
                                                     "`total` counts all members.")
    counterpart_of: NodeRef | None = Field(default=None, description="The pathway the question named, when the "
                                           "answer is about its counterpart in the database the question asked.")


class GenePathwaysData(BaseModel):
    kind: Literal["gene_pathways"] = "gene_pathways"
    genes: list[GeneRef]
    pathways: list[NodeRef]
    total: int


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


AnswerData = Annotated[MembersData | GenePathwaysData | CounterpartData | SharedGenesData | HierarchyData
                       | ComparisonData, Field(discriminator="kind")]
