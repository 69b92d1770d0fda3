"""Stage 8 — the dbt project (dbt/) as Dagster assets: staging views, intermediate models, marts. dbt's data
and unit tests run as asset checks. `dbt build` works on its own too (see docs/operations.md).

The assets are built from the manifest `make setup` writes (`dbt parse`); importing this module never starts dbt.
Which Dagster assets write each table dbt reads is declared in dbt/models/staging/_sources.yml
(`config.meta.dagster.writers`), not here.
"""

import json
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtProject, dbt_assets
from dagster_dbt.errors import DagsterDbtManifestNotFoundError

# The module, not its attributes: a test can point DBT_PROJECT at another folder before importing this one.
from dagster_project.defs.resources import dbt as dbt_project_config

Manifest = Mapping[str, Any]


def load_manifest(project: DbtProject) -> dict[str, Any]:
    """The manifest from `make setup`. Parsing here instead would start dbt in a subprocess on every import
    (each code-server start and each run worker), so a missing manifest is an error that says how to make it."""
    if not project.manifest_path.exists():
        raise DagsterDbtManifestNotFoundError(
            f"dbt manifest not found at {project.manifest_path}: dbt is prepared at setup, not at import. "
            f"Run `make setup` (or only its dbt step: {dbt_project_config.dbt_parse_command(project)}).")
    return json.loads(project.manifest_path.read_text(encoding="utf-8"))


def source_writers(source: Mapping[str, Any]) -> list[dg.AssetKey]:
    """The Dagster assets that write a dbt source table, as its yml's `config.meta.dagster.writers` lists them."""
    meta = source.get("config", {}).get("meta") or source.get("meta") or {}
    writers = meta.get("dagster", {}).get("writers")
    if not writers:
        # Without writers nothing orders dbt after whatever fills the table, so a run could read it half-written.
        raise dg.DagsterInvalidDefinitionError(
            f"dbt source {source['unique_id']} ({source['original_file_path']}) has no config.meta.dagster.writers:"
            " list the Dagster assets that write the table.")
    return [dg.AssetKey.from_user_string(writer) for writer in writers]


def upstream_sources(manifest: Manifest, unique_id: str) -> set[str]:
    """Every source a dbt node reads, directly or through the models it selects from."""
    found: set[str] = set()
    seen: set[str] = set()
    pending = [unique_id]
    while pending:
        node = manifest["nodes"].get(pending.pop(), {})
        for parent in node.get("depends_on", {}).get("nodes", []):
            if parent.startswith("source."):
                found.add(parent)
            elif parent not in seen:
                seen.add(parent)
                pending.append(parent)
    return found


def model_writer_deps(manifest: Manifest, unique_id: str) -> list[dg.AssetKey]:
    """The writers of every table a model reads, directly or not (sorted, so the spec is stable)."""
    sources = [manifest["sources"][source] for source in upstream_sources(manifest, unique_id)]
    writers = {writer for source in sources for writer in source_writers(source)}
    return sorted(writers, key=dg.AssetKey.to_user_string)


class FluxDbtTranslator(DagsterDbtTranslator):
    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            # A source is a platform table, named as such (postgres/<table>) rather than after the dbt source.
            return dg.AssetKey(["postgres", dbt_resource_props["name"]])
        return super().get_asset_key(dbt_resource_props)

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        return "dbt"

    def get_asset_spec(self, manifest: Mapping[str, Any], unique_id: str,
                       project: DbtProject | None) -> dg.AssetSpec:
        spec = super().get_asset_spec(manifest, unique_id, project)
        if not unique_id.startswith("model."):
            return spec
        # The source tables are specs, not executable assets, so they order nothing: a model waits for the tables'
        # writers only through a direct dep. Transitive, because a run that selects only a mart (say
        # eval_metric_trends) must still wait for what wrote the tables beneath the models it selects from.
        return spec.merge_attributes(deps=model_writer_deps(manifest, unique_id))


def source_table_specs(manifest: Manifest, translator: DagsterDbtTranslator) -> list[dg.AssetSpec]:
    """Each table dbt reads as an asset of its own (observable, not executable) downstream of its writers, so the
    lineage from the writing assets through the tables to the dbt models stays exact."""
    specs = []
    for source in manifest["sources"].values():
        writers = source_writers(source)
        description = (f"The Postgres table `{source['name']}`, written by "
                       f"{', '.join(w.to_user_string() for w in writers)} and read by dbt. {source['description']}")
        specs.append(dg.AssetSpec(key=translator.get_asset_key(source), deps=writers, group_name="dbt",
                                  kinds={"postgres"}, description=description.strip()))
    return specs


TRANSLATOR = FluxDbtTranslator()
MANIFEST = load_manifest(dbt_project_config.DBT_PROJECT)
SOURCE_TABLE_SPECS = source_table_specs(MANIFEST, TRANSLATOR)


@dbt_assets(manifest=MANIFEST, project=dbt_project_config.DBT_PROJECT, dagster_dbt_translator=TRANSLATOR)
def flux_dbt_models(context: dg.AssetExecutionContext, dbt: dbt_project_config.FluxDbtResource) -> Iterator[Any]:
    """dbt build: models, then their data and unit tests (reported as asset checks)."""
    yield from dbt.cli(["build"], context=context).stream()
