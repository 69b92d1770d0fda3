"""Nightly policies applied to the whole asset list: eager automation for everything after the raw pulls
(blocked while an upstream blocking check fails, and carried on only by raw pulls that brought a new data
version) and freshness policies on the raw and index assets (their step retries are set where they are defined,
raw_pulls.py). Whatever is added to the Definitions' asset list gets these too."""

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import dagster as dg

from dagster_project.assets.raw_pulls import RAW_GROUP
from dagster_project.settings import FluxSettings

INDEX_ASSETS = frozenset({"chunks", "chunk_embeddings", "chunk_vector_index", "chunk_bm25_index", "candidate_index",
                          "published_index"})


def deps_updated() -> dg.AutomationCondition:
    """eager()'s "a dependency updated", except that a raw pull counts only when its data version changed: a
    night whose pulls found nothing new records them and stops there, instead of rebuilding everything."""
    raw = dg.AssetSelection.groups(RAW_GROUP)
    return (dg.AutomationCondition.any_deps_match(dg.AutomationCondition.data_version_changed()).allow(raw)
            | dg.AutomationCondition.any_deps_updated().ignore(raw)).with_label("any_deps_updated_with_new_data")


def downstream_condition() -> dg.AutomationCondition:
    # eager(): run when an upstream asset updated (and none is missing or in progress); the second part keeps a
    # bad upstream (a failed blocking check) from flowing on — serving then stays on the previous index.
    eager = dg.AutomationCondition.eager().replace("any_deps_updated", deps_updated())
    return eager & dg.AutomationCondition.all_deps_blocking_checks_passed()


def automation_sensor(settings: FluxSettings) -> dg.AutomationConditionSensorDefinition:
    """Evaluates every asset's condition each FLUX_AUTOMATION_INTERVAL seconds (in the daemon)."""
    return dg.AutomationConditionSensorDefinition(
        "nightly_automation", target=dg.AssetSelection.all(), minimum_interval_seconds=settings.automation_interval,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Carries new raw pulls down to a new published index (each asset's automation condition).")


def _is_raw(assets_def: dg.AssetsDefinition) -> bool:
    return all(spec.group_name == RAW_GROUP for spec in assets_def.specs)


def with_nightly_policies(assets: Sequence[Any], settings: FluxSettings) -> list[Any]:
    raw_freshness = dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=settings.raw_freshness_hours))
    index_freshness = dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=settings.index_freshness_hours))

    def downstream(spec: dg.AssetSpec) -> dg.AssetSpec:
        updated = spec.replace_attributes(automation_condition=downstream_condition())
        if spec.key.to_user_string() in INDEX_ASSETS:
            updated = updated.replace_attributes(freshness_policy=index_freshness)
        return updated

    result: list[Any] = []
    for item in assets:
        # Plain AssetSpecs (the dbt source tables) and other non-executable assets are never materialized here.
        if not isinstance(item, dg.AssetsDefinition) or not item.is_executable:
            result.append(item)
        elif _is_raw(item):  # scheduled (schedules.py), so no automation condition
            result.append(item.map_asset_specs(lambda spec: spec.replace_attributes(freshness_policy=raw_freshness)))
        else:
            result.append(item.map_asset_specs(downstream))
    return result
