"""Stage 9 — the dbt project (dbt/) as Dagster assets: staging views, intermediate models, marts. dbt's data
and unit tests run as asset checks. `dbt build` works on its own too (see docs/operations.md).

The assets are built from the manifest `make setup` writes (`dbt parse`); importing this module never starts dbt.
Which Dagster assets write each table dbt reads is declared in dbt/models/staging/_sources.yml
(`config.meta.dagster.writers`); the tables are assets of their own between those writers and the models (tables.py).
"""

import json
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtProject, dbt_assets
from dagster_dbt.errors import DagsterDbtManifestNotFoundError

from dagster_project.defs.assets.dbt_tests import describe_dbt_test
from dagster_project.defs.resources import PostgresResource

# The module, not its attributes: a test can point DBT_PROJECT at another folder before importing this one.
from dagster_project.defs.resources import dbt as dbt_project_config
from dagster_project.defs.resources.postgres import platform_tables_required
from dagster_project.storage import dbt_builds
from dagster_project.storage.dbt_builds import upstream_sources
from dagster_project.storage.digests import table_digests

Manifest = Mapping[str, Any]


def load_manifest(project: DbtProject) -> dict[str, Any]:
    """The manifest from `make setup`. Parsing here instead would start dbt in a subprocess on every import
    (each code-server start and each run worker), so a missing manifest is an error that says how to make it."""
    if not project.manifest_path.exists():
        raise DagsterDbtManifestNotFoundError(
            f"dbt manifest not found at {project.manifest_path}: dbt is prepared at setup, not at import. "
            f"Run `make setup` (or only its dbt step: {dbt_project_config.dbt_parse_command(project)})."
        )
    return json.loads(project.manifest_path.read_text(encoding="utf-8"))


def source_writers(source: Mapping[str, Any]) -> list[dg.AssetKey]:
    """The Dagster assets that write a dbt source table, as its yml's `config.meta.dagster.writers` lists them."""
    meta = source.get("config", {}).get("meta") or source.get("meta") or {}
    writers = meta.get("dagster", {}).get("writers")
    if not writers:
        # Without writers nothing orders dbt after whatever fills the table, so a run could read it half-written.
        raise dg.DagsterInvalidDefinitionError(
            f"dbt source {source['unique_id']} ({source['original_file_path']}) has no config.meta.dagster.writers:"
            " list the Dagster assets that write the table."
        )
    return [dg.AssetKey.from_user_string(writer) for writer in writers]


class FluxDbtTranslator(DagsterDbtTranslator):
    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            # A source is a platform table, named as such (postgres/<table>) rather than after the dbt source.
            return dg.AssetKey(["postgres", dbt_resource_props["name"]])
        return super().get_asset_key(dbt_resource_props)

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        return "dbt"

    def get_asset_check_spec(
        self, asset_spec: dg.AssetSpec, manifest: Mapping[str, Any], unique_id: str, project: DbtProject | None
    ) -> dg.AssetCheckSpec | None:
        spec = super().get_asset_check_spec(asset_spec, manifest, unique_id, project)
        if spec is None:
            return None
        return dg.AssetCheckSpec(
            spec.name,
            asset=spec.asset_key,
            additional_deps=spec.additional_deps,
            blocking=spec.blocking,
            metadata=spec.metadata,
            description=describe_dbt_test(manifest["nodes"][unique_id]),
        )


TRANSLATOR = FluxDbtTranslator()
MANIFEST = load_manifest(dbt_project_config.DBT_PROJECT)


MODEL_IDS = {
    TRANSLATOR.get_asset_key(node): uid for uid, node in MANIFEST["nodes"].items() if node["resource_type"] == "model"
}


class DbtBuildConfig(dg.Config):
    """`full: true` builds every selected model, current or not (the Launchpad's run config)."""

    full: bool = False


@dbt_assets(manifest=MANIFEST, project=dbt_project_config.DBT_PROJECT, dagster_dbt_translator=TRANSLATOR)
def flux_dbt_models(
    context: dg.AssetExecutionContext,
    dbt: dbt_project_config.FluxDbtResource,
    postgres: PostgresResource,
    config: DbtBuildConfig,
) -> Iterator[Any]:
    """dbt build of the selected models that are not current (storage/dbt_builds.py), then their data and unit
    tests (reported as asset checks). A current model is left out and observed as such; with nothing stale dbt
    is not started."""
    engine = postgres.get_engine()
    selected = sorted(MODEL_IDS[key] for key in context.selected_asset_keys if key in MODEL_IDS)
    tables = {dbt_builds.source_table(MANIFEST, s) for uid in selected for s in upstream_sources(MANIFEST, uid)}
    with platform_tables_required():
        digests = table_digests(engine, tables)
        recorded = dbt_builds.recorded_builds(engine)
    stale = (
        dict.fromkeys(selected, "full build")
        if config.full
        else dbt_builds.stale_models(
            MANIFEST, selected, digests, recorded, dbt_builds.existing_relations(engine, MANIFEST, selected)
        )
    )
    current = [uid for uid in selected if uid not in stale]
    for uid in current:
        since = recorded[uid].dagster_run_id or "-"
        yield dg.AssetObservation(
            asset_key=TRANSLATOR.get_asset_key(MANIFEST["nodes"][uid]),
            metadata={"unchanged": True, "built_by_run": since, "source_digests": recorded[uid].source_digests},
        )
    for uid, reason in stale.items():
        context.log.info(f"dbt: {MANIFEST['nodes'][uid]['name']} to build ({reason})")
    context.log.info(
        f"dbt: {len(stale)} of {len(selected)} models to build; {len(current)} current "
        "(same definition, same source contents)"
    )
    if not stale:
        return
    excluded = ["--exclude", " ".join(MANIFEST["nodes"][uid]["name"] for uid in current)] if current else []
    invocation = dbt.cli(["build", *excluded], context=context)
    # Each built model's materialization carries its row count, its columns with their database types, and the
    # columns each one is computed from (parsed from the compiled SQL): the UI's Columns tab and column lineage.
    yield from invocation.stream().fetch_row_counts().fetch_column_metadata(with_column_lineage=True)
    dbt_builds.record_builds(engine, MANIFEST, stale, digests, context.run_id)
    dbt.keep_parse_state(invocation)
