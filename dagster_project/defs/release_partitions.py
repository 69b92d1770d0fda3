"""The release history's partitions: one dynamic partitions definition per kept source, a partition per distinct
release the raw zone holds. The `<source>_release` assets keep them in step with the raw zone; automation
materializes each new one once (automation.py), and a past one can be backfilled from the UI or with
`flux materialize --partition`."""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from dagster_project.releases.history import raw_releases


def release_partitions(source: str) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=f"{source}_releases")


def history_asset_key(source: str) -> dg.AssetKey:
    return dg.AssetKey(f"{source}_release_history")


@dataclass(frozen=True)
class PartitionSync:
    added: list[str]
    removed: list[str]


def sync_release_partitions(instance: dg.DagsterInstance, source: str, raw_root: str) -> PartitionSync:
    """Add a partition for each release of `source` in the raw zone that has none; remove those that name a
    release the raw zone does not hold and were never materialized (left by a run against another raw root, or
    whose files were removed before they were recorded). A materialized partition stays whatever happens to its
    files: it is the record of that release. Idempotent: a key that exists is not added again."""
    name = release_partitions(source).name
    assert name is not None
    known = list(instance.get_dynamic_partitions(name))
    held = [release.partition for release in raw_releases(source, raw_root)]
    added = [key for key in held if key not in known]
    if added:
        instance.add_dynamic_partitions(name, added)
    recorded = instance.get_materialized_partitions(history_asset_key(source))
    removed = [key for key in known if key not in held and key not in recorded]
    for key in removed:
        instance.delete_dynamic_partition(name, key)
    return PartitionSync(added, removed)
