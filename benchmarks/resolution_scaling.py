"""All-pairs Reactome x KEGG resolution (scores, name cosines, features, classes) at 1x and more of the snapshot's
pathways, against the per-pair implementation it replaced, in one process.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/resolution_scaling.py [--scales 1 2 5 10]

The pathway sets, hierarchy and names come from the platform database (materialize the snapshot first). Scale s
repeats every pathway of both sides s times (so s^2 times the pairs): each copy keeps each member with
probability 0.9 and draws as many others from the universe, and copies keep their parents within their copy.
Name vectors are computed once for the real names (the same names recur in copies) and are not in the timings.
The baseline (scipy's `hypergeom.sf` for every pair sharing two or more proteins, and per-pair Python loops for
names, cosines and the hierarchy) runs at 1x only; both are checked to agree. Writes resolution_scaling.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from loglog import save_loglog
from scipy.stats import hypergeom

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.index.encoder import load_sentence_model
from dagster_project.resolution.inputs import SPECIES_SUFFIX, load_hierarchy, name_cosines
from dagster_project.resolution.model import Hierarchy, load_resolution_model, pair_features
from dagster_project.resolution.pathway_sets import load_sets
from dagster_project.resolution.scores import PathwaySets, name_similarity, score_pairs

PLOT = Path(__file__).with_name("resolution_scaling.png")


def scaled(sets: PathwaySets, scale: int, universe: list[str], rng: np.random.Generator) -> PathwaySets:
    if scale == 1:
        return sets
    ids, names, members = [], [], []
    for copy in range(scale):
        for pathway, name, own in zip(sets.ids, sets.names, sets.members, strict=True):
            kept = [m for m in own if rng.random() < 0.9]
            drawn = rng.choice(len(universe), size=len(own) - len(kept), replace=False)
            ids.append(f"{pathway}~{copy}")
            names.append(name)
            members.append(frozenset(kept) | {universe[i] for i in drawn})
    return PathwaySets(ids, names, members)


def scaled_hierarchy(hierarchy: Hierarchy, scale: int) -> Hierarchy:
    if scale == 1:
        return hierarchy
    return Hierarchy.from_parents(
        {
            f"{child}~{c}": [f"{p}~{c}" for p in parents]
            for child, parents in hierarchy.parents.items()
            for c in range(scale)
        }
    )


def run(
    reactome: PathwaySets, kegg: PathwaySets, hierarchy: Hierarchy, vectors: dict[str, np.ndarray]
) -> tuple[dict[str, float], pd.DataFrame]:
    model = load_resolution_model()
    times: dict[str, float] = {}
    start = time.perf_counter()
    scores = score_pairs(reactome, kegg)
    times["scores"] = time.perf_counter() - start
    mark = time.perf_counter()
    cosine = name_cosines(scores, vectors)
    times["name cosines"] = time.perf_counter() - mark
    mark = time.perf_counter()
    features = pair_features(scores, hierarchy, cosine)
    times["features"] = time.perf_counter() - mark
    mark = time.perf_counter()
    model.classify(features)
    times["classes"] = time.perf_counter() - mark
    times["total"] = time.perf_counter() - start
    return times, features.assign(p_value=scores["p_value"], name_similarity=scores["name_similarity"])


def per_pair_baseline(
    reactome: PathwaySets, kegg: PathwaySets, hierarchy: Hierarchy, vectors: dict[str, np.ndarray], scores: pd.DataFrame
) -> tuple[float, dict[str, np.ndarray]]:
    """What the replaced code did per pair, timed on the same pairs (the sparse overlap counts are shared)."""
    start = time.perf_counter()
    k, a, b = (scores[c].to_numpy() for c in ("shared", "reactome_size", "kegg_size"))
    universe = len(set().union(*reactome.members, *kegg.members))
    p = hypergeom.sf(k - 1, universe, a, b)
    names = dict(zip(reactome.ids + kegg.ids, reactome.names + kegg.names, strict=True))
    pairs = list(zip(scores["reactome_id"], scores["kegg_id"], strict=True))
    similarity = np.array([name_similarity(names[r], names[g]) for r, g in pairs])
    cosine = np.array([float(np.dot(vectors[r], vectors[g])) for r, g in pairs])
    jaccard = dict(zip(pairs, scores["jaccard"], strict=True))
    peak = np.array(
        [
            0.0
            if any(
                jaccard.get((o, g), 0.0) > jaccard[(r, g)]
                for o in (*hierarchy.parents.get(r, ()), *hierarchy.children.get(r, ()))
            )
            else 1.0
            for r, g in pairs
        ]
    )
    return time.perf_counter() - start, {
        "p_value": p,
        "name_similarity": similarity,
        "name_cosine": cosine,
        "hierarchy_peak": peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 2, 5, 10])
    args = parser.parse_args()
    settings = get_settings()
    engine = engine_for(settings.platform_database_url)
    reactome, kegg, hierarchy = load_sets(engine, "reactome"), load_sets(engine, "kegg"), load_hierarchy(engine)
    names = {
        i: SPECIES_SUFFIX.sub("", n) for side in (reactome, kegg) for i, n in zip(side.ids, side.names, strict=True)
    }
    encoder = load_sentence_model(settings.index.embedding_model)
    encoded = encoder.encode(list(names.values()), normalize_embeddings=True)
    base_vectors = dict(zip(names, np.asarray(encoded, dtype=np.float64), strict=True))
    universe = sorted(set().union(*reactome.members, *kegg.members))
    rng = np.random.default_rng(0)
    print(f"snapshot: {len(reactome.ids)} Reactome x {len(kegg.ids)} KEGG pathways, {len(universe)} proteins")
    print(f"{'scale':>5} {'pairs':>11} {'scores':>8} {'cosines':>8} {'features':>9} {'classes':>8} {'total':>8}")
    pairs_seen, totals = [], []
    for scale in args.scales:
        r, g = scaled(reactome, scale, universe, rng), scaled(kegg, scale, universe, rng)
        vectors = {i: base_vectors[i.split("~")[0]] for i in r.ids + g.ids}
        times, features = run(r, g, scaled_hierarchy(hierarchy, scale), vectors)
        pairs_seen.append(len(features))
        totals.append(times["total"])
        print(
            f"{scale:>5} {len(features):>11,} "
            + " ".join(f"{times[s]:>7.2f}s" for s in ("scores", "name cosines", "features", "classes"))
            + f" {times['total']:>7.2f}s"
        )
        if scale == 1:
            scores = score_pairs(r, g)
            seconds, reference = per_pair_baseline(r, g, hierarchy, vectors, scores)
            worst = {
                c: float(
                    np.max(np.abs(features[c].to_numpy() - reference[c]) / np.maximum(np.abs(reference[c]), 1e-300))
                )
                for c in reference
            }
            print(
                f"      per-pair baseline on the same {len(scores):,} pairs: {seconds:.2f}s "
                f"(+ the sparse counts) -> vectorised {seconds / times['total']:.1f}x faster; "
                f"largest relative difference: " + ", ".join(f"{c} {v:.1e}" for c, v in worst.items())
            )
    save_loglog(
        PLOT,
        "All-pairs resolution (2 cores)",
        "pairs sharing a protein",
        "seconds",
        {"scores + cosines + features + classes": (pairs_seen, totals)},
    )
    print(f"plot: {PLOT}")


if __name__ == "__main__":
    main()
