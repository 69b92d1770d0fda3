"""Neo4j outages in serving: answer from text evidence, fast, and say so.

The first failure marks the graph down for `RETRY_AFTER` seconds, so the questions after it skip the graph at once
instead of each paying the connect timeout; the first question after that window tries again. The state machine is
the shared CircuitBreaker (dagster_project/core/breaker.py); this module decides what counts as a graph failure
and how it is worded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from dagster_project.core.breaker import CircuitBreaker

T = TypeVar("T")
RETRY_AFTER = 15.0


def graph_errors() -> tuple[type[Exception], ...]:
    """What counts as a graph failure: the driver's errors and the socket's. An `except` clause evaluates this only
    when an exception reaches it, so the neo4j package is loaded by the first failure, not by this module."""
    from neo4j.exceptions import DriverError, Neo4jError

    return (Neo4jError, DriverError, OSError)


class GraphUnavailable(RuntimeError):
    """The knowledge graph cannot be read right now; the message says why."""


class GraphGuard:
    """A circuit breaker around graph reads: open for `retry_after` seconds of `clock` after a failure.

    `clock` is time.monotonic by default; a test passes a manual one to walk through the window without sleeping.
    """

    def __init__(self, retry_after: float = RETRY_AFTER, clock: Callable[[], float] = time.monotonic) -> None:
        self._breaker = CircuitBreaker(retry_after, clock)

    @property
    def retry_after(self) -> float:
        return self._breaker.retry_after

    @property
    def error(self) -> str:
        return self._breaker.error

    def call(self, read: Callable[[], T]) -> T:
        """Run a graph read; raises GraphUnavailable (at once while marked down)."""
        if not self._breaker.allow():
            # `or`: a read that closed the breaker between these two calls must not yield an empty message.
            raise GraphUnavailable(self._breaker.error or "Neo4j is unavailable")
        try:
            result = read()
        except graph_errors() as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            error = f"Neo4j is unavailable: {first}"
            self._breaker.record_failure(error)
            raise GraphUnavailable(error) from exc
        except BaseException:
            # A bug in the read (or a cancellation) says nothing about Neo4j: leave the state as it was.
            self._breaker.release()
            raise
        self._breaker.record_success()
        return result


def degraded_warning(error: str, kind: str = "") -> str:
    what = f"this {kind.replace('_', ' ')} question is" if kind and kind != "literature" else "this question is"
    return f"the knowledge graph is unavailable ({error}); {what} answered from text evidence only"
