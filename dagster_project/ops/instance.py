"""The Dagster instance: DAGSTER_HOME under FLUX_HOME, run/event/schedule storage in Postgres."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import yaml
from sqlalchemy.engine import make_url

from dagster_project.core.files import write_private
from dagster_project.core.settings import FluxSettings

DEFINITIONS_MODULE = "dagster_project.defs.definitions"
LOCATION_NAME = "flux"  # the repository's workspace.yaml names the same location: runs and the UI share it
POOL_SLOTS = 1
# One run at a time from the queue: on a small machine two runs only share the cores (the release history's
# automated runs, requested while `make run`'s run is still going, made it 20 s slower); the others wait, queued.
MAX_CONCURRENT_RUNS = 1
RUN_START_TIMEOUT_S = 180  # a run worker loads the location before it reports STARTED (~7 s here)
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


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
                    # dagster-postgres' NOTIFY; name psycopg2 (docs/operations.md#pinned-dependencies).
                    "scheme": "postgresql+psycopg2",
                }
            }
        },
        # Dequeued within a second of `flux materialize` queuing it (Dagster's default waits up to 5 s).
        "run_coordinator": {
            "module": "dagster.core.run_coordinator",
            "class": "QueuedRunCoordinator",
            "config": {"dequeue_interval_seconds": 1},
        },
        # Every named pool ("ray": the model work on the one Ray cluster sized to this machine; "neo4j_writes": the
        # assets that MERGE into the graph, whose batches would wait on each other's locks) runs one step at a time,
        # across runs, whatever starts them; steps without a pool are not limited.
        "concurrency": {
            "pools": {"default_limit": POOL_SLOTS, "granularity": "op"},
            "runs": {"max_concurrent_runs": MAX_CONCURRENT_RUNS},
        },
        # Dagster's launcher with the worker health check its run monitoring needs (defs/run_launcher.py).
        "run_launcher": {"module": "dagster_project.defs.run_launcher", "class": "FluxRunLauncher"},
        # The daemon fails, without any command being run, a run that does not reach STARTED in time (its worker
        # never came up), one stuck cancelling, and a started one whose process is gone (checked every 30 s).
        "run_monitoring": {
            "enabled": True,
            "start_timeout_seconds": RUN_START_TIMEOUT_S,
            "cancel_timeout_seconds": RUN_START_TIMEOUT_S,
            "poll_interval_seconds": 30,
        },
        "telemetry": {"enabled": False},
        "local_artifact_storage": {
            "module": "dagster.core.storage.root",
            "class": "LocalArtifactStorage",
            "config": {"base_dir": str(settings.dagster_home / "storage")},
        },
    }


def code_server_socket(settings: FluxSettings) -> Path:
    """The Unix socket the stack's code server listens on: under FLUX_HOME, or, where that path is longer than a
    socket address may be, in the temporary folder under a name derived from FLUX_HOME."""
    path = settings.run_dir / "code-server.sock"
    if len(str(path)) <= MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(settings.home).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"flux-{os.getuid()}-{digest}.sock"


def workspace_yaml(settings: FluxSettings) -> dict:
    """The Flux code location as the stack's code server serves it (the daemon's and the UI's workspace)."""
    server = {"socket": str(code_server_socket(settings)), "location_name": LOCATION_NAME}
    return {"load_from": [{"grpc_server": server}]}


def render_dagster_home(settings: FluxSettings) -> str:
    """Write DAGSTER_HOME/dagster.yaml (0600: it holds the database password) and workspace.yaml; returns
    DAGSTER_HOME."""
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    header = "# Written by `flux stack up` from FLUX_ settings; edits are overwritten.\n"
    write_private(home / "dagster.yaml", header + yaml.safe_dump(dagster_yaml(settings), sort_keys=False))
    write_private(home / "workspace.yaml", header + yaml.safe_dump(workspace_yaml(settings), sort_keys=False))
    return str(home)
