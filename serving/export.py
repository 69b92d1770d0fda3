"""An answer as a Markdown report: the answer with numbered citations, its structured data, the sources with links
to their home pages (Reactome, KEGG, PubMed, OpenAlex, HGNC) and the versions it was read from."""

from __future__ import annotations

import re

from retrieval.model.answer import Citation, FinalAnswer
from retrieval.model.answer_data import (
    ComparisonData,
    CompoundPathwaysData,
    CounterpartData,
    DifferenceData,
    GeneFactsData,
    GenePathwaysData,
    MembersData,
    NotFoundData,
    SharedGenesData,
)
from retrieval.model.links import source_link


def numbered(answer: FinalAnswer) -> tuple[str, dict[str, int]]:
    """Replace `[evidence-id]` markers with `[n]`; ids cited only in claims get numbers too."""
    numbers = {c.id: i for i, c in enumerate(answer.citations, start=1)}

    def swap(match: re.Match[str]) -> str:
        ident = match.group(1)
        return f"[{numbers[ident]}]" if ident in numbers else match.group(0)

    text = re.sub(r"\[([^\[\]]+)\]", swap, answer.answer)
    if not re.search(r"\[\d+\]", text) and numbers:
        cited = sorted({numbers[i] for c in answer.claims for i in c.citations if i in numbers})
        text += " " + "".join(f"[{n}]" for n in cited)
    return text, numbers



def _citation_line(n: int, citation: Citation) -> str:
    link = citation.url or source_link(citation.id)
    label = f"[{citation.id}]({link})" if link else f"`{citation.id}`"
    title = f" — {citation.title}" if citation.title else ""
    return f"{n}. {label} ({citation.kind}, {citation.source or 'graph'}){title}"


def _data_section(answer: FinalAnswer) -> list[str]:
    data = answer.data
    if isinstance(data, ComparisonData):
        return ["## Comparison", "", data.table]
    if isinstance(data, MembersData) and data.genes:
        return ["## Genes", "", ", ".join(g.symbol for g in data.genes)]
    if isinstance(data, SharedGenesData) and data.shared:
        return ["## Shared genes", "", ", ".join(g.symbol for g in data.shared)]
    if isinstance(data, DifferenceData) and data.genes:
        return [f"## Genes of {data.left.id} not in {data.right.id}", "", ", ".join(g.symbol for g in data.genes)]
    if isinstance(data, GeneFactsData):
        return ["## HGNC", "", *[f"- {g.symbol} ({g.hgnc_id}): {g.name}; {g.locus_type or 'locus type n/a'}; "
                                 f"{g.location or 'location n/a'}" for g in data.genes]]
    if isinstance(data, NotFoundData) and data.closest:
        return ["## Closest names", "", *[f"- {p.id} {p.name} ({p.source})" for p in data.closest]]
    if isinstance(data, GenePathwaysData | CompoundPathwaysData) and data.pathways:
        return ["## Pathways", "", *[f"- {p.id} {p.name} ({p.source}, {p.size} genes)" for p in data.pathways]]
    if isinstance(data, CounterpartData) and data.counterparts:
        rows = [f"| {m.pathway.id} | {m.pathway.name} | {m.relation} {m.direction} | {m.confidence or 0:.2f} | "
                f"{m.jaccard or 0:.2f} | {len(m.shared_genes)} |" for m in data.counterparts]
        return ["## Counterparts", "", "| id | name | relation | confidence | Jaccard | shared genes |",
                "|---|---|---|---|---|---|", *rows]
    return []


def markdown(answer: FinalAnswer) -> str:
    text, numbers = numbered(answer)
    lines = [f"# {answer.question}", ""]
    if answer.asked_as and answer.asked_as != answer.question:
        lines += [f"*Answered as:* {answer.asked_as}", ""]
    lines += [text, ""]
    data = _data_section(answer)
    if data:
        lines += [*data, ""]
    if answer.citations:
        lines += ["## Sources", "", *[_citation_line(numbers[c.id], c) for c in answer.citations], ""]
    if answer.warnings:
        lines += ["## Warnings", "", *[f"- {w}" for w in answer.warnings], ""]
    lines += ["---", f"Answer `{answer.answer_id}` · kind {answer.kind} · confidence {answer.confidence:.2f} · "
              f"index `{answer.index_version}` (Dagster run `{answer.dagster_run_id}`) · dataset "
              f"`{answer.dataset_version}` · pipeline `{answer.pipeline_version}` · provider {answer.provider}"]
    return "\n".join(lines) + "\n"
