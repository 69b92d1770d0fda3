"""What the answer scorecard checks inside one answer.

- The generator's raw reply (the pipeline's `generated` event), before validation cleans it: which cited ids
  were really given as evidence, which claims validation would drop (they cite nothing given), and which claims
  the evidence they cite supports (evals/grounding.py's fitted rule). After validation these are 1.0 by
  construction; before it they can fail.
- Relational questions: an expected id must be named by the answer's claims (their text or the ids they cite),
  and a gene list (the structured payload's, else the text's) must match the graph's genes of the pathway(s).
- The judge loop: whether the target was in the first pass's evidence, and whether re-retrieval brought it in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from dagster_project.evals.grounding import Embed, GroundingRule, lexical_support, semantic_support
from retrieval.answering.offline import strip_markers
from retrieval.model.answer import FinalAnswer, GeneratedAnswer, parse_reply
from retrieval.model.genes import GeneLexicon
from retrieval.model.types import Evidence, JudgeResult, LLMProvider, Strategy

if TYPE_CHECKING:
    from neo4j import Driver

GENE_LIST_MIN = 0.9  # recall and precision a gene list needs to pass


class RecordingProvider:
    """The pipeline's provider, unchanged, except that it keeps the evidence of every judge call: the first is
    what the first retrieval pass found, before any re-retrieval."""

    def __init__(self, inner: LLMProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.writes_prose = getattr(inner, "writes_prose", False)
        # The pipeline records (and checks claims against) the context tiers the provider cuts its prompt with.
        self.context_budget: int | None = getattr(inner, "context_budget", None)
        self.judged: list[list[Evidence]] = []

    def reset(self) -> None:
        self.judged = []

    def generate(self, question: str, evidence: list[Evidence]) -> str:
        return self.inner.generate(question, evidence)

    def judge(self, question: str, evidence: list[Evidence]) -> JudgeResult:
        self.judged.append(list(evidence))
        return self.inner.judge(question, evidence)

    def rewrite(self, question: str, strategy: Strategy) -> list[str] | None:
        return self.inner.rewrite(question, strategy)

    def screen(self, question: str) -> str | None:
        return self.inner.screen(question)

    def propose_plan(self, question: str, schema: dict[str, Any]) -> str | None:
        return self.inner.propose_plan(question, schema)


@dataclass(frozen=True)
class RawCheck:
    """The generator's reply before validation (all zero when it did not parse or never came)."""

    parsed: bool = False
    citations: int = 0  # distinct ids cited anywhere in the reply
    valid_citations: int = 0  # of those, ids of evidence the generator was given
    claims: int = 0
    claims_kept: int = 0  # claims citing at least one given id: what validation keeps
    claims_grounded: int = 0  # claims whose cited evidence supports them


def check_raw(raw: str | None, evidence: list[Evidence], rule: GroundingRule, embed: Embed) -> RawCheck:
    if raw is None:
        return RawCheck()
    try:
        generated = GeneratedAnswer.model_validate(parse_reply(raw))
    except (ValueError, TypeError, ValidationError):
        return RawCheck()
    given = {e.id: e for e in evidence}
    cited = set(generated.citations) | {c for claim in generated.claims for c in claim.citations}
    kept = grounded = 0
    for claim in generated.claims:
        support = [given[c] for c in dict.fromkeys(claim.citations) if c in given]
        if not support:
            continue
        kept += 1
        grounded += is_grounded(
            strip_markers(claim.text), " ".join(f"{e.title}. {e.text}" for e in support), rule, embed
        )
    return RawCheck(True, len(cited), len(cited & given.keys()), len(generated.claims), kept, grounded)


def is_grounded(claim: str, cited_text: str, rule: GroundingRule, embed: Embed) -> bool:
    # The embedding is the costly signal: only computed when the lexical one does not settle it.
    lexical = lexical_support(claim, cited_text)
    if lexical >= rule.lexical_min:
        return True
    return rule.supported(lexical, semantic_support(claim, cited_text, embed))


def names_any(haystack: str, expected: Iterable[str]) -> bool:
    """Whole identifiers only: 'MDM2' in '..., MDM2, ...' yes; 'MDM' or 'TP5' no."""
    return any(re.search(rf"(?<![\w-]){re.escape(x)}(?![\w-])", haystack) for x in expected)


def claims_name_expected(answer: FinalAnswer, expected: Iterable[str]) -> bool:
    return names_any(" ".join(f"{c.text} {' '.join(c.citations)}" for c in answer.claims), expected)


def evidence_has(evidence: list[Evidence], expected: Iterable[str] = (), document: str = "") -> bool:
    """Whether the evidence holds the target: a document (by chunk id) or one of the expected ids."""
    if document:
        return any(e.kind == "chunk" and e.id.rsplit("_", 1)[0] == document for e in evidence)
    return names_any(" ".join(f"{e.id} {e.text}" for e in evidence), expected)


GENES_OF = """
UNWIND $ids AS pid
OPTIONAL MATCH (p:Pathway {id: pid})-[:HAS_MEMBER]->(g:Gene)
RETURN pid, collect(DISTINCT g.symbol) AS symbols
"""


def graph_genes(driver: Driver, pathway_ids: tuple[str, ...]) -> set[str]:
    """The genes of one pathway, or the genes every listed pathway has (shared genes)."""
    records = driver.execute_query(GENES_OF, ids=list(pathway_ids)).records
    sets = [set(r["symbols"]) for r in records]
    return set.intersection(*sets) if sets and len(sets) == len(pathway_ids) else set()


def genes_named(answer: FinalAnswer, lexicon: GeneLexicon) -> set[str]:
    """The answer's gene list: its table's when it lists genes (prose names only the first ones of a long list),
    else the genes its text names (symbols and aliases resolved)."""
    if answer.table is not None and answer.table.of == "gene":
        return {row[0] for row in answer.table.rows}
    return {m.gene.symbol for m in lexicon.find(strip_markers(answer.answer))}


def gene_list_scores(named: set[str], expected: set[str]) -> tuple[float, float]:
    """Recall and precision of the genes an answer names against `expected`."""
    hits = len(named & expected)
    return (hits / len(expected) if expected else 0.0), (hits / len(named) if named else 0.0)
