"""`make run`'s commands in a fresh FLUX_HOME, two ways, one after the other on the same machine:

- baseline: no Dagster daemon, `flux materialize --in-process` (the run executes inside the command);
- code location: the stack with its Dagster daemon, `flux materialize` (the run is created from the code location
  and dequeued by the daemon), then `flux summary` and `flux ask` as `make run` runs them.

    .venv/bin/python benchmarks/make_run_path.py [--executor in_process|multiprocess]

Prints the wall seconds of each command and of the whole path, and the ratio code location / baseline. Ports are
spare ones; each home is removed afterwards. Numbers go to BENCHMARKS.md; nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from dagster_project.core.settings import REPO_ROOT

QUESTION = "Which KEGG pathway corresponds to Reactome's glycolysis, and which genes do they share?"
PORTS = {"FLUX_PG_PORT": "55472", "FLUX_NEO4J_BOLT_PORT": "57727", "FLUX_REDIS_PORT": "56419"}


def _flux(env: dict[str, str], *args: str) -> float:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "dagster_project.cli", *args],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if result.returncode != 0:
        raise SystemExit(f"flux {' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return time.monotonic() - started


def run_path(label: str, daemon: bool, materialize: list[str], executor: str) -> dict[str, float]:
    home = tempfile.mkdtemp(prefix="flux-make-run-", dir="/tmp")
    os.chmod(home, 0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLUX_", "DAGSTER_"))}
    env |= PORTS | {"FLUX_HOME": home, "FLUX_DAGSTER_DAEMON": str(daemon).lower(), "FLUX_DAGSTER_EXECUTOR": executor}
    times: dict[str, float] = {}
    try:
        times["stack up"] = _flux(env, "stack", "up")
        times["materialize"] = _flux(env, "materialize", *materialize)
        times["summary"] = _flux(env, "summary")
        times["ask"] = _flux(env, "ask", QUESTION)
    finally:
        subprocess.run(
            [sys.executable, "-m", "dagster_project.cli", "stack", "down"],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            timeout=300,
        )
        shutil.rmtree(home, ignore_errors=True)
    times["whole path"] = sum(times.values())
    print(f"{label}: " + ", ".join(f"{step} {seconds:.1f} s" for step, seconds in times.items()), flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--executor", default="in_process", choices=["in_process", "multiprocess"])
    executor = parser.parse_args().executor
    baseline = run_path("baseline (in-process, no daemon)", False, ["--in-process"], executor)
    located = run_path("code location (daemon, queued)", True, ["--trigger", "make-run"], executor)
    for step in ("materialize", "whole path"):
        print(f"{step}: {located[step]:.1f} s / {baseline[step]:.1f} s = {located[step] / baseline[step]:.3f}")


if __name__ == "__main__":
    main()
