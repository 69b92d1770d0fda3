"""FinalAnswer and its three-pass validation: (1) the reply parses as JSON, (2) it matches the generator schema,
(3) every citation refers to evidence actually given and every claim cites something.

A parse or schema failure never yields a half-parsed answer: the user gets an explicit fallback with confidence 0
and the error in `warnings`. Citations to evidence that was never given are dropped (with a warning), never shown.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from retrieval.model.answer_data import AnswerData
from retrieval.model.links import source_link
from retrieval.model.llm_budget import LLMCall
from retrieval.model.plan import FactType, Plan
from retrieval.model.types import Evidence, EvidenceKind, Mode, Tier

RetrievalQuality = Literal["good", "partial", "bad", "unjudged"]
RetryName = Literal["broadened", "augmented"]
AttemptName = Literal["first", "broadened", "augmented"]
FALLBACK_TEXT = "No answer could be produced from the evidence; see warnings."


class GeneratedClaim(BaseModel):
    text: str = Field(min_length=1)
    citations: list[str] = Field(default_factory=list)


class GeneratedAnswer(BaseModel):
    """What a generator (LLM or offline) must return, as JSON."""

    answer: str = Field(min_length=1)
    claims: list[GeneratedClaim] = Field(default_factory=list)
    citations: list[str] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning_summary: str = ""


class Citation(BaseModel):
    id: str
    kind: EvidenceKind
    source: str = ""
    title: str = ""
    snippet: str = ""
    url: str = Field(default="", description="The public page of the cited node or of the chunk's document.")


class Claim(BaseModel):
    text: str
    citations: list[str] = Field(min_length=1)


class GroundingVerdict(BaseModel):
    """How far a generated answer's claims are supported by the evidence they cite (answering/grounding.py)."""

    claims_checked: int = Field(ge=0)
    claims_supported: int = Field(ge=0)
    claims_removed: int = Field(ge=0, description="Unsupported claims taken out of the answer.")
    coverage: float | None = Field(default=None, ge=0.0, le=1.0, description="Supported / checked; none checked: null.")
    min_coverage: float = Field(ge=0.0, le=1.0, description="Below this, a second retrieval ran.")
    rule: str = Field(description="The fitted rule a claim passed or failed.")
    retries: list[RetryName] = Field(default_factory=list, description="Second retrievals that ran, in order.")
    answered_from: AttemptName = Field(default="first", description="The attempt whose answer this is.")


class DataTable(BaseModel):
    """A typed answer's facts as one table: what the page shows (sortable, copyable) and the export prints."""

    caption: str
    of: Literal["gene", "pathway", "compound", "reaction", "participant", "article", "entry"] = Field(
        default="entry", description="What each row is."
    )
    columns: list[str]
    rows: list[list[str]]


class FinalAnswer(BaseModel):
    question: str
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    retrieval_quality: RetrievalQuality = "unjudged"
    used_sources: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    reasoning_summary: str = ""
    # Provenance: which data, code and Dagster run produced the index this answer was read from.
    dataset_version: str = ""
    releases: dict[str, str] = Field(
        default_factory=dict,
        description="Typed answers: the release of each source whose facts the answer cites (source → release).",
    )
    pipeline_version: str = ""
    index_version: str = ""
    dagster_run_id: str = ""
    # How it was produced.
    mode: Mode = "quick"
    route: str = "direct"
    reranker: str = ""
    provider: str = ""
    attempts: int = Field(default=0, ge=0, description="Re-retrieval attempts the judge loop made.")
    judge_missing: list[str] = Field(default_factory=list)
    refused: bool = False
    kind: str = Field(default="literature", description="The question kind (retrieval/kinds/registry.py).")
    plan: Plan | None = Field(
        default=None,
        description="The question as Flux read it: a typed plan over what it holds (`flux ask --explain` prints it).",
    )
    scope: FactType | None = Field(
        default=None,
        description="The kind of fact the question asks for that Flux "
        "holds no data for (drug, variant, expression, …); null when it holds it.",
    )
    answerability: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Literature answers: the fitted probability that the evidence answers the question.",
    )
    answer_id: str = Field(default="", description="Where the stored answer lives: GET /answers/{answer_id}.")
    conversation_id: str = Field(default="", description="Pass it back with a follow-up question.")
    asked_as: str = Field(default="", description="The question as answered, after follow-up resolution.")
    data: AnswerData | None = Field(default=None, description="Graph answers: the structured facts (complete lists).")
    table: DataTable | None = Field(default=None, description="Graph answers: the facts as one table.")
    grounding: GroundingVerdict | None = Field(
        default=None,
        description="Generated answers: their claims checked "
        "against the evidence they cite (composed graph answers: none).",
    )
    context_tiers: dict[str, Tier] = Field(
        default_factory=dict,
        description="What an LLM was shown of each evidence "
        "item: full, cut to 1000 or 200 characters, or dropped (budget).",
    )
    cached: Literal["exact", "semantic"] | None = None
    timings_ms: dict[str, float] = Field(default_factory=dict)
    llm_calls: list[LLMCall] = Field(
        default_factory=list,
        description="Each LLM call the answer took: its step, tokens in and out, latency, queueing and outcome.",
    )


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_reply(raw: str) -> object:
    """A generator reply as JSON (a ```json fence around it is allowed)."""
    match = _FENCE.match(raw)
    return json.loads(match.group(1) if match else raw)


def fallback_answer(question: str, error: str) -> FinalAnswer:
    return FinalAnswer(question=question, answer=FALLBACK_TEXT, confidence=0.0, warnings=[error])


def is_fallback(answer: FinalAnswer) -> bool:
    """Whether validation turned the reply down (not JSON, a schema violation, no supported claim)."""
    return answer.answer == FALLBACK_TEXT and not answer.claims


def validate_answer(question: str, raw: str, evidence: list[Evidence]) -> FinalAnswer:
    """Run the three passes over a generator reply; the result carries no provenance stamps yet."""
    try:
        payload = parse_reply(raw)
    except (json.JSONDecodeError, TypeError) as exc:
        return fallback_answer(question, f"answer rejected: the generator reply is not valid JSON ({exc})")
    try:
        generated = GeneratedAnswer.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        return fallback_answer(question, f"answer rejected: schema violation at {where}: {first['msg']}")
    return _check_citations(question, generated, {e.id: e for e in evidence})


def _check_citations(question: str, generated: GeneratedAnswer, given: dict[str, Evidence]) -> FinalAnswer:
    warnings: list[str] = []
    unknown = sorted(
        {c for c in generated.citations + [c for cl in generated.claims for c in cl.citations] if c not in given}
    )
    if unknown:
        warnings.append(f"dropped {len(unknown)} citation(s) to evidence that was never given: {', '.join(unknown)}")
    claims: list[Claim] = []
    dropped_claims = 0
    for claim in generated.claims:
        cited = list(dict.fromkeys(c for c in claim.citations if c in given))
        if cited:
            claims.append(Claim(text=_strip_unknown_markers(claim.text, set(unknown)), citations=cited))
        else:
            dropped_claims += 1
    if dropped_claims:
        warnings.append(f"removed {dropped_claims} claim(s) that cite no given evidence")
    if not claims:
        warnings.append("no claim is supported by the given evidence")
        answer = fallback_answer(question, "; ".join(warnings))
        answer.warnings = warnings
        return answer
    # The answer text must not carry what was removed: rebuild it from the supported claims when any went.
    text = generated.answer if not dropped_claims else " ".join(c.text for c in claims)
    text = _strip_unknown_markers(text, set(unknown))
    cited_ids = list(
        dict.fromkeys([c for c in generated.citations if c in given] + [c for claim in claims for c in claim.citations])
    )
    citations = [_citation(given[i]) for i in cited_ids]
    return FinalAnswer(
        question=question,
        answer=text,
        claims=claims,
        citations=citations,
        confidence=generated.confidence,
        reasoning_summary=generated.reasoning_summary,
        warnings=warnings,
        used_sources=sorted({c.source for c in citations if c.source}),
    )


def _strip_unknown_markers(text: str, unknown: set[str]) -> str:
    for ident in unknown:
        text = text.replace(f"[{ident}]", "")
    return re.sub(r"\s{2,}", " ", text).strip()


def _citation(evidence: Evidence) -> Citation:
    snippet = evidence.text if len(evidence.text) <= 240 else evidence.text[:237] + "..."
    return Citation(
        id=evidence.id,
        kind=evidence.kind,
        source=evidence.source,
        title=evidence.title,
        snippet=snippet,
        url=source_link(evidence.id),
    )


def uncited_answer(question: str, raw: str) -> FinalAnswer:
    """A composed statement with nothing to cite ("the index holds no pathway X"): its prose, and no claims."""
    generated = GeneratedAnswer.model_validate(parse_reply(raw))
    return FinalAnswer(
        question=question,
        answer=generated.answer,
        confidence=generated.confidence,
        reasoning_summary=generated.reasoning_summary,
    )


def refusal_answer(question: str, reason: str) -> FinalAnswer:
    """A clear, explicit refusal: nothing retrieved, nothing cited."""
    return FinalAnswer(
        question=question, answer=reason, confidence=0.0, refused=True, warnings=["request refused by input guardrail"]
    )
