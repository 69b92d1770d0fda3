"""The dbt wiring: dbt is prepared by `make setup` (never at import), the tables dbt reads name their writers in
_sources.yml, and every model runs after the writers of the tables beneath it, through the tables' own assets.

The dbt assets and resource are imported by the tests that use them, not with this module: dagster-dbt and dbt take
over a second to load, which collecting the unit tests need not pay."""

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

from dagster_project.core.settings import REPO_ROOT, FluxSettings

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
    return {
        table["name"]: set(table["config"]["meta"]["dagster"]["writers"])
        for source in sources["sources"]
        for table in source["tables"]
    }


def _model_id(name: str) -> str:
    from dagster_project.defs.assets.dbt import MANIFEST

    return next(
        uid for uid, node in MANIFEST["nodes"].items() if node["resource_type"] == "model" and node["name"] == name
    )


def _graph() -> Any:
    from dagster_project.defs.definitions import build_definitions

    return build_definitions(FluxSettings()).resolve_asset_graph()


def _tables() -> set[dg.AssetKey]:
    from dagster_project.defs.assets.dbt import MANIFEST
    from dagster_project.defs.assets.tables import table_specs

    return {spec.key for spec in table_specs(MANIFEST)}


def _writers_beneath(graph: Any, key: dg.AssetKey, dbt_keys: set[dg.AssetKey]) -> set[str]:
    """The Python assets a model waits for in a run: the parents of the tables beneath it, through models."""
    found: set[str] = set()
    for parent in graph.get(key).parent_keys:
        if parent in dbt_keys:
            found |= _writers_beneath(graph, parent, dbt_keys)
        else:
            found.add(parent.to_user_string())
    return found


def test_models_read_only_tables_and_models_and_wait_for_the_writers_beneath_them() -> None:
    from dagster_project.defs.assets.dbt import flux_dbt_models

    graph = _graph()
    tables = _tables()
    dbt_keys = set(flux_dbt_models.keys) | tables
    for key in flux_dbt_models.keys:
        node = graph.get(key)
        assert node.parent_keys <= dbt_keys, f"{key.to_user_string()}: a writer → model shortcut"
        assert _writers_beneath(graph, key, dbt_keys) == EXPECTED_WRITERS[key.to_user_string()], key
    # Every step of the way is executable, so a run orders writer → table → model.
    assert all(graph.get(table).is_executable for table in tables)


def test_source_table_writers_are_the_ones_the_yml_lists() -> None:
    from dagster_project.defs.assets.dbt import MANIFEST
    from dagster_project.defs.assets.tables import table_specs

    specs = {
        spec.key.to_user_string(): {dep.asset_key.to_user_string() for dep in spec.deps}
        for spec in table_specs(MANIFEST)
    }
    assert specs == {f"postgres/{table}": writers for table, writers in _yml_writers().items()}
    assert specs["postgres/eval_runs"] == SCORECARDS


def test_writers_are_read_from_the_manifest_meta() -> None:
    from dagster_project.defs.assets.dbt import MANIFEST
    from dagster_project.defs.assets.tables import table_specs

    manifest: dict[str, Any] = copy.deepcopy(MANIFEST)
    eval_runs = next(s for s in manifest["sources"].values() if s["name"] == "eval_runs")
    eval_runs["config"]["meta"]["dagster"]["writers"] = ["some/other_asset"]
    (spec,) = [spec for spec in table_specs(manifest) if spec.key == dg.AssetKey(["postgres", "eval_runs"])]
    assert [dep.asset_key for dep in spec.deps] == [dg.AssetKey(["some", "other_asset"])]
    del eval_runs["config"]["meta"]["dagster"]["writers"]
    eval_runs["meta"] = {}
    with pytest.raises(dg.DagsterInvalidDefinitionError, match=r"eval_runs.*config\.meta\.dagster\.writers"):
        table_specs(manifest)


def test_a_table_records_its_rows_and_when_it_last_changed() -> None:
    from dagster_project.defs.assets.tables import table_metadata

    first = table_metadata({}, "42:aaaa", now=1000.0)
    assert {k: getattr(v, "value", v) for k, v in first.items()} == {
        "dagster/row_count": 42,
        "digest": "42:aaaa",
        "changed": True,
        "last_changed": 1000.0,
    }
    previous = {k: v if isinstance(v, dg.MetadataValue) else dg.MetadataValue.text(str(v)) for k, v in first.items()}
    same = table_metadata(previous, "42:aaaa", now=2000.0)
    assert (same["changed"], same["last_changed"].value) == (False, 1000.0)
    edited = table_metadata(previous, "42:bbbb", now=3000.0)  # a row edited: same count, another digest
    assert (edited["changed"], edited["last_changed"].value, edited["dagster/row_count"]) == (True, 3000.0, 42)


def _forbid_subprocesses(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a subprocess was started at import: {args}")

    monkeypatch.setattr(subprocess, "Popen", refuse)


def _import_dbt_assets_afresh(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The dbt assets module imported again; the test has imported it once as usual before (so there is a module to
    put back), and monkeypatch puts that one back afterwards, so the rest of the session keeps its assets."""
    import dagster_project.defs.assets.dbt

    monkeypatch.delitem(sys.modules, "dagster_project.defs.assets.dbt")
    monkeypatch.setattr(dagster_project.defs.assets, "dbt", dagster_project.defs.assets.dbt)
    return importlib.import_module("dagster_project.defs.assets.dbt")


def test_importing_the_dbt_assets_starts_no_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    import dagster_project.defs.assets.dbt  # noqa: F401  (the module to put back)

    _forbid_subprocesses(monkeypatch)
    module = _import_dbt_assets_afresh(monkeypatch)
    assert dg.AssetKey("eval_metric_trends") in module.flux_dbt_models.keys


def test_a_missing_manifest_says_to_run_make_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from dagster_dbt import DbtProject
    from dagster_dbt.errors import DagsterDbtManifestNotFoundError

    import dagster_project.defs.assets.dbt  # noqa: F401  (the module to put back)
    from dagster_project.defs.resources import dbt as dbt_project_config

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
    result = subprocess.run(
        ["make", "-n", "-W", "dbt/models/staging/_sources.yml", "setup"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "dbt parse --quiet --project-dir dbt --profiles-dir dbt" in result.stdout


def test_dbt_runs_the_project_the_assets_were_built_from_with_a_profile_from_the_settings(tmp_path: Path) -> None:
    from dagster_project.defs.resources import dbt as dbt_project_config

    settings = FluxSettings(home=tmp_path, database_url="postgresql+psycopg://flux_u:s3cret@db.example:6543/flux_t")
    folder = dbt_project_config.render_profiles_dir(settings)
    profile = yaml.safe_load((folder / "profiles.yml").read_text())["flux"]["outputs"]["dev"]
    assert {k: profile[k] for k in ("host", "port", "user", "password", "dbname", "schema")} == {
        "host": "db.example",
        "port": 6543,
        "user": "flux_u",
        "password": "s3cret",
        "dbname": "flux_t",
        "schema": "analytics",
    }
    assert (folder / "profiles.yml").stat().st_mode & 0o777 == 0o600  # it holds the password
    assert not any(key.startswith("FLUX_DBT_") for key in os.environ), "nothing is exported"
    resource = dbt_project_config.FluxDbtResource(settings=settings)
    assert resource.settings is settings
    assert dbt_project_config.DBT_PROJECT.project_dir == REPO_ROOT / "dbt"
    assert Path(dbt_project_config.DBT_EXECUTABLE).parent == Path(sys.executable).parent
