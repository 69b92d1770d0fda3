"""Graph evidence as text (render_pathway / render_gene on plain dict rows) and the CLI's numbered citations."""

from __future__ import annotations

from typing import Any

from retrieval.model.answer import Citation, Claim, FinalAnswer
from retrieval.retrievers.graph_retriever import render_gene, render_pathway
from serving.ask import numbered


def pathway_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "R-HSA-70171",
        "name": "Glycolysis",
        "source": "reactome",
        "category": "Metabolism",
        "species": "Homo sapiens",
        "parents": [{"id": "R-HSA-70326", "name": "Glucose metabolism"}],
        "children": [{"id": "R-HSA-70263", "name": "Gluconeogenesis step", "genes": 3}],
        "n_reactions": 2,
        "reactions": [
            {"id": "R-HSA-70420", "name": "PGK1 phosphorylates ADP"},
            {"id": "R-HSA-70467", "name": "ENO dehydrates 2PG"},
        ],
        "n_genes": 3,
        "genes": ["ENO1", "GAPDH", "HK1"],
        "n_compounds": 1,
        "compounds": ["CHEBI:17234"],
        "mapped": [
            {
                "id": "hsa00010",
                "name": "Glycolysis / Gluconeogenesis",
                "relation": "EQUIVALENT_TO",
                "outgoing": True,
                "overlap": 0.8,
                "jaccard": 0.5,
                "q_value": 1e-20,
                "shared": ["ENO1", "GAPDH"],
            },
        ],
    }
    row.update(overrides)
    return row


def part_of(kegg_id: str, outgoing: bool, shared: list[str]) -> dict[str, Any]:
    return {
        "id": kegg_id,
        "name": f"KEGG {kegg_id}",
        "relation": "PART_OF",
        "outgoing": outgoing,
        "overlap": 0.9,
        "jaccard": 0.3,
        "q_value": 2e-10,
        "shared": shared,
    }


def test_pathway_text_keeps_every_node_id_citable() -> None:
    text = render_pathway(pathway_row())
    for node_id in (
        "R-HSA-70171",
        "R-HSA-70326",
        "R-HSA-70263",
        "R-HSA-70420",
        "R-HSA-70467",
        "hsa00010",
        "CHEBI:17234",
    ):
        assert node_id in text
    assert text.startswith('Pathway R-HSA-70171 "Glycolysis" (Reactome, Homo sapiens).')
    assert "Part of: R-HSA-70326 Glucose metabolism." in text
    assert "Sub-pathways: R-HSA-70263 Gluconeogenesis step (3 genes)." in text
    assert "Reactions (2): R-HSA-70420 PGK1 phosphorylates ADP; R-HSA-70467 ENO dehydrates 2PG." in text


def test_equivalent_lists_the_shared_genes_and_scores() -> None:
    text = render_pathway(pathway_row())
    assert (
        'KEGG equivalent: hsa00010 "Glycolysis / Gluconeogenesis" (overlap 0.80, Jaccard 0.50, q=1.0e-20); '
        "shared genes (2): ENO1, GAPDH."
    ) in text


def test_kegg_pathway_names_its_reactome_counterpart() -> None:
    row = pathway_row(
        id="hsa00010",
        name="Glycolysis / Gluconeogenesis",
        source="kegg",
        parents=[],
        children=[],
        mapped=[{**pathway_row()["mapped"][0], "id": "R-HSA-70171", "name": "Glycolysis"}],
    )
    text = render_pathway(row)
    assert text.startswith('Pathway hsa00010 "Glycolysis / Gluconeogenesis" (KEGG, Homo sapiens).')
    assert 'Reactome equivalent: R-HSA-70171 "Glycolysis"' in text


def test_part_of_direction_words() -> None:
    # (p)-[:PART_OF]->(q): p lies within q; (q)-[:PART_OF]->(p): p contains q.
    text = render_pathway(pathway_row(mapped=[part_of("hsa01200", True, ["HK1"]), part_of("hsa00030", False, [])]))
    assert 'lies within KEGG: hsa01200 "KEGG hsa01200"' in text
    assert 'contains KEGG: hsa00030 "KEGG hsa00030"' in text
    assert "lies within KEGG: hsa00030" not in text and "contains KEGG: hsa01200" not in text


def test_genes_are_truncated_with_an_ellipsis_only_when_more_exist() -> None:
    assert "Genes (45): ENO1, GAPDH, HK1, …." in render_pathway(pathway_row(n_genes=45))
    assert "Genes (3): ENO1, GAPDH, HK1." in render_pathway(pathway_row())
    assert "…" not in render_pathway(pathway_row())


def test_shared_genes_over_30_are_truncated() -> None:
    shared = [f"G{i:02d}" for i in range(35)]
    text = render_pathway(pathway_row(mapped=[{**pathway_row()["mapped"][0], "shared": shared}]))
    assert f"shared genes (35): {', '.join(shared[:30])}, …." in text
    assert "G30" not in text


def test_empty_sections_are_left_out() -> None:
    text = render_pathway(
        pathway_row(
            category=None,
            species=None,
            parents=[],
            children=[],
            n_reactions=0,
            reactions=[],
            n_genes=0,
            genes=[],
            n_compounds=0,
            compounds=[],
            mapped=[],
        )
    )
    assert text == 'Pathway R-HSA-70171 "Glycolysis" (Reactome).'


BRCA1 = {
    "id": "HGNC:1100",
    "symbol": "BRCA1",
    "name": "BRCA1 DNA repair associated",
    "uniprot": ["P38398"],
    "entrez": "672",
    "n_pathways": 2,
    "pathways": [{"id": "R-HSA-5685942", "name": "HDR through HRR"}, {"id": "hsa03440", "name": "Homologous"}],
    "all_ids": ["R-HSA-5685942", "hsa03440", "hsa05224"],
    "papers": ["pubmed_12345"],
}
BRCA2 = {
    "id": "HGNC:1101",
    "symbol": "BRCA2",
    "name": "BRCA2 DNA repair associated",
    "uniprot": None,
    "entrez": None,
    "n_pathways": 1,
    "pathways": [{"id": "hsa03440", "name": "Homologous"}],
    "all_ids": ["hsa03440", "hsa05224", "hsa05212"],
    "papers": [],
}


def test_gene_lists_its_pathways_and_identifiers() -> None:
    text = render_gene(BRCA1, [BRCA1])
    assert text.startswith("Gene HGNC:1100 BRCA1 (BRCA1 DNA repair associated; UniProt P38398, Entrez 672).")
    assert "Member of 2 pathways: R-HSA-5685942 HDR through HRR; hsa03440 Homologous." in text
    assert "Mentioned in: pubmed_12345." in text
    assert "containing both" not in text


def test_two_genes_list_the_pathways_containing_both() -> None:
    assert "Pathways containing both BRCA1 and BRCA2 (2): hsa03440, hsa05224." in render_gene(BRCA1, [BRCA1, BRCA2])
    # Each pair is stated once, on the gene named first.
    assert "Pathways containing both" not in render_gene(BRCA2, [BRCA1, BRCA2])


def test_gene_without_pathways_or_shared_pathways_says_so() -> None:
    lonely = {**BRCA2, "id": "HGNC:1", "symbol": "LONE1", "n_pathways": 0, "pathways": [], "all_ids": []}
    text = render_gene(lonely, [lonely, BRCA1])
    assert text.startswith("Gene HGNC:1 LONE1 (BRCA2 DNA repair associated).")
    assert "Member of no pathway in the graph." in text
    assert "Pathways containing both LONE1 and BRCA1 (0): none." in text
    assert "Mentioned in" not in text


# --- numbered citations in the CLI -------------------------------------------------------------------------------


def answer_with(text: str, cited: list[str], claims: list[Claim] | None = None) -> FinalAnswer:
    return FinalAnswer(
        question="q",
        answer=text,
        confidence=0.5,
        claims=claims or [],
        citations=[Citation(id=i, kind="graph" if i.startswith(("R-", "hsa")) else "chunk") for i in cited],
    )


def test_markers_become_numbers_in_citation_order() -> None:
    answer = answer_with(
        "HK1 is in it [R-HSA-70171]. Hexokinase starts it [pubmed_1_0]. Again [R-HSA-70171].",
        ["pubmed_1_0", "R-HSA-70171"],
    )
    text, numbers = numbered(answer)
    assert numbers == {"pubmed_1_0": 1, "R-HSA-70171": 2}
    assert text == "HK1 is in it [2]. Hexokinase starts it [1]. Again [2]."


def test_unknown_brackets_are_left_alone() -> None:
    answer = answer_with(
        "Hexokinase [pubmed_1_0] starts glycolysis [sic] in the cytosol [see Figure 2].", ["pubmed_1_0"]
    )
    text, _ = numbered(answer)
    assert text == "Hexokinase [1] starts glycolysis [sic] in the cytosol [see Figure 2]."


def test_answer_without_markers_gets_the_claims_numbers() -> None:
    answer = answer_with(
        "Hexokinase starts glycolysis. HK1 is in it.",
        ["pubmed_1_0", "R-HSA-70171", "hsa00010"],
        claims=[
            Claim(text="HK1 is in it.", citations=["R-HSA-70171"]),
            Claim(text="Hexokinase starts glycolysis.", citations=["pubmed_1_0"]),
        ],
    )
    text, _ = numbered(answer)
    assert text == "Hexokinase starts glycolysis. HK1 is in it. [1][2]"


def test_answer_without_citations_is_unchanged() -> None:
    assert numbered(answer_with("Nothing found [sic].", [])) == ("Nothing found [sic].", {})
