"""Who may ask, and a contract a client can trust: API keys, rate limits, CORS, and the documented error shapes,
over the demo platform's real stores."""

from __future__ import annotations

import logging
import secrets

import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from retrieval.pipeline import Pipeline
from serving.api import create_app
from serving.security import ApiKeyGuard, key_hash
from tests.integration.test_retrieval_pipeline import fresh_cache
from tests.support.ports import free_port

KEY = "flux_test_key_do_not_log_7f3a9c"
QUESTION = {"question": "What does TP53 do in apoptosis?", "mode": "quick"}


@pytest.fixture(scope="module")
def pipeline(demo_platform: FluxSettings) -> Pipeline:
    return Pipeline.from_settings(demo_platform, cache=fresh_cache(demo_platform))


def secured(settings: FluxSettings, pipeline: Pipeline, **update: object) -> TestClient:
    locked = settings.evolve(api_keys=key_hash(KEY), **update)
    return TestClient(create_app(locked, pipeline), raise_server_exceptions=False)


def test_with_keys_every_endpoint_but_health_needs_a_bearer_key(
    demo_platform: FluxSettings, pipeline: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with secured(demo_platform, pipeline) as client:
        assert client.get("/health").status_code == 200
        for path in ("/openapi.json", "/metrics", "/answers/x", "/conversations/x"):
            denied = client.get(path)
            assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer", path
        missing = client.post("/query", json=QUESTION)
        wrong = client.post("/query", json=QUESTION, headers={"Authorization": "Bearer not-the-key"})
        assert missing.status_code == wrong.status_code == 401
        assert "Authorization: Bearer" in missing.json()["detail"] and wrong.json()["detail"] == "unknown API key"
        ok = client.post("/query", json=QUESTION, headers={"Authorization": f"Bearer {KEY}"})
        assert ok.status_code == 200 and ok.json()["answer_id"]
        bodies = missing.text + wrong.text + ok.text
    assert KEY not in caplog.text and KEY not in bodies and "not-the-key" not in caplog.text


def test_each_key_has_a_rate_limit_with_retry_after(demo_platform: FluxSettings, pipeline: Pipeline) -> None:
    key = f"flux_{secrets.token_urlsafe(16)}"  # a key of its own: the buckets live in Redis across runs
    locked = demo_platform.evolve(api_keys=key_hash(key), api_rate_limit_per_minute=2)
    with TestClient(create_app(locked, pipeline), raise_server_exceptions=False) as client:
        auth = {"Authorization": f"Bearer {key}"}
        codes = [client.get("/metrics", headers=auth).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        limited = client.get("/metrics", headers=auth)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert "rate limit" in limited.json()["detail"]


def test_the_rate_limit_holds_across_workers_through_redis_and_per_worker_without_it(
    demo_platform: FluxSettings,
) -> None:
    """Two guards are two API workers: with Redis they share one bucket per key, so 2 a minute is 2 in all, not 2
    each; with Redis unreachable each falls back to its own bucket and still limits."""
    key = f"flux_{secrets.token_urlsafe(16)}"
    shared = demo_platform.evolve(api_keys=key_hash(key), api_rate_limit_per_minute=2)
    first, second = ApiKeyGuard(shared), ApiKeyGuard(shared)
    auth = f"Bearer {key}"
    first.check(auth)
    second.check(auth)
    with pytest.raises(HTTPException) as limited:
        second.check(auth)
    assert limited.value.status_code == 429 and int(limited.value.headers["Retry-After"]) >= 1
    with pytest.raises(HTTPException):
        first.check(auth)

    dead = shared.evolve(redis_url=f"redis://127.0.0.1:{free_port()}/0")
    alone, other = ApiKeyGuard(dead), ApiKeyGuard(dead)
    alone.check(auth)
    alone.check(auth)
    other.check(auth)  # its own bucket: Redis is not there to share one
    with pytest.raises(HTTPException) as again:
        alone.check(auth)
    assert again.value.status_code == 429


def test_cors_is_closed_unless_an_origin_is_configured(demo_platform: FluxSettings, pipeline: Pipeline) -> None:
    preflight = {"Origin": "https://analyst.example", "Access-Control-Request-Method": "POST"}
    with TestClient(create_app(demo_platform, pipeline)) as closed:
        assert "access-control-allow-origin" not in closed.options("/query", headers=preflight).headers
    opened = demo_platform.evolve(cors_origins="https://analyst.example")
    with TestClient(create_app(opened, pipeline)) as client:
        response = client.options("/query", headers=preflight)
        assert response.headers["access-control-allow-origin"] == "https://analyst.example"


def test_the_documented_error_and_media_types_are_what_the_service_sends(
    demo_platform: FluxSettings, pipeline: Pipeline
) -> None:
    with TestClient(create_app(demo_platform, pipeline), raise_server_exceptions=False) as client:
        spec = client.get("/openapi.json").json()
        assert "HTTPValidationError" not in spec["components"]["schemas"]
        error = spec["components"]["schemas"]["ErrorBody"]
        invalid = client.post("/query", json={"question": 7})
        assert invalid.status_code == 422 and set(invalid.json()) <= set(error["properties"])
        assert isinstance(invalid.json()["detail"], str) and set(error["required"]) <= set(invalid.json())
        documented_422 = spec["paths"]["/query"]["post"]["responses"]["422"]["content"]["application/json"]
        assert documented_422["schema"]["$ref"].endswith("/ErrorBody")
        assert list(spec["paths"]["/metrics"]["get"]["responses"]["200"]["content"]) == [
            client.get("/metrics").headers["content-type"].replace("; charset=utf-8", "")
        ]
        stream = spec["paths"]["/query/stream"]["post"]["responses"]
        assert list(stream["200"]["content"]) == ["text/event-stream"]
        assert list(stream["422"]["content"]) == ["application/json"]


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM chunks",
        "UPDATE documents SET title = 'x'",
        "TRUNCATE pathways",
        "INSERT INTO eval_runs (scorecard, dagster_run_id, index_version, dataset_version, pipeline_version, params,"
        " metrics) VALUES ('x', 'x', 'x', 'x', 'x', '{}', '{}')",
        "DROP TABLE answers",
        "CREATE TABLE intruder (id int)",
    ],
)
def test_serving_connects_as_a_role_that_cannot_change_the_index(
    demo_platform: FluxSettings, pipeline: Pipeline, statement: str
) -> None:
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    assert pipeline.retriever.engine.url.username == demo_platform.serving.serving_role
    with pipeline.retriever.engine.connect() as conn:
        assert conn.execute(text("SELECT current_user")).scalar_one() == demo_platform.serving.serving_role
        assert conn.execute(text("SELECT count(*) FROM chunks")).scalar_one() > 0
    with pytest.raises(DBAPIError, match=r"permission denied|must be owner"), pipeline.retriever.engine.begin() as conn:
        conn.execute(text(statement))
