"""Dagster resources, one file per service, each a ConfigurableResource reading EnvVars.

`resource_env` gives every variable the resources read, resolved from FluxSettings; `definitions.py` exports
them as defaults so `dagster dev` works on a fresh shell, while a variable the user set always wins.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource

from dagster_project.resources.embedder import EmbedderResource
from dagster_project.resources.mlflow import MLflowResource
from dagster_project.resources.neo4j import Neo4jResource
from dagster_project.resources.postgres import PostgresResource
from dagster_project.resources.ray import RayResource
from dagster_project.resources.redis import RedisResource
from dagster_project.settings import REPO_ROOT, FluxSettings, dbt_env

__all__ = [
    "EmbedderResource",
    "MLflowResource",
    "Neo4jResource",
    "PostgresResource",
    "RayResource",
    "RedisResource",
    "build_resources",
    "dbt_env",
    "export_resource_env",
    "resource_env",
]


def resource_env(settings: FluxSettings) -> dict[str, str]:
    return {
        "FLUX_DATABASE_URL": settings.platform_database_url,
        "FLUX_NEO4J_URI": settings.resolved_neo4j_uri,
        "FLUX_NEO4J_USER": settings.neo4j_user,
        "FLUX_NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "FLUX_REDIS_URL": settings.resolved_redis_url,
        "FLUX_EMBEDDING_MODEL": settings.embedding_model,
        "FLUX_EMBEDDING_DIM": str(settings.embedding_dim),
        "FLUX_EMBEDDING_BATCH_SIZE": str(settings.embedding_batch_size),
        "FLUX_EMBEDDING_QUERY_PREFIX": settings.embedding_query_prefix,
        "FLUX_RAY_ADDRESS": settings.resolved_ray_address or "",
        "FLUX_RAY_NUM_CPUS": str(settings.ray_num_cpus),
        "FLUX_RAY_TEMP_DIR": str(settings.home / "ray"),
        "FLUX_MLFLOW_TRACKING_URI": settings.resolved_mlflow_tracking_uri,
        "FLUX_MLFLOW_EXPERIMENT": settings.mlflow_experiment,
        "FLUX_MLFLOW_ARTIFACT_ROOT": str(settings.home / "mlflow" / "artifacts"),
        **dbt_env(settings),
    }


def export_resource_env(settings: FluxSettings, override: bool = False) -> None:
    """Export what the resources read; `override` when `settings` is the authority (in-process runs)."""
    for key, value in resource_env(settings).items():
        if override:
            os.environ[key] = value
        else:
            os.environ.setdefault(key, value)


def build_resources() -> dict[str, dg.ConfigurableResource]:
    return {
        "postgres": PostgresResource(database_url=dg.EnvVar("FLUX_DATABASE_URL")),
        "neo4j": Neo4jResource(
            uri=dg.EnvVar("FLUX_NEO4J_URI"),
            user=dg.EnvVar("FLUX_NEO4J_USER"),
            password=dg.EnvVar("FLUX_NEO4J_PASSWORD"),
        ),
        "redis": RedisResource(url=dg.EnvVar("FLUX_REDIS_URL")),
        "embedder": EmbedderResource(
            model_name=dg.EnvVar("FLUX_EMBEDDING_MODEL"),
            dimension=dg.EnvVar.int("FLUX_EMBEDDING_DIM"),
            batch_size=dg.EnvVar.int("FLUX_EMBEDDING_BATCH_SIZE"),
            query_prefix=dg.EnvVar("FLUX_EMBEDDING_QUERY_PREFIX"),
        ),
        "ray": RayResource(
            address=dg.EnvVar("FLUX_RAY_ADDRESS"),
            num_cpus=dg.EnvVar.int("FLUX_RAY_NUM_CPUS"),
            temp_dir=dg.EnvVar("FLUX_RAY_TEMP_DIR"),
        ),
        "mlflow": MLflowResource(
            tracking_uri=dg.EnvVar("FLUX_MLFLOW_TRACKING_URI"),
            experiment=dg.EnvVar("FLUX_MLFLOW_EXPERIMENT"),
            artifact_root=dg.EnvVar("FLUX_MLFLOW_ARTIFACT_ROOT"),
        ),
        # The dbt next to this interpreter: tests and `make` may run .venv/bin/python without .venv/bin on PATH.
        "dbt": DbtCliResource(project_dir=str(REPO_ROOT / "dbt"), profiles_dir=str(REPO_ROOT / "dbt"),
                              dbt_executable=str(Path(sys.executable).parent / "dbt")),
    }
