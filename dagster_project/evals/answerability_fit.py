"""Fit the answerability decision (`retrieval/answering/answerability.py`) on the labelled dev set, and measure it.

Each question of `answerability_dev.json` (answerable from the demo's texts, or not: fact types Flux does not hold,
disease associations, reactions, absent topics and entities, wrong relations, neighbours, true/false statements) goes
through the served literature path — route, retrieve, judge loop — and the signals of its final evidence are
recorded. A standardised logistic regression on them is scored by 5-fold stratified cross-validation (AUROC, and at
the shipped threshold the false-answer and false-abstention rates; expected calibration error and a reliability
diagram of the out-of-fold probabilities), then fitted on the whole dev set. `answerability_heldout.json`, never
fitted on, is scored with the fitted model. Answerable questions whose documents the index does not hold are left
out (their answer is not in this index). `flux evals fit-answerability [--save]` runs it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

from dagster_project.evals.report import png, pyplot
from retrieval.answering.answerability import MODEL_PATH, SIGNALS, AnswerabilityModel
from retrieval.kinds import literature
from retrieval.pipeline import Pipeline
from retrieval.question.reading import Read
from retrieval.run import Run

DEV_FILE = Path(__file__).with_name("answerability_dev.json")
HELDOUT_FILE = Path(__file__).with_name("answerability_heldout.json")
FOLDS = 5
SEED = 41
THRESHOLD = 0.5  # answer when the calibrated probability says more likely answerable than not
BINS = 10
HELD_DOCUMENTS = "SELECT external_id FROM documents WHERE status = 'active'"


@dataclass
class Observed:
    """One question's signals, label and what the served path made of it."""

    id: str
    question: str
    answerable: bool
    category: str
    signals: dict[str, float] = field(default_factory=dict)
    ruled_out: bool = False  # the naming rule abstains whatever the model says


def load(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())


def usable(items: list[dict[str, Any]], held: set[str]) -> list[dict[str, Any]]:
    """The items this index can be asked: an answerable one only where the index holds a document answering it."""
    return [i for i in items if not i["answerable"] or any(d in held for d in i["documents"])]


def held_documents(pipeline: Pipeline) -> set[str]:
    with pipeline.retriever.engine.connect() as conn:
        return set(conn.execute(text(HELD_DOCUMENTS)).scalars())


def observe(pipeline: Pipeline, items: list[dict[str, Any]]) -> list[Observed]:
    """Each question through the literature path as served (thinking mode), its answerability signals kept."""
    genes, pathways = pipeline.retriever.lexicons()
    index = pipeline.retriever.index()
    out = []
    for item in items:
        seen: dict[str, Any] = {}

        def capture(name: str, payload: dict[str, Any], seen: dict[str, Any] = seen) -> None:
            if name == "answerability":
                seen.update(payload)

        plan = literature.plan_for(Read.of(item["question"], genes, pathways))
        pipeline.answerer.literature(item["question"], plan, index, "thinking", None, Run(emit=capture))
        row = Observed(
            item["id"], item["question"], bool(item["answerable"]), item["category"], dict(seen.get("signals", {}))
        )
        row.ruled_out = bool(seen.get("ruled_out"))
        out.append(row)
    return out


def _matrix(rows: list[Observed]) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([[r.signals[s] for s in SIGNALS] for r in rows], dtype=float),
        np.array([r.answerable for r in rows], dtype=int),
    )


def _ruled_out(rows: list[Observed]) -> np.ndarray:
    """Questions the naming rule abstains on whatever the model says."""
    return np.array([r.ruled_out for r in rows])


def fit_model(x: np.ndarray, y: np.ndarray, threshold: float = THRESHOLD) -> AnswerabilityModel:
    # Imported here (and in out_of_fold and score): scikit-learn takes about a second to load and only fitting and
    # scoring need it.
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    regression = LogisticRegression(C=1.0, max_iter=1000).fit((x - mean) / scale, y)
    return AnswerabilityModel(
        SIGNALS,
        tuple(mean.tolist()),
        tuple(scale.tolist()),
        tuple(regression.coef_[0].tolist()),
        float(regression.intercept_[0]),
        threshold,
    )


def probabilities(model: AnswerabilityModel, x: np.ndarray) -> np.ndarray:
    z = model.intercept + ((x - np.array(model.mean)) / np.array(model.scale)) @ np.array(model.coef)
    return 1.0 / (1.0 + np.exp(-z))


def out_of_fold(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each question's probability from a model fitted on the other folds."""
    from sklearn.model_selection import StratifiedKFold

    predicted = np.zeros(len(y))
    for train, test in StratifiedKFold(FOLDS, shuffle=True, random_state=SEED).split(x, y):
        predicted[test] = probabilities(fit_model(x[train], y[train]), x[test])
    return predicted


def _bins(p: np.ndarray, bins: int = BINS) -> list[np.ndarray]:
    """The questions in each equal-width probability bin that holds any (the last bin includes 1.0)."""
    masks = [(p >= low) & ((p < high) | (high == 1.0)) for low, high in pairwise(np.linspace(0, 1, bins + 1))]
    return [m for m in masks if m.any()]


def expected_calibration_error(p: np.ndarray, y: np.ndarray) -> float:
    return float(sum(inside.mean() * abs(p[inside].mean() - y[inside].mean()) for inside in _bins(p)))


def rates(p: np.ndarray, y: np.ndarray, ruled_out: np.ndarray, threshold: float = THRESHOLD) -> dict[str, float]:
    answered = (p >= threshold) & ~ruled_out
    answerable = y == 1
    return {
        "false_answer_rate": float(answered[~answerable].mean()) if (~answerable).any() else 0.0,
        "false_abstention_rate": float((~answered)[answerable].mean()) if answerable.any() else 0.0,
        "accuracy": float((answered == answerable).mean()),
    }


def score(p: np.ndarray, y: np.ndarray, ruled_out: np.ndarray, prefix: str) -> dict[str, float]:
    from sklearn.metrics import roc_auc_score

    decided = np.where(ruled_out, 0.0, p)  # what the served path's confidence is
    out = {
        f"{prefix}auroc": float(roc_auc_score(y, decided)) if 0 < y.sum() < len(y) else float("nan"),
        f"{prefix}ece": expected_calibration_error(decided, y),
        f"{prefix}questions": float(len(y)),
        f"{prefix}answerable": float(y.sum()),
    }
    out |= {f"{prefix}{k}": v for k, v in rates(p, y, ruled_out).items()}
    return out


def reliability_diagram(p: np.ndarray, y: np.ndarray, title: str) -> bytes:
    masks = _bins(p)
    centres = [p[m].mean() for m in masks]
    observed = [y[m].mean() for m in masks]
    counts = [int(m.sum()) for m in masks]
    fig, ax = pyplot().subplots(figsize=(4.6, 4.2))
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    ax.plot(centres, observed, marker="o", label="answerability (out of fold)")
    for c, o, n in zip(centres, observed, counts, strict=True):
        ax.annotate(str(n), (c, o), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.set_xlabel("predicted probability the evidence answers")
    ax.set_ylabel("share answerable")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    return png(fig)


@dataclass(frozen=True)
class Fit:
    model: AnswerabilityModel
    metrics: dict[str, float]
    diagram: bytes
    rows: list[dict[str, Any]]


def fit(pipeline: Pipeline, dev: list[dict[str, Any]], heldout: list[dict[str, Any]]) -> Fit:
    held = held_documents(pipeline)
    dev_rows = observe(pipeline, usable(dev, held))
    x, y = _matrix(dev_rows)
    oof = out_of_fold(x, y)
    model = fit_model(x, y)
    metrics = score(oof, y, _ruled_out(dev_rows), "cv_")
    rows = [
        {"set": "dev", "id": r.id, "category": r.category, "answerable": r.answerable, "p_out_of_fold": p, **r.signals}
        for r, p in zip(dev_rows, oof, strict=True)
    ]
    if heldout:
        held_rows = observe(pipeline, usable(heldout, held))
        hx, hy = _matrix(held_rows)
        hp = probabilities(model, hx)
        metrics |= score(hp, hy, _ruled_out(held_rows), "heldout_")
        rows += [
            {"set": "heldout", "id": r.id, "category": r.category, "answerable": r.answerable, "p": p, **r.signals}
            for r, p in zip(held_rows, hp, strict=True)
        ]
    diagram = reliability_diagram(
        np.where(_ruled_out(dev_rows), 0.0, oof),
        y,
        f"answerability, {FOLDS}-fold CV on {len(y)} dev questions (ECE {metrics['cv_ece']:.3f})",
    )
    return Fit(model, metrics, diagram, rows)


def save(embedding_model: str, result: Fit, path: Path = MODEL_PATH) -> None:
    stored = json.loads(path.read_text()) if path.is_file() else {}
    stored[embedding_model] = {
        **result.model.as_json(),
        **{k: round(v, 4) for k, v in result.metrics.items() if not np.isnan(v)},
    }
    path.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
