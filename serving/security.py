"""Who may ask: API keys (kept only as SHA-256 hashes), a rate limit per key, and CORS closed unless configured.

FLUX_API_KEYS is a comma-separated list whose entries are keys or, better, their `sha256:<hex>` hashes (what
`flux keys new` prints), so the service's environment need not hold a usable key. When it is set, every endpoint
but /health needs `Authorization: Bearer <key>` (the `require_api_key` dependency runs `ApiKeyGuard.check`). Keys
are never logged and never echoed in an error body.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time

from fastapi import FastAPI, HTTPException
from fastapi.middleware.cors import CORSMiddleware

from dagster_project.core.settings import FluxSettings


def key_hash(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def parse_keys(value: str) -> frozenset[str]:
    """The accepted key hashes; plain keys are hashed here and not kept."""
    entries = [e.strip() for e in value.split(",") if e.strip()]
    return frozenset(e if e.startswith("sha256:") else key_hash(e) for e in entries)


class RateLimiter:
    """A token bucket per key: `per_minute` requests a minute, bursts up to the same number."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def acquire(self, who: str) -> float | None:
        """None when allowed; otherwise the seconds until the next request would be."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(who, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[who] = (tokens - 1.0, now)
                return None
            self._buckets[who] = (tokens, now)
            return (1.0 - tokens) / self.rate


class ApiKeyGuard:
    """The configured key hashes and their rate limits; open (every check passes) when no key is configured."""

    def __init__(self, settings: FluxSettings) -> None:
        self.keys = parse_keys(settings.serving.api_keys.get_secret_value())
        self.per_minute = settings.serving.api_rate_limit_per_minute
        self.limiter = RateLimiter(self.per_minute)

    def check(self, authorization: str) -> None:
        """Raises a 401 without a known key and a 429 over that key's rate limit; returns when the request may go
        on. `authorization` is the request's Authorization header ("" when absent)."""
        if not self.keys:
            return
        scheme, _, token = authorization.partition(" ")
        challenge = {"WWW-Authenticate": "Bearer"}
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPException(401, "an API key is required: send 'Authorization: Bearer <key>'", challenge)
        presented = key_hash(token.strip())
        if not any(hmac.compare_digest(presented, known) for known in self.keys):
            raise HTTPException(401, "unknown API key", challenge)
        wait = self.limiter.acquire(presented)
        if wait is not None:
            raise HTTPException(429, f"rate limit of {self.per_minute} requests a minute reached for this key",
                                {"Retry-After": str(max(1, math.ceil(wait)))})


def install_cors(app: FastAPI, settings: FluxSettings) -> None:
    """CORS only for the configured origins: without any, browsers on other origins get no CORS headers."""
    origins = [o.strip() for o in settings.serving.cors_origins.split(",") if o.strip()]
    if origins:
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])
