"""The offline deterministic provider: an extractive generator whose replies pass the same validation as an LLM's,
and a rule-based judge by coverage of the question's entities and key terms."""

from __future__ import annotations

import json

from retrieval.answering.offline import (
    MAX_PER_EVIDENCE,
    MAX_SENTENCES,
    OfflineProvider,
    select_sentences,
    sentences,
    strip_markers,
)
from retrieval.model.answer import validate_answer
from retrieval.model.types import Evidence

PROVIDER = OfflineProvider()
QUESTION = "Which enzymes catalyse the steps of glycolysis?"
EVIDENCE = [
    Evidence(
        id="pubmed_1_0",
        kind="chunk",
        source="pubmed",
        text=(
            "Hexokinase catalyses the first step of glycolysis in the cytosol. Phosphofructokinase catalyses the "
            "committed step of glycolysis. Pyruvate kinase catalyses the last step of glycolysis. "
            "The study enrolled forty healthy volunteers."
        ),
    ),
    Evidence(
        id="R-HSA-70171",
        kind="graph",
        source="reactome",
        text=(
            'Pathway R-HSA-70171 "Glycolysis" (Reactome, Homo sapiens). Reactions (2): R-HSA-70420 enolase step; '
            "R-HSA-70467 aldolase step. Enzymes of glycolysis include ENO1 and ALDOA."
        ),
    ),
    Evidence(
        id="pubmed_2_0",
        kind="chunk",
        source="pubmed",
        text=(
            "Enzymes catalyse steps in many metabolic pathways of the liver. Soil bacteria were cultured for a week."
        ),
    ),
]


def generated(question: str, evidence: list[Evidence]) -> dict:
    return json.loads(PROVIDER.generate(question, evidence))


def test_generated_reply_passes_validation_without_warnings() -> None:
    raw = PROVIDER.generate(QUESTION, EVIDENCE)
    answer = validate_answer(QUESTION, raw, EVIDENCE)
    assert answer.warnings == []
    assert answer.claims
    assert 0.0 < answer.confidence <= 1.0
    assert answer.confidence == json.loads(raw)["confidence"]


def test_every_claim_cites_exactly_the_evidence_its_sentence_came_from() -> None:
    reply = generated(QUESTION, EVIDENCE)
    by_id = {e.id: e for e in EVIDENCE}
    for claim in reply["claims"]:
        assert len(claim["citations"]) == 1
        assert claim["text"] in by_id[claim["citations"][0]].text
    assert reply["citations"] == list(dict.fromkeys(c["citations"][0] for c in reply["claims"]))


def test_answer_text_is_the_claims_with_their_markers() -> None:
    reply = generated(QUESTION, EVIDENCE)
    assert reply["answer"] == " ".join(f"{c['text']} [{c['citations'][0]}]" for c in reply["claims"])
    assert strip_markers(reply["answer"]) == " ".join(c["text"] for c in reply["claims"])


def test_at_most_four_sentences_and_two_per_evidence() -> None:
    # Every sentence of the first item covers the question; only two of them may be used.
    reply = generated(QUESTION, EVIDENCE)
    cited = [c["citations"][0] for c in reply["claims"]]
    assert len(cited) == MAX_SENTENCES
    assert max(cited.count(i) for i in set(cited)) <= MAX_PER_EVIDENCE
    assert cited.count("pubmed_1_0") == MAX_PER_EVIDENCE
    many = [
        Evidence(id=f"pubmed_{i}_0", kind="chunk", text=f"Glycolysis enzymes catalyse step number {i} here.")
        for i in range(10)
    ]
    assert len(generated(QUESTION, many)["claims"]) == MAX_SENTENCES


def test_irrelevant_sentences_are_not_claims() -> None:
    texts = [c["text"] for c in generated(QUESTION, EVIDENCE)["claims"]]
    assert not any("volunteers" in t or "Soil bacteria" in t for t in texts)


def test_rare_question_term_outranks_a_common_one() -> None:
    # "genes" is in every sentence, "glycolysis" in one; each sentence shares one term with the question. The
    # glycolysis sentence is ranked last as evidence, so only the term weighting can put it first.
    question = "Which genes take part in glycolysis?"
    common = [
        Evidence(id=f"kegg_{i}_0", kind="chunk", text=f"KEGG pathway genes are listed for organism code {i}.")
        for i in range(3)
    ]
    rare = Evidence(id="pubmed_9_0", kind="chunk", text="Hexokinase is the first enzyme of glycolysis in the cytosol.")
    reply = generated(question, [*common, rare])
    assert reply["claims"][0]["text"] == rare.text
    assert reply["claims"][0]["citations"] == ["pubmed_9_0"]


def test_no_overlapping_evidence_gives_no_claims_and_zero_confidence() -> None:
    reply = generated("How does photosynthesis work in chloroplasts?", EVIDENCE)
    assert reply["claims"] == [] and reply["citations"] == []
    assert reply["confidence"] == 0.0
    assert generated(QUESTION, [])["claims"] == []


def test_short_fragments_are_not_sentences() -> None:
    assert sentences("Glycolysis. Hexokinase catalyses the first step of glycolysis.") == [
        "Hexokinase catalyses the first step of glycolysis."
    ]


# --- judge -------------------------------------------------------------------------------------------------------


def test_judge_full_coverage_is_good() -> None:
    result = PROVIDER.judge("Which enzymes catalyse glycolysis?", EVIDENCE)
    assert result.verdict == "good"
    assert result.confidence == 1.0
    assert result.missing == []


def test_judge_about_half_coverage_is_partial_and_lists_what_is_missing() -> None:
    result = PROVIDER.judge("Which enzymes link glycolysis and gluconeogenesis?", EVIDENCE)
    assert result.verdict == "partial"
    assert result.confidence == 0.5
    assert result.missing == ["link", "gluconeogenesis"]


def test_judge_entities_weigh_double() -> None:
    # Covered: glycolysis (1). Missing: TP53 (an entity, 2) and regulate (1). Share 1/4; unweighted it is 1/3.
    result = PROVIDER.judge("Does TP53 regulate glycolysis?", EVIDENCE)
    assert result.missing == ["TP53", "regulate"]
    assert result.confidence == 0.25
    assert result.verdict == "bad"


def test_judge_no_coverage_is_bad() -> None:
    result = PROVIDER.judge("How does photosynthesis work in chloroplasts?", EVIDENCE)
    assert result.verdict == "bad"
    assert result.confidence == 0.0
    assert result.missing == ["photosynthesis", "chloroplasts"]


def test_judge_without_evidence_is_bad_with_the_question_missing() -> None:
    result = PROVIDER.judge(QUESTION, [])
    assert result.verdict == "bad"
    assert result.missing == [QUESTION]


def test_judge_matches_word_forms_by_stem() -> None:
    # "glycolytic" and "enzyme" meet "glycolysis" and "Enzymes" in the evidence.
    result = PROVIDER.judge("Which glycolytic enzyme comes first?", EVIDENCE)
    assert result.missing == ["comes"]
    assert result.confidence == 0.75


def test_offline_rewrite_and_screen_defer_to_the_rules() -> None:
    assert PROVIDER.rewrite(QUESTION, "decompose") is None
    assert PROVIDER.screen(QUESTION) is None


def test_sentences_are_chosen_by_relevance_net_of_redundancy() -> None:
    evidence = [
        Evidence(
            id="a",
            kind="chunk",
            text="Hexokinase phosphorylates glucose in glycolysis in the cytosol. "
            "Hexokinase phosphorylates glucose in glycolysis in the cytoplasm.",
        ),
        Evidence(id="b", kind="chunk", text="Pyruvate kinase completes glycolysis by forming pyruvate from PEP."),
    ]
    reply = json.loads(PROVIDER.generate("How does hexokinase act on glucose in glycolysis?", evidence))
    texts = [c["text"] for c in reply["claims"]]
    # The second sentence of `a` is more relevant than `b`'s but repeats the first: the new one comes before it.
    assert texts[0].startswith("Hexokinase phosphorylates glucose") and texts[1].startswith("Pyruvate kinase")
    chosen = select_sentences(
        [(0.9, 0, "a", "s1", {"x", "y"}), (0.85, 0, "a", "s2", {"x", "y", "z"}), (0.5, 1, "b", "s3", {"w"})]
    )
    assert chosen == [("a", "s1"), ("b", "s3"), ("a", "s2")], "0.67 overlap: s2 comes after the new s3"
