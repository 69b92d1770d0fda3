"""The offline deterministic provider: an extractive generator and a rule-based judge, no network.

Generator: the evidence sentences that cover most of the question's key terms, each one a claim citing the
evidence it came from. Judge: the share of the question's entities and key terms that the evidence mentions;
whatever is not covered is listed as missing, which the judge loop turns into targeted sub-queries.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any

import pysbd

from retrieval.model.terms import entities, key_terms, stem, without_possessive, words
from retrieval.model.types import Evidence, JudgeResult, Strategy

MAX_SENTENCES = 4
MAX_PER_EVIDENCE = 2
REDUNDANCY_WEIGHT = 0.7  # MMR: relevance minus this times the overlap with what is already chosen
NEAR_DUPLICATE = 0.8  # word-stem Jaccard at which a sentence says nothing new
# (relevance, evidence rank, evidence id, sentence, its word stems)
Candidate = tuple[float, int, str, str, set[str]]
# Fitted on PubMedQA right vs hard-negative abstracts (`flux evals fit-judge`; dagster_project/evals/judge_fit.py).
GOOD_COVERAGE = 0.575
PARTIAL_COVERAGE = 0.4
SENTENCE_CACHE = 8_192  # evidence texts whose sentences are remembered (~25 MB at most)


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def sentences(text: str) -> list[str]:
    return list(_sentences(text))


@lru_cache(maxsize=SENTENCE_CACHE)
def _sentences(text: str) -> tuple[str, ...]:
    # The same chunk is evidence for many questions (and for each re-retrieval of one); pysbd takes ~10 ms a text.
    # Graph evidence is '. '-separated facts with ids containing dots; pysbd handles both.
    # Questions (a PubMed title is often one) are not claims.
    # Bracketed notices ("[instruction-like text withheld]") are not statements to quote.
    return tuple(
        s.strip()
        for s in _segmenter().segment(text)
        if len(s.strip()) > 20 and not s.strip().endswith("?") and not s.strip().startswith("[")
    )


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def coverage(question: str, evidence: list[Evidence]) -> tuple[float, list[str]]:
    """Share of the question's key terms (entities count double) found in the evidence, and the missing ones."""
    terms = key_terms(question)
    if not terms:
        return 1.0, []
    found = set().union(*(_stems(e.text + " " + e.title) for e in evidence)) if evidence else set()
    entity_stems = {stem(e) for e in entities(question)}
    weights = {t: 2.0 if t in entity_stems else 1.0 for t in terms}
    covered = sum(w for t, w in weights.items() if t in found)
    missing_stems = [t for t in terms if t not in found]
    by_stem = {stem(w): w for w in words(question)}
    return covered / sum(weights.values()), [by_stem.get(t, t) for t in missing_stems]


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def select_sentences(candidates: list[Candidate]) -> list[tuple[str, str]]:
    """Maximal marginal relevance: each next sentence is the most relevant one net of its overlap with those
    already chosen; near-duplicates ("It is part of Glycolysis." / "It is part of Glucose metabolism.") are
    skipped, and no evidence item gives more than MAX_PER_EVIDENCE sentences."""
    remaining = sorted(candidates, key=lambda c: (-c[0], c[1]))
    chosen: list[Candidate] = []
    while remaining and len(chosen) < MAX_SENTENCES:
        per_evidence = {c[2]: sum(1 for x in chosen if x[2] == c[2]) for c in remaining}
        scored = []
        for c in remaining:
            overlap = max((_jaccard(c[4], x[4]) for x in chosen), default=0.0)
            if per_evidence[c[2]] < MAX_PER_EVIDENCE and overlap < NEAR_DUPLICATE:
                scored.append((c[0] - REDUNDANCY_WEIGHT * overlap, -c[1], c))
        if not scored:
            break
        best = max(scored, key=lambda item: item[:2])[2]
        chosen.append(best)
        remaining.remove(best)
    return [(c[2], c[3]) for c in chosen]


_GENE_LIKE = re.compile(r"^(?=.{3,}$)(?=.*[A-Z])[A-Z0-9][A-Za-z0-9-]*$")


def _identifiers(question: str) -> list[str]:
    """The question's gene-like and id-like names (TP53, PTEN, BRAF, V600E, rs1042522): three characters or more
    with a capital, not plain capitalised words ("Which", "Lynch") nor phases ("G1")."""
    tokens = [without_possessive(e) for e in entities(question)]
    return [t for t in tokens if _GENE_LIKE.match(t) and (any(c.isdigit() for c in t) or t.isupper())]


def about_what_is_named(
    question: str, pool: list[tuple[int, str, str, set[str]]]
) -> list[tuple[int, str, str, set[str]]]:
    """Only sentences that name one of the genes or ids the question names, when any does: an answer about TP53
    quotes sentences about TP53, never about its neighbours."""
    named = _identifiers(question)
    if not named:
        return pool
    about = [
        item
        for item in pool
        if any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", item[2], re.IGNORECASE) for n in named)
    ]
    return about or pool


class OfflineProvider:
    name = "offline-extractive"
    writes_prose = False  # graph answers are composed from their facts as they are
    instructions: tuple[str, ...] = ()  # no prompts: it extracts sentences
    context_budget: int | None = None  # it reads every item whole

    def generate(self, question: str, evidence: list[Evidence]) -> str:
        terms = set(key_terms(question))
        # A document's title restates its topic ("Regulation of X"); it is no statement that answers anything.
        pool = about_what_is_named(
            question,
            [
                (rank, ev.id, sentence, _stems(sentence))
                for rank, ev in enumerate(evidence)
                for sentence in sentences(ev.text)
                if sentence.rstrip(".") != ev.title.rstrip(".")
            ],
        )
        # Rare terms weigh more (an IDF over the evidence sentences): "glycolysis" beats "KEGG" or "genes".
        df = {t: sum(t in stems for *_, stems in pool) for t in terms}
        # BM25's idf: a term in every sentence weighs ~0, so boilerplate cannot outrank the rare term.
        weight = {t: math.log(1 + (len(pool) - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
        total = sum(weight.values()) or 1.0
        candidates: list[Candidate] = []
        for rank, ev_id, sentence, stems in pool:
            hit = sum(weight[t] for t in terms & stems) / total
            if hit > 0:
                # Ties go to better-ranked evidence.
                candidates.append((hit - 0.01 * rank, rank, ev_id, sentence, stems))
        chosen = select_sentences(candidates)
        per_evidence = {ev_id for ev_id, _ in chosen}
        if not chosen:
            return json.dumps(
                {
                    "answer": "The evidence retrieved does not address this question.",
                    "claims": [],
                    "citations": [],
                    "confidence": 0.0,
                    "reasoning_summary": "No evidence sentence shares a key term with the question.",
                }
            )
        covered, _missing = coverage(question, [Evidence(id=i, kind="chunk", text=s) for i, s in chosen])
        claims = [{"text": s, "citations": [i]} for i, s in chosen]
        return json.dumps(
            {
                "answer": " ".join(f"{s} [{i}]" for i, s in chosen),
                "claims": claims,
                "citations": list(dict.fromkeys(i for i, _ in chosen)),
                "confidence": round(min(1.0, covered), 3),
                "reasoning_summary": f"Extractive answer: {len(chosen)} sentences from {len(per_evidence)} evidence "
                f"items, covering {covered:.0%} of the question's key terms.",
            }
        )

    def judge(self, question: str, evidence: list[Evidence]) -> JudgeResult:
        if not evidence:
            return JudgeResult(verdict="bad", confidence=1.0, missing=[question], rationale="no evidence retrieved")
        share, missing = coverage(question, evidence)
        verdict = "good" if share >= GOOD_COVERAGE else "partial" if share >= PARTIAL_COVERAGE else "bad"
        return JudgeResult(
            verdict=verdict,
            confidence=round(share, 3),
            missing=missing,
            rationale=f"evidence covers {share:.0%} of the question's entities and key terms",
        )

    def rewrite(self, question: str, strategy: Strategy) -> list[str] | None:
        return None  # the router's rules are the offline rewrite

    def screen(self, question: str) -> str | None:
        return None  # the offline rules in guardrails.py are the screen

    def propose_plan(self, question: str, schema: dict[str, Any]) -> str | None:
        return None  # the kinds' recognisers are the offline reading


def strip_markers(text: str) -> str:
    return re.sub(r"\s*\[[^\]]+\]", "", text)
