"""A clock the test moves by hand: code that takes `clock=` (a monotonic-seconds callable) sees time pass without
the test sleeping."""

from __future__ import annotations

import functools
import threading

import pytest


class ManualClock:
    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class VirtualTime(ManualClock):
    """A clock that sleeping moves, at no wall-clock cost: give `clock=self` and `sleep=self.sleep` to code that
    paces itself, and `clock=self` to a server that times arrivals, and both keep a rate in the same time."""

    def __init__(self, start: float = 1_000.0) -> None:
        super().__init__(start)
        self._lock = threading.Lock()

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.now += max(seconds, 0.0)


def paced_in_virtual_time(monkeypatch: pytest.MonkeyPatch) -> VirtualTime:
    """Every HTTP client made after this call paces itself on one VirtualTime (fresh process-wide limiters, so no
    earlier client's limiter or clock is reused); the caller gives the same clock to the contract server."""
    from dagster_project.core import http, rate_limit

    virtual = VirtualTime()
    monkeypatch.setattr(rate_limit, "_LIMITERS", {})
    monkeypatch.setattr(
        http, "shared_limiter", functools.partial(rate_limit.shared_limiter, clock=virtual, sleep=virtual.sleep)
    )
    return virtual
