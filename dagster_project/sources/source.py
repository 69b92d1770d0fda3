"""What a source folder provides. Each `sources/<name>/source.py` defines one `Source`; the registry lists them,
and the raw and documents assets, their checks and the sensor read everything source-specific from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Protocol

from dagster_project.core.http import HttpClient
from dagster_project.core.settings import FluxSettings
from dagster_project.sources.model import ParseResult
from dagster_project.sources.raw import RawPull


@dataclass(frozen=True)
class Parsed:
    records: ParseResult
    # KEGG gene → UniProt accessions (KEGG's conv file); empty for every other source.
    kegg_uniprot: dict[str, list[str]] = field(default_factory=dict)


class Source(Protocol):
    name: str
    # The files under FLUX_SNAPSHOT_DIR its snapshot pull reads: exactly what the sensor watches.
    snapshot_files: tuple[str, ...]
    # The external ids of its documents (the documents_valid check); None: it loads rows with a check of their own.
    id_pattern: str | None

    def pull_live(self, settings: FluxSettings) -> RawPull: ...

    def pull_snapshot(self, snapshot_dir: Path) -> RawPull: ...

    def pull_demo(self, demo_dir: Path) -> RawPull: ...

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed: ...


class ClientFileSource:
    """The snapshot and demo pulls of a source whose client module reads them (`snapshot_pull`, `demo_pull`)."""

    client: ModuleType

    def pull_snapshot(self, snapshot_dir: Path) -> RawPull:
        return self.client.snapshot_pull(snapshot_dir)

    def pull_demo(self, demo_dir: Path) -> RawPull:
        return self.client.demo_pull(demo_dir)


def http_client(settings: FluxSettings, base_url: str, requests_per_second: float) -> HttpClient:
    """The one HTTP client (core/http.py) with the settings' contact, timeout and attempts."""
    return HttpClient(base_url, contact_email=settings.sources.contact_email, requests_per_second=requests_per_second,
                      timeout=settings.sources.http_timeout, max_attempts=settings.sources.http_max_attempts)
