"""Reading the settings from the environment a test has just changed (get_settings caches what it read once)."""

from __future__ import annotations

import sys

import pytest

from dagster_project.cli import main as cli_main
from dagster_project.core.settings import FluxConfigError, get_settings


def settings_error() -> FluxConfigError:
    """The error get_settings() raises for the environment as it is now; the cache is left empty either way."""
    get_settings.cache_clear()
    try:
        with pytest.raises(FluxConfigError) as err:
            get_settings()
    finally:
        get_settings.cache_clear()
    return err.value


def flux_exit_code(monkeypatch: pytest.MonkeyPatch, *argv: str) -> int | str | None:
    """`flux <argv>` through the console script's entry point, in this process: its exit code."""
    monkeypatch.setattr(sys, "argv", ["flux", *argv])
    get_settings.cache_clear()
    try:
        with pytest.raises(SystemExit) as exit_:
            cli_main.main()
    finally:
        get_settings.cache_clear()
    return exit_.value.code
