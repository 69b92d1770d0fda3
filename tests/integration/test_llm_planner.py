"""The LLM proposes the plan, the executor answers: the OpenAI-compatible provider asks for structured output against
the plan schema, the scripted server (tests/support/llm_server.py) enforces the request shape OpenAI documents for
`response_format` (API reference, Chat Completions; Structured Outputs guide, "Supported schemas"), and every
proposal that cannot be used — malformed JSON, an unknown relation, an entity the question does not name or the index
does not hold, a shape no kind executes, a server error — leaves the rules' plan in place with a warning.

The proposals are read against the demo's lexicons (no services); the last test asks through the served pipeline on
the demo platform."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from dagster_project.core.settings import FluxSettings
from retrieval.answering.llm import PLAN_PROMPT, OpenAICompatibleProvider
from retrieval.answering.llm_transport import TransportOptions
from retrieval.kinds import proposal
from retrieval.model.plan import Plan, plan_schema
from retrieval.pipeline import Pipeline
from tests.integration.test_retrieval_pipeline import fresh_cache
from tests.support.demo_lexicons import demo_lexicons
from tests.support.llm_server import LLMReply, LLMServer, citing_responder, response_format_problem
from tests.support.plans import read

QUESTION = "Would you say mismatch repair lives somewhere beneath DNA repair?"  # the rules leave it to literature


def _plan(**fields: Any) -> str:
    payload = {
        "operation": "check",
        "relation": "part_of",
        "subjects": [{"type": "pathway", "text": "Mismatch Repair"}],
        "objects": [{"type": "pathway", "text": "DNA Repair"}],
        "returns": None,
        "depth": None,
        "source": "",
        "field": None,
        "scope": None,
    }
    payload.update(fields)
    return json.dumps(payload)


@pytest.fixture
def provider(llm_server: LLMServer) -> Iterator[OpenAICompatibleProvider]:
    options = TransportOptions(timeout=2.0, max_attempts=2, requests_per_minute=60_000, backoff_initial=0.01)
    with OpenAICompatibleProvider(llm_server.base_url, "test-model", None, options, sleep=lambda _: None) as client:
        yield client


def _propose(provider: OpenAICompatibleProvider, question: str = QUESTION) -> tuple[Plan, list[str], Plan]:
    genes, pathways = demo_lexicons()
    rules = read(question, genes, pathways)
    plan, warnings = proposal.propose(question, provider, genes, pathways, rules)
    return plan, warnings, rules


def test_a_valid_proposal_is_used_and_the_request_asks_for_the_plan_schema(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    llm_server.script_plans(_plan())
    plan, warnings, _ = _propose(provider)
    assert warnings == [] and plan.proposed_by == "llm" and plan.kind == "check"
    assert ([e.id for e in plan.subjects], [e.id for e in plan.objects]) == (["R-HSA-5358508"], ["R-HSA-73894"])
    body = llm_server.bodies[-1]
    assert body is not None and body["messages"][0]["content"] == PLAN_PROMPT
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == plan_schema() and response_format_problem(fmt) == ""


def test_the_server_rejects_a_schema_strict_mode_does_not_allow() -> None:
    loose = plan_schema()
    loose["properties"]["subjects"]["items"].pop("additionalProperties")
    problem = response_format_problem(
        {"type": "json_schema", "json_schema": {"name": "flux_plan", "strict": True, "schema": loose}}
    )
    assert "additionalProperties" in problem and "subjects.items" in problem
    missing = plan_schema()
    missing["required"].remove("scope")
    assert "required" in response_format_problem(
        {"type": "json_schema", "json_schema": {"name": "flux_plan", "strict": True, "schema": missing}}
    )
    assert response_format_problem({"type": "json_schema", "json_schema": {"name": "bad name!", "schema": {}}})
    assert response_format_problem({"type": "xml"})


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (LLMReply.text("{'operation': 'check',"), "not JSON"),
        (LLMReply.text(_plan(relation="regulates")), "schema violation at relation"),
        (LLMReply.text(_plan(objects=[{"type": "pathway", "text": "Apoptosis"}])), "which the question does not"),
        (LLMReply.text(_plan(objects=[{"type": "pathway", "text": "Frobnication"}])), "which the index does not hold"),
        (LLMReply.text(_plan(relation="member_of")), "does not join"),
        (LLMReply.text(_plan(operation="path", objects=[])), "no kind answers"),
        (LLMReply.text(_plan(extra="field")), "schema violation"),
        (LLMReply.error(500), "unavailable"),
        (LLMReply.error(400, body='{"error": {"message": "bad", "type": "invalid_request_error"}}'), "unavailable"),
    ],
)
def test_an_unusable_proposal_keeps_the_rules_plan_with_a_warning(
    llm_server: LLMServer, provider: OpenAICompatibleProvider, reply: LLMReply, why: str
) -> None:
    llm_server.script_plans(reply, reply)  # a retried 5xx gets the same again
    plan, warnings, rules = _propose(provider)
    assert plan == rules and plan.proposed_by == "rules" and plan.kind == "literature"
    assert len(warnings) == 1 and why in warnings[0] and "read by the rules" in warnings[0], warnings


def test_the_model_reads_only_what_the_rules_leave_to_the_literature_and_agrees_when_it_says_so(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    plan, warnings, rules = _propose(provider, "Is Glycolysis part of Metabolism?")
    assert plan == rules and plan.kind == "check" and warnings == [] and llm_server.requests == []
    plan, warnings, rules = _propose(provider)  # no plan scripted: the model leaves it to the literature too
    assert plan == rules and warnings == [] and len(llm_server.requests) == 1


def test_a_proposal_naming_something_flux_does_not_hold_is_rejected_not_guessed(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    question = "Is CTNNB1 in the Wnt signaling pathway?"
    llm_server.script_plans(
        _plan(
            relation="member_of",
            subjects=[{"type": "gene", "text": "CTNNB1"}],
            objects=[{"type": "pathway", "text": "Wnt signaling pathway"}],
        )
    )
    plan, warnings, rules = _propose(provider, question)
    assert plan == rules and "which the index does not hold" in warnings[0]


def test_a_reaction_flux_does_not_hold_is_rejected_not_guessed(
    llm_server: LLMServer, provider: OpenAICompatibleProvider
) -> None:
    # The demo holds Glycolysis's reactions, not the TCA cycle's: "steps" names none of them.
    question = "What does the TCA cycle turn over, step by step?"
    llm_server.script_plans(
        _plan(
            operation="list",
            relation="participates_in",
            subjects=[],
            objects=[{"type": "reaction", "text": "steps"}],
            returns="reaction",
        )
    )
    plan, warnings, rules = _propose(provider, question)
    assert plan == rules and warnings == [
        "the model's plan was not used (it names reaction 'steps', which the index does not hold); read by the rules"
    ]


def test_phrasing_the_rules_miss_is_read_by_the_model_and_answered_from_the_graph(
    demo_platform: FluxSettings, llm_server: LLMServer
) -> None:
    question = QUESTION
    genes, pathways = demo_lexicons()
    assert read(question, genes, pathways).kind == "literature"  # the rules do not read it as a yes/no check

    def respond(body: dict[str, Any]) -> str:
        if body.get("response_format", {}).get("type") == "json_schema":
            return _plan(
                subjects=[{"type": "pathway", "text": "mismatch repair"}],
                objects=[{"type": "pathway", "text": "DNA repair"}],
            )
        return citing_responder(body)

    llm_server.responder = respond
    provider = OpenAICompatibleProvider(
        llm_server.base_url,
        "test-model",
        None,
        TransportOptions(timeout=5.0, max_attempts=1, requests_per_minute=60_000),
    )
    pipeline = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform), provider=provider)
    answer = pipeline.ask(question, "quick")
    assert answer.plan is not None and answer.plan.proposed_by == "llm" and answer.kind == "check"
    assert answer.data is not None and answer.data.items[0].holds  # type: ignore[union-attr]
    assert {"R-HSA-5358508", "R-HSA-73894"} <= {c.id for c in answer.citations}
