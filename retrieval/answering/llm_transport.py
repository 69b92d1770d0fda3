"""One bounded chat completion against an OpenAI-compatible server: `POST {base_url}/chat/completions`.

Every request carries `max_tokens` for its task and the best JSON mode the endpoint accepts (llm_endpoint.py), and
asks for a stream, read by llm_stream.py (Flux stops reading at the end of the JSON object, or when a server ignores
max_tokens). A call may take what is left of its question's budget (retrieval/model/llm_budget.py), never more
than FLUX_LLM_TIMEOUT: the exchange runs in a worker thread and the caller stops waiting at the deadline, while the
worker closes the stream (which tells the server to stop generating) and frees the endpoint's slot.

Retries are only for requests the server never started: connection refused, 429, 503 with Retry-After — and only
when the wait fits the deadline. A timeout is not retried (the generation may still be running there, and a retry
would queue behind it), nor is a 5xx, a malformed reply or a 4xx. Every call is recorded in the question's budget
(tokens in and out, latency, queueing, outcome) and a failure raises ChatFailed, a ProviderError naming the cause.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from dagster_project.core.http import parse_retry_after
from dagster_project.core.rate_limit import Clock, RateLimiter, Sleep, shared_limiter
from retrieval.answering.llm_endpoint import JsonMode, endpoint
from retrieval.answering.llm_stream import (
    ERROR_BODY_BYTES,
    Cancelled,
    NotAReply,
    Reading,
    ReplyReader,
    error_message,
    snippet,
)
from retrieval.model import llm_budget
from retrieval.model.llm_budget import LLMCall, LLMOutcome, LLMStep
from retrieval.model.types import ProviderError

log = logging.getLogger(__name__)
MIN_CALL_SECONDS = 0.25  # below this a call cannot even connect: the step is skipped
CONNECT_SECONDS = 10.0
_FORMAT_WORDS = ("response_format", "json_schema", "json_object")
_CONTEXT_WORDS = ("context_length_exceeded", "context length", "context window", "maximum context")


class ChatFailed(ProviderError):
    """A chat completion that gave no reply; `call` says why, and is already recorded in the question's budget."""

    def __init__(self, message: str, call: LLMCall, recorded: bool) -> None:
        super().__init__(message)
        self.call, self.recorded = call, recorded


class _Failure(Exception):
    def __init__(
        self,
        outcome: LLMOutcome,
        detail: str,
        *,
        not_started: bool = False,
        retry_after: float | None = None,
        format_rejected: bool = False,
    ) -> None:
        super().__init__(detail)
        self.outcome, self.detail = outcome, detail
        self.not_started, self.retry_after, self.format_rejected = not_started, retry_after, format_rejected


def quota_key(base_url: str, api_key: str | None) -> tuple[str, str, str]:
    # The key is hashed so the process-wide limiter registry never holds it in clear.
    return ("llm", base_url.rstrip("/"), hashlib.sha256((api_key or "").encode()).hexdigest())


@dataclass(frozen=True)
class TransportOptions:
    timeout: float = 30.0  # the most one call may take, whatever its question has left
    max_attempts: int = 3  # sends per call, counting retries of requests never started
    requests_per_minute: float = 60.0
    temperature: float = 0.0
    concurrency: int = 1  # requests in flight to the endpoint from this process
    stream: bool = True
    json_mode: JsonMode | Literal["auto"] = "auto"
    backoff_initial: float = 1.0
    backoff_max: float = 30.0


class ChatTransport:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        options: TransportOptions,
        *,
        name: str,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
    ) -> None:
        self.base_url, self.model, self.name, self.options = base_url.rstrip("/"), model, name, options
        self.endpoint = endpoint(self.base_url, options.concurrency)
        self.limiter: RateLimiter = shared_limiter(
            quota_key(self.base_url, api_key), options.requests_per_minute / 60.0
        )
        self._key = api_key or None
        self._sleep, self._clock = sleep, clock
        self._backoff = wait_exponential_jitter(
            initial=options.backoff_initial, max=options.backoff_max, jitter=options.backoff_initial
        )
        # httpx turns a POST redirected with 301-303 into a GET no chat endpoint answers: report the 3xx instead.
        self._client = httpx.Client(
            headers={"Authorization": f"Bearer {self._key}"} if self._key else None, follow_redirects=False
        )

    def close(self) -> None:
        self._client.close()

    def complete(self, step: LLMStep, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> str:
        """The reply's content (for JSON tasks, the JSON object alone when it is complete), or ChatFailed."""
        budget = llm_budget.current()
        started = self._clock()
        allowance = min(self.options.timeout, budget.allowance(step)) if budget else self.options.timeout
        call = LLMCall(step=step, outcome="ok", ms=0.0, max_tokens=max_tokens, attempts=0)
        limited_by = "deadline" if budget and allowance < self.options.timeout else "timeout"
        try:
            if allowance < MIN_CALL_SECONDS:
                raise _Failure(
                    "deadline",
                    f"{budget.remaining() if budget else 0:.1f} s of the question's "
                    f"{budget.seconds if budget else 0:g} s budget left, none for this step",
                )
            return self._with_json_modes(call, system, user, schema, max_tokens, started + allowance, limited_by)
        except _Failure as failure:
            call.outcome, call.detail = failure.outcome, self._scrub(failure.detail)
            tries = f"{call.attempts} attempt{'s' if call.attempts != 1 else ''}"
            raise ChatFailed(
                f"{self.name} at {self.base_url}: {call.detail} ({tries})", call, budget is not None
            ) from None
        finally:
            call.ms = round((self._clock() - started) * 1000, 2)
            if budget is not None:
                budget.record(call)

    # --- JSON modes, retries, attempts ------------------------------------------------------------------
    def _with_json_modes(
        self,
        call: LLMCall,
        system: str,
        user: str,
        schema: dict[str, Any],
        max_tokens: int,
        deadline: float,
        limited_by: LLMOutcome,
    ) -> str:
        modes = self.endpoint.modes_to_try(self.options.json_mode)
        for n, mode in enumerate(modes):
            call.json_mode = mode
            payload = self._payload(mode, system, user, schema, max_tokens, step=call.step)
            try:
                content = self._retrying(call, payload, deadline, limited_by)
            except _Failure as failure:
                if failure.format_rejected and n + 1 < len(modes):
                    log.info(
                        "%s: the server rejects response_format %s (%s); trying %s",
                        self.name,
                        mode,
                        failure.detail,
                        modes[n + 1],
                    )
                    continue
                raise
            if self.endpoint.learn(mode):
                note = (
                    "the LLM server accepts no JSON response_format; Flux asks for JSON in the prompt only "
                    "(set FLUX_LLM_JSON_MODE=prompt to skip the probing)"
                )
                log.warning("%s: %s", self.name, note)
                if (budget := llm_budget.current()) is not None:
                    budget.notes.append(note)
            return content
        raise AssertionError("unreachable: the last JSON mode's failure is raised")

    def _retrying(self, call: LLMCall, payload: dict[str, Any], deadline: float, limited_by: LLMOutcome) -> str:
        def past_deadline(state: RetryCallState) -> bool:
            return self._clock() + (state.upcoming_sleep or 0.0) >= deadline - MIN_CALL_SECONDS

        def attempt() -> str:
            call.attempts += 1
            return self._attempt(call, payload, deadline, limited_by)

        retrying = Retrying(
            sleep=self._sleep,
            stop=stop_after_attempt(self.options.max_attempts) | past_deadline,
            wait=self._wait,
            reraise=True,
            before_sleep=self._log_retry,
            retry=retry_if_exception(lambda e: isinstance(e, _Failure) and e.not_started),
        )
        return retrying(attempt)

    def _attempt(self, call: LLMCall, payload: dict[str, Any], deadline: float, limited_by: LLMOutcome) -> str:
        self._pace(deadline)
        budget = llm_budget.current()
        waited = self.endpoint.acquire(
            deadline - self._clock(),
            None
            if budget is None
            else lambda ahead: budget.emit(
                "llm_wait", {"llm_step": call.step, "ahead": ahead, "endpoint": self.base_url}
            ),
        )
        if waited is None:
            raise _Failure(
                "busy",
                f"no free slot at the endpoint before the deadline ({self.endpoint.in_flight} "
                f"request(s) in flight, FLUX_LLM_CONCURRENCY={self.endpoint.concurrency})",
            )
        call.queued_ms = round(call.queued_ms + waited * 1000, 2)
        exchange = _Exchange(self, payload, deadline)
        threading.Thread(target=exchange.run, name="flux-llm-call", daemon=True).start()
        if not exchange.done.wait(timeout=max(0.0, deadline - self._clock())):
            exchange.cancelled.set()  # the worker closes the stream at its next read and frees the slot
            what = (
                "the question's time budget ran out"
                if limited_by == "deadline"
                else f"no complete reply within FLUX_LLM_TIMEOUT={self.options.timeout:g}s"
            )
            raise _Failure(limited_by, f"{what}; the request was cancelled, not retried")
        if exchange.failure is not None:
            raise exchange.failure
        reading = exchange.reading
        assert reading is not None
        call.tokens_in = reading.usage.get("prompt_tokens")
        call.tokens_out = reading.usage.get("completion_tokens")
        if call.tokens_out is None and reading.chunks:  # no usage reported: a streamed chunk is about one token
            call.tokens_out, call.tokens_estimated = reading.chunks, True
        text = reading.text  # finds the reply's JSON object, when it holds a complete one
        if reading.json_span is None and (reading.cut or reading.finish_reason == "length"):
            setting = f"FLUX_LLM_MAX_TOKENS_{call.step.upper()}"
            why = reading.cut or f"the reply reached max_tokens ({payload['max_tokens']})"
            raise _Failure("rejected", f"{why} before its JSON object ended (raise {setting} if the model needs more)")
        if reading.cut:
            call.outcome, call.detail = "cut", reading.cut
        return text

    def _pace(self, deadline: float) -> None:
        wait = self.limiter.try_acquire()  # None: the slot is free, and now taken
        if wait is None:
            return
        if self._clock() + wait >= deadline:
            raise _Failure(
                "busy", f"FLUX_LLM_REQUESTS_PER_MINUTE allows the next request in {wait:.1f}s, past the deadline"
            )
        self.limiter.acquire()  # books the next slot and waits for it

    def _payload(
        self, mode: JsonMode, system: str, user: str, schema: dict[str, Any], max_tokens: int, step: str
    ) -> dict[str, Any]:
        if mode != "json_schema":  # the schema is not sent as a constraint: the model is told it instead
            system = f"{system}\nThe reply's JSON schema: {json.dumps(schema, separators=(',', ':'))}"
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": self.options.temperature,
            "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        if mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": f"flux_{step}", "strict": True, "schema": schema},
            }
        elif mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        if self.options.stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        return payload

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Failure) and exc.retry_after is not None:
            return exc.retry_after
        return self._backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "%s: attempt %d of %d not started (%s); retrying in %.2fs",
            self.name,
            state.attempt_number,
            self.options.max_attempts,
            self._scrub(str(exc)),
            state.upcoming_sleep,
        )

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text


class _Exchange:
    """One request and its reply, read in a worker thread the caller may stop waiting for."""

    def __init__(self, transport: ChatTransport, payload: dict[str, Any], deadline: float) -> None:
        self.transport, self.payload, self.deadline = transport, payload, deadline
        self.done, self.cancelled = threading.Event(), threading.Event()
        self.reading: Reading | None = None  # set before `done` when the reply was read
        self.failure: _Failure | None = None

    def run(self) -> None:
        t = self.transport
        seconds = max(MIN_CALL_SECONDS, self.deadline - t._clock())
        # The caller stops waiting at the deadline; this worker reads on (up to FLUX_LLM_TIMEOUT of silence) until
        # the server sends its next byte and hears the hang-up, holding the endpoint's slot meanwhile: a server
        # still evaluating an abandoned prompt is busy, and the next request waits in Flux rather than on it.
        read = max(seconds, t.options.timeout)
        timeout = httpx.Timeout(read, connect=min(seconds, CONNECT_SECONDS))
        try:
            with t._client.stream(
                "POST", f"{t.base_url}/chat/completions", json=self.payload, timeout=timeout
            ) as response:
                if response.status_code >= 300:
                    raise _status_failure(response, _bounded_body(response, self.cancelled.is_set))
                self._read(response)
        except _Failure as failure:
            self.failure = failure
        except Cancelled:
            self.failure = _Failure("deadline", "cancelled at the deadline")
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self.failure = _Failure("unreachable", f"connection failed: {type(exc).__name__}: {exc}", not_started=True)
        except httpx.TimeoutException:
            self.failure = _Failure("timeout", f"the server sent nothing for {read:.0f}s")
        except httpx.TransportError as exc:  # a reply cut short: the request may have run, so it is not retried
            self.failure = _Failure("malformed", f"the connection broke mid-reply: {type(exc).__name__}: {exc}")
        finally:
            t.endpoint.release()
            self.done.set()

    def _read(self, response: httpx.Response) -> None:
        reader = ReplyReader(int(self.payload["max_tokens"]), True, self.cancelled.is_set)
        try:
            reading = reader.read(response)
        except NotAReply as exc:
            raise _Failure("malformed", str(exc)) from None
        if not reading.text.strip():
            raise _Failure("malformed", "the server returned an empty reply")
        self.reading = reading


def _bounded_body(response: httpx.Response, cancelled: Callable[[], bool]) -> str:
    data = bytearray()
    for block in response.iter_bytes():
        if cancelled():
            raise Cancelled
        data += block
        if len(data) >= ERROR_BODY_BYTES:
            break
    return data[:ERROR_BODY_BYTES].decode("utf-8", "replace")


def _status_failure(response: httpx.Response, body: str) -> _Failure:
    """What an error status means for this call: retried only when the server never started the request."""
    status = response.status_code
    lowered = body.lower()
    try:
        parsed = json.loads(body) if "json" in response.headers.get("content-type", "") else None
    except ValueError:
        parsed = None
    message = error_message(parsed) if isinstance(parsed, dict) else ""
    said = f": {message}" if message else snippet(body)
    if status == 429 or (status == 503 and "retry-after" in response.headers):
        return _Failure(
            "busy",
            f"HTTP {status}{said}",
            not_started=True,
            retry_after=parse_retry_after(response.headers.get("Retry-After"), 30.0),
        )
    if status in (400, 422) and any(w in lowered for w in _CONTEXT_WORDS):
        return _Failure(
            "refused",
            f"HTTP {status}: the prompt exceeds the model's context{said}; lower "
            "FLUX_CONTEXT_BUDGET_CHARS or start the server with a longer context",
        )
    if status >= 400 and any(w in lowered for w in _FORMAT_WORDS):
        # OpenAI and vLLM answer 400, FastAPI-based servers 422, llama-cpp-python's server 500 (its validation
        # errors pass through a catch-all); each names response_format and ran nothing.
        return _Failure("refused", f"HTTP {status}{said}", format_rejected=True)
    if status == 404 and "model" in lowered:
        return _Failure(
            "refused", f"HTTP 404{said}; set FLUX_LLM_MODEL to a model the server has (`flux llm check` lists them)"
        )
    if status in (401, 403):
        return _Failure("refused", f"HTTP {status}{said}; check FLUX_LLM_API_KEY")
    if status < 400:
        return _Failure(
            "refused",
            f"HTTP {status} redirect to {response.headers.get('location', '?')}; set "
            "FLUX_LLM_BASE_URL to the endpoint itself",
        )
    return _Failure("error" if status >= 500 else "refused", f"HTTP {status}{said}")
