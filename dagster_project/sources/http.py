"""The HTTP client every live source uses: httpx + tenacity.

Retries with exponential backoff and jitter on 429, 5xx, timeouts and connection errors, honouring Retry-After;
a per-host rate limit; timeouts; a user agent carrying the contact e-mail. Failures raise typed errors that carry
the URL, so an asset's failure says which request broke.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

RETRYABLE_STATUS = {429, 500, 502, 503, 504}


class SourceHTTPError(RuntimeError):
    """A request that failed for good (after retries, or with a non-retryable status)."""

    def __init__(self, url: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{message} [{url}]")
        self.url = url
        self.status = status


class RetryableHTTPError(SourceHTTPError):
    """A 429/5xx answer; `retry_after` is the server's requested pause in seconds, if it gave one."""

    def __init__(self, url: str, status: int, retry_after: float | None) -> None:
        super().__init__(url, f"HTTP {status}", status)
        self.retry_after = retry_after


class SourceTimeoutError(SourceHTTPError):
    pass


class MalformedResponseError(SourceHTTPError):
    """The server answered 200 but the body is not what the endpoint promises (truncated JSON, HTML…)."""


class RateLimiter:
    """At most `per_second` request starts per second for one host (thread-safe, monotonic clock)."""

    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:
            now = time.monotonic()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            time.sleep(wait)


def parse_retry_after(value: str | None, max_wait: float) -> float | None:
    """Retry-After is either seconds or an HTTP date; clamp to `max_wait` so a hostile value cannot stall us."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), max_wait)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, min(when.timestamp() - time.time(), max_wait))


class _WaitHonouringRetryAfter:
    def __init__(self, base: wait_exponential_jitter) -> None:
        self.base = base

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RetryableHTTPError) and exc.retry_after is not None:
            return exc.retry_after
        return self.base(state)


def _is_retryable(exc: BaseException) -> bool:
    # 429/5xx, timeouts, dropped connections and truncated bodies are transient; 4xx answers are not.
    return isinstance(exc, SourceHTTPError) and (exc.status is None or exc.status in RETRYABLE_STATUS)


def _json_body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise MalformedResponseError(str(response.url), "response body is not valid JSON") from None


class HttpClient:
    """One client per source; rate limits are per host and shared by every client in the process."""

    _limiters: dict[str, RateLimiter] = {}
    _limiters_lock = threading.Lock()

    def __init__(
        self,
        base_url: str,
        *,
        contact_email: str,
        requests_per_second: float,
        timeout: float = 30.0,
        max_attempts: int = 5,
        backoff_initial: float = 1.0,
        backoff_max: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_attempts = max_attempts
        self.backoff_max = backoff_max
        self._wait = _WaitHonouringRetryAfter(wait_exponential_jitter(initial=backoff_initial, max=backoff_max))
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": f"flux/0.1 (+mailto:{contact_email})"},
            follow_redirects=True,
            transport=transport,
        )
        host = urlsplit(self.base_url).netloc
        with self._limiters_lock:
            self._limiter = self._limiters.setdefault(host, RateLimiter(requests_per_second))
        self.attempts = 0  # requests actually sent, for logs and tests

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url_for(self, path: str) -> str:
        return path if path.startswith("http") else f"{self.base_url}/{path.lstrip('/')}"

    def _send_once(self, method: str, url: str, params: Mapping[str, Any] | None, data: Any,
                   parse: Callable[[httpx.Response], Any] | None) -> Any:
        self._limiter.acquire()
        self.attempts += 1
        try:
            response = self._client.request(method, url, params=params, data=data)
        except httpx.TimeoutException:
            raise SourceTimeoutError(url, "request timed out") from None
        except httpx.TransportError as exc:
            raise SourceHTTPError(url, f"connection failed: {exc}") from None
        if response.status_code in RETRYABLE_STATUS:
            retry_after = parse_retry_after(response.headers.get("Retry-After"), self.backoff_max)
            raise RetryableHTTPError(str(response.url), response.status_code, retry_after)
        if response.status_code >= 400:
            raise SourceHTTPError(str(response.url), f"HTTP {response.status_code}: {response.text[:200]}",
                                  response.status_code)
        return parse(response) if parse else response

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                data: Any = None, parse: Callable[[httpx.Response], Any] | None = None) -> Any:
        """Send with retries; `parse` runs inside each attempt, so a truncated body is retried too."""
        url = self.url_for(path)
        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(_is_retryable),
            reraise=True,
        )
        try:
            return retrying(self._send_once, method, url, params, data, parse)
        except RetryableHTTPError as exc:
            raise SourceHTTPError(exc.url, f"gave up after {self.max_attempts} attempts: HTTP {exc.status}",
                                  exc.status) from None
        except SourceTimeoutError as exc:
            raise SourceTimeoutError(exc.url, f"gave up after {self.max_attempts} attempts: timed out") from None
        except MalformedResponseError as exc:
            raise MalformedResponseError(
                exc.url, f"gave up after {self.max_attempts} attempts: body is not valid JSON") from None

    def get_text(self, path: str, **params: Any) -> str:
        response = self.request("GET", path, params=params or None)
        return response.text

    def get_bytes(self, path: str, **params: Any) -> bytes:
        return self.request("GET", path, params=params or None).content

    def get_json(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None, parse=_json_body)

    def post_json(self, path: str, data: Any) -> Any:
        return self.request("POST", path, data=data, parse=_json_body)
