"""A clock the test moves by hand: code that takes `clock=` (a monotonic-seconds callable) sees time pass without
the test sleeping."""

from __future__ import annotations


class ManualClock:
    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
