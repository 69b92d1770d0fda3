"""Every dbt data test reaches the Dagster UI with a description that says what it checks and its severity (the
asset check's description), built from the manifest the code location loads."""

from __future__ import annotations

import dagster as dg

from dagster_project.core.settings import get_settings
from dagster_project.defs.assets.dbt_tests import describe_dbt_test
from dagster_project.defs.definitions import build_definitions

WARN_ONLY = sorted(
    [
        "accepted_values_release_churn_change_kind__pathway_added__pathway_removed__pathway_renamed__members_changed__"
        "gene_added__gene_removed__gene_renamed__edge_appeared__edge_disappeared__edge_reclassified__association_added__"
        "association_removed",
        "accepted_values_stg_eval_metrics_scorecard__retrieval__answer__resolution__literature_tools",
        "accepted_values_stg_release_changes_source__reactome__kegg__hgnc__resolution",
        "relationships_disease_genes_hgnc_id__hgnc_id__ref_stg_gene_identifiers_",
        "relationships_pathway_equivalences_kegg_id__pathway_id__ref_stg_pathways_",
        "relationships_pathway_equivalences_reactome_id__pathway_id__ref_stg_pathways_",
        "relationships_stg_disease_associations_hgnc_id__hgnc_id__ref_stg_gene_identifiers_",
    ]
)


def _dbt_checks() -> dict[str, dg.AssetCheckSpec]:
    defs = build_definitions(get_settings())
    dbt_assets = next(
        assets
        for assets in defs.assets or []
        if isinstance(assets, dg.AssetsDefinition) and assets.op.name == "flux_dbt_models"
    )
    return {spec.name: spec for spec in dbt_assets.check_specs}


def test_every_dbt_test_says_what_it_checks_and_its_severity() -> None:
    checks = _dbt_checks()
    assert len(checks) >= 80
    severities = {name: (spec.description or "").rsplit("severity ", 1)[-1] for name, spec in checks.items()}
    # Warnings only where a miss is expected between two sources' releases, or a value list grows with the code.
    assert sorted(name for name, severity in severities.items() if severity == "warn)") == WARN_ONLY
    assert set(severities.values()) == {"error)", "warn)"}
    described = {name: spec.description for name, spec in checks.items()}
    assert described["not_null_stg_diseases_name"].startswith("Every row has a `name`.")
    assert described["unique_stg_pathways_pathway_id"].startswith("No two rows share a `pathway_id`.")
    assert described["flux_between_pathway_equivalences_jaccard__1__0"].startswith("`jaccard` is ≥ 0 and ≤ 1.")
    assert (
        "`pathway_id` of `stg_pathways`"
        in described["relationships_stg_pathway_members_pathway_id__pathway_id__ref_stg_pathways_"]
    )
    assert described["assert_sql_and_python_intersections_agree"].startswith("The Python scoring")


def test_a_reason_written_in_the_yml_follows_what_is_checked_and_a_warn_test_says_so() -> None:
    written = {
        "name": "t",
        "description": "Checks the thing.",
        "config": {"severity": "warn"},
        "test_metadata": {"name": "not_null", "kwargs": {}},
        "column_name": "x",
    }
    assert describe_dbt_test(written) == "Every row has a `x`. Checks the thing. (dbt test, severity warn)"
    assert describe_dbt_test({**written, "description": ""}) == "Every row has a `x`. (dbt test, severity warn)"
