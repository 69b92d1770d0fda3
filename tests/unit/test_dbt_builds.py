"""Which dbt models a run builds (storage/dbt_builds.py), on the project's own manifest: a model is left out only
when its definition, the content of every table beneath it and its relation are as at its last build."""

from __future__ import annotations

import copy
import functools
from typing import Any

from dagster_project.storage.dbt_builds import ModelBuild, definition, source_table, stale_models, upstream_sources

TABLES = (
    "pathways",
    "pathway_members",
    "gene_identifiers",
    "kegg_gene_uniprot",
    "pathway_mappings",
    "eval_runs",
    "release_changes",
    "source_releases",
    "diseases",
    "disease_associations",
)
DIGESTS = {table: f"10:{table}" for table in TABLES}


@functools.cache
def _project() -> tuple[dict[str, Any], list[str]]:
    """The manifest the dbt assets were built from, and its model ids. Read when a test runs, not when the module is
    collected: importing the dbt assets loads dagster-dbt and dbt, which take over a second."""
    from dagster_project.defs.assets.dbt import MANIFEST, MODEL_IDS

    return MANIFEST, sorted(MODEL_IDS.values())


def _manifest() -> dict[str, Any]:
    return _project()[0]


def _models() -> list[str]:
    return _project()[1]


def _name(uid: str) -> str:
    return str(_manifest()["nodes"][uid]["name"])


def _recorded(manifest: Any = None, digests: dict[str, str] = DIGESTS) -> dict[str, ModelBuild]:
    manifest = _manifest() if manifest is None else manifest
    return {
        uid: ModelBuild(
            definition(manifest, uid),
            {source_table(manifest, s): digests[source_table(manifest, s)] for s in upstream_sources(manifest, uid)},
            "run-1",
        )
        for uid in _models()
    }


def _stale(
    digests: dict[str, str] = DIGESTS,
    existing: set[str] | None = None,
    manifest: Any = None,
    recorded: dict[str, ModelBuild] | None = None,
) -> dict[str, str]:
    stale = stale_models(
        _manifest() if manifest is None else manifest,
        _models(),
        digests,
        _recorded() if recorded is None else recorded,
        set(_models()) if existing is None else existing,
    )
    return {_name(uid): reason for uid, reason in stale.items()}


def test_nothing_is_built_when_definitions_sources_and_relations_are_as_recorded() -> None:
    assert _stale() == {}


def test_a_model_never_built_is_built() -> None:
    assert set(_stale(recorded={})) == {_name(uid) for uid in _models()}


def test_a_changed_table_rebuilds_exactly_the_models_reading_it_directly_or_not() -> None:
    stale = _stale({**DIGESTS, "eval_runs": "11:other"})
    assert stale == {"stg_eval_metrics": "source changed: eval_runs", "eval_metric_trends": "source changed: eval_runs"}
    members = _stale({**DIGESTS, "pathway_members": "9:fewer"})
    assert set(members) == {
        "stg_pathway_members",
        "int_pathway_uniprot_sets",
        "int_pathway_pair_overlaps",
        "pathway_equivalences",
    }


def test_a_missing_relation_rebuilds_it_and_everything_downstream() -> None:
    without = {uid for uid in _models() if _name(uid) != "stg_pathways"}
    stale = _stale(existing=without)
    assert stale["stg_pathways"] == "relation missing"
    assert stale["pathway_equivalences"] == "upstream stg_pathways is rebuilt"
    assert "stg_gene_identifiers" not in stale and "eval_metric_trends" not in stale


def test_a_changed_sql_or_test_is_a_changed_definition() -> None:
    edited: dict[str, Any] = copy.deepcopy(_manifest())
    uid = next(u for u in _models() if _name(u) == "eval_metric_trends")
    edited["nodes"][uid]["checksum"]["checksum"] = "0" * 64
    assert _stale(manifest=edited) == {"eval_metric_trends": "definition changed"}
    edited = copy.deepcopy(_manifest())
    test = next(
        t
        for t in edited["nodes"].values()
        if t["resource_type"] == "test" and t.get("test_metadata") and uid in t["depends_on"]["nodes"]
    )
    test["test_metadata"]["kwargs"]["column_name"] = "another_column"
    assert _stale(manifest=edited) == {"eval_metric_trends": "definition changed"}
