"""Reactome ↔ KEGG pathway resolution in UniProt space: all-pairs scores with sparse matrices, then classes.

For every Reactome x KEGG pair: |A∩B|, overlap coefficient |A∩B|/min(|A|,|B|), Jaccard, the hypergeometric
upper tail P(X ≥ |A∩B|) over the union of all member proteins, its Benjamini-Hochberg q-value over all pairs, and
a token-set similarity of the names. Pure functions: the asset feeds them sets read from Postgres. The classes are
decided by the fitted model in `model.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import gammaln

from dagster_project.core.text import CONNECTIVES, words

# Words every pathway name could carry, which say nothing about which pathway it is.
PATHWAY_NAME_WORDS = frozenset({"pathway", "signaling", "signalling", "via", "homo", "sapiens", "human", "metabolism"})
# Only the connectives of the English stop list ("Signaling by WNT", "Metabolism of lipids"): the full list also
# drops "through", "with", "other" ..., which changes the name similarity of ~1,900 of the 1M Reactome x KEGG
# name pairs, a feature the resolution model was fitted on.
NAME_STOPWORDS = CONNECTIVES | PATHWAY_NAME_WORDS


@dataclass(frozen=True)
class PathwaySets:
    ids: list[str]
    names: list[str]
    members: list[frozenset[str]]


def name_tokens(name: str) -> frozenset[str]:
    # Lower-cased, and split at anything not a letter or digit: "Wnt/beta-catenin" compares as wnt, beta, catenin.
    tokens = words(name.lower().replace("signalling", "signaling"), joined_by="")
    return frozenset(t for t in tokens if t not in NAME_STOPWORDS)


def _token_jaccard(ta: frozenset[str], tb: frozenset[str]) -> float:
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def name_similarity(a: str, b: str) -> float:
    return _token_jaccard(name_tokens(a), name_tokens(b))


def upper_tail(k: np.ndarray, population: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hypergeometric P(X >= k) for each pair, vectorised. For k = 1 (most pairs) it is 1 - P(X = 0) in closed
    form; for k >= 2 the upper sum of the mass function, term by term (scipy's `hypergeom.sf` loops in Python over
    pairs: 3 s for the snapshot's 100k such pairs)."""
    k, a, b = (np.asarray(v, dtype=np.int64) for v in (k, a, b))
    p = np.empty(len(k), dtype=np.float64)
    single = k == 1
    log_p0 = (
        gammaln(population - a[single] + 1)
        + gammaln(population - b[single] + 1)
        - gammaln(population + 1)
        - gammaln(population - a[single] - b[single] + 1)
    )
    p[single] = -np.expm1(log_p0)
    p[~single] = _upper_sum(k[~single], population, a[~single], b[~single])
    return np.clip(p, 0.0, 1.0)


def _log_pmf(x: np.ndarray, population: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (
        gammaln(a + 1)
        - gammaln(x + 1)
        - gammaln(a - x + 1)
        + gammaln(population - a + 1)
        - gammaln(b - x + 1)
        - gammaln(population - a - b + x + 1)
        - gammaln(population + 1)
        + gammaln(b + 1)
        + gammaln(population - b + 1)
    )


def _upper_sum(k: np.ndarray, population: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(X >= k) by summing the mass function over the shorter side, term by term: the first term by log-gamma,
    the rest by the ratio of consecutive terms r(x) = (a-x)(b-x) / ((x+1)(N-a-b+x+1)), which only falls as x grows.

    Past the mode (r(k) < 1) the upper terms are summed, stopping once those left are provably below 1e-17 of the
    sum (at most r^n / (1 - r) of the first term). At or before the mode, P(X >= k) is large and is computed as
    1 - P(X < k) from the k - max(0, a+b-N) terms below k, which are few."""
    out = np.empty(len(k), dtype=np.float64)
    if not len(k):
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (a - k) * (b - k) / ((k + 1) * (population - a - b + k + 1))
        needed = 1 + np.ceil((np.log(1e-17) + np.log1p(-ratio)) / np.log(ratio))
    upper = ratio < 1
    terms = np.minimum(np.minimum(a, b) - k + 1, np.nan_to_num(needed, nan=1.0, posinf=1.0)).astype(np.int64)
    out[upper] = _sums(k[upper], population, a[upper], b[upper], np.maximum(terms[upper], 1))
    low = np.maximum(0, a + b - population)[~upper]
    below = _sums(low, population, a[~upper], b[~upper], k[~upper] - low)
    out[~upper] = np.maximum(1.0 - below, 0.0)
    return out


def _sums(
    first: np.ndarray,
    population: int,
    a: np.ndarray,
    b: np.ndarray,
    terms: np.ndarray,
    max_terms_per_chunk: int = 2_000_000,
) -> np.ndarray:
    """sum_{x=first}^{first+terms-1} P(X = x) per pair, in chunks of at most `max_terms_per_chunk` terms."""
    out = np.zeros(len(first), dtype=np.float64)
    ends = np.cumsum(terms)
    begin = 0
    while begin < len(first):
        stop = max(begin + 1, int(np.searchsorted(ends, ends[begin] - terms[begin] + max_terms_per_chunk)))
        chunk = slice(begin, stop)
        out[chunk] = _segment_sums(first[chunk], population, a[chunk], b[chunk], terms[chunk])
        begin = stop
    return out


def _segment_sums(first: np.ndarray, population: int, a: np.ndarray, b: np.ndarray, terms: np.ndarray) -> np.ndarray:
    nonempty = terms > 0
    out = np.zeros(len(first), dtype=np.float64)
    first, a, b, terms = first[nonempty], a[nonempty], b[nonempty], terms[nonempty]
    if not len(first):
        return out
    starts = np.concatenate(([0], np.cumsum(terms)[:-1]))
    pair = np.repeat(np.arange(len(first)), terms)
    x = (first[pair] + np.arange(int(terms.sum())) - starts[pair] - 1).astype(np.float64)  # each step leaves x
    pa, pb = a[pair].astype(np.float64), b[pair].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # only at a pair's first slot, reset below
        step = np.log((pa - x) * (pb - x) / ((x + 1) * (population - pa - pb + x + 1)))
    step[starts] = 0.0  # a pair's first term is its log-gamma one
    running = np.cumsum(step)
    log_terms = _log_pmf(first, population, a, b)[pair] + running - running[starts][pair]
    peak = np.maximum.reduceat(log_terms, starts)
    out[nonempty] = np.exp(peak) * np.add.reduceat(np.exp(log_terms - peak[pair]), starts)
    return out


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
    frame = pd.DataFrame(
        {
            "reactome_id": np.asarray(reactome.ids)[ri],
            "kegg_id": np.asarray(kegg.ids)[ki],
            "reactome_size": a,
            "kegg_size": b,
            "shared": k,
            "overlap": k / np.minimum(a, b),
            "jaccard": k / (a + b - k),
            "p_value": p,
            "q_value": benjamini_hochberg(p, len(reactome.ids) * len(kegg.ids)),
        }
    )
    frame["name_similarity"] = _pair_name_similarity(reactome.names, kegg.names, ri, ki)
    frame["reactome_name"] = np.asarray(reactome.names, dtype=object)[ri]
    frame["kegg_name"] = np.asarray(kegg.names, dtype=object)[ki]
    return frame


def _pair_name_similarity(r_names: Sequence[str], k_names: Sequence[str], ri: np.ndarray, ki: np.ndarray) -> np.ndarray:
    """Token Jaccard of the two names of each pair (`name_similarity`), from sparse token sets."""
    r_tokens, k_tokens = [name_tokens(n) for n in r_names], [name_tokens(n) for n in k_names]
    vocabulary = {t: i for i, t in enumerate(sorted(set().union(*r_tokens, *k_tokens)))}
    if not vocabulary or not len(ri):  # no pair: scipy would index an empty product into a sparse matrix
        return np.zeros(len(ri))
    r_mat, k_mat = _incidence(r_tokens, vocabulary), _incidence(k_tokens, vocabulary)
    shared = np.asarray((r_mat @ k_mat.T).tocsr()[ri, ki], dtype=np.float64).ravel()
    r_size = np.asarray(r_mat.sum(axis=1)).ravel()[ri]
    k_size = np.asarray(k_mat.sum(axis=1)).ravel()[ki]
    union = r_size + k_size - shared
    return np.divide(shared, union, out=np.zeros(len(ri)), where=(r_size > 0) & (k_size > 0))
