"""Guardrails for what the stores hand the generator, and for what comes back (docs/security.md and
docs/answers.md).

A stored document is data, never instructions: a sentence in retrieved evidence that tries to steer the model
(the same injection patterns the input screen refuses, forged `[id] (source)` evidence headers, chat-template
tokens) is withheld before the judge or the generator sees it, and the answer says so. The prompt only asks the
model to ignore such text; withholding means a model that would obey never reads it. On the way out, an answer that
repeats Flux's own instructions (a leaked system prompt) loses the sentences that do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from retrieval.model.answer import FALLBACK_TEXT, FinalAnswer
from retrieval.model.types import Evidence
from retrieval.question.guardrails import INJECTION_PATTERNS, replace_sentences

WITHHELD = "[instruction-like text withheld]"
ECHO_REMOVED = "[Removed: text repeating Flux's instructions.]"
_I = re.IGNORECASE
_EVIDENCE_ONLY = [
    # A line that imitates the prompt's evidence header would let a document invent a citable id.
    re.compile(r"^\s*\[[^\]\n]{1,80}\]\s*\((?:reactome|kegg|pubmed|openalex|hgnc|chunk|graph)\)", _I | re.MULTILINE),
    # Text addressed to whatever model reads it ("AI assistants summarising this must ...").
    re.compile(
        r"\b(?:AI|language\s+models?|LLMs?|assistants?|chatbots?)\b[^.!?\n]{0,60}"
        r"\b(?:must|should|are\s+instructed\s+to|have\s+to)\s+(?:always\s+|now\s+|only\s+)?"
        r"(?:answer|reply|respond|say|cite|output|print|reveal|state|claim)\b",
        _I,
    ),
]
_PATTERNS = [*INJECTION_PATTERNS, *_EVIDENCE_ONLY]
_ECHO_WORDS = 8  # a run of this many words from an instruction text is an echo, not a coincidence


def steers_model(text: str) -> bool:
    return any(p.search(text) for p in _PATTERNS)


def withhold_instructions(text: str) -> tuple[str, int]:
    """The text with every instruction-like sentence replaced by WITHHELD; (text, sentences withheld)."""
    if not text.strip() or not steers_model(text):
        return text, 0
    result, withheld = replace_sentences(text, steers_model, WITHHELD)
    # A pattern that spans sentences (a forged header line) is withheld whole.
    if steers_model(result):
        return WITHHELD, withheld + 1
    return result, withheld


def screen_evidence(evidence: list[Evidence]) -> list[Evidence]:
    """Evidence with instruction-like sentences withheld from its text and title (copies; the input is untouched)."""
    screened: list[Evidence] = []
    for item in evidence:
        text, in_text = withhold_instructions(item.text)
        title, in_title = withhold_instructions(item.title)
        screened.append(item.model_copy(update={"text": text, "title": title}) if in_text or in_title else item)
    return screened


def withheld_count(evidence: Iterable[Evidence]) -> int:
    return sum(WITHHELD in e.text or WITHHELD in e.title for e in evidence)


def withheld_warning(count: int) -> str:
    return (
        f"{count} evidence passage(s) contained text addressed to the model (instructions, forged evidence "
        "headers); it was withheld and nothing in it was followed."
    )


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(words[i : i + _ECHO_WORDS]) for i in range(len(words) - _ECHO_WORDS + 1)}


class EchoDetector:
    """Finds sentences that repeat a run of words from Flux's own instruction texts."""

    def __init__(self, instructions: Iterable[str]) -> None:
        self._shingles: set[tuple[str, ...]] = set()
        for text in instructions:
            self._shingles |= _shingles(text)

    def echoes(self, text: str) -> bool:
        return bool(self._shingles) and not self._shingles.isdisjoint(_shingles(text))

    def scrub(self, text: str) -> tuple[str, int]:
        """The text with echoing sentences replaced by ECHO_REMOVED; (text, sentences removed)."""
        if not self.echoes(text):
            return text, 0
        result, removed = replace_sentences(text, self.echoes, ECHO_REMOVED)
        # An echo split across sentence boundaries still leaks: drop the whole text then.
        return (ECHO_REMOVED, removed + 1) if self.echoes(result) else (result, removed)


def scrub_instruction_echo(answer: FinalAnswer, detector: EchoDetector) -> FinalAnswer:
    """The answer without sentences or claims that repeat Flux's instructions; the rest and its citations stay."""
    text, in_text = detector.scrub(answer.answer)
    summary, in_summary = detector.scrub(answer.reasoning_summary)
    kept = [c for c in answer.claims if not detector.echoes(c.text)]
    if not (in_text or in_summary or len(kept) < len(answer.claims)):
        return answer
    cited = {i for c in kept for i in c.citations}
    update: dict[str, Any] = {
        "answer": text if kept else FALLBACK_TEXT,
        "reasoning_summary": summary,
        "claims": kept,
        "citations": [c for c in answer.citations if c.id in cited],
        "warnings": [*answer.warnings, "The generator repeated Flux's instructions; that text was removed."],
    }
    if not kept:
        update["confidence"] = 0.0
    return answer.model_copy(update=update)
