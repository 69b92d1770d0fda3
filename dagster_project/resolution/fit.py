"""Fit the resolution model on curated pairs, and cross-validate it by KEGG pathway.

Labels: within the KEGG pathways the curation judged, a scored pair is `equivalent` or `part_of` when the curators
list it so and `unrelated` otherwise. Folds split by KEGG pathway, so a pathway's candidates are never on both
sides. Thresholds are chosen on inner folds of the training part only; the test fold never tunes anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dagster_project.resolution.curation import EQUIVALENT, Curation, resolution_metrics
from dagster_project.resolution.model import (
    CLASSES,
    FEATURES,
    MIN_LENIENT_PRECISION,
    MIN_STRICT_PRECISION,
    REGULARIZATION_C,
    ResolutionModel,
    decide,
)

CV_FOLDS = 5
INNER_FOLDS = 4
THRESHOLD_GRID = np.round(np.linspace(0.02, 0.90, 89), 3)


class NotEnoughLabels(ValueError):
    """Too few judged KEGG pathways (or no pair of some class) among the candidates to fit or cross-validate."""


@dataclass(frozen=True)
class CrossValidation:
    metrics: dict[str, float]  # pooled over the out-of-fold predictions: the headline
    per_fold: list[dict[str, float]]
    predictions: pd.DataFrame  # out-of-fold: reactome_id, kegg_id, label, relation, direction, p_*


def labels_for(features: pd.DataFrame, curation: Curation) -> pd.DataFrame:
    """The candidate pairs of judged KEGG pathways, with their class index (CLASSES order) in `label`."""
    judged = features[features["kegg_id"].isin(curation.judged_kegg)].reset_index(drop=True)
    kind = [curation.pairs.get(pair) for pair in zip(judged["reactome_id"], judged["kegg_id"], strict=True)]
    judged["label"] = [0 if k is None else 1 if k == EQUIVALENT else 2 for k in kind]
    return judged


def fit_model(labelled: pd.DataFrame) -> ResolutionModel:
    """Standardize, fit the multinomial regression on every row, pick thresholds on inner out-of-fold output."""
    from sklearn.model_selection import GroupKFold

    _require_classes(labelled)
    groups = labelled["kegg_id"].to_numpy()
    if len(set(groups)) < 2:
        raise NotEnoughLabels("fitting needs candidates from at least two judged KEGG pathways")
    inner = np.zeros((len(labelled), len(CLASSES)))
    for train, test in GroupKFold(min(INNER_FOLDS, len(set(groups)))).split(labelled, groups=groups):
        if len(set(labelled["label"].iloc[train])) < len(CLASSES):
            continue  # this inner split lacks a class; its rows keep p = 0 and are never chosen
        inner[test] = _regression(labelled.iloc[train]).probabilities(labelled.iloc[test])
    eq_threshold, part_threshold = choose_thresholds(labelled, inner)
    return _regression(labelled, eq_threshold, part_threshold)


def _regression(rows: pd.DataFrame, eq_threshold: float = 0.5, part_threshold: float = 0.5) -> ResolutionModel:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    x = rows[list(FEATURES)].to_numpy(dtype=np.float64)
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    regression = LogisticRegression(C=REGULARIZATION_C, max_iter=5000)
    regression.fit((x - scaler.mean_) / scale, rows["label"].to_numpy())
    order = [list(regression.classes_).index(i) for i in range(len(CLASSES))]
    return ResolutionModel(
        features=FEATURES,
        mean=tuple(map(float, scaler.mean_)),
        scale=tuple(map(float, scale)),
        coef=tuple(tuple(map(float, regression.coef_[i])) for i in order),
        intercept=tuple(float(regression.intercept_[i]) for i in order),
        equivalent_threshold=float(eq_threshold),
        part_of_threshold=float(part_threshold),
        trained_on={
            "pairs": len(rows),
            "kegg_pathways": int(rows["kegg_id"].nunique()),
            **{f"label_{c}": int((rows["label"] == i).sum()) for i, c in enumerate(CLASSES)},
        },
    )


def choose_thresholds(labelled: pd.DataFrame, probabilities: np.ndarray) -> tuple[float, float]:
    """P(equivalent) bar: the highest recall whose strict and lenient precision stay above the minimums (best F1
    when none does). P(part_of) bar: best F1 of part-of recall against lenient precision."""
    label = labelled["label"].to_numpy()
    best_eq: tuple[float, float] = (-1.0, 0.5)
    fallback: tuple[float, float] = (-1.0, 0.5)
    for threshold in THRESHOLD_GRID:
        chosen = decide(labelled, probabilities, threshold, 2.0)["relation"].to_numpy() == "equivalent"
        hits, listed, made = (chosen & (label == 1)).sum(), (chosen & (label > 0)).sum(), max(chosen.sum(), 1)
        recall = hits / max((label == 1).sum(), 1)
        if hits / made >= MIN_STRICT_PRECISION and listed / made >= MIN_LENIENT_PRECISION and recall > best_eq[0]:
            best_eq = (recall, threshold)
        fallback = max(fallback, (_f1(hits / made, recall), threshold))
    eq_threshold = best_eq[1] if best_eq[0] >= 0 else fallback[1]
    best_part: tuple[float, float] = (-1.0, 0.5)
    for threshold in THRESHOLD_GRID:
        chosen = decide(labelled, probabilities, eq_threshold, threshold)["relation"].to_numpy() == "part_of"
        precision = (chosen & (label > 0)).sum() / max(chosen.sum(), 1)
        recall = (chosen & (label == 2)).sum() / max((label == 2).sum(), 1)
        best_part = max(best_part, (_f1(precision, recall), threshold))
    return float(eq_threshold), float(best_part[1])


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _require_classes(labelled: pd.DataFrame) -> None:
    present = set(labelled["label"])
    if present != set(range(len(CLASSES))):
        missing = [CLASSES[i] for i in range(len(CLASSES)) if i not in present]
        raise NotEnoughLabels(f"no curated {', '.join(missing)} pair among the scored candidates")


def cross_validate(features: pd.DataFrame, curation: Curation, folds: int = CV_FOLDS) -> CrossValidation:
    """k-fold CV by KEGG pathway; `curation` restricted to ids that exist. Metrics pool all held-out folds."""
    from sklearn.model_selection import GroupKFold

    labelled = labels_for(features, curation)
    groups = labelled["kegg_id"].to_numpy()
    if len(set(groups)) < folds:
        raise NotEnoughLabels(f"{len(set(groups))} judged KEGG pathways have candidates; {folds} folds need more")
    _require_classes(labelled)
    parts, per_fold = [], []
    for train, test in GroupKFold(folds).split(labelled, groups=groups):
        held_out = labelled.iloc[test]
        decided = fit_model(labelled.iloc[train]).classify(held_out)
        part = pd.concat([held_out[["reactome_id", "kegg_id", "label"]], decided], axis=1)
        parts.append(part)
        per_fold.append(resolution_metrics(prediction_rows(part), curation.with_kegg(set(held_out["kegg_id"]))))
    predictions = pd.concat(parts, ignore_index=True)
    return CrossValidation(resolution_metrics(prediction_rows(predictions), curation), per_fold, predictions)


def prediction_rows(frame: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    return list(zip(frame["reactome_id"], frame["kegg_id"], frame["relation"], frame["direction"], strict=True))


def mutual_best_baseline(scores: pd.DataFrame) -> pd.DataFrame:
    """The naive comparison: equivalent when each pathway is the other's best match by Jaccard (nothing fitted)."""
    best_in_kegg = scores.groupby("kegg_id")["jaccard"].transform("max")
    best_in_reactome = scores.groupby("reactome_id")["jaccard"].transform("max")
    mutual = (scores["jaccard"] >= best_in_kegg) & (scores["jaccard"] >= best_in_reactome)
    return pd.DataFrame(
        {
            "reactome_id": scores["reactome_id"],
            "kegg_id": scores["kegg_id"],
            "relation": np.where(mutual, "equivalent", "unrelated"),
            "direction": "",
        }
    )
