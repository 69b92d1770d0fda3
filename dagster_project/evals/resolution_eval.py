"""Resolution scorecard: precision and recall of the Reactome↔KEGG mapping on well-known counterparts, counts per
class and the score distributions.

Recall: the share of known pairs (both pathways present in the corpus) resolved as equivalent or part_of.
Precision: within the labelled universe — pairs joining a listed Reactome pathway and a listed KEGG pathway —
the share of resolved pairs that are known counterparts (a resolved pair between two listed pathways that is not
on the list counts against it; pairs involving unlisted pathways are not judged).
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.evals.questions import KNOWN_COUNTERPARTS


def load_mappings(engine: Engine) -> pd.DataFrame:
    with engine.connect() as conn:
        return pd.read_sql(text("SELECT reactome_id, kegg_id, relation, overlap, jaccard, q_value, shared"
                                " FROM pathway_mappings"), conn)


def evaluate(engine: Engine) -> tuple[dict[str, float], list[dict], pd.DataFrame]:
    mappings = load_mappings(engine)
    with engine.connect() as conn:
        present = set(conn.execute(text("SELECT pathway_id FROM pathways WHERE status = 'active'")).scalars())
    known = [(r, k) for r, k in KNOWN_COUNTERPARTS if r in present and k in present]
    relation = {(r.reactome_id, r.kegg_id): r.relation for r in mappings.itertuples()}
    rows = []
    for r, k in known:
        found = relation.get((r, k), "unrelated")
        rows.append({"question_id": f"{r}~{k}", "variant": "known_pair", "question": f"{r} ↔ {k}",
                     "relation": found, "resolved": found != "unrelated"})
    listed_r, listed_k = {r for r, _ in known}, {k for _, k in known}
    resolved = mappings[mappings["relation"] != "unrelated"]
    judged = resolved[resolved["reactome_id"].isin(listed_r) & resolved["kegg_id"].isin(listed_k)]
    true_pairs = set(known)
    correct = sum(1 for r in judged.itertuples() if (r.reactome_id, r.kegg_id) in true_pairs)
    counts = mappings["relation"].value_counts().to_dict()
    metrics = {
        "known_pairs_evaluable": float(len(known)),
        "recall": sum(1 for r in rows if r["resolved"]) / len(known) if known else 0.0,
        "precision": correct / len(judged) if len(judged) else 0.0,
        "judged_resolved_pairs": float(len(judged)),
        **{f"pairs_{k}": float(counts.get(k, 0)) for k in ("equivalent", "part_of", "unrelated")},
    }
    for cls in ("equivalent", "part_of"):
        scores = mappings.loc[mappings["relation"] == cls, "jaccard"]
        if len(scores):
            metrics[f"{cls}_jaccard_median"] = float(scores.median())
    return metrics, rows, mappings
