"""The literature answerability decision and its measurement, pure logic: the naming rule, the model's threshold,
the signals that separate evidence about the asked relation from evidence about its neighbours, the fitting helpers
(calibration error, rates, cross-validated AUROC that a worse signal set lowers), the extractive generator quoting
only sentences about what is named, and the scorecard's answerability metrics and gate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dagster_project.evals import abstention_eval
from dagster_project.evals.answerability_fit import expected_calibration_error, fit_model, out_of_fold, probabilities
from dagster_project.evals.answerability_fit import rates as decision_rates
from dagster_project.evals.gate import compare
from dagster_project.evals.questions import EvalQuestion
from retrieval.answering.answerability import SIGNALS, AnswerabilityModel, decide, model_for, signals
from retrieval.answering.offline import OfflineProvider
from retrieval.model.answer import FinalAnswer
from retrieval.model.plan import Entity, Plan
from retrieval.model.types import Evidence

MDM2_TEXT = (
    "MDM2 is an E3 ubiquitin ligase that targets TP53 for proteasomal degradation. "
    "DNA damage activates ATM, which phosphorylates CHEK2."
)


def chunk(text: str, cosine: float = 0.6, ident: str = "openalex_W1_0", title: str = "") -> Evidence:
    return Evidence(id=ident, kind="chunk", text=text, title=title, score=1.0, scores={"cosine": cosine})


def gene_plan(*symbols: str) -> Plan:
    return Plan(
        kind="literature",
        operation="search",
        subjects=[Entity(type="gene", id=f"HGNC:{n}", name=s, source="hgnc") for n, s in enumerate(symbols)],
    )


def test_a_named_gene_no_text_mentions_is_never_answered_about_its_neighbours() -> None:
    decision = decide("What does MDM4 do to p53?", gene_plan("MDM4"), [chunk(MDM2_TEXT)], model=None)
    assert not decision.answers and decision.ruled_out and "MDM4" in decision.why
    # Named by an alias the text uses: covered.
    aliased = decide(
        "What does p53 do?", gene_plan("TP53"), [chunk(MDM2_TEXT)], model=None, aliases={"HGNC:0": ("TP53", "P53")}
    )
    assert aliased.answers and not aliased.ruled_out
    nothing = decide("What does MDM2 do?", gene_plan("MDM2"), [], model=None)
    assert not nothing.answers and "no text evidence" in nothing.why


def test_identifiers_in_the_question_must_appear_possessives_and_phases_aside() -> None:
    assert signals("Is rs1042522 in TP53 pathogenic?", None, [chunk(MDM2_TEXT)]).unmentioned == ("rs1042522",)
    assert signals("What is MDM2's job at G1?", None, [chunk(MDM2_TEXT)]).unmentioned == ()


def test_the_model_decides_at_its_threshold_and_its_probability_is_the_confidence() -> None:
    flat = AnswerabilityModel(
        SIGNALS, (0.0,) * len(SIGNALS), (1.0,) * len(SIGNALS), (0.0,) * len(SIGNALS), intercept=0.0, threshold=0.6
    )
    decision = decide("How does MDM2 control TP53?", gene_plan("MDM2", "TP53"), [chunk(MDM2_TEXT)], flat)
    assert decision.probability == pytest.approx(0.5) and not decision.answers
    eager = AnswerabilityModel(SIGNALS, flat.mean, flat.scale, flat.coef, intercept=2.0, threshold=0.6)
    assert decide("How does MDM2 control TP53?", gene_plan("MDM2", "TP53"), [chunk(MDM2_TEXT)], eager).answers


def test_the_relation_asked_and_the_entities_together_in_one_sentence_separate_answer_from_topic() -> None:
    about = signals("How does MDM2 degrade TP53?", gene_plan("MDM2", "TP53"), [chunk(MDM2_TEXT)])
    apart = signals("Does ATM phosphorylate MDM2?", gene_plan("ATM", "MDM2"), [chunk(MDM2_TEXT)])
    assert about.values["entities_together"] == 1.0 and apart.values["entities_together"] == 0.5
    assert about.values["best_sentence_relation"] > apart.values["best_sentence_relation"] - 1e-9


def test_the_shipped_model_is_fitted_for_the_default_encoder_with_its_measured_figures() -> None:
    model = model_for("all-MiniLM-L6-v2")
    assert model is not None and model.signals == SIGNALS and 0 < model.threshold < 1
    assert model_for("no-such-encoder") is None


def test_calibration_error_and_decision_rates() -> None:
    y = np.array([0, 0, 1, 1, 1, 0])
    assert expected_calibration_error(y.astype(float), y) == 0.0
    assert expected_calibration_error(np.full(6, 0.9), y) == pytest.approx(0.4)
    p = np.array([0.1, 0.7, 0.9, 0.2, 0.8, 0.3])
    figures = decision_rates(p, y, np.array([False, False, False, False, True, False]))
    assert figures["false_answer_rate"] == pytest.approx(1 / 3)  # the 0.7 one
    assert figures["false_abstention_rate"] == pytest.approx(2 / 3)  # the 0.2 one and the ruled-out 0.8 one


def test_cross_validated_auroc_falls_when_the_informative_signal_is_taken_away() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    informative = y + rng.normal(0, 0.6, 400)
    noise = rng.normal(0, 1, (400, len(SIGNALS) - 1))
    good = np.column_stack([informative, noise])
    worse = np.column_stack([rng.normal(0, 1, 400), noise])
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(y, out_of_fold(good, y)) > 0.8 > 0.65 > roc_auc_score(y, out_of_fold(worse, y))
    model = fit_model(good, y)
    assert probabilities(model, good[:5]).shape == (5,) and len(model.coef) == len(SIGNALS)


def test_the_extractive_answer_quotes_sentences_about_what_is_named_and_never_a_title() -> None:
    evidence = [
        chunk(
            "PTEN removes the 3-phosphate from PIP3. Downstream effectors amplify the signal widely.",
            title="PTEN opposes PI3K-AKT signaling",
        ),
        chunk(
            "Regulation of the mitochondrial pyruvate carrier",
            ident="openalex_W2_0",
            title="Regulation of the mitochondrial pyruvate carrier",
        ),
    ]
    reply = json.loads(OfflineProvider().generate("What is downstream of PTEN?", evidence))
    assert [c["text"] for c in reply["claims"]] == ["PTEN removes the 3-phosphate from PIP3."]
    titled = json.loads(
        OfflineProvider().generate("How is the mitochondrial pyruvate carrier regulated?", evidence[1:])
    )
    assert titled["claims"] == []


def _q(answerable: bool, **extra: str) -> EvalQuestion:
    return EvalQuestion(
        "q1",
        "q",
        kind="answerability",
        extra={
            "set": "literature",
            "group": "g",
            "answerable": str(answerable).lower(),
            "key_phrases": "ubiquitin",
            **extra,
        },
    )


def test_answerability_metrics_count_confident_non_answers_and_the_gate_fails_when_they_grow() -> None:
    said = FinalAnswer(question="q", answer="MDM2 is an E3 ubiquitin ligase.", confidence=0.9)
    wrong = FinalAnswer(question="q", answer="Something about ATM.", confidence=0.9)
    refused = FinalAnswer(question="q", answer="Flux does not hold that.", confidence=0.0)
    rows = [
        abstention_eval.row(_q(True), said),
        abstention_eval.row(_q(True), wrong),
        abstention_eval.row(_q(False), refused),
        abstention_eval.row(_q(False), wrong),
    ]
    figures = abstention_eval.metrics(rows)
    assert figures["answerability_answered"] == 1.0 and figures["answerability_refused"] == 0.5
    assert figures["confident_non_answers"] == 2.0 and figures["answerability_right"] == 0.5
    failed = {c.metric for c in compare("answer", {**figures, "confident_non_answers": 3.0}, figures, 0.02) if c.failed}
    assert failed == {"confident_non_answers"}
    assert not [c for c in compare("answer", figures, figures, 0.02) if c.failed]
