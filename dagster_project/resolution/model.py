"""Reactome ↔ KEGG relations from a small fitted model: pair features → multinomial logistic regression → classes.

Features are computed for every pair that shares a protein (`scores.score_pairs`); the model gives each pair
P(equivalent), P(part_of) and P(unrelated), fitted on expert curation (ComPath's dev half, `curation.py`).
Decision rule, the same in fitting, cross-validation and production:
- `equivalent` when P(equivalent) ≥ the fitted threshold and the pair is its KEGG pathway's most probable
  equivalent (curators give a KEGG pathway about one counterpart; with all-levels membership a pathway's parents
  and children would otherwise tie with it);
- otherwise `part_of` when P(part_of) ≥ its threshold, pointing from the side mostly contained in the other;
- otherwise `unrelated`. A relation's `confidence` is the model's probability of it.
Inference is plain numpy over the stored coefficients; scikit-learn is needed only to fit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

FEATURES = (
    "sqrt_jaccard",  # member overlap, compressed so a few huge overlaps do not dominate
    "kegg_in_reactome",  # |A∩B| / |KEGG|
    "reactome_in_kegg",  # |A∩B| / |Reactome|
    "name_cosine",  # embedding cosine of the two names (synonyms: thiamin/thiamine, FCERI/Fc epsilon RI)
    "name_gap_in_kegg",  # name_cosine minus the best name_cosine among the KEGG pathway's candidates
    "name_gap_in_reactome",  # … among the Reactome pathway's candidates
    "inverse_rank_in_reactome",  # 1 / rank of this KEGG pathway among the Reactome pathway's, by Jaccard
    "hierarchy_peak",  # 1 when no parent or child of the Reactome pathway overlaps the KEGG one better
)
CLASSES = ("unrelated", "equivalent", "part_of")
MODEL_PATH = Path(__file__).with_name("model.json")
# Thresholds are chosen on held-out folds of the training data: the lowest P(equivalent) bar whose predictions
# keep these precisions (a margin above the project's goals of 0.30 strict / 0.60 lenient).
MIN_STRICT_PRECISION = 0.35
MIN_LENIENT_PRECISION = 0.65
REGULARIZATION_C = 0.3


@dataclass(frozen=True)
class Hierarchy:
    """Reactome's SUBPATHWAY_OF edges, both ways."""

    parents: Mapping[str, Sequence[str]]
    children: Mapping[str, Sequence[str]]

    @classmethod
    def from_parents(cls, parents: Mapping[str, Sequence[str]]) -> Hierarchy:
        children: dict[str, list[str]] = {}
        for child, ups in parents.items():
            for parent in ups:
                children.setdefault(parent, []).append(child)
        return cls(parents=dict(parents), children=children)


def pair_features(scores: pd.DataFrame, hierarchy: Hierarchy, name_cosine: np.ndarray) -> pd.DataFrame:
    """The model's inputs for each scored pair (same row order as `scores`); `name_cosine` per pair comes from
    `resolution_inputs.name_cosines` (or, rebuilding features later, from `pathway_mappings.name_cosine`)."""
    frame = scores[["reactome_id", "kegg_id"]].copy()
    jaccard = scores["jaccard"].to_numpy()
    frame["sqrt_jaccard"] = np.sqrt(jaccard)
    frame["kegg_in_reactome"] = scores["shared"] / scores["kegg_size"]
    frame["reactome_in_kegg"] = scores["shared"] / scores["reactome_size"]
    frame["name_cosine"] = np.asarray(name_cosine, dtype=np.float64)
    frame["name_gap_in_kegg"] = frame["name_cosine"] - frame.groupby("kegg_id")["name_cosine"].transform("max")
    frame["name_gap_in_reactome"] = frame["name_cosine"] - frame.groupby("reactome_id")["name_cosine"].transform("max")
    rank = scores.groupby("reactome_id")["jaccard"].rank(ascending=False, method="min")
    frame["inverse_rank_in_reactome"] = 1.0 / rank.to_numpy()
    frame["hierarchy_peak"] = _hierarchy_peak(scores, hierarchy)
    return frame


def _hierarchy_peak(scores: pd.DataFrame, hierarchy: Hierarchy) -> np.ndarray:
    """1 where no parent or child of the Reactome pathway has a higher Jaccard with the same KEGG pathway, else 0.

    Vectorised over a sparse (Reactome x KEGG) table of pair numbers: each relative edge (r, other) is expanded
    into other's scored pairs, which are then looked up as (r, kegg)."""
    r_codes, r_ids = pd.factorize(scores["reactome_id"])
    k_codes, _ = pd.factorize(scores["kegg_id"])
    jaccard = scores["jaccard"].to_numpy(dtype=np.float64)
    peak = np.ones(len(scores))
    position = {pathway: i for i, pathway in enumerate(r_ids)}
    edges = np.array(
        [
            (position[r], position[o])
            for r in r_ids
            for o in (*hierarchy.parents.get(r, ()), *hierarchy.children.get(r, ()))
            if o in position
        ],
        dtype=np.int64,
    ).reshape(-1, 2)
    if not len(edges):
        return peak
    shape = (len(r_ids), int(k_codes.max()) + 1)
    pair_of = sparse.csr_matrix((np.arange(1, len(scores) + 1), (r_codes, k_codes)), shape=shape)  # pair no. + 1
    # Every scored pair (other, kegg) of each relative edge (r, other): positions in other's CSR row.
    counts = np.diff(pair_of.indptr)[edges[:, 1]]
    slots = np.repeat(pair_of.indptr[edges[:, 1]] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
    relative_pair = pair_of.data[slots] - 1
    own_pair = np.asarray(pair_of[np.repeat(edges[:, 0], counts), pair_of.indices[slots]]).ravel() - 1
    scored = own_pair >= 0  # (r, kegg) itself is a scored pair
    beaten = scored & (jaccard[relative_pair] > jaccard[np.where(scored, own_pair, 0)])
    peak[own_pair[beaten]] = 0.0
    return peak


@dataclass(frozen=True)
class ResolutionModel:
    """Standardizer + multinomial logistic regression + the two decision thresholds, as plain numbers."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[tuple[float, ...], ...]  # one row per class in CLASSES
    intercept: tuple[float, ...]
    equivalent_threshold: float
    part_of_threshold: float
    trained_on: Mapping[str, int]

    @property
    def method_version(self) -> str:
        body = json.dumps({k: v for k, v in asdict(self).items() if k != "trained_on"}, sort_keys=True)
        return "lr-" + hashlib.sha256(body.encode()).hexdigest()[:12]

    def probabilities(self, features: pd.DataFrame) -> np.ndarray:
        """P(class) per row, columns in CLASSES order."""
        x = (features[list(self.features)].to_numpy(dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = x @ np.asarray(self.coef).T + np.asarray(self.intercept)
        logits -= logits.max(axis=1, keepdims=True)
        odds = np.exp(logits)
        return odds / odds.sum(axis=1, keepdims=True)

    def classify(self, features: pd.DataFrame) -> pd.DataFrame:
        """relation, direction, confidence, p_equivalent, p_part_of for each row of `features`."""
        return decide(features, self.probabilities(features), self.equivalent_threshold, self.part_of_threshold)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "method_version": self.method_version}, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> ResolutionModel:
        data = json.loads(text)
        data.pop("method_version", None)
        return cls(
            features=tuple(data["features"]),
            mean=tuple(data["mean"]),
            scale=tuple(data["scale"]),
            coef=tuple(tuple(row) for row in data["coef"]),
            intercept=tuple(data["intercept"]),
            equivalent_threshold=float(data["equivalent_threshold"]),
            part_of_threshold=float(data["part_of_threshold"]),
            trained_on=dict(data["trained_on"]),
        )


def load_resolution_model(path: Path = MODEL_PATH) -> ResolutionModel:
    return ResolutionModel.from_json(path.read_text())


def decide(
    features: pd.DataFrame, probabilities: np.ndarray, equivalent_threshold: float, part_of_threshold: float
) -> pd.DataFrame:
    """Apply the decision rule in the module docstring to model probabilities."""
    p_eq, p_part = probabilities[:, 1], probabilities[:, 2]
    best_in_kegg = pd.Series(p_eq).groupby(features["kegg_id"].to_numpy()).transform("max").to_numpy()
    equivalent = (p_eq >= equivalent_threshold) & (p_eq >= best_in_kegg)
    part_of = ~equivalent & (p_part >= part_of_threshold)
    relation = np.select([equivalent, part_of], ["equivalent", "part_of"], "unrelated")
    kegg_inside = features["kegg_in_reactome"].to_numpy() >= features["reactome_in_kegg"].to_numpy()
    direction = np.where(part_of, np.where(kegg_inside, "kegg_in_reactome", "reactome_in_kegg"), "")
    confidence = np.select([equivalent, part_of], [p_eq, p_part], probabilities[:, 0])
    return pd.DataFrame(
        {
            "relation": relation,
            "direction": direction,
            "confidence": confidence,
            "p_equivalent": p_eq,
            "p_part_of": p_part,
        },
        index=features.index,
    )
