"""One table of the five sources: how each pulls raw files in each mode and how its files are parsed.

Assets call only `pull` and `parse`; all source-specific logic stays in the source folders.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dagster_project.core.http import HttpClient
from dagster_project.core.settings import FluxSettings
from dagster_project.sources.hgnc import client as hgnc_client
from dagster_project.sources.hgnc import parser as hgnc_parser
from dagster_project.sources.kegg import client as kegg_client
from dagster_project.sources.kegg import parser as kegg_parser
from dagster_project.sources.model import ParseResult
from dagster_project.sources.openalex import client as openalex_client
from dagster_project.sources.openalex import parser as openalex_parser
from dagster_project.sources.pubmed import client as pubmed_client
from dagster_project.sources.pubmed import parser as pubmed_parser
from dagster_project.sources.raw import RawPull, read_files
from dagster_project.sources.reactome import client as reactome_client
from dagster_project.sources.reactome import parser as reactome_parser

SOURCES = ("reactome", "kegg", "hgnc", "openalex", "pubmed")


@dataclass(frozen=True)
class Parsed:
    records: ParseResult
    kegg_uniprot: dict[str, list[str]]


def _http(settings: FluxSettings, base_url: str, per_second: float) -> HttpClient:
    return HttpClient(base_url, contact_email=settings.contact_email, requests_per_second=per_second,
                      timeout=settings.http_timeout, max_attempts=settings.http_max_attempts)


def _live_reactome(s: FluxSettings) -> RawPull:
    client = reactome_client.ReactomeClient(_http(s, s.reactome_url, 5), _http(s, s.reactome_download_url, 5))
    return client.pull(s.live_max_pathways, with_reactions=s.reactome_reactions)


def _live_kegg(s: FluxSettings) -> RawPull:
    return kegg_client.KeggClient(_http(s, s.kegg_url, 3)).pull(s.live_max_pathways)


def _live_hgnc(s: FluxSettings) -> RawPull:
    return hgnc_client.HgncClient(_http(s, s.hgnc_url, 2), s.hgnc_url).pull()


def _live_openalex(s: FluxSettings) -> RawPull:
    # The polite pool: identify with mailto and stay well under 10 requests/s.
    client = openalex_client.OpenAlexClient(_http(s, s.openalex_url, 5), s.contact_email)
    return client.pull(s.openalex_filter, s.openalex_max_records)


class SourcePullError(RuntimeError):
    """A live pull that the API answered with an error record (E-utilities returns errors as data)."""


def _live_pubmed(s: FluxSettings) -> RawPull:
    key = s.ncbi_api_key.get_secret_value() if s.ncbi_api_key else None
    client = pubmed_client.make_eutils_client(s.eutils_url, email=s.contact_email, api_key=key,
                                              timeout=s.http_timeout, max_attempts=s.http_max_attempts)
    found = client.esearch("pubmed", s.pubmed_query, retmax=s.pubmed_max_records)
    if "error" in found:
        raise SourcePullError(f"esearch failed: {found['error']}")
    files = {"esearch.json": json.dumps(found).encode()}
    for start in range(0, len(found["ids"]), pubmed_client.MAX_IDS):
        fetched = client.efetch("pubmed", found["ids"][start:start + pubmed_client.MAX_IDS])
        if "error" in fetched:
            raise SourcePullError(f"efetch failed: {fetched['error']}")
        files[f"efetch_{start // pubmed_client.MAX_IDS + 1:03d}.xml"] = fetched["text"].encode()
    return RawPull("pubmed", files, release=f"PubMed query={s.pubmed_query!r} count={found['count']}")


def _parse_pubmed(files: dict[str, bytes], raw_ref: str) -> ParseResult:
    result = ParseResult()
    for name, data in sorted(files.items()):
        if name.endswith(".xml"):
            result.extend(pubmed_parser.parse_pubmed_xml(data.decode(), f"{raw_ref}/{name}"))
        elif name.endswith("ori_pqal.json"):
            result.extend(pubmed_parser.parse_pubmedqa(data.decode(), f"{raw_ref}/{name}"))
    return result


_LIVE: dict[str, Callable[[FluxSettings], RawPull]] = {
    "reactome": _live_reactome, "kegg": _live_kegg, "hgnc": _live_hgnc, "openalex": _live_openalex,
    "pubmed": _live_pubmed,
}


def _snapshot(source: str, snapshot_dir: Path) -> RawPull:
    if source == "pubmed":
        return RawPull("pubmed", read_files(snapshot_dir, ["pubmedqa/ori_pqal.json"]),
                       release="PubMedQA PQA-L (pubmed abstracts)")
    module = {"reactome": reactome_client, "kegg": kegg_client, "hgnc": hgnc_client,
              "openalex": openalex_client}[source]
    return module.snapshot_pull(snapshot_dir)


def _demo(source: str, demo_dir: Path) -> RawPull:
    if source == "pubmed":
        # The demo's papers are OpenAlex-shaped; PubMed contributes only in snapshot and live modes.
        return RawPull("pubmed", {}, release="Flux demo (no PubMed records)")
    module = {"reactome": reactome_client, "kegg": kegg_client, "hgnc": hgnc_client,
              "openalex": openalex_client}[source]
    return module.demo_pull(demo_dir)


def pull(source: str, settings: FluxSettings) -> RawPull:
    if settings.source_mode == "live":
        return _LIVE[source](settings)
    if settings.source_mode == "snapshot":
        return _snapshot(source, Path(settings.snapshot_dir))
    return _demo(source, Path(settings.demo_dir))


def parse(source: str, files: dict[str, bytes], raw_ref: str) -> Parsed:
    conv: dict[str, list[str]] = {}
    if source == "reactome":
        records = reactome_parser.parse_raw(files, raw_ref)
    elif source == "kegg":
        records, conv = kegg_parser.parse_raw(files, raw_ref)
    elif source == "hgnc":
        name, data = next(iter(files.items()))
        records = hgnc_parser.parse_hgnc(data, f"{raw_ref}/{name}")
    elif source == "openalex":
        records = openalex_parser.parse_raw(files, raw_ref)
    else:
        records = _parse_pubmed(files, raw_ref)
    return Parsed(records, conv)
