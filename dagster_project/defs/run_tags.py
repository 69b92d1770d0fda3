"""The tags every Flux run carries: what started it (`flux/trigger`: make-run, cli, schedule, sensor, automation,
in-process, test) and what it read, so a pull from another raw root or source mode is told apart in the UI."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings

TRIGGER_TAG = "flux/trigger"
SOURCE_MODE_TAG = "flux/source_mode"
RAW_ROOT_TAG = "flux/raw_root"


def run_tags(settings: FluxSettings, trigger: str) -> dict[str, str]:
    return {TRIGGER_TAG: trigger, SOURCE_MODE_TAG: settings.sources.source_mode, RAW_ROOT_TAG: settings.raw_root_path}
