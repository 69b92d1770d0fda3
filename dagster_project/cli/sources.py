"""`flux sources check`: is each live source reachable, does it accept Flux's identity and keys, what rate limit
applies and which release it serves — before a first live pull spends an hour finding out."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from dagster_project.cli.output import console, err_console
from dagster_project.core.settings import get_settings

sources_app = typer.Typer(help="Live sources: check them before a live pull.", no_args_is_help=True)


@sources_app.command("check")
def sources_check(
    source: Annotated[list[str] | None, typer.Argument(help="Sources to check (default: all).")] = None,
) -> None:
    """One cheap request per source; exits 1 naming every source that is not ready for a live pull."""
    from dagster_project.sources.check import PROBES, check_sources

    unknown = sorted(set(source or []) - set(PROBES))
    if unknown:
        raise typer.BadParameter(
            f"unknown source {', '.join(unknown)}; choose from {', '.join(PROBES)}", param_hint="SOURCE"
        )
    results = check_sources(get_settings(), source or None)
    table = Table(
        "source", "reachable", "identity", "key", "rate limit", "release", title="live sources", title_justify="left"
    )
    for r in results:
        table.add_row(r.source, "yes" if r.reachable else "no", r.identity, r.key, r.rate_limit, r.release or "-")
    console.print(table)
    failed = [r for r in results if not r.ok]
    for r in failed:
        err_console.print(f"{r.source}: {r.problem}", highlight=False, soft_wrap=True)
    if failed:
        err_console.print(f"not ready: {', '.join(r.source for r in failed)}", highlight=False)
        raise typer.Exit(1)
    console.print(f"all {len(results)} sources ready for FLUX_SOURCE_MODE=live")
