"""validate_answer's three passes (docs/answers.md, step 6): JSON parses, schema matches, every
citation refers to evidence actually given and every claim cites something; parse or schema failures give an
explicit fallback with confidence 0, never a half-parsed answer."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from retrieval.model.answer import FALLBACK_TEXT, refusal_answer, validate_answer
from retrieval.model.types import Evidence

QUESTION = "Which genes take part in glycolysis?"
EVIDENCE = [
    Evidence(
        id="pubmed_111_0",
        kind="chunk",
        text="Hexokinase catalyses the first step of glycolysis.",
        title="Hexokinase",
        source="pubmed",
    ),
    Evidence(
        id="R-HSA-70171",
        kind="graph",
        text='Pathway R-HSA-70171 "Glycolysis" (Reactome). Genes (3): HK1.',
        title="Glycolysis",
        source="reactome",
    ),
    Evidence(id="pubmed_222_0", kind="chunk", text="Unrelated evidence about soil bacteria.", source="pubmed"),
    Evidence(id="hsa00010", kind="graph", text="Glycolysis / Gluconeogenesis", source="kegg"),
]


def reply(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "answer": "Hexokinase starts glycolysis [pubmed_111_0]. HK1 is in the Reactome pathway [R-HSA-70171].",
        "claims": [
            {"text": "Hexokinase starts glycolysis.", "citations": ["pubmed_111_0"]},
            {"text": "HK1 is in the Reactome pathway.", "citations": ["R-HSA-70171"]},
        ],
        "citations": ["pubmed_111_0", "R-HSA-70171"],
        "confidence": 0.8,
        "reasoning_summary": "Two evidence items name glycolysis genes.",
    }
    payload.update(overrides)
    return payload


def assert_fallback(answer: Any) -> None:
    assert answer.answer == FALLBACK_TEXT
    assert answer.confidence == 0.0
    assert answer.claims == [] and answer.citations == [] and answer.used_sources == []
    assert answer.warnings


def markers(text: str) -> set[str]:
    return set(re.findall(r"\[([^\[\]]+)\]", text))


# --- pass 1: JSON ------------------------------------------------------------------------------------------------


def test_valid_reply_is_accepted_as_given() -> None:
    answer = validate_answer(QUESTION, json.dumps(reply()), EVIDENCE)
    assert answer.warnings == []
    assert answer.question == QUESTION
    assert answer.answer == reply()["answer"]
    assert answer.confidence == 0.8
    assert answer.reasoning_summary == "Two evidence items name glycolysis genes."
    assert [c.id for c in answer.citations] == ["pubmed_111_0", "R-HSA-70171"]
    assert [(c.kind, c.source, c.title) for c in answer.citations] == [
        ("chunk", "pubmed", "Hexokinase"),
        ("graph", "reactome", "Glycolysis"),
    ]
    assert answer.citations[0].snippet == EVIDENCE[0].text
    assert [(c.text, c.citations) for c in answer.claims] == [
        ("Hexokinase starts glycolysis.", ["pubmed_111_0"]),
        ("HK1 is in the Reactome pathway.", ["R-HSA-70171"]),
    ]


@pytest.mark.parametrize("fence", ["```json\n{}\n```", "```\n{}\n```", "  ```json {} ```  "])
def test_fenced_json_is_accepted(fence: str) -> None:
    answer = validate_answer(QUESTION, fence.replace("{}", json.dumps(reply())), EVIDENCE)
    assert answer.warnings == []
    assert answer.answer == reply()["answer"]


@pytest.mark.parametrize("raw", ["Hexokinase starts glycolysis.", '{"answer": "cut off', "", "```json\nnope\n```"])
def test_not_json_falls_back(raw: str) -> None:
    answer = validate_answer(QUESTION, raw, EVIDENCE)
    assert_fallback(answer)
    assert len(answer.warnings) == 1
    assert "not valid JSON" in answer.warnings[0]


# --- pass 2: schema ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        (reply(confidence=1.5), "confidence"),
        (reply(confidence=-0.1), "confidence"),
        ({k: v for k, v in reply().items() if k != "answer"}, "answer"),
        (reply(answer=""), "answer"),
        (reply(claims="Hexokinase starts glycolysis."), "claims"),
        (reply(claims=[{"citations": ["pubmed_111_0"]}]), "claims.0.text"),
        ([reply()], "reply"),
    ],
)
def test_schema_violations_fall_back(payload: Any, where: str) -> None:
    answer = validate_answer(QUESTION, json.dumps(payload), EVIDENCE)
    assert_fallback(answer)
    assert len(answer.warnings) == 1
    assert "schema" in answer.warnings[0]
    assert f"at {where}" in answer.warnings[0]


# --- pass 3: citations -------------------------------------------------------------------------------------------


def test_unknown_citation_ids_are_dropped_with_a_warning_and_never_shown() -> None:
    payload = reply(
        answer="Hexokinase starts glycolysis [pubmed_111_0] [ghost_1]. HK1 is in the pathway [R-HSA-70171] [R-HSA-9].",
        claims=[
            {"text": "Hexokinase starts glycolysis [ghost_1].", "citations": ["pubmed_111_0", "ghost_1"]},
            {"text": "HK1 is in the pathway.", "citations": ["R-HSA-70171", "R-HSA-9"]},
        ],
        citations=["pubmed_111_0", "ghost_1", "R-HSA-70171"],
    )
    answer = validate_answer(QUESTION, json.dumps(payload), EVIDENCE)
    unknown = {"ghost_1", "R-HSA-9"}
    assert len(answer.warnings) == 1
    assert "ghost_1" in answer.warnings[0] and "R-HSA-9" in answer.warnings[0]
    assert [c.id for c in answer.citations] == ["pubmed_111_0", "R-HSA-70171"]
    assert [c.citations for c in answer.claims] == [["pubmed_111_0"], ["R-HSA-70171"]]
    assert not markers(answer.answer) & unknown
    assert markers(answer.answer) == {"pubmed_111_0", "R-HSA-70171"}
    assert not any(markers(c.text) & unknown for c in answer.claims)
    assert answer.confidence == 0.8


def test_claims_without_given_citations_are_removed_and_the_answer_rebuilt() -> None:
    payload = reply(
        answer="Hexokinase starts glycolysis [pubmed_111_0]. Insulin doubles HK1 [ghost_1]. PFK is rate-limiting.",
        claims=[
            {"text": "Hexokinase starts glycolysis.", "citations": ["pubmed_111_0"]},
            {"text": "Insulin doubles HK1.", "citations": ["ghost_1"]},
            {"text": "PFK is rate-limiting.", "citations": []},
            {"text": "HK1 is in the Reactome pathway.", "citations": ["R-HSA-70171"]},
        ],
        citations=["pubmed_111_0"],
    )
    answer = validate_answer(QUESTION, json.dumps(payload), EVIDENCE)
    assert [c.text for c in answer.claims] == ["Hexokinase starts glycolysis.", "HK1 is in the Reactome pathway."]
    assert answer.answer == "Hexokinase starts glycolysis. HK1 is in the Reactome pathway."
    assert "Insulin" not in answer.answer and "PFK" not in answer.answer
    assert any("removed 2 claim(s)" in w for w in answer.warnings)
    assert any("ghost_1" in w for w in answer.warnings)
    # Citations: those of the reply that were given, then those of the kept claims.
    assert [c.id for c in answer.citations] == ["pubmed_111_0", "R-HSA-70171"]


def test_all_claims_unsupported_falls_back_with_confidence_zero() -> None:
    payload = reply(
        claims=[
            {"text": "Insulin doubles HK1.", "citations": ["ghost_1"]},
            {"text": "PFK is rate-limiting.", "citations": []},
        ],
        citations=["pubmed_111_0"],
        confidence=0.9,
    )
    answer = validate_answer(QUESTION, json.dumps(payload), EVIDENCE)
    assert_fallback(answer)
    assert any("ghost_1" in w for w in answer.warnings)
    assert any("no claim is supported" in w for w in answer.warnings)


def test_reply_without_claims_falls_back() -> None:
    answer = validate_answer(QUESTION, json.dumps(reply(claims=[])), EVIDENCE)
    assert_fallback(answer)


def test_same_reply_against_other_evidence_is_unsupported() -> None:
    answer = validate_answer(QUESTION, json.dumps(reply()), EVIDENCE[2:])
    assert_fallback(answer)


def test_used_sources_come_from_cited_evidence_only() -> None:
    answer = validate_answer(QUESTION, json.dumps(reply()), EVIDENCE)
    assert answer.used_sources == ["pubmed", "reactome"]  # kegg and the other pubmed item were given, not cited
    only_graph = reply(
        answer="HK1 is in it [R-HSA-70171].",
        citations=["R-HSA-70171"],
        claims=[{"text": "HK1 is in it.", "citations": ["R-HSA-70171"]}],
    )
    assert validate_answer(QUESTION, json.dumps(only_graph), EVIDENCE).used_sources == ["reactome"]


def test_duplicate_citations_in_a_claim_are_collapsed() -> None:
    payload = reply(
        claims=[{"text": "Hexokinase starts glycolysis.", "citations": ["pubmed_111_0"] * 3}],
        citations=["pubmed_111_0", "pubmed_111_0"],
    )
    answer = validate_answer(QUESTION, json.dumps(payload), EVIDENCE)
    assert answer.claims[0].citations == ["pubmed_111_0"]
    assert [c.id for c in answer.citations] == ["pubmed_111_0"]


def test_long_evidence_snippet_is_truncated() -> None:
    long = Evidence(id="pubmed_333_0", kind="chunk", text="glycolysis " * 100, source="pubmed")
    payload = reply(
        answer="x [pubmed_333_0]", citations=["pubmed_333_0"], claims=[{"text": "x", "citations": ["pubmed_333_0"]}]
    )
    snippet = validate_answer(QUESTION, json.dumps(payload), [long]).citations[0].snippet
    assert len(snippet) == 240 and snippet.endswith("...")


def test_refusal_answer_is_refused_with_confidence_zero() -> None:
    answer = refusal_answer(QUESTION, "This question asks for personal data.")
    assert answer.refused is True
    assert answer.confidence == 0.0
    assert answer.answer == "This question asks for personal data."
    assert answer.citations == [] and answer.claims == []
    assert answer.warnings == ["request refused by input guardrail"]


def test_validated_answers_are_not_refused() -> None:
    assert validate_answer(QUESTION, json.dumps(reply()), EVIDENCE).refused is False
    assert validate_answer(QUESTION, "not json", EVIDENCE).refused is False
