"""Churn gates: blocking checks on each kept release and on the resolution. A release that loses more than its
limits allow stops here, so the documents load (or the candidate index) never runs and the previous release keeps
serving; the check's description names the source, the figures and the setting to change."""

import dagster as dg

from dagster_project.defs.assets.releases import RELEASE_ASSETS, resolution_release
from dagster_project.defs.check_decorator import flux_check
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.releases.gates import evaluate


def _churn_check(asset: dg.AssetsDefinition, kind: str, subject: str) -> dg.AssetChecksDefinition:
    @flux_check(
        asset=asset,
        name="churn_within_limits",
        blocking=True,
        description=f"{subject}: the release loses no more than the FLUX_CHURN_MAX_* limits allow "
        "compared with the release serving now.",
    )
    def _check(context: dg.AssetCheckExecutionContext, settings: FluxSettingsParam) -> dg.AssetCheckResult:
        event = context.instance.get_latest_materialization_event(asset.key)
        metadata = event.asset_materialization.metadata if event and event.asset_materialization else {}
        figures = {
            k: int(v.value)
            for k, v in metadata.items()
            if isinstance(getattr(v, "value", None), int) and not isinstance(v.value, bool)
        }
        key = metadata["release_key"].value if "release_key" in metadata else "?"
        verdict = evaluate(kind, f"{subject} release {key}", figures, settings.releases)
        return dg.AssetCheckResult(
            passed=verdict.passed,
            description=verdict.message,
            metadata={
                **verdict.shares,
                "compared_with": str(metadata["compared_with"].value) if "compared_with" in metadata else "none",
                "limits": {k: v for k, v in settings.releases.model_dump().items() if k.startswith("churn_")},
            },
        )

    return _check


_KINDS = {
    "hgnc": ("genes", "HGNC"),
    "reactome": ("pathways", "Reactome"),
    "kegg": ("pathways", "KEGG"),
    "clinvar": ("associations", "ClinVar"),
}
RELEASE_CHECKS = [_churn_check(asset, *_KINDS[asset.key.path[-1].removesuffix("_release")]) for asset in RELEASE_ASSETS]
resolution_churn = _churn_check(resolution_release, "resolution", "The resolution")
