"""`FinalAnswer.data` for the condition kinds (ClinVar's gene-condition associations): a gene's conditions, a
condition's genes, whether a gene and a condition are linked, and the pathways most enriched for a condition's
genes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from retrieval.model.refs import GeneRef, NodeRef


class ConditionRef(BaseModel):
    id: str = Field(description="MedGen concept id (C0271742, or CN… for a concept NCBI made)")
    name: str
    mondo: str = ""
    omim: str = ""


class Association(BaseModel):
    """One gene-condition pair as ClinVar lists it, with every source that asserts it."""

    gene: GeneRef
    condition: ConditionRef
    sources: list[str] = Field(description="The asserting sources (OMIM, MONDO, Orphanet, NCBI curation, …).")
    relation: Literal["associated", "related"] = Field(
        description="ClinVar's AssociatedGenes (associated) or RelatedGenes (related only, e.g. in a deletion)."
    )
    last_updated: str = ""


class GeneConditionsData(BaseModel):
    kind: Literal["gene_conditions"] = "gene_conditions"
    gene: GeneRef
    associations: list[Association]
    release: str = Field(description="The served ClinVar release.")
    count: bool = False


class ConditionGenesData(BaseModel):
    kind: Literal["condition_genes"] = "condition_genes"
    asked: str = Field(description="The words of the question that named the condition.")
    exact: bool = Field(description="The words are the condition's name (else the closest name, a typo away).")
    synonym: bool = Field(
        default=False, description="The words are one of the condition's MONDO synonyms, not ClinVar's name for it."
    )
    conditions: list[ConditionRef] = Field(description="The conditions the words name; several: the candidates.")
    associations: list[Association] = Field(
        default_factory=list,
        description="Empty when several conditions matched and the answer lists the candidates instead.",
    )
    release: str = ""
    count: bool = False


class AssociationCheckData(BaseModel):
    kind: Literal["association_check"] = "association_check"
    gene: GeneRef
    condition: ConditionRef
    associations: list[Association] = Field(description="The ClinVar rows linking them (never empty here).")
    release: str = ""
    negated: bool = Field(default=False, description="The sentence asked denies the link: it is false.")


class AssociationAbsentData(BaseModel):
    """A yes/no question about a gene and a condition ClinVar does not link: what Flux does not hold."""

    kind: Literal["association_absent"] = "association_absent"
    gene: GeneRef
    condition: ConditionRef
    gene_conditions: int = Field(default=0, description="Conditions ClinVar does link the gene to.")
    condition_genes: int = Field(default=0, description="Genes ClinVar does link the condition to.")
    release: str = ""


class Enriched(BaseModel):
    pathway: NodeRef
    overlap: int = Field(description="The condition's genes among the pathway's members.")
    size: int = Field(description="The pathway's member genes.")
    p_value: float = Field(description="Hypergeometric upper tail: this many or more by chance.")
    q_value: float = Field(description="Benjamini-Hochberg over every pathway of the database tested.")
    genes: list[str] = Field(description="The overlapping genes (symbols).")


class ConditionEnrichmentData(BaseModel):
    kind: Literal["condition_enrichment"] = "condition_enrichment"
    conditions: list[ConditionRef] = Field(
        description="The condition; several when its name fits several equally (their genes are taken together)."
    )
    genes: int = Field(description="The condition's genes that are members of some pathway tested.")
    genes_total: int = Field(description="The condition's genes in ClinVar.")
    pathways: list[Enriched] = Field(description="Most enriched first (q, then p), at most `shown`.")
    tested: int = Field(description="Pathways tested (each with at least one of the genes).")
    universe: int = Field(description="Genes that are members of any pathway of the database tested.")
    source: str = Field(default="", description="The database whose pathways were tested.")
    release: str = ""
