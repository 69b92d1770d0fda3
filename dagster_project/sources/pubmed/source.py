"""PubMed as a Source: E-utilities esearch + efetch (live; E-utilities returns errors as data), PubMedQA's
abstracts (snapshot). The demo has none: its papers come from OpenAlex.

A live pull finds up to FLUX_PUBMED_MAX_RECORDS PMIDs for FLUX_PUBMED_QUERY (through publication-date windows past
ESearch's 9,999-record cap, windows.py) and POSTs them to EFetch in batches of `client.EFETCH_BATCH`. The raw files
depend only on what NCBI holds: ids sorted numerically, batches named in order, a summary without timings, so the
same pull twice writes the same bytes and the raw zone records it once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dagster_project.core.settings import FluxSettings
from dagster_project.sources import ids
from dagster_project.sources.model import ParseResult
from dagster_project.sources.pubmed import client, parser, windows
from dagster_project.sources.raw import RawPull, read_files
from dagster_project.sources.source import Parsed, SourcePullError, live_contact_email

SNAPSHOT_FILE = "pubmedqa/ori_pqal.json"


def _check(record: dict[str, Any]) -> dict[str, Any]:
    """The record, or SourcePullError in the provider's words with the setting to change."""
    if "error" not in record:
        return record
    error = str(record["error"])
    said = error if error.startswith(client.PROVIDER) else f"{client.PROVIDER} {record['tool']}: {error}"
    advice = f"; {record['advice']}" if record.get("advice") else ""
    raise SourcePullError(
        f"PubMed live pull failed: {said}{advice}", record.get("status"), transient=bool(record.get("transient"))
    )


def _summary(query: str, found: dict[str, Any], pmids: list[str]) -> bytes:
    """esearch.json: what was searched and found, stable for the same answer (no timings, ids sorted)."""
    body = {
        "query": query,
        "query_translation": found["query_translation"],
        "count": found["count"],
        "windows": found["windows"],
        "duplicates": found["duplicates"],
        "ids": pmids,
        **({"unreached": found["unreached"]} if "unreached" in found else {}),
    }
    return json.dumps(body, indent=1, sort_keys=True).encode()


class PubMedSource:
    name = "pubmed"
    snapshot_files = (SNAPSHOT_FILE,)
    id_pattern = ids.PMID.pattern

    def pull_live(self, settings: FluxSettings) -> RawPull:
        config = settings.sources
        email = live_contact_email(settings)  # before any request: NCBI writes to it before blocking a client
        key = config.ncbi_api_key.get_secret_value().strip() if config.ncbi_api_key else None
        eutils = client.make_eutils_client(
            config.eutils_url or client.EUTILS_BASE_URL,
            email=email,
            api_key=key or None,
            timeout=config.http_timeout,
            max_attempts=config.http_max_attempts,
        )
        try:
            found = _check(windows.search_ids(eutils, config.pubmed_query, config.pubmed_max_records))
            if not found["ids"]:
                said = f", and said {found['warnings']}" if found.get("warnings") else ""
                raise SourcePullError(
                    f"PubMed live pull found nothing: {client.PROVIDER} esearch has no records for "
                    f"FLUX_PUBMED_QUERY={config.pubmed_query!r} (translated as "
                    f"{found['query_translation']!r}){said}; check FLUX_PUBMED_QUERY"
                )
            pmids, batch = sorted(found["ids"], key=int), client.EFETCH_BATCH
            files = {"esearch.json": _summary(config.pubmed_query, found, pmids)}
            for number, start in enumerate(range(0, len(pmids), batch), 1):
                fetched = _check(eutils.efetch("pubmed", pmids[start : start + batch]))
                files[f"efetch_{number:03d}.xml"] = fetched["text"].encode()
        finally:
            eutils.close()
        pulled = RawPull("pubmed", files, release=f"PubMed query={config.pubmed_query!r} count={found['count']}")
        pulled.requests = eutils.http.attempts
        return pulled

    def pull_snapshot(self, snapshot_dir: Path, era: str = "current") -> RawPull:
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
