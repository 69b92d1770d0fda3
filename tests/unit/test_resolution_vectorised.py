"""The vectorised resolution kernels against their one-pair-at-a-time definitions, on random data (scipy.stats,
which takes most of a second to load, is imported by the tests that compare against it)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dagster_project.resolution.inputs import name_cosines
from dagster_project.resolution.model import Hierarchy, pair_features
from dagster_project.resolution.scores import PathwaySets, name_similarity, score_pairs, upper_tail


@pytest.mark.parametrize("population", [60, 12_575, 60_000])
def test_upper_tail_matches_scipy_from_the_bulk_to_the_far_tail(population: int) -> None:
    from scipy.stats import hypergeom

    rng = np.random.default_rng(population)
    a = rng.integers(1, min(population, 2_000), 600)
    b = rng.integers(1, min(population, 2_000), 600)
    low, high = np.maximum(1, a + b - population), np.minimum(a, b)
    k = np.minimum(low + (rng.random(600) * (high - low + 1)).astype(np.int64), high)
    expected = hypergeom.sf(k - 1, population, a, b)
    got = upper_tail(k, population, a, b)
    representable = expected > 1e-290
    assert (k >= 2).sum() > 300 and (expected[representable] < 1e-12).any(), "the cases reach the far tail"
    assert got[representable] == pytest.approx(expected[representable], rel=1e-6)
    assert np.all(got[~representable] < 1e-280)


def test_upper_tail_is_exact_when_the_overlap_is_the_whole_smaller_set() -> None:
    from scipy.stats import hypergeom

    # k = min(a, b): a single term, P(X = k)
    assert upper_tail(np.array([30]), 5_000, np.array([30]), np.array([400])) == pytest.approx(
        hypergeom.pmf(30, 5_000, 30, 400), rel=1e-9
    )


def _random_sets(rng: np.random.Generator, prefix: str, n: int, words: list[str]) -> PathwaySets:
    ids = [f"{prefix}{i}" for i in range(n)]
    names = [" ".join(rng.choice(words, size=rng.integers(1, 4))) for _ in ids]
    members = [frozenset(f"P{m}" for m in rng.choice(300, size=rng.integers(1, 60), replace=False)) for _ in ids]
    return PathwaySets(ids, names, members)


def test_pair_scores_and_features_equal_their_per_pair_definitions() -> None:
    rng = np.random.default_rng(7)
    words = ["signaling", "wnt", "cell", "cycle", "of", "apoptosis", "glycolysis", "pathway", "tp53"]
    reactome, kegg = _random_sets(rng, "R-", 40, words), _random_sets(rng, "hsa", 15, words)
    scores = score_pairs(reactome, kegg)
    names = dict(zip(reactome.ids + kegg.ids, reactome.names + kegg.names, strict=True))
    assert scores["name_similarity"].tolist() == [
        name_similarity(names[r], names[k]) for r, k in zip(scores["reactome_id"], scores["kegg_id"], strict=True)
    ]
    assert scores["reactome_name"].tolist() == [names[r] for r in scores["reactome_id"]]

    vectors = {
        i: v / np.linalg.norm(v) for i, v in zip(reactome.ids + kegg.ids[:-3], rng.normal(size=(52, 8)), strict=True)
    }
    cosine = name_cosines(scores, vectors, rows_per_block=3)  # several blocks; 3 KEGG names lack a vector
    zero = np.zeros(8)
    assert cosine == pytest.approx(
        [
            float(np.dot(vectors.get(r, zero), vectors.get(k, zero)))
            for r, k in zip(scores["reactome_id"], scores["kegg_id"], strict=True)
        ]
    )

    parents = {r: list(rng.choice(reactome.ids, size=rng.integers(0, 3), replace=False)) for r in reactome.ids}
    hierarchy = Hierarchy.from_parents(parents)
    features = pair_features(scores, hierarchy, cosine)
    jaccard = dict(zip(zip(scores["reactome_id"], scores["kegg_id"], strict=True), scores["jaccard"], strict=True))
    expected = [
        0.0
        if any(
            jaccard.get((other, k), 0.0) > value
            for other in (*hierarchy.parents.get(r, ()), *hierarchy.children.get(r, ()))
        )
        else 1.0
        for (r, k), value in jaccard.items()
    ]
    assert 0 < sum(expected) < len(expected), "the random hierarchy has peaks and non-peaks"
    assert features["hierarchy_peak"].tolist() == expected


def test_features_of_pairs_without_any_hierarchy_are_all_peaks() -> None:
    scores = pd.DataFrame(
        {
            "reactome_id": ["R-1", "R-2"],
            "kegg_id": ["k", "k"],
            "jaccard": [0.2, 0.5],
            "shared": [2, 5],
            "kegg_size": [10, 10],
            "reactome_size": [3, 5],
        }
    )
    features = pair_features(scores, Hierarchy.from_parents({}), np.zeros(2))
    assert features["hierarchy_peak"].tolist() == [1.0, 1.0]


def test_sources_that_share_no_protein_score_no_pair() -> None:
    # A release whose members HGNC cannot place yet (or an empty side) leaves no pair: an empty frame, no error.
    reactome = PathwaySets(["R-HSA-1"], ["Cell Cycle"], [frozenset({"P1"})])
    kegg = PathwaySets(["hsa04110"], ["Cell cycle"], [frozenset({"P2"})])
    assert score_pairs(reactome, kegg).empty
    assert score_pairs(PathwaySets([], [], []), kegg).empty
