"""The Dagster instance: DAGSTER_HOME under FLUX_HOME, run/event/schedule storage in Postgres."""

from __future__ import annotations

import yaml
from sqlalchemy.engine import make_url

from dagster_project.core.files import write_private
from dagster_project.core.settings import FluxSettings


def dagster_yaml(settings: FluxSettings) -> dict:
    url = make_url(settings.dagster_database_url)
    return {
        "storage": {
            "postgres": {
                "postgres_db": {
                    "username": url.username,
                    "password": url.password,
                    "hostname": url.host,
                    "db_name": url.database,
                    "port": url.port or 5432,
                    # With SQLAlchemy 2.1 a bare postgresql:// means psycopg 3, which breaks
                    # dagster-postgres' NOTIFY; name psycopg2 explicitly (ENVIRONMENT.md pitfall).
                    "scheme": "postgresql+psycopg2",
                }
            }
        },
        "run_coordinator": {
            "module": "dagster.core.run_coordinator",
            "class": "QueuedRunCoordinator",
            "config": {"max_concurrent_runs": 2},
        },
        "telemetry": {"enabled": False},
        "local_artifact_storage": {
            "module": "dagster.core.storage.root",
            "class": "LocalArtifactStorage",
            "config": {"base_dir": str(settings.dagster_home / "storage")},
        },
    }


def render_dagster_home(settings: FluxSettings) -> str:
    """Write DAGSTER_HOME/dagster.yaml (0600: it holds the database password); returns DAGSTER_HOME."""
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    content = "# Written by `flux stack up` from FLUX_ settings; edits are overwritten.\n" + yaml.safe_dump(
        dagster_yaml(settings), sort_keys=False
    )
    write_private(target, content)
    return str(home)
