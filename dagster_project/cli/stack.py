"""`flux stack up|down|status`, `flux env` and `flux migrate`: the local services and the schema."""

from __future__ import annotations

import shlex

import typer

from dagster_project.cli.output import console
from dagster_project.core.settings import get_settings
from dagster_project.stack.base import ServiceStatus

stack_app = typer.Typer(help="Local services: embedded Postgres, Neo4j, Redis.", no_args_is_help=True)


def _print_statuses(statuses: list[ServiceStatus]) -> None:
    for st in statuses:
        secs = f" ({st.start_seconds:.1f}s)" if st.start_seconds is not None else ""
        detail = f"  {st.detail}" if st.detail else ""
        print(f"{st.name:<14} {st.state.value:<12} {st.url}{detail}{secs}")


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


def env() -> None:
    """Print `export FLUX_...=` lines for every running service (use: eval "$(flux env)")."""
    from dagster_project.stack import Stack

    for key, value in Stack(get_settings()).running_urls().items():
        print(f"export {key}={shlex.quote(value)}")


def migrate() -> None:
    """Apply the Postgres and Neo4j migrations outside Dagster (the platform assets do the same)."""
    from dagster_project.core.stores import engine_for, graph_driver
    from dagster_project.stack import check_neo4j, check_postgres
    from dagster_project.storage.migrate import apply_neo4j, apply_postgres

    settings = get_settings()
    check_postgres(settings)
    check_neo4j(settings)
    pg = apply_postgres(engine_for(settings.platform_database_url), settings)
    driver = graph_driver(settings)
    graph = apply_neo4j(driver, settings)
    for report in (pg, graph):
        console.print(f"{report.store}: version {report.current_version}, applied now: {report.applied or 'none'}")
