"""The tags every Flux run carries: what started it (`flux/trigger`: make-run, cli, schedule, sensor, automation,
in-process, test) and what it read, so a pull from another raw root or source mode is told apart in the UI."""

from __future__ import annotations

import socket

from dagster_project.core.settings import FluxSettings

TRIGGER_TAG = "flux/trigger"
SOURCE_MODE_TAG = "flux/source_mode"
RAW_ROOT_TAG = "flux/raw_root"


def run_tags(settings: FluxSettings, trigger: str) -> dict[str, str]:
    return {TRIGGER_TAG: trigger, SOURCE_MODE_TAG: settings.sources.source_mode, RAW_ROOT_TAG: settings.raw_root_path}


HOST_TAG = "flux/host"


def command_tags(settings: FluxSettings, trigger: str) -> dict[str, str]:
    """A run `flux materialize` creates also names the machine whose process executes (or launches) it: a run whose
    process is gone is judged only there (dead_runs.py). Schedules and sensors leave it out: their definitions
    must not depend on the machine that loads them."""
    return run_tags(settings, trigger) | {HOST_TAG: socket.gethostname()}
