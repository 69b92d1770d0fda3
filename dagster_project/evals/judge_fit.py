"""Fit the offline judge's "good" threshold (`retrieval.answering.offline.GOOD_COVERAGE`) on labelled evidence pairs.

Pairs are built from the PubMedQA snapshot file alone: a question with its own abstract (right) and with the
abstract bm25s ranks highest among the others (a hard negative), titles left out. The threshold is fitted on
the second half of the file (items 501-1000) and reported on the first half, which it never saw; the answer
scorecard's judge calibration uses questions from that first half too. `flux evals fit-judge` runs it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.answering.offline import coverage
from retrieval.model.types import Evidence
from retrieval.retrievers.bm25 import tokenize

GRID = np.round(np.arange(0.40, 0.951, 0.025), 3)


@dataclass(frozen=True)
class JudgeFit:
    threshold: float
    fit_pairs: int
    fit_accuracy: tuple[float, float]  # (right, hard negative) on the fitting half
    held_out_pairs: int
    held_out_accuracy: tuple[float, float]


def coverage_pairs(path: Path) -> np.ndarray:
    """One row per question: coverage of its own abstract, coverage of its hardest other abstract."""
    import bm25s

    items = list(json.loads(path.read_text()).values())
    bodies = [" ".join(item["CONTEXTS"]) for item in items]
    retriever = bm25s.BM25()
    retriever.index(tokenize(bodies), show_progress=False)
    rows = []
    for i, item in enumerate(items):
        docs, _ = retriever.retrieve(tokenize([item["QUESTION"]]), k=3, show_progress=False, n_threads=1)
        negative = next(int(d) for d in docs[0] if int(d) != i)
        rows.append(
            [coverage(item["QUESTION"], [Evidence(id="e", kind="chunk", text=bodies[j])])[0] for j in (i, negative)]
        )
    return np.asarray(rows)


def accuracy(pairs: np.ndarray, threshold: float) -> tuple[float, float]:
    return float(np.mean(pairs[:, 0] >= threshold)), float(np.mean(pairs[:, 1] < threshold))


def fit_threshold(pairs: np.ndarray) -> float:
    """The threshold with the best balanced accuracy; ties go to the lower (less re-retrieval)."""
    return float(max(GRID, key=lambda t: (sum(accuracy(pairs, t)), -t)))


def fit(path: Path) -> JudgeFit:
    pairs = coverage_pairs(path)
    half = len(pairs) // 2
    held_out, fitting = pairs[:half], pairs[half:]
    threshold = fit_threshold(fitting)
    return JudgeFit(threshold, len(fitting), accuracy(fitting, threshold), len(held_out), accuracy(held_out, threshold))
