"""Reactome as a Source: ContentService + download files (live), the R85/v94 snapshot files, or the demo."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings
from dagster_project.sources import ids
from dagster_project.sources.raw import RawPull
from dagster_project.sources.reactome import client, parser
from dagster_project.sources.source import ClientFileSource, Parsed, http_client


class ReactomeSource(ClientFileSource):
    name = "reactome"
    client = client
    snapshot_files = tuple(client.SNAPSHOT_FILES)
    id_pattern = ids.REACTOME_HUMAN.pattern

    def pull_live(self, settings: FluxSettings) -> RawPull:
        content = http_client(
            settings,
            settings.sources.reactome_url or client.CONTENT_SERVICE,
            5,
            provider="Reactome ContentService",
            advice=client.ADVICE,
        )
        downloads = http_client(
            settings,
            settings.sources.reactome_download_url or client.DOWNLOADS,
            5,
            provider="Reactome downloads",
            advice=client.ADVICE,
        )
        pulled = client.ReactomeClient(content, downloads).pull(
            settings.sources.live_max_pathways, with_reactions=settings.sources.reactome_reactions
        )
        pulled.requests = content.attempts + downloads.attempts
        return pulled

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed:
        return Parsed(parser.parse_raw(files, raw_ref))


SOURCE = ReactomeSource()
