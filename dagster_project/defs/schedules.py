"""The nightly refresh: the raw pulls on a cron (FLUX_NIGHTLY_CRON in FLUX_NIGHTLY_TIMEZONE); everything
downstream follows by declarative automation (automation.py)."""

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dagster as dg
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition
from dagster._utils.schedules import is_valid_cron_string

from dagster_project.core.settings import FluxConfigError, FluxSettings
from dagster_project.defs.assets.raw_pulls import RAW_GROUP
from dagster_project.defs.pull_settings import check_pull_settings
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.defs.run_tags import run_tags

NIGHTLY_SCHEDULE = "nightly_refresh"


def nightly_raw_pulls_job() -> UnresolvedAssetJobDefinition:
    # Step retries (FLUX_RAW_MAX_RETRIES) sit on the raw assets' ops (automation.py), so they hold in any run.
    return dg.define_asset_job(
        "nightly_raw_pulls",
        selection=dg.AssetSelection.groups(RAW_GROUP),
        description="Pull every source into the raw zone; downstream assets follow by automation.",
    )


def nightly_refresh_schedule(settings: FluxSettings, job: UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    if not is_valid_cron_string(settings.ops.nightly_cron):
        raise FluxConfigError("FLUX_NIGHTLY_CRON", f"not a valid cron expression: {settings.ops.nightly_cron!r}")
    try:
        ZoneInfo(settings.ops.nightly_timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise FluxConfigError("FLUX_NIGHTLY_TIMEZONE", f"unknown time zone: {settings.ops.nightly_timezone!r}") from exc

    # RUNNING by default: "nightly refreshes" should not depend on someone clicking a toggle in the UI.
    @dg.schedule(
        name=NIGHTLY_SCHEDULE,
        job=job,
        cron_schedule=settings.ops.nightly_cron,
        execution_timezone=settings.ops.nightly_timezone,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description="Nightly raw pulls; the rest of the platform follows by automation.",
    )
    def _nightly(context: dg.ScheduleEvaluationContext, settings: FluxSettingsParam) -> dg.RunRequest:
        # Settings that stopped holding since the location loaded (a raw root made read-only, a snapshot folder
        # emptied) fail this tick in one line instead of starting pulls that fail; the next tick checks again.
        check_pull_settings(settings)
        return dg.RunRequest(tags=run_tags(settings, "schedule"))

    return _nightly
