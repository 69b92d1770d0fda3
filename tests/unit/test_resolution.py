"""Resolution scores on small hand-made sets, checked against scipy's own implementations (imported by the tests
that compare: scipy.stats takes most of a second to load)."""

from __future__ import annotations

import numpy as np
import pytest

from dagster_project.resolution.scores import PathwaySets, benjamini_hochberg, name_similarity, score_pairs


def sets(pairs: dict[str, tuple[str, range]]) -> PathwaySets:
    ids = list(pairs)
    return PathwaySets(ids, [pairs[i][0] for i in ids], [frozenset(f"P{n:05d}" for n in pairs[i][1]) for i in ids])


REACTOME = sets(
    {
        "R-HSA-1": ("Glycolysis", range(0, 40)),
        "R-HSA-2": ("Mitotic processes", range(100, 800)),
        "R-HSA-3": ("Unrelated signalling", range(900, 940)),
    }
)
KEGG = sets(
    {
        "hsa00010": ("Glycolysis / Gluconeogenesis", range(5, 50)),
        "hsa04110": ("Cell cycle", range(150, 210)),
        "hsa09999": ("Something else", range(938, 1000)),
    }
)


def test_scores_match_set_arithmetic_and_scipy() -> None:
    from scipy.stats import hypergeom

    scores = score_pairs(REACTOME, KEGG).set_index(["reactome_id", "kegg_id"])
    row = scores.loc[("R-HSA-1", "hsa00010")]
    assert (row.shared, row.reactome_size, row.kegg_size) == (35, 40, 45)
    assert row.overlap == pytest.approx(35 / 40) and row.jaccard == pytest.approx(35 / 50)
    universe = len(set().union(*REACTOME.members, *KEGG.members))
    assert row.p_value == pytest.approx(hypergeom.sf(34, universe, 40, 45))
    assert ("R-HSA-1", "hsa04110") not in scores.index, "pairs sharing nothing are not materialized"


def test_benjamini_hochberg_counts_the_untested_pairs() -> None:
    from scipy.stats import false_discovery_control

    p = np.array([0.001, 0.02, 0.04, 0.5])
    padded = np.concatenate([p, np.ones(6)])
    assert benjamini_hochberg(p, total_tests=10) == pytest.approx(false_discovery_control(padded)[:4])


def test_name_similarity_ignores_filler_words() -> None:
    assert name_similarity("Signaling by WNT", "Wnt signaling pathway") == 1.0
    assert name_similarity("Apoptosis", "Cell cycle") == 0.0


def test_closed_form_upper_tail_matches_scipy() -> None:
    from scipy.stats import hypergeom

    from dagster_project.resolution.scores import upper_tail

    k = np.array([1, 1, 2, 5, 1])
    a = np.array([10, 300, 40, 50, 2])
    b = np.array([20, 150, 60, 45, 3])
    assert upper_tail(k, 20_000, a, b) == pytest.approx(hypergeom.sf(k - 1, 20_000, a, b), rel=1e-6)
