"""What a condition question asks and names: the condition (ClinVar's, by name, typos tolerated), the gene, and
whether it asks for genes, conditions, a yes/no or enrichment. The condition kinds' recognisers share these; they
read nothing when Flux holds no conditions (ClinVar not loaded), so such questions stay with `scope`."""

from __future__ import annotations

import re

from retrieval.model.diseases import ConditionMatch
from retrieval.model.plan import Entity
from retrieval.model.spelling import fold
from retrieval.question.reading import Read, gene_entity

CONDITION_WORD = re.compile(
    r"\b(?:diseases?|conditions?|disorders?|syndromes?|phenotypes?|illness(?:es)?|"
    r"deficienc(?:y|ies)|cancers?|tumou?rs?|dystroph(?:y|ies)|an(?:a)?emias?)\b",
    re.I,
)
LINK_WORD = re.compile(
    r"\b(?:associat\w*|link(?:s|ed)?|caus\w*|implicated|responsible|underl\w*|connected|"
    r"related|involved|cause|mutated|variants? in)\b",
    re.I,
)
ASKS_GENES = re.compile(
    r"\b(?:which|what|list|name|show|give|how many|count|enumerate)\b.*\bgenes?\b|"
    r"^\s*genes?\b|\bgenes? (?:for|of|behind|in|associated|linked|implicated|causing)\b",
    re.I,
)
ENRICHMENT = re.compile(r"\benrich\w*|\bover-?represent\w*", re.I)
PATHWAYS_OF = re.compile(r"\bpathways?\b", re.I)
CLINVAR_WORD = re.compile(r"\bclinvar\b|\bmedgen\b|\bomim\b|\bmondo\b", re.I)
# "… associated with Lynch syndrome?": the words after the link, as the question wrote them.
ASKED_CONDITION = re.compile(
    r"^.*\b(?:with|to|for|behind|in|underlying|causing|causes?)\s+(?:the\s+)?([^?.]+?)"
    r"\s*[?.]?\s*$",
    re.I,
)
ASKS = re.compile(r"\b(?:which|what|list|show|give|name|any|record\w*|enumerate|how many)\b", re.I)


def holds_conditions(read: Read) -> bool:
    return len(read.pathways.diseases) > 0


def condition_of(read: Read) -> ConditionMatch | None:
    """The condition the question names, read past the genes it names (a symbol is never a condition's word)."""
    ignore = frozenset(fold(m.token) for m in read.mentions)
    return read.pathways.diseases.match(read.as_written or read.question, ignore)


def condition_entities(match: ConditionMatch) -> list[Entity]:
    return [
        Entity(type="disease", id=c.id, name=c.name, source="clinvar", asked_as=match.asked) for c in match.conditions
    ]


def gene_entities_named(read: Read) -> list[Entity]:
    """The genes the question names outside pathway names, each once."""
    seen: dict[str, Entity] = {}
    for mention in read.mentions:
        if mention.gene in read.genes_outside():
            seen.setdefault(mention.gene.hgnc_id, gene_entity(mention.gene, mention.token))
    return list(seen.values())
