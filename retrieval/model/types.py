"""The shapes every retrieval stage passes along: evidence, route plans, judge verdicts and provider interfaces.

Evidence ids are what answers cite: a chunk id (`{source}_{external_id}_{chunk_index}`) for Postgres evidence and
the node id itself (`R-HSA-70171`, `hsa00010`, `HGNC:1100`) for graph evidence, so every citation can be looked up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field

EvidenceKind = Literal["chunk", "graph"]
Strategy = Literal["decompose", "expand", "compress", "direct"]
Verdict = Literal["good", "partial", "bad"]
Mode = Literal["quick", "thinking"]
# What an LLM was shown of an evidence item: whole, cut to 1000 or 200 characters, or left out (its budget).
Tier = Literal["full", "1000", "200", "dropped"]


class Evidence(BaseModel):
    """One citable piece of evidence handed to the generator."""

    id: str
    kind: EvidenceKind
    text: str
    title: str = ""
    source: str = ""
    score: float = 0.0
    # Per-signal scores and ranks (dense cosine, bm25, rrf, cross-encoder) so an answer can show why it was kept.
    scores: dict[str, float] = Field(default_factory=dict)
    query: str = Field(default="", description="The (sub-)query that found it.")


class RoutePlan(BaseModel):
    """What the router decided: the strategy, why, and the queries to retrieve for (the question comes first)."""

    strategy: Strategy
    reason: str
    queries: list[str]
    expansions: dict[str, str] = Field(default_factory=dict, description="acronym/symbol -> what it stands for")
    rewritten_by: Literal["rules", "llm"] = "rules"


class JudgeResult(BaseModel):
    verdict: Verdict | None = None
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    missing: list[str] = Field(default_factory=list)
    rationale: str = ""


class Filters(BaseModel):
    """Request filters. Any filter makes a request uncacheable (user/session scoped results must not leak)."""

    sources: list[Annotated[str, Field(pattern=r"^[^\x00]*$")]] | None = Field(
        default=None, description="Only evidence from these sources."
    )
    user: str | None = None
    session: str | None = None

    def active(self) -> bool:
        return bool(self.sources or self.user or self.session)


class LLMProvider(Protocol):
    """Both the OpenAI-compatible client and the offline provider implement this. Generation returns raw text:
    the same three-pass validation (parse, schema, citations) applies to both."""

    name: str
    writes_prose: bool  # True: graph answers' facts go to generate() to be written as prose
    # The provider's own prompts, which an answer must never repeat (evidence_guard.EchoDetector); () when it has none.
    instructions: Sequence[str]
    # Characters of evidence the provider is shown in all (retrievers/context.py tiers); None: every item in full.
    context_budget: int | None

    def generate(self, question: str, evidence: list[Evidence]) -> str: ...

    def judge(self, question: str, evidence: list[Evidence]) -> JudgeResult: ...

    def rewrite(self, question: str, strategy: Strategy) -> list[str] | None:
        """Sub-questions (decompose), an expanded query (expand) or a compressed one (compress); None = use rules."""
        ...

    def screen(self, question: str) -> str | None:
        """An extra input check; a refusal reason, or None when the question may proceed."""
        ...

    def propose_plan(self, question: str, schema: dict[str, Any]) -> str | None:
        """The question read as a plan (a JSON object matching `schema`, unvalidated); None: the rules read it."""
        ...


class ProviderError(RuntimeError):
    """The LLM could not be reached or gave no usable reply after retries (timeouts, 5xx, 429s)."""

    # True when the question's LLM record (model/llm_budget.py) holds this failure: its warning comes from there.
    recorded: bool = False
