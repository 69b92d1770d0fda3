"""The platform tables dbt reads (`postgres/<table>`, group `tables`), as assets between the Python assets that write
them and the dbt models that read them. Materializing one reads the table: its row count and content digest
(storage/digests.py, the digests that also decide which dbt models are current), whether it changed since the
last time and when it last did. The digest is its data version, so a model is "Upstream data" stale only when a
table beneath it changed, and the models need no edges from the writers: a run orders writer → table → model."""

import time
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg

from dagster_project.defs.assets.dbt import MANIFEST, TRANSLATOR, source_writers
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.postgres import platform_tables_required
from dagster_project.storage.digests import table_digests

TABLES_GROUP = "tables"  # the platform tables dbt reads: apart from the models, so the dbt group holds only dbt's


def table_specs(manifest: Mapping[str, Any]) -> list[dg.AssetSpec]:
    """One spec per dbt source table, downstream of the writers its yml names (config.meta.dagster.writers)."""
    specs = []
    for source in manifest["sources"].values():
        writers = source_writers(source)
        description = (
            f"The Postgres table `{source['name']}`, written by "
            f"{', '.join(w.to_user_string() for w in writers)} and read by dbt. {source['description']}"
        )
        specs.append(
            dg.AssetSpec(
                key=TRANSLATOR.get_asset_key(source),
                deps=writers,
                group_name=TABLES_GROUP,
                kinds={"postgres"},
                description=description.strip(),
                skippable=True,
            )
        )
    return sorted(specs, key=lambda spec: spec.key.to_user_string())


def table_metadata(previous: Mapping[str, dg.MetadataValue], digest: str, now: float) -> dict[str, Any]:
    """What a table's materialization records; `previous` is its last materialization's metadata."""
    changed = "digest" not in previous or previous["digest"].value != digest
    last_changed = now if changed or "last_changed" not in previous else float(previous["last_changed"].value)
    return {
        "dagster/row_count": int(digest.split(":", 1)[0]),
        "digest": digest,
        "changed": changed,
        "last_changed": dg.MetadataValue.timestamp(last_changed),
    }


def _previous(instance: dg.DagsterInstance, keys: list[dg.AssetKey]) -> dict[dg.AssetKey, Mapping[str, Any]]:
    """Each table's last materialization metadata, in one read of the event log."""
    events = instance.get_latest_materialization_events(keys)
    return {
        key: event.asset_materialization.metadata if event and event.asset_materialization else {}
        for key, event in events.items()
    }


@dg.multi_asset(specs=table_specs(MANIFEST), can_subset=True, name="platform_tables")
def platform_tables(context: dg.AssetExecutionContext, postgres: PostgresResource) -> Iterator[dg.MaterializeResult]:
    """Read each selected table's row count and digest in one consistent snapshot."""
    names = {key.path[-1]: key for key in context.selected_asset_keys}
    with platform_tables_required():
        digests = table_digests(postgres.get_engine(), names)
    now = time.time()
    previous = _previous(context.instance, list(names.values()))
    for name, digest in sorted(digests.items()):
        key = names[name]
        metadata = table_metadata(previous.get(key, {}), digest, now)
        yield dg.MaterializeResult(asset_key=key, data_version=dg.DataVersion(digest), metadata=metadata)
