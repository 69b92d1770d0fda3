"""The layers hold at run time, not only in import-linter's static graph (pyproject.toml): the query service,
the retrieval pipeline and the core load in a fresh interpreter without Dagster or dagster-dbt."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import importlib, sys
importlib.import_module({module!r})
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dagster", "dagster_dbt", "dbt"))
print(",".join(loaded))
"""


@pytest.mark.parametrize("module", ["serving.api", "serving.routes", "retrieval.pipeline", "dagster_project.core.http",
                                    "dagster_project.core.settings", "dagster_project.core.stores"])
def test_the_query_path_loads_without_dagster(module: str) -> None:
    result = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True,
                            timeout=180, check=True)
    assert result.stdout.strip() == "", f"{module} loaded {result.stdout.strip()[:200]}"


def test_the_probe_sees_dagster_when_it_is_loaded() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE.format(module="dagster_project.resources.postgres")],
                            capture_output=True, text=True, timeout=180, check=True)
    assert "dagster" in result.stdout.split(",")
