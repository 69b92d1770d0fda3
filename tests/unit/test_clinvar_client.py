"""ClinVar's live pull against a server that serves `gene_condition_source_id` as NCBI's HTTPS host does
(tests/support/contracts/clinvar.py), the snapshot and demo pulls, and the release each one names.

Faults and what Flux does with them: a 429 (with Retry-After) or a 503 is retried; a timeout is retried; a body cut
short of its Content-Length is retried and, when every attempt is cut, fails the pull with nothing returned (the raw
zone is written only by a complete pull); an HTML page in the table's place is retried and never returned as the
table; a 404 fails at once naming FLUX_CLINVAR_URL.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dagster_project.core.http import HttpClient, HttpRequestError, MalformedResponseError
from dagster_project.core.settings import FluxSettings
from dagster_project.sources import registry
from dagster_project.sources.check import check_sources
from dagster_project.sources.clinvar import client as clinvar
from dagster_project.sources.clinvar.client import ClinvarClient
from tests.support.contract_server import Reply
from tests.support.contracts.clinvar import FILE_PATH, LAST_MODIFIED, ClinvarContractServer, not_found_page

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "dagster_project" / "sources" / "demo_data"
TABLE = DEMO / "clinvar" / "gene_condition_source_id.txt"
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", REPO.parent / "shared" / "data"))
CONTACT = "curator@pathway-lab.org"
RELEASE = "ClinVar gene_condition_source_id 2024-07-11T14:17:23Z"


@pytest.fixture
def server() -> Iterator[ClinvarContractServer]:
    served = ClinvarContractServer(TABLE).start()
    yield served
    served.stop()


def _http(server: ClinvarContractServer, attempts: int = 3, timeout: float = 2.0) -> HttpClient:
    return HttpClient(
        server.file_url,
        requests_per_second=1000,
        max_attempts=attempts,
        backoff_initial=0.01,
        backoff_max=0.05,
        timeout=timeout,
        provider="NCBI ClinVar downloads",
        advice=clinvar.ADVICE,
    )


def test_the_server_serves_the_file_as_an_apache_host_does(server: ClinvarContractServer) -> None:
    got = httpx.get(server.file_url)
    assert got.status_code == 200 and got.content == TABLE.read_bytes()
    assert got.headers["Last-Modified"] == LAST_MODIFIED and got.headers["Accept-Ranges"] == "bytes"
    assert got.headers["ETag"] == f'"{len(got.content):x}-{1_720_707_443_000_000:x}"'
    head = httpx.head(server.file_url)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["Content-Length"] == str(len(got.content)) and head.headers["ETag"] == got.headers["ETag"]
    missing = httpx.get(server.url + "/pub/clinvar/gene_condition_source_id.gz")
    assert missing.status_code == 404 and missing.headers["Content-Type"].startswith("text/html")
    assert b"<title>404 Not Found</title>" in missing.content and b"gene_condition_source_id.gz" in missing.content
    # The page NCBI's host answered for a missing path in kblin/ncbi-genome-download#19 was 240 bytes long.
    assert len(not_found_page("/genomes/genbank/viral/assembly_summary.txt")) == 240
    assert httpx.post(server.file_url).status_code == 405


def test_a_pull_keeps_the_bytes_and_names_the_release_by_last_modified(server: ClinvarContractServer) -> None:
    pulled = ClinvarClient(_http(server), server.file_url).pull()
    assert pulled.source == "clinvar" and pulled.files == {"gene_condition_source_id.txt": TABLE.read_bytes()}
    assert pulled.release == RELEASE
    assert [r.method for r in server.requests] == ["GET"] and server.requests[0].path == FILE_PATH
    assert "curator" not in server.requests[0].headers.get("User-Agent", "")  # this client was built without one


def test_without_last_modified_the_newest_row_names_the_release() -> None:
    assert clinvar.release_of(None, TABLE.read_bytes()) == "ClinVar gene_condition_source_id, rows to 2024-07-10"
    assert clinvar.release_of("not a date", TABLE.read_bytes()).endswith("rows to 2024-07-10")
    assert clinvar.release_of(None, b"") == "ClinVar gene_condition_source_id"


@pytest.mark.parametrize(
    "fault", [Reply.error(429, retry_after="0"), Reply.error(503), Reply.slow(1.0)], ids=["429", "503", "timeout"]
)
def test_a_throttle_a_server_error_or_a_timeout_is_retried(server: ClinvarContractServer, fault: Reply) -> None:
    server.inject(FILE_PATH, fault)
    pulled = ClinvarClient(_http(server, timeout=0.5), server.file_url).pull()
    assert pulled.files["gene_condition_source_id.txt"] == TABLE.read_bytes()
    assert len(server.requests) == 2


def test_a_body_cut_short_is_retried_and_never_kept(server: ClinvarContractServer) -> None:
    server.inject(FILE_PATH, server.truncated())
    http = _http(server)
    pulled = ClinvarClient(http, server.file_url).pull()
    assert pulled.files["gene_condition_source_id.txt"] == TABLE.read_bytes() and http.attempts == 2

    server.inject(FILE_PATH, *[server.truncated()] * 3)
    with pytest.raises(HttpRequestError) as cut:
        ClinvarClient(_http(server), server.file_url).pull()
    assert cut.value.retryable and cut.value.attempts == 3  # the raw asset's retry policy takes it from here
    assert "connection failed" in str(cut.value) and "NCBI ClinVar downloads" in str(cut.value)


def test_an_html_page_in_place_of_the_table_is_retried_never_returned(server: ClinvarContractServer) -> None:
    server.inject(FILE_PATH, server.html_page())
    assert ClinvarClient(_http(server), server.file_url).pull().release == RELEASE
    server.inject(FILE_PATH, *[server.html_page()] * 3)
    with pytest.raises(MalformedResponseError, match="not the gene-condition table"):
        ClinvarClient(_http(server), server.file_url).pull()


def test_a_moved_file_fails_at_once_naming_the_setting(server: ClinvarContractServer) -> None:
    url = server.url + "/pub/clinvar/gene_condition_source_id.txt"
    with pytest.raises(HttpRequestError) as moved:
        ClinvarClient(_http(server), url).pull()
    assert moved.value.status == 404 and moved.value.attempts == 1 and not moved.value.retryable
    assert "FLUX_CLINVAR_URL" in str(moved.value)


def test_the_live_source_pulls_from_flux_clinvar_url_with_flux_s_identity(server: ClinvarContractServer) -> None:
    settings = FluxSettings(source_mode="live", clinvar_url=server.file_url, contact_email=CONTACT, http_max_attempts=2)
    server.inject(FILE_PATH, Reply.error(502))
    pulled = registry.pull("clinvar", settings)
    assert pulled.requests == 2 and pulled.release == RELEASE
    assert all(CONTACT in r.headers["User-Agent"] for r in server.requests)
    parsed = registry.parse("clinvar", pulled.files, "raw/clinvar")
    assert len(parsed.records.associations) == 64 and len(parsed.records.quarantined) == 2


def test_sources_check_reads_the_release_from_a_head_request(server: ClinvarContractServer) -> None:
    [result] = check_sources(FluxSettings(clinvar_url=server.file_url, contact_email=CONTACT), ["clinvar"])
    assert result.ok and result.release == RELEASE and result.key == "not needed"
    assert [r.method for r in server.requests] == ["HEAD"]
    [down] = check_sources(FluxSettings(clinvar_url=server.url + "/moved", contact_email=CONTACT), ["clinvar"])
    assert not down.ok and down.reachable and "HTTP 404" in (down.problem or "")


def test_the_demo_pull_holds_real_rows_and_three_bad_ones() -> None:
    pulled = registry.pull("clinvar", FluxSettings(source_mode="demo"))
    assert list(pulled.files) == ["gene_condition_source_id.txt"]
    assert pulled.release == "Flux demo (ClinVar gene_condition_source_id format)"
    records = registry.parse("clinvar", pulled.files, "raw/clinvar").records
    assert len(records.associations) == 64  # 63 real rows (one of them three times over) and one gene HGNC lacks
    assert sorted(q.reason for q in records.quarantined) == [
        "row has 6 fields, the header 9: a truncated or re-wrapped line",
        "row without a gene symbol (AssociatedGenes and RelatedGenes both empty)",
    ]


def test_a_gzipped_table_reads_the_same_and_a_cut_one_is_quarantined() -> None:
    data = gzip.compress(TABLE.read_bytes())
    assert len(registry.parse("clinvar", {"f.gz": data}, "raw").records.associations) == 64
    [cut] = registry.parse("clinvar", {"f.gz": data[: len(data) // 2]}, "raw").records.quarantined
    assert "truncated download" in cut.reason


@pytest.mark.shared_data
@pytest.mark.skipif(not (SNAPSHOT / clinvar.SNAPSHOT_FILE).is_file(), reason=f"no ClinVar file under {SNAPSHOT}")
def test_the_snapshot_pull_reads_the_shared_file_and_names_its_newest_row() -> None:
    pulled = registry.pull("clinvar", FluxSettings(source_mode="snapshot", snapshot_dir=SNAPSHOT))
    assert list(pulled.files) == [clinvar.SNAPSHOT_FILE]
    assert pulled.release == "ClinVar gene_condition_source_id, rows to 2024-07-10 (snapshot)"
