"""`literature`: a question answered from text evidence (abstracts, summations, pathway descriptions) — retrieved,
judged, generated and grounded by the answerer — only when the evidence covers the question's entities and the
relation it asks about; otherwise "Flux does not hold that". It is the plan of any question no other kind
recognises, never a catch-all that always answers."""

from __future__ import annotations

from retrieval.kinds.base import QuestionKind
from retrieval.model.plan import Plan
from retrieval.question.reading import Read, gene_entities, pathway_entities


def plan_for(read: Read) -> Plan:
    return Plan(kind="literature", operation="search",
                subjects=[*pathway_entities(read.found), *gene_entities(read.named_genes)],
                reason="no typed question recognised: the literature is searched")


KIND = QuestionKind(name="literature", accepts=lambda plan: plan.operation == "search", needs_graph=False)
