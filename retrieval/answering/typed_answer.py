"""Compose a typed answer from its statements: one claim per fact, each citing the node ids it comes from.

Each kind (retrieval/kinds/) writes its statements; this module turns them into a generator reply (JSON, the
same schema an LLM returns) plus the graph evidence they cite, so a typed answer goes through the same three-pass
validation as any other. It also holds the wording several kinds share: how a node is named, how a long list is
cut in prose (`data` always holds the whole list), how a resolved Reactome ↔ KEGG relation is said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from retrieval.model.answer_data import Mapping, NodeRef
from retrieval.model.types import Evidence

LIST_IN_PROSE = 60
SOURCE_LABEL = {"reactome": "Reactome", "kegg": "KEGG", "hgnc": "HGNC"}
MEDGEN = re.compile(r"^CN?\d+$")  # a ClinVar condition (MedGen concept)
TYPED_CONFIDENCE = 0.95  # a statement read from the tables and the graph as they are

# A sentence of an answer and the node ids it cites (an empty list: a statement with nothing to cite).
Statement = tuple[str, list[str]]


def listing(items: Sequence[str], limit: int = LIST_IN_PROSE) -> str:
    if len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} and {len(items) - limit} more"


def node_name(node: NodeRef) -> str:
    if node.source == "hgnc":
        return f"{node.name} ({node.id})"
    label = SOURCE_LABEL.get(node.source, node.source)
    return f'{label} {node.id} "{node.name}"'.strip()


def short_name(node: NodeRef) -> str:
    return f'{node.id} "{node.name}"' if node.name and node.name != node.id else node.id


def score_text(mapping: Mapping) -> str:
    parts = [
        f"{key} {value:.2f}"
        for key, value in (
            ("confidence", mapping.confidence),
            ("Jaccard", mapping.jaccard),
            ("overlap", mapping.overlap),
        )
        if value is not None
    ]
    return f" ({', '.join(parts)})" if parts else ""


def relation_sentence(subject: NodeRef, mapping: Mapping) -> str:
    verb = (
        "is equivalent to"
        if mapping.relation == "equivalent"
        else "lies within"
        if mapping.direction == "inside"
        else "contains"
    )
    shared = mapping.shared_genes
    genes = f"; they share {len(shared)} genes: {listing(shared, 20)}" if shared else ""
    return f"{node_name(subject)} {verb} {node_name(mapping.pathway)}{score_text(mapping)}{genes}."


def evidence_for(statements: list[Statement], kind: str) -> list[Evidence]:
    """One graph evidence item per cited node, holding every statement that cites it."""
    texts: dict[str, list[str]] = {}
    for text, cited in statements:
        for node_id in cited:
            texts.setdefault(node_id, []).append(text)
    return [
        Evidence(
            id=node_id,
            kind="graph",
            text=" ".join(facts),
            source=source_of(node_id),
            score=1.0,
            scores={"graph_fact": 1.0},
            query=kind,
        )
        for node_id, facts in texts.items()
    ]


def source_of(node_id: str) -> str:
    if node_id.startswith("HGNC:"):
        return "hgnc"
    if MEDGEN.match(node_id):
        return "clinvar"
    if node_id.startswith("PMID:"):
        return "pubmed"
    return "reactome" if node_id.startswith(("R-", "CHEBI:")) else "kegg"


def compose(
    statements: list[Statement], kind: str, appendix: str = "", confidence: float = TYPED_CONFIDENCE
) -> tuple[str, list[Evidence]]:
    """The generator reply (JSON) for these statements of a `kind` of answer and the evidence its claims cite;
    `appendix` (a table) follows the prose."""
    answer = " ".join(text for text, _ in statements)
    if appendix:
        answer = f"{answer}\n\n{appendix}"
    # A statement with nothing to cite ("the index holds no pathway X") stays in the prose, not among the claims.
    reply = {
        "answer": answer,
        "claims": [{"text": t, "citations": c} for t, c in statements if c],
        "citations": list(dict.fromkeys(i for _, c in statements for i in c)),
        "confidence": confidence,
        "reasoning_summary": f"Composed from graph facts ({kind}); every claim cites the nodes it reads.",
    }
    return json.dumps(reply), evidence_for(statements, kind)


def cited_releases(dataset_version: str, evidence: list[Evidence]) -> dict[str, str]:
    """source → release, for the sources of the cited facts (an index's dataset version names each source's
    served release: `hgnc=…;kegg=…`)."""
    served = dict(part.split("=", 1) for part in dataset_version.split(";") if "=" in part)
    return {source: served[source] for source in sorted({e.source for e in evidence}) if source in served}


def release_note(releases: dict[str, str]) -> str:
    return "Releases: " + "; ".join(f"{SOURCE_LABEL.get(s, s)} {r}" for s, r in releases.items()) + "."
