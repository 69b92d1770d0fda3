"""Nightly policies applied to the whole asset list: eager automation for everything after the raw pulls
(blocked while an upstream blocking check fails) and freshness policies on the raw and index assets."""

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import dagster as dg

from dagster_project.schedules import RAW_GROUP
from dagster_project.settings import FluxSettings

INDEX_ASSETS = frozenset({"chunks", "chunk_embeddings", "chunk_vector_index", "chunk_bm25_index", "candidate_index",
                          "published_index"})


def downstream_condition() -> dg.AutomationCondition:
    # eager(): run when an upstream asset updated (and none is missing or in progress); the second part keeps a
    # bad upstream (a failed blocking check) from flowing on — serving then stays on the previous index.
    return dg.AutomationCondition.eager() & dg.AutomationCondition.all_deps_blocking_checks_passed()


def with_nightly_policies(assets: Sequence[Any], settings: FluxSettings) -> list[Any]:
    raw = dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=settings.raw_freshness_hours))
    index = dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=settings.index_freshness_hours))

    def apply(spec: dg.AssetSpec) -> dg.AssetSpec:
        if spec.key.path[0] == "postgres":  # source tables for dbt: observed, never materialized
            return spec
        if spec.group_name == RAW_GROUP:
            return spec.replace_attributes(freshness_policy=raw)
        updated = spec.replace_attributes(automation_condition=downstream_condition())
        if spec.key.to_user_string() in INDEX_ASSETS:
            updated = updated.replace_attributes(freshness_policy=index)
        return updated

    return [dg.map_asset_specs(apply, [a])[0] if isinstance(a, dg.AssetsDefinition | dg.AssetSpec) else a
            for a in assets]
