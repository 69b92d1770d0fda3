"""The core HTTP client (sources and LLM alike) against a local fault-injecting server: retries and their limits,
backoff, Retry-After in both forms, timeouts, malformed bodies, typed errors naming the URL, scrubbed secrets,
shared rate limits, and that the core never imports dagster."""

from __future__ import annotations

import email.utils
import itertools
import logging
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from dagster_project.core.http import (
    HttpClient,
    HttpRequestError,
    HttpTimeoutError,
    MalformedResponseError,
    RateLimiter,
    parse_retry_after,
)
from tests.support.fault_server import FaultServer, Reply
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def client(server: FaultServer | str, **kwargs: object) -> HttpClient:
    options = {"contact_email": "team@example.org", "requests_per_second": 1000, "timeout": 0.5,
               "max_attempts": 3, "backoff_initial": 0.01, "backoff_max": 0.05} | kwargs
    return HttpClient(server if isinstance(server, str) else server.url, **options)  # type: ignore[arg-type]


def gaps(server: FaultServer, path: str) -> list[float]:
    hits = server.hits(path)
    return [later.at - earlier.at for earlier, later in itertools.pairwise(hits)]


# --- retries ------------------------------------------------------------------------------------------------
def test_429_with_retry_after_seconds_is_honoured_then_succeeds(fault_server: FaultServer) -> None:
    fault_server.script("/list", Reply.error(429, retry_after="1"), Reply.ok("path:hsa00010\tGlycolysis"))
    with client(fault_server, backoff_max=2.0) as http:
        assert http.get_text("list") == "path:hsa00010\tGlycolysis"
    assert gaps(fault_server, "/list")[0] >= 0.9, "the client must wait as long as Retry-After asks"
    assert "mailto:team@example.org" in fault_server.hits("/list")[0].headers["User-Agent"]


def test_503_with_retry_after_as_an_http_date_is_honoured(fault_server: FaultServer) -> None:
    # The date has whole seconds: two seconds ahead is a wait of more than one.
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    fault_server.script("/works", Reply.error(503, retry_after=when), Reply.json('{"results": []}'))
    with client(fault_server, backoff_max=5.0) as http:
        assert http.get_json("works") == {"results": []}
    assert gaps(fault_server, "/works")[0] >= 0.9


def test_a_hostile_retry_after_is_clamped_to_backoff_max(fault_server: FaultServer) -> None:
    fault_server.script("/list", Reply.error(429, retry_after="3600"), Reply.ok("fine"))
    started = time.monotonic()
    with client(fault_server, backoff_max=0.2) as http:
        assert http.get_text("list") == "fine"
    assert time.monotonic() - started < 2.0


def test_without_retry_after_the_backoff_grows_exponentially(fault_server: FaultServer) -> None:
    fault_server.script("/flaky", Reply.error(500), Reply.error(502), Reply.ok("fine"))
    with client(fault_server, backoff_initial=0.2, backoff_max=5.0, backoff_jitter=0) as http:
        assert http.get_text("flaky") == "fine"
    first, second = gaps(fault_server, "/flaky")
    assert 0.18 <= first < 0.38 and second >= 0.38  # 0.2 s, then 0.4 s: not a fixed pause


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
    fault_server.script("/works", Reply.truncated('{"results": [1, 2, 3]}'), Reply.malformed(),
                        Reply.json('{"results": []}'))
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
    with caplog.at_level(logging.WARNING, logger="dagster_project.core.http"), \
            client(fault_server, secrets=(secret, None), max_attempts=2) as http, \
            pytest.raises(HttpRequestError) as err:
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
    ahead = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=12), usegmt=True)
    assert 10 <= (parse_retry_after(ahead, max_wait=30) or 0) <= 12
    assert parse_retry_after(ahead, max_wait=3) == 3


def test_rate_limiter_spaces_requests() -> None:
    limiter = RateLimiter(per_second=20)
    start = time.monotonic()
    for _ in range(6):
        limiter.acquire()
    assert time.monotonic() - start >= 5 / 20 * 0.9


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
    key = ("pacing", uuid.uuid4().hex)  # a fresh limiter at 5/s: one start per 0.2 s
    with client(fault_server, requests_per_second=5, rate_limit_key=key) as first, \
            client(fault_server, requests_per_second=5, rate_limit_key=key) as second:
        for http in (first, second, first):
            http.get_text("list")
    assert all(gap >= 0.18 for gap in gaps(fault_server, "/list"))


def test_the_core_never_imports_dagster() -> None:
    code = ("import sys, pkgutil, importlib, dagster_project.core as core\n"
            "for m in pkgutil.walk_packages(core.__path__, 'dagster_project.core.'): importlib.import_module(m.name)\n"
            "print(sorted(n for n in sys.modules if n == 'dagster' or n.startswith('dagster.')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
