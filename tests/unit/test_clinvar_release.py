"""Two ClinVar releases compared (associations, genes and conditions added and removed) and the churn gate that
stops one that loses too much; pure, no database."""

from __future__ import annotations

from dagster_project.core.setting_groups import ReleaseSettings
from dagster_project.releases.associations import Association, diff_associations
from dagster_project.releases.compare import GATE_KIND
from dagster_project.releases.gates import evaluate

BEFORE = [
    Association("7157", "C0085390", "MONDO", "TP53", "Li-Fraumeni syndrome"),
    Association("7157", "C0085390", "OMIM", "TP53", "Li-Fraumeni syndrome"),
    Association("672", "C0677776", "MONDO", "BRCA1", "Hereditary breast ovarian cancer syndrome"),
    Association("675", "C0677776", "MONDO", "BRCA2", "Hereditary breast ovarian cancer syndrome"),
]


def test_added_and_removed_associations_genes_and_conditions() -> None:
    after = [*BEFORE[:2], BEFORE[3], Association("5728", "C0376358", "MONDO", "PTEN", "Malignant tumor of prostate")]
    diff = diff_associations("r1", BEFORE, "r2", after)
    assert diff.figures() == {
        "associations_before": 4,
        "associations_after": 4,
        "associations_added": 1,
        "associations_removed": 1,
        "association_genes_before": 3,
        "association_genes_added": 1,
        "association_genes_removed": 1,
        "diseases_before": 2,
        "diseases_added": 1,
        "diseases_removed": 0,
    }
    assert diff.rows() == [
        ("association_added", "5728|C0376358|MONDO", {"symbol": "PTEN", "disease": "Malignant tumor of prostate"}),
        (
            "association_removed",
            "672|C0677776|MONDO",
            {"symbol": "BRCA1", "disease": "Hereditary breast ovarian cancer syndrome"},
        ),
    ]
    assert diff_associations("r1", BEFORE, "r2", list(reversed(BEFORE))).rows() == []  # order does not matter


def test_the_gate_stops_a_release_that_loses_a_large_share_and_names_the_setting() -> None:
    assert GATE_KIND["clinvar"] == "associations"
    cut = diff_associations("r1", BEFORE, "r2", BEFORE[:1]).figures()  # a file cut short
    verdict = evaluate("associations", "ClinVar release r2", cut, ReleaseSettings())
    assert not verdict.passed and verdict.shares["associations_removed_share"] == 0.75
    assert "FLUX_CHURN_MAX_ASSOCIATIONS_LOST" in verdict.message and "FLUX_CHURN_MAX_DISEASES_LOST" in verdict.message
    assert evaluate(
        "associations", "ClinVar", cut, ReleaseSettings(churn_max_associations_lost=1, churn_max_diseases_lost=1)
    ).passed
    first = diff_associations("none", [], "r1", BEFORE).figures()
    assert evaluate("associations", "ClinVar", first, ReleaseSettings()).passed  # nothing to lose
