"""The dagster.yaml `flux stack up` writes is one Dagster accepts (its own schema and conflict checks, which refuse
for instance a run limit set in two places), with the queue, run limit and pool slots the docs describe, and a
workspace that reads the `flux` location (the one the repository's workspace.yaml names) from the stack's code
server."""

from __future__ import annotations

import importlib
import tempfile
from pathlib import Path

import yaml
from dagster._core.instance.config import dagster_instance_config
from dagster._core.launcher import DefaultRunLauncher

from dagster_project.core.settings import REPO_ROOT, FluxSettings
from dagster_project.ops.instance import MAX_SOCKET_PATH, code_server_socket, render_dagster_home


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


def test_the_daemon_monitors_runs_through_a_launcher_that_checks_its_workers(tmp_path: Path) -> None:
    config, _ = dagster_instance_config(render_dagster_home(FluxSettings(home=tmp_path)))
    launcher = getattr(importlib.import_module(config["run_launcher"]["module"]), config["run_launcher"]["class"])
    assert issubclass(launcher, DefaultRunLauncher) and launcher().supports_check_run_worker_health
    assert config["run_monitoring"]["enabled"] and config["run_monitoring"]["poll_interval_seconds"] <= 30


def test_the_daemon_workspace_reads_the_stack_s_code_server_for_the_repository_s_location(tmp_path: Path) -> None:
    settings = FluxSettings(home=tmp_path)
    home = Path(render_dagster_home(settings))
    (entry,) = yaml.safe_load((home / "workspace.yaml").read_text())["load_from"]
    (repository_entry,) = yaml.safe_load((REPO_ROOT / "workspace.yaml").read_text())["load_from"]
    assert entry == {
        "grpc_server": {
            "socket": str(code_server_socket(settings)),
            "location_name": repository_entry["python_module"]["location_name"],
        }
    }


def test_the_socket_is_under_flux_home_unless_that_path_is_too_long_for_a_socket_address() -> None:
    with tempfile.TemporaryDirectory(prefix="f", dir="/tmp") as short:
        assert code_server_socket(FluxSettings(home=Path(short))) == Path(short) / "run" / "code-server.sock"
        deep = Path(short) / ("d" * 60) / ("e" * 60)
        socket = code_server_socket(FluxSettings(home=deep))
        assert len(str(socket)) <= MAX_SOCKET_PATH and socket.name.endswith(".sock")
        assert socket != code_server_socket(FluxSettings(home=deep / "other"))  # one per FLUX_HOME
