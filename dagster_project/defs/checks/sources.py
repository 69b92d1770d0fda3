"""Checks on each source's load: GX suites over its documents (or gene or association rows) and a blocking
quarantine-rate gate."""

import dagster as dg
import pandas as pd
from sqlalchemy import text

from dagster_project.defs.assets.documents import DOCUMENT_ASSETS
from dagster_project.defs.check_decorator import flux_check
from dagster_project.defs.checks.associations import associations_check
from dagster_project.defs.checks.gx import gx_check_result
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.sources import ids, registry


def _documents_frame(postgres: PostgresResource, source: str) -> pd.DataFrame:
    with postgres.get_engine().connect() as conn:
        return pd.read_sql(
            text(
                "SELECT external_id, title, length(content) AS content_length FROM documents"
                " WHERE source = :s AND status = 'active'"
            ),
            conn,
            params={"s": source},
        )


def _documents_check(source: str, asset: dg.AssetsDefinition) -> dg.AssetChecksDefinition:
    @flux_check(
        asset=asset,
        name="documents_valid",
        blocking=True,
        description=f"GX: {source} documents are non-empty, unique by external_id, have a title and "
        "content, and ids match the source's format.",
    )
    def _check(postgres: PostgresResource, settings: FluxSettingsParam) -> dg.AssetCheckResult:
        import great_expectations.expectations as gxe

        df = _documents_frame(postgres, source)
        if df.empty and source == "pubmed" and settings.sources.source_mode == "demo":
            return dg.AssetCheckResult(passed=True, metadata={"note": "demo mode has no PubMed records"})
        return gx_check_result(
            df,
            [
                gxe.ExpectTableRowCountToBeBetween(min_value=1),
                gxe.ExpectColumnValuesToBeUnique(column="external_id"),
                gxe.ExpectColumnValuesToMatchRegex(column="external_id", regex=registry.SOURCES[source].id_pattern),
                gxe.ExpectColumnValueLengthsToBeBetween(column="title", min_value=1),
                gxe.ExpectColumnValuesToBeBetween(column="content_length", min_value=1),
            ],
            suite_name=f"{source}_documents",
        )

    return _check


def _genes_check(asset: dg.AssetsDefinition) -> dg.AssetChecksDefinition:
    @flux_check(
        asset=asset,
        name="gene_identifiers_valid",
        blocking=True,
        description="GX: HGNC ids unique and well-formed, symbols present, Entrez ids numeric, "
        "UniProt accessions match the UniProt pattern.",
    )
    def _check(postgres: PostgresResource, settings: FluxSettingsParam) -> dg.AssetCheckResult:
        import great_expectations.expectations as gxe

        with postgres.get_engine().connect() as conn:
            genes = pd.read_sql(
                text(
                    "SELECT hgnc_id, symbol, entrez_id, array_to_string(uniprot_ids, ' ')"
                    " AS uniprot FROM gene_identifiers"
                ),
                conn,
            )
        accessions = pd.DataFrame({"accession": [a for cell in genes["uniprot"] for a in cell.split() if a]})
        result = gx_check_result(
            genes,
            [
                gxe.ExpectTableRowCountToBeBetween(min_value=1),
                gxe.ExpectColumnValuesToBeUnique(column="hgnc_id"),
                gxe.ExpectColumnValuesToMatchRegex(column="hgnc_id", regex=r"^HGNC:\d+$"),
                gxe.ExpectColumnValueLengthsToBeBetween(column="symbol", min_value=1),
                gxe.ExpectColumnValuesToMatchRegex(column="entrez_id", regex=r"^\d+$"),
            ],
            suite_name="gene_identifiers",
        )
        uniprot = gx_check_result(
            accessions,
            [
                gxe.ExpectColumnValuesToMatchRegex(column="accession", regex=ids.UNIPROT.pattern),
            ],
            suite_name="uniprot_accessions",
        )
        return dg.AssetCheckResult(
            passed=result.passed and uniprot.passed,
            metadata={**result.metadata, **{f"uniprot {k}": v for k, v in uniprot.metadata.items()}},
        )

    return _check


def _quarantine_check(source: str, asset: dg.AssetsDefinition) -> dg.AssetChecksDefinition:
    @flux_check(
        asset=asset,
        name="quarantine_rate_ok",
        blocking=True,
        description="The share of records quarantined in the latest load stays below FLUX_MAX_QUARANTINE_RATE.",
    )
    def _check(context: dg.AssetCheckExecutionContext, settings: FluxSettingsParam) -> dg.AssetCheckResult:
        event = context.instance.get_latest_materialization_event(asset.key)
        metadata = event.asset_materialization.metadata if event and event.asset_materialization else {}
        rate = float(metadata["quarantine_rate"].value) if "quarantine_rate" in metadata else 0.0
        limit = settings.sources.max_quarantine_rate
        return dg.AssetCheckResult(passed=rate <= limit, metadata={"quarantine_rate": rate, "limit": limit})

    return _check


def build_source_checks() -> list[dg.AssetChecksDefinition]:
    checks = []
    for asset in DOCUMENT_ASSETS:
        source = asset.key.path[-1].removesuffix("_documents")
        # A source without document ids (HGNC, ClinVar) loads rows that have a check of their own.
        has_documents = registry.SOURCES[source].id_pattern is not None
        rows_check = associations_check if source == "clinvar" else _genes_check
        checks.append(_documents_check(source, asset) if has_documents else rows_check(asset))
        checks.append(_quarantine_check(source, asset))
    return checks


SOURCE_CHECKS = build_source_checks()
