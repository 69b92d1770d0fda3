"""The in-process cache the Redis cache falls back to (same calls as redis-py, so Cache writes each op once)."""

from __future__ import annotations

import bisect
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

# A string, a hash, or a sorted set kept as its sorted member list (the cache's sets all score 0, so Redis orders
# their members lexicographically too, and ZRANGEBYLEX is a bisection).
Value = str | dict[str, str] | list[str]


class MemoryStore:
    """The fallback: a thread-safe bounded LRU with per-entry expiry, offering the few redis-py calls Cache makes
    (same names and arguments), so every cache operation is written once for both backends."""

    def __init__(self, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self._data: OrderedDict[str, tuple[float, Value]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries
        self._clock = clock

    def _live(self, key: str) -> Value | None:
        item = self._data.get(key)
        if item is not None and item[0] <= self._clock():
            del self._data[key]
            return None
        if item is not None:
            self._data.move_to_end(key)
        return item[1] if item is not None else None

    def _put(self, key: str, value: Value, expires_at: float) -> None:
        self._data[key] = (expires_at, value)
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)

    def _expiry(self, key: str, current: Value | None) -> float:
        # A new key never expires until `expire` is called, as in Redis; an existing one keeps its expiry.
        return self._data[key][0] if current is not None else float("inf")

    def pipeline(self, transaction: bool = False) -> MemoryPipeline:
        return MemoryPipeline(self)

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
            self._put(key, entries, self._expiry(key, current if isinstance(current, dict) else None))

    def expire(self, key: str, seconds: int) -> None:
        with self._lock:
            value = self._live(key)
            if value is not None:
                self._put(key, value, self._clock() + seconds)

    def hgetall(self, key: str) -> dict[str, str]:
        with self._lock:
            value = self._live(key)
            return dict(value) if isinstance(value, dict) else {}

    def hmget(self, key: str, fields: list[str]) -> list[str | None]:
        with self._lock:
            value = self._live(key)
            entries = value if isinstance(value, dict) else {}
            return [entries.get(field) for field in fields]

    def hlen(self, key: str) -> int:
        with self._lock:
            value = self._live(key)
            return len(value) if isinstance(value, dict) else 0

    def hdel(self, key: str, *fields: str) -> None:
        with self._lock:
            value = self._live(key)
            for field in fields if isinstance(value, dict) else ():
                value.pop(field, None)

    def zadd(self, key: str, mapping: Mapping[str, float]) -> int:
        """Add members; their scores are ignored (all the cache's sorted sets score 0: ordered by member)."""
        with self._lock:
            current = self._live(key)
            members = current if isinstance(current, list) else []
            added = 0
            for member in mapping:
                at = bisect.bisect_left(members, member)
                if at == len(members) or members[at] != member:
                    members.insert(at, member)
                    added += 1
            self._put(key, members, self._expiry(key, current if isinstance(current, list) else None))
            return added

    def zrem(self, key: str, *members: str) -> int:
        with self._lock:
            value = self._live(key)
            if not isinstance(value, list):
                return 0
            removed = 0
            for member in members:
                at = bisect.bisect_left(value, member)
                if at < len(value) and value[at] == member:
                    del value[at]
                    removed += 1
            if not value:
                del self._data[key]  # Redis deletes an emptied set
            return removed

    def zrangebylex(self, key: str, min: str, max: str) -> list[str]:  # redis-py's argument names
        """Members between `min` and `max`, each "[x" (inclusive), "(x" (exclusive), "-" or "+", as in Redis."""
        with self._lock:
            value = self._live(key)
            members = value if isinstance(value, list) else []
            start = 0 if min == "-" else _bisect(members, min[1:], after=min[0] == "(")
            end = len(members) if max == "+" else _bisect(members, max[1:], after=max[0] == "[")
            return members[start:end]


def _bisect(members: list[str], bound: str, *, after: bool) -> int:
    """Where `bound` goes in `members`: after an equal member when `after`, else before it."""
    return (bisect.bisect_right if after else bisect.bisect_left)(members, bound)


class MemoryPipeline:
    """redis-py's non-transactional pipeline, for MemoryStore: calls are queued and run in order by `execute`."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._calls: list[Callable[[], Any]] = []

    def __getattr__(self, name: str) -> Callable[..., MemoryPipeline]:
        method = getattr(self._store, name)  # an AttributeError here names the redis call MemoryStore lacks

        def queue(*args: Any, **kwargs: Any) -> MemoryPipeline:
            self._calls.append(partial(method, *args, **kwargs))
            return self

        return queue

    def execute(self) -> list[Any]:
        calls, self._calls = self._calls, []
        return [call() for call in calls]

    def __enter__(self) -> MemoryPipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self._calls = []
