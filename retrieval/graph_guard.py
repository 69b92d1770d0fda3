"""Neo4j outages in serving: answer from text evidence, fast, and say so.

The first failure marks the graph down for `RETRY_AFTER` seconds, so the questions after it skip the graph at once
instead of each paying the connect timeout; the first question after that window tries again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from neo4j.exceptions import DriverError, Neo4jError

T = TypeVar("T")
RETRY_AFTER = 15.0
GRAPH_ERRORS = (Neo4jError, DriverError, OSError)


class GraphUnavailable(RuntimeError):
    """The knowledge graph cannot be read right now; the message says why."""


class GraphGuard:
    """A circuit breaker around graph reads: open for `retry_after` seconds of `clock` after a failure.

    `clock` is time.monotonic by default; a test passes a manual one to walk through the window without sleeping.
    """

    def __init__(self, retry_after: float = RETRY_AFTER, clock: Callable[[], float] = time.monotonic) -> None:
        self.retry_after = retry_after
        self._clock = clock
        self._down_until = 0.0
        self._error = ""
        self._lock = threading.Lock()

    @property
    def error(self) -> str:
        return self._error

    def call(self, read: Callable[[], T]) -> T:
        """Run a graph read; raises GraphUnavailable (at once while marked down)."""
        with self._lock:
            if self._clock() < self._down_until:
                raise GraphUnavailable(self._error)
        try:
            result = read()
        except GRAPH_ERRORS as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            with self._lock:
                self._down_until = self._clock() + self.retry_after
                self._error = f"Neo4j is unavailable: {first}"
            raise GraphUnavailable(self._error) from exc
        with self._lock:
            self._down_until, self._error = 0.0, ""
        return result


def degraded_warning(error: str, kind: str = "") -> str:
    what = f"this {kind.replace('_', ' ')} question is" if kind and kind != "literature" else "this question is"
    return f"the knowledge graph is unavailable ({error}); {what} answered from text evidence only"
