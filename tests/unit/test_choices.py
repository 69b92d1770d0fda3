"""Multiple-choice questions, pure logic: the options are split off and each asked as its own yes/no question;
checks that differ only in the option join into one check whose answer names the options that hold, never one
option's answer to another question; an option Flux does not hold is named; a choice among checks that do not join
is a literature question."""

from __future__ import annotations

import json

import pytest

from dagster_project.core.settings import PACKAGE_DIR
from retrieval.kinds.registry import compose_answer, read_question
from retrieval.model.answer_data import CheckData, CheckItem, NodeRef
from retrieval.model.plan import MAX_CHOICES
from retrieval.question.choices import multiple_choice
from tests.support.demo_lexicons import demo_lexicons
from tests.unit.test_condition_kinds import GENES, PATHWAYS

DEMO_GENES, DEMO_PATHWAYS = demo_lexicons()
DEMO = PACKAGE_DIR / "sources" / "demo_data"


@pytest.mark.parametrize(
    ("question", "options", "asked"),
    [
        ("Which of GCK, TP53 and PKM is in KEGG glycolysis?", ["GCK", "TP53", "PKM"], "Is GCK in KEGG glycolysis?"),
        (
            "Which of the following pathways contain PKM: glycolysis, apoptosis, cell cycle?",
            ["glycolysis", "apoptosis", "cell cycle"],
            "Does glycolysis contain PKM?",
        ),
        (
            "Which of Metabolism or Disease does Glycolysis belong to?",
            ["Metabolism", "Disease"],
            "Does Glycolysis belong to Metabolism?",
        ),
        ("which one of 'GCK' / 'PKM' belongs to glycolysis", ["GCK", "PKM"], "Does GCK belong to glycolysis?"),
    ],
)
def test_the_options_are_split_off_and_each_asked_in_the_sentence_s_words(
    question: str, options: list[str], asked: str
) -> None:
    choice = multiple_choice(question)
    assert choice is not None and choice.options == options
    assert choice.asked(options[0]) == asked


@pytest.mark.parametrize(
    "question",
    [
        "Which of the pathways in Reactome contain TP53?",
        "Which of these genes are kinases?",
        "Which of TP53's pathways are signalling pathways?",
        "Which pathways contain TP53 and MDM2?",
    ],
)
def test_a_question_with_one_option_or_none_is_no_choice(question: str) -> None:
    assert multiple_choice(question) is None


def test_gene_options_join_into_one_membership_check() -> None:
    for question in (
        "Which of GCK, TP53 and PKM is a member of KEGG glycolysis?",
        "Which of these genes are in KEGG glycolysis: GCK, TP53, PKM?",
    ):
        plan = read_question(question, DEMO_GENES, DEMO_PATHWAYS)
        assert (plan.kind, plan.relation, plan.choice) == ("check", "member_of", True), plan.explain()
        assert [e.id for e in plan.subjects] == ["HGNC:4195", "HGNC:11998", "HGNC:9021"]
        assert [e.id for e in plan.objects] == ["hsa00010"]


def test_pathway_options_join_on_the_object_side_and_a_negated_choice_keeps_its_polarity() -> None:
    plan = read_question(
        "Which of the following pathways contain PKM: glycolysis, apoptosis, cell cycle?", DEMO_GENES, DEMO_PATHWAYS
    )
    assert (plan.kind, plan.relation, plan.choice, [e.id for e in plan.subjects]) == (
        "check",
        "member_of",
        True,
        ["HGNC:9021"],
    )
    assert [e.id for e in plan.objects] == ["R-HSA-70171", "R-HSA-109581", "R-HSA-1640170"]
    negated = read_question("Which of GCK, TP53 and PKM is not in KEGG glycolysis?", DEMO_GENES, DEMO_PATHWAYS)
    assert (negated.choice, negated.negated) == (True, True)


def test_an_option_the_index_does_not_hold_is_named() -> None:
    plan = read_question("Which of GLA, TP53 is associated with Fabry disease?", GENES, PATHWAYS)
    assert plan.kind == "not_found" and plan.absent is not None and plan.absent.asked in {"GLA", "Fabry disease"}


def test_a_choice_among_gene_condition_pairs_is_no_single_pair_s_answer() -> None:
    plan = read_question("Which of GCK, TP53 and IRS1 are associated with type 2 diabetes mellitus?", GENES, PATHWAYS)
    assert plan.kind == "literature", plan.explain()
    assert {e.id for e in plan.entities} >= {"HGNC:4195", "HGNC:11998", "HGNC:6125"}


def test_options_read_as_different_relations_are_not_joined() -> None:
    plan = read_question("Which of Metabolism or Disease does Glycolysis belong to?", DEMO_GENES, DEMO_PATHWAYS)
    assert plan.kind == "literature", plan.explain()


def test_twenty_options_are_each_checked() -> None:
    rows = (DEMO / "hgnc" / "hgnc_complete_set.txt").read_text().splitlines()[1:21]
    symbols = [row.split("\t")[1] for row in rows]
    plan = read_question(f"Which of {', '.join(symbols)} is in KEGG glycolysis?", DEMO_GENES, DEMO_PATHWAYS)
    assert (plan.kind, plan.choice, len(plan.subjects)) == ("check", True, 20) and MAX_CHOICES >= 20


def _item(symbol: str, holds: bool) -> CheckItem:
    gene = NodeRef(id=f"HGNC:{symbol}", name=symbol, source="hgnc")
    return CheckItem(subject=gene, object=NodeRef(id="hsa00010", name="Glycolysis", source="kegg"), holds=holds)


def test_the_answer_names_the_options_that_hold_and_cites_them() -> None:
    data = CheckData(relation="member_of", items=[_item("GCK", True), _item("TP53", False), _item("PKM", True)])
    reply = json.loads(compose_answer(data.model_copy(update={"choice": True}))[0])
    assert reply["answer"].startswith("Of the 3 options, 2 hold: GCK and PKM.")
    assert "HGNC:GCK" in reply["citations"] and "HGNC:PKM" in reply["citations"]
    negated = json.loads(compose_answer(data.model_copy(update={"choice": True, "negated": True}))[0])
    assert negated["answer"].startswith("Of the 3 options, 1 holds: TP53.")
    none = CheckData(relation="member_of", items=[_item("TP53", False)], choice=True)
    assert json.loads(compose_answer(none)[0])["answer"].startswith("Of the 1 options, none holds.")
    # Without `choice` the same items are a statement about all of them, answered yes or no.
    assert json.loads(compose_answer(data)[0])["answer"].startswith("No: 2 of the 3 hold.")
