"""The evidence floor, pure logic: its two signals, the fit (most unanswerable questions refused within the false
abstention cap) and cross-validation on points it was not fitted on."""

from __future__ import annotations

import numpy as np

from dagster_project.evals.evidence_floor import MAX_FALSE_ABSTENTION, _rates, cross_validate, fit_floor
from retrieval.model.types import Evidence
from retrieval.retrievers.relevance import EvidenceFloor, floor_for, signals


def chunk(text: str, cosine: float, score: float) -> Evidence:
    return Evidence(id=f"c{score}", kind="chunk", text=text, score=score, scores={"cosine": cosine})


def test_signals_are_the_best_cosine_and_the_question_terms_found_in_the_best_chunks() -> None:
    evidence = [chunk("Glycolysis converts glucose to pyruvate.", 0.62, 3.0),
                chunk("Markets and fundamentalism.", 0.31, 1.0),
                Evidence(id="hsa00010", kind="graph", text="glucose pyruvate", score=9.0)]
    cosine, overlap, shared = signals("How does glycolysis turn glucose into pyruvate?", evidence)
    assert cosine == 0.62 and not shared  # no name written in the question
    assert 0.5 < overlap <= 1.0  # glycolysis, glucose, pyruvate found; "turn" not
    assert signals("What does TP53 do?", [chunk("Stress activates tp53.", 0.3, 1.0)])[2]
    assert not signals("What does BRCA1 do?", [chunk("Stress activates TP53.", 0.3, 1.0)])[2]
    assert signals("anything", [Evidence(id="g", kind="graph", text="x", score=1.0)]) == (0.0, 0.0, False)


def test_unrelated_needs_both_signals_under_the_floor() -> None:
    floor = EvidenceFloor(cosine_min=0.5, overlap_min=0.4)
    question = "What regulates quorum sensing in bacteria?"
    assert floor.unrelated(question, [chunk("Market fundamentalism and policy.", 0.2, 1.0)])
    assert not floor.unrelated(question, [chunk("Market fundamentalism and policy.", 0.7, 1.0)])
    assert not floor.unrelated(question, [chunk("Quorum sensing regulates bacteria.", 0.2, 1.0)])
    # A gene the question names, found in the evidence, is never "unrelated".
    assert not floor.unrelated("What does TP53 do in frogs?", [chunk("TP53 and markets.", 0.1, 1.0)])
    assert floor_for("no-such-model") is None  # no fitted floor: nothing is refused


def test_the_fit_refuses_unanswerable_questions_within_the_false_abstention_cap() -> None:
    rng = np.random.default_rng(3)
    answerable = np.column_stack([rng.uniform(0.5, 0.9, 60), rng.uniform(0.3, 1.0, 60), np.zeros(60)])
    unanswerable = np.column_stack([rng.uniform(0.1, 0.45, 40), rng.uniform(0.0, 0.25, 40), np.zeros(40)])
    points = np.vstack([answerable, unanswerable])
    labels = np.array([1] * 60 + [0] * 40)
    floor = fit_floor(points, labels)
    false, true = _rates(floor, points, labels)
    assert false <= MAX_FALSE_ABSTENTION and true == 1.0
    cv_false, cv_true = cross_validate(points, labels)
    assert cv_false <= 0.1 and cv_true >= 0.9
    # Signals that do not separate the two sets leave little to refuse: the metric can fail.
    mixed = np.vstack([answerable, answerable[:40]])
    assert _rates(fit_floor(mixed, labels), mixed, labels)[1] <= 0.2
