"""PubMed as a Source: E-utilities esearch + efetch (live; E-utilities returns errors as data), PubMedQA's
abstracts (snapshot). The demo has none: its papers come from OpenAlex."""

from __future__ import annotations

import json
from pathlib import Path

from dagster_project.core.settings import FluxSettings
from dagster_project.sources import ids
from dagster_project.sources.model import ParseResult
from dagster_project.sources.pubmed import client, parser
from dagster_project.sources.raw import RawPull, read_files
from dagster_project.sources.source import Parsed

SNAPSHOT_FILE = "pubmedqa/ori_pqal.json"


class SourcePullError(RuntimeError):
    """A live pull that the API answered with an error record."""


class PubMedSource:
    name = "pubmed"
    snapshot_files = (SNAPSHOT_FILE,)
    id_pattern = ids.PMID.pattern

    def pull_live(self, settings: FluxSettings) -> RawPull:
        config = settings.sources
        key = config.ncbi_api_key.get_secret_value() if config.ncbi_api_key else None
        eutils = client.make_eutils_client(config.eutils_url or client.EUTILS_BASE_URL, email=config.contact_email,
                                           api_key=key, timeout=config.http_timeout,
                                           max_attempts=config.http_max_attempts)
        found = eutils.esearch("pubmed", config.pubmed_query, retmax=config.pubmed_max_records)
        if "error" in found:
            raise SourcePullError(f"esearch failed: {found['error']}")
        files = {"esearch.json": json.dumps(found).encode()}
        for start in range(0, len(found["ids"]), client.MAX_IDS):
            fetched = eutils.efetch("pubmed", found["ids"][start:start + client.MAX_IDS])
            if "error" in fetched:
                raise SourcePullError(f"efetch failed: {fetched['error']}")
            files[f"efetch_{start // client.MAX_IDS + 1:03d}.xml"] = fetched["text"].encode()
        return RawPull("pubmed", files, release=f"PubMed query={config.pubmed_query!r} count={found['count']}")

    def pull_snapshot(self, snapshot_dir: Path) -> RawPull:
        return RawPull("pubmed", read_files(snapshot_dir, [SNAPSHOT_FILE]), release="PubMedQA PQA-L (pubmed abstracts)")

    def pull_demo(self, demo_dir: Path) -> RawPull:
        return RawPull("pubmed", {}, release="Flux demo (no PubMed records)")

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed:
        result = ParseResult()
        for name, data in sorted(files.items()):
            if name.endswith(".xml"):
                result.extend(parser.parse_pubmed_xml(data.decode(), f"{raw_ref}/{name}"))
            elif name.endswith("ori_pqal.json"):
                result.extend(parser.parse_pubmedqa(data.decode(), f"{raw_ref}/{name}"))
        return Parsed(result)


SOURCE = PubMedSource()
