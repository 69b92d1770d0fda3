"""Is a claim supported by the evidence it cites? Two signals and one fitted rule.

- lexical: the share of the claim's key terms (stems) found in the cited text;
- semantic: the best embedding cosine between the claim and a sentence of the cited text.
A claim is grounded when lexical ≥ a or semantic ≥ b. (a, b) are fitted on hand-labelled examples written for
this project (`grounding_examples.json`: paraphrases that are supported, related-sounding claims that are not);
`cross_validated_accuracy` reports the rule on examples it was not fitted on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.offline import sentences
from retrieval.terms import key_terms

EXAMPLES_PATH = Path(__file__).with_name("grounding_examples.json")
GRID = np.round(np.arange(0.30, 1.001, 0.05), 2)
Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class GroundingRule:
    lexical_min: float
    semantic_min: float

    def supported(self, lexical: float, semantic: float) -> bool:
        return lexical >= self.lexical_min or semantic >= self.semantic_min


def lexical_support(claim: str, cited_text: str) -> float:
    terms = key_terms(claim)
    if not terms:
        return 1.0
    found = set(key_terms(cited_text))
    return sum(t in found for t in terms) / len(terms)


def semantic_support(claim: str, cited_text: str, embed: Embed) -> float:
    pieces = sentences(cited_text) or [cited_text]
    vectors = np.asarray(embed([claim, *pieces]))
    return float(np.max(vectors[1:] @ vectors[0]))


def signals(claim: str, cited_text: str, embed: Embed) -> tuple[float, float]:
    return lexical_support(claim, cited_text), semantic_support(claim, cited_text, embed)


def load_examples(path: Path = EXAMPLES_PATH) -> list[dict]:
    return json.loads(path.read_text())["examples"]


def fit_rule(features: Sequence[tuple[float, float]], labels: Sequence[bool]) -> GroundingRule:
    """The (a, b) pair with the best accuracy; ties go to the stricter rule (higher thresholds)."""
    best: tuple[float, float, float] = (-1.0, 0.0, 0.0)
    for a in GRID:
        for b in GRID:
            rule = GroundingRule(float(a), float(b))
            accuracy = float(np.mean([rule.supported(*f) == y for f, y in zip(features, labels, strict=True)]))
            best = max(best, (accuracy, float(a), float(b)))
    return GroundingRule(best[1], best[2])


def cross_validated_accuracy(features: Sequence[tuple[float, float]], labels: Sequence[bool],
                             folds: int = 5) -> float:
    """Fit on k-1 folds, score the held-out fold (examples assigned to folds round-robin in file order)."""
    correct = 0
    for fold in range(folds):
        train = [i for i in range(len(labels)) if i % folds != fold]
        rule = fit_rule([features[i] for i in train], [labels[i] for i in train])
        correct += sum(rule.supported(*features[i]) == labels[i] for i in range(len(labels)) if i % folds == fold)
    return correct / len(labels)


def fitted_rule(embed: Embed) -> tuple[GroundingRule, float]:
    """The rule fitted on every labelled example, and its cross-validated accuracy."""
    examples = load_examples()
    features = [signals(e["claim"], e["evidence"], embed) for e in examples]
    labels = [bool(e["supported"]) for e in examples]
    return fit_rule(features, labels), cross_validated_accuracy(features, labels)
