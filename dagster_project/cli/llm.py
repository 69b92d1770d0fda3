"""`flux llm check`: the configured OpenAI-compatible server — reachable, which models, what context, which JSON
mode, how fast — before the first question pays for finding out."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from dagster_project.cli.output import console, err_console
from dagster_project.core.settings import get_settings

llm_app = typer.Typer(help="The OpenAI-compatible LLM server (FLUX_LLM_BASE_URL).", no_args_is_help=True)


@llm_app.command("check")
def llm_check(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> None:
    """One model listing and one timed probe; exits 1 when the server cannot answer Flux's questions."""
    from retrieval.answering.llm_check import check_llm

    result = check_llm(get_settings())
    call = result.probe
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "base_url": result.base_url,
                    "model": result.model,
                    "models": result.models,
                    "context_length": result.context_length,
                    "context_source": result.context_source,
                    "json_mode": call.json_mode if call else None,
                    "tokens_per_second": result.tokens_per_second,
                    "probe": call.model_dump() if call else None,
                    "problems": result.problems,
                    "notes": result.notes,
                    "ok": result.ok,
                }
            )
        )
    else:
        table = Table("", "", title="LLM server", title_justify="left", show_header=False)
        table.add_row("endpoint", result.base_url)
        table.add_row("model", result.model)
        table.add_row("models listed", "unknown" if result.models is None else ", ".join(result.models) or "none")
        table.add_row(
            "context length",
            f"{result.context_length} tokens ({result.context_source})"
            if result.context_length
            else "not published by the server",
        )
        if call is not None:
            table.add_row("JSON mode", call.json_mode or "-")
            table.add_row(
                "probe",
                f"{call.outcome} in {call.ms / 1000:.2f} s, {call.tokens_in or '?'} tokens in, "
                f"{call.tokens_out or '?'} out{' (counted from the stream)' if call.tokens_estimated else ''}"
                + (f", {result.tokens_per_second} tokens/s" if result.tokens_per_second else ""),
            )
        console.print(table)
        for note in result.notes:
            console.print(f"note: {note}", highlight=False, soft_wrap=True)
    for problem in result.problems:
        err_console.print(f"llm: {problem}", highlight=False, soft_wrap=True)
    if not result.ok:
        raise typer.Exit(1)
