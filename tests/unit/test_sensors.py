"""The sensor starts a refresh when the content of the files the raw pulls read changes (snapshot files, or the
demo folder), and only then: its first look records the files as they are and requests nothing (the pull that read
them is `make run`'s or the schedule's); the cron and time zone are validated."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from dagster_project.core.settings import FluxConfigError, FluxSettings
from dagster_project.defs.schedules import nightly_raw_pulls_job, nightly_refresh_schedule
from dagster_project.defs.sensors import SNAPSHOT_FILES, demo_files, evaluate_snapshot_sensor
from dagster_project.sources import registry


def tick(settings: FluxSettings, cursor: str | None = None) -> dg.SensorResult | dg.SkipReason:
    return evaluate_snapshot_sensor(dg.build_sensor_context(cursor=cursor), settings)


@pytest.fixture
def snapshot_dir(tmp_path: Path) -> Path:
    for name in SNAPSHOT_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"content of {name}\n")
    return tmp_path


def test_the_sensor_watches_exactly_the_files_the_snapshot_pulls_read(snapshot_dir: Path) -> None:
    settings = FluxSettings(source_mode="snapshot", snapshot_dir=snapshot_dir)
    read = {name for source in registry.SOURCES for name in registry.pull(source, settings).files}
    assert read == set(SNAPSHOT_FILES)


def test_a_refresh_starts_when_content_changes_and_only_then(snapshot_dir: Path) -> None:
    data = snapshot_dir / SNAPSHOT_FILES[0]
    settings = FluxSettings(source_mode="snapshot", snapshot_dir=snapshot_dir)
    first = tick(settings)
    assert isinstance(first, dg.SensorResult) and first.run_requests == [] and first.cursor
    assert f"watching {len(SNAPSHOT_FILES)} files" in first.skip_reason.skip_message  # type: ignore[union-attr]
    key = first.cursor
    assert isinstance(tick(settings, key), dg.SkipReason)
    stat = data.stat()
    data.write_text(data.read_text().upper())  # same size, new content
    # A later write has a later mtime; set it so a coarse file-system clock cannot make this test flaky.
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert data.stat().st_size == stat.st_size
    changed = tick(settings, key)
    assert isinstance(changed, dg.SensorResult) and changed.run_requests[0].run_key != key
    assert changed.cursor == changed.run_requests[0].run_key
    assert changed.run_requests[0].tags["flux/trigger"] == "sensor"
    assert changed.run_requests[0].tags["flux/source_mode"] == "snapshot"
    (snapshot_dir / "msigdb.gmt").write_text("not read by any raw pull")
    assert isinstance(tick(settings, changed.cursor), dg.SkipReason)


def test_a_cursor_from_an_older_version_starts_one_refresh_and_is_replaced(snapshot_dir: Path) -> None:
    """A cursor this version did not write (another hash scheme, or a JSON cursor) is a changed hash: one refresh,
    whose pulls find nothing new and stop there (test_automation.py), and the cursor is this version's from then on."""
    settings = FluxSettings(source_mode="snapshot", snapshot_dir=snapshot_dir)
    current = tick(settings).cursor  # type: ignore[union-attr]
    for legacy in ('{"version": 1, "hash": "0f3a"}', "0f3a", ""):
        result = tick(settings, legacy)
        assert isinstance(result, dg.SensorResult) and len(result.run_requests) == 1, legacy
        assert result.cursor == current == result.run_requests[0].run_key
        assert isinstance(tick(settings, result.cursor), dg.SkipReason)


def test_in_demo_mode_it_watches_the_demo_folder_the_demo_pulls_read(tmp_path: Path) -> None:
    bundled = FluxSettings().sources.demo_dir
    # Demo pulls name their files relative to the source's own subfolder.
    read = {
        f"{source}/{name}"
        for source in registry.SOURCES
        for name in registry.pull(source, FluxSettings(source_mode="demo")).files
    }
    assert read == set(demo_files(bundled))
    demo = tmp_path / "demo"
    shutil.copytree(bundled, demo)
    settings = FluxSettings(source_mode="demo", demo_dir=demo)
    first = tick(settings)
    assert isinstance(first, dg.SensorResult)
    assert isinstance(tick(settings, first.cursor), dg.SkipReason)
    (demo / "README.md").write_text("notes are not pull inputs")
    assert isinstance(tick(settings, first.cursor), dg.SkipReason)
    kegg = demo / "kegg" / "list_pathway_hsa.txt"
    kegg.write_text(kegg.read_text() + "path:hsa99999\tA pathway added upstream\n")
    changed = tick(settings, first.cursor)
    assert isinstance(changed, dg.SensorResult) and changed.cursor != first.cursor


def test_in_live_mode_or_without_the_files_it_skips_with_a_reason(snapshot_dir: Path) -> None:
    settings = FluxSettings(source_mode="live", snapshot_dir=snapshot_dir)
    assert "FLUX_SOURCE_MODE is live" in tick(settings).skip_message
    settings = FluxSettings(source_mode="demo", demo_dir=snapshot_dir / "missing")
    assert "FLUX_DEMO_DIR" in tick(settings).skip_message
    settings = FluxSettings(source_mode="snapshot", snapshot_dir=snapshot_dir / "missing")
    assert "FLUX_SNAPSHOT_DIR" in tick(settings).skip_message
    (snapshot_dir / SNAPSHOT_FILES[-1]).unlink()
    settings = FluxSettings(source_mode="snapshot", snapshot_dir=snapshot_dir)
    message = tick(settings).skip_message
    assert SNAPSHOT_FILES[-1] in message and "FLUX_SNAPSHOT_DIR" in message


def test_an_invalid_cron_or_time_zone_is_a_config_error_naming_the_variable() -> None:
    with pytest.raises(FluxConfigError, match="FLUX_NIGHTLY_CRON"):
        nightly_refresh_schedule(FluxSettings(nightly_cron="every night"), nightly_raw_pulls_job())
    with pytest.raises(FluxConfigError, match="FLUX_NIGHTLY_TIMEZONE"):
        nightly_refresh_schedule(FluxSettings(nightly_timezone="Mars/Olympus"), nightly_raw_pulls_job())
    schedule = nightly_refresh_schedule(
        FluxSettings(nightly_cron="30 3 * * 1-5", nightly_timezone="Europe/Berlin"), nightly_raw_pulls_job()
    )
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("30 3 * * 1-5", "Europe/Berlin")
