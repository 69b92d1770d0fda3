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
from tests.support.contracts.hgnc import HgncContractServer
from tests.support.contracts.kegg import KeggContractServer
from tests.support.contracts.openalex import OpenAlexContractServer
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.shared_data
REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", REPO.parent / "shared" / "data"))
DEMO = REPO / "dagster_project" / "sources" / "demo_data"
KEY = "oa-check-key"
CONTACT = "curator@pathway-lab.org"
SOURCES = ["kegg", "hgnc", "openalex"]
if not (SNAPSHOT / "fixtures").is_dir():
    pytest.skip(f"recorded fixtures not found under {SNAPSHOT}", allow_module_level=True)


@pytest.fixture
def servers() -> Iterator[dict[str, ScriptedServer]]:
    running: dict[str, ScriptedServer] = {
        "kegg": KeggContractServer(SNAPSHOT / "fixtures", DEMO / "kegg" / "conv_uniprot_hsa.txt", rate_limit=3),
        "hgnc": HgncContractServer(DEMO / "hgnc" / "hgnc_complete_set.txt"),
        "openalex": OpenAlexContractServer(sorted((SNAPSHOT / "openalex" / "openalexPro_snapshots").glob("*.json")),
                                           keys={KEY: 1.0}),
    }
    for server in running.values():
        server.start()
    yield running
    for server in running.values():
        server.stop()


def _env(servers: dict[str, ScriptedServer], **overrides: str) -> dict[str, str]:
    hgnc = servers["hgnc"]
    assert isinstance(hgnc, HgncContractServer)
    return {"FLUX_KEGG_URL": servers["kegg"].url, "FLUX_HGNC_URL": hgnc.object_url,
            "FLUX_OPENALEX_URL": servers["openalex"].url, "FLUX_OPENALEX_API_KEY": KEY,
            "FLUX_CONTACT_EMAIL": CONTACT, "FLUX_HTTP_TIMEOUT": "2"} | overrides


def _settings(env: dict[str, str]) -> FluxSettings:
    fields = {key.removeprefix("FLUX_").lower(): value for key, value in env.items()}
    return FluxSettings(**fields)  # type: ignore[arg-type]


def test_ready_sources_report_release_rate_and_key_with_one_request_each(
        servers: dict[str, ScriptedServer]) -> None:
    results = {r.source: r for r in check_sources(_settings(_env(servers)), SOURCES)}
    assert all(r.ok and r.reachable for r in results.values())
    assert results["kegg"].release == "KEGG 112.0+/11-30, Nov 24" and "3 requests/s" in results["kegg"].rate_limit
    assert results["hgnc"].release == "HGNC Tue, 01 Dec 2026 03:12:44 GMT"
    assert results["openalex"].key == "accepted" and "$1.0000 of today's budget left" in results["openalex"].rate_limit
    assert {name: len(s.requests) for name, s in servers.items()} == dict.fromkeys(SOURCES, 1)
    assert servers["hgnc"].requests[0].headers["Range"] == "bytes=0-1023"  # a kilobyte, not the 15 MB file


def test_the_cli_exits_1_naming_a_wrong_key_and_an_unreachable_host(servers: dict[str, ScriptedServer]) -> None:
    env = _env(servers, FLUX_OPENALEX_API_KEY="oa-wrong-key", FLUX_KEGG_URL="http://127.0.0.1:9")
    out = flux("sources", "check", *SOURCES, env=env)
    assert out.code == 1, out
    assert "not ready: kegg, openalex" in out.said
    assert "kegg: KEGG REST: connection failed" in out.said
    assert "openalex: OpenAlex: HTTP 401" in out.said and "set FLUX_OPENALEX_API_KEY" in out.said
    assert "oa-wrong-key" not in out.stdout + out.stderr
    rows = {line.split("│")[1].strip(): line for line in out.stdout.splitlines() if line.count("│") > 2}
    assert "refused" in rows["openalex"] and " no " in rows["kegg"] and " yes " in rows["hgnc"]


def test_the_cli_exits_0_when_every_named_source_is_ready(servers: dict[str, ScriptedServer]) -> None:
    out = flux("sources", "check", *SOURCES, env=_env(servers))
    assert out.code == 0, out
    assert f"all {len(SOURCES)} sources ready" in out.printed


def test_no_request_leaves_with_the_placeholder_contact_or_without_an_openalex_key(
        servers: dict[str, ScriptedServer]) -> None:
    placeholder = check_sources(_settings(_env(servers, FLUX_CONTACT_EMAIL="flux@example.org")), SOURCES)
    assert all(not r.ok and "FLUX_CONTACT_EMAIL" in (r.problem or "") for r in placeholder)
    keyless = {r.source: r for r in check_sources(_settings(_env(servers, FLUX_OPENALEX_API_KEY="")), ["openalex"])}
    assert keyless["openalex"].key.startswith("missing") and not keyless["openalex"].ok
    assert all(not s.requests for s in servers.values())


def test_an_unknown_source_is_a_usage_error() -> None:
    out = flux("sources", "check", "uniprot")
    assert out.code == 2 and "unknown source uniprot" in out.said
