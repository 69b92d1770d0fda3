"""The references every answer model uses: a node of the graph and an HGNC gene."""

from __future__ import annotations

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
