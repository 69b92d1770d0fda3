"""Pipeline version: the package version plus the git commit it runs from (stamped on chunks and answers)."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from dagster_project.core.settings import REPO_ROOT


@lru_cache(maxsize=1)
def pipeline_version() -> str:
    try:
        package = version("flux")
    except PackageNotFoundError:
        package = "0+unknown"
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = "nogit"
    return f"{package}+{sha}"
