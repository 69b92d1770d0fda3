"""Stage 8 — the dbt project (dbt/) as Dagster assets: staging views, intermediate models, marts. dbt's data
and unit tests run as asset checks. `dbt build` works on its own too (see README)."""

import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets

from dagster_project.settings import REPO_ROOT

DBT_DIR = REPO_ROOT / "dbt"
# The dbt next to this interpreter: tests and `make` may run .venv/bin/python without .venv/bin on PATH.
DBT_EXECUTABLE = str(Path(sys.executable).parent / "dbt")
DBT_PROJECT = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)
if not DBT_PROJECT.manifest_path.exists():
    # A fresh clone has no manifest yet: `dbt parse` writes it (no database connection needed).
    subprocess.run([DBT_EXECUTABLE, "parse", "--quiet", "--project-dir", str(DBT_DIR), "--profiles-dir",
                    str(DBT_DIR)], check=True, cwd=DBT_DIR, timeout=300)

# The Postgres tables dbt reads, and the Dagster assets that write them. Each table is an (observable, not
# executable) asset of its own, so the lineage from source assets through dbt models stays exact.
SOURCE_TABLES = {
    "pathways": ["reactome_documents", "kegg_documents"],
    "pathway_members": ["reactome_documents", "kegg_documents"],
    "gene_identifiers": ["hgnc_documents"],
    "kegg_gene_uniprot": ["kegg_documents"],
    "pathway_mappings": ["pathway_resolution"],
    "eval_runs": ["retrieval_scorecard", "answer_scorecard", "resolution_scorecard"],
}
SOURCE_TABLE_SPECS = [
    dg.AssetSpec(key=["postgres", table], deps=writers, group_name="dbt", kinds={"postgres"},
                 description=f"The Postgres table `{table}`, written by {', '.join(writers)} and read by dbt.")
    for table, writers in SOURCE_TABLES.items()
]


class FluxDbtTranslator(DagsterDbtTranslator):
    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            return dg.AssetKey(["postgres", dbt_resource_props["name"]])
        return super().get_asset_key(dbt_resource_props)

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        return "dbt"

    def get_asset_spec(self, manifest: Mapping[str, Any], unique_id: str,
                       project: DbtProject | None) -> dg.AssetSpec:
        spec = super().get_asset_spec(manifest, unique_id, project)
        if unique_id.startswith("model."):
            # The source tables above are not executable, so the run order needs a direct edge: the resolution
            # is the last writer of anything dbt reads.
            spec = spec.merge_attributes(deps=["pathway_resolution"])
        return spec


@dbt_assets(manifest=DBT_PROJECT.manifest_path, project=DBT_PROJECT, dagster_dbt_translator=FluxDbtTranslator())
def flux_dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource) -> Iterator[Any]:
    """dbt build: models, then their data and unit tests (reported as asset checks)."""
    yield from dbt.cli(["build"], context=context).stream()
