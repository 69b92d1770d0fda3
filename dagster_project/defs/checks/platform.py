"""Checks on the platform schema: the migrations ledger (via GX), the vector index, the graph constraints."""

import dagster as dg
import pandas as pd
from sqlalchemy import text

from dagster_project.defs.assets.platform import neo4j_schema, postgres_schema
from dagster_project.defs.check_decorator import flux_check
from dagster_project.defs.checks.gx import gx_check_result
from dagster_project.defs.resources import Neo4jResource, PostgresResource
from dagster_project.storage.migrate import load_migrations

REQUIRED_CONSTRAINTS = {
    ("Pathway", "id"),
    ("Reaction", "id"),
    ("Gene", "id"),
    ("Compound", "id"),
    ("Species", "name"),
    ("Compartment", "name"),
}


@flux_check(
    asset=postgres_schema,
    blocking=True,
    description="Every migration file is recorded once with a sha256 checksum (GX suite).",
)
def migrations_ledger_valid(postgres: PostgresResource) -> dg.AssetCheckResult:
    import great_expectations.expectations as gxe

    with postgres.get_engine().connect() as conn:
        ledger = pd.read_sql(text("SELECT version, name, checksum FROM schema_migrations"), conn)
    expected = len(load_migrations("postgres"))
    return gx_check_result(
        ledger,
        [
            gxe.ExpectTableRowCountToEqual(value=expected),
            gxe.ExpectColumnValuesToBeUnique(column="version"),
            gxe.ExpectColumnValuesToNotBeNull(column="checksum"),
            gxe.ExpectColumnValueLengthsToEqual(column="checksum", value=64),
            gxe.ExpectColumnValuesToBeBetween(column="version", min_value=1, max_value=expected),
        ],
        suite_name="schema_migrations",
    )


@flux_check(
    asset=neo4j_schema,
    blocking=True,
    description="Uniqueness constraints exist for every stable id the graph loaders MERGE on.",
)
def graph_constraints_present(neo4j: Neo4jResource) -> dg.AssetCheckResult:
    records = (
        neo4j.get_driver()
        .execute_query(
            "SHOW CONSTRAINTS YIELD type, labelsOrTypes, properties "
            "WHERE type = 'UNIQUENESS' RETURN labelsOrTypes AS labels, properties AS props"
        )
        .records
    )
    present = {(rec["labels"][0], rec["props"][0]) for rec in records}
    missing = sorted(f"{label}.{prop}" for label, prop in REQUIRED_CONSTRAINTS - present)
    return dg.AssetCheckResult(
        passed=not missing, metadata={"constraints": len(present), "missing": ", ".join(missing) or "none"}
    )


PLATFORM_CHECKS = [migrations_ledger_valid, graph_constraints_present]
