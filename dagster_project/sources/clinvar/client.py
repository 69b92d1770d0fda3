"""ClinVar pulls: NCBI's `gene_condition_source_id` over HTTPS (live), the snapshot copy, or the demo rows.

NCBI publishes the file on its FTP server, which also serves HTTPS (`https://ftp.ncbi.nlm.nih.gov/pub/clinvar/…`,
plain text, no gzip; NCBI's plain-FTP access is being retired). Its `Last-Modified` names the release; without it,
the newest `LastUpdated` row does. A body cut short of its Content-Length is retried by the HTTP client; a 200 that
is an HTML page (an error page or a proxy's) is retried too, and never stored as the table.
"""

from __future__ import annotations

from datetime import UTC
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx

from dagster_project.core.http import HttpClient, MalformedResponseError
from dagster_project.sources.clinvar.parser import SOURCE, parse_clinvar
from dagster_project.sources.raw import RawPull, read_files

GENE_CONDITION_URL = "https://ftp.ncbi.nlm.nih.gov/pub/clinvar/gene_condition_source_id"
FILE = "gene_condition_source_id.txt"
SNAPSHOT_FILE = f"clinvar/{FILE}"
ADVICE = {
    404: "the gene-condition file moved: set FLUX_CLINVAR_URL to its current address (see the ClinVar "
    "README under pub/clinvar/ on ftp.ncbi.nlm.nih.gov)",
    403: "the NCBI download host refused this client: check FLUX_CLINVAR_URL and any proxy in between",
}
_GZIP_MAGIC = b"\x1f\x8b"


def table_body(response: httpx.Response) -> bytes:
    """The downloaded table; an HTML page or an empty body in its place is a transient fault, retried."""
    body = response.content
    kind = response.headers.get("Content-Type", "").lower()
    if body[:2] != _GZIP_MAGIC and ("html" in kind or body.lstrip()[:1] in (b"<", b"")):
        raise MalformedResponseError(
            str(response.url),
            f"not the gene-condition table ({kind or 'no content type'}, {len(body)} bytes)",
            retryable=True,
        )
    return body


def newest_row(data: bytes) -> str:
    """The newest `LastUpdated` of the table's rows (ISO date), or '' when no row has one."""
    return max((a.last_updated for a in parse_clinvar(data, FILE).associations), default="")


def release_of(last_modified: str | None, data: bytes) -> str:
    """`ClinVar gene_condition_source_id 2026-10-07T14:17:23Z` from the header, else from the newest row."""
    if last_modified:
        try:
            stamp = parsedate_to_datetime(last_modified).astimezone(UTC)
            return f"ClinVar gene_condition_source_id {stamp:%Y-%m-%dT%H:%M:%SZ}"
        except (TypeError, ValueError):
            pass
    newest = newest_row(data)
    return f"ClinVar gene_condition_source_id, rows to {newest}" if newest else "ClinVar gene_condition_source_id"


class ClinvarClient:
    def __init__(self, http: HttpClient, url: str = GENE_CONDITION_URL) -> None:
        self.http = http
        self.url = url

    def pull(self) -> RawPull:
        modified: list[str | None] = []

        def keep(response: httpx.Response) -> bytes:
            body = table_body(response)
            modified.append(response.headers.get("Last-Modified"))
            return body

        body = self.http.request_parsed("GET", self.url, keep)
        return RawPull(SOURCE, {FILE: body}, release=release_of(modified[-1], body))

    def release(self) -> str:
        """What the server holds now, from a HEAD request: the file is not downloaded."""
        response = self.http.request("HEAD", self.url)
        return release_of(response.headers.get("Last-Modified"), b"")


def snapshot_pull(snapshot_dir: Path, era: str = "current") -> RawPull:
    """One edition for every era: the snapshot holds no older ClinVar file."""
    files = read_files(snapshot_dir, [SNAPSHOT_FILE])
    newest = newest_row(files[SNAPSHOT_FILE])
    return RawPull(SOURCE, files, release=f"ClinVar gene_condition_source_id, rows to {newest} (snapshot)")


def demo_pull(demo_dir: Path) -> RawPull:
    return RawPull(
        SOURCE, read_files(demo_dir / SOURCE, [FILE]), release="Flux demo (ClinVar gene_condition_source_id format)"
    )
