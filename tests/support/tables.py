"""Reading the platform database the way a test checks it: counts, and the raw pulls tests write to change a source."""

from __future__ import annotations

from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.sources.raw import RawPull, latest_manifest, load_files, write_pull


def row_count(settings: FluxSettings, table: str) -> int:
    engine = engine_for(settings.platform_database_url)
    try:
        with engine.connect() as conn:
            return conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
    finally:
        engine.dispose()


def truncated_kegg_pull(settings: FluxSettings, keep: int, retrieved_at: str | None = None) -> str:
    """A KEGG pull with only the first `keep` pathways of the latest listing (and their flat files), written to the
    raw zone as the newest pull: what a cut-off download looks like. Returns its manifest's path."""
    manifest = latest_manifest("kegg", settings.raw_root_path)
    files = load_files(manifest, settings.raw_root_path)
    listing = files["list_pathway_hsa.txt"].decode().splitlines()[:keep]
    kept = {line.split("\t")[0].removeprefix("path:") for line in listing}
    files = {
        name: data
        for name, data in files.items()
        if not name.startswith("get/") or name.removeprefix("get/").removesuffix(".txt") in kept
    }
    files["list_pathway_hsa.txt"] = ("\n".join(listing) + "\n").encode()
    pull = RawPull("kegg", files, release=manifest.release)
    if retrieved_at is not None:
        pull.retrieved_at = retrieved_at
    return write_pull(pull, settings.raw_root_path).uri
