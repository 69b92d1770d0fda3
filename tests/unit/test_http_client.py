"""The shared live-mode HTTP client against a local fault-injecting server: retries, Retry-After, timeouts,
malformed bodies, typed errors with the URL."""

from __future__ import annotations

import time

import pytest

from dagster_project.sources.http import (
    HttpClient,
    MalformedResponseError,
    RateLimiter,
    SourceHTTPError,
    SourceTimeoutError,
    parse_retry_after,
)
from tests.support.fault_server import FaultServer, Reply


def client(server: FaultServer, **kwargs: object) -> HttpClient:
    options = {"contact_email": "team@example.org", "requests_per_second": 1000, "timeout": 0.5,
               "max_attempts": 3, "backoff_initial": 0.01, "backoff_max": 0.05} | kwargs
    return HttpClient(server.url, **options)  # type: ignore[arg-type]


def test_429_with_retry_after_is_honoured_then_succeeds(fault_server: FaultServer) -> None:
    fault_server.script("/list", Reply.error(429, retry_after="1"), Reply.ok("path:hsa00010\tGlycolysis"))
    with client(fault_server, backoff_max=2.0) as http:
        assert http.get_text("list") == "path:hsa00010\tGlycolysis"
    first, second = fault_server.hits("/list")
    assert second.at - first.at >= 0.9, "the client must wait as long as Retry-After asks"
    assert "mailto:team@example.org" in first.headers["User-Agent"]


def test_5xx_is_retried_up_to_the_limit_then_fails_with_the_url(fault_server: FaultServer) -> None:
    fault_server.default("/flaky", Reply.error(503))
    with client(fault_server) as http, pytest.raises(SourceHTTPError) as err:
        http.get_text("flaky")
    assert len(fault_server.hits("/flaky")) == 3
    assert err.value.status == 503 and err.value.url.endswith("/flaky")
    assert "gave up after 3 attempts" in str(err.value)


def test_client_errors_are_not_retried(fault_server: FaultServer) -> None:
    fault_server.default("/missing", Reply.error(404))
    with client(fault_server) as http, pytest.raises(SourceHTTPError) as err:
        http.get_text("missing")
    assert len(fault_server.hits("/missing")) == 1 and err.value.status == 404


def test_timeouts_are_retried_and_reported_as_timeouts(fault_server: FaultServer) -> None:
    fault_server.script("/slow", Reply.slow(1.0), Reply.ok("fine"))
    with client(fault_server, timeout=0.3) as http:
        assert http.get_text("slow") == "fine"
    fault_server.default("/slower", Reply.slow(1.0))
    with client(fault_server, timeout=0.3, max_attempts=2) as http, pytest.raises(SourceTimeoutError) as err:
        http.get_text("slower")
    assert err.value.url.endswith("/slower") and len(fault_server.hits("/slower")) == 2


def test_truncated_and_malformed_json_bodies(fault_server: FaultServer) -> None:
    fault_server.script("/works", Reply.truncated('{"results": [1, 2, 3]}'), Reply.json('{"results": []}'))
    with client(fault_server) as http:
        assert http.get_json("works") == {"results": []}
    assert len(fault_server.hits("/works")) == 2
    fault_server.default("/broken", Reply.ok("<html>maintenance</html>", "text/html"))
    with client(fault_server) as http, pytest.raises(MalformedResponseError) as err:
        http.get_json("broken")
    assert "not valid JSON" in str(err.value) and err.value.url.endswith("/broken")


def test_retry_after_parsing_is_clamped() -> None:
    assert parse_retry_after("5", max_wait=30) == 5
    assert parse_retry_after("3600", max_wait=30) == 30
    assert parse_retry_after("soon", max_wait=30) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", max_wait=30) == 0.0


def test_rate_limiter_spaces_requests() -> None:
    limiter = RateLimiter(per_second=20)
    start = time.monotonic()
    for _ in range(6):
        limiter.acquire()
    assert time.monotonic() - start >= 5 / 20 * 0.9
