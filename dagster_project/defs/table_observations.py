"""The platform tables dbt reads (`postgres/*`, group `tables`) observed each time dbt reads them: their row count
and content digest (storage/digests.py, the same digests that decide which models are current), whether they changed
since the last observation and when they last did. Observations carry no data version, so they inform the UI
(Row count, the Events tab) and start nothing: the models already follow the tables' writers."""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

TABLE_PREFIX = "postgres"


def table_key(table: str) -> dg.AssetKey:
    return dg.AssetKey([TABLE_PREFIX, table])


def _previous(instance: dg.DagsterInstance, key: dg.AssetKey) -> Mapping[str, dg.MetadataValue]:
    records = instance.fetch_observations(key, limit=1).records
    observation = records[0].asset_observation if records else None
    return observation.metadata if observation is not None else {}


def table_observations(instance: dg.DagsterInstance, digests: Mapping[str, str],
                       now: float) -> list[dg.AssetObservation]:
    """One observation per table: `digests` maps a table to its digest (`<row count>:<hash>`)."""
    observed = []
    for table, digest in sorted(digests.items()):
        key = table_key(table)
        previous = _previous(instance, key)
        changed = "digest" not in previous or previous["digest"].value != digest
        last_changed = now if changed or "last_changed" not in previous else float(previous["last_changed"].value)
        observed.append(dg.AssetObservation(asset_key=key, metadata={
            "dagster/row_count": int(digest.split(":", 1)[0]),
            "digest": digest,
            "changed": changed,
            "last_changed": dg.MetadataValue.timestamp(last_changed),
        }))
    return observed
