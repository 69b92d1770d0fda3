"""Is a claim supported by the evidence it cites? Two signals, one fitted rule, and what the served path does with
an answer whose claims are not all supported.

- lexical: the share of the claim's key terms (stems) found in the cited text;
- semantic: the best embedding cosine between the claim and a sentence of the cited text.
A claim is grounded when lexical ≥ a or semantic ≥ b. (a, b) are fitted on hand-labelled examples
(dagster_project/evals/grounding_examples.json) by `python -m dagster_project.evals.grounding`, which writes them
to grounding_rule.json beside this module. Serving only reads that file: the examples and the fit belong to the
evals, which retrieval may not import, and a served answer must not depend on a fit run at start-up.

In the served path (Answerer._generate) claims the rule rejects are removed: from the claims, from the prose (rebuilt
from the kept claims, as validation does) and the citations no kept claim uses. When the share of supported claims
is below FLUX_GROUNDING_MIN_COVERAGE a second retrieval runs before the answer is final: first broadened (no source
filter, more candidates), then augmented with the unsupported claims as queries; the attempt with the best coverage
is the answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dagster_project.core.settings import FluxSettings
from retrieval.answering.offline import sentences, strip_markers
from retrieval.model.answer import FALLBACK_TEXT, AttemptName, FinalAnswer, GroundingVerdict, RetryName
from retrieval.model.terms import key_terms
from retrieval.model.types import Evidence

log = logging.getLogger(__name__)
RULE_PATH = Path(__file__).with_name("grounding_rule.json")
RETRIES: tuple[RetryName, ...] = ("broadened", "augmented")
MAX_AUGMENT_QUERIES = 4  # each is one more retrieval pass; the first few unsupported claims say what is missing
Embed = Callable[[list[str]], np.ndarray]
# What the model was shown, and what it answered from it: (answer, evidence id → cited text as shown).
Generate = Callable[[list[Evidence]], tuple[FinalAnswer, dict[str, str]]]
# (retry, extra queries, evidence so far) → the evidence to answer from next.
Retrieve = Callable[[RetryName, list[str], list[Evidence]], list[Evidence]]
Emit = Callable[[str, dict[str, Any]], None]
Stage = Callable[[str], AbstractContextManager[None]]


@dataclass(frozen=True)
class GroundingRule:
    lexical_min: float
    semantic_min: float

    def supported(self, lexical: float, semantic: float) -> bool:
        return lexical >= self.lexical_min or semantic >= self.semantic_min

    def describe(self) -> str:
        return f"lexical>={self.lexical_min} or cosine>={self.semantic_min}"


@dataclass(frozen=True)
class StoredRule:
    """The fitted rule serving uses, with what it was fitted with (the cosine threshold belongs to one model)."""

    rule: GroundingRule
    embedding_model: str
    cv_accuracy: float
    examples: int


def one_by_one(embed_one: Callable[[str], list[float]]) -> Embed:
    """A batch embedder from a one-text one (a pipeline built without the model's batch call)."""
    return lambda texts: np.asarray([embed_one(t) for t in texts])


def lexical_support(claim: str, cited_text: str) -> float:
    terms = key_terms(claim)
    if not terms:
        return 1.0
    found = set(key_terms(cited_text))
    return sum(t in found for t in terms) / len(terms)


def semantic_supports(pairs: Sequence[tuple[str, str]], embed: Embed) -> list[float]:
    """The best claim-to-sentence cosine of each (claim, cited text) pair, from one embedding call over every claim
    and every sentence (a text cited twice is embedded once). `embed` returns normalised rows."""
    if not pairs:
        return []
    texts: dict[str, int] = {}
    plan = [
        (
            texts.setdefault(claim, len(texts)),
            [texts.setdefault(piece, len(texts)) for piece in (sentences(cited) or [cited])],
        )
        for claim, cited in pairs
    ]
    vectors = np.asarray(embed(list(texts)))
    return [float(np.max(vectors[pieces] @ vectors[claim])) for claim, pieces in plan]


def semantic_support(claim: str, cited_text: str, embed: Embed) -> float:
    return semantic_supports([(claim, cited_text)], embed)[0]


def signals(claim: str, cited_text: str, embed: Embed) -> tuple[float, float]:
    return lexical_support(claim, cited_text), semantic_support(claim, cited_text, embed)


def supported_claims(pairs: Sequence[tuple[str, str]], rule: GroundingRule, embed: Embed) -> list[bool]:
    """The rule on each (claim, cited text). The embedding is the costly signal: computed, in one batch, only for
    the claims the lexical signal does not settle (an extractive answer never needs it)."""
    lexical = [lexical_support(claim, cited) for claim, cited in pairs]
    unsettled = [i for i, value in enumerate(lexical) if value < rule.lexical_min]
    semantic = dict(zip(unsettled, semantic_supports([pairs[i] for i in unsettled], embed), strict=True))
    return [rule.supported(lexical[i], semantic.get(i, 0.0)) for i in range(len(pairs))]


@lru_cache(maxsize=4)
def served_rule(path: Path = RULE_PATH) -> StoredRule:
    record = json.loads(path.read_text())
    return StoredRule(
        GroundingRule(float(record["lexical_min"]), float(record["semantic_min"])),
        str(record["embedding_model"]),
        float(record["cv_accuracy"]),
        int(record["examples"]),
    )


def rule_record(stored: StoredRule) -> dict[str, Any]:
    """What grounding_rule.json holds (written by the evals' refit)."""
    return {
        "lexical_min": stored.rule.lexical_min,
        "semantic_min": stored.rule.semantic_min,
        "embedding_model": stored.embedding_model,
        "cv_accuracy": round(stored.cv_accuracy, 4),
        "examples": stored.examples,
        "fitted_by": "python -m dagster_project.evals.grounding (dagster_project/evals/grounding_examples.json)",
    }


# --- one answer ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    checked: int
    supported: int
    unsupported: tuple[str, ...]  # the removed claims' texts: the augmented retrieval's queries

    @property
    def coverage(self) -> float | None:
        return self.supported / self.checked if self.checked else None

    def low(self, minimum: float) -> bool:
        # An answer with no claims is the explicit fallback (a failed or empty generation): not a grounding matter.
        return self.coverage is not None and self.coverage < minimum


def check_answer(
    answer: FinalAnswer, shown: Mapping[str, str], rule: GroundingRule, embed: Embed
) -> tuple[FinalAnswer, Check]:
    """The answer without its unsupported claims, and what was found. `shown`: each evidence id's text as the model
    saw it (cut by its context tier), since a claim can only be grounded in what the model was given."""
    pairs = [(strip_markers(c.text), " ".join(shown.get(i, "") for i in c.citations)) for c in answer.claims]
    keep = supported_claims(pairs, rule, embed)
    unsupported = tuple(text for (text, _), ok in zip(pairs, keep, strict=True) if not ok)
    return remove_claims(answer, keep), Check(len(keep), sum(keep), unsupported)


def remove_claims(answer: FinalAnswer, keep: Sequence[bool]) -> FinalAnswer:
    removed = list(keep).count(False)
    if not removed:
        return answer
    warnings = [*answer.warnings, f"removed {removed} claim(s) that the evidence they cite does not support"]
    kept = [c for c, ok in zip(answer.claims, keep, strict=True) if ok]
    if not kept:
        return answer.model_copy(
            update={
                "answer": FALLBACK_TEXT,
                "claims": [],
                "citations": [],
                "used_sources": [],
                "confidence": 0.0,
                "reasoning_summary": "",
                "warnings": [*warnings, "no claim is supported by the evidence it cites"],
            }
        )
    still_cited = {i for c in kept for i in c.citations}
    orphaned = {i for c, ok in zip(answer.claims, keep, strict=True) if not ok for i in c.citations} - still_cited
    citations = [c for c in answer.citations if c.id not in orphaned]
    # The prose is the model's own and may state what was removed: rebuilt from the kept claims, as validation does.
    return answer.model_copy(
        update={
            "answer": " ".join(c.text for c in kept),
            "claims": kept,
            "citations": citations,
            "warnings": warnings,
            "used_sources": sorted({c.source for c in citations if c.source}),
        }
    )


# --- the served loop ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verifier:
    rule: GroundingRule
    embed: Embed
    min_coverage: float

    @classmethod
    def from_settings(cls, settings: FluxSettings, embed: Embed) -> Verifier:
        stored = served_rule()
        if stored.embedding_model != settings.index.embedding_model:  # its cosine threshold is another model's
            log.warning(
                "grounding rule fitted with %s, serving embeds with %s: refit it (python -m "
                "dagster_project.evals.grounding)",
                stored.embedding_model,
                settings.index.embedding_model,
            )
        return cls(stored.rule, embed, settings.retrieval.grounding_min_coverage)


@dataclass(frozen=True)
class _Attempt:
    name: AttemptName
    answer: FinalAnswer
    check: Check
    evidence: list[Evidence]

    def rank(self) -> float:
        return -1.0 if self.check.coverage is None else self.check.coverage


def grounded_answer(
    generate: Generate,
    evidence: list[Evidence],
    verifier: Verifier,
    retrieve: Retrieve | None,
    emit: Emit,
    stage: Stage,
) -> tuple[FinalAnswer, list[Evidence]]:
    """Generate, check, and while coverage is low retrieve again (broadened, then augmented) and regenerate. The
    answer with the best coverage (the later one on a tie: it saw more evidence) and the evidence it was given."""
    retries: list[RetryName] = []
    attempt = _attempt("first", generate, evidence, verifier, stage)
    best, unsupported = attempt, list(attempt.check.unsupported)
    emit("grounding", _verdict(attempt, verifier, retries).model_dump())
    for name in RETRIES:
        if retrieve is None or not attempt.check.low(verifier.min_coverage):
            break
        # Augmented: what is still unsupported first, then what earlier attempts could not support.
        queries = [] if name == "broadened" else list(dict.fromkeys(unsupported))[:MAX_AUGMENT_QUERIES]
        retries.append(name)
        attempt = _attempt(name, generate, retrieve(name, queries, attempt.evidence), verifier, stage)
        best = attempt if attempt.rank() >= best.rank() else best
        unsupported = [*attempt.check.unsupported, *unsupported]
        emit("grounding", _verdict(attempt, verifier, retries).model_dump())
    verdict = _verdict(best, verifier, retries)
    if best is not attempt:  # the last event always states the verdict the answer carries
        emit("grounding", verdict.model_dump())
    return best.answer.model_copy(update={"grounding": verdict}), best.evidence


def _attempt(
    name: AttemptName, generate: Generate, evidence: list[Evidence], verifier: Verifier, stage: Stage
) -> _Attempt:
    answer, shown = generate(evidence)
    with stage("ground"):
        answer, check = check_answer(answer, shown, verifier.rule, verifier.embed)
    return _Attempt(name, answer, check, evidence)


def _verdict(attempt: _Attempt, verifier: Verifier, retries: list[RetryName]) -> GroundingVerdict:
    check = attempt.check
    coverage = None if check.coverage is None else round(check.coverage, 4)
    return GroundingVerdict(
        claims_checked=check.checked,
        claims_supported=check.supported,
        claims_removed=check.checked - check.supported,
        coverage=coverage,
        min_coverage=verifier.min_coverage,
        rule=verifier.rule.describe(),
        retries=list(retries),
        answered_from=attempt.name,
    )
