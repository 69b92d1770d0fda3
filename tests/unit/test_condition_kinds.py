"""Condition questions, pure logic: ClinVar condition names read from questions (case, punctuation, Roman numerals
and typos folded; several equal matches kept as candidates; placeholders never matched), which condition kind a
question is read as, and that without ClinVar loaded such questions stay "Flux does not hold that"."""

from __future__ import annotations

import json

import pytest

from retrieval.kinds.registry import compose_answer
from retrieval.model.disease_data import AssociationAbsentData, ConditionRef
from retrieval.model.diseases import Condition, DiseaseLexicon, normalise
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.refs import GeneRef
from tests.support.plans import read

CONDITIONS = DiseaseLexicon(
    {
        c.id: c
        for c in [
            Condition("C0011860", "Type 2 diabetes mellitus"),
            Condition("C1852092", "Type 1 diabetes mellitus 2"),
            Condition("C0085390", "Li-Fraumeni syndrome"),
            Condition("C5882668", "Li-Fraumeni syndrome 2"),
            Condition("C1328840", "Autoimmune lymphoproliferative syndrome type 1"),
            Condition("C0004135", "Ataxia-telangiectasia syndrome"),
            Condition("C0346629", "Colorectal cancer"),
            Condition("C0002395", "Alzheimer disease"),
            Condition("CN517202", "not provided"),
            Condition("C9999991", "Hereditary fructosuria"),
            Condition("C9999992", "Hereditary Fructosuria"),
        ]
    }
)
PATHWAYS = PathwayLexicon(
    [("R-HSA-70171", "reactome", "Glycolysis"), ("hsa05010", "kegg", "Alzheimer disease")], diseases=CONDITIONS
)
BARE = PathwayLexicon([("R-HSA-70171", "reactome", "Glycolysis")])
GENES = GeneLexicon(
    [
        ("HGNC:4195", "GCK", "glucokinase", [], []),
        ("HGNC:11998", "TP53", "tumor protein p53", [], []),
        ("HGNC:6125", "IRS1", "insulin receptor substrate 1", [], []),
        ("HGNC:16627", "CHEK2", "checkpoint kinase 2", [], []),
    ]
)


def test_names_are_compared_folded() -> None:
    assert normalise("Diabetes Mellitus, Type II") == "diabetes mellitus type 2"
    assert (
        normalise("Autoimmune lymphoproliferative syndrome, type I") == "autoimmune lymphoproliferative syndrome type 1"
    )
    assert normalise("I have type IV") == "i have type 4"  # a lone "I" stays a word


@pytest.mark.parametrize(
    ("question", "ids", "exact"),
    [
        ("Which genes are linked to type 2 diabetes mellitus?", ["C0011860"], True),
        ("genes for TYPE II DIABETES MELLITUS", ["C0011860"], True),
        ("Which genes cause Li-Fraumeni syndrome?", ["C0085390"], True),
        ("Which genes cause Li-Fraumeni syndrome 2?", ["C5882668"], True),  # the longer name wins
        ("genes of autoimmune lymphoproliferative syndrome type I", ["C1328840"], True),
        ("Which genes are associated with ataxia-telangiectsia syndrome?", ["C0004135"], False),  # a typo
        ("Is ATM mutated in ataxia-telangiectasia?", ["C0004135"], True),  # the name without "syndrome"
        ("Which genes underlie colorectl cancer?", ["C0346629"], False),
        ("Which genes are associated with hereditary fructosuria?", ["C9999991", "C9999992"], True),  # two concepts
    ],
)
def test_a_condition_is_read_from_the_question(question: str, ids: list[str], exact: bool) -> None:
    match = CONDITIONS.match(question)
    assert match is not None and [c.id for c in match.conditions] == ids and match.exact == exact


def test_placeholders_and_far_names_match_nothing() -> None:
    assert CONDITIONS.match("Which genes are not provided here?") is None
    assert CONDITIONS.match("Which genes are linked to cystic fibrosis?") is None
    assert CONDITIONS.match("Which genes are in glycolysis?") is None


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which genes are associated with type 2 diabetes mellitus?", "condition_genes"),
        ("How many genes are linked to Li-Fraumeni syndrome?", "condition_genes"),
        ("Which diseases is GCK associated with?", "gene_conditions"),
        ("What conditions are linked to TP53?", "gene_conditions"),
        ("Is IRS1 associated with type 2 diabetes mellitus?", "association_check"),
        ("True or false: Li-Fraumeni syndrome 2 is associated with CHEK2", "association_check"),
        ("Which pathways are enriched for the genes of colorectal cancer?", "condition_enrichment"),
        ("Which genes are in the KEGG Alzheimer disease pathway?", "members"),  # a pathway's name, not a condition
        ("Which genes are associated with Alzheimer disease?", "condition_genes"),
    ],
)
def test_condition_questions_are_read_as_their_kind(question: str, kind: str) -> None:
    plan = read(question, GENES, PATHWAYS)
    assert plan.kind == kind, plan.explain()


def test_without_clinvar_loaded_a_condition_question_is_not_held() -> None:
    plan = read("Which genes are associated with Li-Fraumeni syndrome?", GENES, BARE)
    assert plan.kind == "scope" and plan.scope == "disease_association"
    assert read("Is TP53 associated with Li-Fraumeni syndrome?", GENES, BARE).kind == "scope"
    assert read("Which genes are associated with Li-Fraumeni syndrome?", GENES, PATHWAYS).kind == "condition_genes"


def test_a_link_not_held_is_said_as_such_never_as_false() -> None:
    data = AssociationAbsentData(
        gene=GeneRef(id="HGNC:4195", symbol="GCK"),
        condition=ConditionRef(id="C0085390", name="Li-Fraumeni syndrome"),
        gene_conditions=3,
        condition_genes=2,
        release="ClinVar 2024-07 #ab12",
    )
    reply, evidence = compose_answer(data)
    body = json.loads(reply)
    assert body["answer"].startswith(
        "Flux holds no association between Li-Fraumeni syndrome [C0085390] and GCK "
        "(HGNC:4195) (ClinVar, release ClinVar 2024-07 #ab12)"
    )
    assert "false" not in body["answer"].lower() and body["confidence"] == 0.0 and evidence == []


def test_a_name_starting_with_type_is_read_through_a_typo() -> None:
    match = CONDITIONS.match("which genes are linked to type II diabets mellitus")
    assert match is not None and [c.id for c in match.conditions] == ["C0011860"] and not match.exact
