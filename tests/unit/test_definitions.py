"""Loading the Definitions: the asset graph is what it should be, and every resource resolves."""

import dagster as dg

from dagster_project.definitions import defs
from dagster_project.resources import export_resource_env
from dagster_project.settings import get_settings

EXPECTED_ASSETS = {"postgres_schema", "neo4j_schema"}
EXPECTED_CHECKS = {
    ("postgres_schema", "migrations_ledger_valid"),
    ("postgres_schema", "vector_index_present"),
    ("neo4j_schema", "graph_constraints_present"),
}


def test_asset_graph_is_the_expected_one() -> None:
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert keys == EXPECTED_ASSETS
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert checks == EXPECTED_CHECKS


def test_every_asset_has_a_group_and_a_description() -> None:
    for spec in defs.resolve_all_asset_specs():
        assert spec.group_name and spec.group_name != "default", spec.key
        assert spec.description and len(spec.description) > 20, spec.key


def test_every_resource_resolves_from_the_environment() -> None:
    export_resource_env(get_settings())
    resources = defs.resources or {}
    assert set(resources) == {"postgres", "neo4j", "redis", "embedder", "ray", "mlflow"}
    for name, resource in resources.items():
        assert isinstance(resource, dg.ConfigurableResource), name
        resolved = resource.process_config_and_initialize()
        assert resolved is not None, name
    assert resources["postgres"].process_config_and_initialize().database_url.startswith("postgresql+psycopg://")
