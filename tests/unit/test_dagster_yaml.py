"""The dagster.yaml `flux stack up` writes is one Dagster accepts (its own schema and conflict checks, which refuse
for instance a run limit set in two places), with the queue, run limit and pool slots the docs describe, and a
workspace that names the `flux` location the repository's workspace.yaml names."""

from __future__ import annotations

from pathlib import Path

import yaml
from dagster._core.instance.config import dagster_instance_config

from dagster_project.core.settings import REPO_ROOT, FluxSettings
from dagster_project.ops.instance import render_dagster_home


def test_the_rendered_instance_config_is_valid_and_limits_runs_and_pools(tmp_path: Path) -> None:
    home = Path(render_dagster_home(FluxSettings(home=tmp_path)))
    config, _ = dagster_instance_config(str(home))
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert config["run_coordinator"]["config"] == {"dequeue_interval_seconds": 1}
    assert config["concurrency"] == {
        "pools": {"default_limit": 1, "granularity": "op"},
        "runs": {"max_concurrent_runs": 1},
    }
    assert (home / "dagster.yaml").stat().st_mode & 0o777 == 0o600  # it holds the database password


def test_the_daemon_workspace_names_the_location_the_repository_workspace_names(tmp_path: Path) -> None:
    home = Path(render_dagster_home(FluxSettings(home=tmp_path)))
    rendered = yaml.safe_load((home / "workspace.yaml").read_text())
    assert rendered == yaml.safe_load((REPO_ROOT / "workspace.yaml").read_text())
