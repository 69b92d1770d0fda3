"""Dagster resources, one file per service, all built from one FluxSettings by `build_resources`."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.resources.embedder import EmbedderResource
from dagster_project.defs.resources.neo4j import Neo4jResource
from dagster_project.defs.resources.postgres import PostgresResource
from dagster_project.defs.resources.ray import RayResource
from dagster_project.defs.resources.settings import run_settings_resource

__all__ = [
    "EmbedderResource",
    "Neo4jResource",
    "PostgresResource",
    "RayResource",
    "build_resources",
]


def build_resources(settings: FluxSettings) -> dict[str, object]:
    """Every resource, from one settings object: `settings` (assets, checks and sensors read it; a run reads them
    with the values its tags carry) and the services, which derive their connections from it (so no URL or
    password is resource config in the UI)."""
    # Imported here: dagster-dbt and dbt take over a second to load, and the assets that import this package for its
    # other resources do not need them (assets/dbt.py imports resources/dbt.py itself).
    from dagster_project.defs.resources.dbt import FluxDbtResource

    return {
        "settings": run_settings_resource(settings),
        "postgres": PostgresResource(settings=settings),
        "neo4j": Neo4jResource(settings=settings),
        "embedder": EmbedderResource(
            model_name=settings.index.embedding_model,
            dimension=settings.index.embedding_dim,
            batch_size=settings.index.embedding_batch_size,
            query_prefix=settings.index.embedding_query_prefix,
        ),
        "ray": RayResource(
            address=settings.resolved_ray_address or "",
            num_cpus=settings.ops.ray_num_cpus,
            temp_dir=str(settings.home / "ray"),
        ),
        "dbt": FluxDbtResource(settings=settings),
    }
