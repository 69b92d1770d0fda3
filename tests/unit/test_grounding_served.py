"""Grounding in the served path (answering/grounding.py): unsupported claims are removed from the answer (claims,
prose, citations no kept claim uses) with a warning; low coverage runs a broadened, then an augmented retrieval; the
verdict goes into the answer and a `grounding` event. The embedder is a deterministic stand-in (word counts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from dagster_project.core.settings import FluxSettings
from retrieval.answering.grounding import (
    GroundingRule,
    Verifier,
    check_answer,
    grounded_answer,
    lexical_support,
    semantic_supports,
    served_rule,
    supported_claims,
)
from retrieval.answering.offline import OfflineProvider
from retrieval.model.answer import FALLBACK_TEXT, FinalAnswer, validate_answer
from retrieval.model.types import Evidence

RULE = GroundingRule(1.0, 0.65)  # the shape of the fitted rule (grounding_rule.json)
EVIDENCE = [
    Evidence(
        id="a",
        kind="chunk",
        source="reactome",
        title="Glycolysis",
        text="Glycolysis converts glucose into pyruvate in the cytosol. It yields two ATP.",
    ),
    Evidence(
        id="b",
        kind="chunk",
        source="kegg",
        title="TCA cycle",
        text="The citric acid cycle oxidises acetyl-CoA in the mitochondrial matrix.",
    ),
    Evidence(
        id="c",
        kind="chunk",
        source="pubmed",
        title="Warburg",
        text="Tumour cells reduce pyruvate to lactate even when oxygen is present.",
    ),
]
SHOWN = {e.id: f"{e.title}. {e.text}" for e in EVIDENCE}
SUPPORTED = [
    ("Glycolysis converts glucose into pyruvate.", ["a"]),
    ("The citric acid cycle oxidises acetyl-CoA.", ["b"]),
    ("Tumour cells reduce pyruvate to lactate.", ["c"]),
]
PLANTED = [
    ("Insulin receptors phosphorylate hexokinase in neurons.", ["a"]),
    ("Mitochondrial ribosomes translate BRCA1.", ["b", "a"]),
]


class Embedder:
    """Normalised word-count vectors, counting its calls and texts (the embedding is the costly signal)."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        vocab: dict[str, int] = {}
        rows = [[vocab.setdefault(w.strip(".,").lower(), len(vocab)) for w in t.split()] for t in texts]
        out = np.zeros((len(texts), max(len(vocab), 1)))
        for i, ids in enumerate(rows):
            for j in ids:
                out[i, j] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def answer_with(claims: list[tuple[str, list[str]]]) -> FinalAnswer:
    cited = list(dict.fromkeys(i for _, ids in claims for i in ids))
    raw = json.dumps(
        {
            "answer": " ".join(f"{t} [{ids[0]}]" for t, ids in claims),
            "confidence": 0.9,
            "claims": [{"text": t, "citations": ids} for t, ids in claims],
            "citations": cited,
        }
    )
    return validate_answer("What does glycolysis make?", raw, EVIDENCE)


@contextmanager
def no_stage(_name: str) -> Iterator[None]:
    yield


# --- the signals and the rule -------------------------------------------------------------------------------------
def test_lexical_support_is_the_share_of_key_terms_found() -> None:
    assert lexical_support("Glycolysis converts glucose into pyruvate.", SHOWN["a"]) == 1.0
    assert lexical_support("Glycolysis converts glucose into lactate.", SHOWN["a"]) == pytest.approx(3 / 4)


def test_semantic_supports_embeds_every_claim_and_sentence_in_one_call() -> None:
    embed = Embedder()
    pairs = [("glucose into pyruvate", SHOWN["a"]), ("an unrelated phrase entirely", SHOWN["a"])]
    close, far = semantic_supports(pairs, embed)
    assert len(embed.calls) == 1 and close > far
    assert len(embed.calls[0]) == len(set(embed.calls[0]))  # a text cited twice is embedded once


def test_the_embedding_is_only_computed_for_claims_the_lexical_signal_does_not_settle() -> None:
    embed = Embedder()
    assert supported_claims([(t, SHOWN[ids[0]]) for t, ids in SUPPORTED[:2]], RULE, embed) == [True, True]
    assert embed.calls == []
    supported_claims([(PLANTED[0][0], SHOWN["a"]), (SUPPORTED[0][0], SHOWN["a"])], RULE, embed)
    assert len(embed.calls) == 1 and SUPPORTED[0][0] not in embed.calls[0]


def test_the_served_rule_is_the_fitted_one_for_the_served_model() -> None:
    stored = served_rule()
    assert 0.3 <= stored.rule.lexical_min <= 1.0 and 0.3 <= stored.rule.semantic_min <= 1.0
    assert stored.embedding_model == FluxSettings().index.embedding_model and stored.examples > 0
    verifier = Verifier.from_settings(FluxSettings(grounding_min_coverage=0.6), Embedder())
    assert verifier.rule == stored.rule and verifier.min_coverage == 0.6


# --- one answer ---------------------------------------------------------------------------------------------------
def test_unsupported_claims_leave_the_claims_the_prose_and_their_citations() -> None:
    answer = answer_with(SUPPORTED[:2] + PLANTED)
    checked, check = check_answer(answer, SHOWN, RULE, Embedder())
    assert (check.checked, check.supported, check.coverage) == (4, 2, 0.5)
    assert [c.text for c in checked.claims] == [t for t, _ in SUPPORTED[:2]]
    assert set(check.unsupported) == {t for t, _ in PLANTED}
    for text, _ in PLANTED:
        assert text not in checked.answer
    # "a" and "b" are still cited by kept claims; nothing else was cited only by the planted claims.
    assert [c.id for c in checked.citations] == ["a", "b"] and checked.used_sources == ["kegg", "reactome"]
    assert "removed 2 claim(s) that the evidence they cite does not support" in checked.warnings
    assert checked.confidence == answer.confidence


def test_a_citation_only_an_unsupported_claim_used_is_dropped() -> None:
    answer = answer_with([SUPPORTED[0], ("Lactate dehydrogenase needs insulin in the liver.", ["c"])])
    checked, _ = check_answer(answer, SHOWN, RULE, Embedder())
    assert [c.id for c in checked.citations] == ["a"] and checked.used_sources == ["reactome"]


def test_an_answer_with_no_supported_claim_becomes_the_explicit_fallback() -> None:
    checked, check = check_answer(answer_with(PLANTED), SHOWN, RULE, Embedder())
    assert check.coverage == 0.0 and checked.answer == FALLBACK_TEXT and checked.confidence == 0.0
    assert not checked.claims and not checked.citations
    assert any("removed 2 claim(s)" in w for w in checked.warnings)


def test_a_claim_is_checked_against_the_text_as_the_model_was_shown_it() -> None:
    answer = answer_with([("It yields two ATP.", ["a"])])
    assert check_answer(answer, SHOWN, RULE, Embedder())[1].supported == 1
    cut_short = {**SHOWN, "a": "Glycolysis. Glycolysis converts glucose…"}  # the 200-character tier
    assert check_answer(answer, cut_short, RULE, Embedder())[1].supported == 0


def test_an_offline_extractive_answer_passes_without_a_single_embedding() -> None:
    raw = OfflineProvider().generate("What does glycolysis convert glucose into?", EVIDENCE)
    answer = validate_answer("q", raw, EVIDENCE)
    embed = Embedder()
    checked, check = check_answer(answer, SHOWN, RULE, embed)
    assert check.checked == len(answer.claims) > 0 and check.coverage == 1.0
    assert checked == answer and embed.calls == []


# --- the served loop ----------------------------------------------------------------------------------------------
class Script:
    """Answers per generation in order; records what each generation and retrieval was given."""

    def __init__(self, *answers: list[tuple[str, list[str]]]) -> None:
        self.answers = list(answers)
        self.given: list[list[str]] = []
        self.retrievals: list[tuple[str, list[str]]] = []
        self.events: list[tuple[str, dict[str, Any]]] = []

    def generate(self, evidence: list[Evidence]) -> tuple[FinalAnswer, dict[str, str]]:
        self.given.append([e.id for e in evidence])
        return answer_with(self.answers[len(self.given) - 1]), SHOWN

    def retrieve(self, retry: str, queries: list[str], evidence: list[Evidence]) -> list[Evidence]:
        self.retrievals.append((retry, queries))
        return [*evidence, Evidence(id=f"new-{retry}", kind="chunk", text="more")]

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        self.events.append((name, payload))

    def run(self, min_coverage: float = 0.8, retrieve: bool = True) -> tuple[FinalAnswer, list[Evidence]]:
        return grounded_answer(
            self.generate,
            EVIDENCE[:1],
            Verifier(RULE, Embedder(), min_coverage),
            self.retrieve if retrieve else None,
            self.emit,
            no_stage,
        )


def test_a_well_grounded_answer_needs_no_second_retrieval() -> None:
    script = Script(SUPPORTED)
    answer, evidence = script.run()
    assert script.retrievals == [] and len(script.given) == 1 and evidence == EVIDENCE[:1]
    assert answer.grounding is not None and answer.grounding.coverage == 1.0 and answer.grounding.retries == []
    assert [name for name, _ in script.events] == ["grounding"]
    assert script.events[-1][1] == answer.grounding.model_dump()


def test_low_coverage_broadens_then_augments_with_the_unsupported_claims() -> None:
    script = Script(SUPPORTED[:1] + PLANTED, [SUPPORTED[0], PLANTED[1]], SUPPORTED[:2] + PLANTED[:1])
    answer, evidence = script.run()
    assert [r for r, _ in script.retrievals] == ["broadened", "augmented"]
    assert script.retrievals[0][1] == []  # broadened: the plan's own queries, wider
    assert script.retrievals[1][1] == [PLANTED[1][0], PLANTED[0][0]]  # augmented: what was not supported
    assert script.given[1] == ["a", "new-broadened"] and script.given[2][-1] == "new-augmented"
    verdict = answer.grounding
    assert verdict is not None and verdict.retries == ["broadened", "augmented"]
    # Coverage 1/3, then 1/2, then 2/3: the last is the best, and still below 0.8 (nothing more runs).
    assert verdict.answered_from == "augmented" and verdict.coverage == pytest.approx(2 / 3, abs=1e-3)
    assert (verdict.claims_checked, verdict.claims_supported, verdict.claims_removed) == (3, 2, 1)
    assert [c.text for c in answer.claims] == [t for t, _ in SUPPORTED[:2]] and evidence[-1].id == "new-augmented"
    assert [p["answered_from"] for name, p in script.events if name == "grounding"] == [
        "first",
        "broadened",
        "augmented",
    ]


def test_the_best_attempt_is_the_answer_and_the_last_event_says_so() -> None:
    script = Script(SUPPORTED[:2] + PLANTED[:1], PLANTED, PLANTED)
    answer, evidence = script.run()
    assert answer.grounding is not None and answer.grounding.answered_from == "first"
    assert answer.grounding.retries == ["broadened", "augmented"] and evidence == EVIDENCE[:1]
    assert script.events[-1] == ("grounding", answer.grounding.model_dump()) and len(script.events) == 4


def test_no_retry_without_a_retrieval_an_answer_with_no_claims_or_coverage_above_the_minimum() -> None:
    assert Script(SUPPORTED[:1] + PLANTED).run(retrieve=False)[0].grounding.retries == []  # typed: facts complete
    empty = Script([])
    answer, _ = empty.run()
    assert empty.retrievals == [] and answer.grounding.coverage is None and answer.grounding.claims_checked == 0
    assert Script(SUPPORTED[:2] + PLANTED[:1]).run(min_coverage=0.6)[0].grounding.retries == []
