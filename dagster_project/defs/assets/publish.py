"""The last stage — publishing: serving switches to the candidate index once the eval scorecards' blocking regression
checks pass. Serving reads only the latest published `index_versions` row."""

import dagster as dg

from dagster_project.defs.assets.scorecards import SCORECARD_ASSETS
from dagster_project.defs.assets.search_index import SERVING_GROUP, candidate_index
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.index.publishing import IndexVersionError, collect_garbage, publish_candidate
from dagster_project.index.tables import bm25_root


@dg.asset(
    group_name=SERVING_GROUP,
    kinds={"postgres"},
    deps=[candidate_index, *SCORECARD_ASSETS],
    description="Switches serving to the candidate index version (one row update: its chunk table and BM25 index "
    "were built beside the served ones), then drops the storage of versions older than the last "
    "FLUX_INDEX_KEEP_PUBLISHED published ones. It runs after the eval scorecards, whose blocking regression checks "
    "stop it, so a version that got worse never reaches serving; `flux index rollback` undoes a publish.",
)
def published_index(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    engine = postgres.get_engine()
    try:
        switch = publish_candidate(engine)
    except IndexVersionError as exc:
        raise dg.Failure(str(exc)) from None
    switched = switch.version != switch.previous
    context.log.info(f"serving index {switch.version}" + (f" (was {switch.previous})" if switched else " (unchanged)"))
    dropped = collect_garbage(engine, settings.index.index_keep_published, bm25_root(settings))
    if dropped:
        context.log.info(f"dropped the storage of {len(dropped)} old index version(s): {', '.join(dropped)}")
    return dg.MaterializeResult(
        metadata={
            "index_version": switch.version,
            "previous_version": switch.previous or "none",
            "switched": switched,
            "versions_dropped": len(dropped),
        }
    )
