"""The plan language and the kind registry, pure logic: what validation refuses, the schema a model is held to, how
questions in analysts' words become yes/no checks, connections and missing fact types, and that every kind is
dispatched through the registry."""

from __future__ import annotations

import json

import pytest

from retrieval.kinds import registry
from retrieval.kinds.registry import compose_answer, kind_for, turn_context
from retrieval.kinds.scope import literature_may_answer
from retrieval.model.answer import FinalAnswer
from retrieval.model.answer_data import CheckData, CheckItem, ConnectionData, GeneRef, GraphPath, NodeRef, ScopeData
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import Absent, Entity, Plan, PlanError, plan_schema, validate
from tests.support.demo_lexicons import demo_lexicons
from tests.support.llm_server import response_format_problem
from tests.support.plans import read

GLYCOLYSIS = Entity(type="pathway", id="R-HSA-70171", name="Glycolysis", source="reactome")
METABOLISM = Entity(type="pathway", id="R-HSA-1430728", name="Metabolism", source="reactome")
TP53 = Entity(type="gene", id="HGNC:11998", name="TP53", source="hgnc")


def ask(question: str) -> Plan:
    return read(question, *demo_lexicons())


@pytest.mark.parametrize(
    ("plan", "error"),
    [
        (Plan(kind="check", operation="check", relation="part_of", subjects=[GLYCOLYSIS]), "needs 2 entities"),
        (
            Plan(kind="check", operation="check", relation="member_of", subjects=[GLYCOLYSIS], objects=[METABOLISM]),
            "member_of does not join pathway R-HSA-70171",
        ),
        (Plan(kind="members", operation="list", relation="member_of", objects=[GLYCOLYSIS]), "says what it returns"),
        (
            Plan(
                kind="connection",
                operation="path",
                relation="connected_to",
                subjects=[TP53],
                objects=[GLYCOLYSIS],
                depth=9,
            ),
            "at most 4 relationships",
        ),
        (Plan(kind="scope", operation="abstain"), "names the fact type or the entity"),
        (Plan(kind="members", operation="list", objects=[GLYCOLYSIS], returns="gene"), "needs a relation"),
        (
            Plan(kind="members", operation="list", relation="member_of", objects=[GLYCOLYSIS] * 9, returns="gene"),
            "at most 8 entities",
        ),
    ],
)
def test_validation_refuses_plans_that_cannot_run(plan: Plan, error: str) -> None:
    with pytest.raises(PlanError, match=error):
        validate(plan)


def test_valid_plans_pass_and_read_back_in_one_line() -> None:
    plan = validate(
        Plan(
            kind="check", operation="check", relation="part_of", subjects=[GLYCOLYSIS], objects=[METABOLISM], depth=None
        )
    )
    assert plan.explain() == (
        "check part_of R-HSA-70171 'Glycolysis' → R-HSA-1430728 'Metabolism' depth any  [check, by rules]"
    )
    assert validate(Plan(kind="not_found", operation="abstain", absent=Absent(what="gene", asked="ZQX1")))


def test_the_schema_a_model_proposes_against_is_valid_for_strict_structured_output() -> None:
    schema = plan_schema()
    assert (
        response_format_problem(
            {"type": "json_schema", "json_schema": {"name": "flux_plan", "strict": True, "schema": schema}}
        )
        == ""
    )
    assert set(schema["properties"]["relation"]["anyOf"][0]["enum"]) >= {"member_of", "part_of", "connected_to"}


@pytest.mark.parametrize(
    ("question", "relation", "subjects", "objects"),
    [
        ("Is Glycolysis part of Metabolism?", "part_of", ["R-HSA-70171"], ["R-HSA-1430728"]),
        ("Does Mismatch Repair fall under DNA Repair?", "part_of", ["R-HSA-5358508"], ["R-HSA-73894"]),
        ("Does Metabolism contain Glycolysis?", "part_of", ["R-HSA-70171"], ["R-HSA-1430728"]),
        ("glycolysis under metabolism?", "part_of", ["R-HSA-70171"], ["R-HSA-1430728"]),
        (
            "Metabolism of carbohydrates is a sub-pathway of Metabolism, right?",
            "part_of",
            ["R-HSA-71387"],
            ["R-HSA-1430728"],
        ),
        ("Is R-HSA-5358508 a signalling pathway?", "in_category", ["R-HSA-5358508"], ["signalling"]),
        (
            "Is the KEGG cell cycle (hsa04110) classed as signal transduction?",
            "in_category",
            ["hsa04110"],
            ["signalling"],
        ),
        ("Is PI3K-Akt signaling a metabolic pathway?", "in_category", ["hsa04151"], ["metabolic"]),
        ("True or false: PKM is a member of KEGG glycolysis", "member_of", ["HGNC:9021"], ["hsa00010"]),
        ("is mdm2 a member of the p53 signalling pathway", "member_of", ["HGNC:6973"], ["hsa04115"]),
        ("Does KEGG glycolysis contain C00022?", "member_of", ["C00022"], ["hsa00010"]),
        ("Is Signaling by Insulin receptor equivalent to hsa04910?", "corresponds_to", ["R-HSA-74752"], ["hsa04910"]),
    ],
)
def test_yes_no_questions_become_checks_with_the_pair_in_question_order(
    question: str, relation: str, subjects: list[str], objects: list[str]
) -> None:
    plan = ask(question)
    assert (plan.kind, plan.relation) == ("check", relation), plan.reason
    assert ([e.id for e in plan.subjects], [e.id for e in plan.objects]) == (subjects, objects)


@pytest.mark.parametrize(
    ("question", "ends"),
    [
        ("What connects Apoptosis and the p53 signaling pathway?", ["R-HSA-109581", "hsa04115"]),
        ("What links TP53 and MDM2?", ["HGNC:11998", "HGNC:6973"]),
        ("What links PCNA and Mismatch Repair?", ["HGNC:8729", "R-HSA-5358508"]),
        ("What connects R-HSA-70326 and R-HSA-1428517?", ["R-HSA-70326", "R-HSA-1428517"]),
    ],
)
def test_what_connects_two_things_is_a_bounded_path_between_exactly_those(question: str, ends: list[str]) -> None:
    plan = ask(question)
    assert (plan.kind, plan.operation, [e.id for e in plan.entities], plan.depth) == ("connection", "path", ends, 4)


@pytest.mark.parametrize(
    "question",
    [
        "What evidence links KRAS mutations to resistance to EGFR inhibitors in colorectal cancer?",
        "How does the extrinsic apoptosis pathway get linked to the mitochondria?",
        "How does PCNA interact with MSH6 during mismatch repair?",
    ],
)
def test_literature_questions_with_link_words_are_not_connections(question: str) -> None:
    assert ask(question).kind != "connection"


@pytest.mark.parametrize(
    "question",
    [
        # PubMedQA's own question: its "in" is no hierarchy, and its clause names no pathway Flux lacks.
        "Do mitochondria play a role in remodelling lace plant leaves during programmed cell death?",
        "Does glycolysis play a role in programmed cell death?",
        "Is glycolysis involved in programmed cell death?",
        "Is glycolysis required in programmed cell death?",
    ],
)
def test_a_function_in_a_pathway_is_no_hierarchy_check_and_no_missing_name(question: str) -> None:
    plan = ask(question)
    assert (plan.kind, plan.operation) == ("literature", "search"), plan.explain()
    assert "R-HSA-5357801" in [e.id for e in plan.entities]


def test_a_hierarchy_word_beside_a_function_word_is_still_a_part_of_check() -> None:
    plan = ask("Is glycolysis, which is important, part of programmed cell death?")
    assert (plan.kind, plan.relation, [e.id for e in plan.objects]) == ("check", "part_of", ["R-HSA-5357801"])


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("What is the mechanism of action of metformin?", "drug"),
        ("Which drugs target the MAPK pathway?", "drug"),
        ("Is rs1042522 in TP53 pathogenic?", "variant"),
        ("Where is GAPDH expressed?", "expression"),
        ("Which clinical trails are recruiting for MDM2 inhibitors?", "clinical_trial"),
        ("What is the crystal structure of hexokinase 2?", "structure"),
    ],
)
def test_a_fact_type_flux_does_not_hold_is_named(question: str, missing: str) -> None:
    plan = ask(question)
    assert (plan.kind, plan.operation, plan.scope) == ("scope", "abstain", missing), plan.reason


def test_with_clinvar_loaded_an_unknown_gene_or_condition_is_not_found() -> None:
    # The demo holds ClinVar's table, but not FBN1, BRCA1 or Lynch syndrome.
    for question, asked in (
        ("True or false: Marfan syndrome associates Gene FBN1?", "FBN1"),
        ("Which diseases is BRCA1 linked to?", "BRCA1"),
        ("Which genes are associated with Lynch syndrome?", "Lynch syndrome"),
    ):
        plan = ask(question)
        assert plan.kind == "not_found" and plan.absent is not None and plan.absent.asked == asked, plan.explain()


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # Reactions are held for some pathways: whether for this one is the executor's finding, not the reader's.
        ("Which reactions does the Citric acid cycle include?", "pathway_reactions"),
        ("What is downstream of PTEN?", "reaction_walk"),
        ("What is the rate-limiting step of the urea cycle?", "reaction_scope"),
    ],
)
def test_reaction_questions_go_to_the_reaction_kinds(question: str, kind: str) -> None:
    assert ask(question).kind == kind


@pytest.mark.parametrize(
    "question",
    [
        "Which genes are in Reactome Gene expression (Transcription)?",  # a pathway's name, not expression data
        "Is the KEGG insulin signaling pathway a disease pathway?",  # a category check
        "What is the mechanism of action of caspase-3 cleavage?",
    ],
)
def test_words_of_names_and_categories_are_not_missing_fact_types(question: str) -> None:
    assert (ask(question).scope != "expression" and ask(question).kind != "scope") or "caspase" in question


def test_only_a_listing_of_a_missing_fact_type_is_kept_from_the_literature() -> None:
    listing = ask("Which genes are associated with Lynch syndrome?")
    mechanism = ask("What does the BRAF V600E mutation do to ERK signalling?")
    assert not literature_may_answer("Which genes are associated with Lynch syndrome?", listing)
    assert mechanism.kind == "scope" and literature_may_answer("What does the BRAF V600E mutation do?", mechanism)


def test_every_plan_shape_the_kinds_answer_is_dispatched_to_one_kind() -> None:
    shapes = {
        "members": Plan(kind="", operation="list", relation="member_of", objects=[GLYCOLYSIS], returns="gene"),
        "gene_pathways": Plan(kind="", operation="count", relation="member_of", subjects=[TP53], returns="pathway"),
        "hierarchy": Plan(kind="", operation="list", relation="part_of", subjects=[GLYCOLYSIS], returns="pathway"),
        "check": Plan(kind="", operation="check", relation="part_of", subjects=[GLYCOLYSIS], objects=[METABOLISM]),
        "connection": Plan(
            kind="", operation="path", relation="connected_to", subjects=[TP53], objects=[GLYCOLYSIS], depth=4
        ),
        "shared_genes": Plan(kind="", operation="intersect", relation="member_of", objects=[GLYCOLYSIS, METABOLISM]),
        "overview": Plan(kind="", operation="describe", subjects=[GLYCOLYSIS]),
        "scope": Plan(kind="", operation="abstain", scope="drug"),
        "literature": Plan(kind="", operation="search"),
    }
    assert {name: getattr(kind_for(plan), "name", None) for name, plan in shapes.items()} == {n: n for n in shapes}
    assert kind_for(Plan(kind="", operation="path", relation="connected_to", subjects=[TP53])) is None
    priorities = [p for p, _ in registry.RECOGNISERS]
    assert priorities == sorted(priorities) and len(set(priorities)) == len(priorities)


def _answer(data: object) -> FinalAnswer:
    return FinalAnswer(question="q", answer="a", confidence=0.9, kind=data.kind, data=data)  # type: ignore[attr-defined]


def test_a_yes_no_answer_starts_with_the_verdict_and_cites_the_lineage() -> None:
    lineage = [
        NodeRef(id="R-HSA-70171", name="Glycolysis", source="reactome"),
        NodeRef(id="R-HSA-70326", name="Glucose metabolism", source="reactome"),
        NodeRef(id="R-HSA-1430728", name="Metabolism", source="reactome"),
    ]
    yes = CheckData(
        relation="part_of", items=[CheckItem(subject=lineage[0], object=lineage[-1], holds=True, path=lineage)]
    )
    reply = json.loads(compose_answer(yes)[0])
    assert reply["answer"].startswith('Yes: Reactome R-HSA-70171 "Glycolysis" is part of Reactome R-HSA-1430728')
    assert "through R-HSA-70171" in reply["answer"] and reply["citations"] == [n.id for n in lineage]
    no = yes.model_copy(
        update={"items": [CheckItem(subject=lineage[-1], object=lineage[0], holds=False, detail="the other way round")]}
    )
    assert json.loads(compose_answer(no)[0])["answer"].startswith("No: it is the other way round")
    assert turn_context("q", _answer(yes)).pathways == ["R-HSA-70171", "R-HSA-1430728"]


def test_a_connection_answer_ranks_what_links_the_two_and_says_when_nothing_does() -> None:
    a = NodeRef(id="R-HSA-5358508", name="Mismatch Repair", source="reactome")
    b = NodeRef(id="R-HSA-73894", name="DNA Repair", source="reactome")
    data = ConnectionData(
        left=a,
        right=b,
        shared_genes=[GeneRef(id="HGNC:7127", symbol="MLH1")],
        common_ancestors=[b],
        paths=[GraphPath(nodes=[a, b], relations=["SUBPATHWAY_OF"])],
        max_steps=4,
    )
    text = json.loads(compose_answer(data)[0])["answer"]
    assert text.index("is part of") < text.index("share 1 member genes: MLH1")
    assert "A path of" not in text  # the one-step path is the containment already stated
    empty = json.loads(compose_answer(ConnectionData(left=a, right=b, max_steps=4))[0])["answer"]
    assert empty.startswith("No connection between") and "within 4 steps" in empty
    broad = json.loads(compose_answer(ConnectionData(left=a, right=b, max_steps=4, too_broad=True))[0])["answer"]
    assert "too broad to finish in time" in broad


def test_abstaining_kinds_compose_with_confidence_zero() -> None:
    scope = ScopeData(missing="drug", about=[NodeRef(id="hsa04010", name="MAPK signaling pathway", source="kegg")])
    reply = json.loads(compose_answer(scope)[0])
    assert reply["confidence"] == 0.0 and reply["answer"].startswith("Flux does not hold that: it holds no drug")
    assert json.loads(compose_answer(CheckData(relation="member_of", items=[]))[0])["confidence"] == 0.95


LOWER_CASE_SYMBOLS = GeneLexicon(
    [("HGNC:4467", "GPR132", "G protein-coupled receptor 132", [], []), ("HGNC:18094", "DEFB114", "defensin", [], [])]
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("what type of gene is gpr132?", "gene_facts"),
        ("which kegg or reactome pathways have defb114 as a member?", "gene_pathways"),
    ],
)
def test_a_lower_case_symbol_shaped_like_a_kegg_id_is_the_gene(question: str, kind: str) -> None:
    """ "gpr132" has the shape of another organism's KEGG id (three letters, three digits); the gene table holds it."""
    plan = registry.read_question(question, LOWER_CASE_SYMBOLS, PathwayLexicon([]))
    assert plan.kind == kind, plan.explain()
    assert (
        registry.read_question("is mmu04110 in the index?", LOWER_CASE_SYMBOLS, PathwayLexicon([])).kind == "not_found"
    )
