"""A raw pull that no retry can mend fails its step at once, naming the variable to change: a snapshot or demo folder
without the source's files, and a raw zone that cannot be written. The retry policy (here 3 retries, 30 s apart)
is kept for what can pass on another try (a 429, a 5xx: tests/unit/test_live_identity.py)."""

from __future__ import annotations

import time
from pathlib import Path

import dagster as dg
import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.assets.raw_pulls import build_raw_asset
from dagster_project.defs.resources import PostgresResource

SLOW_RETRIES = dg.RetryPolicy(max_retries=3, delay=30)


def materialize_kegg_raw(settings: FluxSettings) -> tuple[dg.ExecuteInProcessResult, float]:
    started = time.monotonic()
    result = dg.materialize(
        [build_raw_asset("kegg", SLOW_RETRIES)],
        resources={"postgres": PostgresResource(settings=settings), "settings": settings},
        raise_on_error=False,
    )
    return result, time.monotonic() - started


def step_failure(result: dg.ExecuteInProcessResult) -> str:
    (failure,) = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    retries = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_UP_FOR_RETRY]
    assert not retries, "a failure no retry can mend was retried"
    assert failure.step_failure_data.error is not None
    return failure.step_failure_data.user_failure_data.description or ""


@pytest.mark.parametrize(
    ("mode", "variable"), [("snapshot", "FLUX_SNAPSHOT_DIR"), ("demo", "FLUX_DEMO_DIR")], ids=["snapshot", "demo"]
)
def test_a_folder_without_the_source_files_fails_at_once_naming_its_variable(
    tmp_path: Path, mode: str, variable: str
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    settings = FluxSettings(home=tmp_path / "home", source_mode=mode, snapshot_dir=empty, demo_dir=empty)
    result, seconds = materialize_kegg_raw(settings)
    assert not result.success
    description = step_failure(result)
    assert description.startswith(f"kegg: missing source files under {empty}")
    assert variable in description and f"FLUX_SOURCE_MODE={mode}" in description
    assert seconds < 25  # no 30 s retry delay was waited out
    assert not (tmp_path / "home" / "raw").exists()


def test_a_raw_zone_that_cannot_be_written_fails_at_once_naming_flux_raw_root(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("a file where the raw zone's folder should be\n")  # refused even to root
    settings = FluxSettings(home=tmp_path / "home", source_mode="demo", raw_root=str(not_a_folder / "raw"))
    result, seconds = materialize_kegg_raw(settings)
    assert not result.success
    description = step_failure(result)
    assert description.startswith("kegg: cannot write kegg to the raw zone FLUX_RAW_ROOT=")
    assert "nothing partial was kept" in description
    assert seconds < 25
