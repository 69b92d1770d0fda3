"""`flux materialize` (assets in-process into the Dagster instance) and `flux summary` (what the stores hold)."""

from __future__ import annotations

import time

import typer
from rich.table import Table

from dagster_project.cli.output import console
from dagster_project.core.settings import get_settings


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


def summary() -> None:
    """Counts per table and per node label."""
    from dagster_project.ops.summary import collect_summary
    from dagster_project.stack import check_neo4j, check_postgres

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
        by_source = Table("source", "documents (active)", "documents (gone)", "genes", "associations", "quarantined")
        for source, counts in sorted(result.per_source.items()):
            by_source.add_row(source, *(str(counts.get(k, 0)) for k in ("documents_active", "documents_gone",
                                                                        "genes", "associations", "quarantined")))
        console.print(by_source)
    if result.equivalences:
        eq = Table("Reactome", "KEGG", "relation", "shared", "Jaccard", title="Reactome ↔ KEGG (strongest per KEGG)")
        for row in result.equivalences:
            eq.add_row(f"{row['reactome_id']} {row['reactome_name']}", f"{row['kegg_id']} {row['kegg_name']}",
                       row["relation"], str(row["shared"]), f"{row['jaccard']:.2f}")
        console.print(eq)
