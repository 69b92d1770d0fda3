"""Reactome ↔ KEGG pathway resolution in UniProt space: all-pairs scores with sparse matrices, then classes.

For every Reactome x KEGG pair: |A∩B|, overlap coefficient |A∩B|/min(|A|,|B|), Jaccard, the hypergeometric
upper tail P(X ≥ |A∩B|) over the union of all member proteins, its Benjamini-Hochberg q-value over all pairs, and
a token-set similarity of the names. Pure functions: the asset feeds them sets read from Postgres.
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

# Class thresholds (README "Reactome ↔ KEGG resolution" shows the distributions they were read from).
Q_MAX = 1e-3               # enrichment must survive BH over ~930k pairs
MIN_SHARED = 5             # fewer shared proteins than this is anecdote, not equivalence
# Equivalent by members: each is among the other's closest by Jaccard (Reactome's hierarchy repeats a
# pathway's members in every ancestor, so absolute Jaccard alone cannot pick the right level).
RANK_IN_KEGG = 5           # the Reactome pathway is within the KEGG pathway's top 5 Reactome matches …
RANK_IN_REACTOME = 3       # … and the KEGG pathway within the Reactome pathway's top 3 KEGG matches
JACCARD_EQUIVALENT = 0.15
JACCARD_BEST_MATCH = 0.10  # lower bar when one side is the other's single best match
# Equivalent by name: the names share most of their content words and the members overlap.
NAME_EQUIVALENT = 0.33
OVERLAP_NAMED = 0.20
RANK_NAMED = 20
# Part of: the smaller pathway lies mostly inside a clearly larger one.
OVERLAP_PART_OF = 0.6
SIZE_RATIO_PART_OF = 1.5

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


def classify(scores: pd.DataFrame) -> pd.DataFrame:
    """Add `relation` (equivalent / part_of / unrelated) and, for part_of, `direction` (which side is inside)."""
    significant = scores["q_value"] < Q_MAX
    rank_in_kegg = scores.groupby("kegg_id")["jaccard"].rank(ascending=False, method="min")
    rank_in_reactome = scores.groupby("reactome_id")["jaccard"].rank(ascending=False, method="min")
    close = (rank_in_kegg <= RANK_IN_KEGG) & (rank_in_reactome <= RANK_IN_REACTOME)
    best = (rank_in_kegg == 1) | (rank_in_reactome == 1)
    by_members = close & ((scores["jaccard"] >= JACCARD_EQUIVALENT)
                          | (best & (scores["jaccard"] >= JACCARD_BEST_MATCH)))
    by_name = ((scores["name_similarity"] >= NAME_EQUIVALENT) & (scores["overlap"] >= OVERLAP_NAMED)
               & ((rank_in_kegg <= RANK_NAMED) | (rank_in_reactome <= RANK_NAMED)))
    equivalent = significant & (scores["shared"] >= MIN_SHARED) & (by_members | by_name)
    smaller, larger = (np.minimum(scores["reactome_size"], scores["kegg_size"]),
                       np.maximum(scores["reactome_size"], scores["kegg_size"]))
    part_of = significant & ~equivalent & (scores["overlap"] >= OVERLAP_PART_OF) & (
        larger >= SIZE_RATIO_PART_OF * smaller)
    out = scores.copy()
    out["rank_in_kegg"] = rank_in_kegg.astype(int)
    out["rank_in_reactome"] = rank_in_reactome.astype(int)
    out["relation"] = np.select([equivalent, part_of], ["equivalent", "part_of"], "unrelated")
    out["direction"] = np.where(
        part_of, np.where(scores["reactome_size"] <= scores["kegg_size"], "reactome_in_kegg", "kegg_in_reactome"), ""
    )
    return out
