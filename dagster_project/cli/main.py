"""The `flux` command: local services, schema, materialization and (later) questions.

Errors a user can fix (a dead service, a wrong password, a bad variable) print one line naming the variable
and exit 2 — never a traceback.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from dagster_project.core.settings import FluxConfigError, get_settings
from dagster_project.stack.base import ServiceStatus
from dagster_project.cli.evals import evals_app
from dagster_project.cli.index import backup_command, index_app, restore_command
from dagster_project.cli.sources import sources_app

app = typer.Typer(help="Flux: biology sources → documents, pgvector and a Neo4j graph.", no_args_is_help=True)
stack_app = typer.Typer(help="Local services: embedded Postgres, Neo4j, Redis.", no_args_is_help=True)
app.add_typer(stack_app, name="stack")
app.add_typer(evals_app, name="evals")
keys_app = typer.Typer(help="API keys for the HTTP service.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
resolution_app = typer.Typer(help="Reactome ↔ KEGG resolution model: fit on the expert curation's dev half.",
                             no_args_is_help=True)
app.add_typer(resolution_app, name="resolution")
app.add_typer(index_app, name="index")
app.add_typer(sources_app, name="sources")
app.command("backup")(backup_command)
app.command("restore")(restore_command)
console = Console(width=int(os.environ.get("COLUMNS", "120")))
err_console = Console(stderr=True)


def _print_statuses(statuses: list[ServiceStatus]) -> None:
    for st in statuses:
        secs = f" ({st.start_seconds:.1f}s)" if st.start_seconds is not None else ""
        detail = f"  {st.detail}" if st.detail else ""
        print(f"{st.name:<9} {st.state.value:<12} {st.url}{detail}{secs}")


@stack_app.command("up")
def stack_up() -> None:
    """Start every local service that no FLUX_*_URL/URI points elsewhere, and wait until each is ready."""
    from dagster_project.ops.instance import render_dagster_home
    from dagster_project.stack import Stack

    settings = get_settings()
    statuses = Stack(settings).up()
    render_dagster_home(settings)
    _print_statuses(statuses)


@stack_app.command("down")
def stack_down() -> None:
    """Stop the services this checkout started (by PID); external servers are left alone."""
    from dagster_project.stack import Stack

    _print_statuses(Stack(get_settings()).down())


@stack_app.command("status")
def stack_status() -> None:
    """running / stopped / external / unavailable, per service."""
    from dagster_project.stack import Stack

    _print_statuses(Stack(get_settings()).status())


@app.command("env")
def env() -> None:
    """Print `export FLUX_...=` lines for every running service (use: eval "$(flux env)")."""
    from dagster_project.stack import Stack

    for key, value in Stack(get_settings()).running_urls().items():
        print(f"export {key}={shlex.quote(value)}")


@app.command("migrate")
def migrate() -> None:
    """Apply the Postgres and Neo4j migrations outside Dagster (the platform assets do the same)."""
    from dagster_project.core.stores import engine_for, graph_driver
    from dagster_project.storage.migrate import apply_neo4j, apply_postgres
    from dagster_project.stack import check_neo4j, check_postgres

    settings = get_settings()
    check_postgres(settings)
    check_neo4j(settings)
    pg = apply_postgres(engine_for(settings.platform_database_url), settings)
    driver = graph_driver(settings)
    graph = apply_neo4j(driver, settings)
    for report in (pg, graph):
        console.print(f"{report.store}: version {report.current_version}, applied now: {report.applied or 'none'}")


@app.command("materialize")
def materialize(select: str = typer.Option("*", help="Dagster asset selection, e.g. 'group:platform'.")) -> None:
    """Materialize assets in-process into the Dagster instance (runs show up in the UI)."""
    from dagster_project.defs.materialize import SelectionError, materialize_selection
    from dagster_project.stack import check_neo4j, check_postgres

    settings = get_settings()
    check_postgres(settings)
    check_neo4j(settings)
    started = time.monotonic()
    try:
        result = materialize_selection(settings, select)
    except SelectionError as exc:  # before any run starts: an empty selection would run every asset
        raise typer.BadParameter(str(exc), param_hint="--select") from None
    print(
        f"run {result.run_id}: {'success' if result.success else 'FAILED'} — {len(result.materialized)} "
        f"assets materialized, checks passed {result.checks_passed}/{result.checks_total} "
        f"in {time.monotonic() - started:.1f}s"
    )
    if not result.success:
        raise typer.Exit(1)


@app.command("summary")
def summary() -> None:
    """Counts per table and per node label."""
    from dagster_project.stack import check_neo4j, check_postgres
    from dagster_project.ops.summary import collect_summary

    settings = get_settings()
    check_postgres(settings)
    check_neo4j(settings)
    result = collect_summary(settings)
    table = Table("store", "table / label", "count")
    for name, count in result.table_rows.items():
        table.add_row("postgres", name, str(count))
    for label, count in result.node_labels.items():
        table.add_row("neo4j", label, str(count))
    console.print(table)
    if result.per_source:
        by_source = Table("source", "documents (active)", "documents (gone)", "genes", "quarantined")
        for source, counts in sorted(result.per_source.items()):
            by_source.add_row(source, *(str(counts.get(k, 0)) for k in
                                        ("documents_active", "documents_gone", "genes", "quarantined")))
        console.print(by_source)
    if result.equivalences:
        eq = Table("Reactome", "KEGG", "relation", "shared", "Jaccard", title="Reactome ↔ KEGG (strongest per KEGG)")
        for row in result.equivalences:
            eq.add_row(f"{row['reactome_id']} {row['reactome_name']}", f"{row['kegg_id']} {row['kegg_name']}",
                       row["relation"], str(row["shared"]), f"{row['jaccard']:.2f}")
        console.print(eq)


@app.command("ask")
def ask(
    question: str = typer.Argument(..., help="The question, in quotes."),
    mode: str = typer.Option(None, help="quick (one retrieval pass) or thinking (judge loop); default "
                             "FLUX_ANSWER_MODE."),
    output: str = typer.Option("text", "--format", help="text, md (a Markdown report) or json (the FinalAnswer)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    conversation: str = typer.Option(None, help="Continue this conversation (a follow-up question)."),
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
        session.ask(question.strip(), mode, conversation, output, console)  # type: ignore[arg-type]
    finally:
        session.close()


@app.command("chat")
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


@app.command("serve")
def serve(host: str = typer.Option(None, help="Bind address (FLUX_SERVE_HOST, default 127.0.0.1)."),
          port: int = typer.Option(None, help="Port (FLUX_SERVE_PORT, default 8000)."),
          insecure: bool = typer.Option(False, "--insecure", help="Allow a non-loopback address without API keys.")
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
        raise FluxConfigError("FLUX_API_KEYS", f"refusing to serve on {bind} without API keys: anyone who can reach "
                              "it could query and fill the answer store (set keys, or pass --insecure)")
    uvicorn.run(create_app(settings), host=bind, port=port or settings.serving.serve_port)


@keys_app.command("new")
def keys_new() -> None:
    """A new random API key, and the hash to put in FLUX_API_KEYS (the service then never holds the key)."""
    import secrets

    from serving.security import key_hash

    key = f"flux_{secrets.token_urlsafe(32)}"
    console.print(f"key (give it to the client, it is not stored anywhere): {key}")
    console.print(f"FLUX_API_KEYS entry: {key_hash(key)}")


@resolution_app.command("fit")
def resolution_fit(
    output: str = typer.Option(None, help="Where to write the model (default: the shipped resolution_model.json)."),
) -> None:
    """Cross-validate the resolution method by KEGG pathway, then fit it on the whole dev half and save it."""
    from dagster_project.index.encoder import load_model
    from dagster_project.core.stores import engine_for
    from dagster_project.resolution.curation import load_curation
    from dagster_project.resolution.fit import cross_validate, fit_model, labels_for
    from dagster_project.resolution.inputs import load_resolution_inputs
    from dagster_project.resolution.model import MODEL_PATH
    from dagster_project.stack import check_postgres
    from dagster_project.resolution.pathway_sets import active_pathway_ids

    if output is not None and not Path(output).parent.is_dir():
        # Checked first: otherwise the fit runs for minutes and then fails to write.
        raise typer.BadParameter(f"no directory {Path(output).parent} to write {Path(output).name} into",
                                 param_hint="--output")
    settings = get_settings()
    check_postgres(settings)
    path = settings.resolution_curation_path
    if not path.is_file():
        raise FluxConfigError("FLUX_RESOLUTION_CURATION", f"no curation file at {path}")
    engine = engine_for(settings.platform_database_url)
    model = load_model(settings.index.embedding_model)
    with console.status("scoring pairs and embedding pathway names"):
        inputs = load_resolution_inputs(
            engine, lambda names: model.encode(names, batch_size=settings.index.embedding_batch_size,
                                               normalize_embeddings=True, show_progress_bar=False))
    curation = load_curation(path).restricted_to(active_pathway_ids(engine))
    with console.status("5-fold cross-validation by KEGG pathway"):
        cv = cross_validate(inputs.features, curation)
    table = Table("metric", "cross-validated", title=f"{len(inputs.features)} scored pairs, {path.name}",
                  title_justify="left")
    for metric, value in cv.metrics.items():
        table.add_row(metric, f"{value:.3f}")
    console.print(table)
    fitted = fit_model(labels_for(inputs.features, curation))
    target = MODEL_PATH if output is None else Path(output)
    target.write_text(fitted.to_json())
    console.print(f"wrote {fitted.method_version} (thresholds: equivalent {fitted.equivalent_threshold:.2f}, "
                  f"part_of {fitted.part_of_threshold:.2f}) to {target}")


def main() -> None:
    """Console-script entry point: user-fixable failures become one line on stderr and exit code 2."""
    from psycopg.errors import UndefinedTable
    from sqlalchemy.exc import ProgrammingError

    from dagster_project.stack import ServiceStartError

    try:
        app()
    except FluxConfigError as exc:
        err_console.print(f"flux: error: {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except ServiceStartError as exc:
        err_console.print(f"flux: service failed to start: {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except ProgrammingError as exc:
        # A database that `flux stack up` created but nothing migrated yet (or the wrong FLUX_PG_DATABASE).
        if not isinstance(exc.orig, UndefinedTable):
            raise
        err_console.print(f"flux: error: {exc.orig.diag.message_primary} in the platform database "
                          f"{get_settings().postgres.pg_database}: run `flux migrate` (or `flux materialize`) "
                          "first (check FLUX_PG_DATABASE)", highlight=False, soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
