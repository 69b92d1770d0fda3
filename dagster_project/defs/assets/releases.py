"""Releases — each pathway source's, HGNC's and ClinVar's latest pull kept as a release beside the ones before it,
compared with the release serving now, and gated by blocking churn checks (checks/releases.py) before the documents
assets load it into the served tables; after a resolution build, its edges are kept and compared the same way."""

import dagster as dg
from sqlalchemy import Engine, text

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.release_partitions import sync_release_partitions
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.releases import store
from dagster_project.releases.compare import compare
from dagster_project.releases.diff import SourceDiff
from dagster_project.releases.report import change_plot, largest_changes_markdown
from dagster_project.sources import registry
from dagster_project.sources.raw import Manifest, latest_manifest, load_files

RELEASES_GROUP = "releases"
# The sources the resolution is built from, and every kept source.
RESOLVED_FROM = ("hgnc", "reactome", "kegg")
RELEASE_SOURCES = (*RESOLVED_FROM, "clinvar")


def keep_release(source: str, manifest: Manifest, settings: FluxSettings, engine: Engine) -> bool:
    """Keep the release; False (and nothing parsed) when its files were kept before."""
    if store.is_kept(engine, source, store.release_key(manifest)):
        return False
    parsed = registry.parse(source, load_files(manifest, settings.raw_root_path), manifest.uri)
    mode = settings.sources.source_mode
    if source == "hgnc":
        return store.capture_genes(engine, manifest, mode, parsed.records.genes)
    if source == "clinvar":
        return store.capture_associations(engine, manifest, mode, parsed.records.associations)
    return store.capture_pathways(engine, source, manifest, mode, parsed.records)


def record_comparison(source: str, before: str, after: str, engine: Engine) -> tuple[dict[str, int], dict[str, object]]:
    """Record the diff's changes; return its figures (what the churn check reads) and the metadata that shows it."""
    diff, gene_release = compare(engine, source, before, after)
    store.write_changes(engine, source, before, after, diff.rows())
    shown: dict[str, object] = {}
    if isinstance(diff, SourceDiff):
        shown = {
            "genes_placed_with": gene_release or "none (members compared by id)",
            "largest_member_changes": dg.MetadataValue.md(largest_changes_markdown(diff.largest(10))),
        }
    return diff.figures(), shown


def build_release_asset(source: str) -> dg.AssetsDefinition:
    # Reactome and KEGG place their members with HGNC's release, so HGNC's is kept first; ClinVar's releases are
    # compared by ClinVar's own gene ids.
    deps = [f"{source}_raw", "postgres_schema", *(["hgnc_release"] if source in ("reactome", "kegg") else [])]

    @dg.asset(
        name=f"{source}_release",
        group_name=RELEASES_GROUP,
        kinds={"python", "postgres"},
        deps=deps,
        description=f"{source}: the latest raw pull kept as a release (pathways, names, parents and gene members; "
        "for HGNC its genes; for ClinVar its gene-condition associations), once per distinct set of files, and "
        "compared with the release serving now. Each "
        "change is a release_changes row; the blocking churn check stops the documents load of a release that "
        "loses too much, so the previous release keeps serving.",
    )
    def _release(
        context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
    ) -> dg.MaterializeResult:
        engine = postgres.get_engine()
        manifest = latest_manifest(source, settings.raw_root_path)
        key = store.release_key(manifest)
        newly_kept = keep_release(source, manifest, settings, engine)
        before = store.previous_release(engine, source, key)
        # Every release the raw zone holds gets a partition of `<source>_release_history` (its own page in the UI).
        synced = sync_release_partitions(context.instance, source, settings.raw_root_path)
        meta: dict[str, object] = {
            "release": manifest.release,
            "release_key": key,
            "newly_kept": newly_kept,
            "compared_with": before or "none",
            "history_partitions_added": ", ".join(synced.added) or "none",
        }
        if before is None:
            context.log.info(
                f"{source}: release {key} {'kept' if newly_kept else 'was kept already'}; no other "
                "served release to compare with"
            )
            return dg.MaterializeResult(metadata=meta)
        figures, shown = record_comparison(source, before, key, engine)
        context.log.info(f"{source}: {key} against {before}: {figures}")
        return dg.MaterializeResult(
            metadata={
                **meta,
                **figures,
                **shown,
                "changes": dg.MetadataValue.md(change_plot(f"{source}: {before} → {key}", figures)),
            }
        )

    return _release


RELEASE_ASSETS = [build_release_asset(source) for source in RELEASE_SOURCES]


@dg.asset(
    group_name=RELEASES_GROUP,
    kinds={"python", "postgres"},
    deps=["pathway_resolution"],
    description="The resolution's equivalence and part-of edges kept under the releases they were resolved from, "
    "and compared with the resolution served before: edges appearing, disappearing or changing class. Its blocking "
    "churn check stops the candidate index (and so the publish) when many equivalences are lost.",
)
def resolution_release(context: dg.AssetExecutionContext, postgres: PostgresResource) -> dg.MaterializeResult:
    engine = postgres.get_engine()
    sources = {source: store.served_release(engine, source) or "unknown" for source in RESOLVED_FROM}
    with engine.connect() as conn:
        method = conn.execute(text("SELECT coalesce(max(method_version), '') FROM pathway_mappings")).scalar_one()
    key, newly_kept = store.capture_resolution(engine, sources, method)
    before = store.previous_release(engine, "resolution", key)
    store.mark_served(engine, "resolution", key)
    meta: dict[str, object] = {
        "release_key": key,
        "newly_kept": newly_kept,
        "source_releases": sources,
        "compared_with": before or "none",
    }
    if before is None:
        return dg.MaterializeResult(metadata=meta)
    figures, _ = record_comparison("resolution", before, key, engine)
    context.log.info(f"resolution: {key} against {before}: {figures}")
    return dg.MaterializeResult(
        metadata={
            **meta,
            **figures,
            "changes": dg.MetadataValue.md(change_plot(f"resolution: {before} → {key}", figures)),
        }
    )
