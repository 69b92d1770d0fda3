"""Fit the evidence floor (`retrieval/retrievers/relevance.py`) on questions with and without an answer in the index.

With an answer: the retrieval scorecard's gated tasks (keywords → paper; on the snapshot also conclusion → study
and MeSH → study), whose target document is in the index, and questions about the pathways the index describes.
Without: what the index cannot hold — KEGG maps of plants and bacteria ("How does quorum sensing work?") and HGNC
genes that no indexed text names. Each question's evidence comes from the serving retrieval (`Pipeline.search`).
The floor is chosen to abstain on as many unanswerable questions as it can while abstaining on at most
MAX_FALSE_ABSTENTION of the answerable ones; 5-fold cross-validation reports both rates on questions the floor was
not fitted on.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.evals.kind_phrasings import NOT_IN_INDEX_MAPS
from dagster_project.evals.questions import retrieval_tasks
from retrieval.kinds.registry import read_question
from retrieval.pipeline import Pipeline
from retrieval.retrievers.relevance import FLOOR_PATH, EvidenceFloor, signals

MAX_FALSE_ABSTENTION = 0.05
COSINES = np.round(np.arange(0.0, 0.951, 0.025), 3)
OVERLAPS = np.round(np.arange(0.0, 1.001, 0.1), 2)
FOLDS = 5
SEED = 5
UNNAMED_GENES = """
SELECT g.symbol, g.name FROM gene_identifiers g WHERE g.status = 'Approved' AND length(g.name) > 12
AND NOT EXISTS (SELECT 1 FROM chunks c
                WHERE c.content ILIKE '%' || g.symbol || '%' OR c.content ILIKE '%' || g.name || '%')
ORDER BY g.hgnc_id LIMIT :n
"""

PATHWAY_TITLES = """
SELECT title FROM documents WHERE type = 'pathway' AND status = 'active' AND length(title) > 5 ORDER BY id LIMIT :n
"""
PATHWAY_ASKED = ("What happens in {name}?", "How is {name} regulated?", "What is the role of {name} in the cell?",
                 "Which steps make up {name}?")


@dataclass(frozen=True)
class FloorFit:
    cosine_min: float
    overlap_min: float
    answerable: int
    unanswerable: int
    cv_false_abstention: float  # answerable questions the floor would refuse, on held-out folds
    cv_true_abstention: float  # unanswerable questions it refuses, on held-out folds


def questions(settings: FluxSettings, pipeline: Pipeline, limit: int = 60) -> tuple[list[str], list[str]]:
    tasks = retrieval_tasks(settings, pipeline.engine, limit)
    answerable = [q.question for task, qs in tasks.items() if task != "title_lookup" for q in qs]
    with pipeline.engine.connect() as conn:
        genes = conn.execute(text(UNNAMED_GENES), {"n": limit}).all()
        pathways = conn.execute(text(PATHWAY_TITLES), {"n": limit}).scalars().all()
    # Questions about what a pathway document describes, asked in a few ways (its name, not its text).
    answerable += [PATHWAY_ASKED[n % len(PATHWAY_ASKED)].format(name=name) for n, name in enumerate(pathways)]
    unanswerable = [f"What is known about the function of {g.name} ({g.symbol})?" for g in genes]
    unanswerable += [f"How does {name.lower()} work?" for _, name in NOT_IN_INDEX_MAPS]
    return answerable, unanswerable


def _rates(floor: EvidenceFloor, points: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(false abstention on answerable, true abstention on unanswerable); points: cosine, overlap, shared name."""
    refused = np.array([floor.refuses(float(c), float(o), bool(s)) for c, o, s in points], dtype=bool)
    answerable = labels == 1
    false = float(refused[answerable].mean()) if answerable.any() else 0.0
    true = float(refused[~answerable].mean()) if (~answerable).any() else 0.0
    return false, true


def fit_floor(points: np.ndarray, labels: np.ndarray) -> EvidenceFloor:
    """The floor refusing most unanswerable questions with false abstention ≤ the cap; ties: the lower floor."""
    best: tuple[float, float, float, EvidenceFloor] | None = None
    for cosine in COSINES:
        for overlap in OVERLAPS:
            floor = EvidenceFloor(float(cosine), float(overlap))
            false, true = _rates(floor, points, labels)
            if false <= MAX_FALSE_ABSTENTION:
                key = (true, -cosine, -overlap, floor)
                best = key if best is None or key[:3] > best[:3] else best
    return best[3] if best else EvidenceFloor(0.0, 0.0)


def cross_validate(points: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    order = list(range(len(labels)))
    random.Random(SEED).shuffle(order)
    falses, trues = [], []
    for fold in range(FOLDS):
        test = np.array([i for n, i in enumerate(order) if n % FOLDS == fold])
        train = np.array([i for n, i in enumerate(order) if n % FOLDS != fold])
        floor = fit_floor(points[train], labels[train])
        false, true = _rates(floor, points[test], labels[test])
        falses.append(false)
        trues.append(true)
    return float(np.mean(falses)), float(np.mean(trues))


def fit(settings: FluxSettings, pipeline: Pipeline) -> FloorFit:
    answerable, unanswerable = questions(settings, pipeline)
    asked = [(q, 1) for q in answerable] + [(q, 0) for q in unanswerable]
    genes, pathways = pipeline.lexicons()
    points = np.array([signals(q, pipeline.search(q).evidence, read_question(q, genes, pathways).names)
                       for q, _ in asked])
    labels = np.array([label for _, label in asked])
    floor = fit_floor(points, labels)
    false, true = cross_validate(points, labels)
    return FloorFit(floor.cosine_min, floor.overlap_min, len(answerable), len(unanswerable), false, true)


def save(model: str, result: FloorFit, path: Path = FLOOR_PATH) -> None:
    stored = json.loads(path.read_text()) if path.is_file() else {}
    stored[model] = asdict(result)
    path.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
