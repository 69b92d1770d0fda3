"""`flux backup` / `flux restore`: both Postgres databases, the BM25 indexes and checksums to verify a restore."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dagster_project.cli.output import console, err_console
from dagster_project.core.settings import get_settings


def backup_command(target: Annotated[Path, typer.Argument(help="A new (or empty) directory for the backup.")]) -> None:
    """Back up the platform, Dagster and MLflow databases, the BM25 indexes and the checksums to verify them."""
    from dagster_project.ops.backup import BackupError, backup
    from dagster_project.stack import check_postgres

    check_postgres(get_settings())  # a clear message when Postgres is down
    try:
        manifest = backup(get_settings(), target)
    except BackupError as exc:
        err_console.print(f"flux: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    console.print(
        f"backup written to {target}: databases {', '.join(manifest['databases'])}; "  # type: ignore[arg-type]
        f"{len(manifest['tables'])} tables and the graph checksummed; "  # type: ignore[arg-type]
        f"{len(manifest['bm25'])} BM25 index(es)"
    )  # type: ignore[arg-type]


def restore_command(
    source: Annotated[Path, typer.Argument(exists=True, file_okay=False, help="A directory written by `flux backup`.")],
) -> None:
    """Restore a backup into empty databases (this configuration's), re-project the graph, verify checksums."""
    from dagster_project.defs.materialize import graph_reprojector
    from dagster_project.ops.backup import BackupError, restore
    from dagster_project.stack.postgres import ensure_databases

    ensure_databases(get_settings())  # a clear message when Postgres is down; a new FLUX_PG_DATABASE is created
    try:
        report = restore(get_settings(), source, graph_reprojector(get_settings()))
    except BackupError as exc:
        err_console.print(f"flux: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    console.print(
        f"restored {', '.join(report.databases)} and {report.bm25_directories} BM25 index(es); "
        f"{report.tables_matching} tables match the backup; graph "
        f"{'matches' if report.graph_matches else 'DIFFERS'}"
    )
    if not report.ok:
        differing = [*(f"table {t}" for t in report.tables_differing), *([] if report.graph_matches else ["the graph"])]
        err_console.print(
            f"flux: restored state differs from the backup: {', '.join(differing)}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(1)
