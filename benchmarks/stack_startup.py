"""Cold and warm start times of each local service, in a throwaway FLUX_HOME on spare ports.

    .venv/bin/python benchmarks/stack_startup.py

Prints seconds per service for a cold start (initdb / empty Neo4j store), a stop, and a warm start on the same
data, and the warm/cold ratio. Numbers go to BENCHMARKS.md; nothing here asserts a timing.
"""

from __future__ import annotations

import os
import tempfile
import time

from dagster_project.core.settings import FluxSettings
from dagster_project.stack import Stack


def timed_up(stack: Stack) -> dict[str, float]:
    out: dict[str, float] = {}
    for service in stack.services:
        if service.unavailable_reason():
            continue
        start = time.monotonic()
        service.start()
        out[service.name] = time.monotonic() - start
    return out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="flux-bench-", dir="/tmp") as home:
        os.chmod(home, 0o755)
        settings = FluxSettings(home=home, pg_port=55462, neo4j_bolt_port=57717, redis_port=56409)
        stack = Stack(settings)
        try:
            cold = timed_up(stack)
            stack.down()
            warm = timed_up(stack)
        finally:
            stack.down()
    print(f"{'service':<10}{'cold s':>8}{'warm s':>8}{'warm/cold':>11}")
    for name, cold_s in cold.items():
        print(f"{name:<10}{cold_s:>8.2f}{warm[name]:>8.2f}{warm[name] / cold_s:>11.2f}")


if __name__ == "__main__":
    main()
