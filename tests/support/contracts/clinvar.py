"""NCBI's FTP host over HTTPS serving ClinVar's `gene_condition_source_id`, as Flux's live pull reads it.

What it enforces, and what that rests on:
- The file lives at `/pub/clinvar/gene_condition_source_id` (no extension, plain text, not gzipped): the ClinVar FTP
  README (`pub/clinvar/tab_delimited/README`, as quoted on pkg.go.dev for carbocation/genomisc's
  clinvartab2bigquery) and the pipelines that fetch it by that path (monarch-initiative/dipper's Jenkinsfile).
- The host is reached over HTTPS: NCBI closed plain-FTP access, HTTPS serves the same tree (marbl/Krona PR #198).
- It is an Apache server (`server: Apache` on NCBI hosts, ncbi/ncbi-vdb issue #143) serving static files: GET and
  HEAD with `Last-Modified` (what `wget --timestamping`, used on this file by dipper, relies on), an Apache ETag
  (`"<size hex>-<mtime µs hex>"`), `Accept-Ranges: bytes` and a Content-Length. A path it does not hold is a 404
  with Apache's stock HTML page naming the path: 240 bytes for `/genomes/genbank/viral/assembly_summary.txt` in
  kblin/ncbi-genome-download issue #19, which is what this page measures for that path.
- Not confirmed: the Content-Type NCBI sends for this extension-less file (served as `text/plain` here; Flux reads
  the bytes whatever the type and refuses only an HTML page in the table's place), and the answer to a POST (405
  here; Flux never sends one).

Faults are injected per path with `inject` (429s, 5xx, timeouts); `truncated()` is the table cut short of its
Content-Length, `html_page()` a 200 whose body is an HTML page (a proxy's), as such hosts answer.

Payload: the bundled demo's `clinvar/gene_condition_source_id.txt`, in NCBI's own layout.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.contract_server import ContractServer, RecordedRequest, Reply

FILE_PATH = "/pub/clinvar/gene_condition_source_id"
LAST_MODIFIED = "Thu, 11 Jul 2024 14:17:23 GMT"
_MTIME_MICROSECONDS = 1_720_707_443_000_000  # LAST_MODIFIED, as Apache folds it into the ETag


def not_found_page(path: str) -> bytes:
    return (
        '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n'
        f"</head><body>\n<h1>Not Found</h1>\n<p>The requested URL {path} was not found on this server.</p>\n"
        "</body></html>\n"
    ).encode()


class ClinvarContractServer(ContractServer):
    provider = "NCBI ClinVar downloads"

    def __init__(self, table: Path) -> None:
        super().__init__()
        self.body = table.read_bytes()
        self.headers = {
            "Content-Type": "text/plain",
            "Last-Modified": LAST_MODIFIED,
            "Accept-Ranges": "bytes",
            "ETag": f'"{len(self.body):x}-{_MTIME_MICROSECONDS:x}"',
        }

    @property
    def file_url(self) -> str:
        return self.url + FILE_PATH

    def truncated(self) -> Reply:
        """The table with its Content-Length, then half the bytes and a closed connection."""
        return Reply(200, self.body, self.headers, truncate=True)

    @staticmethod
    def html_page() -> Reply:
        return Reply(
            200,
            b"<html><body><h1>Service temporarily unavailable</h1></body></html>",
            {"Content-Type": "text/html; charset=iso-8859-1"},
        )

    def serve(self, request: RecordedRequest) -> Reply:
        if request.path != FILE_PATH:
            return Reply(404, not_found_page(request.path), {"Content-Type": "text/html; charset=iso-8859-1"})
        if request.method not in ("GET", "HEAD"):
            return Reply(405, b"", {"Allow": "GET,HEAD,OPTIONS"})
        return Reply(200, self.body, self.headers)
