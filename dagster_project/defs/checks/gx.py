"""Run a Great Expectations 1.x suite inside a Dagster `@asset_check`.

GX's own Dagster package is op-based and pinned to GX<1.0, so this is the small bridge every stage uses:
build an ephemeral context, validate one pandas DataFrame against a list of expectations and turn the
outcome into an AssetCheckResult with one metadata entry per expectation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.expectations import Expectation


def validate_dataframe(df: pd.DataFrame, expectations: Sequence[Expectation], suite_name: str) -> Any:
    """Validate `df` against `expectations` in a throwaway GX context; returns GX's validation result."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_pandas(name=f"{suite_name}_source")
    asset = source.add_dataframe_asset(name=f"{suite_name}_asset")
    batch = asset.add_batch_definition_whole_dataframe(f"{suite_name}_batch").get_batch(
        batch_parameters={"dataframe": df}
    )
    suite = context.suites.add(gx.ExpectationSuite(name=suite_name))
    for expectation in expectations:
        # A suite takes ownership of an expectation (sets its id): add a copy so callers can reuse theirs.
        suite.add_expectation(expectation.copy(update={"id": None}))
    return batch.validate(suite)


def gx_check_result(
    df: pd.DataFrame,
    expectations: Sequence[Expectation],
    suite_name: str,
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
) -> dg.AssetCheckResult:
    result = validate_dataframe(df, expectations, suite_name)
    metadata: dict[str, Any] = {"rows": len(df), "suite": suite_name}
    failed = []
    for item in result.results:
        config = item.expectation_config
        column = config.kwargs.get("column", "")
        label = f"{config.type}({column})" if column else config.type
        unexpected = (item.result or {}).get("unexpected_count")
        metadata[label] = "pass" if item.success else f"FAIL (unexpected: {unexpected})"
        if not item.success:
            failed.append(label)
    metadata["failed_expectations"] = ", ".join(failed) or "none"
    return dg.AssetCheckResult(passed=bool(result.success), severity=severity, metadata=metadata)
