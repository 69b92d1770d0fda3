"""ClinVar as a Source: NCBI's gene-condition table (live), its snapshot copy, or the demo rows. It loads gene-condition
associations, not documents, so its rows have a check of their own (disease_associations_valid); its genes are
placed in HGNC's, so its load follows HGNC's."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings
from dagster_project.sources.clinvar import client, parser
from dagster_project.sources.raw import RawPull
from dagster_project.sources.source import ClientFileSource, Parsed, http_client


class ClinvarSource(ClientFileSource):
    name = "clinvar"
    client = client
    snapshot_files = (client.SNAPSHOT_FILE,)
    id_pattern = None

    def pull_live(self, settings: FluxSettings) -> RawPull:
        url = settings.sources.clinvar_url or client.GENE_CONDITION_URL
        http = http_client(settings, url, 2, provider="NCBI ClinVar downloads", advice=client.ADVICE)
        pulled = client.ClinvarClient(http, url).pull()
        pulled.requests = http.attempts
        return pulled

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed:
        name, data = next(iter(files.items()))
        return Parsed(parser.parse_clinvar(data, f"{raw_ref}/{name}"))


SOURCE = ClinvarSource()
