"""The core HTTP client (sources and LLM alike) against a local fault-injecting server: retries and their limits,
backoff, Retry-After in both forms, timeouts, malformed bodies, typed errors naming the URL, scrubbed secrets,
shared rate limits, and that the core never imports dagster.

No test measures wall time: the client's retries and the rate limiter wait through an injected sleep that records
the delay asked for (and moves a ManualClock on), so the backoff and pacing checks are exact and never flake on a
loaded machine. Only the timeout tests wait for real, for the socket timeout itself."""

from __future__ import annotations

import email.utils
import logging
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from dagster_project.core.http import (
    HttpClient,
    HttpRequestError,
    HttpTimeoutError,
    MalformedResponseError,
    parse_retry_after,
)
from dagster_project.core.rate_limit import RateLimiter, shared_limiter
from tests.support.clock import ManualClock
from tests.support.fault_server import FaultServer, Reply
from tests.support.ports import free_port


def client(server: FaultServer | str, sleeps: list[float] | None = None, **kwargs: object) -> HttpClient:
    """A client whose retry waits are recorded in `sleeps` (a throwaway list unless given), never slept."""
    options = {
        "contact_email": "team@example.org",
        "requests_per_second": 1000,
        "timeout": 0.5,
        "max_attempts": 3,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
        "sleep": (sleeps if sleeps is not None else []).append,
    } | kwargs
    return HttpClient(server if isinstance(server, str) else server.url, **options)  # type: ignore[arg-type]


def sleep_on(clock: ManualClock, sleeps: list[float]) -> Callable[[float], None]:
    """A sleep that records the wait and moves the manual clock on by it, as a real sleep would."""

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.advance(seconds)

    return sleep


# --- retries ------------------------------------------------------------------------------------------------
def test_429_with_retry_after_seconds_is_honoured_then_succeeds(fault_server: FaultServer) -> None:
    fault_server.script("/list", Reply.error(429, retry_after="1"), Reply.ok("path:hsa00010\tGlycolysis"))
    sleeps: list[float] = []
    with client(fault_server, sleeps, backoff_max=2.0) as http:
        assert http.get_text("list") == "path:hsa00010\tGlycolysis"
    assert sleeps == [1.0], "the client must wait as long as Retry-After asks, instead of its own backoff"
    assert len(fault_server.hits("/list")) == 2
    assert "mailto:team@example.org" in fault_server.hits("/list")[0].headers["User-Agent"]


def test_503_with_retry_after_as_an_http_date_is_honoured(fault_server: FaultServer) -> None:
    # A fixed "now" half a second past a whole one: a date 2 s after that whole second is a wait of exactly 1.5 s.
    now = datetime(2024, 5, 17, 12, 0, 0, 500_000, tzinfo=UTC)
    when = email.utils.format_datetime(now.replace(microsecond=0) + timedelta(seconds=2), usegmt=True)
    fault_server.script("/works", Reply.error(503, retry_after=when), Reply.json('{"results": []}'))
    sleeps: list[float] = []
    with client(fault_server, sleeps, backoff_max=5.0, now=now.timestamp) as http:
        assert http.get_json("works") == {"results": []}
    assert sleeps == [pytest.approx(1.5)]


def test_a_hostile_retry_after_is_clamped_to_backoff_max(fault_server: FaultServer) -> None:
    fault_server.script("/list", Reply.error(429, retry_after="3600"), Reply.ok("fine"))
    sleeps: list[float] = []
    with client(fault_server, sleeps, backoff_max=0.2) as http:
        assert http.get_text("list") == "fine"
    assert sleeps == [0.2]  # an hour asked, backoff_max granted


def test_without_retry_after_the_backoff_grows_exponentially(fault_server: FaultServer) -> None:
    fault_server.script("/flaky", Reply.error(500), Reply.error(502), Reply.error(503), Reply.ok("fine"))
    sleeps: list[float] = []
    with client(fault_server, sleeps, max_attempts=4, backoff_initial=0.2, backoff_max=5.0, backoff_jitter=0) as http:
        assert http.get_text("flaky") == "fine"
    assert sleeps == pytest.approx([0.2, 0.4, 0.8])  # doubling from backoff_initial: not a fixed pause


def test_the_backoff_stops_growing_at_backoff_max(fault_server: FaultServer) -> None:
    fault_server.default("/flaky", Reply.error(503))
    sleeps: list[float] = []
    with (
        client(fault_server, sleeps, max_attempts=5, backoff_initial=0.2, backoff_max=0.5, backoff_jitter=0) as http,
        pytest.raises(HttpRequestError),
    ):
        http.get_text("flaky")
    assert sleeps == pytest.approx([0.2, 0.4, 0.5, 0.5])  # one wait between each of the 5 attempts


def test_jitter_adds_at_most_backoff_jitter_to_each_wait(fault_server: FaultServer) -> None:
    fault_server.default("/flaky", Reply.error(503))
    sleeps: list[float] = []
    options = {"max_attempts": 4, "backoff_initial": 0.2, "backoff_max": 5.0, "backoff_jitter": 0.1}
    with client(fault_server, sleeps, **options) as http, pytest.raises(HttpRequestError):
        http.get_text("flaky")
    without_jitter = [0.2, 0.4, 0.8]
    assert all(base <= wait <= base + 0.1 for wait, base in zip(sleeps, without_jitter, strict=True)), sleeps


def test_5xx_is_retried_up_to_the_limit_then_fails_with_the_url(fault_server: FaultServer) -> None:
    fault_server.default("/flaky", Reply.error(503))
    with client(fault_server) as http, pytest.raises(HttpRequestError) as err:
        http.get_text("flaky")
    assert len(fault_server.hits("/flaky")) == 3 and err.value.attempts == 3
    assert err.value.status == 503 and err.value.url.endswith("/flaky")
    assert str(err.value).startswith("gave up after 3 attempts: HTTP 503: error 503 [http://127.0.0.1:")


def test_client_errors_are_not_retried(fault_server: FaultServer) -> None:
    fault_server.default("/missing", Reply.error(404))
    with client(fault_server) as http, pytest.raises(HttpRequestError) as err:
        http.get_text("missing")
    assert len(fault_server.hits("/missing")) == 1 and err.value.status == 404 and err.value.attempts == 1
    assert str(err.value) == f"HTTP 404: error 404 [{fault_server.url}/missing]"


def test_only_the_configured_statuses_are_retried(fault_server: FaultServer) -> None:
    fault_server.default("/unimplemented", Reply.error(501))
    with client(fault_server) as http, pytest.raises(HttpRequestError):
        http.get_text("unimplemented")  # 501 is not in the sources' RETRYABLE_STATUS
    assert len(fault_server.hits("/unimplemented")) == 1
    with client(fault_server, retryable_status={501}) as http, pytest.raises(HttpRequestError) as err:
        http.get_text("unimplemented")
    assert len(fault_server.hits("/unimplemented")) == 1 + 3 and err.value.attempts == 3


def test_timeouts_are_retried_and_reported_as_timeouts(fault_server: FaultServer) -> None:
    fault_server.script("/slow", Reply.slow(1.0), Reply.ok("fine"))
    with client(fault_server, timeout=0.3) as http:
        assert http.get_text("slow") == "fine"
    fault_server.default("/slower", Reply.slow(1.0))
    with client(fault_server, timeout=0.3, max_attempts=2) as http, pytest.raises(HttpTimeoutError) as err:
        http.get_text("slower")
    assert err.value.url.endswith("/slower") and len(fault_server.hits("/slower")) == 2
    assert "gave up after 2 attempts: timed out after 0.3s" in str(err.value)


def test_a_refused_connection_is_retried_then_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with client(url, max_attempts=2) as http, pytest.raises(HttpRequestError) as err:
        http.get_text("anything")
    assert http.attempts == 2 and err.value.status is None
    assert "connection failed: ConnectError" in str(err.value) and err.value.url == f"{url}/anything"


# --- bodies ---------------------------------------------------------------------------------------------------
def test_truncated_and_malformed_json_bodies_are_retried(fault_server: FaultServer) -> None:
    fault_server.script(
        "/works", Reply.truncated('{"results": [1, 2, 3]}'), Reply.malformed(), Reply.json('{"results": []}')
    )
    with client(fault_server) as http:
        assert http.get_json("works") == {"results": []}
    assert len(fault_server.hits("/works")) == 3
    fault_server.default("/broken", Reply.malformed("<html>maintenance</html>"))
    with client(fault_server) as http, pytest.raises(MalformedResponseError) as err:
        http.get_json("broken")
    assert "not valid JSON" in str(err.value) and err.value.url.endswith("/broken")
    assert len(fault_server.hits("/broken")) == 3


def test_a_body_the_parser_rejects_for_good_is_not_retried(fault_server: FaultServer) -> None:
    def strict(response: httpx.Response) -> str:
        raise MalformedResponseError(str(response.url), "not what this endpoint answers", retryable=False)

    fault_server.default("/odd", Reply.ok("surprise"))
    with client(fault_server) as http, pytest.raises(MalformedResponseError, match="not what this endpoint"):
        http.request_parsed("GET", "odd", strict)
    assert len(fault_server.hits("/odd")) == 1


def test_json_is_posted_and_headers_are_sent(fault_server: FaultServer) -> None:
    fault_server.default("/v1/chat", Reply.json('{"ok": true}'))
    with client(fault_server, contact_email=None, headers={"Authorization": "Bearer t0k"}) as http:
        assert http.request("POST", "v1/chat", json={"q": 1}).json() == {"ok": True}
    [hit] = fault_server.hits("/v1/chat")
    assert hit.method == "POST" and hit.json == {"q": 1} and hit.authorization == "Bearer t0k"
    assert "mailto" not in hit.headers["User-Agent"]


# --- secrets ------------------------------------------------------------------------------------------------
def test_secrets_are_scrubbed_from_errors_and_the_retry_log(
    fault_server: FaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "s3cret-" + uuid.uuid4().hex
    fault_server.default("/esearch.fcgi", Reply.error(500, body=f"bad key {secret}"))
    with (
        caplog.at_level(logging.WARNING, logger="dagster_project.core.http"),
        client(fault_server, secrets=(secret, None), max_attempts=2) as http,
        pytest.raises(HttpRequestError) as err,
    ):
        http.get_text("esearch.fcgi", api_key=secret)
    assert fault_server.hits("/esearch.fcgi")[0].query["api_key"] == [secret]  # it was really sent
    assert secret not in str(err.value) and secret not in repr(err.value) and secret not in err.value.url
    assert "api_key=***" in err.value.url and "bad key ***" in err.value.reason
    [retry_log] = [r.getMessage() for r in caplog.records if r.name == "dagster_project.core.http"]
    assert "attempt 1 of 2 failed" in retry_log and secret not in retry_log


# --- Retry-After parsing and rate limits --------------------------------------------------------------------
def test_retry_after_parsing_is_clamped() -> None:
    assert parse_retry_after("5", max_wait=30) == 5
    assert parse_retry_after("3600", max_wait=30) == 30
    assert parse_retry_after("soon", max_wait=30) is None
    assert parse_retry_after(None, max_wait=30) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", max_wait=30) == 0.0
    now = datetime(2024, 5, 17, 12, 0, 0, tzinfo=UTC)
    ahead = email.utils.format_datetime(now + timedelta(seconds=12), usegmt=True)
    assert parse_retry_after(ahead, max_wait=30, now=now.timestamp) == 12.0
    assert parse_retry_after(ahead, max_wait=3, now=now.timestamp) == 3


def test_rate_limiter_spaces_requests() -> None:
    clock, sleeps = ManualClock(), []
    limiter = RateLimiter(per_second=20, clock=clock, sleep=sleep_on(clock, sleeps))
    for _ in range(6):
        limiter.acquire()
    assert sleeps == pytest.approx([0.05] * 5)  # the first start is free, each next one waits 1/20 s


def test_rate_limiter_waits_only_for_what_is_left_of_the_interval() -> None:
    clock, sleeps = ManualClock(), []
    limiter = RateLimiter(per_second=4, clock=clock, sleep=sleep_on(clock, sleeps))
    limiter.acquire()
    clock.advance(0.1)  # the caller worked for 0.1 s of the 0.25 s interval
    limiter.acquire()
    clock.advance(1.0)  # idle for longer than an interval: no debt, no wait
    limiter.acquire()
    assert sleeps == pytest.approx([0.15])
    assert RateLimiter(per_second=0).interval == 0.0  # 0 means no limit


def test_clients_of_one_host_share_a_limiter_and_the_first_rate_wins() -> None:
    host = f"http://{uuid.uuid4().hex}.invalid"
    first, second = client(host, requests_per_second=2), client(host + "/other", requests_per_second=50)
    quota = client(host, requests_per_second=7, rate_limit_key=("quota", uuid.uuid4().hex))
    assert first.limiter is second.limiter and first.limiter.interval == pytest.approx(1 / 2)
    assert quota.limiter is not first.limiter and quota.limiter.interval == pytest.approx(1 / 7)
    for http in (first, second, quota):
        http.close()


def test_the_shared_limiter_paces_requests_across_clients(fault_server: FaultServer) -> None:
    fault_server.default("/list", Reply.ok("fine"))
    key = ("pacing", uuid.uuid4().hex)  # a fresh key: registered here at 5/s (one start per 0.2 s) on a manual clock
    clock, waits = ManualClock(), []
    limiter = shared_limiter(key, 5, clock=clock, sleep=sleep_on(clock, waits))
    with (
        client(fault_server, requests_per_second=5, rate_limit_key=key) as first,
        client(fault_server, requests_per_second=5, rate_limit_key=key) as second,
    ):
        assert first.limiter is limiter and second.limiter is limiter
        for http in (first, second, first):
            http.get_text("list")
    # Two limiters would let `second` start at once; one shared limiter makes each start after the first wait.
    assert waits == pytest.approx([0.2, 0.2]) and len(fault_server.hits("/list")) == 3
