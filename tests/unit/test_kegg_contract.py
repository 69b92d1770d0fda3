"""KEGG live pulls against a server that holds them to the KEGG REST contract (tests/support/contracts/kegg.py;
https://www.kegg.jp/kegg/rest/keggapi.html).

Rules and the tests that enforce them: `get` answers at most 10 entries and drops the rest silently
(`test_get_drops_entries_past_ten_so_flux_asks_in_tens`); the listing in today's format without `path:` prefixes
and compound links on reference maps (`test_a_pull_reads_today_s_formats_…`); 400/404 with empty bodies
(`test_errors_name_kegg_and_what_it_said`); 403 for a client past about 3 requests/s
(`test_a_flooding_client_is_blocked_and_flux_s_pace_is_not`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.sources.kegg import client as kegg
from dagster_project.sources.kegg import parser
from dagster_project.sources.kegg.client import KeggClient
from tests.support.contracts.kegg import MAP_WITHOUT_HUMAN, KeggContractServer

pytestmark = pytest.mark.shared_data
REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", REPO.parent / "shared" / "data"))
FIXTURES = SNAPSHOT / "fixtures"
CONV = REPO / "dagster_project" / "sources" / "demo_data" / "kegg" / "conv_uniprot_hsa.txt"
if not FIXTURES.is_dir():
    pytest.skip(f"recorded fixtures not found under {FIXTURES}", allow_module_level=True)


@pytest.fixture
def server() -> Iterator[KeggContractServer]:
    served = KeggContractServer(FIXTURES, CONV).start()
    yield served
    served.stop()


def _http(server: KeggContractServer, rate: float = 1000) -> HttpClient:
    return HttpClient(
        server.url,
        requests_per_second=rate,
        max_attempts=2,
        backoff_initial=0.01,
        backoff_max=0.05,
        timeout=2.0,
        provider="KEGG REST",
        advice=kegg.ADVICE,
    )


def _add_pathways(server: KeggContractServer, count: int) -> list[str]:
    added = [f"hsa{90000 + n}" for n in range(count)]
    for pid in added:
        server.pathways[pid] = f"Pathway {pid} - Homo sapiens (human)"
        server.entries[pid] = server._flat(pid, server.pathways[pid])
    return added


def test_get_drops_entries_past_ten_so_flux_asks_in_tens(server: KeggContractServer) -> None:
    added = _add_pathways(server, 15)
    answer = _http(server).get_text("get/" + "+".join(added[:12]))
    assert answer.count("///") == 10  # KEGG's rule: two entries lost without an error
    fetched = KeggClient(_http(server)).get_entries(sorted(server.pathways))
    assert sorted(fetched) == sorted(server.pathways) and max(server.get_sizes[1:]) == kegg.GET_BATCH


def test_a_pull_reads_today_s_formats_and_maps_compounds_to_listed_human_pathways(server: KeggContractServer) -> None:
    listing = _http(server).get_text("list/pathway/hsa")
    assert not listing.startswith("path:")
    pulled = KeggClient(_http(server)).pull()
    records, conv = parser.parse_raw(pulled.files, "raw/kegg")
    pathways = {p.id: p for p in records.pathways}
    assert sorted(pathways) == sorted(server.pathways) and not records.quarantined
    assert pathways["hsa00010"].category == "Metabolism" and pulled.release == "KEGG 112.0+/11-30, Nov 24"
    compounds = {(m.pathway_id, m.member_id) for m in records.members if m.member_kind == "compound"}
    # map00010 → hsa00010 (the human pathway drawn on that reference map)...
    assert {("hsa00010", c) for c in server.compounds["map00010"]} <= compounds
    # ...while a reference map without a listed human pathway yields members of no pathway the pull knows, which
    # the documents asset counts and does not keep.
    orphan = "hsa" + MAP_WITHOUT_HUMAN[0].removeprefix("map")
    assert orphan not in pathways and {m for p, m in compounds if p == orphan} == set(MAP_WITHOUT_HUMAN[1])
    genes = {m.member_id for m in records.members if m.member_kind == "gene" and m.pathway_id == "hsa00010"}
    assert {"10327", "124"} <= genes and conv


def test_errors_name_kegg_and_what_it_said(server: KeggContractServer) -> None:
    with pytest.raises(HttpRequestError) as missing:
        _http(server).get_text("get/hsa99999")
    assert missing.value.status == 404 and str(missing.value).startswith("KEGG REST: HTTP 404")
    with pytest.raises(HttpRequestError) as bad:
        _http(server).get_text("lst/pathway/hsa")
    assert bad.value.status == 400 and "check FLUX_KEGG_URL" in str(bad.value)


def test_a_flooding_client_is_blocked_and_flux_s_pace_is_not(fixtures: Path = FIXTURES) -> None:
    server = KeggContractServer(fixtures, CONV, rate_limit=3).start()
    try:
        flood = HttpClient(
            server.url, requests_per_second=50, max_attempts=1, timeout=2.0, provider="KEGG REST", advice=kegg.ADVICE
        )
        with pytest.raises(HttpRequestError) as err:
            for _ in range(6):
                flood.get_text("info/pathway")
        assert err.value.status == 403 and "about 3 requests/s" in str(err.value)
    finally:
        server.stop()
    server = KeggContractServer(fixtures, CONV, rate_limit=3).start()
    try:
        KeggClient(_http(server, rate=3)).pull()
        assert server.window is not None and server.window.rejected == 0 and set(server.statuses()) == {200}
    finally:
        server.stop()
