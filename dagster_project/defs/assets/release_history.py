"""Release history — one partition per release of each kept source that the raw zone holds, so the UI shows every
release's materialization, its churn figures and its diff against the release pulled before it, and a past
release can be backfilled. The history is a record beside the served path: nothing downstream reads it, and its
churn check warns (the blocking gate is on `<source>_release`, against the release serving now)."""

import dagster as dg

from dagster_project.defs.assets.releases import RELEASE_SOURCES, RELEASES_GROUP, keep_release, record_comparison
from dagster_project.defs.release_partitions import history_asset_key, release_partitions
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.releases import history
from dagster_project.releases.compare import GATE_KIND
from dagster_project.releases.gates import evaluate
from dagster_project.releases.report import change_plot

CHURN_CHECK = "churn_since_previous"
HISTORY_TAG = ("history", "release")  # what automation.py selects the history by


def build_release_history_asset(source: str) -> dg.AssetsDefinition:
    name = history_asset_key(source).path[-1]

    @dg.asset(
        name=name,
        group_name=RELEASES_GROUP,
        kinds={"python", "postgres"},
        deps=["postgres_schema"],
        partitions_def=release_partitions(source),
        tags=dict([HISTORY_TAG]),
        check_specs=[
            dg.AssetCheckSpec(
                CHURN_CHECK,
                asset=name,
                blocking=False,
                description=f"{source}: what this release lost against the one pulled before "
                "it, within the FLUX_CHURN_MAX_* limits (warns; history blocks nothing)",
            )
        ],
        description=f"{source} releases one partition each, keyed `<release label> #<files digest>` as "
        "`flux releases list` shows them: the release kept from its raw files (once), its counts, and its diff "
        "against the release pulled before it. A partition whose files have left the raw zone fails at once, "
        "saying which releases remain.",
    )
    def _history(
        context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
    ) -> dg.MaterializeResult:
        try:
            release, before = history.locate(source, context.partition_key, settings.raw_root_path)
        except history.ReleaseNotInRawZoneError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from None
        engine = postgres.get_engine()
        newly_kept = keep_release(source, release.manifest, settings, engine)
        meta: dict[str, object] = {
            "release": release.manifest.release,
            "release_key": release.key,
            "newly_kept": newly_kept,
            "first_pulled": release.first_pulled,
            "pulls": release.pulls,
            "manifest": dg.MetadataValue.path(release.manifest.uri),
            "compared_with": before.key if before else "none (the first release in the raw zone)",
        }
        figures: dict[str, int] = {}
        if before is not None:
            keep_release(source, before.manifest, settings, engine)
            figures, shown = record_comparison(source, before.key, release.key, engine)
            meta |= {
                **figures,
                **shown,
                "changes": dg.MetadataValue.md(change_plot(f"{source}: {before.key} → {release.key}", figures)),
            }
        verdict = evaluate(GATE_KIND[source], f"{source} release {release.key}", figures, settings.releases)
        context.log.info(f"{source}: release {release.key} against {meta['compared_with']}: {verdict.message}")
        return dg.MaterializeResult(
            metadata=meta,
            check_results=[
                dg.AssetCheckResult(
                    check_name=CHURN_CHECK,
                    passed=verdict.passed,
                    severity=dg.AssetCheckSeverity.WARN,
                    description=verdict.message,
                    metadata=verdict.shares,
                )
            ],
        )

    return _history


RELEASE_HISTORY_ASSETS = [build_release_history_asset(source) for source in RELEASE_SOURCES]
