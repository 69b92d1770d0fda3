"""The in-process cache the Redis cache falls back to (same calls as redis-py, so Cache writes each op once)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable


class MemoryStore:
    """The fallback: a thread-safe bounded LRU with per-entry expiry, offering the few redis-py calls Cache makes
    (same names and arguments), so every cache operation is written once for both backends."""

    def __init__(self, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self._data: OrderedDict[str, tuple[float, str | dict[str, str]]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries
        self._clock = clock

    def _live(self, key: str) -> str | dict[str, str] | None:
        item = self._data.get(key)
        if item is not None and item[0] <= self._clock():
            del self._data[key]
            return None
        if item is not None:
            self._data.move_to_end(key)
        return item[1] if item is not None else None

    def _put(self, key: str, value: str | dict[str, str], expires_at: float) -> None:
        self._data[key] = (expires_at, value)
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)

    def get(self, key: str) -> str | None:
        with self._lock:
            value = self._live(key)
            return value if isinstance(value, str) else None

    def set(self, key: str, value: str, ex: int) -> None:
        with self._lock:
            self._put(key, value, self._clock() + ex)

    def hset(self, key: str, field: str, value: str) -> None:
        with self._lock:
            current = self._live(key)
            entries = current if isinstance(current, dict) else {}
            entries[field] = value
            # A new hash never expires until `expire` is called, as in Redis.
            expires_at = self._data[key][0] if isinstance(current, dict) else float("inf")
            self._put(key, entries, expires_at)

    def expire(self, key: str, seconds: int) -> None:
        with self._lock:
            value = self._live(key)
            if value is not None:
                self._put(key, value, self._clock() + seconds)

    def hgetall(self, key: str) -> dict[str, str]:
        with self._lock:
            value = self._live(key)
            return dict(value) if isinstance(value, dict) else {}

    def hlen(self, key: str) -> int:
        with self._lock:
            value = self._live(key)
            return len(value) if isinstance(value, dict) else 0

    def hdel(self, key: str, *fields: str) -> None:
        with self._lock:
            value = self._live(key)
            for field in fields if isinstance(value, dict) else ():
                value.pop(field, None)
