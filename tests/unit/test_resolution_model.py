"""The resolution model's pure parts: curation parsing, the figures it is judged by, features, the decision rule,
the stored model, and a fit + cross-validation that can tell signal from shuffled labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dagster_project.resolution.curation import (
    EQUIVALENT,
    KEGG_IN_REACTOME,
    REACTOME_IN_KEGG,
    Curation,
    CurationError,
    load_curation,
    resolution_metrics,
)
from dagster_project.resolution.fit import NotEnoughLabels, cross_validate, fit_model, labels_for
from dagster_project.resolution.model import (
    CLASSES,
    FEATURES,
    MODEL_PATH,
    Hierarchy,
    ResolutionModel,
    decide,
    load_resolution_model,
    pair_features,
)

HEADER = "source prefix\tsource identifier\tsource name\trelation\ttarget prefix\ttarget identifier\ttarget name\n"


def _curation_file(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "curation.tsv"
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return path


def test_curation_reads_both_directions_and_equivalence_wins(tmp_path: Path) -> None:
    path = _curation_file(
        tmp_path,
        [
            "kegg.pathway\thsa00010\tGlycolysis\tBFO:0000050\treactome\tR-HSA-1\tMetabolism",
            "reactome\tR-HSA-2\tGluconeogenesis\tBFO:0000050\tkegg.pathway\thsa00010\tGlycolysis",
            "reactome\tR-HSA-3\tGlycolysis\tBFO:0000050\tkegg.pathway\thsa00010\tGlycolysis",
            "kegg.pathway\thsa00010\tGlycolysis\tskos:exactMatch\treactome\tR-HSA-3\tGlycolysis",
        ],
    )
    curation = load_curation(path)
    assert curation.pairs == {
        ("R-HSA-1", "hsa00010"): KEGG_IN_REACTOME,
        ("R-HSA-2", "hsa00010"): REACTOME_IN_KEGG,
        ("R-HSA-3", "hsa00010"): EQUIVALENT,
    }
    assert curation.judged_kegg == {"hsa00010"}
    assert set(curation.restricted_to({"R-HSA-1", "hsa00010"}).pairs) == {("R-HSA-1", "hsa00010")}


@pytest.mark.parametrize(
    "row, message",
    [
        ("kegg.pathway\thsa00010\tG\tskos:broadMatch\treactome\tR-HSA-1\tM", "unknown relation"),
        ("go\tGO:1\tG\tskos:exactMatch\treactome\tR-HSA-1\tM", "not a KEGG/Reactome pair"),
        ("kegg.pathway\thsa00010\tG", "expected 7 columns"),
    ],
)
def test_a_malformed_curation_line_is_named(tmp_path: Path, row: str, message: str) -> None:
    with pytest.raises(CurationError, match=f"curation.tsv:2: {message}"):
        load_curation(_curation_file(tmp_path, [row]))


def test_metrics_count_strict_lenient_direction_and_ignore_unjudged_pathways() -> None:
    curation = Curation(
        {
            ("R1", "k1"): EQUIVALENT,
            ("R2", "k1"): KEGG_IN_REACTOME,
            ("R3", "k2"): EQUIVALENT,
            ("R4", "k2"): REACTOME_IN_KEGG,
        },
        frozenset({"k1", "k2"}),
    )
    predicted = [
        ("R1", "k1", "equivalent", ""),  # strict hit
        ("R2", "k1", "equivalent", ""),  # lenient hit only (curated part-of)
        ("R9", "k2", "equivalent", ""),  # miss
        ("R4", "k2", "part_of", "kegg_in_reactome"),  # part-of found, wrong direction
        ("R7", "k9", "equivalent", ""),
    ]  # k9 not judged: ignored
    m = resolution_metrics(predicted, curation)
    assert m["equivalence_recall"] == pytest.approx(1 / 2)
    assert m["equivalence_precision_strict"] == pytest.approx(1 / 3)
    assert m["equivalence_precision_lenient"] == pytest.approx(2 / 3)
    assert m["part_of_recall"] == pytest.approx(1 / 2)
    assert m["part_of_direction_accuracy"] == 0.0
    assert m["equivalent_predicted"] == 3


def _scores(rows: list[tuple[str, str, int, int, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["reactome_id", "kegg_id", "reactome_size", "kegg_size", "shared"])
    frame["jaccard"] = frame["shared"] / (frame["reactome_size"] + frame["kegg_size"] - frame["shared"])
    return frame


def test_features_see_the_hierarchy_and_the_name_gaps() -> None:
    scores = _scores([("R-parent", "k1", 100, 20, 20), ("R-child", "k1", 22, 20, 18), ("R-child", "k2", 22, 30, 4)])
    hierarchy = Hierarchy.from_parents({"R-child": ["R-parent"]})
    features = pair_features(scores, hierarchy, np.array([0.4, 0.9, 0.2])).set_index(["reactome_id", "kegg_id"])
    assert features.loc[("R-child", "k1"), "hierarchy_peak"] == 1.0  # Jaccard 18/24 beats the parent's 20/100
    assert features.loc[("R-parent", "k1"), "hierarchy_peak"] == 0.0
    assert features.loc[("R-parent", "k1"), "name_gap_in_kegg"] == pytest.approx(0.4 - 0.9)
    assert features.loc[("R-child", "k2"), "name_gap_in_reactome"] == pytest.approx(0.2 - 0.9)
    assert features.loc[("R-child", "k2"), "inverse_rank_in_reactome"] == 0.5
    assert features.loc[("R-child", "k1"), "kegg_in_reactome"] == pytest.approx(18 / 20)


def test_decision_keeps_one_equivalent_per_kegg_pathway_and_points_part_of_inward() -> None:
    features = pd.DataFrame(
        {
            "reactome_id": ["R1", "R2", "R3"],
            "kegg_id": ["k1", "k1", "k1"],
            "kegg_in_reactome": [0.9, 0.95, 0.1],
            "reactome_in_kegg": [0.8, 0.2, 0.9],
        }
    )
    probabilities = np.array([[0.2, 0.7, 0.1], [0.1, 0.6, 0.3], [0.3, 0.1, 0.6]])
    decided = decide(features, probabilities, equivalent_threshold=0.5, part_of_threshold=0.25)
    assert decided["relation"].tolist() == ["equivalent", "part_of", "part_of"]
    assert decided["direction"].tolist() == ["", "kegg_in_reactome", "reactome_in_kegg"]
    assert decided["confidence"].tolist() == pytest.approx([0.7, 0.3, 0.6])


def test_stored_model_round_trips_and_its_version_follows_the_numbers() -> None:
    model = load_resolution_model(MODEL_PATH)
    assert model.features == FEATURES and len(model.coef) == len(CLASSES)
    again = ResolutionModel.from_json(model.to_json())
    assert again == model and again.method_version == model.method_version
    changed = ResolutionModel.from_json(model.to_json().replace(str(model.intercept[0]), str(model.intercept[0] + 1)))
    assert changed.method_version != model.method_version
    rows = pd.DataFrame(np.random.default_rng(0).random((5, len(FEATURES))), columns=list(FEATURES))
    assert model.probabilities(rows).sum(axis=1) == pytest.approx(np.ones(5))


def _synthetic(rng: np.random.Generator, pathways: int = 60, candidates: int = 12) -> tuple[pd.DataFrame, Curation]:
    """Each KEGG pathway has one true counterpart (high overlap, similar name), two containing parents, and noise."""
    rows, pairs = [], {}
    for k in range(pathways):
        for c in range(candidates):
            kind = "eq" if c == 0 else "part" if c in (1, 2) else "none"
            base = {"eq": 0.75, "part": 0.45, "none": 0.1}[kind]
            rows.append(
                {
                    "reactome_id": f"R{k}-{c}",
                    "kegg_id": f"k{k}",
                    "sqrt_jaccard": base + rng.normal(0, 0.08),
                    "kegg_in_reactome": min(1.0, base + 0.3 * (kind == "part") + rng.normal(0, 0.05)),
                    "reactome_in_kegg": base + rng.normal(0, 0.08),
                    "name_cosine": {"eq": 0.85, "part": 0.5, "none": 0.2}[kind] + rng.normal(0, 0.1),
                    "name_gap_in_kegg": 0.0,
                    "name_gap_in_reactome": 0.0,
                    "inverse_rank_in_reactome": 1.0 if kind == "eq" else rng.uniform(0.1, 0.6),
                    "hierarchy_peak": float(kind == "eq"),
                }
            )
            if kind == "eq":
                pairs[(f"R{k}-{c}", f"k{k}")] = EQUIVALENT
            elif kind == "part":
                pairs[(f"R{k}-{c}", f"k{k}")] = KEGG_IN_REACTOME
    return pd.DataFrame(rows), Curation(pairs, frozenset(f"k{k}" for k in range(pathways)))


def test_cross_validation_finds_signal_and_collapses_on_shuffled_features() -> None:
    features, curation = _synthetic(np.random.default_rng(1))
    cv = cross_validate(features, curation)
    assert cv.metrics["equivalence_recall"] >= 0.9 and cv.metrics["equivalence_precision_strict"] >= 0.9
    assert cv.metrics["part_of_direction_accuracy"] >= 0.9 and len(cv.per_fold) == 5
    assert set(cv.predictions["kegg_id"]) == set(curation.judged_kegg)  # every pathway held out exactly once
    shuffled = features.copy()
    order = np.random.default_rng(2).permutation(len(shuffled))
    shuffled[list(FEATURES)] = shuffled[list(FEATURES)].to_numpy()[order]
    assert cross_validate(shuffled, curation).metrics["equivalence_recall"] < 0.5


def test_fitting_needs_every_class_and_enough_pathways() -> None:
    features, curation = _synthetic(np.random.default_rng(3), pathways=3)
    with pytest.raises(NotEnoughLabels, match="3 judged KEGG pathways"):
        cross_validate(features, curation)
    only_equivalents = Curation({p: EQUIVALENT for p in curation.of_kind(EQUIVALENT)}, curation.judged_kegg)
    with pytest.raises(NotEnoughLabels, match="part_of"):
        fit_model(labels_for(features, only_equivalents))
