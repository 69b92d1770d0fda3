"""The sources, one line each: everything source-specific lives in its folder's `source.py` (see docs/sources.md,
"Adding a source"). Assets call only `pull` and `parse`."""

from __future__ import annotations

from pathlib import Path

from dagster_project.core.settings import FluxSettings
from dagster_project.sources.clinvar.source import SOURCE as CLINVAR
from dagster_project.sources.hgnc.source import SOURCE as HGNC
from dagster_project.sources.kegg.source import SOURCE as KEGG
from dagster_project.sources.openalex.source import SOURCE as OPENALEX
from dagster_project.sources.pubmed.source import SOURCE as PUBMED
from dagster_project.sources.raw import RawPull
from dagster_project.sources.reactome.source import SOURCE as REACTOME
from dagster_project.sources.source import Parsed, Source

SOURCES: dict[str, Source] = {source.name: source for source in (REACTOME, KEGG, HGNC, OPENALEX, PUBMED, CLINVAR)}


def pull(name: str, settings: FluxSettings) -> RawPull:
    """The source's files for the configured FLUX_SOURCE_MODE."""
    source = SOURCES[name]
    if settings.sources.source_mode == "live":
        return source.pull_live(settings)
    if settings.sources.source_mode == "snapshot":
        return source.pull_snapshot(Path(settings.sources.snapshot_dir), settings.releases.snapshot_release)
    return source.pull_demo(Path(settings.sources.demo_dir))


def parse(name: str, files: dict[str, bytes], raw_ref: str) -> Parsed:
    return SOURCES[name].parse(files, raw_ref)


def snapshot_files() -> tuple[str, ...]:
    """Every file the snapshot pulls read, sorted: what the sensor watches."""
    return tuple(sorted({name for source in SOURCES.values() for name in source.snapshot_files}))
