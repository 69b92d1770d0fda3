"""Pipeline version: the package version plus the git commit it runs from (stamped on chunks and answers); and a
digest of the code that computes and scores, for skipping work whose inputs are unchanged."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from dagster_project.core.settings import REPO_ROOT


@lru_cache(maxsize=1)
def pipeline_version() -> str:
    try:
        package = version("flux")
    except PackageNotFoundError:
        package = "0+unknown"
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = "nogit"
    return f"{package}+{sha}"


# The packages whose code decides what the platform computes and scores; the CLI, HTTP layer and Dagster wiring do not.
SCORED_CODE = (
    "retrieval",
    "dagster_project.core",
    "dagster_project.evals",
    "dagster_project.index",
    "dagster_project.resolution",
    "dagster_project.graph",
)


# Everything whose code can change what an asset writes: the assets' code version (a docs or test change is none).
PLATFORM_CODE = ("dagster_project", "retrieval")


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of the files of SCORED_CODE as they are on disk (an uncommitted edit counts, a docs change does not)."""
    return _digest(SCORED_CODE)


@lru_cache(maxsize=1)
def platform_code_digest() -> str:
    """The code version of every Python asset: a hash of the platform's code as it is on disk, so Dagster calls an
    asset stale for its code only when code changed, and an unchanged rerun gives every asset the data version it
    had (Dagster derives it from the code version and the inputs' versions)."""
    return _digest(PLATFORM_CODE, {".py", ".sql"})  # not the demo files or question sets below these packages


def _digest(packages: tuple[str, ...], suffixes: set[str] | None = None) -> str:
    digest = hashlib.sha256()
    for package in packages:
        spec = importlib.util.find_spec(package)  # found, not imported: the core imports nothing above it
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        wanted = suffixes or {".py", ".json", ".sql"}
        for path in sorted(p for p in root.rglob("*") if p.suffix in wanted and p.is_file()):
            digest.update(f"{package}/{path.relative_to(root)}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
