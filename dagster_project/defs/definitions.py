"""The Flux code location (workspace.yaml points here): built from one FluxSettings by `build_definitions`.

Assets and checks are loaded from their modules, so a new asset in an asset module is part of the location
without a line here; the settings reach assets, checks, sensors and resources as the `settings` resource, and
nothing reads them at import time. Dagster calls `defs` when it loads the location.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import dagster as dg

from dagster_project.core.run_settings import LOCATION_SETTINGS_KEY, location_settings
from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.defs import assets, checks
from dagster_project.defs.assets import raw_pulls
from dagster_project.defs.assets.raw_pulls import build_raw_assets
from dagster_project.defs.automation import apply_nightly_policies, automation_sensor
from dagster_project.defs.ownership import apply_ownership, with_code_references
from dagster_project.defs.resources import build_resources
from dagster_project.defs.schedules import nightly_raw_pulls_job, nightly_refresh_schedule
from dagster_project.defs.sensors import build_snapshot_sensor

EXECUTORS = {"multiprocess": dg.multiprocess_executor, "in_process": dg.in_process_executor}


def package_modules(package: ModuleType) -> list[ModuleType]:
    """Every module of a package: adding a module to assets/ or checks/ is all it takes to register it."""
    names = [info.name for info in pkgutil.iter_modules(package.__path__)]
    return [importlib.import_module(f"{package.__name__}.{name}") for name in names]


def asset_modules() -> list[ModuleType]:
    # raw_pulls' assets are built from the settings (their retry policy), not loaded as module attributes.
    return [module for module in package_modules(assets) if module is not raw_pulls]


def build_definitions(settings: FluxSettings) -> dg.Definitions:
    nightly_pulls = nightly_raw_pulls_job()
    definitions = dg.Definitions(
        assets=with_code_references(
            [*dg.load_assets_from_modules(asset_modules(), include_specs=True), *build_raw_assets(settings)]
        ),
        asset_checks=dg.load_asset_checks_from_modules(package_modules(checks)),
        schedules=[nightly_refresh_schedule(settings, nightly_pulls)],
        sensors=[build_snapshot_sensor(settings, nightly_pulls), automation_sensor(settings)],
        jobs=[nightly_pulls],
        resources=build_resources(settings),
        executor=EXECUTORS[settings.ops.dagster_executor],
        # What this location was loaded with: a command compares its own before it submits a run (launch.py).
        metadata={LOCATION_SETTINGS_KEY: dg.MetadataValue.json(location_settings(settings))},
    )
    return apply_ownership(apply_nightly_policies(definitions, settings))


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions(get_settings())
