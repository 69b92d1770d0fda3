"""Reaction questions on the demo platform, answered from Neo4j through the serving pipeline and checked against the
reaction tables read directly (Postgres): a pathway's reactions in PRECEDES order, a reaction's participants, the
reactions of a gene or compound, walks downstream and upstream (each step a real edge; hubs capped), a pathway Flux
holds no reactions for; and the generated reaction questions' pass rates, which a deliberately worse reader lowers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.evals.kind_truth import Truth, load_truth
from retrieval.kinds import registry
from tests.integration.conftest import ask_api as ask
from tests.support.kind_scorecards import Scorecard, assert_kinds_pass, reader_without, scorecard

GLYCOLYSIS = "R-HSA-70171"
REACTION_KINDS = ("pathway_reactions", "reaction_participants", "entity_reactions", "reaction_walk", "reaction_scope")


@pytest.fixture(scope="module")
def engine(demo_platform: FluxSettings) -> Engine:
    return engine_for(demo_platform.platform_database_url)


@pytest.fixture(scope="module")
def truth(demo_platform: FluxSettings, engine: Engine) -> Truth:
    held = load_truth(graph_driver(demo_platform), engine)
    assert held.reactions is not None and held.reactions.names, "the demo holds Glycolysis reactions"
    return held


def _rows(engine: Engine, sql: str, **params: object) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), params)]


def test_a_pathways_reactions_come_in_precedes_order(query_client: TestClient, engine: Engine) -> None:
    answer = ask(query_client, "Which reactions does Reactome's Glycolysis include?")
    assert answer["kind"] == "pathway_reactions", answer["answer"][:200]
    listed = [r["id"] for r in answer["data"]["reactions"]]
    held = {r for (r,) in _rows(engine, "SELECT reaction_id FROM reactions WHERE pathway_id = :p", p=GLYCOLYSIS)}
    assert set(listed) == held and len(listed) >= 10
    steps = _rows(engine, "SELECT preceding_id, following_id FROM reaction_steps")
    position = {rid: i for i, rid in enumerate(listed)}
    inside = [(a, b) for a, b in steps if a in position and b in position]
    assert inside and all(position[a] < position[b] for a, b in inside)
    assert answer["data"]["ordered"] and f"{len(held)} reactions" in answer["answer"]
    assert answer["confidence"] > 0.9 and GLYCOLYSIS in {c["id"] for c in answer["citations"]}


def test_a_reactions_participants_are_the_tables(query_client: TestClient, engine: Engine) -> None:
    answer = ask(query_client, "What are the inputs and outputs of R-HSA-70420?")
    assert answer["kind"] == "reaction_participants", answer["answer"][:200]
    got = {(p["role"], p["id"]) for p in answer["data"]["participants"] if p["entity"] != "gene"}
    want = set(
        _rows(
            engine,
            "SELECT role, entity_id FROM reaction_participants WHERE reaction_id = 'R-HSA-70420' "
            "AND entity_kind <> 'gene'",
        )
    )
    assert got == want and ("input", "CHEBI:30616") in got  # ATP in
    assert "consumes" in answer["answer"] and "produces" in answer["answer"]


def test_the_reactions_of_a_compound_and_a_gene(query_client: TestClient, truth: Truth) -> None:
    assert truth.reactions is not None
    answer = ask(query_client, "Which reactions consume ATP?")
    assert answer["kind"] == "entity_reactions", answer["answer"][:200]
    consumed = {rid for rid, role in truth.reactions.involved["CHEBI:30616"] if role == "input"}
    assert {i["reaction"]["id"] for i in answer["data"]["involvements"]} == consumed and consumed
    gck = truth.genes["GCK"].hgnc_id
    answer = ask(query_client, "In which reactions does GCK take part?")
    assert {i["reaction"]["id"] for i in answer["data"]["involvements"]} == {
        rid for rid, _ in truth.reactions.involved[gck]
    }
    assert any(i["via"] for i in answer["data"]["involvements"])  # as a member of the hexokinase set


def test_a_walk_downstream_follows_real_edges_and_stops_at_hubs(query_client: TestClient, truth: Truth) -> None:
    assert truth.reactions is not None
    answer = ask(query_client, "What happens after R-HSA-70420?")
    assert answer["kind"] == "reaction_walk", answer["answer"][:200]
    steps = answer["data"]["steps"]
    assert steps and all(s["depth"] <= 3 for s in steps)
    for step in steps:  # each step is a PRECEDES edge or an output of one consumed by the next
        source, target, through = step["source"]["id"], step["target"]["id"], step["through"]
        roles = truth.reactions.roles
        assert (
            (source, target) in truth.reactions.steps
            if through is None
            else through["id"] in roles[source]["output"] and through["id"] in roles[target]["input"]
        ), step
        assert through is None or not truth.reactions.is_hub(through["id"])
    assert truth.reactions.next_reactions("R-HSA-70420", True) <= {s["target"]["id"] for s in steps}
    hub = ask(query_client, "What is downstream of ATP?")
    assert hub["data"]["start_is_hub"] and not hub["data"]["steps"]
    assert "does not walk downstream" in hub["answer"]


def test_a_pathway_without_reactions_is_not_answered(query_client: TestClient) -> None:
    answer = ask(query_client, "Which reactions does Apoptosis include?")
    assert answer["kind"] == "reaction_scope" and answer["confidence"] == 0
    assert answer["answer"].startswith("Flux does not hold that: it holds reactions for")
    assert "Glycolysis" in answer["answer"] and "live mode" in answer["answer"]


@pytest.fixture(scope="module")
def reaction_scorecard(demo_platform: FluxSettings, truth: Truth) -> Iterator[Scorecard]:
    yield scorecard(demo_platform, truth, REACTION_KINDS)


def test_generated_reaction_questions_pass(reaction_scorecard: Scorecard) -> None:
    assert_kinds_pass(reaction_scorecard, REACTION_KINDS)


def test_a_reader_without_the_reaction_kinds_fails_them(
    demo_platform: FluxSettings, truth: Truth, reaction_scorecard: Scorecard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "read_question", reader_without(REACTION_KINDS, "reaction"))
    worse, _ = scorecard(demo_platform, truth, REACTION_KINDS)
    assert worse["kinds_pass_rate"] < reaction_scorecard[0]["kinds_pass_rate"] - 0.5
