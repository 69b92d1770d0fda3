"""The layers hold at run time, not only in import-linter's static graph (pyproject.toml): the query service,
the retrieval pipeline, the core and every other package outside dagster_project/defs and the CLI load in a fresh
interpreter without Dagster or dagster-dbt. One interpreter imports them in turn and reports what each import
added, then imports a Dagster resource to show that the probe does see Dagster when it is loaded."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import dagster_project
import retrieval
import serving
from tests.support.session import once_per_session

# Every module of the core, then the query path on top of it, then the rest of the Dagster-free packages.
DAGSTER_ONLY = ("dagster_project.defs", "dagster_project.cli")


def _modules(package: object, prefix: str) -> list[str]:
    """Every module below `package` but the Dagster-only ones, found on disk without importing any of them
    (pkgutil.walk_packages imports each package it walks, and so would load Dagster into this process)."""
    found: list[str] = []

    def walk(path: list[str], prefix: str) -> None:
        for m in pkgutil.iter_modules(path, prefix):
            if m.name.startswith(DAGSTER_ONLY):
                continue
            found.append(m.name)
            if m.ispkg:
                walk([str(Path(m.module_finder.path) / m.name.rpartition(".")[2])], f"{m.name}.")  # type: ignore[union-attr]

    walk(package.__path__, prefix)  # type: ignore[attr-defined]
    return sorted(found)


CORE = [m for m in _modules(dagster_project, "dagster_project.") if m.startswith("dagster_project.core.")]
QUERY_PATH = [*CORE, "retrieval.pipeline", "serving.routes", "serving.api"]
DAGSTER_FREE = [
    m
    for m in (
        *_modules(dagster_project, "dagster_project."),
        *_modules(retrieval, "retrieval."),
        *_modules(serving, "serving."),
    )
    if m not in QUERY_PATH
]
WITH_DAGSTER = "dagster_project.defs.resources.postgres"

PROBE = """
import importlib, json, sys
def dagster_like():
    return sorted(m for m in sys.modules if m.split(".")[0] in ("dagster", "dagster_dbt", "dbt"))
loaded = {}
for module in sys.argv[1:]:
    importlib.import_module(module)
    loaded[module] = dagster_like()
print(json.dumps(loaded))
"""


def _probe() -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *QUERY_PATH, *DAGSTER_FREE, WITH_DAGSTER],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    loaded: dict[str, list[str]] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """What each module, imported in that order in one fresh interpreter, had loaded of Dagster/dbt by then (one
    probe per session, whichever workers run this module's tests)."""
    probed: dict[str, list[str]] = once_per_session(tmp_path_factory, "layers-probe", _probe)
    return probed


@pytest.mark.parametrize("module", QUERY_PATH)
def test_the_query_path_loads_without_dagster(loaded: dict[str, list[str]], module: str) -> None:
    assert loaded[module] == [], f"{module} (or a module imported before it) loaded {loaded[module][:5]}"


@pytest.mark.parametrize("module", DAGSTER_FREE)
def test_every_package_outside_defs_and_the_cli_loads_without_dagster(
    loaded: dict[str, list[str]], module: str
) -> None:
    assert loaded[module] == [], f"{module} (or a module imported before it) loaded {loaded[module][:5]}"


def test_the_probe_sees_dagster_when_it_is_loaded(loaded: dict[str, list[str]]) -> None:
    assert "dagster" in loaded[WITH_DAGSTER]
