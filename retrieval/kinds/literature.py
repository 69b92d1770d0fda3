"""`literature`: a question answered from text evidence (abstracts, summations, pathway descriptions) — retrieved,
judged, generated and grounded by the answerer — only when the evidence covers the question's entities and the
relation it asks about; otherwise "Flux does not hold that". It is the plan of any question no other kind
recognises, never a catch-all that always answers."""

from __future__ import annotations

from retrieval.answering.typed_answer import compose
from retrieval.kinds.base import QuestionKind, Statement, Stores
from retrieval.kinds.scope import holdings, holdings_statement
from retrieval.model.plan import Plan
from retrieval.model.types import Evidence
from retrieval.question.literature_questions import summary_request
from retrieval.question.reading import Read, gene_entities, pathway_entities


def plan_for(read: Read) -> Plan:
    """A literature search; "what does the literature say about X" carries its request, so live mode can read the
    most relevant abstracts from PubMed itself."""
    return Plan(
        kind="literature",
        operation="search",
        subjects=[*pathway_entities(read.found), *gene_entities(read.named_genes)],
        literature=summary_request(read.as_written or read.question),
        reason="no typed question recognised: the literature is searched",
    )


def accepts(plan: Plan) -> bool:
    return plan.operation == "search" and (plan.literature is None or plan.literature.operation == "summary")


def abstention(why: str, plan: Plan, stores: Stores | None) -> tuple[str, list[Evidence]]:
    """ "Flux does not hold that", why, and what Flux does hold about the genes and pathways named (cited; left out
    when the graph cannot be read): a reply with confidence 0."""
    statements: list[Statement] = [(f"Flux does not hold that: {why}, so it does not answer this question.", [])]
    found = holdings(plan.subjects, stores) if stores is not None and plan.subjects else []
    if found:
        statements.append(holdings_statement(found))
    return compose(statements, "literature", confidence=0.0)


KIND = QuestionKind(name="literature", accepts=accepts, needs_graph=False)
