"""Rendering an answer for people: the answer text with numbered citations, then the citation list."""

from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape

from retrieval.answer import FinalAnswer


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


def print_answer(console: Console, answer: FinalAnswer) -> None:
    text, numbers = numbered(answer)
    console.print(f"[bold]Q:[/bold] {escape(answer.question)}")
    console.print(f"[bold]A:[/bold] {escape(text)}", soft_wrap=True)
    if numbers:
        console.print("\n[bold]Citations[/bold]")
        for citation in answer.citations:
            title = f" — {citation.title}" if citation.title else ""
            console.print(f"  [{numbers[citation.id]}] {escape(citation.id)} ({citation.kind}, "
                          f"{escape(citation.source)}){escape(title)}", soft_wrap=True)
    cached = f", cached: {answer.cached}" if answer.cached else ""
    console.print(f"\nconfidence {answer.confidence:.2f} · retrieval {answer.retrieval_quality} · mode {answer.mode}"
                  f" · route {answer.route} · re-retrievals {answer.attempts} · reranker {answer.reranker}"
                  f" · provider {answer.provider}{cached} · {answer.timings_ms.get('total', 0):.0f} ms")
    console.print(f"index {answer.index_version} (run {answer.dagster_run_id}) · pipeline {answer.pipeline_version}")
    for warning in answer.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
