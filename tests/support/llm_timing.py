"""When each LLM call of a question ended, on the test's clock: an event sink for `Pipeline.ask(on_event=...)`.

A question's deadline is kept when every call ended by it, or at once when the call began after it. That is measured
from the deadline itself, so it holds on a slow machine however long the rest of the question took there, and it
fails by seconds when a call waited on a stalled server instead."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CallEnds:
    ended: list[tuple[float, float]] = field(default_factory=list)  # (time.monotonic() at a call's end, its ms)

    def __call__(self, name: str, payload: dict[str, Any]) -> None:
        # An amended call (a reply turned down after it ended) is the same call again: its end is the first.
        if name == "llm_call" and "amends" not in payload:
            self.ended.append((time.monotonic(), float(payload["ms"])))

    def past(self, deadline: float) -> float:
        """Seconds the furthest call ran past `deadline` (past its own start, for a call begun after it); negative
        when every call ended before it."""
        return max(at - max(deadline, at - ms / 1000) for at, ms in self.ended)

    @property
    def last(self) -> float:
        """When the last call ended."""
        return max(at for at, _ in self.ended)
