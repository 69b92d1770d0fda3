"""Hostile input at scale: schemathesis generates requests from the service's own OpenAPI document (valid and
invalid ones, every operation) and runs every check against the real app over the demo platform — no 5xx, status
codes, media types, headers and bodies as documented, invalid data rejected, valid data accepted.

(Driven through Hypothesis directly: schemathesis's pytest fixture loader does not run under pytest 9.)"""

from __future__ import annotations

import pytest
import schemathesis
import schemathesis.checks
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from dagster_project.core.settings import FluxSettings
from retrieval.pipeline import Pipeline
from serving.api import create_app
from tests.integration.test_retrieval_pipeline import fresh_cache

EXAMPLES = 50  # per operation and mode (up to); the two modes together send over 350 requests
schemathesis.checks.load_all_checks()
ALL_CHECKS = list(schemathesis.checks.CHECKS.get_all())


@pytest.fixture(scope="module")
def api_schema(demo_platform: FluxSettings) -> schemathesis.BaseSchema:
    pipeline = Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform))
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(demo_platform, pipeline))


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_every_operation_keeps_its_documented_contract(
    api_schema: schemathesis.BaseSchema, mode: GenerationMode
) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 7
    no_input: list[str] = []
    sent: list[str] = []
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def keeps_contract(case: schemathesis.Case) -> None:
            sent.append(case.operation.label)
            case.call_and_validate(checks=ALL_CHECKS)

        try:
            keeps_contract()
        except Unsatisfiable:
            if mode is GenerationMode.POSITIVE:
                raise
            no_input.append(operation.label)  # nothing to make invalid in a request without parameters
    # GET operations take at most a free-text path id: there is nothing in them to make invalid.
    assert all(label.startswith("GET ") for label in no_input), no_input
    assert len(sent) >= (230 if mode is GenerationMode.POSITIVE else 130), len(sent)
