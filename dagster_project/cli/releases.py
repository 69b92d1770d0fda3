"""`flux releases list` and `flux releases diff A B`: the kept releases of each source and what changed between two."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from dagster_project.cli.output import console
from dagster_project.core.settings import get_settings

releases_app = typer.Typer(
    help="Source releases: which are kept, which serves, and what changed between two.", no_args_is_help=True
)
SOURCES = ("reactome", "kegg", "hgnc", "clinvar", "resolution")


def _engine():  # type: ignore[no-untyped-def]
    from dagster_project.core.stores import engine_for
    from dagster_project.stack import check_postgres

    settings = get_settings()
    check_postgres(settings)  # a clear message when Postgres is down
    return engine_for(settings.platform_database_url)


@releases_app.command("list")
def releases_list() -> None:
    """Every kept release: when it was first kept, when it last became the served one, and its size."""
    from dagster_project.releases.store import list_releases

    rows = list_releases(_engine())
    table = Table(
        "source",
        "release",
        "first kept",
        "served",
        "pathways",
        "gene members",
        "genes",
        title=f"{len(rows)} kept releases",
        title_justify="left",
    )
    for r in rows:
        table.add_row(
            r.source,
            r.release_key,
            r.first_loaded_at,
            r.served_at or "-",
            str(r.pathways),
            str(r.members),
            str(r.genes),
        )
    console.print(table)


@releases_app.command("diff")
def releases_diff(
    before: str = typer.Argument(..., help="The earlier release: its key, a unique part of it, or `served`."),
    after: str = typer.Argument(..., help="The later release, named the same ways."),
    source: str = typer.Option(None, help=f"Only releases of this source ({', '.join(SOURCES)})."),
    limit: int = typer.Option(10, min=0, help="Pathways, renames, additions and removals listed of each kind."),
    as_json: bool = typer.Option(False, "--json", help="Every change as JSON instead of tables."),
) -> None:
    """What changed from release BEFORE to release AFTER of one source, with the churn limits it is held to."""
    from dagster_project.releases.compare import GATE_KIND, AmbiguousReleaseError, compare, resolve_pair
    from dagster_project.releases.diff import SourceDiff
    from dagster_project.releases.gates import evaluate

    if source is not None and source not in SOURCES:
        raise typer.BadParameter(f"{source!r} is not one of {', '.join(SOURCES)}", param_hint="--source")
    engine = _engine()
    try:
        first, key_before, key_after = resolve_pair(engine, before, after, source)
    except AmbiguousReleaseError as exc:
        raise typer.BadParameter(str(exc)) from None
    diff, gene_release = compare(engine, first, key_before, key_after)
    figures = diff.figures()
    verdict = evaluate(GATE_KIND[first], first, figures, get_settings().releases)
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "source": first,
                    "before": key_before,
                    "after": key_after,
                    "figures": figures,
                    "churn": {"passed": verdict.passed, **verdict.shares},
                    "changes": [{"kind": k, "subject": s, **d} for k, s, d in diff.rows()],
                }
            )
        )
        return
    table = Table("figure", "value", title=f"{first}: {key_before} → {key_after}", title_justify="left")
    for name, value in figures.items():
        table.add_row(name, str(value))
    console.print(table)
    if isinstance(diff, SourceDiff):
        _pathway_tables(diff, limit, gene_release)
    console.print(
        f"churn: {'within limits' if verdict.passed else 'OVER A LIMIT'} — {verdict.message}", highlight=False
    )


def _pathway_tables(diff, limit: int, gene_release: str | None) -> None:  # type: ignore[no-untyped-def]
    largest = Table(
        "pathway",
        "name",
        "gained",
        "lost",
        "renamed genes",
        "e.g. gained",
        "e.g. lost",
        title=f"largest member changes (genes placed with {gene_release or 'no HGNC release'})",
        title_justify="left",
    )
    for c in diff.largest(limit):
        largest.add_row(
            c.pathway_id,
            c.name,
            str(len(c.gained)),
            str(len(c.lost)),
            str(c.genes_renamed),
            ", ".join(c.gained[:5]),
            ", ".join(c.lost[:5]),
        )
    console.print(largest)
    for title, items in (
        ("renamed", {p: f"{a} → {b}" for p, (a, b) in diff.renamed.items()}),
        ("added", diff.added),
        ("removed", diff.removed),
    ):
        if items:
            shown = sorted(items.items())[:limit]
            console.print(
                f"{title} ({len(items)}): "
                + "; ".join(f"{p} {n or ''}".strip() for p, n in shown)
                + (" …" if len(items) > limit else ""),
                highlight=False,
            )
