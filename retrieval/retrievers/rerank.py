"""Rerankers: a sentence-transformers CrossEncoder when weights are configured (FLUX_RERANKER_MODEL, a path or a
name), otherwise reciprocal-rank fusion of the dense and BM25 ranks (optionally plus the bi-encoder cosine).

RRF needs no weights and no score calibration between cosine and BM25, which live on different scales; it is
the fallback here because no cross-encoder weights can be downloaded offline. Answers record `name`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from dagster_project.core.settings import FluxConfigError, FluxSettings
from retrieval.model.types import Evidence

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, candidates: list[Evidence]) -> list[Evidence]:
        """Candidates best first, each with `score` set (and its own signal in `scores`)."""
        ...


class RRFReranker:
    def __init__(self, k: int = 60, cosine_weight: float = 0.0) -> None:
        self.k = k
        self.cosine_weight = cosine_weight
        self.name = f"rrf(k={k})" + (f"+cosine*{cosine_weight:g}" if cosine_weight else "")

    def rerank(self, query: str, candidates: list[Evidence]) -> list[Evidence]:
        scored = []
        for ev in candidates:
            fused = sum(1.0 / (self.k + ev.scores[rank]) for rank in ("dense_rank", "bm25_rank") if rank in ev.scores)
            fused += self.cosine_weight * ev.scores.get("cosine", 0.0)
            scored.append(ev.model_copy(update={"score": fused, "scores": {**ev.scores, "rrf": fused}}))
        return sorted(scored, key=lambda e: (-e.score, e.id))


@lru_cache(maxsize=2)
def _load_cross_encoder(model: str) -> CrossEncoder:
    from sentence_transformers import CrossEncoder

    return CrossEncoder(model, device="cpu")


class CrossEncoderReranker:
    def __init__(self, model: str, batch_size: int = 32) -> None:
        try:
            self.model = _load_cross_encoder(model)
        except (OSError, ValueError) as exc:
            raise FluxConfigError("FLUX_RERANKER_MODEL", f"cross-encoder {model!r} could not be loaded: {exc}") from exc
        self.batch_size = batch_size
        self.name = f"cross-encoder:{model}"

    def rerank(self, query: str, candidates: list[Evidence]) -> list[Evidence]:
        if not candidates:
            return []
        scores = self.model.predict(
            [(query, ev.text) for ev in candidates], batch_size=self.batch_size, show_progress_bar=False
        )
        scored = [
            ev.model_copy(update={"score": float(s), "scores": {**ev.scores, "cross_encoder": float(s)}})
            for ev, s in zip(candidates, scores, strict=True)
        ]
        return sorted(scored, key=lambda e: (-e.score, e.id))


def build_reranker(settings: FluxSettings) -> Reranker:
    if settings.retrieval.reranker_model:
        return CrossEncoderReranker(settings.retrieval.reranker_model)
    return RRFReranker(settings.retrieval.rrf_k, settings.retrieval.rrf_cosine_weight)
