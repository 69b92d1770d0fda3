"""One rate limiter for what Flux calls (source APIs, the LLM) and for what calls Flux (the HTTP API's keys).

GCRA, the token bucket kept as one timestamp per key (the "theoretical arrival time"): a request at `now` is on time
when `tat - tolerance <= now`, and each request moves `tat` one interval on. `burst` requests may arrive at once.
Two ways to ask:

- `acquire(key)` books the next slot and sleeps until it (outgoing calls: pace, never refuse);
- `try_acquire(key)` takes a slot only when one is free and otherwise says how long until one is (incoming
  requests: answer 429 with Retry-After).

The state lives in a store: `LocalStore` (one process) or `RedisStore` (every process that shares the Redis, with
Redis's clock), so N API workers allow the configured rate, not N times it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Protocol

from dagster_project.core.breaker import CircuitBreaker

Clock = Callable[[], float]
Sleep = Callable[[float], None]
log = logging.getLogger(__name__)


class SlotStore(Protocol):
    def take(self, key: str, interval: float, tolerance: float, book: bool) -> float:
        """Seconds until the request may start (0: now). With `book` the slot is taken even when that is later;
        without it a late request takes nothing."""
        ...


class LocalStore:
    """Arrival times in this process (thread-safe)."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._tat: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def take(self, key: str, interval: float, tolerance: float, book: bool) -> float:
        with self._lock:
            now = self._clock()
            tat = max(self._tat.get(key, now), now)
            wait = tat - tolerance - now
            if wait > 0 and not book:
                return wait
            self._tat[key] = tat + interval
            return max(wait, 0.0)


# The same arithmetic as LocalStore.take, atomically in Redis with Redis's clock (so workers need not agree on
# theirs). The value is a string: Lua numbers come back from Redis as truncated integers.
_GCRA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval, tolerance, book = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait > 0 and not book then return tostring(wait) end
local ttl = math.ceil((tat + interval - now) * 1000) + 1000
redis.call('SET', KEYS[1], tostring(tat + interval), 'PX', ttl)
if wait < 0 then wait = 0 end
return tostring(wait)
"""


class RedisStore:
    """Arrival times in Redis, shared by every process that uses it. When Redis does not answer, the `fallback`
    store keeps limiting (per process) and Redis is tried again after `retry_interval` seconds."""

    def __init__(
        self,
        client: object,
        namespace: str = "flux:rate",
        *,
        fallback: SlotStore | None = None,
        retry_interval: float = 30.0,
        clock: Clock = time.monotonic,
    ) -> None:
        import redis

        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._script = client.register_script(_GCRA)  # type: ignore[attr-defined]
        self.namespace = namespace
        self.fallback = fallback or LocalStore(clock)
        self.breaker = CircuitBreaker(retry_interval, clock)

    def take(self, key: str, interval: float, tolerance: float, book: bool) -> float:
        if self.breaker.allow():
            try:
                wait = float(self._script(keys=[f"{self.namespace}:{key}"], args=[interval, tolerance, int(book)]))
            except self._errors as exc:
                if self.breaker.record_failure(str(exc)):
                    log.warning(
                        "rate limits held per process for %.0fs: Redis did not answer (%s)",
                        self.breaker.retry_after,
                        exc,
                    )
            else:
                if self.breaker.record_success():
                    log.info("rate limits shared through Redis again")
                return wait
        return self.fallback.take(key, interval, tolerance, book)


class RateLimiter:
    """`per_second` requests a second per key, up to `burst` at once; 0 or less means no limit."""

    def __init__(
        self,
        per_second: float,
        *,
        burst: int = 1,
        store: SlotStore | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.tolerance = self.interval * (max(burst, 1) - 1)
        self.store = store or LocalStore(clock)
        self._sleep = sleep

    def acquire(self, key: str = "") -> None:
        """Book the next slot for `key` and wait for it (outside any lock: later callers book later slots)."""
        if self.interval:
            wait = self.store.take(key, self.interval, self.tolerance, book=True)
            if wait > 0:
                self._sleep(wait)

    def try_acquire(self, key: str = "") -> float | None:
        """None when `key` may go now (the slot is taken); otherwise the seconds until it may."""
        if not self.interval:
            return None
        wait = self.store.take(key, self.interval, self.tolerance, book=False)
        return wait if wait > 0 else None


# Quotas belong to a host or an API key, not to one client object, so outgoing limiters live for the process.
_LIMITERS: dict[Hashable, RateLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def shared_limiter(
    key: Hashable, per_second: float, *, clock: Clock = time.monotonic, sleep: Sleep = time.sleep
) -> RateLimiter:
    """The process-wide limiter for `key`; the first caller's rate (and `clock` / `sleep`) wins."""
    with _LIMITERS_LOCK:
        if key not in _LIMITERS:
            _LIMITERS[key] = RateLimiter(per_second, clock=clock, sleep=sleep)
        return _LIMITERS[key]
