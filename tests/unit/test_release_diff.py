"""Release diffs and churn gates on hand-built releases: members compared as HGNC genes across id spaces, renames
followed (never counted as a loss and a gain), names compared by their words, and gates that fire past a limit."""

from __future__ import annotations

from dagster_project.core.setting_groups import ReleaseSettings
from dagster_project.releases.diff import EdgeDiff, Gene, GeneIndex, ReleaseFacts, diff_genes, diff_sources
from dagster_project.releases.gates import evaluate

GENES = [
    Gene("HGNC:1", "TP53", (), "7157", ("P04637",)),
    Gene("HGNC:2", "KMT2A", ("MLL",), "4297", ("Q03164",)),
    Gene("HGNC:3", "CDK1", ("CDC2",), "983", ("P06493",)),
    Gene("HGNC:4", "CCNB1", (), "891", ("P14635",)),
    # Two genes that once shared a symbol: the old symbol names neither.
    Gene("HGNC:5", "AAA1", ("OLD",), None, ()),
    Gene("HGNC:6", "BBB1", ("OLD",), None, ()),
]


def facts(key: str, names: dict[str, str | None], members: dict[str, set[tuple[str, str]]]) -> ReleaseFacts:
    return ReleaseFacts("kegg", key, names, {pid: frozenset(m) for pid, m in members.items()})


def test_gene_index_places_every_space_and_follows_only_unambiguous_renames() -> None:
    index = GeneIndex(GENES)
    assert index.place(("hgnc_symbol", "TP53")) == ("HGNC:1", False)
    assert index.place(("hgnc_symbol", "MLL")) == ("HGNC:2", True)
    assert index.place(("entrez", "983")) == ("HGNC:3", False)
    assert index.place(("uniprot", "P14635-2")) == ("HGNC:4", False)  # an isoform names its gene
    assert index.place(("hgnc_symbol", "OLD")) == ("hgnc_symbol:OLD", False)
    assert index.place(("uniprot", "Q99999")) == ("uniprot:Q99999", False)
    assert index.label("HGNC:3") == "CDK1" and index.label("uniprot:Q99999") == "Q99999"


def test_diff_counts_additions_removals_renames_and_member_moves() -> None:
    before = facts(
        "2019",
        {"hsa04110": "Cell cycle", "hsa05010": "Alzheimers disease", "hsa00001": None, "hsa09999": "Gone pathway"},
        {
            "hsa04110": {("hgnc_symbol", "CDC2"), ("hgnc_symbol", "TP53"), ("hgnc_symbol", "MLL")},
            "hsa05010": {("hgnc_symbol", "TP53")},
        },
    )
    after = facts(
        "2024",
        {
            "hsa04110": "Cell cycle",
            "hsa05010": "Alzheimer disease",
            "hsa00001": "Named now",
            "hsa04115": "p53 signaling pathway",
        },
        {
            "hsa04110": {("entrez", "983"), ("uniprot", "P14635"), ("hgnc_symbol", "KMT2A")},
            "hsa05010": {("hgnc_symbol", "TP53")},
        },
    )
    diff = diff_sources(before, after, GeneIndex(GENES))
    assert diff.added == {"hsa04115": "p53 signaling pathway"}
    assert diff.removed == {"hsa09999": "Gone pathway"}
    # A name a release did not give is not a rename; punctuation and case are not either.
    assert diff.renamed == {"hsa05010": ("Alzheimers disease", "Alzheimer disease")}
    assert diff.named_kept == 2
    (cell_cycle,) = [c for c in diff.changed if c.pathway_id == "hsa04110"]
    # CDC2 → CDK1 (Entrez) and MLL → KMT2A are the same genes: only TP53 left and CCNB1 came.
    assert cell_cycle.gained == ("CCNB1",) and cell_cycle.lost == ("TP53",)
    assert cell_cycle.genes_renamed == 2
    figures = diff.figures()
    assert figures["members_before"] == 4 and figures["members_lost"] == 1 and figures["members_gained"] == 1
    assert figures["pathways_with_member_changes"] == 1
    kinds = sorted({kind for kind, _, _ in diff.rows()})
    assert kinds == ["members_changed", "pathway_added", "pathway_removed", "pathway_renamed"]
    assert diff.largest(1)[0].pathway_id == "hsa04110"


def test_identical_releases_have_no_changes() -> None:
    same = facts("a", {"hsa04110": "Cell cycle"}, {"hsa04110": {("hgnc_symbol", "TP53")}})
    diff = diff_sources(same, facts("b", dict(same.names), dict(same.members)), GeneIndex(GENES))
    assert diff.rows() == [] and diff.members_lost == 0 and not diff.renamed


def test_gene_and_edge_diffs() -> None:
    genes = diff_genes(
        "old",
        [Gene("HGNC:1", "TP53"), Gene("HGNC:3", "CDC2"), Gene("HGNC:9", "GONE")],
        "new",
        [Gene("HGNC:1", "TP53"), Gene("HGNC:3", "CDK1"), Gene("HGNC:10", "NEW1")],
    )
    assert genes.figures() == {"genes_before": 3, "genes_added": 1, "genes_removed": 1, "genes_renamed": 1}
    assert ("gene_renamed", "HGNC:3", {"before": "CDC2", "after": "CDK1"}) in genes.rows()
    edges = EdgeDiff(
        "r1",
        "r2",
        {("R-1", "hsa1"): "equivalent", ("R-2", "hsa2"): "equivalent", ("R-3", "hsa3"): "part_of"},
        {("R-1", "hsa1"): "equivalent", ("R-2", "hsa2"): "part_of", ("R-4", "hsa4"): "equivalent"},
    )
    figures = edges.figures()
    assert figures["edges_appeared"] == 1 and figures["edges_disappeared"] == 1
    assert figures["edges_reclassified"] == 1 and figures["equivalences_before"] == 2
    assert figures["equivalences_lost"] == 1  # reclassified away from equivalent counts as lost
    assert ("edge_reclassified", "R-2~hsa2", {"before": "equivalent", "after": "part_of"}) in edges.rows()


def test_gates_fire_past_each_limit_and_name_the_setting() -> None:
    limits = ReleaseSettings(churn_max_pathways_lost=0.25, churn_max_members_lost=0.35, churn_max_renamed=0.30)
    healthy = {
        "pathways_before": 330,
        "pathways_removed": 3,
        "members_before": 29848,
        "members_lost": 2109,
        "named_kept": 184,
        "pathways_renamed": 17,
    }
    assert evaluate("pathways", "KEGG", healthy, limits).passed
    truncated = {**healthy, "pathways_removed": 200}
    verdict = evaluate("pathways", "KEGG", truncated, limits)
    assert not verdict.passed and len(verdict.failures) == 1
    assert "KEGG loses 60.6% of its pathways (200 of 330" in verdict.message
    assert "FLUX_CHURN_MAX_PATHWAYS_LOST" in verdict.message
    assert not evaluate("pathways", "KEGG", {**healthy, "pathways_renamed": 100}, limits).passed
    assert not evaluate("pathways", "KEGG", {**healthy, "members_lost": 15000}, limits).passed
    # Exactly at the limit passes; a first release (no base) passes.
    assert evaluate("pathways", "KEGG", {"pathways_before": 4, "pathways_removed": 1}, limits).passed
    assert evaluate("pathways", "KEGG", {}, limits).passed
    assert not evaluate("genes", "HGNC", {"genes_before": 100, "genes_removed": 6}, limits).passed
    assert not evaluate("resolution", "res", {"equivalences_before": 10, "equivalences_lost": 6}, limits).passed
