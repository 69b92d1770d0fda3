"""The `flux` command: the operator commands (services, schema, materialization, backups, evals, resolution,
index, sources, releases, the LLM server) and the analysts' commands from serving (ask, chat, serve), one command
group per module.

Errors a user can fix (a dead service, a wrong password, a bad variable) print one line naming the variable
and exit 2 — never a traceback.
"""

from __future__ import annotations

import os
import sys

import typer

from dagster_project.cli.backup import backup_command, restore_command
from dagster_project.cli.evals import evals_app
from dagster_project.cli.index import index_app
from dagster_project.cli.keys import keys_app
from dagster_project.cli.llm import llm_app
from dagster_project.cli.materialize import materialize, summary
from dagster_project.cli.output import err_console
from dagster_project.cli.releases import releases_app
from dagster_project.cli.resolution import resolution_app
from dagster_project.cli.sources import sources_app
from dagster_project.cli.stack import env, migrate, stack_app
from dagster_project.core.settings import FluxConfigError, get_settings
from serving.commands import ask, chat, serve

app = typer.Typer(help="Flux: biology sources → documents, pgvector and a Neo4j graph.", no_args_is_help=True)
for name, group in (
    ("stack", stack_app),
    ("evals", evals_app),
    ("keys", keys_app),
    ("resolution", resolution_app),
    ("index", index_app),
    ("sources", sources_app),
    ("releases", releases_app),
    ("llm", llm_app),
):
    app.add_typer(group, name=name)
for name, command in (
    ("env", env),
    ("migrate", migrate),
    ("materialize", materialize),
    ("summary", summary),
    ("backup", backup_command),
    ("restore", restore_command),
    ("ask", ask),
    ("chat", chat),
    ("serve", serve),
):
    app.command(name)(command)


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
        err_console.print(
            f"flux: error: {exc.orig.diag.message_primary} in the platform database "
            f"{get_settings().postgres.pg_database}: run `flux migrate` (or `flux materialize`) "
            "first (check FLUX_PG_DATABASE)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)
    except Exception as exc:  # anything else: one line, the traceback on request
        if os.environ.get("FLUX_DEBUG", "").lower() in {"1", "true", "yes"}:
            raise
        first = next((line for line in str(exc).splitlines() if line.strip()), "")
        err_console.print(
            f"flux: error: {type(exc).__name__}: {first} (FLUX_DEBUG=1 prints the traceback)",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        sys.exit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
