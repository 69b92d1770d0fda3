"""`flux sources check` against the contract servers: one request per source, a report a person can act on, and a
non-zero exit naming what failed (a wrong key, an unreachable host, the placeholder contact)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.sources.check import check_sources
from tests.support.cli import flux
from tests.support.contract_server import ContractServer
from tests.support.contracts.clinvar import ClinvarContractServer
from tests.support.contracts.eutils import KEY as NCBI_KEY
from tests.support.contracts.hgnc import HgncContractServer
from tests.support.contracts.providers import provider_servers

pytestmark = pytest.mark.shared_data
REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", REPO.parent / "shared" / "data"))
DEMO = REPO / "dagster_project" / "sources" / "demo_data"
KEY = "oa-check-key"
CONTACT = "curator@pathway-lab.org"
SOURCES = ["reactome", "kegg", "hgnc", "openalex", "pubmed", "clinvar"]
if not (SNAPSHOT / "fixtures").is_dir():
    pytest.skip(f"recorded fixtures not found under {SNAPSHOT}", allow_module_level=True)


@pytest.fixture
def servers() -> Iterator[dict[str, ContractServer]]:
    running = provider_servers(SNAPSHOT, DEMO, openalex_key=KEY, pubmed_records=300)
    for server in running.values():
        server.start()
    yield running
    for server in running.values():
        server.stop()


def _env(servers: dict[str, ContractServer], **overrides: str) -> dict[str, str]:
    hgnc, clinvar = servers["hgnc"], servers["clinvar"]
    assert isinstance(hgnc, HgncContractServer) and isinstance(clinvar, ClinvarContractServer)
    return {
        "FLUX_CLINVAR_URL": clinvar.file_url,
        "FLUX_REACTOME_URL": servers["reactome"].url + "/ContentService",
        "FLUX_KEGG_URL": servers["kegg"].url,
        "FLUX_HGNC_URL": hgnc.object_url,
        "FLUX_OPENALEX_URL": servers["openalex"].url,
        "FLUX_OPENALEX_API_KEY": KEY,
        "FLUX_EUTILS_URL": servers["pubmed"].url,
        "FLUX_NCBI_API_KEY": NCBI_KEY,
        "FLUX_CONTACT_EMAIL": CONTACT,
        "FLUX_HTTP_TIMEOUT": "2",
    } | overrides


def _settings(env: dict[str, str]) -> FluxSettings:
    fields = {key.removeprefix("FLUX_").lower(): value for key, value in env.items()}
    return FluxSettings(**fields)  # type: ignore[arg-type]


def test_ready_sources_report_release_rate_and_key_with_one_request_each(servers: dict[str, ContractServer]) -> None:
    results = {r.source: r for r in check_sources(_settings(_env(servers)), SOURCES)}
    assert all(r.ok and r.reachable for r in results.values())
    assert results["reactome"].release == "Reactome v94"
    assert results["kegg"].release == "KEGG 112.0+/11-30, Nov 24" and "3 requests/s" in results["kegg"].rate_limit
    assert results["pubmed"].release == "300 PubMed records match FLUX_PUBMED_QUERY"
    assert (results["pubmed"].identity, results["pubmed"].key) == ("accepted", "accepted")
    assert results["pubmed"].rate_limit.startswith("10 requests/s")
    assert results["hgnc"].release == "HGNC Tue, 01 Dec 2026 03:12:44 GMT"
    assert results["openalex"].key == "accepted" and "$1.0000 of today's budget left" in results["openalex"].rate_limit
    assert {name: len(s.requests) for name, s in servers.items()} == dict.fromkeys(SOURCES, 1)
    assert servers["hgnc"].requests[0].headers["Range"] == "bytes=0-1023"  # a kilobyte, not the 15 MB file
    assert results["clinvar"].release == "ClinVar gene_condition_source_id 2024-07-11T14:17:23Z"
    assert servers["clinvar"].requests[0].method == "HEAD"  # the headers, not the file


def test_the_cli_exits_1_naming_a_wrong_key_and_an_unreachable_host(servers: dict[str, ContractServer]) -> None:
    env = _env(servers, FLUX_OPENALEX_API_KEY="oa-wrong-key", FLUX_KEGG_URL="http://127.0.0.1:9")
    out = flux("sources", "check", *SOURCES, env=env)
    assert out.code == 1, out
    assert "not ready: kegg, openalex" in out.said
    assert "kegg: KEGG REST: connection failed" in out.said
    assert "openalex: OpenAlex: HTTP 401" in out.said and "set FLUX_OPENALEX_API_KEY" in out.said
    assert "oa-wrong-key" not in out.stdout + out.stderr
    rows = {line.split("│")[1].strip(): line for line in out.stdout.splitlines() if line.count("│") > 2}
    assert "refused" in rows["openalex"] and " no " in rows["kegg"] and " yes " in rows["hgnc"]


def test_the_cli_exits_0_when_every_named_source_is_ready(servers: dict[str, ContractServer]) -> None:
    out = flux("sources", "check", *SOURCES, env=_env(servers))
    assert out.code == 0, out
    assert f"all {len(SOURCES)} sources ready" in out.printed


def test_no_request_leaves_with_the_placeholder_contact_or_without_an_openalex_key(
    servers: dict[str, ContractServer],
) -> None:
    placeholder = check_sources(_settings(_env(servers, FLUX_CONTACT_EMAIL="flux@example.org")), SOURCES)
    assert all(not r.ok and "FLUX_CONTACT_EMAIL" in (r.problem or "") for r in placeholder)
    keyless = {r.source: r for r in check_sources(_settings(_env(servers, FLUX_OPENALEX_API_KEY="")), ["openalex"])}
    assert keyless["openalex"].key.startswith("missing") and not keyless["openalex"].ok
    assert all(not s.requests for s in servers.values())


def test_an_unknown_source_is_a_usage_error() -> None:
    out = flux("sources", "check", "uniprot")
    assert out.code == 2 and "unknown source uniprot" in out.said


def test_a_wrong_ncbi_key_and_a_keyless_pubmed_are_told_apart(servers: dict[str, ContractServer]) -> None:
    wrong = check_sources(_settings(_env(servers, FLUX_NCBI_API_KEY="ncbi-wrong-key")), ["pubmed"])[0]
    assert not wrong.ok and wrong.reachable and wrong.key == "refused: check FLUX_NCBI_API_KEY"
    assert "API key invalid" in (wrong.problem or "") and "ncbi-wrong-key" not in (wrong.problem or "")
    keyless = check_sources(_settings(_env(servers, FLUX_NCBI_API_KEY="")), ["pubmed"])[0]
    assert keyless.ok and keyless.key == "none (optional)" and keyless.rate_limit.startswith("3 requests/s")
    assert servers["pubmed"].statuses() == [400, 200]
