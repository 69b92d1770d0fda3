"""Reactome ↔ KEGG pathway resolution in UniProt space: all-pairs scores with sparse matrices, then classes.

For every Reactome x KEGG pair: |A∩B|, overlap coefficient |A∩B|/min(|A|,|B|), Jaccard, the hypergeometric
upper tail P(X ≥ |A∩B|) over the union of all member proteins, its Benjamini-Hochberg q-value over all pairs, and
a token-set similarity of the names. Pure functions: the asset feeds them sets read from Postgres. The classes are
decided by the fitted model in `resolution_model.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import gammaln
from scipy.stats import hypergeom

_STOP = {"pathway", "signaling", "signalling", "of", "the", "and", "by", "in", "to", "a", "an", "via",
         "homo", "sapiens", "human", "metabolism"}


@dataclass(frozen=True)
class PathwaySets:
    ids: list[str]
    names: list[str]
    members: list[frozenset[str]]


def name_tokens(name: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9]+", name.lower().replace("signalling", "signaling"))
    return frozenset(w for w in words if w not in _STOP)


def _token_jaccard(ta: frozenset[str], tb: frozenset[str]) -> float:
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def name_similarity(a: str, b: str) -> float:
    return _token_jaccard(name_tokens(a), name_tokens(b))


def upper_tail(k: np.ndarray, population: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hypergeometric P(X >= k). For k = 1 (most pairs) it is 1 - P(X = 0), computed in closed form with
    log-gamma; scipy's exact tail sum runs only where k >= 2 (it is a Python-speed loop per pair)."""
    p = np.empty(len(k), dtype=np.float64)
    single = k == 1
    log_p0 = (gammaln(population - a[single] + 1) + gammaln(population - b[single] + 1)
              - gammaln(population + 1) - gammaln(population - a[single] - b[single] + 1))
    p[single] = -np.expm1(log_p0)
    p[~single] = hypergeom.sf(k[~single] - 1, population, a[~single], b[~single])
    return np.clip(p, 0.0, 1.0)


def _incidence(sets: Sequence[frozenset[str]], index: dict[str, int]) -> sparse.csr_matrix:
    rows = [i for i, members in enumerate(sets) for _ in members]
    cols = [index[m] for members in sets for m in members]
    return sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(len(sets), len(index)))


def benjamini_hochberg(p: np.ndarray, total_tests: int) -> np.ndarray:
    """BH q-values for `p`, counting `total_tests` tests (the untested pairs have p = 1 and rank last)."""
    order = np.argsort(p)
    ranked = p[order] * total_tests / np.arange(1, len(p) + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty_like(q)
    out[order] = np.minimum(q, 1.0)
    return out


def score_pairs(reactome: PathwaySets, kegg: PathwaySets) -> pd.DataFrame:
    """Scores for every pair sharing at least one protein (all other pairs have overlap 0 and q = 1)."""
    universe = sorted(set().union(*reactome.members, *kegg.members))
    index = {u: i for i, u in enumerate(universe)}
    r_mat, k_mat = _incidence(reactome.members, index), _incidence(kegg.members, index)
    shared = (r_mat @ k_mat.T).tocoo()
    ri, ki, k = shared.row, shared.col, shared.data.astype(np.int64)
    a = np.asarray(r_mat.sum(axis=1)).ravel()[ri]
    b = np.asarray(k_mat.sum(axis=1)).ravel()[ki]
    p = upper_tail(k, len(universe), a, b)
    frame = pd.DataFrame({
        "reactome_id": np.asarray(reactome.ids)[ri],
        "kegg_id": np.asarray(kegg.ids)[ki],
        "reactome_size": a,
        "kegg_size": b,
        "shared": k,
        "overlap": k / np.minimum(a, b),
        "jaccard": k / (a + b - k),
        "p_value": p,
        "q_value": benjamini_hochberg(p, len(reactome.ids) * len(kegg.ids)),
    })
    r_names = dict(zip(reactome.ids, reactome.names, strict=True))
    k_names = dict(zip(kegg.ids, kegg.names, strict=True))
    r_tokens = {i: name_tokens(n) for i, n in r_names.items()}
    k_tokens = {i: name_tokens(n) for i, n in k_names.items()}
    frame["name_similarity"] = [_token_jaccard(r_tokens[r], k_tokens[g])
                                for r, g in zip(frame["reactome_id"], frame["kegg_id"], strict=True)]
    frame["reactome_name"] = frame["reactome_id"].map(r_names)
    frame["kegg_name"] = frame["kegg_id"].map(k_names)
    return frame
