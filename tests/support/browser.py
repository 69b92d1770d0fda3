"""Debian's chromium driven by Playwright (its own browser download is not reachable from the test machines)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = os.environ.get("FLUX_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium; skips where none is installed (a failure under CI: tests/support/prerequisites.py)."""
    from playwright.sync_api import sync_playwright

    if CHROMIUM is None:
        pytest.skip(
            "no chromium here: `make setup` installs Debian's chromium with apt (as root, FLUX_ALLOW_APT=true)"
            ", or set FLUX_CHROMIUM to a chromium binary"
        )
    with sync_playwright() as playwright:
        # No sandbox: CI runs as root, where chromium refuses to start with one.
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()
