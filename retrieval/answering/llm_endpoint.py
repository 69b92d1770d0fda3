"""What Flux knows about one LLM endpoint, shared by every provider in the process that talks to it: a bounded number
of requests in flight (so concurrent questions queue in Flux, where the wait is measured and bounded by each
question's deadline, instead of on a single-slot local server), and the JSON mode the server was found to accept.

JSON modes, best first: `json_schema` (OpenAI Structured Outputs; llama.cpp's own server, vLLM and Ollama accept it
too), `json_object` (JSON mode), `prompt` (no response_format: the instructions alone ask for JSON). A server that
rejects a mode's request (400/422 naming response_format) is asked again with the next one, and the endpoint
remembers it, so the probing happens once per process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

log = logging.getLogger(__name__)

JsonMode = Literal["json_schema", "json_object", "prompt"]
JSON_MODES: tuple[JsonMode, ...] = get_args(JsonMode)


@dataclass
class Endpoint:
    url: str
    concurrency: int
    json_mode: JsonMode | None = None  # None: not yet detected
    waiting: int = 0  # requests queued in Flux for a free slot, now
    in_flight: int = 0
    _slots: threading.BoundedSemaphore = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._slots = threading.BoundedSemaphore(self.concurrency)

    def acquire(self, timeout: float, on_wait: Callable[[int], None] | None = None) -> float | None:
        """Seconds waited for a slot, or None when none came free within `timeout`; `on_wait(ahead)` hears of a
        wait before it starts."""
        started = time.monotonic()
        if self._slots.acquire(blocking=False):
            self._took()
            return 0.0
        with self._lock:
            self.waiting += 1
            ahead = self.in_flight + self.waiting - 1
        log.info("LLM endpoint %s is busy (%d request(s) ahead): waiting up to %.1f s", self.url, ahead, timeout)
        if on_wait is not None:
            on_wait(ahead)
        try:
            got = timeout > 0 and self._slots.acquire(timeout=timeout)
        finally:
            with self._lock:
                self.waiting -= 1
        if not got:
            return None
        self._took()
        return time.monotonic() - started

    def release(self) -> None:
        with self._lock:
            self.in_flight -= 1
        self._slots.release()

    def _took(self) -> None:
        with self._lock:
            self.in_flight += 1

    def modes_to_try(self, configured: JsonMode | Literal["auto"]) -> list[JsonMode]:
        """The JSON modes to send, in order: the configured one alone, or (auto) from the best the server is known
        or may be able to accept."""
        if configured != "auto":
            return [configured]
        return list(JSON_MODES[JSON_MODES.index(self.json_mode or "json_schema") :])

    def learn(self, mode: JsonMode) -> bool:
        """Remember the mode the server accepted; True when that is news worth a warning (worse than asked)."""
        with self._lock:
            known, self.json_mode = self.json_mode, mode
        return known != mode and mode == "prompt"

    def describe(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "concurrency": self.concurrency,
            "json_mode": self.json_mode,
            "in_flight": self.in_flight,
            "waiting": self.waiting,
        }


_ENDPOINTS: dict[str, Endpoint] = {}
_ENDPOINTS_LOCK = threading.Lock()


def endpoint(url: str, concurrency: int) -> Endpoint:
    """The process-wide record of the endpoint at `url`; the first caller's concurrency wins."""
    key = url.rstrip("/")
    with _ENDPOINTS_LOCK:
        if key not in _ENDPOINTS:
            _ENDPOINTS[key] = Endpoint(key, concurrency)
        return _ENDPOINTS[key]


def endpoints() -> list[Endpoint]:
    """Every endpoint this process has talked to (/metrics reports their queues)."""
    with _ENDPOINTS_LOCK:
        return list(_ENDPOINTS.values())
