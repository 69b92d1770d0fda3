"""OpenAlex as a Source: the works API in the polite pool (live), the openalexPro snapshot pages, or the demo."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings
from dagster_project.sources import ids
from dagster_project.sources.openalex import client, parser
from dagster_project.sources.raw import RawPull
from dagster_project.sources.source import ClientFileSource, Parsed, http_client


class OpenAlexSource(ClientFileSource):
    name = "openalex"
    client = client
    snapshot_files = tuple(client.SNAPSHOT_FILES)
    id_pattern = ids.OPENALEX_WORK.pattern

    def pull_live(self, settings: FluxSettings) -> RawPull:
        # The polite pool: identify with mailto and stay well under 10 requests/s.
        api = http_client(settings, settings.sources.openalex_url or client.BASE_URL, 5)
        config = settings.sources
        return client.OpenAlexClient(api, config.contact_email).pull(config.openalex_filter,
                                                                     config.openalex_max_records)

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed:
        return Parsed(parser.parse_raw(files, raw_ref))


SOURCE = OpenAlexSource()
