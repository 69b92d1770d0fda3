"""The environment a Flux code location needs to load as `settings` describe it: what a daemon or a webserver
started by a test reads (the location builds its settings from the environment, not from the test's objects)."""

from __future__ import annotations

import os

from dagster_project.core.settings import FluxSettings


def location_env(settings: FluxSettings, **extra: str) -> dict[str, str]:
    return (
        dict(os.environ)
        | {
            "FLUX_PG_DATABASE": settings.postgres.pg_database,
            "FLUX_SOURCE_MODE": settings.sources.source_mode,
            "FLUX_EMBEDDING_BATCH_SIZE": str(settings.index.embedding_batch_size),
            "FLUX_DEMO_DIR": str(settings.sources.demo_dir),
            "FLUX_RAW_ROOT": settings.raw_root_path,
            # One code load per run instead of one per step: the test machines have two cores.
            "FLUX_DAGSTER_EXECUTOR": "in_process",
            "DAGSTER_HOME": str(settings.dagster_home),
        }
        | extra
    )
