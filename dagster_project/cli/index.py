"""`flux index`: the retrieval index versions (blue/green), listing them and rolling back a publish."""

from __future__ import annotations

import typer
from rich.table import Table
from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.cli.output import console, err_console
from dagster_project.core.settings import get_settings

index_app = typer.Typer(help="Retrieval index versions: list them, roll back a publish.", no_args_is_help=True)
_VERSIONS = text(
    "SELECT version, chunk_table, chunk_count, dataset_version, dagster_run_id, candidate_at, published_at,"
    " rolled_back_at, dropped_at FROM index_versions ORDER BY candidate_at DESC LIMIT :n"
)


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
    from retrieval.model.index_state import NoPublishedIndexError, current_index

    engine = _engine()
    try:
        served = current_index(engine).version
    except NoPublishedIndexError:
        served = None
    with engine.connect() as conn:
        rows = conn.execute(_VERSIONS, {"n": limit}).all()
    table = Table("version", "state", "chunks", "dataset", "Dagster run", "published")
    for r in rows:
        state = (
            "serving"
            if r.version == served
            else "dropped"
            if r.dropped_at
            else "rolled back"
            if r.rolled_back_at
            else "kept"
            if r.published_at
            else "candidate"
        )
        table.add_row(
            r.version,
            state,
            str(r.chunk_count),
            r.dataset_version,
            r.dagster_run_id[:8],
            r.published_at.isoformat(timespec="seconds") if r.published_at else "-",
        )
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
    console.print(
        f"serving index {switch.version} again (rolled back from {switch.previous}); running services "
        "switch within seconds"
    )
