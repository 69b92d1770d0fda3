"""One call's stage timings (`timings_ms` in every answer) and what went missing on the way."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class Timer:
    """Milliseconds per stage, summed when a stage runs more than once; `degraded` names a store that could not be
    read."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self.degraded: str = ""

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - started) * 1000, 2)
