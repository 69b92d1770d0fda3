"""`flux index` (the retrieval index versions, blue/green; rolling back a publish) and `flux backup` / `flux
restore`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.core.settings import get_settings

index_app = typer.Typer(help="Retrieval index versions: list them, roll back a publish.", no_args_is_help=True)
console = Console()
err_console = Console(stderr=True)
_VERSIONS = text(
    "SELECT version, chunk_table, chunk_count, dataset_version, dagster_run_id, candidate_at, published_at,"
    " rolled_back_at, dropped_at FROM index_versions ORDER BY candidate_at DESC LIMIT :n")


def _engine() -> Engine:
    # Imported here so `flux --help` does not load the database stack.
    from dagster_project.core.stores import engine_for
    from dagster_project.stack import check_postgres

    settings = get_settings()
    check_postgres(settings)
    return engine_for(settings.platform_database_url)


@index_app.command("list")
def index_list(limit: int = typer.Option(10, min=1, help="How many versions, newest first.")) -> None:
    """Index versions with their state: serving, candidate, kept for rollback, rolled back or dropped."""
    from retrieval.retrievers.index_state import NoPublishedIndexError, current_index

    engine = _engine()
    try:
        served = current_index(engine).version
    except NoPublishedIndexError:
        served = None
    with engine.connect() as conn:
        rows = conn.execute(_VERSIONS, {"n": limit}).all()
    table = Table("version", "state", "chunks", "dataset", "Dagster run", "published")
    for r in rows:
        state = ("serving" if r.version == served else "dropped" if r.dropped_at else
                 "rolled back" if r.rolled_back_at else "kept" if r.published_at else "candidate")
        table.add_row(r.version, state, str(r.chunk_count), r.dataset_version, r.dagster_run_id[:8],
                      r.published_at.isoformat(timespec="seconds") if r.published_at else "-")
    console.print(table)


@index_app.command("rollback")
def index_rollback() -> None:
    """Serve the previously published index version again; the current one is marked rolled back."""
    from dagster_project.index.publishing import IndexVersionError, rollback

    try:
        switch = rollback(_engine())
    except IndexVersionError as exc:
        err_console.print(f"flux: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    console.print(f"serving index {switch.version} again (rolled back from {switch.previous}); running services "
                  "switch within seconds")


def backup_command(target: Annotated[Path, typer.Argument(help="A new (or empty) directory for the backup.")]
                   ) -> None:
    """Back up the platform, Dagster and MLflow databases, the BM25 indexes and the checksums to verify them."""
    from dagster_project.ops.backup import BackupError, backup

    _engine().dispose()  # a clear message when Postgres is down
    try:
        manifest = backup(get_settings(), target)
    except BackupError as exc:
        err_console.print(f"flux: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    console.print(f"backup written to {target}: databases {', '.join(manifest['databases'])}; "  # type: ignore[arg-type]
                  f"{len(manifest['tables'])} tables and the graph checksummed; "  # type: ignore[arg-type]
                  f"{len(manifest['bm25'])} BM25 index(es)")  # type: ignore[arg-type]


def restore_command(source: Annotated[Path, typer.Argument(exists=True, file_okay=False,
                                                           help="A directory written by `flux backup`.")]
                    ) -> None:
    """Restore a backup into empty databases (this configuration's), re-project the graph, verify checksums."""
    from dagster_project.ops.backup import BackupError, restore
    from dagster_project.stack.postgres import ensure_databases

    ensure_databases(get_settings())  # a clear message when Postgres is down; a new FLUX_PG_DATABASE is created
    try:
        report = restore(get_settings(), source)
    except BackupError as exc:
        err_console.print(f"flux: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    console.print(f"restored {', '.join(report.databases)} and {report.bm25_directories} BM25 index(es); "
                  f"{report.tables_matching} tables match the backup; graph "
                  f"{'matches' if report.graph_matches else 'DIFFERS'}")
    if not report.ok:
        differing = [*(f"table {t}" for t in report.tables_differing), *([] if report.graph_matches else ["the graph"])]
        err_console.print(f"flux: restored state differs from the backup: {', '.join(differing)}",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(1)
