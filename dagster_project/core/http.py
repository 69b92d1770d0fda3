"""The one HTTP client Flux uses for what it calls outside: the live sources and the OpenAI-compatible LLM.

httpx sends, tenacity retries. A transient failure (a retryable status: 429 and 5xx; a timeout; a dropped
connection; a body the caller's parser marks transient) is retried with exponential backoff and jitter, up to
`max_attempts` sends in all; a server's Retry-After (seconds or an HTTP date, clamped to `backoff_max`) replaces the
backoff for that one wait. Request starts are paced by a RateLimiter shared by every client with the same rate-limit
key: the host by default, or what the caller names (an API key's quota). A failure raises HttpRequestError (or its
timeout/malformed-body subclasses) carrying the URL, the status and the attempts made, with the configured secrets
scrubbed from its message and from the retry log.

The waits go through injectable `sleep` / `clock` / `now` callables (the real ones by default), so tests can record
the delays the client computes instead of measuring wall time.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from dagster_project.core.rate_limit import Clock as Clock  # re-exported: the clients' fakes take these shapes
from dagster_project.core.rate_limit import Sleep as Sleep
from dagster_project.core.rate_limit import shared_limiter

log = logging.getLogger(__name__)
T = TypeVar("T")

# The statuses the sources' APIs use for "try again later"; 501 or 505 mean the request itself is wrong.
RETRYABLE_STATUS: frozenset[int] = frozenset({429, 500, 502, 503, 504})


class HttpRequestError(RuntimeError):
    """A request that failed for good: after its retries, or at once when the failure is not transient.

    `reason` says what went wrong on the last attempt, `attempts` how many requests were sent; `retryable` and
    `retry_after` steer the retries while the client is still trying.
    """

    def __init__(
        self,
        url: str,
        reason: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{reason} [{url}]")
        self.url = url
        self.reason = reason
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.attempts = 1
        self.provider: str | None = None
        self.advice: str | None = None  # what to change when the answer is about the request (a key, a setting)

    def _final(
        self,
        attempts: int,
        scrub: Callable[[str], str],
        provider: str | None = None,
        advice: Mapping[int, str] | None = None,
    ) -> HttpRequestError:
        """The error as it leaves the client: secrets scrubbed, the attempts in the message if there were more, and,
        when the client names its provider, who answered and the setting that changes the answer."""
        self.attempts = attempts
        self.url, self.reason = scrub(self.url), scrub(self.reason)
        self.provider = provider
        self.advice = (advice or {}).get(self.status) if self.status is not None else None
        hint = f"; {self.advice}" if self.advice else ""
        if provider:  # "OpenAlex: HTTP 401: … (after 1 attempt) [url]; set FLUX_OPENALEX_API_KEY …"
            tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
            self.args = (f"{provider}: {self.reason} (after {tries}) [{self.url}]{hint}",)
        else:
            gave_up = f"gave up after {attempts} attempts: " if attempts > 1 else ""
            self.args = (f"{gave_up}{self.reason} [{self.url}]{hint}",)
        return self


class HttpTimeoutError(HttpRequestError):
    """No answer within the client's timeout."""


class MalformedResponseError(HttpRequestError):
    """The server answered 2xx but the body is not what the endpoint promises (truncated JSON, an HTML page…)."""


def parse_retry_after(value: str | None, max_wait: float, *, now: Clock = time.time) -> float | None:
    """Retry-After is either seconds or an HTTP date; clamp to `max_wait` so a hostile value cannot stall us.

    `now` (epoch seconds, time.time by default) is what an HTTP date is counted from.
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), max_wait)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, min(when.timestamp() - now(), max_wait))


def body_snippet(response: httpx.Response) -> str:
    """`: ` and the first 200 characters of the body on one line, or nothing: enough to see what a server said."""
    text = " ".join(response.text.split())[:200]
    return f": {text}" if text else ""


def json_body(response: httpx.Response) -> Any:
    """The parsed JSON body; anything else is treated as transient (a truncated answer, a proxy's error page)."""
    try:
        return response.json()
    except ValueError:
        raise MalformedResponseError(str(response.url), "response body is not valid JSON", retryable=True) from None


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, HttpRequestError) and exc.retryable


class HttpClient:
    """One client per base URL: retries, pacing and timeouts for every request it sends (see the module doc).

    `sleep` is what the retries wait with and `now` what a Retry-After date is counted from (time.sleep and
    time.time by default); the pacing waits belong to the shared RateLimiter.
    """

    def __init__(
        self,
        base_url: str,
        *,
        requests_per_second: float,
        contact_email: str | None = None,
        timeout: float = 30.0,
        max_attempts: int = 5,
        backoff_initial: float = 1.0,
        backoff_max: float = 30.0,
        backoff_jitter: float = 1.0,
        retryable_status: Collection[int] = RETRYABLE_STATUS,
        rate_limit_key: Hashable | None = None,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str | None] = (),
        follow_redirects: bool = True,
        name: str | None = None,
        provider: str | None = None,
        advice: Mapping[int, str] | None = None,
        sleep: Sleep = time.sleep,
        now: Clock = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        host = urlsplit(self.base_url).netloc
        self.name = name or provider or host
        self.provider = provider  # named in every final error: "KEGG REST answered HTTP 403 …"
        self.advice = dict(advice or {})  # status → the setting to change, appended to that error
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_max = backoff_max
        self.retryable_status = retryable_status
        self.limiter = shared_limiter(host if rate_limit_key is None else rate_limit_key, requests_per_second)
        self.attempts = 0  # requests actually sent over the client's life, for logs and tests
        self._backoff = wait_exponential_jitter(initial=backoff_initial, max=backoff_max, jitter=backoff_jitter)
        self._secrets = tuple(s for s in secrets if s)
        self._sleep = sleep
        self._now = now
        all_headers = dict(headers or {})
        if contact_email:
            # APIs with a polite pool (OpenAlex, NCBI) want to know whom to write to before they block a client.
            all_headers["User-Agent"] = f"flux/0.1 (+mailto:{contact_email})"
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout), headers=all_headers, follow_redirects=follow_redirects
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url_for(self, path: str) -> str:
        return path if path.startswith("http") else f"{self.base_url}/{path.lstrip('/')}"

    # --- sending ---------------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        data: Any = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send with retries; the 2xx/3xx response, or HttpRequestError."""
        return self.request_parsed(method, path, _as_is, params=params, data=data, json=json, headers=headers)

    def request_parsed(
        self,
        method: str,
        path: str,
        parse: Callable[[httpx.Response], T],
        *,
        params: Mapping[str, Any] | None = None,
        data: Any = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> T:
        """Send with retries and parse the answer; `parse` runs inside each attempt, so the HttpRequestError it
        raises for a bad body is retried when it says `retryable`."""
        url = self.url_for(path)
        sent = 0

        def attempt() -> T:
            nonlocal sent
            sent += 1
            return self._send_once(method, url, params, data, json, headers, parse)

        retrying = Retrying(
            sleep=self._sleep,
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(_is_transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except HttpRequestError as exc:
            raise exc._final(sent, self._scrub, self.provider, self.advice) from None

    def get_text(self, path: str, **params: Any) -> str:
        return self.request("GET", path, params=params or None).text

    def get_bytes(self, path: str, **params: Any) -> bytes:
        return self.request("GET", path, params=params or None).content

    def get_json(self, path: str, **params: Any) -> Any:
        return self.request_parsed("GET", path, json_body, params=params or None)

    def post_json(self, path: str, data: Any, *, content_type: str | None = None) -> Any:
        """POST `data` as the body and parse the JSON answer. A str body carries no Content-Type of its own, and
        an endpoint that declares what it consumes (Reactome's text/plain id lists) answers 415 without one."""
        headers = {"Content-Type": content_type} if content_type else None
        return self.request_parsed("POST", path, json_body, data=data, headers=headers)

    def post_text(self, path: str, data: Mapping[str, Any]) -> str:
        """POST a form (application/x-www-form-urlencoded) and return the text answer: what E-utilities asks for
        when an id list is too long for a URL."""
        return self.request("POST", path, data=data).text

    def _send_once(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None,
        data: Any,
        json: Any,
        headers: Mapping[str, str] | None,
        parse: Callable[[httpx.Response], T],
    ) -> T:
        self.limiter.acquire()
        self.attempts += 1
        try:
            if isinstance(data, str | bytes):  # a raw body: httpx's `content`, with the caller's Content-Type
                response = self._client.request(method, url, params=params, content=data, headers=headers)
            else:
                response = self._client.request(method, url, params=params, data=data, json=json, headers=headers)
        except httpx.TimeoutException:
            raise HttpTimeoutError(url, f"timed out after {self.timeout:g}s", retryable=True) from None
        except httpx.TransportError as exc:
            # Refused, reset, or a body cut short of its Content-Length: all worth another try.
            raise HttpRequestError(url, f"connection failed: {type(exc).__name__}: {exc}", retryable=True) from None
        status = response.status_code
        if status >= 400:
            retryable = status in self.retryable_status
            retry_after = parse_retry_after(response.headers.get("Retry-After"), self.backoff_max, now=self._now)
            raise HttpRequestError(
                str(response.url),
                f"HTTP {status}{body_snippet(response)}",
                status=status,
                retryable=retryable,
                retry_after=retry_after if retryable else None,
            )
        return parse(response)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, HttpRequestError) and exc.retry_after is not None:
            return exc.retry_after
        return self._backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "%s: attempt %d of %d failed (%s); retrying in %.2fs",
            self.name,
            state.attempt_number,
            self.max_attempts,
            self._scrub(str(exc)),
            state.upcoming_sleep,
        )

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


def _as_is(response: httpx.Response) -> httpx.Response:
    return response
