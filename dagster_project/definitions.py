"""The Flux code location: every asset, check, schedule and resource (workspace.yaml points here)."""

from __future__ import annotations

import dagster as dg

from dagster_project.assets.chunks import chunks
from dagster_project.assets.dbt import SOURCE_TABLE_SPECS, flux_dbt_models
from dagster_project.assets.documents import DOCUMENT_ASSETS
from dagster_project.assets.embeddings import chunk_embeddings
from dagster_project.assets.graph import knowledge_graph, pathway_vectors
from dagster_project.assets.platform import neo4j_schema, postgres_schema
from dagster_project.assets.raw_pulls import RAW_ASSETS
from dagster_project.assets.resolution import pathway_resolution
from dagster_project.assets.scorecards import SCORECARD_ASSETS
from dagster_project.assets.search_index import candidate_index, chunk_bm25_index, published_index
from dagster_project.assets.vector_index import chunk_vector_index
from dagster_project.automation import automation_sensor, with_nightly_policies
from dagster_project.checks.graph import GRAPH_CHECKS
from dagster_project.checks.index import INDEX_CHECKS
from dagster_project.checks.platform import PLATFORM_CHECKS
from dagster_project.checks.scorecards import SCORECARD_CHECKS
from dagster_project.checks.sources import SOURCE_CHECKS
from dagster_project.resources import build_resources, export_resource_env
from dagster_project.schedules import nightly_raw_pulls, nightly_refresh
from dagster_project.sensors import snapshot_changed
from dagster_project.settings import get_settings

# Resolve service URLs from FLUX_ settings for any variable the shell did not set (fresh `dagster dev`).
export_resource_env(get_settings())

ASSETS = [postgres_schema, neo4j_schema, *RAW_ASSETS, *DOCUMENT_ASSETS, chunks, chunk_embeddings, chunk_vector_index,
          chunk_bm25_index, knowledge_graph, pathway_vectors, pathway_resolution, candidate_index, *SCORECARD_ASSETS,
          published_index, flux_dbt_models, *SOURCE_TABLE_SPECS]

EXECUTORS = {"multiprocess": dg.multiprocess_executor, "in_process": dg.in_process_executor}

defs = dg.Definitions(
    assets=with_nightly_policies(ASSETS, get_settings()),
    asset_checks=[*PLATFORM_CHECKS, *SOURCE_CHECKS, *INDEX_CHECKS, *GRAPH_CHECKS, *SCORECARD_CHECKS],
    schedules=[nightly_refresh],
    sensors=[snapshot_changed, automation_sensor(get_settings())],
    jobs=[nightly_raw_pulls],
    resources=build_resources(),
    executor=EXECUTORS[get_settings().dagster_executor],
)
