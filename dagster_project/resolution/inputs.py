"""Everything the resolution model reads, assembled once for the asset, the scorecard and `flux resolution fit`:
both sides' member sets in UniProt space, their pair scores, Reactome's hierarchy and name vectors."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from dagster_project.resolution.model import Hierarchy, pair_features
from dagster_project.resolution.pathway_sets import load_reactome_parents, load_sets
from dagster_project.resolution.scores import PathwaySets, score_pairs

SPECIES_SUFFIX = re.compile(r"\s+-\s+[A-Z][a-z]+ [a-z]+ \([^)]*\)$")  # KEGG's " - Homo sapiens (human)"
Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class ResolutionInputs:
    reactome: PathwaySets
    kegg: PathwaySets
    scores: pd.DataFrame  # one row per pair sharing a protein (scores.score_pairs)
    features: pd.DataFrame  # the model's inputs, same rows (model.pair_features)


def name_vectors(embed: Embed, *sides: PathwaySets) -> dict[str, np.ndarray]:
    """Unit vectors of the pathway names, species suffixes removed."""
    ids: Sequence[str] = [i for side in sides for i in side.ids]
    names = [SPECIES_SUFFIX.sub("", n) for side in sides for n in side.names]
    if not names:
        return {}
    return dict(zip(ids, np.asarray(embed(names), dtype=np.float64), strict=True))


def name_cosines(scores: pd.DataFrame, vectors: dict[str, np.ndarray], rows_per_block: int = 2048) -> np.ndarray:
    """Cosine of the two names of each scored pair (0 where a name has no vector): one matrix product per block
    of Reactome pathways, read at the pairs."""
    if not vectors:
        return np.zeros(len(scores))
    missing = np.zeros(len(next(iter(vectors.values()))))
    r_codes, r_ids = pd.factorize(scores["reactome_id"])
    k_codes, k_ids = pd.factorize(scores["kegg_id"])
    r_mat = np.stack([vectors.get(i, missing) for i in r_ids]) if len(r_ids) else np.zeros((0, len(missing)))
    k_mat = np.stack([vectors.get(i, missing) for i in k_ids]) if len(k_ids) else np.zeros((0, len(missing)))
    cosine = np.zeros(len(scores))
    order = np.argsort(r_codes, kind="stable")
    bounds = np.searchsorted(r_codes[order], np.arange(0, len(r_ids) + rows_per_block, rows_per_block))
    for block, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        rows = order[lo:hi]
        first = block * rows_per_block
        products = r_mat[first : first + rows_per_block] @ k_mat.T
        cosine[rows] = products[r_codes[rows] - first, k_codes[rows]]
    return np.clip(cosine, -1.0, 1.0)  # identical unit vectors can dot to 1 + 1e-7


def load_hierarchy(engine: Engine) -> Hierarchy:
    return Hierarchy.from_parents(load_reactome_parents(engine))


@dataclass(frozen=True)
class ResolutionSources:
    """What resolution reads from Postgres, before any model work: both sides' member sets and the hierarchy."""

    reactome: PathwaySets
    kegg: PathwaySets
    parents: dict[str, list[str]]

    def digest(self) -> str:
        digest = hashlib.sha256()
        for side in (self.reactome, self.kegg):
            for pathway, name, members in sorted(zip(side.ids, side.names, side.members, strict=True)):
                digest.update(f"{pathway}\t{name}\t{','.join(sorted(members))}\n".encode())
        for child in sorted(self.parents):
            digest.update(f"{child}<{','.join(sorted(self.parents[child]))}\n".encode())
        return digest.hexdigest()[:24]


def load_sources(engine: Engine) -> ResolutionSources:
    return ResolutionSources(load_sets(engine, "reactome"), load_sets(engine, "kegg"), load_reactome_parents(engine))


def load_resolution_inputs(engine: Engine, embed: Embed, sources: ResolutionSources | None = None) -> ResolutionInputs:
    sources = sources or load_sources(engine)
    reactome, kegg = sources.reactome, sources.kegg
    scores = score_pairs(reactome, kegg)
    cosine = name_cosines(scores, name_vectors(embed, reactome, kegg))
    features = pair_features(scores, Hierarchy.from_parents(sources.parents), cosine)
    return ResolutionInputs(reactome, kegg, scores, features)
