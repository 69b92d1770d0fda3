"""Resolution scorecard: the Reactome ↔ KEGG mapping against expert curation.

Headline (`cv_*`, gated): 5-fold cross-validation by KEGG pathway of the whole method (features → fit → thresholds
→ decision) on the curation's development half, rebuilt from the stored `pathway_mappings` scores so no model is
re-run. Beside it, in the same run: the shipped model's own mapping on that half (`in_sample_*`: it was fitted
there, so it is optimistic and not gated) and a naive mutual-best-Jaccard baseline (`baseline_*`). The 20
well-known counterparts stay as a smoke test (`known_pairs_recall`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.evals.questions import KNOWN_COUNTERPARTS
from dagster_project.resolution.curation import EQUIVALENT, Curation, load_curation, resolution_metrics
from dagster_project.resolution.fit import (
    CrossValidation,
    NotEnoughLabels,
    cross_validate,
    mutual_best_baseline,
    prediction_rows,
)
from dagster_project.resolution.inputs import load_hierarchy
from dagster_project.resolution.model import pair_features
from dagster_project.resolution.pathway_sets import active_pathway_ids


@dataclass
class ResolutionEvaluation:
    metrics: dict[str, float]
    rows: list[dict]
    mappings: pd.DataFrame
    cross_validation: CrossValidation | None = None
    notes: list[str] = field(default_factory=list)


def load_mappings(engine: Engine) -> pd.DataFrame:
    with engine.connect() as conn:
        return pd.read_sql(
            text(
                "SELECT reactome_id, kegg_id, reactome_size, kegg_size, shared, overlap, jaccard, q_value,"
                " name_similarity, name_cosine, relation, direction, confidence, p_equivalent, method_version"
                " FROM pathway_mappings ORDER BY reactome_id, kegg_id"
            ),
            conn,
        )


def mappings_digest(engine: Engine) -> str:
    """A hash of every stored mapping row: the resolution scorecard's input besides the curation."""
    with engine.connect() as conn:
        return str(
            conn.execute(
                text(
                    "SELECT coalesce(md5(string_agg(m::text, '|' ORDER BY m.reactome_id, m.kegg_id)),"
                    " '-') FROM pathway_mappings m"
                )
            ).scalar_one()
        )


def _prefixed(prefix: str, metrics: dict[str, float]) -> dict[str, float]:
    return {f"{prefix}_{k}": v for k, v in metrics.items()}


def evaluate(engine: Engine, curation_path: Path | None) -> ResolutionEvaluation:
    mappings = load_mappings(engine)
    present = active_pathway_ids(engine)
    counts = mappings["relation"].value_counts().to_dict()
    result = ResolutionEvaluation(
        metrics={f"pairs_{k}": float(counts.get(k, 0)) for k in ("equivalent", "part_of", "unrelated")},
        rows=_known_pair_rows(mappings, present),
        mappings=mappings,
    )
    known = [r for r in result.rows if r["variant"] == "known_pair"]
    result.metrics["known_pairs_recall"] = sum(r["resolved"] for r in known) / len(known) if known else 0.0
    if curation_path is None or not curation_path.is_file():
        result.notes.append(f"no curation at {curation_path} (FLUX_RESOLUTION_CURATION): only the smoke test ran")
        return result
    curation = load_curation(curation_path).restricted_to(present)
    result.metrics |= _prefixed("in_sample", resolution_metrics(prediction_rows(mappings), curation))
    baseline = prediction_rows(mutual_best_baseline(mappings))
    result.metrics |= _prefixed("baseline", resolution_metrics(baseline, curation))
    result.rows += _curated_rows(mappings, curation)
    features = pair_features(mappings, load_hierarchy(engine), mappings["name_cosine"].to_numpy())
    try:
        result.cross_validation = cross_validate(features, curation)
    except NotEnoughLabels as exc:
        result.notes.append(f"cross-validation skipped: {exc}")
        return result
    result.metrics |= _prefixed("cv", result.cross_validation.metrics)
    recalls = [fold["equivalence_recall"] for fold in result.cross_validation.per_fold]
    result.metrics["cv_equivalence_recall_fold_std"] = float(np.std(recalls))
    return result


def _known_pair_rows(mappings: pd.DataFrame, present: set[str]) -> list[dict]:
    relation = {(r.reactome_id, r.kegg_id): r.relation for r in mappings.itertuples()}
    rows = []
    for r, k in KNOWN_COUNTERPARTS:
        if r in present and k in present:
            found = relation.get((r, k), "unrelated")
            rows.append(
                {
                    "question_id": f"{r}~{k}",
                    "variant": "known_pair",
                    "question": f"{r} ↔ {k}",
                    "relation": found,
                    "resolved": found != "unrelated",
                }
            )
    return rows


def _curated_rows(mappings: pd.DataFrame, curation: Curation) -> list[dict]:
    """One row per curated pair: what the curators said beside what the shipped model says."""
    indexed = mappings.set_index(["reactome_id", "kegg_id"])
    rows = []
    for (r, k), curated in sorted(curation.pairs.items()):
        found = indexed.loc[(r, k)] if (r, k) in indexed.index else None
        relation = "unscored" if found is None else found["relation"]
        expected = "equivalent" if curated == EQUIVALENT else "part_of"
        rows.append(
            {
                "question_id": f"{r}~{k}",
                "variant": "curated_pair",
                "question": f"{r} ↔ {k}",
                "curated": curated,
                "relation": relation,
                "direction": "" if found is None else found["direction"],
                "confidence": 0.0 if found is None else float(found["confidence"]),
                "agrees": relation == expected,
            }
        )
    return rows


def precision_recall_curve(cv: CrossValidation, curated_equivalents: int) -> pd.DataFrame:
    """Strict and lenient precision against recall as the P(equivalent) bar falls (out-of-fold probabilities,
    keeping each KEGG pathway's single best candidate, as the decision rule does)."""
    frame = cv.predictions
    best = frame.groupby("kegg_id")["p_equivalent"].transform("max")
    top = frame[frame["p_equivalent"] >= best].sort_values("p_equivalent", ascending=False)
    hits = np.cumsum(top["label"].to_numpy() == 1)
    listed = np.cumsum(top["label"].to_numpy() > 0)
    made = np.arange(1, len(top) + 1)
    return pd.DataFrame(
        {
            "threshold": top["p_equivalent"].to_numpy(),
            "recall": hits / max(curated_equivalents, 1),
            "precision_strict": hits / made,
            "precision_lenient": listed / made,
        }
    )
