"""The dbt wiring: dbt is prepared by `make setup` (never at import), the tables dbt reads name their writers in
_sources.yml, and every model runs after the writers of the tables beneath it."""

import copy
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from dagster_dbt import DbtProject
from dagster_dbt.errors import DagsterDbtManifestNotFoundError

import dagster_project.defs.assets
from dagster_project.core.settings import REPO_ROOT, FluxSettings
from dagster_project.defs.assets.dbt import MANIFEST, SOURCE_TABLE_SPECS, flux_dbt_models, model_writer_deps
from dagster_project.defs.resources import dbt as dbt_project_config

SCORECARDS = {"retrieval_scorecard", "answer_scorecard", "resolution_scorecard", "literature_tools_scorecard"}
DOCUMENTS = {"reactome_documents", "kegg_documents", "hgnc_documents"}
# The non-dbt parents of each model: the writers of every table it reads, directly or through other models.
RELEASES = {"hgnc_release", "reactome_release", "kegg_release", "clinvar_release", "resolution_release"}
EXPECTED_WRITERS = {
    "stg_pathways": {"reactome_documents", "kegg_documents"},
    "stg_pathway_members": {"reactome_documents", "kegg_documents"},
    "stg_gene_identifiers": {"hgnc_documents"},
    "stg_pathway_mappings": {"pathway_resolution"},
    "stg_eval_metrics": SCORECARDS,
    "int_pathway_uniprot_sets": DOCUMENTS,
    "int_pathway_pair_overlaps": DOCUMENTS,
    "pathway_equivalences": DOCUMENTS | {"pathway_resolution"},
    "eval_metric_trends": SCORECARDS,
    "stg_release_changes": RELEASES,
    "release_churn": RELEASES | {"hgnc_documents", "reactome_documents", "kegg_documents", "clinvar_documents"},
    "stg_diseases": {"clinvar_documents"},
    "stg_disease_associations": {"clinvar_documents"},
    "disease_genes": {"clinvar_documents", "hgnc_documents"},
}


def _yml_writers() -> dict[str, set[str]]:
    sources = yaml.safe_load((REPO_ROOT / "dbt" / "models" / "staging" / "_sources.yml").read_text())
    return {table["name"]: set(table["config"]["meta"]["dagster"]["writers"])
            for source in sources["sources"] for table in source["tables"]}


def _model_id(name: str) -> str:
    return next(uid for uid, node in MANIFEST["nodes"].items() if node["resource_type"] == "model"
                and node["name"] == name)


def test_eval_metric_trends_runs_after_every_scorecard() -> None:
    # A direct edge: the path through postgres/eval_runs, a non-executable spec, orders nothing in a run.
    spec = flux_dbt_models.specs_by_key[dg.AssetKey("eval_metric_trends")]
    assert {dep.asset_key.to_user_string() for dep in spec.deps} >= SCORECARDS


def test_each_model_depends_on_exactly_the_writers_of_the_tables_it_reads() -> None:
    dbt_keys = set(flux_dbt_models.keys) | {spec.key for spec in SOURCE_TABLE_SPECS}
    for key, spec in flux_dbt_models.specs_by_key.items():
        writers = {dep.asset_key.to_user_string() for dep in spec.deps if dep.asset_key not in dbt_keys}
        assert writers == EXPECTED_WRITERS[key.to_user_string()], key  # no blanket pathway_resolution dep


def test_source_table_writers_are_the_ones_the_yml_lists() -> None:
    specs = {spec.key.to_user_string(): {dep.asset_key.to_user_string() for dep in spec.deps}
             for spec in SOURCE_TABLE_SPECS}
    assert specs == {f"postgres/{table}": writers for table, writers in _yml_writers().items()}
    assert specs["postgres/eval_runs"] == SCORECARDS


def test_writers_are_read_from_the_manifest_meta() -> None:
    manifest: dict[str, Any] = copy.deepcopy(MANIFEST)
    eval_runs = next(s for s in manifest["sources"].values() if s["name"] == "eval_runs")
    eval_runs["config"]["meta"]["dagster"]["writers"] = ["some/other_asset"]
    assert model_writer_deps(manifest, _model_id("eval_metric_trends")) == [dg.AssetKey(["some", "other_asset"])]
    del eval_runs["config"]["meta"]["dagster"]["writers"]
    eval_runs["meta"] = {}
    with pytest.raises(dg.DagsterInvalidDefinitionError, match=r"eval_runs.*config\.meta\.dagster\.writers"):
        model_writer_deps(manifest, _model_id("stg_eval_metrics"))


def _forbid_subprocesses(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a subprocess was started at import: {args}")

    monkeypatch.setattr(subprocess, "Popen", refuse)


def _import_dbt_assets_afresh(monkeypatch: pytest.MonkeyPatch) -> Any:
    # monkeypatch puts the already imported module back afterwards, so the rest of the session keeps its assets.
    monkeypatch.delitem(sys.modules, "dagster_project.defs.assets.dbt")
    monkeypatch.setattr(dagster_project.defs.assets, "dbt", dagster_project.defs.assets.dbt)
    return importlib.import_module("dagster_project.defs.assets.dbt")


def test_importing_the_dbt_assets_starts_no_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    _forbid_subprocesses(monkeypatch)
    module = _import_dbt_assets_afresh(monkeypatch)
    assert dg.AssetKey("eval_metric_trends") in module.flux_dbt_models.keys


def test_a_missing_manifest_says_to_run_make_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    shutil.copy(REPO_ROOT / "dbt" / "dbt_project.yml", tmp_path)  # a project that was never parsed
    monkeypatch.setattr(dbt_project_config, "DBT_PROJECT", DbtProject(project_dir=tmp_path))
    _forbid_subprocesses(monkeypatch)
    with pytest.raises(DagsterDbtManifestNotFoundError) as error:
        _import_dbt_assets_afresh(monkeypatch)
    message = str(error.value)
    assert str(tmp_path / "target" / "manifest.json") in message
    assert "make setup" in message and f"dbt parse --project-dir {tmp_path}" in message


def test_make_setup_writes_the_manifest_when_dbt_files_change() -> None:
    # -n: print, do not run; -W: treat a dbt file as just edited, so the manifest is out of date.
    result = subprocess.run(["make", "-n", "-W", "dbt/models/staging/_sources.yml", "setup"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True, timeout=60)
    assert "dbt parse --quiet --project-dir dbt --profiles-dir dbt" in result.stdout


def test_dbt_runs_the_project_the_assets_were_built_from_with_a_profile_from_the_settings(tmp_path: Path) -> None:
    settings = FluxSettings(home=tmp_path, database_url="postgresql+psycopg://flux_u:s3cret@db.example:6543/flux_t")
    folder = dbt_project_config.render_profiles_dir(settings)
    profile = yaml.safe_load((folder / "profiles.yml").read_text())["flux"]["outputs"]["dev"]
    assert {k: profile[k] for k in ("host", "port", "user", "password", "dbname", "schema")} == {
        "host": "db.example", "port": 6543, "user": "flux_u", "password": "s3cret", "dbname": "flux_t",
        "schema": "analytics"}
    assert (folder / "profiles.yml").stat().st_mode & 0o777 == 0o600  # it holds the password
    assert not any(key.startswith("FLUX_DBT_") for key in os.environ), "nothing is exported"
    resource = dbt_project_config.FluxDbtResource(settings=settings)
    assert resource.settings is settings
    assert dbt_project_config.DBT_PROJECT.project_dir == REPO_ROOT / "dbt"
    assert Path(dbt_project_config.DBT_EXECUTABLE).parent == Path(sys.executable).parent
