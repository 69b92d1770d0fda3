"""The offline judge's threshold fit: balanced accuracy on right vs hard-negative evidence, held-out half."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dagster_project.evals.judge_fit import accuracy, fit, fit_threshold


def test_the_threshold_separates_right_from_hard_negative_coverage() -> None:
    pairs = np.array([[0.9, 0.3], [0.7, 0.5], [0.65, 0.55], [1.0, 0.2]])
    threshold = fit_threshold(pairs)
    assert 0.55 < threshold <= 0.65 and accuracy(pairs, threshold) == (1.0, 1.0)
    # A judge that says "good" to everything is perfect on one half and useless on the other.
    assert accuracy(pairs, 0.0) == (1.0, 0.0)


def test_fit_reports_the_half_it_did_not_fit_on(tmp_path: Path) -> None:
    topics = [
        "statins lower cholesterol in elderly patients",
        "aspirin prevents stroke after surgery",
        "metformin improves glycaemic control in obesity",
        "exercise reduces depression in adolescents",
    ]
    items = {
        str(i): {
            "QUESTION": f"Do {t.split()[0]} help {t.split()[-1]}?",
            "CONTEXTS": [f"We studied whether {t}.", "Outcomes were recorded at one year."],
        }
        for i, t in enumerate(topics * 2)
    }
    path = tmp_path / "ori_pqal.json"
    path.write_text(json.dumps(items))
    result = fit(path)
    assert result.fit_pairs == result.held_out_pairs == 4
    assert all(0.0 <= x <= 1.0 for x in (*result.fit_accuracy, *result.held_out_accuracy))
