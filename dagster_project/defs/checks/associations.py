"""The GX check on ClinVar's load: `disease_associations` and `diseases` hold well-formed, unique rows that agree
with each other (run on the clinvar documents asset, blocking what reads them)."""

import dagster as dg
import pandas as pd
from sqlalchemy import text

from dagster_project.defs.check_decorator import flux_check
from dagster_project.defs.checks.gx import gx_check_result
from dagster_project.defs.resources import PostgresResource

ASSOCIATIONS = """
SELECT a.hgnc_id, a.concept_id, a.source_name, a.entrez_id, a.gene_symbol, a.relation, d.concept_id AS disease
FROM disease_associations a LEFT JOIN diseases d USING (concept_id)
"""
DISEASES = "SELECT concept_id, name, mondo_id, omim_id FROM diseases"


def associations_check(asset: dg.AssetsDefinition) -> dg.AssetChecksDefinition:
    @flux_check(
        asset=asset,
        name="disease_associations_valid",
        blocking=True,
        description="GX: ClinVar associations are non-empty, unique per (HGNC gene, MedGen concept, "
        "asserting source), with HGNC, MedGen and NCBI Gene ids in their formats, a relation of "
        "associated or related, and a disease row for each; diseases unique, named, with MONDO and OMIM "
        "ids in their formats where present.",
    )
    def _check(postgres: PostgresResource) -> dg.AssetCheckResult:
        import great_expectations.expectations as gxe

        with postgres.get_engine().connect() as conn:
            rows = pd.read_sql(text(ASSOCIATIONS), conn)
            diseases = pd.read_sql(text(DISEASES), conn)
        links = gx_check_result(
            rows,
            [
                gxe.ExpectTableRowCountToBeBetween(min_value=1),
                gxe.ExpectCompoundColumnsToBeUnique(column_list=["hgnc_id", "concept_id", "source_name"]),
                gxe.ExpectColumnValuesToMatchRegex(column="hgnc_id", regex=r"^HGNC:\d+$"),
                gxe.ExpectColumnValuesToMatchRegex(column="concept_id", regex=r"^CN?\d+$"),
                gxe.ExpectColumnValuesToMatchRegex(column="entrez_id", regex=r"^\d+$"),
                gxe.ExpectColumnValueLengthsToBeBetween(column="gene_symbol", min_value=1),
                gxe.ExpectColumnValuesToBeInSet(column="relation", value_set=["associated", "related"]),
                gxe.ExpectColumnValuesToNotBeNull(column="disease"),
            ],
            suite_name="disease_associations",
        )
        conditions = gx_check_result(
            diseases,
            [
                gxe.ExpectTableRowCountToBeBetween(min_value=1),
                gxe.ExpectColumnValuesToBeUnique(column="concept_id"),
                gxe.ExpectColumnValueLengthsToBeBetween(column="name", min_value=1),
                gxe.ExpectColumnValuesToMatchRegex(column="mondo_id", regex=r"^MONDO:\d{7}$"),  # nulls are skipped
                gxe.ExpectColumnValuesToMatchRegex(column="omim_id", regex=r"^\d{6}$"),
            ],
            suite_name="diseases",
        )
        return dg.AssetCheckResult(
            passed=links.passed and conditions.passed,
            metadata={**links.metadata, **{f"diseases {k}": v for k, v in conditions.metadata.items()}},
        )

    return _check
