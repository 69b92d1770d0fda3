"""Nightly policies, applied to the Definitions by asset selection: eager automation for every materializable
asset after the raw pulls (blocked while an upstream blocking check fails, and carried on only by raw pulls that
brought a new data version), each release-history partition once, and freshness policies on the raw and index
groups (the raw pulls' step retries are set where they are built, raw_pulls.py). An asset added to a group gets
that group's policies."""

import warnings
from datetime import timedelta

import dagster as dg

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.assets.chunks import INDEX_GROUP
from dagster_project.defs.assets.raw_pulls import RAW_GROUP
from dagster_project.defs.assets.release_history import HISTORY_TAG
from dagster_project.defs.assets.search_index import SERVING_GROUP
from dagster_project.defs.run_tags import run_tags

AUTOMATION_SENSOR = "nightly_automation"
RAW = dg.AssetSelection.groups(RAW_GROUP)
INDEX = dg.AssetSelection.groups(INDEX_GROUP, SERVING_GROUP)
HISTORY = dg.AssetSelection.tag(*HISTORY_TAG)
# all() holds only executable assets (a spec without a computation would be left out).
AUTOMATED = dg.AssetSelection.all() - RAW - HISTORY


def deps_updated() -> dg.AutomationCondition:
    """eager()'s "a dependency updated", except that a raw pull counts only when its data version changed: a
    night whose pulls found nothing new records them and stops there, instead of rebuilding everything."""
    raw = dg.AssetSelection.groups(RAW_GROUP)
    return (
        dg.AutomationCondition.any_deps_match(dg.AutomationCondition.data_version_changed()).allow(raw)
        | dg.AutomationCondition.any_deps_updated().ignore(raw)
    ).with_label("any_deps_updated_with_new_data")


def downstream_condition() -> dg.AutomationCondition:
    # eager(): run when an upstream asset updated (and none is missing or in progress); the second part keeps a
    # bad upstream (a failed blocking check) from flowing on — serving then stays on the previous index.
    eager = dg.AutomationCondition.eager().replace("any_deps_updated", deps_updated())
    return eager & dg.AutomationCondition.all_deps_blocking_checks_passed()


def history_condition() -> dg.AutomationCondition:
    """Each release partition once, when it is registered: a partition that failed (its files left the raw zone)
    is not tried again by automation, and one running is not requested twice."""
    return (
        dg.AutomationCondition.missing()
        & ~dg.AutomationCondition.in_progress()
        & ~dg.AutomationCondition.execution_failed()
    ).with_label("release_not_yet_recorded")


def automation_sensor(settings: FluxSettings) -> dg.AutomationConditionSensorDefinition:
    """Evaluates every asset's condition each FLUX_AUTOMATION_INTERVAL seconds (in the daemon)."""
    return dg.AutomationConditionSensorDefinition(
        AUTOMATION_SENSOR,
        target=dg.AssetSelection.all(),
        minimum_interval_seconds=settings.ops.automation_interval,
        default_status=dg.DefaultSensorStatus.RUNNING,
        run_tags=run_tags(settings, "automation"),
        description="Carries new raw pulls down to a new published index (each asset's automation condition).",
    )


def apply_nightly_policies(defs: dg.Definitions, settings: FluxSettings) -> dg.Definitions:
    raw_freshness = dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=settings.ops.raw_freshness_hours))
    index_freshness = dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=settings.ops.index_freshness_hours))
    condition = downstream_condition()
    with warnings.catch_warnings():
        # map_resolved_asset_specs is a "preview" API; what it produces is pinned by the asset-graph snapshot test.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return _apply(defs, condition, raw_freshness, index_freshness)


def _apply(
    defs: dg.Definitions,
    condition: dg.AutomationCondition,
    raw_freshness: dg.FreshnessPolicy,
    index_freshness: dg.FreshnessPolicy,
) -> dg.Definitions:
    return (
        # The raw pulls are scheduled (schedules.py) and sensed (sensors.py), so they get no automation condition.
        defs.map_resolved_asset_specs(
            func=lambda spec: spec.replace_attributes(freshness_policy=raw_freshness), selection=RAW
        )
        .map_resolved_asset_specs(
            func=lambda spec: spec.replace_attributes(automation_condition=condition), selection=AUTOMATED
        )
        .map_resolved_asset_specs(
            func=lambda spec: spec.replace_attributes(freshness_policy=index_freshness), selection=INDEX
        )
        .map_resolved_asset_specs(
            func=lambda spec: spec.replace_attributes(automation_condition=history_condition()), selection=HISTORY
        )
    )
