"""Live-mode clients against recorded responses (../shared/data/fixtures) served by a local fault server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dagster_project.core.http import HttpClient
from dagster_project.sources.kegg import parser as kegg_parser
from dagster_project.sources.kegg.client import KeggClient
from dagster_project.sources.openalex import parser as openalex_parser
from dagster_project.sources.openalex.client import OpenAlexClient
from dagster_project.sources.reactome import parser as reactome_parser
from dagster_project.sources.reactome.client import ReactomeClient
from tests.support.fault_server import FaultServer, Reply

pytestmark = pytest.mark.shared_data
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
FIXTURES = SNAPSHOT / "fixtures"
if not FIXTURES.is_dir():
    pytest.skip(f"recorded fixtures not found under {FIXTURES}", allow_module_level=True)


def http(server: FaultServer, prefix: str = "") -> HttpClient:
    return HttpClient(
        server.url + prefix,
        contact_email="team@example.org",
        requests_per_second=1000,
        timeout=1.0,
        max_attempts=3,
        backoff_initial=0.01,
        backoff_max=0.05,
    )


def test_kegg_live_pull_survives_a_429_and_parses_recorded_answers(fault_server: FaultServer) -> None:
    rest = FIXTURES / "kegg_rest"
    fault_server.default("/info/pathway", Reply.ok("path             Release 112.0+/11-30, Nov 24\n"))
    fault_server.script(
        "/list/pathway/hsa", Reply.error(429, retry_after="0"), Reply.ok((rest / "hsa.txt").read_text())
    )
    fault_server.default("/link/hsa/pathway", Reply.ok((rest / "pathway_gene.txt").read_text()))
    fault_server.default(
        "/link/compound/pathway",
        Reply.ok("path:map00010\tcpd:C00022\npath:map00010\tcpd:C00031\npath:map00010\tcpd:BAD\n"),
    )
    fault_server.default("/conv/uniprot/hsa", Reply.ok("hsa:10327\tup:O14556\nhsa:124\tup:P07327\n"))
    fault_server.default("/get/hsa00010", Reply.ok((rest / "path_hsa00010.txt").read_text()))

    pulled = KeggClient(http(fault_server)).pull(max_pathways=1)
    assert len(fault_server.hits("/list/pathway/hsa")) == 2
    assert pulled.release == "KEGG 112.0+/11-30, Nov 24"
    records, conv = kegg_parser.parse_raw(pulled.files, "raw/kegg")
    by_id = {p.id: p for p in records.pathways}
    assert len(by_id) == 9 and by_id["hsa00020"].name == "Citrate cycle (TCA cycle)"
    glycolysis = by_id["hsa00010"]
    assert glycolysis.name == "Glycolysis / Gluconeogenesis" and glycolysis.category == "Metabolism"
    genes = {m.member_id for m in records.members if m.pathway_id == "hsa00010" and m.member_kind == "gene"}
    assert {"10327", "124", "3098"} <= genes
    compounds = {m.member_id for m in records.members if m.member_kind == "compound"}
    assert {"C00022", "C00031"} <= compounds
    assert [q.record_key for q in records.quarantined] == ["path:map00010:cpd:BAD"]
    assert conv == {"10327": ["O14556"], "124": ["P07327"]}


def test_openalex_cursor_paging_with_a_key_a_5xx_and_a_malformed_record(fault_server: FaultServer) -> None:
    work = json.loads((SNAPSHOT / "openalex" / "fixtures" / "W2741809807.json").read_text())
    page1 = {"meta": {"next_cursor": "c2"}, "results": [work, {"id": None, "title": "broken"}]}
    page2 = {"meta": {"next_cursor": None}, "results": [{**work, "id": "https://openalex.org/W1"}]}
    fault_server.script("/works", Reply.json(json.dumps(page1)), Reply.error(500), Reply.json(json.dumps(page2)))

    pulled = OpenAlexClient(http(fault_server), "oa-key").pull("has_abstract:true", max_records=10)
    hits = fault_server.hits("/works")
    assert [h.query["cursor"][0] for h in hits] == ["*", "c2", "c2"]
    assert hits[0].query["api_key"] == ["oa-key"] and hits[0].query["filter"] == ["has_abstract:true"]
    assert "mailto" not in hits[0].query  # the retired polite-pool parameter
    records = openalex_parser.parse_raw(pulled.files, "raw/openalex")
    assert sorted(p.id for p in records.papers) == ["W1", "W2741809807"]
    assert records.papers[0].abstract.split()[:2] == records.papers[1].abstract.split()[:2]
    assert len(records.quarantined) == 1 and "no id" in records.quarantined[0].reason


def test_reactome_downloads_and_summations(fault_server: FaultServer) -> None:
    downloads = FIXTURES / "reactome_downloads"
    fault_server.default("/cs/data/database/version", Reply.ok("94"))
    for name in (
        "ReactomePathways.txt",
        "ReactomePathwaysRelation.txt",
        "UniProt2Reactome_All_Levels.txt",
        "ChEBI2Reactome_All_Levels.txt",
    ):
        fault_server.default(f"/dl/{name}", Reply.ok((downloads / name).read_text()))
    summation = [{"stId": "R-HSA-389357", "summation": [{"text": "CD28 <b>recruits</b> PI3K.<br>AKT follows."}]}]
    fault_server.script("/cs/data/query/ids", Reply.error(502), Reply.json(json.dumps(summation)))

    events = [
        {"stId": "R-HSA-389348", "displayName": "CD28 binds PI3K", "schemaClass": "Reaction"},
        {"stId": "R-HSA-389359", "displayName": "CD28 dependent Vav1 pathway", "schemaClass": "Pathway"},
    ]
    fault_server.default("/cs/data/pathway/R-HSA-389357/containedEvents", Reply.json(json.dumps(events)))
    for pid in ("R-HSA-389356", "R-HSA-389359", "R-HSA-388841"):
        fault_server.default(f"/cs/data/pathway/{pid}/containedEvents", Reply.json("[]"))
    client = ReactomeClient(http(fault_server, "/cs"), http(fault_server, "/dl"))
    pulled = client.pull(with_reactions=True)
    assert pulled.release == "Reactome v94"
    # The summations call (after its 502), then the details of the one reaction, which this server does not know.
    summations_call, details_call = fault_server.hits("/cs/data/query/ids")[1:]
    assert details_call.body == b"R-HSA-389348"
    posted = summations_call.body.decode().split(",")
    assert sorted(posted) == ["R-HSA-388841", "R-HSA-389356", "R-HSA-389357", "R-HSA-389359"]
    records = reactome_parser.parse_raw(pulled.files, "raw/reactome")
    by_id = {p.id: p for p in records.pathways}
    assert sorted(by_id) == sorted(posted), "only the human rows of the all-species file"
    assert by_id["R-HSA-389357"].summary == "CD28 recruits PI3K. AKT follows."
    assert by_id["R-HSA-389357"].parents == ("R-HSA-389356",)
    assert all(m.pathway_id.startswith("R-HSA-") for m in records.members), "non-human rows are skipped"
    kinds = {(m.member_kind, m.id_space) for m in records.members}
    assert kinds == {("gene", "uniprot"), ("compound", "chebi"), ("reaction", "reactome")}
    assert [(r.id, r.pathway_id) for r in records.reactions] == [("R-HSA-389348", "R-HSA-389357")]
