"""The snapshot sensor starts a refresh when snapshot content changes, and only then; the cron is validated."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from dagster_project.schedules import nightly_raw_pulls_job, nightly_refresh_schedule
from dagster_project.sensors import snapshot_changed
from dagster_project.settings import FluxConfigError, FluxSettings, use_settings


def tick(cursor: str | None = None) -> dg.SensorResult | dg.SkipReason:
    return snapshot_changed(dg.build_sensor_context(cursor=cursor))


def test_a_refresh_starts_when_content_changes_and_only_then(tmp_path: Path) -> None:
    (tmp_path / "reactome").mkdir()
    data = tmp_path / "reactome" / "pathways.txt"
    data.write_text("R-HSA-1\tA\n")
    with use_settings(FluxSettings(source_mode="snapshot", snapshot_dir=tmp_path)):
        first = tick()
        assert isinstance(first, dg.SensorResult) and len(first.run_requests) == 1
        key = first.run_requests[0].run_key
        assert first.cursor == key
        assert isinstance(tick(key), dg.SkipReason)
        data.write_text("R-HSA-2\tA\n")  # same size, new content
        changed = tick(key)
        assert isinstance(changed, dg.SensorResult) and changed.run_requests[0].run_key != key
        (tmp_path / "kegg.txt").write_text("new file")
        assert isinstance(tick(changed.cursor), dg.SensorResult)


def test_outside_snapshot_mode_or_without_the_directory_it_skips_with_a_reason(tmp_path: Path) -> None:
    with use_settings(FluxSettings(source_mode="demo", snapshot_dir=tmp_path)):
        assert "FLUX_SOURCE_MODE" in tick().skip_message
    with use_settings(FluxSettings(source_mode="snapshot", snapshot_dir=tmp_path / "missing")):
        assert "FLUX_SNAPSHOT_DIR" in tick().skip_message


def test_an_invalid_cron_is_a_config_error_naming_the_variable() -> None:
    settings = FluxSettings(nightly_cron="every night")
    with pytest.raises(FluxConfigError, match="FLUX_NIGHTLY_CRON"):
        nightly_refresh_schedule(settings, nightly_raw_pulls_job(settings))
    schedule = nightly_refresh_schedule(FluxSettings(nightly_cron="30 3 * * 1-5", nightly_timezone="Europe/Berlin"),
                                        nightly_raw_pulls_job(FluxSettings()))
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("30 3 * * 1-5", "Europe/Berlin")
