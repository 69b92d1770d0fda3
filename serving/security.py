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

from fastapi import FastAPI, HTTPException
from fastapi.middleware.cors import CORSMiddleware

from dagster_project.core.rate_limit import RateLimiter, RedisStore
from dagster_project.core.settings import FluxSettings


def key_hash(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def parse_keys(value: str) -> frozenset[str]:
    """The accepted key hashes; plain keys are hashed here and not kept."""
    entries = [e.strip() for e in value.split(",") if e.strip()]
    return frozenset(e if e.startswith("sha256:") else key_hash(e) for e in entries)


def api_rate_limiter(settings: FluxSettings) -> RateLimiter:
    """Per key, `FLUX_API_RATE_LIMIT_PER_MINUTE` a minute with bursts up to the same number, counted in Redis so the
    limit holds across every worker of the service (per process while Redis does not answer)."""
    import redis

    per_minute = settings.serving.api_rate_limit_per_minute
    client = redis.Redis.from_url(settings.resolved_redis_url, socket_timeout=0.5, socket_connect_timeout=0.5)
    # The limit is part of the key prefix: a changed limit starts fresh buckets instead of reading the old spacing.
    return RateLimiter(per_minute / 60.0, burst=per_minute, store=RedisStore(client, f"flux:rate:api:{per_minute}"))


class ApiKeyGuard:
    """The configured key hashes and their rate limits; open (every check passes) when no key is configured."""

    def __init__(self, settings: FluxSettings) -> None:
        self.keys = parse_keys(settings.serving.api_keys.get_secret_value())
        self.per_minute = settings.serving.api_rate_limit_per_minute
        self.limiter = api_rate_limiter(settings)

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
        wait = self.limiter.try_acquire(presented)
        if wait is not None:
            raise HTTPException(
                429,
                f"rate limit of {self.per_minute} requests a minute reached for this key",
                {"Retry-After": str(max(1, math.ceil(wait)))},
            )


def install_cors(app: FastAPI, settings: FluxSettings) -> None:
    """CORS only for the configured origins: without any, browsers on other origins get no CORS headers."""
    origins = [o.strip() for o in settings.serving.cors_origins.split(",") if o.strip()]
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
