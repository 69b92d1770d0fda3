"""Typed graph answers, pure logic: pathway names in questions, question kinds, and answers composed from facts."""

from __future__ import annotations

import json

import pytest

from retrieval.answering.typed_answer import LIST_IN_PROSE
from retrieval.kinds.registry import compose_answer as compose
from retrieval.kinds.registry import kind, turn_context
from retrieval.model.answer import FinalAnswer, validate_answer
from retrieval.model.answer_data import CounterpartData, GeneRef, Mapping, MembersData, NodeRef, SharedGenesData
from retrieval.model.genes import GeneLexicon
from retrieval.model.links import source_link
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import Plan
from retrieval.question.followup import TurnContext, resolve
from serving.export import markdown
from tests.support.plans import read

PATHWAYS = PathwayLexicon(
    [
        ("R-HSA-70171", "reactome", "Glycolysis"),
        ("hsa00010", "kegg", "Glycolysis / Gluconeogenesis"),
        ("R-HSA-70326", "reactome", "Glucose metabolism"),
        ("R-HSA-109581", "reactome", "Apoptosis"),
        ("hsa04210", "kegg", "Apoptosis"),
        ("R-HSA-71403", "reactome", "Citric acid cycle (TCA cycle)"),
        ("hsa00511", "kegg", "Other glycan degradation"),
        ("R-HSA-1430728", "reactome", "Metabolism"),
    ]
)
GENES = GeneLexicon(
    [("HGNC:11998", "TP53", "tumor protein p53", ["P53"], []), ("HGNC:6973", "MDM2", "MDM2 proto-oncogene", [], [])]
)


def classify(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    return read(question, genes, pathways)


def ids(question: str) -> list[str]:
    return [r.id for r in PATHWAYS.find(question)]


def test_pathway_names_match_whole_phrases_longest_first_in_the_named_database() -> None:
    assert ids("Which genes belong to the KEGG pathway 'Other glycan degradation'?") == ["hsa00511"]
    assert ids("Which KEGG pathway corresponds to Reactome's glycolysis?") == ["R-HSA-70171"]
    # A name inside a longer one never wins over it; "KEGG glycolysis" is KEGG's closest name.
    assert ids("Compare KEGG glycolysis / gluconeogenesis and Reactome glucose metabolism") == [
        "hsa00010",
        "R-HSA-70326",
    ]
    assert ids("Compare KEGG glycolysis and Reactome glycolysis") == ["hsa00010", "R-HSA-70171"]
    # Both databases named beside one shared name: both pathways.
    assert ids("Which genes do the KEGG and Reactome apoptosis pathways share?") == ["R-HSA-109581", "hsa04210"]
    assert ids("What does R-HSA-70171 hold?") == ["R-HSA-70171"]
    assert ids("How is cancer treated?") == []
    fuzzy = PATHWAYS.fuzzy("the Reactome citric acid cycle pathway", "reactome")
    assert fuzzy is not None and fuzzy.id == "R-HSA-71403"
    assert PATHWAYS.fuzzy("tumour immunology", "reactome") is None


@pytest.mark.parametrize(
    ("question", "kind", "pathways"),
    [
        ("Which genes belong to the KEGG pathway 'Other glycan degradation'?", "members", ["hsa00511"]),
        ("Which compounds take part in KEGG glycolysis / gluconeogenesis?", "members", ["hsa00010"]),
        ("Which KEGG pathway corresponds to Reactome's glycolysis?", "counterpart", ["R-HSA-70171"]),
        ("Which Reactome pathway is equivalent to the KEGG apoptosis pathway?", "counterpart", ["hsa04210"]),
        (
            "Which genes do the KEGG and Reactome apoptosis pathways share?",
            "shared_genes",
            ["R-HSA-109581", "hsa04210"],
        ),
        ("What are the sub-pathways of Reactome's glucose metabolism?", "hierarchy", ["R-HSA-70326"]),
        ("Compare KEGG glycolysis and Reactome glycolysis", "compare", ["hsa00010", "R-HSA-70171"]),
        ("Which pathways contain both TP53 and MDM2?", "gene_pathways", []),
        ("How does TP53 differ from MDM2?", "compare", []),
        ("What is the role of TP53 in cancer?", "literature", []),
    ],
)
def test_questions_get_their_kind_and_entities(question: str, kind: str, pathways: list[str]) -> None:
    plan = classify(question, GENES, PATHWAYS)
    assert plan.kind == kind, plan.reason
    assert [p.id for p in plan.pathways] == pathways or kind == "literature"


def test_a_graph_question_whose_pathway_cannot_be_found_is_answered_as_not_found_with_the_reason() -> None:
    plan = classify("Which genes do the Frobnication and Quux pathways share?", GENES, PATHWAYS)
    assert plan.kind == "not_found" and plan.absent and plan.absent.needed_for == "shared_genes"
    assert plan.absent.what == "pathway" and "no other pathway named in the index" in plan.reason
    one = classify("Compare Reactome glycolysis and the Frobnicose pathway", GENES, PATHWAYS)
    assert one.kind == "not_found" and "found only R-HSA-70171 'Glycolysis'" in one.reason
    assert classify("Which pathways contain both TP53 and MDM2?", GENES, PATHWAYS).genes[1].name == "MDM2"
    # Without a pathway word or a database, "compounds" alone is not a pathway question.
    # A comparison naming no pathway and no pathway word is the literature's (which abstains on it), not a
    # pathway "not found": "How do glycolysis and gluconeogenesis differ at their steps?" is such a question.
    assert classify("Compare compounds", GENES, PATHWAYS).kind == "literature"
    assert classify("Compare the glycolysis and frobnication pathways", GENES, PATHWAYS).kind == "not_found"
    assert classify("Which compounds cause cancer?", GENES, PATHWAYS).kind in ("literature", "scope")


def _genes(n: int) -> list[GeneRef]:
    return [GeneRef(id=f"HGNC:{i}", symbol=f"G{i:03d}") for i in range(n)]


def test_a_long_list_names_the_first_ones_and_the_payload_keeps_all() -> None:
    data = MembersData(
        pathway=NodeRef(id="hsa00010", name="Glycolysis / Gluconeogenesis", source="kegg"),
        genes=_genes(LIST_IN_PROSE + 7),
        total=LIST_IN_PROSE + 7,
    )
    reply, evidence = compose(data)
    answer = validate_answer("q", reply, evidence)
    assert answer.claims[0].citations == ["hsa00010"] and not answer.warnings
    assert f"has {LIST_IN_PROSE + 7} member genes" in answer.answer and "and 7 more" in answer.answer
    assert f"G{LIST_IN_PROSE:03d}" not in answer.answer and len(data.genes) == LIST_IN_PROSE + 7


def test_counterparts_state_relation_scores_and_shared_genes_once_each() -> None:
    glycolysis = NodeRef(id="R-HSA-70171", name="Glycolysis", source="reactome")
    kegg = NodeRef(id="hsa00010", name="Glycolysis / Gluconeogenesis", source="kegg")
    data = CounterpartData(
        pathway=glycolysis,
        target_source="kegg",
        counterparts=[
            Mapping(
                pathway=kegg,
                relation="part_of",
                direction="contains",
                confidence=0.58,
                jaccard=0.23,
                overlap=0.4,
                shared_genes=["GAPDH", "PKM"],
            )
        ],
    )
    reply, evidence = compose(data)
    answer = validate_answer("q", reply, evidence)
    assert [c.citations for c in answer.claims] == [["R-HSA-70171", "hsa00010"]]
    text = answer.claims[0].text
    assert "contains KEGG hsa00010" in text and "confidence 0.58" in text and "GAPDH, PKM" in text
    assert {e.id for e in evidence} == {"R-HSA-70171", "hsa00010"}
    empty = compose(CounterpartData(pathway=glycolysis, target_source="kegg", counterparts=[]))[0]
    assert "No KEGG pathway is resolved" in json.loads(empty)["answer"]


def test_shared_genes_with_their_resolution_are_two_facts() -> None:
    a = NodeRef(id="R-HSA-109581", name="Apoptosis", source="reactome")
    b = NodeRef(id="hsa04210", name="Apoptosis", source="kegg")
    data = SharedGenesData(
        pathways=[a, b],
        sizes=[179, 157],
        shared=_genes(3),
        total=3,
        mapping=Mapping(pathway=b, relation="equivalent", confidence=0.9),
    )
    answer = validate_answer("q", *compose(data))
    assert len(answer.claims) == 2 and "share 3 genes: G000, G001, G002" in answer.claims[0].text
    assert "is equivalent to KEGG hsa04210" in answer.claims[1].text


# --- follow-ups and export ---------------------------------------------------------------------------------------

MEMBERS_TURN = TurnContext("Which genes belong to the Reactome glycolysis pathway?", "members", ["R-HSA-70171"], [])


@pytest.mark.parametrize(
    ("question", "asked_as"),
    [
        ("which of those are kinases?", "Which genes of R-HSA-70171 are kinases?"),
        ("and its sub-pathways?", "R-HSA-70171's sub-pathways?"),
        ("what about in KEGG?", "Which genes belong to the KEGG glycolysis pathway?"),
        (
            "Which genes belong to the KEGG pathway 'Other glycan degradation'?",
            "Which genes belong to the KEGG pathway 'Other glycan degradation'?",
        ),  # names its own pathway: standalone
    ],
)
def test_follow_ups_carry_the_previous_turns_entities(question: str, asked_as: str) -> None:
    assert resolve(question, MEMBERS_TURN, GENES, PATHWAYS) == (asked_as, None)


def test_a_follow_up_without_a_previous_turn_is_answered_standalone_with_a_warning() -> None:
    asked_as, warning = resolve("and its sub-pathways?", None, GENES, PATHWAYS)
    assert asked_as == "and its sub-pathways?" and warning and "no previous turn" in warning
    assert resolve("What is apoptosis?", None, GENES, PATHWAYS) == ("What is apoptosis?", None)


def test_a_name_filter_and_a_database_switch_reach_the_plan() -> None:
    kinases = classify("Which genes of R-HSA-70171 are kinases?", GENES, PATHWAYS)
    assert kinases.kind == "members" and kinases.name_filter == "kinase"
    other = classify("Which genes belong to the KEGG glucose metabolism pathway?", GENES, PATHWAYS)
    assert other.pathways[0].id == "R-HSA-70326" and other.source == "kegg"


def test_turn_context_comes_from_the_answer_payload() -> None:
    data = MembersData(pathway=NodeRef(id="hsa00010", source="kegg"), genes=_genes(2), total=2)
    answer = FinalAnswer(question="q", answer="a", confidence=0.9, kind="members", data=data)
    assert turn_context("q", answer) == TurnContext("q", "members", ["hsa00010"], [])


@pytest.mark.parametrize(
    ("cited", "link"),
    [
        ("R-HSA-70171", "https://reactome.org/content/detail/R-HSA-70171"),
        ("reactome_R-HSA-70171_0", "https://reactome.org/content/detail/R-HSA-70171"),
        ("kegg_hsa00010_2", "https://www.kegg.jp/pathway/hsa00010"),
        ("pubmed_21645374_1", "https://pubmed.ncbi.nlm.nih.gov/21645374/"),
        ("openalex_W2041540760_0", "https://openalex.org/W2041540760"),
        ("HGNC:11998", "https://www.genenames.org/data/gene-symbol-report/#!/hgnc_id/HGNC:11998"),
        ("C00031", ""),
    ],
)
def test_citations_link_to_their_source_pages(cited: str, link: str) -> None:
    assert source_link(cited) == link


def test_the_markdown_report_numbers_citations_and_carries_the_data_and_versions() -> None:
    data = MembersData(
        pathway=NodeRef(id="hsa00511", name="Other glycan degradation", source="kegg"), genes=_genes(3), total=3
    )
    answer = validate_answer("Which genes belong to KEGG 'Other glycan degradation'?", *compose(data))
    assert answer.citations[0].url == "https://www.kegg.jp/pathway/hsa00511"  # every client shows the same link
    answer = answer.model_copy(
        update={
            "data": data,
            "answer_id": "abc",
            "index_version": "v1",
            "kind": "members",
            "table": kind("members").table(data),
        }
    )
    report = markdown(answer)
    assert report.startswith("# Which genes belong to KEGG")
    assert "[1]" in report and "1. [hsa00511](https://www.kegg.jp/pathway/hsa00511) (graph, kegg)" in report
    assert "## Genes of Other glycan degradation (3 of 3)\n\n| symbol | HGNC id | name |" in report
    assert "| G000 | HGNC:0 |  |\n| G001 | HGNC:1 |  |" in report
    assert "Answer `abc`" in report and "index `v1`" in report


def test_shared_genes_with_one_named_pathway_take_its_counterpart_in_the_other_database() -> None:
    plan = classify("Which genes are shared by the Reactome and KEGG citric acid cycle pathways?", GENES, PATHWAYS)
    assert plan.kind == "shared_genes" and [p.id for p in plan.pathways] == ["R-HSA-71403"]
    assert plan.source == "kegg"
    # Asked as a counterpart question, the counterpart answer (which lists the shared genes) comes first.
    compound = "Which KEGG pathway corresponds to Reactome's glycolysis, and which genes do they share?"
    assert classify(compound, GENES, PATHWAYS).kind == "counterpart"
    lone = SharedGenesData(pathways=[NodeRef(id="R-HSA-71403", source="reactome")], sizes=[20], shared=[], total=0)
    answer = validate_answer("q", *compose(lone))
    assert "no resolved counterpart" in answer.answer and answer.claims[0].citations == ["R-HSA-71403"]
