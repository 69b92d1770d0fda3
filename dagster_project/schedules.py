"""The nightly refresh: the raw pulls on a cron (FLUX_NIGHTLY_CRON in FLUX_NIGHTLY_TIMEZONE); everything
downstream follows by declarative automation (automation.py)."""

import dagster as dg
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition
from dagster._utils.schedules import is_valid_cron_string

from dagster_project.settings import FluxConfigError, FluxSettings, get_settings

RAW_GROUP = "raw"


def nightly_raw_pulls_job(settings: FluxSettings) -> UnresolvedAssetJobDefinition:
    # Network pulls fail transiently (429s that outlast the client's own retries, a dropped connection): the
    # step is retried with exponential backoff before the run is marked failed.
    return dg.define_asset_job(
        "nightly_raw_pulls", selection=dg.AssetSelection.groups(RAW_GROUP),
        description="Pull every source into the raw zone; downstream assets follow by automation.",
        op_retry_policy=dg.RetryPolicy(max_retries=settings.raw_max_retries, delay=settings.raw_retry_delay,
                                       backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS))


def nightly_refresh_schedule(settings: FluxSettings, job: UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    if not is_valid_cron_string(settings.nightly_cron):
        raise FluxConfigError("FLUX_NIGHTLY_CRON", f"not a valid cron expression: {settings.nightly_cron!r}")
    # RUNNING by default: "nightly refreshes" should not depend on someone clicking a toggle in the UI.
    return dg.ScheduleDefinition(name="nightly_refresh", job=job, cron_schedule=settings.nightly_cron,
                                 execution_timezone=settings.nightly_timezone,
                                 default_status=dg.DefaultScheduleStatus.RUNNING,
                                 description="Nightly raw pulls; the rest of the platform follows by automation.")


nightly_raw_pulls = nightly_raw_pulls_job(get_settings())
nightly_refresh = nightly_refresh_schedule(get_settings(), nightly_raw_pulls)
