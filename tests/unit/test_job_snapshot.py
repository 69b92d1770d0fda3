"""One code, one job snapshot id: two processes that load the code location (the UI's, the daemon's, `flux
materialize`'s code servers) must agree on the asset job's snapshot, or the UI calls every run's job "a different
version" on re-execution. Loaded here under two hash seeds (this process's and another in a fresh interpreter); with
Dagster's own `@asset_check` (every check's output named "result") the order of an asset's blocking checks, and so
the id, changed between such loads."""

from __future__ import annotations

import os
import subprocess
import sys

from dagster_project.core.settings import REPO_ROOT, get_settings


def snapshot_id() -> str:
    """The asset job's snapshot id, as this process loads the definitions."""
    from dagster._core.snap import JobSnap

    from dagster_project.defs.definitions import build_definitions

    job = build_definitions(get_settings()).resolve_implicit_global_asset_job_def()
    return JobSnap.from_job_def(job).snapshot_id


# The same function in a fresh interpreter (run from the repository root, where `tests` is a package).
SNAPSHOT_ID = "from tests.unit.test_job_snapshot import snapshot_id; print(snapshot_id())"


def _snapshot_id_in_a_new_process(hash_seed: str) -> str:
    env = dict(os.environ) | {"PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-c", SNAPSHOT_ID],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def test_the_asset_job_has_the_same_snapshot_id_in_every_process() -> None:
    # This process's seed is random unless PYTHONHASHSEED fixes it; the other process's is fixed and differs from it.
    other_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    here, there = snapshot_id(), _snapshot_id_in_a_new_process(other_seed)
    assert len(here) == 40 and here == there
