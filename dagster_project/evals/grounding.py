"""Fitting the grounding rule that the answer scorecard and the served path share.

The signals and the rule live in `retrieval/answering/grounding.py` (serving checks every generated claim with
them; retrieval may not import the evals). Here they are fitted on hand-labelled examples written for this project
(`grounding_examples.json`: paraphrases that are supported, related-sounding claims that are not);
`cross_validated_accuracy` reports the rule on examples it was not fitted on. The served path reads the fitted
thresholds from `retrieval/answering/grounding_rule.json`; `python -m dagster_project.evals.grounding` refits and
rewrites it (after the examples or the embedding model change), and the answer scorecard logs the rule it fits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from retrieval.answering.grounding import (
    RULE_PATH,
    Embed,
    GroundingRule,
    StoredRule,
    lexical_support,
    rule_record,
    semantic_support,
    semantic_supports,
    signals,
)

__all__ = [
    "EXAMPLES_PATH",
    "GRID",
    "Embed",
    "GroundingRule",
    "cross_validated_accuracy",
    "fit_rule",
    "fitted_rule",
    "lexical_support",
    "load_examples",
    "semantic_support",
    "signals",
    "write_served_rule",
]

EXAMPLES_PATH = Path(__file__).with_name("grounding_examples.json")
GRID = np.round(np.arange(0.30, 1.001, 0.05), 2)


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


def cross_validated_accuracy(features: Sequence[tuple[float, float]], labels: Sequence[bool], folds: int = 5) -> float:
    """Fit on k-1 folds, score the held-out fold (examples assigned to folds round-robin in file order)."""
    correct = 0
    for fold in range(folds):
        train = [i for i in range(len(labels)) if i % folds != fold]
        rule = fit_rule([features[i] for i in train], [labels[i] for i in train])
        correct += sum(rule.supported(*features[i]) == labels[i] for i in range(len(labels)) if i % folds == fold)
    return correct / len(labels)


def example_features(examples: list[dict], embed: Embed) -> list[tuple[float, float]]:
    """(lexical, semantic) per example, the embeddings in one batch."""
    pairs = [(e["claim"], e["evidence"]) for e in examples]
    semantic = semantic_supports(pairs, embed)
    return [(lexical_support(*pair), s) for pair, s in zip(pairs, semantic, strict=True)]


def fitted_rule(embed: Embed) -> tuple[GroundingRule, float]:
    """The rule fitted on every labelled example, and its cross-validated accuracy."""
    examples = load_examples()
    features = example_features(examples, embed)
    labels = [bool(e["supported"]) for e in examples]
    return fit_rule(features, labels), cross_validated_accuracy(features, labels)


def write_served_rule(embed: Embed, embedding_model: str, path: Path = RULE_PATH) -> StoredRule:
    """Refit on the examples and store the thresholds where the served path reads them."""
    rule, accuracy = fitted_rule(embed)
    stored = StoredRule(rule, embedding_model, accuracy, len(load_examples()))
    path.write_text(json.dumps(rule_record(stored), indent=2) + "\n")
    return stored


def main() -> None:
    from dagster_project.core.settings import get_settings
    from dagster_project.index.encoder import Embedder

    index = get_settings().index
    embedder = Embedder(model_name=index.embedding_model, dimension=index.embedding_dim)
    stored = write_served_rule(embedder.embed_documents, index.embedding_model)
    print(
        f"grounding rule {stored.rule.describe()} (cross-validated accuracy {stored.cv_accuracy:.3f} on "
        f"{stored.examples} examples, {stored.embedding_model}) written to {RULE_PATH}"
    )


if __name__ == "__main__":
    main()
