"""An existing Ray cluster, used unchanged: two nodes started here with `ray start` (a head and a second node, one
CPU each), joined through FLUX_RAY_ADDRESS by `flux materialize --select group:index` in a process of its own.
Ray's state API then shows where the model actors ran: on both nodes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import psutil
import pytest
from sqlalchemy import text

from dagster_project.core.settings import REPO_ROOT, FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.index.encoder import resolve_model_path
from tests.support.ports import free_port

# Kills, starves or restarts real processes, or starts a second stack / cluster / daemon: `make test-extended`.
pytestmark = pytest.mark.resilience

RAY = Path(sys.executable).parent / "ray"


def _ray(env: dict[str, str], *args: str) -> None:
    result = subprocess.run([str(RAY), *args], env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, f"ray {' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


def _stop_processes_of(temp_dir: Path) -> None:
    """`ray stop` stops every Ray on the machine (this session's own local cluster too): stop only this one's,
    the processes whose command line names its temp dir."""
    mine = [p for p in psutil.process_iter(["cmdline"]) if str(temp_dir) in " ".join(p.info["cmdline"] or [])]
    for process in mine:
        process.terminate()
    _, alive = psutil.wait_procs(mine, timeout=15)
    for process in alive:
        process.kill()


@pytest.fixture
def two_node_cluster() -> Iterator[tuple[str, str]]:
    """(the GCS address to join, the dashboard URL the state API reads)."""
    temp_dir = Path(tempfile.mkdtemp(prefix="flux-ray2-", dir="/tmp"))  # short: Ray's socket paths are limited
    port, dashboard = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    node = [
        "--node-ip-address=127.0.0.1",
        "--num-cpus=1",
        "--num-gpus=0",
        "--object-store-memory=150000000",
        "--disable-usage-stats",
    ]
    try:
        _ray(
            env,
            "start",
            "--head",
            f"--port={port}",
            f"--temp-dir={temp_dir}",
            "--include-dashboard=true",
            "--dashboard-host=127.0.0.1",
            f"--dashboard-port={dashboard}",
            *node,
        )
        _ray(env, "start", f"--address=127.0.0.1:{port}", *node)
        yield f"127.0.0.1:{port}", f"http://127.0.0.1:{dashboard}"
    finally:
        _stop_processes_of(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.timeout(900)
def test_an_existing_two_node_cluster_runs_the_model_work_on_both_nodes(
    demo_platform: FluxSettings, two_node_cluster: tuple[str, str]
) -> None:
    from ray.util.state import list_actors, list_nodes

    address, dashboard = two_node_cluster
    nodes = {n.node_id for n in list_nodes(address=dashboard) if n.state == "ALIVE"}
    assert len(nodes) == 2
    # The same weights under another name: every chunk needs a vector, so the index group has model work to do.
    new_model = resolve_model_path(demo_platform.index.embedding_model)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {
        "FLUX_PG_DATABASE": demo_platform.postgres.pg_database,
        "FLUX_SOURCE_MODE": "demo",
        "FLUX_RAW_ROOT": demo_platform.raw_root_path,
        "FLUX_RAY_ADDRESS": address,
        "FLUX_EMBEDDING_MODEL": new_model,
        "RAY_AUTH_MODE": "disabled",
    }
    engine = engine_for(demo_platform.platform_database_url)
    try:
        run = subprocess.run(
            # In the command's own process: its database, Ray cluster and model are not the stack's code server's,
            # and a run through that server cannot carry them (it would be refused before it exists).
            [sys.executable, "-m", "dagster_project.cli", "materialize", "--in-process", "--select", "group:index"],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=840,
        )
        assert run.returncode == 0, f"flux materialize failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
        with engine.connect() as conn:
            embedded = conn.execute(
                text("SELECT count(*) FROM chunks WHERE embedding_model = :m"), {"m": new_model}
            ).scalar_one()
            total = conn.execute(text("SELECT count(*) FROM chunks")).scalar_one()
        assert embedded == total > 0
        model_actors = [
            a for a in list_actors(address=dashboard, detail=True, limit=10_000) if "MapWorker" in a.class_name
        ]
        assert {a.node_id for a in model_actors} == nodes, [(a.class_name, a.node_id) for a in model_actors]
        with dg.DagsterInstance.get() as instance:  # the asset's own record agrees with Ray's
            event = instance.get_latest_materialization_event(dg.AssetKey("chunk_embeddings"))
            metadata = event.asset_materialization.metadata  # type: ignore[union-attr]
        assert set(metadata["ray_nodes"].value) == nodes and metadata["ray_actors"].value == 2
        assert metadata["chunks_embedded"].value == total and metadata["device"].value == "cpu"
    finally:
        # The same weights: the vectors are the default model's too; give them back its name for the tests after.
        with engine.begin() as conn:
            conn.execute(
                text("UPDATE chunks SET embedding_model = :d WHERE embedding_model = :m"),
                {"d": demo_platform.index.embedding_model, "m": new_model},
            )
