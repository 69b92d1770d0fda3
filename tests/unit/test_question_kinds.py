"""Questions in analysts' words, pure logic: gene facts, counts, compounds, set operations, hierarchy in both
directions, ids anywhere, typos and spelling, honest "not found", and the answers composed for each."""

from __future__ import annotations

import json

import pytest

from retrieval.kinds.base import Stores
from retrieval.kinds.hierarchy import direction
from retrieval.kinds.hierarchy import facts as hierarchy_facts
from retrieval.kinds.registry import compose_answer as compose
from retrieval.model.answer import FinalAnswer, validate_answer
from retrieval.model.answer_data import (
    CheckData,
    CheckItem,
    CompoundPathwaysData,
    DifferenceData,
    GenePathwaysData,
    GeneRef,
    HierarchyData,
    MembersData,
    NodeRef,
    OverviewData,
)
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import Plan
from retrieval.model.spelling import canonical
from retrieval.question.followup import TurnContext, resolve
from tests.support.plans import read, table_facts

PATHWAYS = PathwayLexicon(
    [
        ("R-HSA-70171", "reactome", "Glycolysis"),
        ("hsa00010", "kegg", "Glycolysis / Gluconeogenesis"),
        ("R-HSA-109581", "reactome", "Apoptosis"),
        ("hsa04210", "kegg", "Apoptosis"),
        ("R-HSA-162582", "reactome", "Signal Transduction"),
        ("hsa04110", "kegg", "Cell cycle"),
        ("R-HSA-69278", "reactome", "Cell Cycle, Mitotic"),
        ("hsa04010", "kegg", "MAPK signaling pathway"),
        ("hsa03430", "kegg", "Mismatch repair"),
        ("R-HSA-5358508", "reactome", "Mismatch Repair"),
        ("R-HSA-1430728", "reactome", "Metabolism"),
    ]
)
TP53_IDS = {
    "entrez_id": "7157",
    "uniprot_ids": ["P04637"],
    "ensembl_id": "ENSG00000141510",
    "locus_type": "gene with protein product",
    "location": "17p13.1",
}
GENES = GeneLexicon(
    [
        ("HGNC:11998", "TP53", "tumor protein p53", ["P53", "LFS1"], [], TP53_IDS),
        ("HGNC:6973", "MDM2", "MDM2 proto-oncogene", [], []),
        ("HGNC:3430", "ERBB2", "erb-b2 receptor tyrosine kinase 2", ["HER2", "NEU"], ["NGL"]),
        ("HGNC:3236", "EGFR", "epidermal growth factor receptor", ["ERBB1"], []),
        (
            "HGNC:29665",
            "MALAT1",
            "metastasis associated lung adenocarcinoma transcript 1",
            [],
            [],
            {"locus_type": "RNA, long non-coding"},
        ),
        ("HGNC:1", "AAA1", "first gene", ["SHARED7"], []),
        ("HGNC:2", "BBB2", "second gene", ["SHARED7"], []),
    ]
)


def ask(question: str) -> Plan:
    return read(question, GENES, PATHWAYS)


@pytest.mark.parametrize(
    ("question", "fact", "symbol", "via"),
    [
        ("What is the official symbol of HER2?", "symbol", "ERBB2", "alias"),
        ("her2 is also known as what?", "symbol", "ERBB2", "alias"),
        ("Convert ENSG00000141510 to a gene symbol", "symbol", "TP53", "Ensembl id"),
        ("Convert ENSG00000141510 to official gene symbol.", "symbol", "TP53", "Ensembl id"),  # no article
        ("convert ENSG00000141510 into its approved symbol", "symbol", "TP53", "Ensembl id"),
        ("Which gene has the UniProt accession P04637 — what's its symbol?", "symbol", "TP53", "UniProt accession"),
        ("Is MALAT1 protein-coding?", "locus_type", "MALAT1", "symbol"),
        ("Which chromosome is TP53 on?", "location", "TP53", "symbol"),
        ("What are the UniProt and Entrez ids of TP53?", "ids", "TP53", "symbol"),
        ("What is the Ensembl id for HGNC:11998?", "ids", "TP53", "HGNC id"),
        ("What does NGL stand for now?", "summary", "ERBB2", "previous symbol"),
    ],
)
def test_gene_fact_questions_name_the_fact_and_the_gene(question: str, fact: str, symbol: str, via: str) -> None:
    plan = ask(question)
    assert (plan.kind, plan.field, plan.genes[0].name, plan.genes[0].matched_by) == ("gene_facts", fact, symbol, via)


def test_gene_fact_answers_state_the_table_row_and_cite_the_hgnc_id() -> None:
    answers = {
        q: _answer(q)
        for q in (
            "What is the official symbol of HER2?",
            "Is MALAT1 protein-coding?",
            "Is TP53 protein coding?",
            "Which chromosome is TP53 on?",
            "What are the UniProt and Entrez ids of TP53?",
        )
    }
    symbol, malat1, tp53, location, ids = answers.values()
    assert "HER2 is the alias" in symbol.answer and "ERBB2 (HGNC:3430" in symbol.answer
    assert malat1.answer.startswith("No: MALAT1 is not protein-coding") and "RNA, long non-coding" in malat1.answer
    assert tp53.answer.startswith("Yes: TP53 is protein-coding")
    assert "17p13.1, on chromosome 17" in location.answer
    assert all(s in ids.answer for s in ("Entrez Gene 7157", "UniProt P04637", "Ensembl ENSG00000141510"))
    assert all(a.claims and a.claims[0].citations[0].startswith("HGNC:") for a in answers.values())


def test_an_alias_several_genes_carry_lists_every_candidate() -> None:
    plan = ask("What is the official symbol of SHARED7?")
    assert {g.name for g in plan.genes} == {"AAA1", "BBB2"}
    answer = _answer("What is the official symbol of SHARED7?")
    assert "SHARED7 names 2 genes" in answer.answer and "AAA1" in answer.answer and "BBB2" in answer.answer


def test_a_gene_location_the_table_lacks_is_said_to_be_missing_not_guessed() -> None:
    answer = _answer("Which chromosome is EGFR on?")
    assert "no chromosome location for EGFR" in answer.answer and "lies at" not in answer.answer


@pytest.mark.parametrize(
    ("question", "kind", "pathways", "source"),
    [
        ("How many genes are in KEGG's cell cycle?", "members", ["hsa04110"], ""),
        ("how many members does the kegg mapk signalling pathway have", "members", ["hsa04010"], ""),
        ("How many Reactome pathways contain EGFR?", "gene_pathways", [], "reactome"),
        ("How many sub-pathways does Signal Transduction have?", "hierarchy", ["R-HSA-162582"], ""),
        ("How many KEGG pathways hold C00022?", "compound_pathways", [], "kegg"),
    ],
)
def test_count_questions_are_typed_and_marked(question: str, kind: str, pathways: list[str], source: str) -> None:
    plan = ask(question)
    assert (plan.kind, [p.id for p in plan.pathways], plan.count, plan.source) == (kind, pathways, True, source)


def test_a_count_answer_states_the_number_of_the_list_in_data() -> None:
    genes = [GeneRef(id=f"HGNC:{i}", symbol=f"G{i}") for i in range(7)]
    data = GenePathwaysData(
        genes=genes[:1],
        pathways=[NodeRef(id=f"R-HSA-{i}", name=f"P{i}", source="reactome") for i in range(4)],
        total=4,
        source="reactome",
        count=True,
    )
    assert json.loads(compose(data)[0])["answer"].startswith("4 Reactome pathways contain G0.")
    members = MembersData(
        pathway=NodeRef(id="hsa04110", name="Cell cycle", source="kegg"), genes=genes, total=7, count=True
    )
    assert 'KEGG hsa04110 \\"Cell cycle\\" has 7 member genes' in compose(members)[0]


@pytest.mark.parametrize(
    ("question", "compounds"),
    [
        ("Which pathways use pyruvate (C00022, CHEBI:15361)?", ("C00022", "CHEBI:15361")),
        ("pathways with chebi:15361", ("CHEBI:15361",)),
        ("In which pathways does C00031 occur?", ("C00031",)),
    ],
)
def test_compound_ids_anywhere_ask_for_the_pathways_holding_them(question: str, compounds: tuple[str, ...]) -> None:
    plan = ask(question)
    assert plan.kind == "compound_pathways" and tuple(e.id for e in plan.of_type("compound")) == compounds


def test_no_pathway_holding_a_compound_is_said_plainly_without_a_citation() -> None:
    raw, evidence = compose(CompoundPathwaysData(compounds=["C99999"], pathways=[], total=0))
    assert evidence == [] and "No pathway in the graph contains C99999" in json.loads(raw)["answer"]


@pytest.mark.parametrize(
    "question",
    [
        "Which genes are in KEGG cell cycle but not in Reactome mitotic cell cycle?",
        "genes unique to the kegg cell cycle compared with Cell Cycle, Mitotic",
        "List the KEGG Cell cycle genes that are missing from Reactome's Cell Cycle, Mitotic",
    ],
)
def test_in_a_but_not_in_b_is_a_difference_with_a_first(question: str) -> None:
    plan = ask(question)
    assert plan.kind == "difference" and [p.id for p in plan.pathways] == ["hsa04110", "R-HSA-69278"]


def test_a_difference_answer_lists_exactly_the_genes_b_lacks() -> None:
    data = DifferenceData(
        left=NodeRef(id="hsa04110", name="Cell cycle", source="kegg"),
        right=NodeRef(id="R-HSA-69278", name="Cell Cycle, Mitotic", source="reactome"),
        genes=[GeneRef(id="HGNC:1", symbol="CDKN2A")],
        total=1,
        sizes=[5, 9],
    )
    text = json.loads(compose(data)[0])["answer"]
    assert "has 5 member genes; 1 of them are not in" in text and text.endswith(": CDKN2A.")


@pytest.mark.parametrize(
    ("question", "pathway", "expected"),
    [
        ("What is glycolysis part of?", "R-HSA-70171", "up"),
        ("What does Reactome glycolysis belong to?", "R-HSA-70171", "up"),
        ("Which larger pathway contains Reactome Apoptosis?", "R-HSA-109581", "up"),
        ("What is under Signal Transduction?", "R-HSA-162582", "down"),
        ("Which pathways fall under signal transduction?", "R-HSA-162582", "down"),
        ("What are the parent and child pathways of Metabolism?", "R-HSA-1430728", "both"),
    ],
)
def test_hierarchy_in_any_phrasing_and_both_directions(question: str, pathway: str, expected: str) -> None:
    plan = ask(question)
    assert (plan.kind, plan.pathways[0].id, direction(plan)) == ("hierarchy", pathway, expected)


def test_a_hierarchy_answer_answers_the_direction_asked() -> None:
    node = NodeRef(id="R-HSA-70171", name="Glycolysis", source="reactome")
    parent = NodeRef(id="R-HSA-1430728", name="Metabolism", source="reactome")
    up = json.loads(compose(HierarchyData(pathway=node, parents=[parent], children=[], direction="up"))[0])
    assert up["answer"].endswith('is part of R-HSA-1430728 "Metabolism".') and "sub-pathways" not in up["answer"]


@pytest.mark.parametrize(
    "question",
    [
        "Which top-level Reactome category does Glycolysis belong to?",
        "What is the top-level pathway of Glycolysis in Reactome?",
        "Which Reactome category is Glycolysis in?",
    ],
)
def test_a_pathway_s_category_is_its_top_level_ancestor_not_its_parent(question: str) -> None:
    plan = ask(question)
    assert (plan.kind, plan.pathways[0].id, direction(plan), plan.depth) == ("hierarchy", "R-HSA-70171", "up", None)
    assert ask("What is the parent pathway of Glycolysis?").depth == 1
    assert ask("What are the top-level pathways in Reactome?").kind != "hierarchy"  # names no pathway to place


class _Graph:
    """The graph reader's two hierarchy reads, as Reactome files Glycolysis (pure logic: no Neo4j)."""

    PARENTS = {"R-HSA-70171": ["R-HSA-70326"], "R-HSA-70326": ["R-HSA-71387"], "R-HSA-71387": ["R-HSA-1430728"]}
    NAMES = {
        "R-HSA-70171": "Glycolysis",
        "R-HSA-70326": "Glucose metabolism",
        "R-HSA-71387": "Metabolism of carbohydrates",
        "R-HSA-1430728": "Metabolism",
    }

    def ref(self, pid: str) -> NodeRef:
        return NodeRef(id=pid, name=self.NAMES[pid], source="reactome")

    def hierarchy(self, pid: str) -> tuple[list[NodeRef], list[NodeRef]]:
        return [self.ref(p) for p in self.PARENTS.get(pid, [])], []

    def ancestors(self, pid: str) -> dict[str, list[NodeRef]]:
        lineage, out = [self.ref(pid)], {}
        while self.PARENTS.get(lineage[-1].id):
            lineage = [*lineage, self.ref(self.PARENTS[lineage[-1].id][0])]
            out[lineage[-1].id] = lineage
        return out


def test_the_top_level_answer_names_the_category_and_the_lineage_to_it() -> None:
    plan = ask("Which top-level Reactome category does Glycolysis belong to?")
    data = hierarchy_facts(plan, Stores(graph=_Graph(), engine=None, genes=GENES, pathways=PATHWAYS))  # type: ignore[arg-type]
    assert [t.id for t in data.top_level] == ["R-HSA-1430728"] and [p.id for p in data.parents] == ["R-HSA-70326"]
    answer = json.loads(compose(data)[0])["answer"]
    assert 'above Reactome R-HSA-70171 "Glycolysis": R-HSA-1430728 "Metabolism"' in answer, answer
    assert "Glycolysis → Glucose metabolism → Metabolism of carbohydrates → Metabolism" in answer
    parent = hierarchy_facts(ask("What is the parent pathway of Glycolysis?"), Stores(_Graph(), None, GENES, PATHWAYS))  # type: ignore[arg-type]
    assert parent.top_level == [] and "Glucose metabolism" in json.loads(compose(parent)[0])["answer"]


def test_a_gene_asked_which_pathways_it_belongs_to_is_not_a_hierarchy_question() -> None:
    assert ask("Which pathways does TP53 belong to?").kind == "gene_pathways"
    assert ask("What is TP53 involved in?").kind == "gene_pathways"


@pytest.mark.parametrize(
    ("question", "pathway"),
    [
        ("which genes are in glycolisis?", "R-HSA-70171"),
        ("list the genes of the KEGG apoptossis pathway", "hsa04210"),
        ("genes of the kegg mapk signalling pathways", "hsa04010"),
        ("What genes does hsa04110 hold, by the way?", "hsa04110"),
        ("Which genes are in mitotic cell cycle?", "R-HSA-69278"),
    ],
)
def test_robust_reading_lower_case_typos_spelling_plurals_ids_in_a_sentence(question: str, pathway: str) -> None:
    plan = ask(question)
    assert plan.kind == "members" and plan.pathways[0].id == pathway, plan.reason


def test_a_typo_that_was_corrected_is_reported() -> None:
    assert ask("which genes are in glycolisis?").corrections == [("glycolisis", "glycolysis")]
    assert canonical("signalling") == canonical("signaling") and canonical("tumour") == "tumor"
    assert canonical("apoptosis") == "apoptosis" and canonical("cycles") == "cycle"


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("Which genes are in the KEGG plant hormone signal transduction pathway?", "pathway"),
        ("Which genes are in the KEGG photosynthesis pathway?", "pathway"),
        ("List the genes of the Reactome frobnication pathway", "pathway"),
        ("Which genes are in map00195?", "identifier"),
        ("What does R-MMU-70171 contain?", "identifier"),
        ("What are the genes of R-HSA-99999999?", "identifier"),
        ("What is the official symbol of FOOBAR1?", "gene"),
        ("Convert ENSG00000999999 to a symbol", "identifier"),
        ("How many genes are there?", "pathway"),
    ],
)
def test_what_the_index_does_not_hold_is_not_found_never_another_pathway(question: str, missing: str) -> None:
    plan = ask(question)
    assert plan.kind == "not_found" and plan.absent is not None and plan.absent.what == missing, plan.reason
    assert not plan.pathways


def test_a_not_found_answer_says_so_and_offers_the_closest_names_only_as_suggestions() -> None:
    plan = ask("Tell me about the Reactome frobnicator signal cascade pathway")
    assert plan.kind == "not_found" and plan.absent and plan.absent.closest[0].id == "R-HSA-162582"
    raw, evidence = compose(table_facts(plan, GENES, PATHWAYS))
    text = json.loads(raw)["answer"]
    assert text.startswith("The index holds no pathway") and "R-HSA-162582" in text
    assert [e.id for e in evidence] == [r.id for r in plan.absent.closest]  # cited as suggestions, nothing else


def test_membership_yes_no_and_overview() -> None:
    plan = ask("Is TP53 in the Reactome apoptosis pathway?")
    assert (plan.kind, plan.relation, [g.name for g in plan.subjects]) == ("check", "member_of", ["TP53"])
    node = NodeRef(id="R-HSA-109581", name="Apoptosis", source="reactome")
    tp53 = NodeRef(id="HGNC:11998", name="TP53", source="hgnc")
    mdm2 = NodeRef(id="HGNC:6973", name="MDM2", source="hgnc")
    yes = CheckData(
        relation="member_of",
        items=[
            CheckItem(subject=tp53, object=node, holds=True, size=12),
            CheckItem(subject=mdm2, object=node, holds=False, size=12),
        ],
    )
    text = json.loads(compose(yes)[0])["answer"]
    assert text.startswith("No: 1 of the 2 hold.")
    assert "Yes: TP53 is one of the 12 member genes" in text and "No: MDM2 is not one of the 12" in text
    overview = ask("Tell me about KEGG 'Mismatch repair'.")
    assert overview.kind == "overview" and overview.pathways[0].id == "hsa03430"
    data = OverviewData(
        pathway=NodeRef(id="hsa03430", name="Mismatch repair", source="kegg"),
        gene_total=3,
        genes=[GeneRef(id="HGNC:7127", symbol="MLH1")],
        parents=[],
        children=[],
        counterparts=[],
    )
    assert "has 3 member genes in the graph (MLH1)" in json.loads(compose(data)[0])["answer"]


def test_a_follow_up_chain_across_kinds_keeps_its_subject() -> None:
    second, _ = resolve(
        "Which Reactome pathway is its counterpart?",
        TurnContext("Tell me about KEGG 'Mismatch repair'.", "overview", ["hsa03430"]),
        GENES,
        PATHWAYS,
    )
    assert ask(second).kind == "counterpart" and ask(second).pathways[0].id == "hsa03430"
    third, _ = resolve(
        "Which genes do the two share?",
        TurnContext(second, "counterpart", ["hsa03430", "R-HSA-5358508"]),
        GENES,
        PATHWAYS,
    )
    assert ask(third).kind == "shared_genes"
    assert [p.id for p in ask(third).pathways] == ["hsa03430", "R-HSA-5358508"]


def test_bad_input_two_unknown_things_a_wrong_shaped_id_never_a_guessed_entity() -> None:
    two = ask("Which genes do the Frobnication and Quux pathways share?")
    assert two.kind == "not_found" and not two.pathways
    wrong_shape = ask("What genes are in hsa0411?")  # four digits: not a KEGG id, and no name either
    assert wrong_shape.kind == "not_found" and not wrong_shape.pathways
    assert ask("How many genes are in the pathway?").kind == "not_found"


def _answer(question: str) -> FinalAnswer:
    raw, evidence = compose(table_facts(ask(question), GENES, PATHWAYS))
    return validate_answer(question, raw, evidence)


@pytest.mark.parametrize(
    "question",
    ["Does Reactome file Glycolysis under Metabolism?", "Does Reactome place Glycolysis in Metabolism?"],
)
def test_a_verb_that_places_a_pathway_is_a_part_of_check_not_part_of_its_name(question: str) -> None:
    """ "file X under Y" was read as a pathway named "file glycolysis" that the index does not hold."""
    plan = ask(question)
    assert (plan.kind, plan.relation, [e.id for e in plan.entities]) == (
        "check",
        "part_of",
        ["R-HSA-70171", "R-HSA-1430728"],
    )


SPECIES_PATHWAYS = PathwayLexicon(
    [("hsa04110", "kegg", "Cell cycle"), ("R-HSA-5357801", "reactome", "Programmed Cell Death")]
)


@pytest.mark.parametrize(
    ("question", "other_species"),
    [
        ("Which genes are in the yeast cell cycle?", True),
        ("Which genes are in Cell cycle - yeast?", True),
        ("genes of the cell cycle in yeast", True),
        # The organism is the study's, not a pathway's: PubMedQA's own question (its abstract is in the index).
        ("Do mitochondria play a role in remodelling lace plant leaves during programmed cell death?", False),
    ],
)
def test_another_organism_is_refused_only_where_it_names_the_pathway(question: str, other_species: bool) -> None:
    plan = read(question, GENES, SPECIES_PATHWAYS)
    assert ("Flux holds human pathways" in (plan.reason or "")) is other_species, plan.reason
