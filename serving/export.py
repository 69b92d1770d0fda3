"""An answer as a Markdown report: the answer with numbered citations, its facts as a table, the sources with
links to their home pages (Reactome, KEGG, PubMed, OpenAlex, HGNC), the plan it was read as and the versions it
was read from."""

from __future__ import annotations

import re

from retrieval.model.answer import Citation, DataTable, FinalAnswer
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


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def table_lines(data: DataTable) -> list[str]:
    """A typed answer's table (its kind's, retrieval/kinds/) as a Markdown table under its caption."""
    return [
        f"## {data.caption}",
        "",
        "| " + " | ".join(_cell(c) for c in data.columns) + " |",
        "|" + "---|" * len(data.columns),
        *["| " + " | ".join(_cell(v) for v in row) + " |" for row in data.rows],
    ]


def markdown(answer: FinalAnswer) -> str:
    text, numbers = numbered(answer)
    lines = [f"# {answer.question}", ""]
    if answer.asked_as and answer.asked_as != answer.question:
        lines += [f"*Answered as:* {answer.asked_as}", ""]
    lines += [text, ""]
    if answer.table is not None and answer.table.rows:
        lines += [*table_lines(answer.table), ""]
    if answer.citations:
        lines += ["## Sources", "", *[_citation_line(numbers[c.id], c) for c in answer.citations], ""]
    if answer.warnings:
        lines += ["## Warnings", "", *[f"- {w}" for w in answer.warnings], ""]
    if answer.plan is not None:
        lines += ["## Read as", "", f"`{answer.plan.explain()}`", ""]
    lines += [
        "---",
        f"Answer `{answer.answer_id}` · kind {answer.kind} · confidence {answer.confidence:.2f} · "
        f"index `{answer.index_version}` (Dagster run `{answer.dagster_run_id}`) · dataset "
        f"`{answer.dataset_version}` · pipeline `{answer.pipeline_version}` · provider {answer.provider}",
    ]
    return "\n".join(lines) + "\n"
