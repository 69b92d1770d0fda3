"""The dbt project (dbt/, or its packaged copy in a wheel) and the one resource that runs it.

The assets (assets/dbt.py) and the resource share `DBT_PROJECT`, so the project and profiles folders are set in
one place. Nothing here reads the manifest: importing the resources works before `make setup` has parsed dbt.
"""

import sys
from pathlib import Path

import dagster as dg
import yaml
from dagster_dbt import DbtCliInvocation, DbtCliResource, DbtProject

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
    profile = {DBT_PROFILE: {"target": "dev", "outputs": {"dev": {
        "type": "postgres", "host": connection["FLUX_DBT_HOST"], "port": int(connection["FLUX_DBT_PORT"]),
        "user": connection["FLUX_DBT_USER"], "password": connection["FLUX_DBT_PASSWORD"],
        "dbname": connection["FLUX_DBT_DBNAME"], "schema": DBT_SCHEMA, "threads": 2}}}}
    folder = settings.home / "dbt"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "profiles.yml"
    content = "# Written by Flux from FLUX_ settings before each dbt run; edits are overwritten.\n" + yaml.safe_dump(
        profile, sort_keys=False)
    write_private(target, content)
    return folder


class FluxDbtResource(dg.ConfigurableResource):
    """The one dbt resource: this project (DBT_PROJECT) against the settings' database."""

    settings: dg.ResourceDependency[FluxSettings]

    def cli(self, args: list[str], *, context: dg.AssetExecutionContext) -> DbtCliInvocation:
        dbt = DbtCliResource(project_dir=DBT_PROJECT, profiles_dir=str(render_profiles_dir(self.settings)),
                             dbt_executable=DBT_EXECUTABLE)
        return dbt.cli(args, context=context)


def dbt_parse_command(project: DbtProject) -> str:
    """What `make setup` runs to write the project's manifest (no database connection needed)."""
    return f"{DBT_EXECUTABLE} parse --project-dir {project.project_dir} --profiles-dir {project.profiles_dir}"
