"""Platform assets: the versioned schema of each store. Every data asset depends on these."""

import dagster as dg

from dagster_project.defs.pools import GRAPH_WRITES_POOL
from dagster_project.defs.resources import Neo4jResource, PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.storage.migrate import apply_neo4j, apply_postgres

PLATFORM_GROUP = "platform"


@dg.asset(
    group_name=PLATFORM_GROUP,
    kinds={"postgres"},
    description="Applies the ordered Postgres migrations (documents, chunks with vector(dim), HNSW index, "
    "quarantine). Idempotent: a second run applies nothing.",
)
def postgres_schema(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    report = apply_postgres(postgres.get_engine(), settings)
    context.log.info(f"postgres migrations applied={report.applied} already={report.already_applied}")
    return dg.MaterializeResult(
        metadata={
            "schema_version": report.current_version,
            "applied_now": dg.MetadataValue.json(report.applied),
            "already_applied": len(report.already_applied),
        }
    )


@dg.asset(
    group_name=PLATFORM_GROUP,
    kinds={"neo4j"},
    pool=GRAPH_WRITES_POOL,
    description="Applies the Neo4j schema migrations (uniqueness constraints on Pathway, Reaction, Gene, "
    "Compound, Paper ids; Species and Compartment by name). Idempotent.",
)
def neo4j_schema(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    report = apply_neo4j(neo4j.get_driver(), settings)
    context.log.info(f"neo4j migrations applied={report.applied} already={report.already_applied}")
    return dg.MaterializeResult(
        metadata={
            "schema_version": report.current_version,
            "applied_now": dg.MetadataValue.json(report.applied),
            "already_applied": len(report.already_applied),
        }
    )
