"""The analysts' commands: `flux ask`, `flux chat` and `flux serve` (the HTTP API). The `flux` command registers them
beside the operator commands."""

from __future__ import annotations

import os

import typer
from rich.console import Console

from dagster_project.core.settings import FluxConfigError, get_settings

console = Console(width=int(os.environ.get("COLUMNS", "120")), emoji=False)
err_console = Console(stderr=True, emoji=False)  # text from outside is escape()d where markup is used


def ask(
    question: str = typer.Argument(..., help="The question, in quotes."),
    mode: str = typer.Option(
        None, help="quick (one retrieval pass) or thinking (judge loop); default FLUX_ANSWER_MODE."
    ),
    output: str = typer.Option("text", "--format", help="text, md (a Markdown report) or json (the FinalAnswer)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    conversation: str = typer.Option(None, help="Continue this conversation (a follow-up question)."),
    explain: bool = typer.Option(
        False,
        "--explain",
        help="Also print the plan the question was read as: its kind, "
        "operation, relation and the entities it names (the JSON answer always has it).",
    ),
) -> None:
    """Answer a question from the published index, with numbered citations (stored; logged to MLflow)."""
    from serving.ask import Session

    output = "json" if as_json else output
    if output not in ("text", "md", "json"):
        raise typer.BadParameter("format must be text, md or json", param_hint="--format")
    if mode not in (None, "quick", "thinking"):
        raise typer.BadParameter("mode must be quick or thinking", param_hint="--mode")
    if not question.strip():
        raise typer.BadParameter("the question is empty", param_hint="QUESTION")
    session = Session.open(get_settings(), err_console)
    try:
        session.ask(question.strip(), mode, conversation, output, console, explain)  # type: ignore[arg-type]
    finally:
        session.close()


def chat(mode: str = typer.Option(None, help="quick or thinking; default FLUX_ANSWER_MODE.")) -> None:
    """Ask questions one after another in one conversation: follow-ups ("and its sub-pathways?") refer back."""
    from serving.ask import Session

    if mode not in (None, "quick", "thinking"):
        raise typer.BadParameter("mode must be quick or thinking", param_hint="--mode")
    session = Session.open(get_settings(), err_console)
    conversation: str | None = None
    try:
        while True:
            try:
                question = console.input("[bold]you>[/bold] ").strip()
            except EOFError:
                break
            if question.lower() in ("exit", "quit"):
                break
            if question:
                conversation = session.ask(question, mode, conversation, "text", console)  # type: ignore[arg-type]
    finally:
        session.close()


def serve(
    host: str = typer.Option(None, help="Bind address (FLUX_SERVE_HOST, default 127.0.0.1)."),
    port: int = typer.Option(None, help="Port (FLUX_SERVE_PORT, default 8000)."),
    insecure: bool = typer.Option(False, "--insecure", help="Allow a non-loopback address without API keys."),
) -> None:
    """Run the HTTP API (OpenAPI docs at /docs)."""
    import ipaddress

    import uvicorn

    from serving.api import create_app
    from serving.security import parse_keys

    settings = get_settings()
    bind = host or settings.serving.serve_host
    try:
        loopback = bind == "localhost" or ipaddress.ip_address(bind).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not parse_keys(settings.serving.api_keys.get_secret_value()) and not insecure:
        raise FluxConfigError(
            "FLUX_API_KEYS",
            f"refusing to serve on {bind} without API keys: anyone who can reach "
            "it could query and fill the answer store (set keys, or pass --insecure)",
        )
    uvicorn.run(create_app(settings), host=bind, port=port or settings.serving.serve_port)
