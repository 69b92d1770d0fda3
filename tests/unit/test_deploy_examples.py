"""deploy/k8s: the Dagster instance example passes Dagster's own validation (the instance schema and each
configured class's config schema), and its pool is the one the Ray-heavy assets declare. No cluster needed."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from dagster._config import validate_config
from dagster._core.instance.config import dagster_instance_config, dagster_instance_config_schema
from dagster._core.instance.ref import configurable_class_data

from dagster_project.core.settings import REPO_ROOT, FluxSettings
from dagster_project.defs.assets.chunks import RAY_POOL
from dagster_project.defs.definitions import build_definitions

DEPLOY = REPO_ROOT / "deploy" / "k8s"
CLASS_SECTIONS = ("run_launcher", "run_coordinator", "compute_logs")


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def test_the_instance_example_is_valid_dagster_instance_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DAGSTER_PG_HOST", "DAGSTER_PG_DB", "DAGSTER_PG_USER", "DAGSTER_PG_PASSWORD"):
        monkeypatch.setenv(name, f"from-{name.lower()}")
    # What DagsterInstance.from_config runs: the schema, env resolution, cross-section rules (concurrency vs run
    # coordinator), legacy module names.
    config, _ = dagster_instance_config(str(DEPLOY))
    assert config["storage"]["postgres"]["postgres_db"]["hostname"] == {"env": "DAGSTER_PG_HOST"}  # no secrets
    for section in CLASS_SECTIONS:
        entry = configurable_class_data(config[section])  # as the instance reads it ("dagster.core" → "_core")
        klass = getattr(importlib.import_module(entry.module_name), entry.class_name)
        checked = validate_config(klass.config_type(), entry.config_dict or {})
        assert checked.success, (section, [e.message for e in checked.errors])


def test_a_broken_example_fails_the_same_validation() -> None:
    """The check above can fail: a misspelled launcher option is caught."""
    entry = _load(DEPLOY / "dagster.yaml")["run_launcher"]
    klass = getattr(importlib.import_module(configurable_class_data(entry).module_name), entry["class"])
    assert not validate_config(klass.config_type(), {**entry["config"], "job_namespac": "flux"}).success
    assert not validate_config(dagster_instance_config_schema(), {"concurrency": {"pools": {"limit": 1}}}).success


def test_the_ray_heavy_assets_share_the_pool_the_example_limits() -> None:
    graph = build_definitions(FluxSettings()).resolve_asset_graph()
    pools = {key.to_user_string(): graph.get(key).pools for key in graph.get_all_asset_keys()}
    assert {name for name, used in pools.items() if used and RAY_POOL in used} == {"chunks", "chunk_embeddings"}
    assert _load(DEPLOY / "dagster.yaml")["concurrency"]["pools"]["default_limit"] >= 1


@pytest.mark.parametrize("name", ["values.yaml"])
def test_the_helm_values_name_the_same_launcher_secret_and_code_location(name: str) -> None:
    values, instance = _load(DEPLOY / name), _load(DEPLOY / "dagster.yaml")
    deployment = values["dagster-user-deployments"]["deployments"][0]
    assert deployment["dagsterApiGrpcArgs"] == ["--module-name", "dagster_project.defs.definitions"]
    assert values["runLauncher"]["type"] == instance["run_launcher"]["class"]
    secrets = {s["name"] for s in values["runLauncher"]["config"]["k8sRunLauncher"]["envSecrets"]}
    assert secrets == set(instance["run_launcher"]["config"]["env_secrets"])
