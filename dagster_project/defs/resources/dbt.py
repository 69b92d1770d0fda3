"""The dbt project (dbt/, or its packaged copy in a wheel) and the one resource that runs it.

The assets (assets/dbt.py) and the resource share `DBT_PROJECT`, so the project and profiles folders are set in
one place. Nothing here reads the manifest: importing the resources works before `make setup` has parsed dbt.
"""

import os
import shutil
import sys
import uuid
from collections.abc import Mapping
from functools import cached_property
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

import dagster as dg
import yaml
from dagster_dbt import DbtCliInvocation, DbtCliResource, DbtProject
from packaging.version import Version
from sqlalchemy.engine import make_url

from dagster_project.core.files import write_private
from dagster_project.core.setting_groups import IN_CHECKOUT
from dagster_project.core.settings import PACKAGE_DIR, REPO_ROOT, FluxSettings, dbt_env

# A checkout runs dbt/; an installed wheel runs the copy `make wheel` packages with its parsed manifest.
DBT_DIR = REPO_ROOT / "dbt" if IN_CHECKOUT else PACKAGE_DIR / "dbt_project"
# dbt/profiles.yml reads FLUX_DBT_* (`flux env`) for dbt by hand; Dagster runs use render_profiles_dir.
DBT_PROJECT = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)
# The dbt next to this interpreter: tests and `make` may run .venv/bin/python without .venv/bin on PATH.
DBT_EXECUTABLE = str(Path(sys.executable).parent / "dbt")


DBT_PROFILE = "flux"
DBT_SCHEMA = "analytics"


def render_profiles_dir(settings: FluxSettings) -> Path:
    """A profiles.yml with the settings' connection, under FLUX_HOME/dbt (0600: it holds the password).

    dagster-dbt hands dbt a copy of this process's environment and takes none of its own; writing the profile
    from the settings is how the one FluxSettings reaches dbt without anything being exported. dbt/profiles.yml
    (FLUX_DBT_* from `flux env`) stays the profile for running dbt by hand.
    """
    connection = dbt_env(settings)
    profile = {
        DBT_PROFILE: {
            "target": "dev",
            "outputs": {
                "dev": {
                    "type": "postgres",
                    "host": connection["FLUX_DBT_HOST"],
                    "port": int(connection["FLUX_DBT_PORT"]),
                    "user": connection["FLUX_DBT_USER"],
                    "password": connection["FLUX_DBT_PASSWORD"],
                    "dbname": connection["FLUX_DBT_DBNAME"],
                    "schema": DBT_SCHEMA,
                    "threads": 2,
                }
            },
        }
    }
    folder = settings.home / "dbt"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "profiles.yml"
    content = "# Written by Flux from FLUX_ settings before each dbt run; edits are overwritten.\n" + yaml.safe_dump(
        profile, sort_keys=False
    )
    write_private(target, content)
    return folder


PARTIAL_PARSE = "partial_parse.msgpack"


class _ThisEnvironmentsDbt(DbtCliResource):
    """dagster-dbt runs `dbt --version` once per resource (3.6 s on 2 cores) to tell dbt Fusion from dbt Core. The
    executable here is always this environment's own dbt-core (DBT_EXECUTABLE), so its version is read from the
    installed package instead."""

    @cached_property
    def _cli_version(self) -> Version:
        return Version(installed_version("dbt-core"))


class FluxDbtResource(dg.ConfigurableResource):
    """The one dbt resource: this project (DBT_PROJECT) against the settings' database.

    Each invocation gets a target folder of its own (so concurrent runs never share artifacts) under
    FLUX_HOME/dbt/target, seeded with the last successful invocation's partial-parse state, so dbt re-parses only
    what changed instead of the whole project (`keep_parse_state` saves it back)."""

    settings: dg.ResourceDependency[FluxSettings]

    def cli(self, args: list[str], *, context: dg.AssetExecutionContext) -> DbtCliInvocation:
        dbt = _ThisEnvironmentsDbt(
            project_dir=DBT_PROJECT, profiles_dir=str(render_profiles_dir(self.settings)), dbt_executable=DBT_EXECUTABLE
        )
        target = self.settings.home / "dbt" / "target" / f"{context.run.run_id[:8]}-{uuid.uuid4().hex[:8]}"
        target.mkdir(parents=True, exist_ok=True)
        saved = self.settings.home / "dbt" / PARTIAL_PARSE
        if saved.exists():
            shutil.copyfile(saved, target / PARTIAL_PARSE)
        invocation = dbt.cli(args, context=context, target_path=target)
        # Row counts and column types are read from the relations the manifest names, and the parsed manifest
        # names the database of the environment that parsed it: Postgres refuses a query naming another one.
        invocation.manifest = in_database(invocation.manifest, make_url(self.settings.platform_database_url).database)
        return invocation

    def keep_parse_state(self, invocation: DbtCliInvocation) -> None:
        """Saves a successful invocation's partial-parse state for the next one (replaced atomically) and removes
        its target folder (its artifacts were streamed to Dagster). A failed invocation's folder is kept, with
        dbt's log in it."""
        produced = invocation.target_path / PARTIAL_PARSE
        if produced.exists():
            staging = self.settings.home / "dbt" / f".{PARTIAL_PARSE}.{uuid.uuid4().hex[:8]}"
            shutil.copyfile(produced, staging)
            os.replace(staging, self.settings.home / "dbt" / PARTIAL_PARSE)
        shutil.rmtree(invocation.target_path, ignore_errors=True)


def in_database(manifest: Mapping[str, Any], database: str | None) -> dict[str, Any]:
    """The manifest with its models, tests and sources in `database` (unchanged where that is None): the
    database field, the quoted relation name and the compiled SQL's qualified names."""

    def moved(entry: Mapping[str, Any]) -> Mapping[str, Any]:
        parsed_in = entry.get("database")
        if not database or not parsed_in or parsed_in == database:
            return entry
        old, new = f'"{parsed_in}".', f'"{database}".'
        return {
            **entry,
            "database": database,
            **{
                key: entry[key].replace(old, new)
                for key in ("relation_name", "compiled_code")
                if isinstance(entry.get(key), str)
            },
        }

    return {
        **manifest,
        "nodes": {uid: moved(node) for uid, node in manifest["nodes"].items()},
        "sources": {uid: moved(source) for uid, source in manifest["sources"].items()},
    }


def dbt_parse_command(project: DbtProject) -> str:
    """What `make setup` runs to write the project's manifest (no database connection needed)."""
    return f"{DBT_EXECUTABLE} parse --project-dir {project.project_dir} --profiles-dir {project.profiles_dir}"
