"""The sentence embedder as a Dagster resource: configuration for core.embedder.Embedder, which does the work
(the query service uses that class directly)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from dagster_project.index.encoder import DEFAULT_MODEL, Embedder

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer


class EmbedderResource(dg.ConfigurableResource):
    model_name: str = Field(default=DEFAULT_MODEL, description="FLUX_EMBEDDING_MODEL")
    dimension: int = Field(default=384, description="FLUX_EMBEDDING_DIM")
    batch_size: int = Field(default=64, description="FLUX_EMBEDDING_BATCH_SIZE")
    query_prefix: str = Field(default="", description="FLUX_EMBEDDING_QUERY_PREFIX")

    def embedder(self) -> Embedder:
        return Embedder(self.model_name, self.dimension, self.batch_size, self.query_prefix)

    def model(self) -> SentenceTransformer:
        return self.embedder().model()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self.embedder().embed_documents(texts)

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder().embed_query(query)
