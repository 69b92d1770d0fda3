"""One circuit breaker for every dependency a request can live without (Neo4j reads, the Redis cache).

After a failure the breaker opens for `retry_after` seconds: callers ask `allow()` and, told no, take their fallback
at once instead of each paying a connect timeout. When the window has passed it is half-open: exactly one caller is
let through as a probe; its success closes the breaker, its failure opens it for a whole new window. The other
callers keep getting "no" while the probe is out, so a recovering service is not hit by every waiting request at
once. A probe that never reports (its caller died, or failed for a reason that says nothing about the service and
did not call `release`) only holds the slot for one window; then the next caller probes instead.

Time is `clock()` (time.monotonic by default) so tests walk through the window with a manual clock, no sleeping.
Thread-safe: one lock guards the state. Dagster-free and dependency-free, so retrieval/ and serving/ can use it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

Clock = Callable[[], float]
State = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Closed (calls go through) or open (they do not) for `retry_after` seconds after a failure, then one probe."""

    def __init__(self, retry_after: float, clock: Clock = time.monotonic) -> None:
        if retry_after < 0:
            raise ValueError(f"retry_after must be >= 0, got {retry_after}")
        self.retry_after = retry_after
        self._clock = clock
        self._lock = threading.Lock()
        self._open = False
        self._retry_at = 0.0  # while open: when the next probe may go (moved on by a window when one is granted)
        self._probing = False
        self._error = ""

    @property
    def error(self) -> str:
        """The message recorded with the last failure; "" once a success has closed the breaker."""
        with self._lock:
            return self._error

    @property
    def state(self) -> State:
        with self._lock:
            if not self._open:
                return "closed"
            return "half_open" if self._probing or self._clock() >= self._retry_at else "open"

    @property
    def closed(self) -> bool:
        with self._lock:
            return not self._open

    def allow(self) -> bool:
        """May a call go through now? Always when closed; when open, only the one probe after the window."""
        with self._lock:
            if not self._open:
                return True
            now = self._clock()
            if now < self._retry_at:
                return False
            # This caller is the probe. Pushing the retry time on by a window keeps the others out while it runs
            # and lets a new probe through if this one never reports.
            self._retry_at = now + self.retry_after
            self._probing = True
            return True

    def record_success(self) -> bool:
        """The call worked: close. True when this closed an open breaker (the service is back)."""
        with self._lock:
            was_open = self._open
            self._open, self._probing, self._retry_at, self._error = False, False, 0.0, ""
            return was_open

    def record_failure(self, error: str) -> bool:
        """The call failed because of the service: open for a whole window from now, remembering `error`.

        True when this opened a closed breaker (the moment to log a switch to the fallback); False when it was
        already open, e.g. a failed probe or a call that was in flight when another one opened it.
        """
        with self._lock:
            was_closed = not self._open
            self._open, self._probing, self._error = True, False, error
            self._retry_at = self._clock() + self.retry_after
            return was_closed

    def release(self) -> None:
        """The call ended without a verdict on the service (it raised something unrelated): if it was the probe,
        let the next caller probe at once rather than waiting out another window."""
        with self._lock:
            if self._open and self._probing:
                self._probing = False
                self._retry_at = self._clock()
