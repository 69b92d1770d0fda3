"""One question's run: the stage timings every answer reports, the event sink (SSE, the scorecards), and what was
degraded on the way (a store that could not be read) — three things a run carries, kept apart."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

EventSink = Callable[[str, dict[str, Any]], None]


class Timer:
    """Milliseconds per stage, summed when a stage runs more than once."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - started) * 1000, 2)


def ignore_events(_name: str, _payload: dict[str, Any]) -> None:
    return None


@dataclass
class Run:
    emit: EventSink = ignore_events
    timer: Timer = field(default_factory=Timer)
    outages: list[str] = field(default_factory=list)  # stores that could not be read, a sentence each

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        with self.timer.stage(name):
            yield

    @property
    def degraded(self) -> str:
        """The latest outage ("" when nothing was skipped): a degraded result is neither cached nor unflagged."""
        return self.outages[-1] if self.outages else ""

    def degrade(self, why: str) -> None:
        self.outages.append(why)

    def tagged(self, **tags: object) -> Run:
        """The same run (timings, outages) whose events carry `tags` too: the grounding retry says which retry."""

        def emit(name: str, payload: dict[str, Any]) -> None:
            self.emit(name, {**payload, **tags})

        return Run(emit=emit, timer=self.timer, outages=self.outages)
