"""Skips that cannot hide under CI: a test whose prerequisite is missing (Chromium, ../shared/data, root, a
binary) skips on a developer's machine with what to install, and fails the run when CI is set, naming it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


def under_ci() -> bool:
    """CI sets CI=true (so do most CI systems); "0" / "false" / "" mean a developer's machine."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing_under_ci(report: pytest.TestReport | pytest.CollectReport) -> bool:
    """A skip (not an expected failure) in a CI run."""
    return under_ci() and report.skipped and not hasattr(report, "wasxfail")


def as_ci_failure(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Turn a skip into a failure whose message names the missing prerequisite (the skip's own reason)."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"a prerequisite is missing and CI is set, so this is a failure, not a skip: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI a skipped test fails, naming what it needed: a green CI run has run every test."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if missing_under_ci(report):
        as_ci_failure(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """A module that skips as a whole (allow_module_level) fails its collection under CI."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if missing_under_ci(report):
        as_ci_failure(report)
