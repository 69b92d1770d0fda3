"""Condition questions on the demo platform (ClinVar's gene-condition table loaded as a source), answered through
the serving pipeline and checked against the tables read directly: a condition's genes (its name read with typos and
numerals), a gene's conditions, yes/no with the verdict first and "Flux holds no association" for a pair ClinVar does
not link (confidence 0), pathway enrichment; and the generated condition questions' pass rates, which a reader
without the condition kinds lowers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.evals.condition_questions import top_pathways
from dagster_project.evals.kind_truth import Truth, load_truth
from retrieval.kinds import registry
from tests.integration.conftest import ask_api as ask
from tests.support.kind_scorecards import Scorecard, assert_kinds_pass, reader_without, scorecard

CONDITION_KINDS = (
    "condition_genes",
    "gene_conditions",
    "association_check",
    "association_absent",
    "condition_enrichment",
)


@pytest.fixture(scope="module")
def engine(demo_platform: FluxSettings) -> Engine:
    return engine_for(demo_platform.platform_database_url)


@pytest.fixture(scope="module")
def truth(demo_platform: FluxSettings, engine: Engine) -> Truth:
    held = load_truth(graph_driver(demo_platform), engine)
    assert held.conditions is not None and held.conditions.names, "the demo holds ClinVar rows"
    return held


def _genes_of(engine: Engine, concept: str) -> set[str]:
    with engine.connect() as conn:
        return set(
            conn.execute(
                text(
                    "SELECT g.symbol FROM disease_associations a JOIN gene_identifiers g "
                    "USING (hgnc_id) WHERE a.concept_id = :c"
                ),
                {"c": concept},
            ).scalars()
        )


def test_a_conditions_genes_even_misspelt(query_client: TestClient, engine: Engine) -> None:
    answer = ask(query_client, "Which genes are associated with type 2 diabetes mellitus?")
    assert answer["kind"] == "condition_genes", answer["answer"][:200]
    assert {a["gene"]["symbol"] for a in answer["data"]["associations"]} == _genes_of(engine, "C0011860")
    assert answer["answer"].startswith("ClinVar (release ") and answer["confidence"] > 0.9
    typo = ask(query_client, "which genes are linked to type II diabets mellitus")
    assert typo["kind"] == "condition_genes" and [c["id"] for c in typo["data"]["conditions"]] == ["C0011860"]
    assert "closest name" in typo["answer"]


def test_a_condition_named_by_its_mondo_synonym(query_client: TestClient, engine: Engine) -> None:
    """The ClinVar load kept MONDO's synonyms of the demo's conditions; "adult onset diabetes" is one of Type 2
    diabetes mellitus's, and the answer shows the words read beside ClinVar's name."""
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT concept_id, mondo_id FROM condition_synonyms WHERE synonym = 'adult onset diabetes'")
        ).all()
        total = conn.execute(text("SELECT count(*) FROM condition_synonyms")).scalar_one()
    assert [tuple(r) for r in rows] == [("C0011860", "MONDO:0005148")] and total > 100
    answer = ask(query_client, "Which genes are associated with adult onset diabetes?")
    assert answer["kind"] == "condition_genes", answer["answer"][:200]
    assert answer["data"]["asked"] == "adult onset diabetes" and answer["data"]["synonym"]
    assert {a["gene"]["symbol"] for a in answer["data"]["associations"]} == _genes_of(engine, "C0011860")
    assert "Type 2 diabetes mellitus [C0011860] (MONDO's 'adult onset diabetes')" in answer["answer"]
    assert answer["confidence"] > 0.9 and "closest" not in answer["answer"]


def test_a_genes_conditions_and_a_yes_no_either_way(query_client: TestClient, truth: Truth) -> None:
    assert truth.conditions is not None
    answer = ask(query_client, "Which diseases is CHEK2 associated with?")
    assert answer["kind"] == "gene_conditions", answer["answer"][:200]
    assert {a["condition"]["id"] for a in answer["data"]["associations"]} == truth.conditions.conditions["CHEK2"]
    linked = ask(query_client, "Is CHEK2 associated with Li-Fraumeni syndrome 2?")
    assert linked["kind"] == "association_check" and linked["answer"].startswith("Yes: ClinVar (release ")
    assert "C5882668" in {c["id"] for c in linked["citations"]}
    apart = ask(query_client, "True or false: Costello syndrome is associated with KRAS")
    assert apart["kind"] == "association_absent" and apart["confidence"] == 0
    assert apart["answer"].startswith("Flux holds no association between Costello syndrome")
    assert "(ClinVar, release " in apart["answer"] and "false" not in apart["answer"].lower()


def test_pathway_enrichment_for_a_conditions_genes(query_client: TestClient, truth: Truth) -> None:
    assert truth.conditions is not None
    answer = ask(query_client, "Which pathways are enriched for genes associated with colorectal cancer?")
    assert answer["kind"] == "condition_enrichment", answer["answer"][:200]
    rows = answer["data"]["pathways"]
    assert rows and rows[0]["pathway"]["id"] in top_pathways(truth, truth.conditions.genes["C0346629"])
    assert all(0 <= r["p_value"] <= r["q_value"] <= 1 for r in rows)
    assert [r["q_value"] for r in rows] == sorted(r["q_value"] for r in rows)
    assert "hypergeometric" in answer["answer"]


@pytest.fixture(scope="module")
def condition_scorecard(demo_platform: FluxSettings, truth: Truth) -> Iterator[Scorecard]:
    yield scorecard(demo_platform, truth, CONDITION_KINDS)


def test_generated_condition_questions_pass(condition_scorecard: Scorecard) -> None:
    assert_kinds_pass(condition_scorecard, CONDITION_KINDS)


def test_a_reader_without_the_condition_kinds_fails_them(
    demo_platform: FluxSettings, truth: Truth, condition_scorecard: Scorecard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "read_question", reader_without(CONDITION_KINDS, "disease_association"))
    worse, _ = scorecard(demo_platform, truth, CONDITION_KINDS)
    assert worse["kinds_pass_rate"] < condition_scorecard[0]["kinds_pass_rate"] - 0.5
